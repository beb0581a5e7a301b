"""Centre of mass, centroidal momentum (Orin, Goswami & Lee 2013) and the inverse mass matrix.

Every quantity is in the world frame's orientation; 6-vectors and the rows of A_G are in the
public order (linear, angular): h_G = (linear momentum, angular momentum about the COM).
"""
import numpy as np

from ..conventions import rows_to_public, to_public
from ..errors import InputError
from ..kernels import centroidal as K
from ..kernels import layout as L
from ._inputs import vec, check, prepare, data_for
from .dynamics import mass_matrix


def _status(model, st, d, **arrays):
    if st == L.SINGULAR and not model.mI[1:, 5, 5].sum() > 0.0:
        raise InputError("the model has no mass: its centre of mass is undefined")
    check(model, st, d, **arrays)


def center_of_mass(model, q, v=None, a=None, data=None):
    """Centre of mass c (3,) in the world; with ``v`` also (c, dc/dt), with ``v`` and ``a``
    (c, dc/dt, d2c/dt2) (the kinematic acceleration, gravity not included)."""
    if a is not None and v is None:
        raise InputError("center_of_mass: an acceleration a needs the velocity v")
    q = vec(q, model.nq, "q", model=model)
    d = data_for(model, data)
    v = d.zero_v if v is None else vec(v, model.nv, "v")
    order = 0 if v is d.zero_v else (1 if a is None else 2)
    a = d.zero_v if a is None else vec(a, model.nv, "a")
    kin = prepare(model, d, q, v) if model.has_general else True
    out = np.empty((3, 3))
    st = K.center_of_mass(model.mi, model.mc, model.mI, d.dv, d.dm, q, v, a, out, order, kin)
    if st:
        _status(model, st, d, q=q, v=v, a=a)
    return out[0] if order == 0 else tuple(out[:order + 1])


def center_of_mass_jacobian(model, q, data=None):
    """J_c (3, nv), dc/dt = J_c v, in the world frame."""
    q = vec(q, model.nq, "q", model=model)
    d = data_for(model, data)
    kin = prepare(model, d, q, d.zero_v) if model.has_general else True
    J, com = np.empty((3, model.nv)), np.empty(3)
    st = K.com_jacobian(model.mi, model.mc, model.mI, d.dv, d.dm, q, d.zero_v, J, com, kin)
    if st:
        _status(model, st, d, q=q)
    return J


def centroidal_momentum(model, q, v, data=None):
    """h_G (6,) = (linear momentum, angular momentum about the COM), in world axes: the bodies'
    momenta projected to the COM (Orin, Goswami & Lee 2013); Pinocchio's ``data.hg`` (a Force:
    linear, angular)."""
    q, v = vec(q, model.nq, "q", model=model), vec(v, model.nv, "v")
    d = data_for(model, data)
    kin = prepare(model, d, q, v) if model.has_general else True
    h, com = np.empty(6), np.empty(3)
    st = K.centroidal_momentum(model.mi, model.mc, model.mI, d.dv, d.dm, q, v, h, com, kin)
    if st:
        _status(model, st, d, q=q, v=v)
    return to_public(h)


def centroidal_momentum_matrix(model, q, data=None):
    """A_G (6, nv), h_G = A_G v, rows (linear, angular) in world axes about the COM: the
    centroidal momentum matrix of Orin, Goswami & Lee (2013), Pinocchio's ``ccrba``. The
    armature is not momentum of the bodies and stays out, as in Pinocchio."""
    q = vec(q, model.nq, "q", model=model)
    d = data_for(model, data)
    return _map(model, d, q, d.zero_v, False)[0]


def centroidal_momentum_matrix_time_variation(model, q, v, data=None):
    """dA_G/dt (6, nv) along v, so that dh_G/dt = A_G a + dA_G/dt v (Pinocchio's ``dccrba``)."""
    q, v = vec(q, model.nq, "q", model=model), vec(v, model.nv, "v")
    return _map(model, data_for(model, data), q, v, True)[1]


def _map(model, d, q, v, with_dot):
    kin = prepare(model, d, q, v) if model.has_general else True
    Ag, com = np.empty((6, model.nv)), np.empty(3)
    dAg = np.empty((6, model.nv)) if with_dot else Ag
    st = K.centroidal_map(model.mi, model.mc, model.mI, d.dv, d.dm, q, v, Ag, dAg, com,
                          with_dot, kin)
    if st:
        _status(model, st, d, q=q, v=v)
    return rows_to_public(Ag), (rows_to_public(dAg) if with_dot else None)


def mass_matrix_inverse(model, q, data=None):
    """M(q)^-1 (nv, nv), armature included, by the articulated-body recursion on unit torques
    (Carpentier 2018), not by inverting M; O(n) passes, each over its joints' columns.

    A model with mimic joints couples bodies outside the tree recursion: it is inverted through
    M (CRBA + Cholesky) instead, as forward_dynamics solves it."""
    q = vec(q, model.nq, "q", model=model)
    d = data_for(model, data)
    if model.has_mimic:
        return _inverse_through_cholesky(model, mass_matrix(model, q, data=d))
    kin = prepare(model, d, q, d.zero_v) if model.has_general else True
    Minv = np.empty((model.nv, model.nv))
    st = K.mass_matrix_inverse(model.mi, model.mc, model.mI, d.dv, d.dm, q, d.zero_v, Minv,
                               d.Jb, d.Jd, d.failed_row, kin)
    if st == K.NOT_DFS:
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
