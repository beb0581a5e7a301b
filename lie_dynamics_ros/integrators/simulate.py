"""Forward (and hybrid) dynamics of a multibody model integrated on its configuration group.

``simulate(model, q0, v0, duration, dt, method="rkmk4", tau=None, ...)``

The state (q, v) lives on Q x R^nv, where Q is the product of SE(3) (free joint, body twist),
SO(3) (ball joint, body angular velocity) and R^k (all other joints).  The group acts on Q from
the RIGHT through ``ldr.integrate``: q . exp(delta) = integrate(model, q, delta), and on R^nv by
translation.  q' = q . v (v is the body velocity, right-trivialised form), v' = a(t, q, v).

A right action is the left action of the opposite group, so RKMK reads
sigma' = dexp^{-1}_{-sigma}(v) on the SE(3)/SO(3) blocks (exact closed forms of ``lie.se3`` and
``lie.so3``), and the commutator of the opposite algebra is -[u, w].  Every stage and every step
applies the exponential, so quaternions stay unit (to round-off) without renormalisation and no
Euler angles appear.

Public 6-vectors are (linear, angular) (docs/conventions.md); the free-joint blocks are permuted
to the angular-first order of ``lie.se3`` here (``conventions.SWAP6``).
"""
from dataclasses import dataclass

import numpy as np

from ..conventions import SWAP6
from ..lie import se3, so3
from .adaptive import solve_adaptive
from .spaces import HomogeneousSpace, dexp_inv_series
from .solve import get_method

__all__ = ["simulate", "make_stepper", "SimulationResult", "MultibodySpace", "SIMULATE_METHODS",
           "SIMULATE_ADAPTIVE_METHODS", "configuration_rate", "normalize_configuration"]

#: method names accepted by ``simulate``
SIMULATE_METHODS = ("euler", "lie_euler", "semi_implicit", "heun", "lie_euler_heun", "rk3",
                    "rkmk3", "rkmk4", "rkmk4_trunc", "rkmk4_2c", "rkmk5", "cf3", "cf4",
                    "rkmk45", "cf32", "cf32a", "cf32b", "cf43")
#: the ones that use rtol/atol and a variable step
SIMULATE_ADAPTIVE_METHODS = ("rkmk45", "cf32", "cf32a", "cf32b", "cf43")


@dataclass
class SimulationResult:
    t: np.ndarray          # (k,)
    q: np.ndarray          # (k, nq)
    v: np.ndarray          # (k, nv)
    nfev: int = 0          # dynamics evaluations (ABA / hybrid calls)
    nreject: int = 0       # rejected steps (adaptive methods)
    method: str = ""

    @property
    def h(self):
        return np.diff(self.t)


def _joint_blocks(model):
    """(v index, kind) of free ('se3') and ball ('so3') joints, from the public joint tables."""
    blocks = []
    for nq, nv, vi in zip(model.joint_nq, model.joint_nv, model.joint_v_index):
        if (nq, nv) == (7, 6):
            blocks.append((int(vi), "se3"))
        elif (nq, nv) == (4, 3):
            blocks.append((int(vi), "so3"))
    return blocks


def configuration_rate(model, q, v):
    """dq/dt in the coordinates of q (quaternion kinematics q' = q (x) (w, 0)/2 for free and ball
    joints, p' = R v_lin for the free-joint position, q' = v otherwise).

    Only for classical integrators that treat q as a vector (comparisons and benchmarks);
    ``simulate`` never uses it.
    """
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    qd = np.empty(model.nq)
    for nq, nv, qi, vi in zip(model.joint_nq, model.joint_nv, model.joint_q_index,
                              model.joint_v_index):
        if (nq, nv) == (7, 6):
            quat = q[qi + 3:qi + 7]
            qd[qi:qi + 3] = so3.quat_to_rot(quat) @ v[vi:vi + 3]
            qd[qi + 3:qi + 7] = 0.5 * so3.quat_multiply(quat, np.r_[v[vi + 3:vi + 6], 0.0])
        elif (nq, nv) == (4, 3):
            qd[qi:qi + 4] = 0.5 * so3.quat_multiply(q[qi:qi + 4], np.r_[v[vi:vi + 3], 0.0])
        else:
            qd[qi:qi + nq] = v[vi:vi + nv]
    return qd


