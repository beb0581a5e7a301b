"""Joint-space controllers on top of the dynamics library (no ROS): computed torque, PD +
gravity, Slotine-Li passivity-based control and its adaptive version (docs/control.md).

Every controller is a frozen, validated gains dataclass plus a mutable ``state``
(``ControllerState``: time, last errors, torques and, for the adaptive one, theta_hat), and is
stepped with ``tau = ctrl.step(t, q, v, q_d, v_d, a_d, dt)``.

Errors: e = q (-) q_d (``ldr.difference(model, q_d, q)``, the group logarithm for free and ball
joints), e_dot = v - v_d. Slotine-Li: v_r = v_d - Lambda e, a_r = a_d - Lambda e_dot,
s = v - v_r = e_dot + Lambda e, and

    tau = M(q) a_r + C(q, v) v_r + g(q) - K_D s = Y(q, v, v_r, a_r) theta - K_D s

with the Christoffel-consistent C (``ldr.coriolis_matrix``), so that dM/dt - 2C is skew and
the closed loop M s_dot + C s + K_D s = Y theta_tilde is passive. The adaptive law
theta_hat_dot = -Gamma Y^T s makes V = 1/2 s^T M s + 1/2 theta_tilde^T Gamma^-1 theta_tilde
non-increasing (V_dot = -s^T K_D s), theta_tilde = theta_hat - theta. It is integrated with the
``dt`` given to ``step`` (explicit Euler) and followed, by default, by the projection onto
physically consistent parameters (``project_physical``), which is a projection in the
Gamma^-1 metric and therefore never increases the parameter part of V.

Gravity is ``model.gravity``; for arms whose firmware compensates gravity, give the controller
a model with zero gravity (the ROS node's ``compensate_gravity: false`` does that).
"""
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
from ..kernels.jit import njit

from ..algorithms._inputs import vec
from ..algorithms.configuration import difference
from ..algorithms.dynamics import inverse_dynamics, gravity_torques, mass_matrix
from ..algorithms.regressor import (N_PARAMS, inertial_parameters, regressor,
                                    slotine_li_torques)
from ..errors import InputError

__all__ = [
    "PDGains", "SlotineLiGains", "AdaptiveGains", "ControllerState",
    "ComputedTorqueController", "PDGravityController", "SlotineLiController",
    "AdaptiveSlotineLiController", "pseudo_inertia", "parameters_from_pseudo_inertia",
    "is_physically_consistent", "smallest_pseudo_inertia_eigenvalues", "project_physical",
]


# ---------------------------------------------------------------------------------------------
# gains


def _gain(name, value, strict=False):
    """A validated, read-only gain: scalar, vector (diagonal) or symmetric matrix.

    Negative (or, with ``strict``, zero) entries, non-finite values, a non-symmetric matrix or
    one that is not positive (semi)definite raise InputError.
    """
    try:
        a = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError("gain %s must be a number, a vector or a matrix, got %r"
                         % (name, value)) from None
    if a.ndim > 2 or a.size == 0:
        raise InputError("gain %s must be a scalar, a vector or a square matrix" % name)
    if not np.all(np.isfinite(a)):
        raise InputError("gain %s must be finite, got %r" % (name, value))
    if a.ndim == 2:
        if a.shape[0] != a.shape[1] or not np.allclose(a, a.T, rtol=1e-12, atol=1e-12):
            raise InputError("gain %s: a matrix gain must be square and symmetric" % name)
        a = 0.5 * (a + a.T)
        lo = float(np.linalg.eigvalsh(a).min())
        if lo < 0 or (strict and lo <= 0):
            raise InputError("gain %s must be positive %sdefinite (smallest eigenvalue %g)"
                             % (name, "" if strict else "semi", lo))
    else:
        if np.any(a < 0) or (strict and np.any(a <= 0)):
            raise InputError("gain %s must be %s, got %r"
                             % (name, "> 0" if strict else ">= 0", value))
    a.flags.writeable = False
    return a


