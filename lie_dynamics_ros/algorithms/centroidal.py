"""Centre of mass, centroidal momentum (Orin, Goswami & Lee 2013) and the inverse mass matrix.

Every quantity is in the world frame's orientation; 6-vectors and the rows of A_G are in the
public order (linear, angular): h_G = (linear momentum, angular momentum about the COM).

As in algorithms/dynamics.py, each call first tries its compiled entry
(kernels/centroidal_plan.py) with the arguments as given: numba's dispatch admits C-contiguous
float64 vectors only and the entry checks their lengths. Anything else (lists, int arrays,
columns, Python joints, mimic joints for M^-1, a bad status) takes the checked path, which
converts and names the argument at fault.
"""
import numpy as np

from ..conventions import PUBLIC_ROWS
from ..errors import InputError
from ..kernels import centroidal as K
from ..kernels import centroidal_plan as E
from ..kernels import inverse_mass as KM
from ..kernels import layout as L
from ._inputs import vec, check, prepare, data_for, compile_entry
from .dynamics import mass_matrix

_ND = np.ndarray
_empty = np.empty
# the entries, bound once: each call saves the module attribute lookups
(_com, _com_motion, _com_jacobian, _momentum, _map_entry, _map_dot_entry,
 _minv_entry) = (E.center_of_mass, E.center_of_mass_motion, E.center_of_mass_jacobian,
                 E.centroidal_momentum, E.centroidal_momentum_matrix,
                 E.centroidal_momentum_matrix_time_variation, E.mass_matrix_inverse)


class _Ready:
    """Which entries of kernels/centroidal_plan.py are compiled and closed to other argument
    types (``_inputs.compile_entry``), by entry name."""
    center_of_mass = center_of_mass_motion = center_of_mass_jacobian = False
    centroidal_momentum = centroidal_momentum_matrix = False
    centroidal_momentum_matrix_time_variation = mass_matrix_inverse = False


ready = _Ready()


def _compile(*names):
    for name in names:
        compile_entry(name, E.SIGNATURES, ready)


def _status(model, st, d, **arrays):
    if st == L.SINGULAR and not model.mI[1:, 5, 5].sum() > 0.0:
        raise InputError("the model has no mass: its centre of mass is undefined")
    check(model, st, d, **arrays)


def center_of_mass(model, q, v=None, a=None, data=None):
    """Centre of mass c (3,) in the world; with ``v`` also (c, dc/dt), with ``v`` and ``a``
    (c, dc/dt, d2c/dt2) (the kinematic acceleration, gravity not included)."""
    if q.__class__ is _ND and not model.has_general:
        try:
            if v is None:
                if a is None and ready.center_of_mass:
                    c = _empty(3)
                    if _com((model.default_data() if data is None else
                             data_for(model, data)).buf, q, c) == 0:
                        return c
            elif ready.center_of_mass_motion:
                out = _empty((2 if a is None else 3, 3))
                if _com_motion((model.default_data() if data is None else
                                data_for(model, data)).buf, q, v, v if a is None else a,
                               out) == 0:
                    return (out[0], out[1]) if a is None else (out[0], out[1], out[2])
        except TypeError:
            pass
    _compile("center_of_mass", "center_of_mass_motion")
    if a is not None and v is None:
        raise InputError("center_of_mass: an acceleration a needs the velocity v")
    q = vec(q, model.nq, "q", model=model)
    d = data_for(model, data)
    v = d.zero_v if v is None else vec(v, model.nv, "v")
    order = 0 if v is d.zero_v else (1 if a is None else 2)
    a = d.zero_v if a is None else vec(a, model.nv, "a")
    kin = prepare(model, d, q, v) if model.has_general else True
    c = np.empty(3)
    out = c.reshape(1, 3) if order == 0 else np.empty((order + 1, 3))
    st = K.center_of_mass(model.mi, model.mc, model.mI, d.dv, d.dm, q, v, a, out, kin)
    if st:
        _status(model, st, d, q=q, v=v, a=a)
    return c if order == 0 else tuple(out)


def center_of_mass_jacobian(model, q, data=None):
    """J_c (3, nv), dc/dt = J_c v, in the world frame."""
    J = _empty((3, model.nv))
    if q.__class__ is _ND and ready.center_of_mass_jacobian and not model.has_general:
        try:
            if _com_jacobian((model.default_data() if data is None else
                              data_for(model, data)).buf, q, J) == 0:
                return J
        except TypeError:
            pass
    _compile("center_of_mass_jacobian")
    q = vec(q, model.nq, "q", model=model)
    d = data_for(model, data)
    kin = prepare(model, d, q, d.zero_v) if model.has_general else True
    st = K.com_jacobian(model.mi, model.mc, model.mI, d.dv, d.dm, q, d.zero_v, J, kin)
    if st:
        _status(model, st, d, q=q)
    return J