def normalize_configuration(model, q):
    """q with its quaternions scaled to unit norm (for classical integrators)."""
    q = np.array(q, dtype=float, copy=True)
    for nq, nv, qi in zip(model.joint_nq, model.joint_nv, model.joint_q_index):
        if (nq, nv) == (7, 6):
            q[qi + 3:qi + 7] /= np.linalg.norm(q[qi + 3:qi + 7])
        elif (nq, nv) == (4, 3):
            q[qi:qi + 4] /= np.linalg.norm(q[qi:qi + 4])
    return q


class MultibodySpace(HomogeneousSpace):
    """Q x R^nv with the right action of the configuration group and translation on v.

    State y = (q, v) (nq + nv); algebra element (dq, dv) (2 nv): exp_act((dq, dv), (q, v)) =
    (integrate(q, dq), v + dv).
    """

    def __init__(self, model):
        self.model = model
        self.nq, self.nv = int(model.nq), int(model.nv)
        self.size = self.nq + self.nv
        self.dim = 2 * self.nv
        self.blocks = _joint_blocks(model)
        from ..algorithms.configuration import difference, integrate
        self._integrate, self._difference = integrate, difference

    def split(self, y):
        return y[:self.nq], y[self.nq:]

    def exp_act(self, xi, y):
        q, v = y[:self.nq], y[self.nq:]
        return np.concatenate([self._integrate(self.model, q, xi[:self.nv]), v + xi[self.nv:]])

    def generator(self, xi, y):
        raise NotImplementedError("q lives on a group; use exp_act")

    def bracket(self, u, w):
        """Bracket of the opposite algebra (right action): -[u, w] on the group blocks."""
        out = np.zeros(self.dim)
        for vi, kind in self.blocks:
            if kind == "se3":
                a, b = u[vi:vi + 6][SWAP6], w[vi:vi + 6][SWAP6]
                out[vi:vi + 6] = -(se3.ad(a) @ b)[SWAP6]
            else:
                out[vi:vi + 3] = -np.cross(u[vi:vi + 3], w[vi:vi + 3])
        return out

    def dexp_inv(self, u, w, order=None):
        if order is not None:
            return dexp_inv_series(self.bracket, u, w, order)
        out = np.array(w, dtype=float, copy=True)
        for vi, kind in self.blocks:
            if kind == "se3":
                a, b = u[vi:vi + 6][SWAP6], w[vi:vi + 6][SWAP6]
                out[vi:vi + 6] = (se3.dexp_inv(-a) @ b)[SWAP6]
            else:
                out[vi:vi + 3] = so3.dexp_inv(-u[vi:vi + 3]) @ w[vi:vi + 3]
        return out

    def dexp_inv_exact(self, u, w):
        return self.dexp_inv(u, w, None)

    def dist(self, y1, y2):
        dq = self._difference(self.model, y1[:self.nq], y2[:self.nq])
        dv = y1[self.nq:] - y2[self.nq:]
        return float(np.sqrt(dq @ dq + dv @ dv))

    def scale(self, y):
        """|v_i| on the velocity part, 1 on the configuration tangent."""
        return np.concatenate([np.ones(self.nv), np.abs(y[self.nq:])])


def _as_callable(x, n, name):
    if x is None:
        z = np.zeros(n)
        return lambda t, q, v: z
    if callable(x):
        return x
    arr = np.asarray(x, dtype=float)
    if arr.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},) or be callable (t, q, v) -> ({n},)")
    return lambda t, q, v: arr