def _sized(g, n, name):
    """Gain ``g`` as a diagonal vector (n,) or a matrix (n, n)."""
    if g.ndim == 0:
        return np.full(n, float(g))
    if g.ndim == 1:
        if g.shape != (n,):
            raise InputError("gain %s has %d entries, the controller needs %d"
                             % (name, g.shape[0], n))
        return np.array(g)
    if g.shape != (n, n):
        raise InputError("gain %s is %dx%d, the controller needs %dx%d"
                         % (name, g.shape[0], g.shape[1], n, n))
    return np.array(g)


def _apply(g, x):
    return g @ x if g.ndim == 2 else g * x


@dataclass(frozen=True)
class PDGains:
    """Gains of computed torque and of PD + gravity: K_P (1/s^2 for computed torque, N m/rad
    for PD + gravity) and K_D; each a scalar, a vector (diagonal) or a symmetric matrix, >= 0."""
    K_P: object = 100.0
    K_D: object = 20.0

    def __post_init__(self):
        object.__setattr__(self, "K_P", _gain("K_P", self.K_P))
        object.__setattr__(self, "K_D", _gain("K_D", self.K_D))


@dataclass(frozen=True)
class SlotineLiGains:
    """Slotine-Li gains: Lambda (1/s; v_r = v_d - Lambda e) and K_D (N m s/rad), each a
    scalar, a vector (diagonal) or a symmetric matrix, >= 0."""
    Lambda: object = 10.0
    K_D: object = 20.0

    def __post_init__(self):
        object.__setattr__(self, "Lambda", _gain("Lambda", self.Lambda))
        object.__setattr__(self, "K_D", _gain("K_D", self.K_D))


@dataclass(frozen=True)
class AdaptiveGains:
    """Adaptive Slotine-Li gains: Lambda, K_D as in ``SlotineLiGains`` and the adaptation gain
    Gamma (> 0): a scalar, 10 numbers (one per parameter kind, repeated for every adapted
    body), one number per adapted parameter, or a symmetric positive definite matrix."""
    Lambda: object = 10.0
    K_D: object = 20.0
    Gamma: object = 1.0

    def __post_init__(self):
        object.__setattr__(self, "Lambda", _gain("Lambda", self.Lambda))
        object.__setattr__(self, "K_D", _gain("K_D", self.K_D))
        object.__setattr__(self, "Gamma", _gain("Gamma", self.Gamma, strict=True))


@dataclass
class ControllerState:
    """What a controller remembers between steps (mutable)."""
    t: Optional[float] = None
    steps: int = 0
    e: Optional[np.ndarray] = None        # q (-) q_d
    e_dot: Optional[np.ndarray] = None    # v - v_d
    s: Optional[np.ndarray] = None        # e_dot + Lambda e (Slotine-Li)
    tau: Optional[np.ndarray] = None
    theta_hat: Optional[np.ndarray] = None    # adapted parameters (adaptive controller)
    projections: int = 0                  # steps in which the projection acted
    extra: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# controllers


class _Controller:
    def __init__(self, model, gains):
        self.model = model
        self.data = model.create_data()      # the controller's own work memory
        self.gains = gains
        self.state = ControllerState()

    def errors(self, q, v, q_d, v_d):
        """(e, e_dot) = (q (-) q_d, v - v_d)."""
        e = difference(self.model, q_d, q)
        n = self.model.nv
        e_dot = vec(v, n, "v") - vec(v_d, n, "v_d")      # columns would broadcast to (n, n)
        return e, e_dot

    def reset(self):
        """Forget time and errors (and, for the adaptive controller, go back to theta_0)."""
        self.state = ControllerState()

    def _record(self, t, e, e_dot, tau, s=None):
        st = self.state
        st.t, st.e, st.e_dot, st.s, st.tau = float(t), e, e_dot, s, tau
        st.steps += 1
        return tau


class ComputedTorqueController(_Controller):
    """tau = M(q) (a_d - K_D e_dot - K_P e) + C(q, v) v + g(q)  (one RNEA call)."""

    def __init__(self, model, gains: PDGains):
        if not isinstance(gains, PDGains):
            raise TypeError("ComputedTorqueController needs PDGains")
        super().__init__(model, gains)
        self._kp = _sized(gains.K_P, model.nv, "K_P")
        self._kd = _sized(gains.K_D, model.nv, "K_D")

    def step(self, t, q, v, q_d, v_d, a_d, dt=0.0):
        e, e_dot = self.errors(q, v, q_d, v_d)
        a = vec(a_d, self.model.nv, "a_d") - _apply(self._kd, e_dot) - _apply(self._kp, e)
        return self._record(t, e, e_dot, inverse_dynamics(self.model, q, v, a, data=self.data))