def centroidal_momentum(model, q, v, data=None):
    """h_G (6,) = (linear momentum, angular momentum about the COM), in world axes: the bodies'
    momenta projected to the COM (Orin, Goswami & Lee 2013); Pinocchio's ``data.hg`` (a Force:
    linear, angular)."""
    h = _empty(6)
    if (q.__class__ is v.__class__ is _ND and ready.centroidal_momentum
            and not model.has_general):
        try:
            if _momentum((model.default_data() if data is None else data_for(model, data)).buf,
                         q, v, h, PUBLIC_ROWS) == 0:
                return h
        except TypeError:
            pass
    _compile("centroidal_momentum")
    q, v = vec(q, model.nq, "q", model=model), vec(v, model.nv, "v")
    d = data_for(model, data)
    kin = prepare(model, d, q, v) if model.has_general else True
    st = K.centroidal_momentum(model.mi, model.mc, model.mI, d.dv, d.dm, q, v, h, PUBLIC_ROWS,
                               kin)
    if st:
        _status(model, st, d, q=q, v=v)
    return h


def centroidal_momentum_matrix(model, q, data=None):
    """A_G (6, nv), h_G = A_G v, rows (linear, angular) in world axes about the COM: the
    centroidal momentum matrix of Orin, Goswami & Lee (2013), Pinocchio's ``ccrba``. The
    armature is not momentum of the bodies and stays out, as in Pinocchio."""
    Ag = _empty((6, model.nv))
    if q.__class__ is _ND and ready.centroidal_momentum_matrix and not model.has_general:
        try:
            if _map_entry((model.default_data() if data is None else data_for(model, data)).buf,
                          q, Ag, PUBLIC_ROWS) == 0:
                return Ag
        except TypeError:
            pass
    _compile("centroidal_momentum_matrix")
    q = vec(q, model.nq, "q", model=model)
    d = data_for(model, data)
    return _map(model, d, q, d.zero_v, Ag, False)


def centroidal_momentum_matrix_time_variation(model, q, v, data=None):
    """dA_G/dt (6, nv) along v, so that dh_G/dt = A_G a + dA_G/dt v (Pinocchio's ``dccrba``)."""
    dAg = _empty((6, model.nv))
    if (q.__class__ is v.__class__ is _ND and not model.has_general
            and ready.centroidal_momentum_matrix_time_variation):
        try:
            if _map_dot_entry((model.default_data() if data is None else
                               data_for(model, data)).buf, q, v, dAg, PUBLIC_ROWS) == 0:
                return dAg
        except TypeError:
            pass
    _compile("centroidal_momentum_matrix_time_variation")
    q, v = vec(q, model.nq, "q", model=model), vec(v, model.nv, "v")
    return _map(model, data_for(model, data), q, v, dAg, True)


def _map(model, d, q, v, out, with_dot):
    kin = prepare(model, d, q, v) if model.has_general else True
    st = K.centroidal_map(model.mi, model.mc, model.mI, d.dv, d.dm, q, v, out, PUBLIC_ROWS,
                          with_dot, kin)
    if st:
        _status(model, st, d, q=q, v=v)
    return out


def mass_matrix_inverse(model, q, data=None):
    """M(q)^-1 (nv, nv), armature included, by the articulated-body recursion on unit torques
    (Carpentier 2018), not by inverting M; O(n) passes, each over its joints' columns.

    A model with mimic joints couples bodies outside the tree recursion: it is inverted through
    M (CRBA + Cholesky) instead, as forward_dynamics solves it."""
    Minv = _empty((model.nv, model.nv))
    if (q.__class__ is _ND and ready.mass_matrix_inverse and not model.has_general
            and not model.has_mimic):
        d = model.default_data() if data is None else data_for(model, data)
        try:
            if _minv_entry(d.buf, q, Minv, d.Jb) == 0:
                return Minv
        except TypeError:
            pass
    _compile("mass_matrix_inverse")
    q = vec(q, model.nq, "q", model=model)
    d = data_for(model, data)
    if model.has_mimic:
        return _inverse_through_cholesky(model, mass_matrix(model, q, data=d))
    kin = prepare(model, d, q, d.zero_v) if model.has_general else True
    st = KM.mass_matrix_inverse(model.mi, model.mc, model.mI, d.dv, d.dm, q, d.zero_v, Minv,
                                d.Jb, d.failed_row, kin)
    if st == KM.NOT_DFS:
        return _inverse_through_cholesky(model, mass_matrix(model, q, data=d))
    if st:
        check(model, st, d, q=q)
    return Minv


def _inverse_through_cholesky(model, M):
    try:
        ci = np.linalg.inv(np.linalg.cholesky(M))
    except np.linalg.LinAlgError:
        small = np.flatnonzero(np.diag(M) <= 1e-12 * max(np.abs(np.diag(M)).max(), 1e-300))
        names = sorted({model.joint_names[model.joint_v_index.index(int(model.dof_first[k]))]
                        for k in small})
        who = f"joint(s) {names} move" if names else "a joint moves"
        raise InputError(f"the mass matrix is singular: {who} no mass or inertia") from None
    return ci.T @ ci
