"""``identify``: a robot's inertial parameters and joint friction from measured (q, v, a, tau).

The solve (docs/identification.md):
1. The stacked regressor (``regressors.py``) and its structural base parameters; the
   regressor is built chunk by chunk and reduced to each joint's QR factor (``reduction.py``,
   on a Dask cluster ``distributed.py``): every later step sees only the factors.
2. Each joint's rows are weighted by 1 / sigma_j, sigma_j the residual RMS of an ordinary
   least-squares fit (Gautier & Poignet 2001): joints with loud torques
   do not drown quiet ones.
3. Physically consistent (default): every body's parameters are the log-Cholesky image of
   10 free numbers (``consistency.py``), friction and armature bounded below by 0, and
   ``scipy.optimize.least_squares`` minimizes

       sum_rows ((Y theta - tau) / sigma_j)^2 + prior_weight * sum_bodies r_i^2

   with r_i the prior residual of body i: its affine-invariant Riemannian distance to the CAD
   pseudo-inertia (``prior="geometric"``, Lee & Park 2018) or the Euclidean distance of its
   10 parameters to the CAD ones relative to their norm (``prior="euclidean"``). The data
   term is the likelihood of the noise, so ``prior_weight = 1 / s^2`` says "the CAD body is
   right to a relative s" (the default 10: s ~ 0.3) in either metric. Where the data are
   informative the prior is negligible; where they say nothing it keeps the CAD body.
4. The report: condition number, residuals, each base parameter's standard deviation from
   the residual covariance, and the base parameters the data do not determine.

A joint with Coulomb friction slower than ``rest_speed`` is at rest and its torque row is
left out of the fit (``reduction.py``): at rest the friction torque is anything within
+-F_c, which no model of the form F_c sign(v) predicts (on a simulated arm7 whose wrist
sticks a third of the time, keeping those rows biased its identified Coulomb friction 3-22 %
low).
"""
from dataclasses import dataclass, field

import numpy as np

from ..algorithms.dynamics import inverse_dynamics
from ..algorithms.joint_friction import friction_torques
from ..algorithms.regressor import N_PARAMS, inertial_parameters
from ..errors import InputError
from ..model.bounds import MAX_ARMATURE, MAX_DAMPING, MAX_FRICTION
from . import consistency as C
from .distributed import is_dask, reduce_dask
from .reduction import CHUNK_SAMPLES, REST_SPEED, reduce_chunks, reduce_samples
from .regressors import ZERO_COLUMN, base_columns, column_names, joint_terms
from .report import IdentificationReport, build_report, unexcited_error
from .samples import check_samples

#: a base parameter is undetermined by the data when its pivot in the QR of the weighted,
#: column-normalized base regressor is below DATA_RTOL times the largest
DATA_RTOL = 1e-6
#: torque rows per base parameter at least
MIN_ROWS_PER_PARAMETER = 2
PRIORS = ("geometric", "euclidean", None)
#: a body's mass and principal second moments stay within e^(+-2 EXP_SPAN) of CAD's
EXP_SPAN = 10.0
#: solver budget (residual evaluations); the report says whether it converged within it
MAX_NFEV = 300
#: the solver's step, cost and gradient tolerances: near round-off, so that along the
#: combinations only the prior holds (flat for the data) it stops at the minimum, not
#: wherever a looser test first passes; the same data reduced in other groupings (chunks,
#: a Dask cluster) then give the same parameters
SOLVER_TOL = 1e-15


@dataclass(frozen=True)
class IdentificationResult:
    """What ``identify`` found: ``model`` (identified inertias, joint_damping, joint_friction,
    armature), ``report`` and the source URDF for ``write_urdf``."""
    model: object
    report: IdentificationReport
    theta: np.ndarray = field(repr=False)      # identified ldr.inertial_parameters(model)
    urdf: object = field(default=None, repr=False)

    def predict(self, q, v, a):
        """inverse_dynamics(model, q, v, a) + friction_torques(model, v): (N, nv) or (nv,)."""
        return inverse_dynamics(self.model, q, v, a) + friction_torques(self.model, v)

    def write_urdf(self, path, urdf=None):
        """The source URDF (``urdf`` here or ``identify(..., urdf=)``) with the identified
        ``<inertial>`` and ``<dynamics damping friction>``, everything else kept
        (``urdf_writer.write_urdf``)."""
        from .urdf_writer import write_urdf
        src = urdf if urdf is not None else self.urdf
        if src is None:
            raise InputError("write_urdf needs the source URDF: identify(..., urdf=path) or "
                             "res.write_urdf(path, urdf=source)")
        return write_urdf(self.model, src, path)


