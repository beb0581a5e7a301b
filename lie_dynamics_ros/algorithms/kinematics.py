"""Forward kinematics, frame Jacobians and energies."""
import numpy as np

from ..conventions import rows_to_public
from ..kernels import dynamics as K
from ..kernels import layout as L
from ..lie import se3
from ._inputs import vec, check, prepare, data_for


def _kinematics(model, d, q, v):
    q, v = vec(q, model.nq, "q"), vec(v, model.nv, "v")
    kin = prepare(model, d, q, v) if model.has_general else True
    check(model, K.velocity_kinematics(model.mi, model.mc, model.mI, d.dv, d.dm, q, v, kin),
          d, q=q, v=v)
    return q, v


def _body_pose(d, row):
    T = np.eye(4)
    T[:3, :3] = d.world_rotation[row].reshape(3, 3)
    T[:3, 3] = d.world_translation[row]
    return T


def forward_kinematics(model, q, data=None):
    """{frame name: 4x4 pose in the world} for every URDF link."""
    d = data_for(model, data)
    _kinematics(model, d, q, d.zero_v)
    bodies = [_body_pose(d, r) for r in range(model.njoints + 1)]
    return {name: bodies[row] @ T for name, (row, T) in model.frames.items()}


def frame_pose(model, q, frame, data=None):
    """4x4 pose of ``frame`` (a link name) in the world."""
    row, T = model.frame(frame)
    d = data_for(model, data)
    _kinematics(model, d, q, d.zero_v)
    return _body_pose(d, row) @ T


def body_jacobian(model, q, frame, data=None):
    """(6, nv) Jacobian of the twist of ``frame`` expressed in ``frame``; rows (linear, angular),
    like Pinocchio's LOCAL frame Jacobian."""
    row, T = model.frame(frame)
    d = data_for(model, data)
    q, v = _kinematics(model, d, q, d.zero_v)
    K.jacobians(model.mi, model.mc, model.mI, d.dv, d.dm, v, d.Jb, d.Jd)
    return se3.Ad_inv(T) @ rows_to_public(d.Jb[row])


def kinetic_energy(model, q, v, data=None):
    """1/2 v^T M(q) v, summed body by body as 1/2 V_i^T I_i V_i, plus the armature's
    1/2 sum armature_k v_k^2 (M's diagonal term)."""
    d = data_for(model, data)
    _, v = _kinematics(model, d, q, v)
    K.energies(model.mi, model.mc, model.mI, d.dv, d.dm, d.energy)
    return _finite_energy(model, d.energy[0] + 0.5 * float(model.armature @ (v * v)))


def potential_energy(model, q, data=None):
    """-sum_i m_i g . c_i (world frame; zero when every COM is at the world origin)."""
    d = data_for(model, data)
    _kinematics(model, d, q, d.zero_v)
    K.energies(model.mi, model.mc, model.mI, d.dv, d.dm, d.energy)
    return _finite_energy(model, d.energy[1])


def _finite_energy(model, e):
    if not np.isfinite(e):
        check(model, L.OVERFLOW)
    return float(e)