def _dynamics(model, tau, prescribed, a_prescribed):
    """a(t, q, v) from ABA, or from hybrid dynamics when some joints are prescribed."""
    from ..algorithms.dynamics import forward_dynamics, hybrid_dynamics
    nv = model.nv
    tau_f = _as_callable(tau, nv, "tau")
    if prescribed is None:
        return lambda t, q, v: forward_dynamics(model, q, v, tau_f(t, q, v))
    mask = np.asarray(prescribed, dtype=bool)
    if mask.shape != (nv,):
        raise ValueError(f"prescribed must be a boolean mask of shape ({nv},)")
    a_f = _as_callable(a_prescribed, nv, "a_prescribed")

    def acc(t, q, v):
        a, _ = hybrid_dynamics(model, q, v, a_f(t, q, v), tau_f(t, q, v), mask)
        return a
    return acc


def simulate(model, q0, v0, duration, dt=None, method="rkmk4", tau=None, rtol=None, atol=None,
             prescribed=None, a_prescribed=None, t0=0.0, max_steps=10_000_000, callback=None):
    """Integrate the forward (or hybrid) dynamics of ``model`` from (q0, v0) for ``duration``.

    Parameters
    ----------
    model : ldr.Model
    q0, v0 : (nq,), (nv,) initial configuration (on the manifold) and velocity
    duration : float, > 0
    dt : step size for fixed-step methods; the initial step for adaptive ones (optional)
    method : one of ``SIMULATE_METHODS`` (default "rkmk4"); "rkmk45", "cf32", "cf43" (and
        "cf32a", "cf32b") are adaptive and use ``rtol``/``atol`` (defaults 1e-6 / 1e-9)
    tau : None (zero), an (nv,) array, or a callable (t, q, v) -> (nv,) joint torques
    prescribed : optional boolean mask (nv,): these joints follow ``a_prescribed`` (hybrid
        dynamics, Kim Table 4); their torques are solved for
    a_prescribed : (nv,) array or callable (t, q, v) -> (nv,) accelerations of the prescribed
        joints (other entries ignored).  With q0/v0 on the desired trajectory the prescribed
        joints follow it.
    callback : optional callable (t, q, v) called after every step; returning True stops.

    Returns
    -------
    SimulationResult with ``t (k,)``, ``q (k, nq)``, ``v (k, nv)``, ``nfev`` and ``nreject``.
    """
    nq, nv = model.nq, model.nv
    q0 = np.asarray(q0, dtype=float)
    v0 = np.asarray(v0, dtype=float)
    if q0.shape != (nq,) or v0.shape != (nv,):
        raise ValueError(f"q0 must have shape ({nq},) and v0 shape ({nv},)")
    if not (np.all(np.isfinite(q0)) and np.all(np.isfinite(v0))):
        raise ValueError("q0 and v0 must be finite")
    duration = float(duration)
    if not duration > 0.0 or not np.isfinite(duration):
        raise ValueError("duration must be positive and finite")
    name = str(method).lower()
    if name not in SIMULATE_METHODS:
        raise ValueError(f"unknown method {method!r}; known: {', '.join(SIMULATE_METHODS)}")
    adaptive = name in SIMULATE_ADAPTIVE_METHODS
    if not adaptive:
        if dt is None or not float(dt) > 0.0:
            raise ValueError(f"method {name!r} needs a positive dt")
        if rtol is not None or atol is not None:
            raise ValueError(f"rtol/atol apply to adaptive methods "
                             f"({', '.join(SIMULATE_ADAPTIVE_METHODS)}), not {name!r}")

    acc = _dynamics(model, tau, prescribed, a_prescribed)
    sp = MultibodySpace(model)
    nfev = [0]

    def f(t, y):
        q, v = y[:nq], y[nq:]
        nfev[0] += 1
        return np.concatenate([v, acc(t, q, v)])

    y0 = np.concatenate([q0, v0])
    t_end = t0 + duration
    cb = None
    if callback is not None:
        def cb(t, y):
            return callback(t, y[:nq], y[nq:])

    if adaptive:
        m = get_method(name)
        r = solve_adaptive(sp, f, y0, (t0, t_end), m, rtol=rtol, atol=atol, h0=dt,
                           max_steps=max_steps, callback=cb)
        return SimulationResult(r.t, r.y[:, :nq], r.y[:, nq:], nfev[0], r.nreject, name)

    n = max(1, int(np.ceil(duration / float(dt) - 1e-9)))
    if n > max_steps:
        raise ValueError(f"{n} steps exceed max_steps = {max_steps}")
    h = duration / n
    ts = t0 + h * np.arange(n + 1)
    ts[-1] = t_end
    Q = np.empty((n + 1, nq))
    V = np.empty((n + 1, nv))
    Q[0], V[0] = q0, v0
    y = y0
    if name == "semi_implicit":
        stepper = _semi_implicit(model, acc, nfev)
    else:
        m = get_method({"euler": "lie_euler", "rk3": "rkmk3"}.get(name, name))
        stepper = lambda t, y, h: m.step(sp, f, t, y, h).y  # noqa: E731
    k = n
    for k in range(n):
        y = stepper(ts[k], y, h)
        Q[k + 1], V[k + 1] = y[:nq], y[nq:]
        if cb is not None and cb(ts[k + 1], y):
            break
    else:
        k = n - 1
    s = slice(0, k + 2)
    return SimulationResult(ts[s], Q[s], V[s], nfev[0], 0, name)


