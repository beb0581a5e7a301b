"""Compiled entries of ``ldr.integrate``, ``ldr.difference`` and ``ldr.neutral_configuration``:
one call each for every joint kind, with a status code for bad input.

The retraction is ``integrate.integrate_q`` (the integrators' own, so a simulation step and
``ldr.integrate`` are one formula). The difference is its inverse on each joint. Free joints:
the SE(3) log of T0^-1 T1, i.e. Park, Bobrow & Ploen (1995), eqs. 15-17 solved for the twist:
w = log(R0^T R1) (from the quaternion conj(q0) q1), v = dexp_w^-1 R0^T (p1 - p0) with the
closed-form so(3) dexp^-1 of Celledoni et al. (2021, §2.2). Ball joints: the log of
conj(q0) q1. Elsewhere q1 - q0, continuous joints wrapped to [-pi, pi). Twists keep the public
(linear, angular) order of ``v`` on free joints, as ``integrate_q`` does.

numba's cache does not follow calls into other modules: when integrate.py or lie.py change,
edit this file too, so that its cached kernels are compiled again with them.
"""
import numpy as np
from numba import types

from . import joints as J
from .integrate import integrate_q
from .jit import JIT, njit
from .layout import K, QI, VI, NQ, NV, MIMIC, OK, NONFINITE, BAD_QUATERNION, BAD_SIZE
from .lie import quat_multiply, so3_dexp_inv_apply

_TWO_PI = 2.0 * np.pi


@njit(inline="always", **JIT)
def _quat_log(x, y, z, w):
    """Rotation vector (|w| <= pi) of the unit quaternion (x, y, z, w) (``so3.quat_log``)."""
    if w < 0.0:
        x, y, z, w = -x, -y, -z, -w
    n = np.sqrt(x * x + y * y + z * z)
    k = 2.0 * np.arctan2(n, w) / n if n > 0.0 else 2.0 / w
    return k * x, k * y, k * z


@njit(inline="always", **JIT)
def _unit(q, i):
    """The quaternion q[i:i + 4] divided by its norm; norm 0 when it is zero or not finite."""
    x, y, z, w = q[i], q[i + 1], q[i + 2], q[i + 3]
    n = np.sqrt(x * x + y * y + z * z + w * w)
    if not (n > 0.0 and np.isfinite(n)):
        return 0.0, 0.0, 0.0, 0.0, 0.0
    return x / n, y / n, z / n, w / n, n


@njit(**JIT)
def _all_finite(x):
    for k in range(x.shape[0]):
        if not np.isfinite(x[k]):
            return False
    return True


@njit(**JIT)
def _sizes(mi):
    """(nq, nv) of the model: the end of the last coordinate a joint owns."""
    nq = nv = 0
    for i in range(1, mi.shape[0]):
        if not mi[i, MIMIC]:
            nq = max(nq, mi[i, QI] + mi[i, NQ])
            nv = max(nv, mi[i, VI] + mi[i, NV])
    return nq, nv


@njit(**JIT)
def _quaternions_ok(mi, q):
    """No free or ball joint of q has a zero quaternion (which has no rotation)."""
    for i in range(1, mi.shape[0]):
        kind = mi[i, K]
        if mi[i, MIMIC] or (kind != J.FREE and kind != J.SPHERICAL):
            continue
        if _unit(q, mi[i, QI] + (3 if kind == J.FREE else 0))[4] == 0.0:
            return False
    return True


@njit(**JIT)
def integrate(mi, q, v, dt, out):
    """out = q (+) v dt (``integrate_q``); BAD_SIZE for lengths other than the model's,
    NONFINITE for NaN/Inf in q, v or dt, BAD_QUATERNION for a zero quaternion."""
    nq, nv = _sizes(mi)
    if q.shape[0] != nq or v.shape[0] != nv or out.shape[0] != nq:
        return BAD_SIZE
    if not (_all_finite(q) and _all_finite(v) and np.isfinite(dt)):
        return NONFINITE
    if not _quaternions_ok(mi, q):
        return BAD_QUATERNION
    integrate_q(mi, q, v, dt, out)
    return OK


