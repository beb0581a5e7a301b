"""external_torque_observer_node: external joint torques and contact from the generalized
momentum (``lie_dynamics_ros.estimation.MomentumObserver``; De Luca et al. 2006).

Topics
  sub  joint_states                  sensor_msgs/JointState (position and velocity, by name)
  sub  joint_torques                 sensor_msgs/JointState efforts, by name  } the applied
  sub  effort_controller/commands    std_msgs/Float64MultiArray in `joints`   } torques
  pub  external_torque_estimate      sensor_msgs/JointState, effort = r (model order, stamp of
                                     the state)
  pub  contact                       std_msgs/Bool, true while some |r_i| > contact_threshold_i
  pub  /diagnostics                  diagnostic_msgs/DiagnosticArray, once per second

The torque applied between two states is the last command received before the newer one
(``torque_source: command``), or the newer state's own effort field for a robot or simulator
that reports the applied torque there (``torque_source: joint_states``; forward_dynamics_node
does). Parameters: docs/ros.md.
"""
import sys

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, Float64MultiArray

from lie_dynamics_ros.estimation import MomentumObserver
from lie_dynamics_ros.ros import conversions as cv
from lie_dynamics_ros.ros.model_source import ModelSource, Param, declare_parameters
from lie_dynamics_ros.ros.node_common import (ThrottledWarnings, positive_values, run_node,
                                              three_values)

TORQUE_SOURCES = ("command", "joint_states")

PARAMS = [
    Param("observer_gain", [50.0], "double_array",
          "K_O (1/s): one value for every joint, or one per joint; the estimate's time "
          "constant is 1/K_O. Keep K_O * (state period) < 1.", check=positive_values),
    Param("contact_threshold", [2.0], "double_array",
          "|r_i| above this (N m or N) means contact: one value, or one per joint.",
          check=positive_values),
    Param("torque_source", "command", "string",
          "command: joint_torques / effort_controller/commands; joint_states: the effort "
          "field of joint_states (a driver or simulator that reports applied torques).",
          read_only=True,
          check=lambda s: None if s in TORQUE_SOURCES else "must be one of %s"
          % (TORQUE_SOURCES,)),
    Param("joints", [], "string_array",
          "Element order of effort_controller/commands; default: the model's joint order.",
          read_only=True),
    Param("gravity", [0.0, 0.0, -9.81], "double_array", "Gravity in the world frame, m/s^2.",
          check=three_values),
    Param("log_throttle_sec", 2.0, "double",
          "Minimum period of repeated warnings (dropped messages)."),
]


