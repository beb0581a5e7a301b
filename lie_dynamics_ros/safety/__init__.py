"""What may reach a motor: ROS-free safety logic shared by the commanding nodes.

- ``TorqueGuard``: state timeout with a zero or gravity fallback, slew-rate limit, effort
  clamping, counters (docs/safety.md);
- ``VelocityEstimator``: velocities of joints whose driver sends none (NaN or absent);
- ``JointStateMerger``: joint states from several sources merged by name, with a
  ``reject``/``hold`` policy for joints nobody measures;
- ``LimitMonitor``: positions outside the URDF limits, reported once per joint.
"""
from .guard import GuardConfig, TorqueGuard
from .inputs import JointStateMerger, LimitMonitor, VelocityEstimator

__all__ = ["GuardConfig", "TorqueGuard", "JointStateMerger", "LimitMonitor",
           "VelocityEstimator"]