@njit(**JIT)
def difference(mi, continuous, q0, q1, out):
    """out = v with integrate(q0, v) = q1 (the logs of the module docstring; ``continuous``:
    the v indices to wrap). Quaternions are normalised first. Status codes as ``integrate``."""
    nq, nv = _sizes(mi)
    if q0.shape[0] != nq or q1.shape[0] != nq or out.shape[0] != nv:
        return BAD_SIZE
    if not (_all_finite(q0) and _all_finite(q1)):
        return NONFINITE
    if not (_quaternions_ok(mi, q0) and _quaternions_ok(mi, q1)):
        return BAD_QUATERNION
    for i in range(1, mi.shape[0]):
        if mi[i, MIMIC]:
            continue
        kind, qi, vi = mi[i, K], mi[i, QI], mi[i, VI]
        if kind == J.FREE:
            x, y, z, w, _ = _unit(q0, qi + 3)
            bx, by, bz, bw, _ = _unit(q1, qi + 3)
            rx, ry, rz, rw = quat_multiply(-x, -y, -z, w, bx, by, bz, bw)
            w0, w1, w2 = _quat_log(rx, ry, rz, rw)
            d0, d1, d2 = q1[qi] - q0[qi], q1[qi + 1] - q0[qi + 1], q1[qi + 2] - q0[qi + 2]
            # R0^T (p1 - p0), R0 the matrix of so3.quat_to_rot
            p0 = ((1.0 - 2.0 * (y * y + z * z)) * d0 + 2.0 * (x * y + z * w) * d1
                  + 2.0 * (x * z - y * w) * d2)
            p1 = (2.0 * (x * y - z * w) * d0 + (1.0 - 2.0 * (x * x + z * z)) * d1
                  + 2.0 * (y * z + x * w) * d2)
            p2 = (2.0 * (x * z + y * w) * d0 + 2.0 * (y * z - x * w) * d1
                  + (1.0 - 2.0 * (x * x + y * y)) * d2)
            out[vi], out[vi + 1], out[vi + 2] = so3_dexp_inv_apply(w0, w1, w2, p0, p1, p2)
            out[vi + 3], out[vi + 4], out[vi + 5] = w0, w1, w2
        elif kind == J.SPHERICAL:
            x, y, z, w, _ = _unit(q0, qi)
            bx, by, bz, bw, _ = _unit(q1, qi)
            rx, ry, rz, rw = quat_multiply(-x, -y, -z, w, bx, by, bz, bw)
            out[vi], out[vi + 1], out[vi + 2] = _quat_log(rx, ry, rz, rw)
        else:
            for k in range(mi[i, NV]):
                out[vi + k] = q1[qi + k] - q0[qi + k]
    for k in range(continuous.shape[0]):
        c = continuous[k]
        out[c] = np.mod(out[c] + np.pi, _TWO_PI) - np.pi
    return OK


@njit(**JIT)
def neutral(mi, out):
    """out = zero positions and identity rotations (quaternion w = 1); BAD_SIZE for an out
    of another length than nq."""
    if out.shape[0] != _sizes(mi)[0]:
        return BAD_SIZE
    for k in range(out.shape[0]):
        out[k] = 0.0
    for i in range(1, mi.shape[0]):
        if mi[i, MIMIC]:
            continue
        if mi[i, K] == J.FREE:
            out[mi[i, QI] + 6] = 1.0
        elif mi[i, K] == J.SPHERICAL:
            out[mi[i, QI] + 3] = 1.0
    return OK


_VEC = types.Array(types.float64, 1, "C")
_MI = types.Array(types.int64, 2, "C", readonly=True)     # model.mi is frozen
_IDX = types.Array(types.int64, 1, "C", readonly=True)
#: the one signature each entry is compiled for
SIGNATURES = {
    "integrate": (integrate, (_MI, _VEC, _VEC, types.float64, _VEC)),
    "difference": (difference, (_MI, _IDX, _VEC, _VEC, _VEC)),
    "neutral": (neutral, (_MI, _VEC)),
}
