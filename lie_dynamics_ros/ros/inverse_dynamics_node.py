"""inverse_dynamics_node: joint_states -> joint_torques (RNEA), for ros2_control arms.

Subscribes ``joint_states`` (sensor-data QoS, overridable with ``qos_overrides``) and the
optional ``reference`` (trajectory_msgs/JointTrajectory, desired accelerations). For every
accepted state it publishes ``joint_torques`` (sensor_msgs/JointState: the model's joint
names, ``effort`` = tau, header stamp copied) and, when ``command_topic`` is set, a
std_msgs/Float64MultiArray in ``joints`` order for forward_command_controller. Parameters and
topics: docs/ros.md.
"""
import sys

import numpy as np
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from rclpy.qos_overriding_options import QoSOverridingOptions
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

import lie_dynamics_ros as ldr
from lie_dynamics_ros.ros import conversions as cv
from lie_dynamics_ros.ros.model_source import ModelSource, Param, declare_parameters
from lie_dynamics_ros.ros.node_common import ThrottledWarnings, run_node, three_values

PARAMS = [
    Param("compensate_gravity", True, "bool",
          "Include gravity in the torques. Set false for arms whose firmware already "
          "compensates gravity (Franka FCI, KUKA FRI)."),
    Param("gravity", [0.0, 0.0, -9.81], "double_array",
          "Gravity in the world frame, m/s^2.", check=three_values),
    Param("clamp_efforts", True, "bool",
          "Clamp the torques to the URDF <limit effort> and report when it acts."),
    Param("command_topic", "", "string",
          "If set, also publish the torques as std_msgs/Float64MultiArray in `joints` order "
          "(forward_command_controller with interface_name: effort), e.g. "
          "/effort_controller/commands.", read_only=True),
    Param("joints", [], "string_array",
          "Joint order of command_topic; default: the model's joint order.", read_only=True),
    Param("log_throttle_sec", 2.0, "double",
          "Minimum period of repeated warnings about dropped or clamped messages."),
]


class InverseDynamicsNode(ThrottledWarnings, Node):
    """Thin node: validate -> ldr.inverse_dynamics -> clamp -> publish."""

    def __init__(self, node_name="inverse_dynamics", **kwargs):
        super().__init__(node_name, **kwargs)
        self.p = declare_parameters(self, PARAMS, on_change=self._on_params)
        self.throttle = cv.Throttle(self.p.log_throttle_sec)
        self.model = None
        self.index = None
        self.reference = None
        self.stamps = cv.StampMonitor()
        self.dropped = 0       # rejected messages, for tests and diagnostics
        self.clamped = 0       # published messages in which clamping acted
        self.pub = self.create_publisher(JointState, "joint_torques", 10)
        self.cmd_pub = None
        if self.p.command_topic:
            self.cmd_pub = self.create_publisher(Float64MultiArray, self.p.command_topic, 10)
        self.create_subscription(
            JointState, "joint_states", self._on_state, qos_profile_sensor_data,
            qos_overriding_options=QoSOverridingOptions.with_default_policies())
        self.create_subscription(JointTrajectory, "reference", self._on_reference, 10)
        self.source = ModelSource(self, self._set_model)

    # -- model and parameters ---------------------------------------------------------------
    def _set_model(self, model, origin):
        if model.nq != model.nv or any(n != 1 for n in model.joint_nq):
            return "JointState needs 1-DOF joints; the model has multi-DOF joints"
        joints = self.p.joints or list(model.joint_names)
        unknown = [j for j in joints if j not in model.joint_names]
        if unknown:
            return "parameter joints names %s, not in the model" % unknown
        self.model = model
        self.index = cv.JointIndex(model.joint_names)
        self.cmd_cols = np.array([model.joint_names.index(j) for j in joints], dtype=np.intp)
        self.limits = cv.finite_limits(model.effort_limits)
        self.reference = None
        self.stamps.reset()
        self._apply_gravity()
        return None

    def _apply_gravity(self):
        if self.model is not None:
            g = self.p.gravity if self.p.compensate_gravity else [0.0, 0.0, 0.0]
            self.model = self.model.with_gravity(np.array(g, dtype=float))

    def _on_params(self, names):
        self.throttle.period_s = self.p.log_throttle_sec
        self._apply_gravity()

    # -- callbacks ----------------------------------------------------------------------------
    def _on_reference(self, msg):
        if self.model is None:
            return self._drop("reference", "no robot model yet")
        ref, reason = cv.TrajectoryReference.from_msg(
            msg, self.index, self.get_clock().now().nanoseconds)
        if reason:
            return self._drop("reference", reason)
        self.reference = ref

    def _on_state(self, msg):
        if self.model is None:
            return self._drop("joint_states", "no robot model yet")
        js, reason = cv.parse_joint_state(msg, self.index)
        if reason is None:
            reason = self.stamps.check(js.stamp_ns)
        if reason:
            return self._drop("joint_states", reason)
        a = np.zeros(self.model.nv)
        if self.reference is not None:
            t = js.stamp_ns or self.get_clock().now().nanoseconds
            _, _, a_ref = self.reference.sample(t)
            if a_ref is not None:
                a = a_ref
        try:
            tau = ldr.inverse_dynamics(self.model, js.position, js.velocity, a)
        except ValueError as e:
            return self._drop("joint_states", "inverse dynamics refused the state: %s" % e)
        if not np.all(np.isfinite(tau)):
            return self._drop("joint_states", "non-finite torques")
        if self.p.clamp_efforts:
            tau, acted = cv.clamp_efforts(tau, self.limits)
            if acted.any():
                self.clamped += 1
                names = [n for n, x in zip(self.model.joint_names, acted) if x]
                self._warn("clamp", "clamped efforts to the URDF limits on %s" % names)
        self.stamps.accept(js.stamp_ns)
        self.pub.publish(cv.make_joint_state(self.model.joint_names, js.stamp_ns, effort=tau,
                                             frame_id=msg.header.frame_id))
        if self.cmd_pub is not None:
            self.cmd_pub.publish(cv.make_command_array(tau[self.cmd_cols]))


def main(args=None):
    """Console script ``inverse_dynamics_node``; accepts standard ``--ros-args``."""
    return run_node(InverseDynamicsNode, "inverse_dynamics_node", args)


if __name__ == "__main__":
    sys.exit(main())
