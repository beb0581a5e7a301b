"""The joint terms of a real drive that are not rigid-body dynamics: viscous damping and
Coulomb friction (URDF ``<dynamics damping friction>``; ``model.joint_damping``,
``model.joint_friction``). The rigid-body algorithms never add them (they equal Pinocchio's
RNEA/ABA); a simulator, a controller or an identification adds them explicitly."""
import numpy as np

from ..errors import InputError
from ._inputs import vec


def friction_torques(model, v):
    """damping * v + friction * sign(v): the torque (nv,) a drive spends on its own joint
    friction at velocity ``v`` (nv,), or (N, nv) for N states. At v = 0 the Coulomb part is 0:
    what static friction holds then depends on the other torques (the simulator's concern)."""
    a = vec(v, model.nv, "v", batch=True)
    if a is None:                                  # (N, nv) states
        a = np.asarray(v, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise InputError("v must be finite")
    return model.joint_damping * a + model.joint_friction * np.sign(a)