def identify(model, q, v, a, tau, friction=True, armature=False, consistent=True,
             prior="geometric", prior_weight=10.0, urdf=None, client=None,
             chunk=CHUNK_SAMPLES, rest_speed=REST_SPEED):
    """Identify ``model``'s body inertias (and joint damping, Coulomb friction, armature)
    from N samples: q (N, nq), v, a, tau (N, nv) in the model's joint order.

    ``friction``: identify damping and Coulomb friction of every 1-DOF joint.
    ``armature``: identify the armature too (else the model's is kept and its torque removed).
    ``consistent``: every body physical (log-Cholesky); False solves ordinary least squares
    on the base parameters and refuses a non-physical result. ``prior``: "geometric"
    (default), "euclidean" or None (then the data must determine every base parameter);
    ``prior_weight``: 1 / s^2 for a CAD trusted to a relative s. ``urdf``: the source URDF,
    for ``res.write_urdf``. The regressor is built and reduced ``chunk`` samples at a time
    (``reduction.py``); dask arrays, or ``client=`` a ``distributed.Client``, build and reduce
    it on a Dask cluster (``distributed.py``). ``rest_speed`` (rad/s or m/s, default
    ``REST_SPEED``): a DOF with Coulomb friction (identified or the model's) slower than this
    is at rest and its torque row is left out; 0 keeps every row. Returns an
    ``IdentificationResult``.
    """
    prior, prior_weight = _options(prior, prior_weight)
    friction, armature = bool(friction), bool(armature)
    chunk, rest_speed = _chunk(chunk), _rest_speed(rest_speed)
    if client is not None or is_dask(q, v, a, tau):
        red = reduce_dask(model, q, v, a, tau, friction, armature, client, chunk, rest_speed)
    else:
        q, v, a, tau = check_samples(model, q, v, a, tau)
        red = reduce_samples(model, q, v, a, tau, friction, armature, chunk, rest_speed)
    return _solve(model, red, consistent, prior, prior_weight, urdf)


def identify_chunks(model, chunks, friction=True, armature=False, consistent=True,
                    prior="geometric", prior_weight=10.0, urdf=None, rest_speed=REST_SPEED):
    """``identify`` on an iterable of (q, v, a, tau) chunks (e.g. read from a long log),
    never holding more than one chunk and its regressor: equal to ``identify`` on the
    concatenated arrays."""
    prior, prior_weight = _options(prior, prior_weight)
    red = reduce_chunks(model, chunks, bool(friction), bool(armature), _rest_speed(rest_speed))
    return _solve(model, red, consistent, prior, prior_weight, urdf)


def _options(prior, prior_weight):
    if prior not in PRIORS:
        raise InputError(f"prior must be one of {PRIORS}, got {prior!r}")
    try:
        prior_weight = float(prior_weight)
    except (TypeError, ValueError):
        raise InputError(f"prior_weight must be a number, got {prior_weight!r}") from None
    if not (np.isfinite(prior_weight) and prior_weight >= 0):
        raise InputError(f"prior_weight must be finite and >= 0, got {prior_weight}")
    return prior, prior_weight


def _rest_speed(speed):
    try:
        speed = float(speed)
    except (TypeError, ValueError):
        raise InputError(f"rest_speed must be a number (rad/s), got {speed!r}") from None
    if not (np.isfinite(speed) and speed >= 0):
        raise InputError(f"rest_speed must be finite and >= 0 (rad/s), got {speed}")
    return speed


def _chunk(chunk):
    if isinstance(chunk, (bool, np.bool_)) or not isinstance(chunk, (int, np.integer)) \
            or chunk < 1:
        raise InputError(f"chunk must be a positive number of samples, got {chunk!r}")
    return int(chunk)


