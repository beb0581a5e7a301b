"""Forward kinematics, body Jacobians and energies (frames in every reference: frames.py)."""
import numpy as np

from ..kernels import dynamics as K
from ..kernels import layout as L
from ._inputs import vec, check, prepare, data_for
from .frames import frame_jacobian, frame_placements


def _kinematics(model, d, q, v):
    q, v = vec(q, model.nq, "q", model=model), vec(v, model.nv, "v")
    kin = prepare(model, d, q, v) if model.has_general else True
    check(model, K.velocity_kinematics(model.mi, model.mc, model.mI, d.dv, d.dm, q, v, kin),
          d, q=q, v=v)
    return q, v


def forward_kinematics(model, q, data=None):
    """{frame name: 4x4 pose in the world} for every URDF link."""
    d = data_for(model, data)
    poses = frame_placements(model, q, data=d)
    return dict(zip(model.frame_names, poses))


def body_jacobian(model, q, frame, data=None):
    """(6, nv) Jacobian of the twist of ``frame`` expressed in ``frame``; rows (linear, angular),
    like Pinocchio's LOCAL frame Jacobian (``frame_jacobian(..., reference="local")``)."""
    return frame_jacobian(model, q, frame, "local", data=data)


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