class PDGravityController(_Controller):
    """tau = g(q) - K_P e - K_D e_dot (regulation; a_d is ignored)."""

    def __init__(self, model, gains: PDGains):
        if not isinstance(gains, PDGains):
            raise TypeError("PDGravityController needs PDGains")
        super().__init__(model, gains)
        self._kp = _sized(gains.K_P, model.nv, "K_P")
        self._kd = _sized(gains.K_D, model.nv, "K_D")

    def step(self, t, q, v, q_d, v_d, a_d=None, dt=0.0):
        e, e_dot = self.errors(q, v, q_d, v_d)
        tau = (gravity_torques(self.model, q, data=self.data) - _apply(self._kp, e)
               - _apply(self._kd, e_dot))
        return self._record(t, e, e_dot, tau)


class SlotineLiController(_Controller):
    """Slotine-Li with the model's own parameters:
    tau = M a_r + C(q, v) v_r + g - K_D s, computed in one O(n) recursion
    (``ldr.slotine_li_torques``)."""

    def __init__(self, model, gains: SlotineLiGains):
        if not isinstance(gains, (SlotineLiGains, AdaptiveGains)):
            raise TypeError("SlotineLiController needs SlotineLiGains")
        super().__init__(model, gains)
        self._lam = _sized(gains.Lambda, model.nv, "Lambda")
        self._kd = _sized(gains.K_D, model.nv, "K_D")

    def reference(self, q, v, q_d, v_d, a_d):
        """(e, e_dot, v_r, a_r, s)."""
        e, e_dot = self.errors(q, v, q_d, v_d)
        v_r = vec(v_d, self.model.nv, "v_d") - _apply(self._lam, e)
        a_r = vec(a_d, self.model.nv, "a_d") - _apply(self._lam, e_dot)
        return e, e_dot, v_r, a_r, vec(v, self.model.nv, "v") - v_r

    def step(self, t, q, v, q_d, v_d, a_d, dt=0.0):
        e, e_dot, v_r, a_r, s = self.reference(q, v, q_d, v_d, a_d)
        tau = (slotine_li_torques(self.model, q, v, v_r, a_r, data=self.data)
               - _apply(self._kd, s))
        return self._record(t, e, e_dot, tau, s)

    def lyapunov(self, q, v, q_d, v_d, theta_true=None):
        """V = 1/2 s^T M(q) s (no parameter error: the model is taken as exact)."""
        _, _, _, _, s = self.reference(q, v, q_d, v_d, np.zeros(self.model.nv))
        return 0.5 * float(s @ mass_matrix(self.model, q, data=self.data) @ s)


