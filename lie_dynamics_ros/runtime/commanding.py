"""What the commanding runtimes (inverse dynamics, adaptive control) share: the order of the
command array, the torque guard of a model, the state a rebuilt setup carries over, and the
pose their kernels are compiled at."""
import numpy as np

import lie_dynamics_ros as ldr
from ..safety import TorqueGuard
from .robot import unknown_joints_reason


def command_columns(model, joints, every=False):
    """Model indices of the command array's elements, in the order of the ``joints``
    parameter ([] = the model's order). ValueError naming joints that are not in the model,
    or, with ``every``, unless ``joints`` names every model joint once."""
    joints = list(joints) or list(model.joint_names)
    reason = unknown_joints_reason(model, "joints", joints)
    if reason:
        raise ValueError(reason)
    if every and (len(set(joints)) != len(joints) or len(joints) != model.nv):
        raise ValueError("parameter joints must name every model joint once")
    return np.array([model.joint_names.index(j) for j in joints], dtype=np.intp)


def torque_guard(model, limits, config):
    """TorqueGuard of ``model`` (limits <= 0 read as none) whose ``gravity`` fallback is
    g(q) of that model. ValueError for an invalid GuardConfig."""
    return TorqueGuard(limits, lambda q: ldr.gravity_torques(model, q), config)


def carry_over(new, old):
    """A setup rebuilt for the same robot (new gains, gravity, input policy) continues the
    old one: the guard's state, the stamp monitor, the velocity filter (``new.guard``,
    ``new.inputs.stamps``, ``new.inputs.estimator`` and the same of ``old``)."""
    new.guard.continue_from(old.guard)
    new.inputs.stamps = old.inputs.stamps
    new.inputs.estimator.continue_from(old.inputs.estimator)


def rest_pose(model):
    """q = 0 clipped to the joint limits: where a kernel's first (compiling) call runs."""
    return np.clip(np.zeros(model.nq), model.lower_limits, model.upper_limits)
