"""Argument checking and the Python side of a kernel call (GENERAL joints, f_ext, status)."""
import numpy as np

from ..conventions import to_internal
from ..errors import InputError
from ..kernels import layout as L
from ..kernels.joint_kinematics import joint_kinematics
from ..lie import se3


_F64 = np.dtype(np.float64)


def vec(x, n, name):
    """x as a contiguous float64 (n,) array; InputError otherwise. Finiteness: see ``check``."""
    if type(x) is np.ndarray and x.dtype is _F64 and x.shape == (n,) and x.flags.c_contiguous:
        return x
    try:
        a = np.ascontiguousarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a numeric array of shape ({n},)") from None
    if a.shape != (n,):
        raise InputError(f"{name} must have shape ({n},), got {a.shape}")
    return a


def check(model, status, **arrays):
    """Turn a kernel status code into the documented exception."""
    if status == L.OK:
        return
    if status == L.NONFINITE:
        bad = [k for k, a in arrays.items() if not np.all(np.isfinite(a))]
        raise InputError(f"non-finite values (NaN or Inf) in {', '.join(bad) or 'the input'}")
    if status == L.BAD_QUATERNION:
        raise InputError("a quaternion in q is not of unit norm (tolerance 1e-6); "
                         "normalize it or build q with ldr.integrate / ldr.random_configuration")
    if status == L.SINGULAR:
        raise InputError("singular articulated inertia: a joint moves a body chain without "
                         "mass or inertia, so its acceleration is undefined")
    raise InputError(f"kernel failed with status {status}")


def prepare(model, q, v):
    """Run joint kinematics in Python when the model has GENERAL joints.

    Returns the ``kin`` flag for the kernels: True = the kernel computes joint kinematics itself.
    """
    if not model.has_general:
        return True
    check(model, joint_kinematics(model._mi, model._fv, model._fm, q, v), q=q, v=v)
    fv, fm = model._fv, model._fm
    for j in model._general:
        r, jt = j.row, j.joint
        qs, vs = q[j.q_index:j.q_index + j.nq], v[j.v_index:j.v_index + j.nv]
        T = j.origin @ np.asarray(jt.T(qs), dtype=float)
        S = np.asarray(jt.S(qs), dtype=float).reshape(6, j.nv)
        Sd = np.zeros((6, j.nv)) if jt.Sdot is None else np.asarray(jt.Sdot(qs, vs), dtype=float).reshape(6, j.nv)
        fv[r, L.WR:L.WR + 9], fv[r, L.WP:L.WP + 3] = T[:3, :3].ravel(), T[:3, 3]
        fm[r, L.MS, :, :j.nv], fm[r, L.MSD, :, :j.nv] = S, Sd
        fv[r, L.SDV:L.SDV + 6] = Sd @ vs
    return False


def load_fext(model, f_ext):
    """Write external wrenches into the FEXT columns; returns the kernel's use_fext flag.

    ``f_ext``: (len(body_names), 6) rows (force, torque) in each body frame, or a dict
    {link name: (force, torque) in that link's frame}.
    """
    if f_ext is None:
        return False
    fv = model._fv
    fv[:, L.FEXT:L.FEXT + 6] = 0.0
    if isinstance(f_ext, dict):
        for name, w in f_ext.items():
            row, T = model.frame(name)
            w = vec(w, 6, f"f_ext[{name!r}]")
            if not np.all(np.isfinite(w)):
                raise InputError(f"non-finite external wrench on {name!r}")
            if row > 0:   # a wrench on a world-fixed link does not move the robot
                fv[row, L.FEXT:L.FEXT + 6] += se3.Ad_star(se3.inv(T)) @ to_internal(w)
        return True
    F = np.asarray(f_ext, dtype=float)
    if F.shape != (model.njoints, 6):
        raise InputError(f"f_ext must have shape ({model.njoints}, 6) (one row per body in "
                         f"model.body_names) or be a dict {{link: wrench}}, got {F.shape}")
    if not np.all(np.isfinite(F)):
        raise InputError("non-finite values in f_ext")
    fv[1:, L.FEXT:L.FEXT + 6] = to_internal(F)
    return True
