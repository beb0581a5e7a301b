"""external_torque_observer_node: external joint torques and contact from the generalized
momentum (``lie_dynamics_ros.estimation.MomentumObserver``; De Luca et al. 2006).

Topics
  sub  joint_states                  sensor_msgs/JointState (position, velocity and, by
                                     default, effort = the applied torques; by name);
                                     reliable, depth 1000 (qos_overrides)
  sub  joint_torques                 sensor_msgs/JointState efforts, by name  } torque_source
  sub  effort_controller/commands    std_msgs/Float64MultiArray in `joints`   } command only
  pub  external_torque_estimate      sensor_msgs/JointState, effort = r (model order, stamp of
                                     the state)
  pub  contact                       std_msgs/Bool, true while some |r_i| > contact_threshold_i
  pub  /diagnostics                  diagnostic_msgs/DiagnosticArray, once per second

The torques are the ones applied: by default each state's own effort field
(``torque_source: joint_states``; forward_dynamics_node reports there the torque of the step
that ended in the state, after its clamp to the effort limits), or, for a driver whose
effort field is empty, the last command received before the state (``torque_source:
command``: exact only if the drive applies commands unclamped and at once). joint_states come
through a deep reliable queue, so a busy machine delays states rather than losing them; the
states still missing (stamp gaps) are counted in the diagnostics and logged (throttled). With
``wait_for_torque`` nothing is estimated or published before the first state with an applied
torque (the simulator's start-up hold is not a contact). The logic is ``lie_dynamics_ros.runtime.observer``; this node converts the messages around it.
Parameters: docs/ros.md.
"""
import sys

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.qos_overriding_options import QoSOverridingOptions
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, Float64MultiArray

from lie_dynamics_ros.ros import conversions as cv
from lie_dynamics_ros.ros.model_source import ModelSource
from lie_dynamics_ros.ros.node_common import ThrottledWarnings, run_node
from lie_dynamics_ros.ros.parameters import Parameters
from lie_dynamics_ros.ros.schemas.external_torque_observer import SCHEMA
from lie_dynamics_ros.runtime.observer import REBUILD, ObserverRuntime

#: joint_states: reliable and deep (1 s at 1 kHz), so that states wait instead of being lost
#: while the machine is busy; the observer is exact across gaps, but a contact shorter than a
#: gap would be seen only as its mean
STATE_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
#: every estimate reaches a subscriber that keeps up on average (the same 1 s at 1 kHz)
ESTIMATE_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)


class ExternalTorqueObserverNode(ThrottledWarnings, Node):
    """The node around ``runtime.observer.ObserverRuntime`` (``self.runtime``)."""

    def __init__(self, node_name="external_torque_observer", **kwargs):
        super().__init__(node_name, **kwargs)
        self.params = Parameters(self)
        self.p = self.params.declare(SCHEMA)
        self.throttle = cv.Throttle(self.p.log_throttle_sec)
        self.runtime = ObserverRuntime(self.p.torque_source, self.p.wait_for_torque)
        self.dropped = 0
        self.index = None
        self.stamps = cv.StampMonitor()
        self.est_pub = self.create_publisher(JointState, "external_torque_estimate",
                                             ESTIMATE_QOS)
        self.contact_pub = self.create_publisher(Bool, "contact", ESTIMATE_QOS)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        # compiles before subscribing; its listener first: a new model before new gains
        self.source = ModelSource(self, self._set_model, parameters=self.params, listen=True)
        self.params.listen(self._check, self._apply)
        self.hot_subscription = self.create_subscription(
            JointState, "joint_states", self._on_state, STATE_QOS,
            qos_overriding_options=QoSOverridingOptions.with_default_policies())
        self.create_subscription(JointState, "joint_torques", self._on_torques, 10)
        self.create_subscription(Float64MultiArray, "effort_controller/commands",
                                 self._on_command, 10)
        self.create_timer(1.0, self._publish_diagnostics)

    observer = property(lambda self: self.runtime.observer)
    contacts = property(lambda self: self.runtime.contacts)

    # -- model and parameters ---------------------------------------------------------------
    def _set_model(self, model, origin):
        reason = self.runtime.set_model(model, self.p)
        if reason is None:
            self.index = cv.JointIndex(list(model.joint_names))
            self.stamps.reset()
        return reason

    def _check(self, trial, names):
        if not REBUILD & names:
            return None, None
        return self.runtime.rebuild(trial)

    def _apply(self, names, observer):
        self.throttle.period_s = self.p.log_throttle_sec
        if observer is not None:
            self.runtime.install(observer)

    # -- inputs -------------------------------------------------------------------------------
    def _on_torques(self, msg):
        if self.observer is None or self.runtime.from_states:
            return
        js, reason = cv.parse_joint_state(msg, self.index, need=("effort",), optional=())
        if reason:
            return self._drop("joint_torques", reason)
        self.runtime.applied(js.effort)

    def _on_command(self, msg):
        if self.observer is None or self.runtime.from_states:
            return
        vals, reason = cv.parse_command_array(msg, len(self.runtime.cmd_cols))
        if reason:
            return self._drop("effort_controller/commands", reason)
        self.runtime.commanded(vals)

    def _on_state(self, msg):
        if self.observer is None:
            return self._drop("joint_states", "no robot model yet")
        js, reason = cv.parse_joint_state(msg, self.index, need=self.runtime.state_fields,
                                          optional=())
        if reason is None:
            reason = self.stamps.check(js.stamp_ns)
        if reason:
            return self._drop("joint_states", reason)
        self.stamps.accept(js.stamp_ns)
        try:
            r, contact, new = self.runtime.update(js.stamp_ns, js.position, js.velocity,
                                                  js.effort)
        except ValueError as e:
            return self._drop("joint_states", str(e))
        if r is None:               # waiting for the applied torque
            return
        if self.runtime.estimates == 1 and self.runtime.waited:
            self.get_logger().info("estimating from the state at t = %.3f s, the first with "
                                   "an applied torque (%d states before it passed over)"
                                   % (js.stamp_ns * 1e-9, self.runtime.waited))
        if new is not None:
            self.get_logger().info("contact on %s" % new)
        if self.runtime.just_skipped:
            self._warn("skipped", "joint_states: %d states missing before t = %.3f s (%d in "
                       "all, largest gap %.1f ms); the estimate stays exact across gaps, a "
                       "contact shorter than one shows as its mean"
                       % (self.runtime.just_skipped, js.stamp_ns * 1e-9, self.runtime.skipped,
                          self.runtime.largest_gap_ns * 1e-6))
        self.est_pub.publish(cv.make_joint_state(self.observer.model.joint_names, js.stamp_ns,
                                                 effort=r))
        self.contact_pub.publish(Bool(data=contact))

    def _publish_diagnostics(self):
        warn, message, values = self.runtime.status(self.dropped)
        st = DiagnosticStatus(name="%s: external torque observer" % self.get_name(),
                              hardware_id=self.observer.model.name if self.observer else "",
                              level=DiagnosticStatus.WARN if warn else DiagnosticStatus.OK,
                              message=message,
                              values=[KeyValue(key=k, value=str(v)) for k, v in values])
        msg = DiagnosticArray(status=[st])
        msg.header.stamp = self.get_clock().now().to_msg()
        self.diag_pub.publish(msg)


def main(args=None):
    """Console script ``external_torque_observer_node``; accepts standard ``--ros-args``."""
    return run_node(ExternalTorqueObserverNode, "external_torque_observer_node", args)


if __name__ == "__main__":
    sys.exit(main())
