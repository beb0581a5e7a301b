"""ROS-free joint-space controllers: computed torque, PD + gravity, Slotine-Li and adaptive
Slotine-Li with payload-only adaptation and a physical-consistency projection, and the
joint-friction feedforward (docs/control.md)."""
from .controllers import (PDGains, SlotineLiGains, AdaptiveGains, ControllerState,
                          ComputedTorqueController, PDGravityController, SlotineLiController,
                          AdaptiveSlotineLiController, pseudo_inertia,
                          parameters_from_pseudo_inertia, is_physically_consistent,
                          smallest_pseudo_inertia_eigenvalues, project_physical)
from .friction_feedforward import friction_feedforward, has_joint_friction

__all__ = [
    "PDGains", "SlotineLiGains", "AdaptiveGains", "ControllerState",
    "ComputedTorqueController", "PDGravityController", "SlotineLiController",
    "AdaptiveSlotineLiController", "pseudo_inertia", "parameters_from_pseudo_inertia",
    "is_physically_consistent", "smallest_pseudo_inertia_eigenvalues", "project_physical",
    "friction_feedforward", "has_joint_friction",
]
