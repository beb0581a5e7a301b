"""Closed kinematic loops (Kim 2012, section 3, eqs. 54-80).

The loops are cut into an open tree (the model) plus closures (``model.loops``). With A(q) the
constraint Jacobian, the equations of motion are Kim's (54)-(55)::

    M(q) qdd + b(q, v) = tau + A^T lam,      A v = 0,      A qdd + Adot v = 0

(eq. 54 says "J^T lam"; it is A^T). Row block i of A is ``P_i (J_b - Ad_{T_ba} J_a)``: the twist
of F_b relative to F_a, expressed in F_b, rows (linear, angular), picked by the closure's
selection ``P_i``. So ``lam`` (same rows) is the wrench (force, torque) that link_a exerts on
link_b through the closure, expressed in F_b at F_b's origin; link_a feels the opposite.

A is allowed to be rank deficient (a planar four-bar closed by a 3D revolute closure has 5 rows
of rank 2). Every algorithm first reduces A to ``Abar = U_r^T A`` with the r left singular vectors
of non-zero singular values; ``lam = U_r lam_bar`` is then the minimum-norm multiplier.

Everything here is written on the public tree algorithms (frame poses, frame Jacobians, RNEA,
ABA, hybrid dynamics), so it follows whatever the kernels do. M^-1 A^T is built from r runs of
ABA on (q, 0, g(q) + A_i^T), the "simplified ABA" of Kim after eq. 67 (b dropped); M^-1 is never
formed.
"""
import numpy as np
from scipy.linalg import null_space

from ..errors import InputError
from ..lie import so3
from ..model.loops import loop_tables, perpendicular_pair
from .configuration import integrate
from .dynamics import forward_dynamics, gravity_torques, hybrid_dynamics, inverse_dynamics
from .kinematics import body_jacobian, frame_pose

#: singular values of A below RANK_RTOL * max(1, s_max) count as zero
RANK_RTOL = 1e-9


# -- small SE(3) helpers in the public (linear, angular) order -----------------------------
def _hat(w):
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def _Ad(T):
    R, p = T[:3, :3], T[:3, 3]
    X = np.zeros((6, 6))
    X[:3, :3] = X[3:, 3:] = R
    X[:3, 3:] = _hat(p) @ R
    return X


