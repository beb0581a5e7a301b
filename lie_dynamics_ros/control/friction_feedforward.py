"""The joint-friction feedforward of a controller: the model's damping and Coulomb friction
(``ldr.friction_torques``) at a measured or reference velocity, with the Coulomb sign smoothed
near v = 0.

A measured velocity is noisy; sign(v) would flip the full Coulomb torque at every zero
crossing of the noise and send those flips to the motors. The feedforward uses the boundary
layer sat(v / epsilon) instead (Slotine & Li 1991, sec. 7.2): exact for |v| >= epsilon, linear
inside, continuous everywhere. The simulator keeps the exact model (integrators/passive.py)
and the observer the exact sign (its low-pass averages the flips out).
"""
import numpy as np

from ..algorithms.joint_friction import friction_torques
from ..errors import InputError


def has_joint_friction(model):
    """True when some joint has damping or Coulomb friction."""
    return bool(np.any(model.joint_damping) or np.any(model.joint_friction))


def friction_feedforward(model, v, epsilon):
    """damping * v + friction * sat(v / epsilon), (nv,) or (N, nv): the torque the drives
    spend on joint friction at velocity ``v``. ``epsilon`` (rad/s or m/s, >= 0) is the
    boundary layer's half-width; 0 gives the exact sign(v) of ``ldr.friction_torques``."""
    if not (np.isfinite(epsilon) and epsilon >= 0):
        raise InputError("friction_velocity_epsilon must be a number >= 0, got %r" % (epsilon,))
    v = np.asarray(v, dtype=float)
    if v.shape == (model.nv, 1):                      # a column is one state (_inputs.vec)
        v = v.reshape(model.nv)
    tau = friction_torques(model, v)                  # checks v
    if epsilon == 0 or not np.any(model.joint_friction):
        return tau
    return tau + model.joint_friction * (np.clip(v / epsilon, -1.0, 1.0) - np.sign(v))
