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

Two paths compute the same steps (to round-off):

* compiled (``kernels/integrate.py``): fixed-step ``semi_implicit``, ``euler``/``lie_euler``,
  ``rk3``/``rkmk3``, ``rkmk4``, ``rkmk5`` and ``cf4`` on models without Python-defined (General)
  or mimic joints, with ``tau`` and ``a_prescribed`` None or arrays.  A whole run is one
  compiled call (with a ``callback``, one compiled call per step);
* Python (``integrators/rkmk.py``, ``cf.py``, ``adaptive.py`` on ``MultibodySpace``): adaptive
  methods, the other fixed-step methods, General or mimic joints, and callables for ``tau`` or
  ``a_prescribed``.

A model with joint damping or Coulomb friction (``model.joint_damping``,
``model.joint_friction``) gets them as passive torques, unless ``joint_friction=False``: each
fixed step first solves the velocity-level friction problem of ``integrators/passive.py``
(implicit damping, exact stick; one mass matrix and one extra dynamics call per step), then
takes the method's step with that torque held. Those runs loop over the steps in Python (each
step is still one compiled call where the method has one); adaptive methods refuse them.

``SimulationResult.compiled`` says which one ran.  Public 6-vectors are (linear, angular)
(docs/conventions.md), as in ``lie.se3``: ``MultibodySpace`` hands the free-joint blocks to
it unpermuted.
"""
from dataclasses import dataclass

import numpy as np

from ..algorithms import batch as AB
from ..algorithms._inputs import mask as bool_mask, rows, vec
from ..algorithms.dynamics import forward_dynamics, hybrid_dynamics
from ..algorithms.tree_plan import tree_plan
from ..errors import InputError, SimulationDiverged
from ..kernels import integrate as KI
from ..kernels import tree as KT
from ..lie import so3
from .adaptive import solve_adaptive
from .arguments import check_run
from .constrained import simulate_constrained
from .passive import has_passive, passive_torques
from .multibody import (ALIASES, SIMULATE_ADAPTIVE_METHODS, SIMULATE_METHODS, MultibodySpace,
                        SimulationResult, fixed_method, name_of, python_stepper,
                        semi_implicit_step)
from .solve import get_method
from .tableaus import DOPRI5, EULER, RK3, RK4

__all__ = ["simulate", "rollout", "RolloutResult", "make_stepper", "SimulationResult",
           "MultibodySpace", "SIMULATE_METHODS", "SIMULATE_ADAPTIVE_METHODS",
           "configuration_rate", "normalize_configuration"]

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


def _rows_of_states(x, n):
    """x is (N, n) states, not one state as an (n, 1) column (algorithms/_inputs.vec)."""
    return np.ndim(x) == 2 and np.shape(x) != (n, 1)


def _as_callable(x, n, name):
    if x is None:
        z = np.zeros(n)
        return lambda t, q, v: z
    if callable(x):
        return x
    arr = _array(x, n, name)
    return lambda t, q, v: arr


def _dynamics(model, tau, prescribed, a_prescribed):
    """a(t, q, v) from ABA, or from hybrid dynamics when some joints are prescribed."""
    nv = model.nv
    tau_f = _as_callable(tau, nv, "tau")
    if prescribed is None:
        return lambda t, q, v: forward_dynamics(model, q, v, tau_f(t, q, v))
    mask = np.asarray(prescribed, dtype=bool)
    if mask.shape != (nv,):
        raise InputError(f"prescribed must be a boolean mask of shape ({nv},)")
    a_f = _as_callable(a_prescribed, nv, "a_prescribed")

    def acc(t, q, v):
        a, _ = hybrid_dynamics(model, q, v, a_f(t, q, v), tau_f(t, q, v), mask)
        return a
    return acc


def simulate(model, q0, v0, duration, dt=None, method="rkmk4", tau=None, rtol=None, atol=None,
             prescribed=None, a_prescribed=None, t0=0.0, max_steps=10_000_000, callback=None,
             joint_friction=True, contacts=None):
    """Integrate the forward (or hybrid) dynamics of ``model`` from (q0, v0) for ``duration``.

    Parameters
    ----------
    model : ldr.Model
    q0, v0 : (nq,), (nv,) initial configuration (on the manifold) and velocity; (N, nq), (N, nv)
        run N trajectories in parallel (``rollout``)
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
    joint_friction : apply the model's joint damping and Coulomb friction (default True; no
        effect on a model without them). Implicit and first order in those terms (see
        ``integrators/passive.py``); fixed-step methods only.

    contacts : optional ldr.RigidContact list holding frames in the world (docs/contacts.md);
        a contact without a placement is held where its frame is at q0.

    A model with loop closures (``model.nc > 0``) or ``contacts`` runs
    ``ldr.simulate_constrained``: projection onto the constraint manifold after every step
    (docs/loops.md).

    Returns
    -------
    SimulationResult with ``t (k,)``, ``q (k, nq)``, ``v (k, nv)``, ``nfev``, ``nreject`` and
    ``compiled`` (which path ran, see the module docstring).
    """
    q0, v0, duration, dt, t0, max_steps, tau, a_prescribed = check_run(
        q0, v0, duration, dt, t0, max_steps, tau, a_prescribed, callback, rtol, atol)
    passive = joint_friction and has_passive(model)
    if passive and (getattr(model, "nc", 0) or contacts is not None
                    or name_of(method) in SIMULATE_ADAPTIVE_METHODS):
        raise InputError("joint damping and friction are applied by the fixed-step methods on "
                         "models without loop closures; pass joint_friction=False to run "
                         f"{name_of(method)!r} without them")
    if getattr(model, "nc", 0) or contacts is not None:
        # closed loops: constrained forward dynamics with projection after every step
        if prescribed is not None or name_of(method) in SIMULATE_ADAPTIVE_METHODS:
            raise InputError("a model with loop closures or contacts takes a fixed-step method "
                             "and no prescribed joints here (ldr.simulate_constrained, "
                             "docs/loops.md)")
        return simulate_constrained(model, q0, v0, duration, dt, method, tau,
                                    callback=callback, contacts=contacts)
    if _rows_of_states(q0, model.nq) or _rows_of_states(v0, model.nv):
        if callback is not None or name_of(method) in SIMULATE_ADAPTIVE_METHODS:
            raise InputError("batched initial states take a fixed-step method and no callback")
        return rollout(model, q0, v0, duration, dt, method, tau, prescribed, a_prescribed, t0,
                       max_steps, joint_friction)
    nq, nv = model.nq, model.nv
    q0, v0 = vec(q0, nq, "q0", model=model), vec(v0, nv, "v0")
    if not (np.all(np.isfinite(q0)) and np.all(np.isfinite(v0))):
        raise InputError("q0 and v0 must be finite")
    duration = float(duration)
    if not duration > 0.0 or not np.isfinite(duration):
        raise InputError("duration must be positive and finite")
    name = name_of(method)
    if name not in SIMULATE_METHODS:
        raise InputError(f"unknown method {method!r}; known: {', '.join(SIMULATE_METHODS)}")
    adaptive = name in SIMULATE_ADAPTIVE_METHODS
    if not adaptive:
        if dt is None or not float(dt) > 0.0:
            raise InputError(f"method {name!r} needs a positive dt")
        if rtol is not None or atol is not None:
            raise InputError(f"rtol/atol apply to adaptive methods "
                             f"({', '.join(SIMULATE_ADAPTIVE_METHODS)}), not {name!r}")

    acc = _dynamics(model, tau, prescribed, a_prescribed)    # also checks tau and the mask
    y0 = np.concatenate([q0, v0])
    t_end = t0 + duration
    if not adaptive:
        n = max(1, int(np.ceil(duration / float(dt) - 1e-9)))
        if n > max_steps:
            raise InputError(f"{n} steps exceed max_steps = {max_steps}")
        h = duration / n
        ts = t0 + h * np.arange(n + 1)
        ts[-1] = t_end
        if passive:
            return _simulate_passive(model, name, q0, v0, ts, h, tau, prescribed, a_prescribed,
                                     callback)
        if _compilable(model, name, tau, prescribed, a_prescribed):
            return _simulate_compiled(model, name, q0, v0, ts, h, tau, prescribed, a_prescribed,
                                      callback)

    sp = MultibodySpace(model)
    nfev = [0]

    def f(t, y):
        q, v = y[:nq], y[nq:]
        nfev[0] += 1
        return np.concatenate([v, acc(t, q, v)])

    cb = None
    if callback is not None:
        def cb(t, y):
            return callback(t, y[:nq], y[nq:])

    if adaptive:
        m = get_method(name)
        r = solve_adaptive(sp, f, y0, (t0, t_end), m, rtol=rtol, atol=atol, h0=dt,
                           max_steps=max_steps, callback=cb)
        return SimulationResult(r.t, r.y[:, :nq], r.y[:, nq:], nfev[0], r.nreject, name)

    Q = np.empty((n + 1, nq))
    V = np.empty((n + 1, nv))
    Q[0], V[0] = q0, v0
    y = y0
    if name == "semi_implicit":
        stepper = _semi_implicit(model, acc, nfev)
    else:
        m = get_method(ALIASES.get(name, name))
        stepper = lambda t, y, h: m.step(sp, f, t, y, h).y  # noqa: E731
    k = n
    for k in range(n):
        try:
            y = stepper(ts[k], y, h)
        except InputError as e:
            _blame_input_or_divergence(model, acc, ts[k], Q[k], V[k])
            raise _diverged(model, ts[k], Q[k], V[k], e) from None
        if not np.all(np.isfinite(y)):
            raise _diverged(model, ts[k], Q[k], V[k], "the step gave non-finite values")
        Q[k + 1], V[k + 1] = y[:nq], y[nq:]
        if cb is not None and cb(ts[k + 1], y):
            break
    else:
        k = n - 1
    s = slice(0, k + 2)
    return SimulationResult(ts[s], Q[s], V[s], nfev[0], 0, name)


# ----------------------------------------------------------------------------- compiled path
#: the fixed-step methods that run compiled: (kernel method code, Butcher tableau)
_COMPILED = {"semi_implicit": (KI.SEMI_IMPLICIT, None), "euler": (KI.RKMK, EULER),
             "lie_euler": (KI.RKMK, EULER), "rk3": (KI.RKMK, RK3), "rkmk3": (KI.RKMK, RK3),
             "rkmk4": (KI.RKMK, RK4), "rkmk5": (KI.RKMK, DOPRI5), "cf4": (KI.CF4, None)}
_MAX_STAGES = 7
#: the plan argument of a model the tree ABA does not serve (read-only as tree_plan's: one
#: compiled variant of the kernels for both)
_NO_PLAN = np.zeros((0, KT.NP))
_NO_PLAN.flags.writeable = False


def _compilable(model, name, tau, prescribed, a_prescribed):
    """True if this run takes the compiled path (see the module docstring)."""
    return (name in _COMPILED and not model.has_general and not model.has_mimic
            and not callable(tau) and not (prescribed is not None and callable(a_prescribed)))


def _tableau(tab):
    """(a, b) of the stages the main method uses (RKMK.step's ``_s_main``), or empty arrays."""
    if tab is None:
        return np.zeros((0, 0)), np.zeros(0)
    s = int(np.nonzero(tab.b)[0][-1]) + 1
    return np.ascontiguousarray(tab.a[:s, :s]), np.ascontiguousarray(tab.b[:s])


def _work(model, data):
    """The integrator's work array on this Data (created on first use)."""
    wk = data.extra.get("integrate")
    if wk is None:
        wk = data.extra["integrate"] = np.zeros(
            (KI.WK_ROWS + _MAX_STAGES, max(model.nq, 2 * model.nv, 1)))
    return wk


def _array(x, n, name):
    if x is None:
        return np.zeros(n)
    try:
        return vec(x, n, name)
    except InputError as e:
        raise InputError(f"{e} (or be callable (t, q, v) -> ({n},))") from None


class _Kernel:
    """The arguments of the compiled step for one (model, method, tau, prescribed) setup."""

    def __init__(self, model, name, tau, prescribed, a_prescribed):
        code, tab = _COMPILED[name]
        self.code = code
        self.ta, self.tb = _tableau(tab)
        self.stages = {KI.SEMI_IMPLICIT: 1, KI.CF4: 4}.get(code, len(self.tb))
        nv = model.nv
        self.tau = _array(tau, nv, "tau")
        if prescribed is None:
            self.mask, self.a_pres = np.zeros(0, dtype=np.bool_), np.zeros(nv)
        else:
            self.mask = np.ascontiguousarray(bool_mask(np.asarray(prescribed, dtype=np.bool_), nv))
            self.a_pres = _array(a_prescribed, nv, "a_prescribed")
        # the tree ABA serves revolute/prismatic trees, on a free root too; hybrid steps keep
        # the general kernel
        plan = tree_plan(model) if prescribed is None else None
        self.plan = _NO_PLAN if plan is None else plan

    def args(self, model, data):
        """(head, tail) around the state arguments of ``KI.step`` / ``KI.rollout``."""
        return ((model.mi, model.mc, model.mI, data.dv, data.dm, self.plan, self.code, self.ta,
                 self.tb),
                (self.a_pres, self.mask, data.prescribed_body, data.failed_row, _work(model, data)))


def _raise_step_error(model, name, q, v, h, t, tau, prescribed, a_prescribed, status):
    """A compiled step failed: the Python step raises the documented error."""
    acc = _dynamics(model, tau, prescribed, a_prescribed)
    _blame_input_or_divergence(model, acc, t, q, v)
    step = python_stepper(model, name)
    try:
        step(q, v, h, t=t, accel=acc)
    except InputError as e:
        raise _diverged(model, t, q, v, e) from None
    raise _diverged(model, t, q, v, f"the compiled step failed with status {status}")


def _blame_input_or_divergence(model, acc, t, q, v):
    """A step from (q, v) failed. If the dynamics refuse that state itself for what the caller
    gave (a non-finite tau, a non-unit quaternion) that InputError stands; an overflow there,
    or a failure later in the step, is the run diverging."""
    try:
        acc(t, q, v)
    except InputError as e:
        if not str(e).startswith("overflow"):
            raise
        raise _diverged(model, t, q, v, e) from None


def _diverged(model, t, q, v, cause):
    """The error of a run whose state was finite and then was not (or overflowed): it names the
    time and the fastest joint, and says what helps, instead of blaming the input."""
    speed = np.where(np.isfinite(v), np.abs(v), np.inf)
    dof = int(np.argmax(speed)) if speed.size else 0
    joints = [n for n, vi, nv in zip(model.joint_names, model.joint_v_index, model.joint_nv)
              if vi <= dof < vi + nv]
    return SimulationDiverged(float(t), joints[0] if joints else "?",
                              f"moves at {speed[dof]:.3g} (units/s) before the step that failed "
                              f"({cause})" if speed.size else f"({cause})")


def _simulate_compiled(model, name, q0, v0, ts, h, tau, prescribed, a_prescribed, callback):
    n = len(ts) - 1
    kern = _Kernel(model, name, tau, prescribed, a_prescribed)
    head, tail = kern.args(model, model.default_data())
    Q = np.empty((n + 1, model.nq))
    V = np.empty((n + 1, model.nv))
    Q[0], V[0] = q0, v0
    stop = n
    if callback is None:
        done = np.zeros(1, dtype=np.int64)
        st = KI.rollout(*head, h, kern.tau, *tail, Q, V, done)
        if st:
            k = int(done[0])
            _raise_step_error(model, name, Q[k], V[k], h, ts[k], tau, prescribed, a_prescribed,
                              st)
    else:
        for k in range(n):
            st = KI.step(*head, Q[k], V[k], h, kern.tau, *tail, Q[k + 1], V[k + 1])
            if st:
                _raise_step_error(model, name, Q[k], V[k], h, ts[k], tau, prescribed,
                                  a_prescribed, st)
            if callback(ts[k + 1], Q[k + 1], V[k + 1]):
                stop = k + 1
                break
    s = slice(0, stop + 1)
    return SimulationResult(ts[s], Q[s], V[s], stop * kern.stages, 0, name, True)


@dataclass
class RolloutResult:
    t: np.ndarray          # (k,)
    q: np.ndarray          # (N, k, nq)
    v: np.ndarray          # (N, k, nv)
    method: str = ""
    compiled: bool = False


def rollout(model, q0, v0, duration, dt, method="rkmk4", tau=None, prescribed=None,
            a_prescribed=None, t0=0.0, max_steps=10_000_000, joint_friction=True):
    """N fixed-step trajectories in parallel (like ``mujoco.rollout``): ``q0`` (N, nq), ``v0``
    (N, nv), ``tau`` None, (nv,) or (N, nv) constant torques. Returns a ``RolloutResult`` with
    ``q`` (N, k, nq) and ``v`` (N, k, nv) on the times ``t`` (k,).

    The rows are cut into one chunk per core where that pays (``batch.run_split``); each chunk is one compiled call on the worker
    thread's Data (the pool of ``algorithms/batch.py``). Models with General or mimic joints,
    methods without a compiled step, callables for ``tau`` and models with joint damping or
    friction (``joint_friction``, as in ``simulate``) run the rows one by one in Python.
    A row that fails raises ``InputError`` naming the row; no partial result is returned.
    """
    q0, v0, duration, dt, t0, max_steps, tau, a_prescribed = check_run(
        q0, v0, duration, dt, t0, max_steps, tau, a_prescribed)
    nq, nv = model.nq, model.nv
    Q0 = rows(q0, nq, "q0", model=model)
    N = Q0.shape[0]
    V0 = rows(v0, nv, "v0", N)
    name = fixed_method(method, "rollout")
    if dt is None or not float(dt) > 0.0 or not float(duration) > 0.0:
        raise InputError("rollout needs positive duration and dt")
    per_row = tau is not None and not callable(tau) and np.ndim(tau) == 2
    if per_row:
        TAU = np.ascontiguousarray(tau, dtype=np.float64)
        if TAU.shape == (nv, 1):                 # a column is one torque, as in vec
            per_row, tau = False, TAU.reshape(nv)
        elif TAU.shape != (N, nv):
            raise InputError(f"tau must have shape ({nv},) or ({N}, {nv}), got {TAU.shape}")

    def row_tau(r):
        return TAU[r] if per_row else tau

    if ((joint_friction and has_passive(model))
            or not _compilable(model, name, None if per_row else tau, prescribed, a_prescribed)):
        res = []
        for r in range(N):
            try:
                res.append(simulate(model, Q0[r], V0[r], duration, dt, name, row_tau(r),
                                    prescribed=prescribed, a_prescribed=a_prescribed, t0=t0,
                                    max_steps=max_steps, joint_friction=joint_friction))
            except InputError as e:
                raise InputError(f"row {r}: {e}") from None
        return RolloutResult(res[0].t, np.array([x.q for x in res]),
                             np.array([x.v for x in res]), name, False)
    if not (np.all(np.isfinite(Q0)) and np.all(np.isfinite(V0))):
        raise InputError("q0 and v0 must be finite")
    n = max(1, int(np.ceil(float(duration) / float(dt) - 1e-9)))
    if n > max_steps:
        raise InputError(f"{n} steps exceed max_steps = {max_steps}")
    h = float(duration) / n
    ts = t0 + h * np.arange(n + 1)
    ts[-1] = t0 + float(duration)
    kern = _Kernel(model, name, None if per_row else tau, prescribed, a_prescribed)
    if not per_row:     # a contiguous copy: one compiled variant for every N (a broadcast
        TAU = np.ascontiguousarray(np.broadcast_to(kern.tau, (N, nv)))   # view is 'A' layout)
    Q = np.empty((N, n + 1, nq))
    V = np.empty((N, n + 1, nv))
    Q[:, 0], V[:, 0] = Q0, V0
    status = np.zeros(N, dtype=np.int64)
    done = np.zeros(N, dtype=np.int64)

    def run(lo, hi):
        head, tail = kern.args(model, model.default_data())
        KI.rollout_rows(*head, h, TAU, *tail, Q, V, status, done, lo, hi)

    AB.run_split(N, run)
    if status.any():
        r = int(np.flatnonzero(status)[0])
        k = int(done[r])
        try:
            _raise_step_error(model, name, Q[r, k], V[r, k], h, ts[k], row_tau(r), prescribed,
                              a_prescribed, int(status[r]))
        except InputError as e:
            raise InputError(f"row {r}: {e}") from None
    return RolloutResult(ts, Q, V, name, True)


def make_stepper(model, method="semi_implicit", joint_friction=True):
    """One fixed step at a time, for loops that own the clock (e.g. the ROS simulator node).

    Returns ``step(q, v, dt, tau=None, t=0.0, accel=None) -> (q_new, v_new)`` with ``tau``
    None, an (nv,) array or a callable (t, q, v) -> (nv,).  ``method`` is any non-adaptive name
    of ``SIMULATE_METHODS``; the result is one step of ``simulate`` (to round-off).  ``accel``,
    a callable (t, q, v) -> (nv,), replaces forward dynamics altogether (e.g. hybrid dynamics
    computed by the caller): it is called once per stage, and ``tau`` is then ignored.  Without
    ``accel`` and with an array ``tau`` the step is one compiled call (same rules as
    ``simulate``); it uses the calling thread's Data of the model.

    ``joint_friction`` (default True) adds the model's joint damping and Coulomb friction as
    ``simulate`` does (``integrators/passive.py``: one mass matrix and one extra forward
    dynamics per step); not with ``accel``, whose caller owns the torques (the simulator adds
    them itself, ``integrators/simulator.py``).
    """
    name = fixed_method(method, "make_stepper")
    rigid = _rigid_stepper(model, name)
    if not (joint_friction and has_passive(model)):
        return rigid
    nv = model.nv

    def step(q, v, dt, tau=None, t=0.0, accel=None):
        if accel is not None:
            return rigid(q, v, dt, tau, t, accel)
        tau_f = _as_callable(tau, nv, "tau")
        f = passive_torques(model, q, v, forward_dynamics(model, q, v, tau_f(t, q, v)), dt)
        if callable(tau):
            return rigid(q, v, dt, lambda t_, q_, v_: tau(t_, q_, v_) + f, t)
        return rigid(q, v, dt, tau_f(t, q, v) + f, t)
    step.joint_friction = True     # the simulator refuses a step that already applies them
    return step


def _rigid_stepper(model, name):
    """make_stepper without the passive torques."""
    slow = python_stepper(model, name)
    if not _compilable(model, name, None, None, None):
        return slow
    kern = _Kernel(model, name, None, None, None)
    nq, nv = model.nq, model.nv

    def step(q, v, dt, tau=None, t=0.0, accel=None):
        if accel is not None or callable(tau) or not np.isfinite(dt):
            return slow(q, v, dt, tau, t, accel)
        q, v = vec(q, nq, "q", model=model), vec(v, nv, "v")
        tau_a = kern.tau if tau is None else _array(tau, nv, "tau")
        head, tail = kern.args(model, model.default_data())
        q1, v1 = np.empty(nq), np.empty(nv)
        st = KI.step(*head, q, v, float(dt), tau_a, *tail, q1, v1)
        if st:
            return slow(q, v, dt, tau, t, accel)     # raises the documented InputError
        return q1, v1
    return step


def _simulate_passive(model, name, q0, v0, ts, h, tau, prescribed, a_prescribed, callback):
    """``simulate``'s fixed steps with the passive torques of ``integrators/passive.py``
    solved before each step and held over it."""
    n = len(ts) - 1
    nv = model.nv
    rigid = _rigid_stepper(model, name)
    acc0 = _dynamics(model, tau, prescribed, a_prescribed)
    nfev = [0]
    stages = _Kernel(model, name, None, None, None).stages if name in _COMPILED else 0

    acc = _counted(acc0, nfev)
    tau_f = _as_callable(tau, nv, "tau")
    free = None if prescribed is None else ~np.asarray(prescribed, dtype=bool)
    compiled = prescribed is None and _compilable(model, name, tau, None, None)
    Q = np.empty((n + 1, model.nq))
    V = np.empty((n + 1, nv))
    Q[0], V[0] = q0, v0
    stop = n
    for k in range(n):
        t, q, v = ts[k], Q[k], V[k]
        try:
            f = passive_torques(model, q, v, acc(t, q, v), h, free)
            if compiled:
                q1, v1 = rigid(q, v, h, tau_f(t, q, v) + f, t)
                nfev[0] += stages
            else:
                acc_k = _dynamics(model, lambda t_, q_, v_, f=f: tau_f(t_, q_, v_) + f,
                                  prescribed, a_prescribed)
                q1, v1 = rigid(q, v, h, t=t, accel=_counted(acc_k, nfev))
        except InputError as e:
            _blame_input_or_divergence(model, acc, t, q, v)
            raise _diverged(model, t, q, v, e) from None
        if not (np.all(np.isfinite(q1)) and np.all(np.isfinite(v1))):
            raise _diverged(model, t, q, v, "the step gave non-finite values")
        Q[k + 1], V[k + 1] = q1, v1
        if callback is not None and callback(ts[k + 1], q1, v1):
            stop = k + 1
            break
    s = slice(0, stop + 1)
    return SimulationResult(ts[s], Q[s], V[s], nfev[0], 0, name, compiled)


def _counted(acc, nfev):
    """``acc`` counting its calls in nfev[0]."""
    def counted(t, q, v):
        nfev[0] += 1
        return acc(t, q, v)
    return counted


def _semi_implicit(model, acc, nfev):
    """``semi_implicit_step`` on the stacked state y = (q, v), for ``simulate``."""
    nq = model.nq

    def step(t, y, h):
        q, v = y[:nq], y[nq:]
        nfev[0] += 1
        return np.concatenate(semi_implicit_step(model, q, v, acc(t, q, v), h))
    return step
