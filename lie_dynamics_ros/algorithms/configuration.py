"""The configuration manifold: free joints on SE(3), ball joints on SO(3), the rest in R^n."""
import numpy as np

from ..errors import InputError
from ..lie import so3, se3
from ..kernels import joints as J
from ._inputs import vec


def _group_joints(model):
    """(q index, v index, kind) of the joints whose q is not a plain vector."""
    return [(j.q_index, j.v_index, j.joint.kind) for j in model.joints
            if j.mimic is None and j.joint.kind in (J.FREE, J.SPHERICAL)]


def _conj(qt):
    return np.array([-qt[0], -qt[1], -qt[2], qt[3]])


def integrate(model, q, v, dt=1.0):
    """q (+) v dt: exp on SE(3) (free: T exp(xi dt), body twist) and SO(3) (ball), q + v dt else.

    The result stays on the manifold by construction (unit quaternions up to round-off).
    """
    q, v = vec(q, model.nq, "q", model=model), vec(v, model.nv, "v")
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v)) and np.isfinite(dt)):
        raise InputError("non-finite values in q, v or dt")
    groups = _group_joints(model)
    if not groups:
        return q + v * dt
    out = np.empty(model.nq)
    vq = _vector_part(model)
    out[vq[0]] = q[vq[0]] + v[vq[1]] * dt
    for qi, vi, kind in groups:
        if kind == J.FREE:
            vl, w = v[vi:vi + 3] * dt, v[vi + 3:vi + 6] * dt
            R = so3.quat_to_rot(q[qi + 3:qi + 7])
            out[qi:qi + 3] = q[qi:qi + 3] + R @ (so3.left_jacobian(w) @ vl)
            out[qi + 3:qi + 7] = so3.quat_multiply(q[qi + 3:qi + 7], so3.quat_exp(w))
        else:
            out[qi:qi + 4] = so3.quat_multiply(q[qi:qi + 4], so3.quat_exp(v[vi:vi + 3] * dt))
    return out


def difference(model, q0, q1):
    """v such that integrate(q0, v) = q1: the log on SE(3)/SO(3), the shortest angle on S^1 for
    continuous (unlimited revolute) joints, subtraction elsewhere."""
    q0, q1 = vec(q0, model.nq, "q0", model=model), vec(q1, model.nq, "q1", model=model)
    if not (np.all(np.isfinite(q0)) and np.all(np.isfinite(q1))):
        raise InputError("non-finite values in q0 or q1")
    groups = _group_joints(model)
    if not groups:
        return _wrap_circles(model, q1 - q0)
    out = np.empty(model.nv)
    vq = _vector_part(model)
    out[vq[1]] = q1[vq[0]] - q0[vq[0]]
    for qi, vi, kind in groups:
        if kind == J.FREE:
            # checked above: finite; quat_to_rot normalises (and refuses a zero quaternion)
            T0 = se3.make_unchecked(so3.quat_to_rot(q0[qi + 3:qi + 7]), q0[qi:qi + 3])
            T1 = se3.make_unchecked(so3.quat_to_rot(q1[qi + 3:qi + 7]), q1[qi:qi + 3])
            out[vi:vi + 6] = se3.log_unchecked(se3.inv_unchecked(T0) @ T1)   # (linear, angular)
        else:
            out[vi:vi + 3] = so3.quat_log(so3.quat_multiply(_conj(q0[qi:qi + 4]), q1[qi:qi + 4]))
    return _wrap_circles(model, out)


def _wrap_circles(model, dv):
    """Angles of continuous joints into [-pi, pi): a driver that wraps its readings must not
    turn into a 2 pi error."""
    idx = model.continuous_v
    if idx.size:
        dv[idx] = np.mod(dv[idx] + np.pi, 2 * np.pi) - np.pi
    return dv


def _vector_part(model):
    """Index arrays (into q, into v) of all coordinates that integrate as vectors."""
    return model.vector_q_index, model.vector_v_index


def neutral_configuration(model):
    """Zero joint positions and identity rotations."""
    q = np.zeros(model.nq)
    for qi, _, kind in _group_joints(model):
        q[qi + (3 if kind == J.FREE else 0) + 3] = 1.0
    return q


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