def make_stepper(model, method="semi_implicit"):
    """One fixed step at a time, for loops that own the clock (e.g. the ROS simulator node).

    Returns ``step(q, v, dt, tau=None, t=0.0, accel=None) -> (q_new, v_new)`` with ``tau``
    None, an (nv,) array or a callable (t, q, v) -> (nv,).  ``method`` is any non-adaptive name
    of ``SIMULATE_METHODS``; the result is identical to one step of ``simulate``.  ``accel``, a
    callable (t, q, v) -> (nv,), replaces forward dynamics altogether (e.g. hybrid dynamics
    computed by the caller): it is called once per stage, and ``tau`` is then ignored.
    """
    name = str(method).lower()
    if name not in SIMULATE_METHODS or name in SIMULATE_ADAPTIVE_METHODS:
        fixed = [m for m in SIMULATE_METHODS if m not in SIMULATE_ADAPTIVE_METHODS]
        raise ValueError(f"make_stepper: method must be one of {', '.join(fixed)}")
    from ..algorithms.dynamics import forward_dynamics
    nq, nv = model.nq, model.nv
    sp = MultibodySpace(model)
    m = None if name == "semi_implicit" else get_method(
        {"euler": "lie_euler", "rk3": "rkmk3"}.get(name, name))
    zero = np.zeros(nv)

    def step(q, v, dt, tau=None, t=0.0, accel=None):
        if accel is None:
            tau_f = (lambda t_, q_, v_: zero) if tau is None else (
                tau if callable(tau) else (lambda t_, q_, v_: tau))

            def accel(t_, q_, v_):
                return forward_dynamics(model, q_, v_, tau_f(t_, q_, v_))
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        if m is None:
            return _semi_implicit_step(model, q, v, accel(t, q, v), dt)

        def f(tt, y):
            qq, vv = y[:nq], y[nq:]
            return np.concatenate([vv, accel(tt, qq, vv)])
        y = m.step(sp, f, t, np.concatenate([q, v]), dt).y
        return y[:nq], y[nq:]
    return step


def _semi_implicit_step(model, q, v, a, h):
    """Symplectic Euler on the group: v+ = v + h a;  q+ = q . exp(h v+).  Returns (q+, v+)."""
    from ..algorithms.configuration import integrate
    v1 = v + h * a
    return integrate(model, q, v1, h), v1


def _semi_implicit(model, acc, nfev):
    """``_semi_implicit_step`` on the stacked state y = (q, v), for ``simulate``."""
    nq = model.nq

    def step(t, y, h):
        q, v = y[:nq], y[nq:]
        nfev[0] += 1
        return np.concatenate(_semi_implicit_step(model, q, v, acc(t, q, v), h))
    return step