class AdaptiveSlotineLiController(SlotineLiController):
    """Adaptive Slotine-Li: tau = Y(q, v, v_r, a_r) theta_hat - K_D s,
    theta_hat_dot = -Gamma Y_a^T s (Y_a: the columns of the adapted parameters).

    Args:
        model: the nominal model; its parameters (``inertial_parameters(model)``) are the
            initial estimate and, with ``payload_only``, the fixed value of the other bodies.
        gains: ``AdaptiveGains``.
        payload_only: adapt only the 10 parameters of one body (``adapt_body``, default the
            last body of ``model.body_names``, where a payload at the flange is merged).
        adapt_body: the adapted body's name (a ``model.body_names`` entry) in payload mode.
        theta0: initial estimate of the adapted parameters (10 per adapted body), default the
            nominal ones.
        projection: keep theta_hat physically consistent (``project_physical`` in the
            Gamma^-1 metric, pseudo-inertia >= ``min_eigenvalue``). Without it the plain law
            may drift to a negative mass or an inertia that is not positive definite.
        projection_method: "halfspace" (default; Fejer-monotone, ~20 us) or "exact" (the
            Gamma^-1-metric projection by a barrier method, ~0.3-1 ms); see
            ``project_physical``.
        adapt: the adaptation is on (a mutable attribute; off = fixed-parameter Slotine-Li
            with theta_hat).
    """

    def __init__(self, model, gains: AdaptiveGains, payload_only=False, adapt_body=None,
                 theta0=None, projection=True, min_eigenvalue=1e-9, adapt=True,
                 projection_method="halfspace"):
        if not isinstance(gains, AdaptiveGains):
            raise TypeError("AdaptiveSlotineLiController needs AdaptiveGains")
        super().__init__(model, gains)
        self.theta_nominal = inertial_parameters(model)
        nb = model.njoints
        if payload_only or adapt_body is not None:
            body = adapt_body if adapt_body is not None else model.body_names[-1]
            if body not in model.body_names:
                raise InputError("adapt_body %r is not a body of the model (%s)"
                                 % (body, model.body_names))
            b = model.body_names.index(body)
            self.adapted = np.arange(N_PARAMS * b, N_PARAMS * (b + 1))
            self.adapted_bodies = [body]
        else:
            self.adapted = np.arange(N_PARAMS * nb)
            self.adapted_bodies = list(model.body_names)
        na = self.adapted.size
        G = gains.Gamma
        if G.ndim == 1 and G.shape == (N_PARAMS,) and na != N_PARAMS:
            G = np.tile(G, na // N_PARAMS)
        self._gamma = _sized(G, na, "Gamma")
        self._gamma_inv = (np.linalg.inv(self._gamma) if self._gamma.ndim == 2
                           else 1.0 / self._gamma)
        self.projection = bool(projection)
        if projection_method not in ("halfspace", "exact"):
            raise InputError("projection_method must be 'halfspace' or 'exact'")
        self.projection_method = projection_method
        self.min_eigenvalue = float(min_eigenvalue)
        self.adapt = bool(adapt)
        if theta0 is None:
            self.theta0 = self.theta_nominal[self.adapted].copy()
        else:
            th = np.array(theta0, dtype=float).reshape(-1)
            if th.shape == self.theta_nominal.shape:
                th = th[self.adapted]
            if th.shape != (na,) or not np.all(np.isfinite(th)):
                raise InputError("theta0 must be %d finite numbers (the adapted parameters) "
                                 "or %d (all)" % (na, self.theta_nominal.size))
            self.theta0 = th
        self.reset()

    def reset(self):
        super().reset()
        self.state.theta_hat = self.theta0.copy()

    @property
    def theta_hat(self):
        """Current estimate of the adapted parameters (a copy)."""
        return self.state.theta_hat.copy()

    def theta_full(self, theta_hat=None):
        """All 10 nbodies parameters: nominal, with the adapted ones replaced by theta_hat."""
        th = self.theta_nominal.copy()
        th[self.adapted] = self.state.theta_hat if theta_hat is None else theta_hat
        return th

    def set_theta_hat(self, theta_hat):
        th = np.array(theta_hat, dtype=float).reshape(-1)
        if th.shape != self.theta0.shape or not np.all(np.isfinite(th)):
            raise InputError("theta_hat must be %d finite numbers" % self.theta0.size)
        self.state.theta_hat = th

    def step(self, t, q, v, q_d, v_d, a_d, dt=0.0):
        e, e_dot, v_r, a_r, s = self.reference(q, v, q_d, v_d, a_d)
        Y = regressor(self.model, q, v, v_r, a_r, data=self.data)
        tau = Y @ self.theta_full() - _apply(self._kd, s)
        if self.adapt and dt > 0:
            old = self.state.theta_hat
            new = old - dt * _apply(self._gamma, Y[:, self.adapted].T @ s)
            if not np.all(np.isfinite(new)):     # diverged update: keep the last estimate
                self.state.extra["rejected_updates"] = self.state.extra.get(
                    "rejected_updates", 0) + 1
                return self._record(t, e, e_dot, tau, s)
            if self.projection:
                new, acted = project_physical(new, metric_inv=self._gamma,
                                              eps=self.min_eigenvalue, start=old,
                                              method=self.projection_method)
                self.state.projections += int(acted)
            self.state.theta_hat = new
        return self._record(t, e, e_dot, tau, s)

    def parameter_error_energy(self, theta_true):
        """1/2 theta_tilde^T Gamma^-1 theta_tilde, theta_tilde = theta_hat - theta_true
        (``theta_true``: all parameters, or only the adapted ones)."""
        th = np.asarray(theta_true, dtype=float).reshape(-1)
        if th.shape == self.theta_nominal.shape:
            th = th[self.adapted]
        if th.shape != self.theta0.shape:
            raise InputError("theta_true must have %d or %d entries"
                             % (self.theta0.size, self.theta_nominal.size))
        d = self.state.theta_hat - th
        return 0.5 * float(d @ _apply(self._gamma_inv, d))

    def lyapunov(self, q, v, q_d, v_d, theta_true=None):
        """V = 1/2 s^T M(q) s + 1/2 theta_tilde^T Gamma^-1 theta_tilde, with M from the plant's
        true parameters when ``theta_true`` is given (else the nominal model; the parameter
        term is then omitted). theta_true: all parameters (10 per body) or the adapted ones.

        M(q) is linear in theta: M(q) columns are regressor(q, 0, 0, e_k) with gravity off.
        """
        _, _, _, _, s = self.reference(q, v, q_d, v_d, np.zeros(self.model.nv))
        if theta_true is None:
            return 0.5 * float(s @ mass_matrix(self.model, q, data=self.data) @ s)
        th = np.asarray(theta_true, dtype=float).reshape(-1)
        full = self.theta_full(th) if th.shape == self.theta0.shape else th
        Ms = self._mass_times(q, s, full)
        return 0.5 * float(s @ Ms) + self.parameter_error_energy(th)

    def _mass_times(self, q, x, theta):
        """M(q; theta) x = Y(q, 0, 0, x) theta on the model without gravity."""
        if getattr(self, "_model_g0", None) is None:
            self._model_g0 = self.model.with_gravity((0.0, 0.0, 0.0))
            self._data_g0 = self._model_g0.create_data()
        z = self.data.zero_v
        return regressor(self._model_g0, q, z, z, x, data=self._data_g0) @ theta


# ---------------------------------------------------------------------------------------------
# physical consistency (Wensing, Kim & Slotine 2017: pseudo-inertia P >= 0)


def pseudo_inertia(theta_b):
    """4x4 pseudo-inertia P = [[Sigma, h], [h^T, m]] of one body's 10 parameters, with
    Sigma = 1/2 tr(J) 1 - J (J: rotational inertia about the body origin, h = m c).

    P > 0 (positive definite) <=> m > 0, the inertia about the COM is positive definite and
    its principal moments satisfy the (strict) triangle inequalities.
    """
    m, hx, hy, hz, xx, xy, yy, xz, yz, zz = np.asarray(theta_b, dtype=float).reshape(10)
    J = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    P = np.empty((4, 4))
    P[:3, :3] = 0.5 * np.trace(J) * np.eye(3) - J
    P[:3, 3] = P[3, :3] = hx, hy, hz
    P[3, 3] = m
    return P


def parameters_from_pseudo_inertia(P):
    """Inverse of ``pseudo_inertia``: J = tr(Sigma) 1 - Sigma."""
    P = 0.5 * (np.asarray(P, dtype=float) + np.asarray(P, dtype=float).T)
    S = P[:3, :3]
    J = np.trace(S) * np.eye(3) - S
    return np.array([P[3, 3], P[0, 3], P[1, 3], P[2, 3], J[0, 0], J[0, 1], J[1, 1], J[0, 2],
                     J[1, 2], J[2, 2]])


def is_physically_consistent(theta, tol=0.0):
    """True when every body's pseudo-inertia has smallest eigenvalue >= -tol (theta: 10 k)."""
    th = np.asarray(theta, dtype=float).reshape(-1, N_PARAMS)
    return all(np.linalg.eigvalsh(pseudo_inertia(b)).min() >= -tol for b in th)


def smallest_pseudo_inertia_eigenvalues(theta):
    """Smallest eigenvalue of each body's pseudo-inertia (theta: 10 k) -> (k,)."""
    th = np.asarray(theta, dtype=float).reshape(-1, N_PARAMS)
    return np.array([np.linalg.eigvalsh(pseudo_inertia(b)).min() for b in th])


def _feasible(theta, eps):
    th = np.asarray(theta, dtype=float).reshape(-1)
    L = np.empty((4, 4))
    P = np.empty((4, 4))
    return all(_chol4(_fill_pseudo(th, N_PARAMS * b, eps, P), L)
               for b in range(th.size // N_PARAMS))


def project_physical(theta, metric=None, eps=1e-9, start=None, method="exact", metric_inv=None,
                     rel_tol=1e-9, max_iter=400):
    """Projection of parameters onto the physically consistent set
    {x : pseudo_inertia(x_b) >= eps 1 for every body b} in the metric G = ``metric``
    (None: identity; a scalar or vector: diagonal; a matrix: SPD; ``metric_inv`` may give
    G^-1 instead).

    Returns (x, acted); acted is False when theta was already feasible (returned unchanged).

    method="exact": x minimizes 1/2 (x - theta)^T G (x - theta) on the set, by a compiled
    log-barrier Newton method (the set is an LMI): strictly feasible start (``start`` if given
    and feasible, else theta shifted into the set), barrier weight raised 20-fold per round
    until the duality gap is below rel_tol * the initial objective. x is strictly inside.

    method="halfspace" (what the adaptive controller uses, ~20 us): successive G-metric
    projections onto the supporting halfspace {x : u^T P_b(x) u >= 2 eps} of the most
    violated body (u: the eigenvector of P_b's smallest eigenvalue) until every P_b >= eps;
    falls back to "exact" if that takes more than 100 rounds. Every round is an exact
    projection onto a convex superset of the feasible set, so the G-distance to EVERY feasible
    point (the true parameters included) never grows (Fejer monotone): with G = Gamma^-1 the
    parameter term of the adaptive Lyapunov function cannot increase. The result is within
    a few 1e-5 (relative, typical) of the exact projection's distance for the small
    corrections of one control step.
    """
    x0 = np.array(theta, dtype=float).reshape(-1)
    if x0.size % N_PARAMS or x0.size == 0:
        raise InputError("theta must have 10 numbers per body")
    if not np.all(np.isfinite(x0)):
        raise InputError("theta must be finite")
    if method not in ("exact", "halfspace"):
        raise InputError("method must be 'exact' or 'halfspace'")
    nb = x0.size // N_PARAMS
    L = np.empty((4, 4))
    P = np.empty((4, 4))
    bad = [b for b in range(nb) if not _chol4(_fill_pseudo(x0, N_PARAMS * b, eps, P), L)]
    if not bad:
        return x0, False
    n = x0.size
    if metric_inv is not None:
        Gi = np.asarray(metric_inv, dtype=float)
        Gi = np.full(n, float(Gi)) if Gi.ndim == 0 else Gi
        G = 1.0 / Gi if Gi.ndim == 1 else np.linalg.inv(Gi)
    else:
        G = np.ones(n) if metric is None else np.asarray(metric, dtype=float)
        G = np.full(n, float(G)) if G.ndim == 0 else G
        Gi = 1.0 / G if G.ndim == 1 else np.linalg.inv(G)
    if method == "halfspace":
        x, ok, _ = _halfspace_nb(x0, np.diag(Gi) if Gi.ndim == 1 else np.ascontiguousarray(Gi),
                                 eps, 100, _E)
        if ok and np.all(np.isfinite(x)):
            return x, True
    st = None if start is None else np.asarray(start, dtype=float).reshape(-1)
    if st is not None and st.shape != x0.shape:
        st = None
    out = x0.copy()
    if G.ndim == 1:              # separable: project each infeasible body on its own
        for b in bad:
            sl = slice(N_PARAMS * b, N_PARAMS * (b + 1))
            out[sl] = _solve(x0[sl], np.diag(G[sl]), None if st is None else st[sl], eps,
                             rel_tol, max_iter)
    else:
        out = _solve(x0, np.ascontiguousarray(G), st, eps, rel_tol, max_iter)
    return out, True


def _solve(x0, G, start, eps, rel_tol, max_iter):
    """Barrier solve; if it fails numerically (e.g. absurd values from a diverging adaptation)
    the strictly feasible start point is returned, so the result is always consistent."""
    xs = _feasible_start(x0, start, eps)
    try:
        x = _barrier_nb(x0, G, xs, eps, rel_tol, max_iter, _E, _INFO)
    except (np.linalg.LinAlgError, ZeroDivisionError):   # a singular Newton system
        return xs
    if not (np.all(np.isfinite(x)) and _feasible(x, eps)):
        return xs
    return x


def _feasible_start(x0, start, eps):
    if start is not None and np.all(np.isfinite(start)) and _feasible(start, 2 * eps):
        return start.copy()
    x = x0.copy()
    for b in range(x.size // N_PARAMS):
        sl = slice(N_PARAMS * b, N_PARAMS * (b + 1))
        P = pseudo_inertia(x[sl])
        try:
            lam = np.linalg.eigvalsh(P)
        except np.linalg.LinAlgError:
            lam = np.array([-1.0, 1.0])
            P = np.eye(4)
        lo = lam.min()
        if lo < 2 * eps:
            shift = (2 * eps - lo) + 1e-3 * max(abs(lo), np.abs(lam).max(), eps)
            x[sl] = parameters_from_pseudo_inertia(P + shift * np.eye(4))
    return x


_INFO = np.zeros(2, dtype=np.int64)   # iterations, line-search evaluations of the last solve

# pseudo-inertia of each unit parameter: P(theta_b) = sum_k theta_k _E[k]
_E = np.array([pseudo_inertia(np.eye(10)[k]) for k in range(10)])


@njit(cache=True)
def _fill_pseudo(th, off, eps, P):
    """P = pseudo_inertia(th[off:off+10]) - eps 1."""
    m, hx, hy, hz = th[off], th[off + 1], th[off + 2], th[off + 3]
    xx, xy, yy, xz, yz, zz = th[off + 4], th[off + 5], th[off + 6], th[off + 7], th[off + 8], \
        th[off + 9]
    h = 0.5 * (xx + yy + zz)
    P[0, 0], P[1, 1], P[2, 2], P[3, 3] = h - xx - eps, h - yy - eps, h - zz - eps, m - eps
    P[0, 1] = P[1, 0] = -xy
    P[0, 2] = P[2, 0] = -xz
    P[1, 2] = P[2, 1] = -yz
    P[0, 3] = P[3, 0] = hx
    P[1, 3] = P[3, 1] = hy
    P[2, 3] = P[3, 2] = hz
    return P


@njit(cache=True)
def _chol4(Q, L):
    """Cholesky Q = L L^T of a 4x4 matrix; False unless Q is (numerically) positive definite."""
    for i in range(4):
        for j in range(i + 1):
            acc = Q[i, j]
            for k in range(j):
                acc -= L[i, k] * L[j, k]
            if i == j:
                if not acc > 0.0:
                    return False
                L[i, i] = np.sqrt(acc)
            else:
                L[i, j] = acc / L[j, j]
        for j in range(i + 1, 4):
            L[i, j] = 0.0
    return True


@njit(cache=True)
def _barrier_eval(x, x0, G, t, eps, Qis):
    """t/2 |x - x0|_G^2 - sum_b log det(P_b(x) - eps); Qis[b] = (P_b - eps)^-1. inf outside."""
    nb = x.size // 10
    P = np.empty((4, 4))
    L = np.empty((4, 4))
    Li = np.empty((4, 4))
    val = 0.0
    for b in range(nb):
        _fill_pseudo(x, 10 * b, eps, P)
        if not _chol4(P, L):
            return np.inf
        for i in range(4):
            val -= 2.0 * np.log(L[i, i])
        for j in range(4):                      # Li = L^-1 (lower triangular)
            for i in range(4):
                if i < j:
                    Li[i, j] = 0.0
                elif i == j:
                    Li[i, i] = 1.0 / L[i, i]
                else:
                    acc = 0.0
                    for k in range(j, i):
                        acc += L[i, k] * Li[k, j]
                    Li[i, j] = -acc / L[i, i]
        for i in range(4):
            for j in range(4):
                acc = 0.0
                for k in range(4):
                    acc += Li[k, i] * Li[k, j]
                Qis[b, i, j] = acc
    d = x - x0
    return val + 0.5 * t * (d @ (G @ d))


@njit(cache=True)
def _barrier_nb(x0, G, xs, eps, rel_tol, max_iter, E, info):
    n = x0.size
    nb = n // 10
    x = xs.copy()
    d = x - x0
    f0 = 0.5 * (d @ (G @ d))
    if f0 == 0.0:
        return x
    m = 4.0 * nb
    t = m / f0
    Qis = np.empty((nb, 4, 4))
    Qn = np.empty((nb, 4, 4))
    B = np.empty((10, 4, 4))
    fx = _barrier_eval(x, x0, G, t, eps, Qis)
    it = 0
    while it < max_iter:
        inner = 0
        while it < max_iter and inner < 60:
            it += 1
            inner += 1
            grad = t * (G @ (x - x0))
            H = t * G
            for b in range(nb):
                Qi = Qis[b]
                for p in range(10):
                    acc = 0.0
                    for i in range(4):
                        for j in range(4):
                            acc += Qi[i, j] * E[p, j, i]
                            s_ = 0.0
                            for k in range(4):
                                s_ += Qi[i, k] * E[p, k, j]
                            B[p, i, j] = s_
                    grad[10 * b + p] -= acc
                for p in range(10):
                    for q in range(p, 10):
                        acc = 0.0
                        for i in range(4):
                            for j in range(4):
                                acc += B[p, i, j] * B[q, j, i]
                        H[10 * b + p, 10 * b + q] += acc
                        if q != p:
                            H[10 * b + q, 10 * b + p] += acc
            dx = -np.linalg.solve(H, grad)
            dec = -(grad @ dx)
            if dec <= 1e-9:
                break
            s = 1.0
            ok = False
            while s > 1e-10:
                info[1] += 1
                fn = _barrier_eval(x + s * dx, x0, G, t, eps, Qn)
                if fn <= fx - 0.25 * s * dec:
                    ok = True
                    break
                s *= 0.5
            if not ok:
                break
            x = x + s * dx
            fx = fn
            Qis[:, :, :] = Qn
        if m / t <= rel_tol * f0:
            break
        t *= 20.0
        fx = _barrier_eval(x, x0, G, t, eps, Qis)
    info[0] = it
    return x


@njit(cache=True)
def _halfspace_nb(x0, Ginv, eps, max_iter, E):
    """Successive G-metric projections onto the supporting halfspaces
    {x : u^T P_b(x) u >= 2 eps} of the most violated body b (u: its eigenvector of the smallest
    eigenvalue) until every P_b(x) >= eps. Ginv: (n, n). Returns (x, converged, iterations)."""
    n = x0.size
    nb = n // 10
    x = x0.copy()
    P = np.empty((4, 4))
    a = np.empty(10)
    for it in range(max_iter):
        worst = 0.0
        wb = -1
        wu = np.zeros(4)
        for b in range(nb):
            _fill_pseudo(x, 10 * b, 0.0, P)
            lam, U = np.linalg.eigh(P)
            if lam[0] < eps and eps - lam[0] > worst:
                worst = eps - lam[0]
                wb = b
                wu[:] = U[:, 0]
                lmin = lam[0]
        if wb < 0:
            return x, True, it
        for p in range(10):
            acc = 0.0
            for i in range(4):
                for j in range(4):
                    acc += wu[i] * E[p, i, j] * wu[j]
            a[p] = acc
        d = np.zeros(n)
        for r in range(n):
            acc = 0.0
            for p in range(10):
                acc += Ginv[r, 10 * wb + p] * a[p]
            d[r] = acc
        den = 0.0
        for p in range(10):
            den += a[p] * d[10 * wb + p]
        if not den > 0.0:
            return x, False, it
        step = (2.0 * eps - lmin) / den
        for r in range(n):
            x[r] += step * d[r]
    return x, False, max_iter