def _solve(model, red, consistent, prior, prior_weight, urdf):
    """The fit on a ``Reduction``: every step sees W only through the factors, whose rows
    give the same least-squares problems as the N nv rows of the samples."""
    from scipy.linalg import qr      # here: `import lie_dynamics_ros` does not load scipy
    friction, armature = red.friction, red.armature
    N, nv = red.n_samples, model.nv
    names = column_names(model, friction, armature)
    nr = N_PARAMS * model.njoints
    B, D, K = base_columns(model, friction, armature)
    rows = int(red.n_rows.sum())
    if rows < MIN_ROWS_PER_PARAMETER * B.size:
        rest = N * nv - rows
        raise InputError(f"too few samples: {N} samples x {nv} joints = {N * nv} torque rows"
                         + (f", {rest} of them at rest," if rest else "")
                         + f" for {B.size} base parameters; give at least "
                         f"{-(-MIN_ROWS_PER_PARAMETER * B.size // nv)} samples of motion")
    W, y = red.stacked()
    per_row = 1.0 / np.maximum(red.n_rows, 1)

    # weights 1 / sigma_j from an ordinary least-squares fit on the base columns
    x0 = np.zeros(W.shape[1])
    x0[B] = np.linalg.lstsq(W[:, B], y, rcond=None)[0]
    beta0 = x0[B]
    sigma = np.sqrt(red.joint_residuals(x0) * per_row)
    sigma = np.maximum(sigma, 1e-9 * max(sigma.max(), red.peak.max(), 1e-12))
    Ww, yw = red.stacked(1.0 / sigma)
    # what the data determine: QR with pivoting of the normalized weighted base regressor
    WB = Ww[:, B]
    cn = np.linalg.norm(WB, axis=0)
    silent = cn <= ZERO_COLUMN * cn.max()              # round-off: the data never show it
    cn[silent] = 1.0
    WBn = np.where(silent, 0.0, WB / cn)
    _, Rb, piv = qr(WBn, mode="economic", pivoting=True)
    d = np.abs(np.diag(Rb))
    rank = int(np.sum(d > DATA_RTOL * d[0])) if d.size and d[0] > 0 else 0
    s = np.linalg.svd(WBn, compute_uv=False)
    cond = float(s[0] / s[-1]) if s[-1] > 0 else np.inf
    undetermined = sorted(int(B[k]) for k in piv[rank:])
    if undetermined and prior is None:
        raise unexcited_error([names[k] for k in undetermined], rank, B.size, cond,
                              "move more joints, faster and over more of their range, or "
                              "use prior='geometric'")

    theta_cad = inertial_parameters(model)
    extra0 = _extra_start(model, beta0, B, nr, names, friction, armature)
    if consistent:
        theta, extra, converged = _consistent_fit(model, Ww, yw, theta_cad, extra0, nr, prior,
                                       prior_weight, friction, armature)
    else:
        (theta, extra), converged = _linear_fit(model, Ww, yw, theta_cad, nr), True
    try:
        C.check_physical(theta, model.body_names)      # never a non-physical model or URDF
    except InputError as e:
        if consistent:
            raise
        raise InputError(f"{e}; least squares (consistent=False) does not keep bodies "
                         "physical, identify with consistent=True") from None
    ident = _model_with(model, theta, extra, friction, armature)
    assert all(C.is_physical(t) for t in inertial_parameters(ident).reshape(-1, N_PARAMS))

    x = np.concatenate([theta, extra])
    rms = np.sqrt(red.joint_residuals(x) * per_row)
    report = build_report(names, B, D, K, Ww, yw, x, rank, undetermined, cond, rms, red.peak,
                          N, rows, prior, prior_weight, consistent, converged,
                          N - red.n_rows)
    return IdentificationResult(ident, report, theta, urdf)


def _extra_start(model, beta0, B, nr, names, friction, armature):
    """Friction/armature start values from the OLS fit (clipped to their bounds)."""
    ncols = len(names)
    extra = np.zeros(ncols - nr)
    where = {int(c): k for k, c in enumerate(B)}
    for c in range(nr, ncols):
        if c in where:
            extra[c - nr] = beta0[where[c]]
    return np.maximum(extra, 0.0)


def _mimic_floor(model, friction, armature):
    """Lower bounds of the extra columns: a mimic joint's own <dynamics> stays on its
    primary's DOF (``Model.with_joint_dynamics``), so the identified total is at least it."""
    lo = []
    for _, vi in joint_terms(model):
        if friction:
            lo += [model.joint_damping[vi] - _own(model, vi, 0),
                   model.joint_friction[vi] - _own(model, vi, 1)]
        if armature:
            lo.append(0.0)
    return np.maximum(np.array(lo, dtype=float), 0.0)


def _own(model, vi, k):
    for j in model.joints:
        if j.mimic is None and j.v_index == vi:
            return j.dynamics[k]
    return 0.0


def _upper(friction, armature, n):
    up = ([MAX_DAMPING, MAX_FRICTION] if friction else []) + ([MAX_ARMATURE] if armature else [])
    return np.tile(up, n) if up else np.zeros(0)


