"""The configuration manifold: free joints on SE(3), ball joints on SO(3), the rest in R^n.

``integrate``, ``difference`` and ``neutral_configuration`` are one compiled call each
(kernels/configuration.py), for every joint kind (general joints integrate as vectors)."""
import threading

import numpy as np

from ..errors import InputError
from ..kernels import configuration as KC
from ..kernels import joints as J
from ..kernels import layout as L
from ._inputs import vec


def _compile(name):
    """Compile (or load from numba's cache) the entry ``name`` of kernels/configuration.py for
    its one signature, then close it to every other argument type (a TypeError of the
    dispatch: the caller then takes its checked path)."""
    with _lock:
        if name not in _ready:
            fn, sig = KC.SIGNATURES[name]
            fn.compile(sig)
            fn.disable_compile()
            _ready.add(name)


_ready = set()
_lock = threading.Lock()


def integrate(model, q, v, dt=1.0):
    """q (+) v dt: exp on SE(3) (free: T exp(xi dt), body twist) and SO(3) (ball), q + v dt else.

    The result stays on the manifold by construction (unit quaternions up to round-off).
    """
    out = np.empty(model.nq)
    if "integrate" in _ready:           # float64 vectors of the right length: one call
        try:
            if KC.integrate(model.mi, q, v, dt, out) == 0:
                return out
        except TypeError:
            pass
    else:
        _compile("integrate")
    q, v = vec(q, model.nq, "q", model=model), vec(v, model.nv, "v")
    try:
        dt = float(dt)
    except (TypeError, ValueError):
        raise InputError(f"dt must be a real number, got {dt!r}") from None
    _raise(model, KC.integrate(model.mi, np.array(q), np.array(v), dt, out), "q, v or dt", q=q)
    return out


def difference(model, q0, q1):
    """v such that integrate(q0, v) = q1: the log on SE(3)/SO(3), the shortest angle on S^1 for
    continuous (unlimited revolute) joints, subtraction elsewhere."""
    out = np.empty(model.nv)
    if "difference" in _ready:
        try:
            if KC.difference(model.mi, model.continuous_v, q0, q1, out) == 0:
                return out
        except TypeError:
            pass
    else:
        _compile("difference")
    q0, q1 = vec(q0, model.nq, "q0", model=model), vec(q1, model.nq, "q1", model=model)
    _raise(model, KC.difference(model.mi, model.continuous_v, np.array(q0), np.array(q1), out),
           "q0 or q1", q0=q0, q1=q1)
    return out


def _raise(model, status, names, **qs):
    """The InputError of a kernel status (none for OK): non-finite input, or the joint whose
    quaternion is zero."""
    if status == L.OK:
        return
    if status == L.NONFINITE:
        raise InputError(f"non-finite values in {names}")
    for name, q in qs.items():
        for j in model.joints:
            if j.mimic is None and j.joint.kind in (J.FREE, J.SPHERICAL):
                i = j.q_index + (3 if j.joint.kind == J.FREE else 0)
                if not np.linalg.norm(q[i:i + 4]) > 0.0:
                    raise InputError(f"quaternion must be finite and non-zero: {name} of joint "
                                     f"{j.name!r} is {q[i:i + 4].tolist()}")
    raise InputError(f"{names}: kernel status {status}")


def neutral_configuration(model):
    """Zero joint positions and identity rotations."""
    if "neutral" not in _ready:
        _compile("neutral")
    out = np.empty(model.nq)
    KC.neutral(model.mi, out)
    return out


def random_configuration(model, rng=None):
    """Uniform within finite joint limits (else within [-pi, pi] or [-1, 1] m), uniform rotations."""
    rng = np.random.default_rng(rng)
    q = np.empty(model.nq)
    for j in model.joints:
        if j.mimic is not None:
            continue
        qi, kind = j.q_index, j.joint.kind
        if kind == J.FREE:
            q[qi:qi + 3] = rng.uniform(-1, 1, 3)
            q[qi + 3:qi + 7] = _random_quat(rng)
        elif kind == J.SPHERICAL:
            q[qi:qi + 4] = _random_quat(rng)
        elif j.nq == 1:
            lo, hi = j.limits[0], j.limits[1]
            if not (np.isfinite(lo) and np.isfinite(hi)):
                lo, hi = (-np.pi, np.pi) if kind == J.REVOLUTE else (-1.0, 1.0)
            q[qi] = rng.uniform(lo, hi)
        elif kind == J.PLANAR:
            q[qi:qi + 3] = rng.uniform(-1, 1, 2).tolist() + [rng.uniform(-np.pi, np.pi)]
        else:
            q[qi:qi + j.nq] = rng.uniform(-np.pi, np.pi, j.nq)
    return q


def _random_quat(rng):
    x = rng.normal(size=4)
    x /= np.linalg.norm(x)
    return x if x[3] >= 0 else -x