def _cross(a, b):
    """a x b for 3-vectors or (3, n) columns (np.cross is slow on small arrays)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


def _ad_apply(x, y):
    """ad_x y for twists (linear, angular); x and y may be (6,) or (6, n) column-wise."""
    out = np.empty(np.shape(y))
    out[:3] = _cross(x[:3], y[3:]) + _cross(x[3:], y[:3])
    out[3:] = _cross(x[3:], y[3:])
    return out


def _inv(T):
    Ti = np.eye(4)
    Ti[:3, :3] = T[:3, :3].T
    Ti[:3, 3] = -T[:3, :3].T @ T[:3, 3]
    return Ti


# -- frame kinematics on the public API ---------------------------------------------------
class _Frames:
    """Pose, body Jacobian and Jdot v of link frames at one (q, v), computed once per link."""

    def __init__(self, model, q, v=None):
        self.model, self.q, self.v = model, q, v
        self._cache = {}
        if v is not None:
            ends = np.empty(model.nv, dtype=np.int64)     # last column of each column's joint
            for vi, nv in zip(model.joint_v_index, model.joint_nv):
                ends[vi:vi + nv] = vi + nv - 1
            self._ends = ends

    def link(self, name):
        c = self._cache.get(name)
        if c is None:
            T = frame_pose(self.model, self.q, name)
            J = body_jacobian(self.model, self.q, name)
            Jdv = None
            if self.v is not None:
                # world-frame columns move with their child body: d/dt Js_k = ad(Vs_k) Js_k,
                # Vs_k the world twist of the body that joint k moves (ancestors' columns, which
                # are the only non-zero ones, up to the end of joint k)
                Js = _Ad(T) @ J
                W = np.cumsum(Js * self.v, axis=1)[:, self._ends]
                Jdv = _Ad(_inv(T)) @ (_ad_apply(W, Js) @ self.v)
            c = self._cache[name] = (T, J, Jdv)
        return c

    def frame(self, side):
        """(T, J, Jdot v) of F = link * side.T."""
        T, J, Jdv = self.link(side.frame)
        X = _Ad(_inv(side.T))
        return T @ side.T, X @ J, None if Jdv is None else X @ Jdv


def _residual_block(lp, T_a, T_b):
    T_ab = _inv(T_a) @ T_b
    R, p = T_ab[:3, :3], T_ab[:3, 3]
    e_p = R.T @ p                                  # F_b's origin seen from F_a, in F_b
    k = lp.kind
    if k == "spherical":
        return e_p
    if k == "weld":
        return np.concatenate([e_p, so3.log(R)])
    n1, n2 = perpendicular_pair(lp.axis)
    if k == "revolute":
        c = R.T @ np.asarray(lp.axis)              # F_a's axis in F_b: equals axis when closed
        return np.concatenate([e_p, [n2 @ c, -n1 @ c]])
    return np.concatenate([[n1 @ p, n2 @ p], so3.log(R)])      # prismatic


def _q(model, q):
    q = np.asarray(q, dtype=float)
    if q.shape != (model.nq,) or not np.all(np.isfinite(q)):
        raise InputError(f"q must be {model.nq} finite numbers")
    return q


def _v(model, v, name="v"):
    v = np.asarray(v, dtype=float)
    if v.shape != (model.nv,) or not np.all(np.isfinite(v)):
        raise InputError(f"{name} must be {model.nv} finite numbers")
    return v


def constraint_residual(model, q):
    """(nc,) closure errors, zero when the mechanism is assembled.

    Per closure: position of F_b's origin relative to F_a in F_b (3), then for ``weld`` the
    SO(3) log of R_ab (3), for ``revolute`` the two components of F_a's axis seen in F_b that
    must vanish (2); for ``prismatic`` the offsets across the axis (2, in F_a) and log R_ab (3).
    Near the assembly the derivative of each row equals the matching row of A.
    """
    t = loop_tables(model)
    fr = _Frames(model, _q(model, q))
    out = np.empty(t.nc)
    for lp, (sa, sb), o in zip(t.loops, t.sides, t.offsets):
        out[o:o + lp.nc] = _residual_block(lp, fr.frame(sa)[0], fr.frame(sb)[0])
    return out


def _jacobian_and_bias(model, q, v=None):
    t = loop_tables(model)
    fr = _Frames(model, q, v)
    A = np.empty((t.nc, model.nv))
    bias = None if v is None else np.empty(t.nc)
    for lp, (sa, sb), P, o in zip(t.loops, t.sides, t.P, t.offsets):
        T_a, J_a, Jdv_a = fr.frame(sa)
        T_b, J_b, Jdv_b = fr.frame(sb)
        X = _Ad(_inv(T_b) @ T_a)                   # Ad_{T_ba}
        Jrel = J_b - X @ J_a
        A[o:o + lp.nc] = P @ Jrel
        if v is not None:
            Vb, Vrel = J_b @ v, Jrel @ v
            bias[o:o + lp.nc] = P @ (Jdv_b - X @ Jdv_a + _ad_apply(Vrel, Vb))
    return A, bias


def constraint_jacobian(model, q):
    """A (nc, nv): A v is the selected relative twist of F_b w.r.t. F_a, in F_b."""
    return _jacobian_and_bias(model, _q(model, q))[0]


def constraint_bias(model, q, v):
    """Adot v (nc,): A qdd + Adot v is the selected relative acceleration of the closure."""
    return _jacobian_and_bias(model, _q(model, q), _v(model, v))[1]


# -- rank reduction and M^-1 A^T ------------------------------------------------------------
def _reduce(A):
    """(U_r, Abar = U_r^T A) with full row rank; U_r (nc, r)."""
    if A.shape[0] == 0:
        return np.zeros((0, 0)), A
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    r = int(np.sum(s > RANK_RTOL * max(1.0, s[0] if s.size else 0.0)))
    return U[:, :r], s[:r, None] * Vt[:r]


def _minv_cols(model, q, B, g=None):
    """M^-1 B for B (nv, k), by k ABA runs with zero velocity on tau = g(q) + B_i."""
    g = gravity_torques(model, q) if g is None else g
    zero = np.zeros(model.nv)
    return np.column_stack([forward_dynamics(model, q, zero, g + B[:, i])
                            for i in range(B.shape[1])]) if B.shape[1] else np.zeros((model.nv, 0))


def _baumgarte_rhs(model, q, v, A, baumgarte):
    if baumgarte is None:
        return 0.0
    alpha, beta = baumgarte
    return 2.0 * alpha * (A @ v) + beta * beta * constraint_residual(model, q)


def constrained_forward_dynamics(model, q, v, tau, f_ext=None, baumgarte=None):
    """(qdd, lam) of the closed-loop mechanism, Kim (67)-(69).

    qdd_r = ABA(q, v, tau); Y = M^-1 Abar^T by simplified ABA runs;
    lam_bar = -(Abar Y)^-1 (Abar qdd_r + Abar_dot v); qdd = qdd_r + Y lam_bar.
    ``baumgarte=(alpha, beta)`` adds 2 alpha A v + beta^2 residual to the acceleration
    constraint (off by default; ``simulate_constrained`` projects instead).
    """
    q, v, tau = _q(model, q), _v(model, v), _v(model, tau, "tau")
    a_r = forward_dynamics(model, q, v, tau, f_ext)
    A, bias = _jacobian_and_bias(model, q, v)
    U, Ab = _reduce(A)
    if Ab.shape[0] == 0:
        return a_r, np.zeros(A.shape[0])
    Y = _minv_cols(model, q, Ab.T)
    G = Ab @ Y
    rhs = Ab @ a_r + U.T @ (bias + _baumgarte_rhs(model, q, v, A, baumgarte))
    lam_bar = -np.linalg.solve(G, rhs)
    return a_r + Y @ lam_bar, U @ lam_bar


def _columns(model, names, what):
    if isinstance(names, str):
        names = [names]
    cols = []
    for n in names:
        if n not in model.joint_names:
            raise InputError(f"{what}: unknown joint {n!r}; known: {model.joint_names}")
        i = model.joint_names.index(n)
        vi, nv = model.joint_v_index[i], model.joint_nv[i]
        cols.extend(range(vi, vi + nv))
    return np.array(sorted(set(cols)), dtype=np.int64)


def _tol(*xs):
    return 1e-8 * (1.0 + max(float(np.max(np.abs(x))) if np.size(x) else 0.0 for x in xs))


def constrained_inverse_dynamics(model, q, v, a, actuated, f_ext=None):
    """(tau, lam) that produce the motion (q, v, a) with only ``actuated`` joints driven,
    Kim (56)-(66). ``tau`` is zero on passive joints.

    tau_r = RNEA(q, v, a) (open tree); the passive rows give Abar_p^T lam = tau_pr (57).
    Exactly actuated: the unique solution (58). Redundantly actuated: lam = lam* + N s with N an
    orthonormal null basis of Abar_p^T and s chosen for the minimum-norm actuator torque
    (62)-(64). When Abar_p^T lam = tau_pr has no solution the mechanism is under-actuated for this
    motion: InputError. (v, a) must satisfy the constraints (A v = 0, A a + Adot v = 0).
    """
    q, v, a = _q(model, q), _v(model, v), _v(model, a, "a")
    ia = _columns(model, actuated, "actuated")
    ip = np.setdiff1d(np.arange(model.nv), ia)
    tau_r = inverse_dynamics(model, q, v, a, f_ext)
    U, Ab = _reduce(constraint_jacobian(model, q))
    Aa, Ap = Ab[:, ia], Ab[:, ip]
    lam0 = np.linalg.lstsq(Ap.T, tau_r[ip], rcond=None)[0] if Ab.shape[0] else np.zeros(0)
    miss = Ap.T @ lam0 - tau_r[ip]
    if miss.size and np.max(np.abs(miss)) > _tol(tau_r):
        worst = ip[int(np.argmax(np.abs(miss)))]
        raise InputError(
            f"under-actuated for this motion: with actuated joints {list(actuated)} the passive "
            f"joint {_joint_of(model, worst)!r} needs {miss[np.argmax(np.abs(miss))]:+.3g} N(m) "
            "that no closure force can supply; actuate more joints or use "
            "constrained_hybrid_dynamics")
    r = tau_r[ia] - Aa.T @ lam0
    N = null_space(Ap.T) if Ab.shape[0] else np.zeros((0, 0))
    lam_bar, tau_a = lam0, r
    if N.shape[1]:
        s = np.linalg.lstsq(Aa.T @ N, r, rcond=None)[0]
        lam_bar, tau_a = lam0 + N @ s, r - Aa.T @ (N @ s)
    tau = np.zeros(model.nv)
    tau[ia] = tau_a
    return tau, U @ lam_bar if U.size else np.zeros(model.nc)


def _joint_of(model, col):
    for n, vi, nv in zip(model.joint_names, model.joint_v_index, model.joint_nv):
        if vi <= col < vi + nv:
            return n
    return str(col)


def constrained_hybrid_dynamics(model, q, v, a, tau, prescribed, f_ext=None):
    """(a_full, tau_full, lam), Kim (70)-(80): accelerations given on the ``prescribed`` (bool
    mask (nv,), as ``hybrid_dynamics``) joints u, torques given on the others v.

    Two hybrid runs: (qdd_u, tau_v) -> (tau_ur, qdd_vr), and simplified runs with (0, Abar_v,i^T)
    that give M_vv^-1 Abar_v^T and M_uv M_vv^-1 Abar_v^T; lam_bar = -(Abar_v M_vv^-1 Abar_v^T)^+
    (Abar qdd_r + Abar_dot v) (74)-(76); tau_u = tau_ur + tau_uc - Abar_u^T lam (80). When there
    are more independent constraints than free joints (m > n_v), the part of lam in the null space
    of Abar_v^T is chosen for the minimum-norm tau_u, as (61)-(64) with a -> u, p -> v.
    """
    q, v, a, tau = _q(model, q), _v(model, v), _v(model, a, "a"), _v(model, tau, "tau")
    mask = np.asarray(prescribed, dtype=bool).reshape(-1)
    if mask.shape != (model.nv,):
        raise InputError(f"prescribed must be a boolean mask of shape ({model.nv},)")
    a_r, tau_r = hybrid_dynamics(model, q, v, a, tau, mask, f_ext)
    A, bias = _jacobian_and_bias(model, q, v)
    U, Ab = _reduce(A)
    if Ab.shape[0] == 0:
        return a_r, tau_r, np.zeros(A.shape[0])
    iu, iv = np.flatnonzero(mask), np.flatnonzero(~mask)
    g = gravity_torques(model, q)
    zero = np.zeros(model.nv)
    Yv = np.zeros((iv.size, Ab.shape[0]))
    Tu = np.zeros((iu.size, Ab.shape[0]))
    for i in range(Ab.shape[0]):
        t_in = g.copy()
        t_in[iv] += Ab[i, iv]
        ai, ti = hybrid_dynamics(model, q, zero, zero, t_in, mask)
        Yv[:, i], Tu[:, i] = ai[iv], ti[iu] - g[iu]
    Av, Au = Ab[:, iv], Ab[:, iu]
    G = Av @ Yv
    rhs = Ab @ a_r + U.T @ bias
    lam0 = -np.linalg.lstsq(G, rhs, rcond=None)[0]
    miss = G @ lam0 + rhs
    if np.max(np.abs(miss)) > _tol(rhs, a_r):
        raise InputError("the prescribed accelerations violate the loop closures (A a + Adot v "
                         f"misses by {np.max(np.abs(miss)):.3g}) and the free joints cannot make "
                         "up for it")
    a_full = a_r.copy()
    a_full[iv] += Yv @ lam0
    tau_u = tau_r[iu] + Tu @ lam0 - Au.T @ lam0
    lam_bar = lam0
    N = null_space(Av.T) if iv.size else np.eye(Ab.shape[0])
    if N.shape[1]:
        s = np.linalg.lstsq(Au.T @ N, tau_u, rcond=None)[0]
        lam_bar, tau_u = lam0 + N @ s, tau_u - Au.T @ (N @ s)
    tau_full = tau.copy()
    tau_full[iu] = tau_u
    return a_full, tau_full, U @ lam_bar


# -- assembly and projection ----------------------------------------------------------------
def assemble(model, q_guess, locked=None, tol=1e-12, max_iter=50, info=False):
    """q near ``q_guess`` with every closure satisfied: Gauss-Newton on the SE(3) residual
    (minimum-norm steps, so a rank-deficient A is fine) with a backtracking line search.

    ``locked``: joint names held at their guessed value (e.g. the actuated joints). Stops when
    max |residual| <= ``tol``; raises InputError naming the worst closure when no assembly is
    reachable. ``info=True`` returns ``(q, {"iterations", "residual"})``.
    """
    t = loop_tables(model)
    q = _q(model, q_guess).copy()
    free = np.ones(model.nv, dtype=bool)
    if locked:
        free[_columns(model, locked, "locked")] = False
    r = constraint_residual(model, q)
    err = float(np.max(np.abs(r)))
    for it in range(max_iter + 1):
        if err <= tol:
            return (q, {"iterations": it, "residual": err}) if info else q
        if it == max_iter:
            break
        A = constraint_jacobian(model, q)
        dq = np.zeros(model.nv)
        dq[free] = np.linalg.lstsq(A[:, free], -r, rcond=1e-12)[0]
        step, nrm = 1.0, np.linalg.norm(r)
        while step > 1e-6:
            q1 = integrate(model, q, step * dq)
            r1 = constraint_residual(model, q1)
            if np.linalg.norm(r1) < nrm * (1.0 - 1e-4 * step) or np.max(np.abs(r1)) <= tol:
                break
            step *= 0.5
        else:
            break                                   # no descent: a local minimum with r != 0
        q, r = q1, r1
        err = float(np.max(np.abs(r)))
    worst = int(np.argmax(np.abs(r)))
    lp = t.loops[int(np.searchsorted(t.offsets, worst, side="right")) - 1]
    raise InputError(f"assembly not reachable from this guess: closure {lp.name!r} ({lp.kind}, "
                     f"{lp.link_a!r}-{lp.link_b!r}) keeps an error of {abs(r[worst]):.3g} "
                     f"(max |residual| {err:.3g} > tol {tol:g})"
                     + (f" with joints {list(locked)} locked" if locked else ""))


def project(model, q, v, tol=1e-12, max_iter=10):
    """(q, v) on the constraint manifold: q by ``assemble`` from q, then v by the M-orthogonal
    projection v - M^-1 Abar^T (Abar M^-1 Abar^T)^-1 Abar v (removes only constraint-violating
    kinetic energy)."""
    q = assemble(model, q, tol=tol, max_iter=max_iter)
    v = _v(model, v)
    U, Ab = _reduce(constraint_jacobian(model, q))
    if Ab.shape[0]:
        Y = _minv_cols(model, q, Ab.T)
        v = v - Y @ np.linalg.solve(Ab @ Y, Ab @ v)
    return q, v


def make_constrained_stepper(model, method="rkmk4", projection=True, baumgarte=None):
    """One fixed step at a time for loops that own the clock (the simulator node), like
    ``integrators.simulate.make_stepper``: ``step(q, v, dt, tau=None, t=0.0) -> (q, v)`` with
    constrained forward dynamics at every stage and ``project`` after the step."""
    from ..integrators.simulate import make_stepper
    base = make_stepper(model, method)
    zero = np.zeros(model.nv)

    def step(q, v, dt, tau=None, t=0.0):
        tau_f = (lambda t_, q_, v_: zero) if tau is None else (
            tau if callable(tau) else (lambda t_, q_, v_, _t=_v(model, tau, "tau"): _t))

        def accel(t_, q_, v_):
            return constrained_forward_dynamics(model, q_, v_, tau_f(t_, q_, v_),
                                                baumgarte=baumgarte)[0]
        q, v = base(q, v, dt, t=t, accel=accel)
        return project(model, q, v) if projection else (q, v)
    return step


def simulate_constrained(model, q0, v0, duration, dt, method="rkmk4", tau=None, projection=True,
                         baumgarte=None, callback=None):
    """Integrate constrained forward dynamics with a fixed step (any fixed-step method of
    ``ldr.simulate``), then ``project`` (q, v) back onto the constraint manifold after every
    step when ``projection`` is True. ``baumgarte=(alpha, beta)`` adds Baumgarte stabilisation
    to the acceleration constraint. (q0, v0) are projected first. ``callback(t, q, v)`` after
    every step; returning True stops. Returns a SimulationResult.
    """
    from ..integrators.simulate import SimulationResult
    n = int(round(duration / dt)) if np.isfinite(dt) and dt > 0 else 0
    if n < 1:
        raise InputError("duration and dt must give at least one step of positive length")
    step = make_constrained_stepper(model, method, projection, baumgarte)
    q, v = project(model, q0, v0)
    T, Q, V = [0.0], [q], [v]
    for i in range(1, n + 1):
        q, v = step(q, v, dt, tau, (i - 1) * dt)
        T.append(i * dt)
        Q.append(q)
        V.append(v)
        if callback is not None and callback(i * dt, q, v):
            break
    return SimulationResult(np.array(T), np.array(Q), np.array(V), method=method)


def complete_motion(model, q, v, a, known):
    """(q, v, a) of the whole mechanism from the values on the ``known`` joints (e.g. the
    actuated ones, as a trajectory gives them): q by ``assemble`` with ``known`` locked, then the
    other velocities from A v = 0 and accelerations from A a + Adot v = 0 (least squares, so
    redundant closure rows are fine). InputError when the known joints do not determine the
    others (the closure rows leave a passive direction free).
    """
    q = assemble(model, q, locked=known)
    v, a = _v(model, v).copy(), _v(model, a, "a").copy()
    ik = _columns(model, known, "known")
    ip = np.setdiff1d(np.arange(model.nv), ik)
    A = constraint_jacobian(model, q)
    Ap = A[:, ip]
    if ip.size and np.linalg.matrix_rank(Ap, tol=RANK_RTOL * max(1.0, np.abs(A).max())) < ip.size:
        raise InputError(f"joints {list(known)} do not determine the others: the closures leave "
                         f"{ip.size - np.linalg.matrix_rank(Ap)} passive direction(s) free")
    v[ip] = np.linalg.lstsq(Ap, -A[:, ik] @ v[ik], rcond=None)[0]
    b = constraint_bias(model, q, v)
    a[ip] = np.linalg.lstsq(Ap, -A[:, ik] @ a[ik] - b, rcond=None)[0]
    return q, v, a
