"""inverse_dynamics_node: joint_states -> joint_torques (RNEA), for ros2_control arms.

Subscribes ``joint_states`` (sensor-data QoS, overridable with ``qos_overrides``) and the
optional ``reference`` (trajectory_msgs/JointTrajectory, desired accelerations). For every
accepted state it publishes ``joint_torques`` (sensor_msgs/JointState: the model's joint
names, ``effort`` = tau, header stamp copied) and, when ``command_topic`` is set, a
std_msgs/Float64MultiArray in ``joints`` order for forward_command_controller. Every command
passes the torque guard (timeout + fallback, slew limit, clamping; docs/safety.md), and
``/diagnostics`` reports it. The logic is ``lie_dynamics_ros.runtime.inverse_dynamics``; this
node converts the messages around it. Parameters and topics: docs/ros.md, docs/safety.md.
"""
import sys

from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from lie_dynamics_ros.ros import conversions as cv
from lie_dynamics_ros.ros.command_guard import (COMMAND_QOS, GuardedCommands, StatePipeline,
                                                carry_over, guard_config)
from lie_dynamics_ros.ros.node_common import ThrottledWarnings, run_node, warm_up
from lie_dynamics_ros.ros.parameters import Parameters
from lie_dynamics_ros.ros.schemas.inverse_dynamics import SCHEMA
from lie_dynamics_ros.runtime.inverse_dynamics import REBUILD, InverseDynamicsRuntime


class InverseDynamicsNode(GuardedCommands, ThrottledWarnings, Node):
    """Thin node: validate -> ``InverseDynamicsRuntime.torques`` -> torque guard -> publish.
    ``self.rt`` is the runtime's current setup (model, inputs, guard, command columns),
    replaced as a whole: a message is served by one model only."""

    def __init__(self, node_name="inverse_dynamics", **kwargs):
        super().__init__(node_name, **kwargs)
        self.params = Parameters(self)
        self.p = self.params.declare(SCHEMA)
        self.throttle = cv.Throttle(self.p.log_throttle_sec)
        self.runtime = InverseDynamicsRuntime()
        self.dropped = 0       # rejected messages, for tests and diagnostics
        self.clamped = 0       # published messages in which clamping acted
        self._subscribed = False
        self.pub = self.create_publisher(JointState, "joint_torques", COMMAND_QOS)
        self.cmd_pub = None
        if self.p.command_topic:
            self.cmd_pub = self.create_publisher(Float64MultiArray, self.p.command_topic,
                                                 COMMAND_QOS)
        self._start_model_source()

    rt = property(lambda self: self.runtime.setup)
    reference = property(lambda self: self.runtime.reference)

    # -- model and parameters ---------------------------------------------------------------
    def _prepare(self, base, p):
        return self.runtime.prepare(base, p, guard_config(p), StatePipeline)

    def _adopt(self, base, origin):
        """A model from the start-up parameters or the topic: prepare, warm up, install."""
        reason, rt = self._prepare(base, self.p)
        if reason is None:
            self._install(rt, new_model=True)
        return reason

    def _install(self, rt, new_model):
        if new_model:       # compile (or load) the kernels now, before subscribing
            warm_up(self, rt.warm_up)
        elif self.rt is not None:          # same robot: its state carries over
            carry_over(rt, self.rt)
        self.runtime.install(rt, new_model)
        self._subscribe_inputs()

    def _check(self, trial, names):
        reason, base, origin = self._staged_model(trial, names, REBUILD)
        if base is None:
            return reason, None
        reason, rt = self._prepare(base, trial)
        return reason, (rt, origin)

    def _apply(self, names, prepared):
        self.throttle.period_s = self.p.log_throttle_sec
        if prepared is not None and prepared[0] is not None:
            rt, origin = prepared
            self._install(rt, new_model=origin is not None)
            if origin is not None:
                self.source.adopted(origin)
        if self.rt is not None:
            self.rt.guard.configure(guard_config(self.p))
        if {"state_timeout", "diagnostics_period"} & set(names):
            self._restart_guard_timers()

    # -- callbacks ----------------------------------------------------------------------------
    def _on_reference(self, msg):
        if self.rt is None:
            return self._drop("reference", "no robot model yet")
        ref, reason = cv.TrajectoryReference.from_msg(
            msg, self.rt.inputs.index, self.get_clock().now().nanoseconds)
        if reason:
            return self._drop("reference", reason)
        self.runtime.set_reference(ref)

    def _on_source(self, msg):
        reason = self.rt.inputs.secondary(msg, self.get_clock().now().nanoseconds)
        if reason:
            self._drop("source_list", reason)

    def _on_state(self, msg):
        rt = self.rt
        now = self.get_clock().now().nanoseconds
        st, notes, reason = rt.inputs.state(msg, now)
        if reason:
            return self._drop("joint_states", reason)
        for note in notes:
            self.get_logger().warning(note)
        stamp, q, v = st
        try:
            tau = self.runtime.torques(stamp, q, v, now)
        except ValueError as e:
            return self._drop("joint_states", str(e))
        if self._guard_command(rt, tau, stamp, q, now) is not None:
            rt.inputs.accept(stamp)

    def _send(self, tau, stamp_ns):
        rt = self.rt
        if stamp_ns is None:
            stamp_ns = max(0, self.get_clock().now().nanoseconds)
        self.pub.publish(cv.make_joint_state(rt.model.joint_names, stamp_ns, effort=tau))
        if self.cmd_pub is not None:
            self.cmd_pub.publish(cv.make_command_array(tau[rt.cmd_cols]))

    def _guard_enabled(self):
        """Timeout, fallback and final zero act only when the node commands a controller
        (``command_topic``); otherwise joint_torques answers the states one for one."""
        return self.cmd_pub is not None

    def on_shutdown(self):
        if self._guard_enabled():
            super().on_shutdown()

    def _command_publishers(self):
        return [p for p in (self.pub, self.cmd_pub) if p is not None]


def main(args=None):
    """Console script ``inverse_dynamics_node``; accepts standard ``--ros-args``."""
    return run_node(InverseDynamicsNode, "inverse_dynamics_node", args)


if __name__ == "__main__":
    sys.exit(main())
