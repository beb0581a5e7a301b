"""Argument checking and the Python side of a kernel call (GENERAL joints, f_ext, status)."""
import threading

import numpy as np

from ..conventions import rows_to_internal, to_internal
from ..errors import InputError
from ..kernels import layout as L
from ..kernels import plan as P
from ..kernels.joint_kinematics import joint_kinematics
from ..lie import se3


_F64 = np.dtype(np.float64)
_ND = np.ndarray
_UNIT_STRIDE = (8,)


def vec(x, n, name, batch=False, model=None):
    """x as a contiguous float64 (n,) array; InputError otherwise. Finiteness: see ``check``.

    An (n, 1) column (Pinocchio's examples pass those) is the same single state. With
    ``batch``, an (N, n) array gives None: the caller then evaluates N states; a column of
    length n stays one state, also when n == 1 (where (1, 1) could be read either way).
    ``model``, given for q, lets the shape error explain Pinocchio's (cos, sin) q."""
    # the common case in four cheap tests: a contiguous float64 vector of the right length
    if x.__class__ is _ND and x.dtype is _F64 and x.shape == (n,) and x.strides == _UNIT_STRIDE:
        return x
    try:
        a = np.ascontiguousarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a numeric array of shape ({n},)") from None
    if a.shape == (n, 1):
        return a.reshape(n)
    if batch and a.ndim == 2 and a.shape[1] == n:
        return None
    if a.shape != (n,):
        raise shape_error(name, n, a.shape, batch, model)
    return a


def rows(x, n, name, N=None, model=None):
    """x as a contiguous float64 (N, n) array of states; InputError otherwise (``model``, given
    for q: see ``continuous_hint``)."""
    if not (x.__class__ is _ND and x.dtype is _F64 and x.flags.c_contiguous):
        try:
            x = np.ascontiguousarray(x, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"batched {name} must be a numeric array of shape (N, {n})") from None
    if x.ndim != 2 or x.shape[1] != n or (N is not None and x.shape[0] != N):
        want = f"({'N' if N is None else N}, {n})"
        raise InputError(f"batched {name} must have shape {want}, got {x.shape}"
                         + continuous_hint(model, name, n, x.shape))
    return x


def mask(x, n, name="prescribed"):
    """x as a boolean (n,) mask (an (n, 1) column too); InputError otherwise."""
    m = np.asarray(x)
    if m.shape == (n, 1):
        m = m.reshape(n)
    if m.shape != (n,) or m.dtype != bool:
        raise InputError(f"{name} must be a boolean mask of shape ({n},)")
    return m


def shape_error(name, n, shape, batch=False, model=None):
    """The InputError of a vector of the wrong shape (``model``: see ``continuous_hint``)."""
    also = f" or (N, {n})" if batch else ""
    return InputError(f"{name} must have shape ({n},){also}, got {tuple(shape)}"
                      + continuous_hint(model, name, n, shape))


def continuous_hint(model, name, n, shape):
    """For a q of Pinocchio's length on a model with continuous joints (each one (cos, sin)
    there, one angle here), how to convert it; else ''."""
    nc = 0 if model is None else len(model.continuous_v)
    length = (shape[0] if len(shape) == 1 or tuple(shape[1:]) == (1,) else   # vector, column
              shape[1] if len(shape) == 2 else None)                         # rows of states
    if not nc or length != n + nc:
        return ""
    return (f"; {n + nc} is Pinocchio's nq for this model, which stores each of its {nc} "
            f"continuous joints as (cos, sin) where we keep one angle: convert with "
            f"order = ldr.JointOrder(model, pin_model.names[1:], continuous=\"cos_sin\"); "
            f"{name} = order.q_to_model({name}_pin)")


class _Ready:
    """Which entries of kernels/plan.py are compiled and closed to other argument types (one
    attribute per entry name): the public functions call an entry first once it is.

    An attribute is False until then, and then the entry's raw entry point (what numba's
    ``Dispatcher.compile`` returns): the compiled function without the dispatcher's type
    resolution, 0.1-0.17 us cheaper per call than the dispatcher. It converts each argument
    as the signature says without checking it, so a caller passes ndarrays of the signature's
    ndim and dtype only (an int64 array would be read as float64, a 2-D one for a 1-D slot
    would overrun the argument's struct); the tree entries check lengths and strides
    themselves (``kernels.views.c_strides``)."""
    inverse_dynamics = forward_dynamics = mass_matrix = False