class ExternalTorqueObserverNode(ThrottledWarnings, Node):

    def __init__(self, node_name="external_torque_observer", **kwargs):
        super().__init__(node_name, **kwargs)
        self.p = declare_parameters(self, PARAMS, on_change=self._on_params)
        self.throttle = cv.Throttle(self.p.log_throttle_sec)
        self.observer = None
        self.dropped = 0
        self.contacts = 0           # rising edges of the contact flag
        self._in_contact = False
        self.estimates = 0
        self.tau = None             # last commanded torques (model order)
        self.last_stamp_ns = None
        self.stamps = cv.StampMonitor()
        self.est_pub = self.create_publisher(JointState, "external_torque_estimate", 10)
        self.contact_pub = self.create_publisher(Bool, "contact", 10)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self.source = ModelSource(self, self._set_model)   # compiles before subscribing
        self.hot_subscription = self.create_subscription(
            JointState, "joint_states", self._on_state, qos_profile_sensor_data)
        self.create_subscription(JointState, "joint_torques", self._on_torques, 10)
        self.create_subscription(Float64MultiArray, "effort_controller/commands",
                                 self._on_command, 10)
        self.create_timer(1.0, self._publish_diagnostics)

    # -- model and parameters ---------------------------------------------------------------
    def _build(self, model):
        model = model.with_gravity(np.array(self.p.gravity, dtype=float))
        return MomentumObserver(model, gain=self.p.observer_gain,
                                threshold=self.p.contact_threshold)

    def _set_model(self, model, origin):
        if model.nq != model.nv or any(n != 1 for n in model.joint_nq):
            return "JointState needs 1-DOF joints; the model has multi-DOF joints"
        names = list(model.joint_names)
        joints = self.p.joints or names
        unknown = [j for j in joints if j not in names]
        if unknown:
            return "parameter joints names %s, not in the model" % unknown
        try:
            observer = self._build(model)
        except ValueError as e:
            return str(e)
        # one update compiles (or loads) the kernels now, not on the first state
        q0 = np.clip(np.zeros(model.nq), model.lower_limits, model.upper_limits)
        observer.update(q0, np.zeros(model.nv), None, None)
        observer.update(q0, np.zeros(model.nv), np.zeros(model.nv), 1e-3)
        observer.reset()
        self.observer = observer
        self.index = cv.JointIndex(names)
        self.cmd_cols = np.array([names.index(j) for j in joints], dtype=np.intp)
        self.tau = np.zeros(model.nv)
        self.last_stamp_ns = None
        self.stamps.reset()
        return None

    def _on_params(self, names):
        self.throttle.period_s = self.p.log_throttle_sec
        if self.observer is not None and {"observer_gain", "contact_threshold",
                                          "gravity"} & set(names):
            try:
                self.observer = self._build(self.observer.model)
            except ValueError as e:
                self.get_logger().error("observer parameters refused: %s" % e)
            self.last_stamp_ns = None

    # -- inputs -------------------------------------------------------------------------------
    def _on_torques(self, msg):
        if self.observer is None or self.p.torque_source != "command":
            return
        js, reason = cv.parse_joint_state(msg, self.index, need=("effort",), optional=())
        if reason:
            return self._drop("joint_torques", reason)
        self.tau = js.effort.copy()

    def _on_command(self, msg):
        if self.observer is None or self.p.torque_source != "command":
            return
        vals, reason = cv.parse_command_array(msg, len(self.cmd_cols))
        if reason:
            return self._drop("effort_controller/commands", reason)
        self.tau[self.cmd_cols] = vals

    def _on_state(self, msg):
        if self.observer is None:
            return self._drop("joint_states", "no robot model yet")
        need = ("position", "velocity") + (("effort",) if self.p.torque_source ==
                                           "joint_states" else ())
        js, reason = cv.parse_joint_state(msg, self.index, need=need, optional=())
        if reason is None:
            reason = self.stamps.check(js.stamp_ns)
        if reason:
            return self._drop("joint_states", reason)
        self.stamps.accept(js.stamp_ns)
        tau = js.effort if self.p.torque_source == "joint_states" else self.tau
        dt = None if self.last_stamp_ns is None else (js.stamp_ns - self.last_stamp_ns) * 1e-9
        try:
            r = self.observer.update(js.position, js.velocity, tau, dt)
        except ValueError as e:
            return self._drop("joint_states", str(e))
        self.last_stamp_ns = js.stamp_ns
        now = self.observer.contact
        if now and not self._in_contact:
            self.contacts += 1
            self.get_logger().info("contact on %s" % self.observer.contact_joints())
        self._in_contact = now
        self.estimates += 1
        self.est_pub.publish(cv.make_joint_state(self.observer.model.joint_names, js.stamp_ns,
                                                 effort=r))
        self.contact_pub.publish(Bool(data=now))

    def _publish_diagnostics(self):
        st = DiagnosticStatus(name="%s: external torque observer" % self.get_name(),
                              hardware_id=self.observer.model.name if self.observer else "")
        if self.observer is None:
            st.level, st.message = DiagnosticStatus.WARN, "no robot model"
        else:
            st.level = DiagnosticStatus.OK
            st.message = "contact" if self.observer.contact else "no contact"
            st.values = [KeyValue(key=k, value=str(v)) for k, v in (
                ("estimates", self.estimates), ("contacts", self.contacts),
                ("dropped", self.dropped),
                ("max |r|", "%.4g" % float(np.abs(self.observer.r).max())))]
        msg = DiagnosticArray(status=[st])
        msg.header.stamp = self.get_clock().now().to_msg()
        self.diag_pub.publish(msg)


def main(args=None):
    """Console script ``external_torque_observer_node``; accepts standard ``--ros-args``."""
    return run_node(ExternalTorqueObserverNode, "external_torque_observer_node", args)


if __name__ == "__main__":
    sys.exit(main())