def _consistent_fit(model, Ww, yw, theta_cad, extra0, nr, prior, prior_weight, friction,
                    armature):
    from scipy.optimize import least_squares
    nb = model.njoints
    # ||Ww x - yw||^2 = ||R x - Q^T yw||^2 + const: the solver sees p rows, not N nv
    Q, R = np.linalg.qr(Ww)
    z = Q.T @ yw
    cad = theta_cad.reshape(nb, N_PARAMS)
    Pinv = [C.inverse_sqrt(C.pseudo_inertia(t)) for t in cad]
    scale = [max(np.linalg.norm(t), 1e-12) for t in cad]
    lam = np.sqrt(prior_weight if prior is not None else 1e-8)
    use_geo = prior != "euclidean"
    phi0 = np.concatenate([C.parameters_to_log_cholesky(t) for t in cad])
    lo_e = _mimic_floor(model, friction, armature)
    hi_e = _upper(friction, armature, len(joint_terms(model)))
    x0 = np.concatenate([phi0, np.clip(extra0, lo_e + 1e-9, hi_e - 1e-9)])
    # exponents of the log-Cholesky factor within +-EXP_SPAN of CAD's: exp cannot overflow
    span = np.tile([EXP_SPAN] * 4 + [np.inf] * 6, nb)
    lo = np.concatenate([phi0 - span, lo_e])
    hi = np.concatenate([phi0 + span, hi_e])

    def theta_of(x):
        return np.concatenate([C.log_cholesky_to_parameters(x[10 * i:10 * i + 10])
                               for i in range(nb)])

    def prior_res(i, th):
        if use_geo:
            return C.riemannian_residual(C.pseudo_inertia(th), Pinv[i])
        return (th - cad[i]) / scale[i]

    def residual(x):
        th = theta_of(x)
        r_data = R @ np.concatenate([th, x[nr:]]) - z
        r_prior = [lam * prior_res(i, th[10 * i:10 * i + 10]) for i in range(nb)]
        return np.concatenate([r_data] + r_prior)

    def jac(x):
        h = 1e-6
        nprior = 10
        Jt = np.zeros((nr, nr))                    # d theta / d phi, block diagonal
        Jp = np.zeros((nb * nprior, x.size))
        for i in range(nb):
            sl = slice(10 * i, 10 * i + 10)
            Jt[sl, sl] = C.log_cholesky_jacobian(x[sl])
            for k in range(10):
                e = np.zeros(10)
                e[k] = h
                tp = C.log_cholesky_to_parameters(x[sl] + e)
                tm = C.log_cholesky_to_parameters(x[sl] - e)
                Jp[nprior * i:nprior * i + nprior, 10 * i + k] = lam * (
                    prior_res(i, tp) - prior_res(i, tm)) / (2 * h)
        Jd = np.concatenate([R[:, :nr] @ Jt, R[:, nr:]], axis=1)
        return np.concatenate([Jd, Jp])

    sol = least_squares(residual, x0, jac=jac, bounds=(lo, hi), method="trf",
                        x_scale="jac", xtol=SOLVER_TOL, ftol=SOLVER_TOL, gtol=SOLVER_TOL,
                        max_nfev=MAX_NFEV)
    return theta_of(sol.x), sol.x[nr:], sol.status > 0


def _linear_fit(model, Ww, yw, theta_cad, nr):
    """Ordinary least squares; the part the data leave free stays at CAD (minimum-norm step)."""
    x_cad = np.concatenate([theta_cad, np.zeros(Ww.shape[1] - nr)])
    dx = np.linalg.lstsq(Ww, yw - Ww @ x_cad, rcond=1e-10)[0]
    x = x_cad + dx
    return x[:nr], x[nr:]


def _model_with(model, theta, extra, friction, armature):
    """The model with the identified inertias and joint terms (per-DOF totals; a mimic
    joint's own <dynamics> is kept, so its primary gets the remainder)."""
    terms = joint_terms(model)
    dmp, frc, arm = {}, {}, {}
    k = 0
    for name, vi in terms:
        if friction:
            dmp[name] = max(extra[k] - (model.joint_damping[vi] - _own(model, vi, 0)), 0.0)
            frc[name] = max(extra[k + 1] - (model.joint_friction[vi] - _own(model, vi, 1)), 0.0)
            k += 2
        if armature:
            arm[name] = max(extra[k], 0.0)
            k += 1
    m = model.with_inertial_parameters(theta)
    return m.with_joint_dynamics(damping=dmp or None, friction=frc or None,
                                 armature=arm or None)