class _TreeReady:
    """The same for the entries of the tree kernels (kernels/tree_rnea.py, tree_aba.py,
    tree_crba.py, tree_regressor.py)."""
    inverse_dynamics = nonlinear = gravity = forward_dynamics = mass_matrix = False
    regressor = regressor_rows = False


ready = _Ready()
tree_ready = _TreeReady()
_entries_lock = threading.Lock()


def compile_entry(name, signatures=P.SIGNATURES, flags=ready):
    """Compile (or load from numba's cache) the entry ``name`` of ``signatures`` (kernels/plan.py's
    by default) for its one signature, then close it to every other argument type (a TypeError
    of the dispatch); ``flags.<name>`` then holds its raw entry point (``_Ready``)."""
    if getattr(flags, name):
        return
    with _entries_lock:
        if not getattr(flags, name):
            fn, sig = signatures[name]
            raw = fn.compile(sig)
            fn.disable_compile()
            setattr(flags, name, raw)


def data_for(model, data):
    """``data`` checked against ``model``, or this thread's Data of the model."""
    if data is None:
        return model.default_data()
    if data.dv.shape[0] != model.mi.shape[0] or data.nv != model.nv:
        raise InputError(f"data was created for another model ({data!r}); use "
                         "model.create_data()")
    if data.model_constants is not model.mc:
        data.load_model(model)
    return data


def check(model, status, data=None, **arrays):
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
        row = int(data.failed_row[0]) if data is not None else 0
        where = (f"joint {model.body_joint_names[row]!r} (body {model.body_names[row - 1]!r}) moves"
                 if row > 0 else "a joint moves")
        raise InputError(f"singular articulated inertia: {where} a body chain without mass or "
                         "inertia, so its acceleration is undefined")
    if status == L.OVERFLOW:
        raise InputError("overflow: the inputs are finite but the result is not (velocities or "
                         "positions too large for float64)")
    raise InputError(f"kernel failed with status {status}")


def prepare(model, data, q, v):
    """Run joint kinematics in Python when the model has GENERAL joints.

    Returns the ``kin`` flag for the kernels: True = the kernel computes joint kinematics itself.
    """
    if not model.has_general:
        return True
    check(model, joint_kinematics(model.mi, model.mc, data.dv, data.dm, q, v), q=q, v=v)
    for j in model.general_joints:
        r, jt = j.row, j.joint
        qs, vs = q[j.q_index:j.q_index + j.nq], v[j.v_index:j.v_index + j.nv]
        T = j.origin @ np.asarray(jt.T(qs), dtype=float)
        S = np.asarray(jt.S(qs), dtype=float).reshape(6, j.nv)
        Sd = np.zeros((6, j.nv)) if jt.Sdot is None else np.asarray(jt.Sdot(qs, vs), dtype=float).reshape(6, j.nv)
        data.joint_rotation[r], data.joint_translation[r] = T[:3, :3].ravel(), T[:3, 3]
        S, Sd = rows_to_internal(S), rows_to_internal(Sd)
        data.motion_subspace[r, :, :j.nv], data.motion_subspace_dot[r, :, :j.nv] = S, Sd
        data.sdot_v[r] = Sd @ vs
    return False


def load_fext(model, data, f_ext):
    """Write external wrenches into ``data.external_wrench``; returns the kernel's use_fext flag.

    ``f_ext``: (len(body_names), 6) rows (force, torque) in each body frame, or a dict
    {link name: (force, torque) in that link's frame}.
    """
    if f_ext is None:
        return False
    fext = data.external_wrench
    fext[:] = 0.0
    if isinstance(f_ext, dict):
        for name, w in f_ext.items():
            row, T = model.frame(name)
            w = vec(w, 6, f"f_ext[{name!r}]")
            if not np.all(np.isfinite(w)):
                raise InputError(f"non-finite external wrench on {name!r}")
            if row > 0:   # a wrench on a world-fixed link does not move the robot
                fext[row] += to_internal(se3.Ad_star(se3.inv(T)) @ w)
        return True
    F = np.asarray(f_ext, dtype=float)
    if F.shape != (model.njoints, 6):
        raise InputError(f"f_ext must have shape ({model.njoints}, 6) (one row per body in "
                         f"model.body_names) or be a dict {{link: wrench}}, got {F.shape}")
    if not np.all(np.isfinite(F)):
        raise InputError("non-finite values in f_ext")
    fext[1:] = to_internal(F)
    return True
