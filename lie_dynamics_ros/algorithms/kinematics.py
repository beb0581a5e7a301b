"""Forward kinematics, frame Jacobians and energies."""
import numpy as np

from ..conventions import rows_to_public
from ..kernels import dynamics as K
from ..kernels import layout as L
from ..lie import se3
from ._inputs import vec, check, prepare
from .dynamics import _jacobian_buffers


def _kinematics(model, q, v):
    q, v = vec(q, model.nq, "q"), vec(v, model.nv, "v")
    kin = prepare(model, q, v)
    check(model, K.velocity_kinematics(model._mi, model._fv, model._fm, q, v, kin), q=q, v=v)
    return q, v


def _body_pose(model, row):
    c = model._fv[row]
    T = np.eye(4)
    T[:3, :3] = c[L.OR:L.OR + 9].reshape(3, 3)
    T[:3, 3] = c[L.OP:L.OP + 3]
    return T


def forward_kinematics(model, q):
    """{frame name: 4x4 pose in the world} for every URDF link."""
    _kinematics(model, q, np.zeros(model.nv))
    bodies = [_body_pose(model, r) for r in range(model.njoints + 1)]
    return {name: bodies[row] @ T for name, (row, T) in model._frames.items()}


def frame_pose(model, q, frame):
    """4x4 pose of ``frame`` (a link name) in the world."""
    row, T = model.frame(frame)
    _kinematics(model, q, np.zeros(model.nv))
    return _body_pose(model, row) @ T


def body_jacobian(model, q, frame):
    """(6, nv) Jacobian of the twist of ``frame`` expressed in ``frame``; rows (linear, angular),
    like Pinocchio's LOCAL frame Jacobian."""
    row, T = model.frame(frame)
    q, v = _kinematics(model, q, np.zeros(model.nv))
    Jb, Jd = _jacobian_buffers(model)
    K.jacobians(model._mi, model._fv, model._fm, v, Jb, Jd)
    return rows_to_public(se3.Ad_inv(T) @ Jb[row])


def kinetic_energy(model, q, v):
    """1/2 v^T M(q) v, summed body by body as 1/2 V_i^T I_i V_i."""
    _kinematics(model, q, v)
    out = np.empty(2)
    K.energies(model._mi, model._fv, model._fm, out)
    return float(out[0])


def potential_energy(model, q):
    """-sum_i m_i g . c_i (world frame; zero when every COM is at the world origin)."""
    _kinematics(model, q, np.zeros(model.nv))
    out = np.empty(2)
    K.energies(model._mi, model._fv, model._fm, out)
    return float(out[1])
