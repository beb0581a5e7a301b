"""adaptive_controller_node: adaptive Slotine-Li joint-space control, for ros2_control arms
in effort mode. The logic is ``lie_dynamics_ros.runtime.adaptive``; this node converts the
messages around it. Topics, parameters, services: docs/control.md.

Topics
  sub  joint_states                 sensor_msgs/JointState, sensor-data QoS (qos_overrides)
  sub  reference                    trajectory_msgs/JointTrajectory (positions required)
  pub  effort_controller/commands   std_msgs/Float64MultiArray, torques in `joints` order
  pub  joint_torques                sensor_msgs/JointState, effort = torques (model order,
                                    header stamp of the state they answer)
  pub  ~/parameter_estimates        std_msgs/Float64MultiArray, theta_hat (10 per adapted body)
  pub  ~/tracking_error             std_msgs/Float64MultiArray, 3 x n: e, e_dot, s
Services
  ~/enable (std_srvs/SetBool)       true: run; false: answer every state with zero torque
  ~/reset_parameters (std_srvs/Trigger)   theta_hat <- initial estimate

Every command passes the torque guard (docs/safety.md).
"""
import sys

import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from std_srvs.srv import SetBool, Trigger

from lie_dynamics_ros.ros import conversions as cv
from lie_dynamics_ros.ros.command_guard import (COMMAND_QOS, GuardedCommands, StatePipeline,
                                                carry_over, guard_config)
from lie_dynamics_ros.ros.node_common import ThrottledWarnings, run_node, warm_up
from lie_dynamics_ros.ros.parameters import Parameters
from lie_dynamics_ros.ros.schemas.adaptive_controller import SCHEMA
from lie_dynamics_ros.runtime.adaptive import GAIN_PARAMS, REBUILD, AdaptiveRuntime


def _array(values, dims):
    """Float64MultiArray of ``values`` (row-major) with a labelled layout."""
    msg = Float64MultiArray(data=cv.to_float_array(np.ravel(values)))
    stride = int(np.prod([s for _, s in dims]))
    for label, size in dims:
        msg.layout.dim.append(MultiArrayDimension(label=label, size=int(size), stride=stride))
        stride //= max(1, int(size))
    return msg


class AdaptiveControllerNode(GuardedCommands, ThrottledWarnings, Node):
    """The node around ``runtime.adaptive.AdaptiveRuntime`` (``self.runtime``); ``self.rt``
    is its current setup (model, controller, inputs, guard, command columns)."""

    def __init__(self, node_name="adaptive_controller", **kwargs):
        super().__init__(node_name, **kwargs)
        self.params = Parameters(self)
        self.p = self.params.declare(SCHEMA)
        self.throttle = cv.Throttle(self.p.log_throttle_sec)
        self.runtime = AdaptiveRuntime(self.p)
        self.dropped = self.clamped = 0
        self._subscribed = False
        self.cmd_pub = self.create_publisher(Float64MultiArray, "effort_controller/commands",
                                             COMMAND_QOS)
        self.torque_pub = self.create_publisher(JointState, "joint_torques", COMMAND_QOS)
        self.theta_pub = self.create_publisher(Float64MultiArray, "~/parameter_estimates", 10)
        self.error_pub = self.create_publisher(Float64MultiArray, "~/tracking_error", 10)
        self.create_service(SetBool, "~/enable", self._srv_enable)
        self.create_service(Trigger, "~/reset_parameters", self._srv_reset)
        self._start_model_source()

    rt = property(lambda self: self.runtime.setup)
    controller = property(lambda self: None if self.rt is None else self.rt.controller)
    reference = property(lambda self: self.runtime.reference)
    enabled = property(lambda self: self.runtime.enabled)

    #: the state timeout is active (the fallback is being sent); timeouts of this model
    stale = property(lambda self: self.rt is not None and self.rt.guard.in_timeout)
    stale_events = property(lambda self: self.rt.guard.counts["timeouts"] if self.rt else 0)

    # -- model, gains -------------------------------------------------------------------------
    def _prepare(self, base, p, origin, changed=None):
        return self.runtime.prepare(base, p, origin or self.source.origin, guard_config(p),
                                    StatePipeline, changed)

    def _adopt(self, base, origin):
        reason, rt = self._prepare(base, self.p, origin)
        if reason is None:
            self._install(rt, new_model=True)
        return reason

    def _install(self, rt, new_model):
        if new_model:       # compile (or load) the kernels now, before subscribing
            warm_up(self, rt.warm_up)
        elif self.rt is not None:          # same robot: its state carries over
            carry_over(rt, self.rt)
        self.runtime.install(rt, new_model)
        if new_model:
            self.get_logger().info(rt.summary())
        self._subscribe_inputs()

    def _check(self, trial, names):
        """Validate a parameter update against the model it will meet; nothing is applied."""
        reason, base, origin = self._staged_model(trial, names, REBUILD)
        if base is None:
            return reason, None
        reason, rt = self._prepare(base, trial, origin, None if origin else names)
        return reason, (rt, origin)

    def _apply(self, names, prepared):
        self.throttle.period_s = self.p.log_throttle_sec
        if prepared is not None and prepared[0] is not None:
            rt, origin = prepared
            self._install(rt, new_model=origin is not None)
            if origin is not None:
                self.source.adopted(origin)
            elif set(names) & set(GAIN_PARAMS):
                self.get_logger().info("gains updated (%s)" % ", ".join(names))
        self.runtime.configure(self.p)
        if self.rt is not None:
            self.rt.guard.configure(guard_config(self.p))
        if {"state_timeout", "diagnostics_period"} & set(names):
            self._restart_guard_timers()

    # -- services ------------------------------------------------------------------------------
    def _srv_enable(self, request, response):
        response.message, zero = self.runtime.set_enabled(bool(request.data))
        if zero is not None:      # stamped as the last answered state: the answers that
            self._send(zero, self.rt.inputs.stamps.last_ns)   # follow are not older
        self.get_logger().info("controller " + response.message)
        response.success = True
        return response

    def _srv_reset(self, request, response):
        response.success = self.runtime.reset_estimate()
        response.message = "parameter estimates reset" if response.success else "no model yet"
        return response

    # -- messages ------------------------------------------------------------------------------
    def _now_ns(self):
        return self.get_clock().now().nanoseconds

    def _guard_enabled(self):
        return self.runtime.enabled

    def _on_reference(self, msg):
        ref, reason = cv.TrajectoryReference.from_msg(msg, self.rt.inputs.index, self._now_ns())
        reason = reason or self.runtime.set_reference(ref)
        if reason:
            self._drop("reference", reason)

    def _on_source(self, msg):
        reason = self.rt.inputs.secondary(msg, self._now_ns())
        if reason:
            self._drop("source_list", reason)

    def _on_state(self, msg):
        rt, now = self.rt, self._now_ns()
        st, notes, reason = rt.inputs.state(msg, now)
        if reason:
            return self._drop("joint_states", reason)
        for note in notes:
            self.get_logger().warning(note)
        stamp, q, v = st
        try:
            tau = self.runtime.torques(stamp, q, v, now)
        except ValueError as e:
            return self._drop("joint_states", "controller refused the state: %s" % e)
        if tau is None:                  # disabled: zero, still answering (lockstep)
            return self._send(self.runtime.disabled_answer(), stamp)
        if self._guard_command(rt, tau, stamp, q, now) is None:
            return
        if self.runtime.commanded(stamp, now):
            self._publish_monitors()

    def _send(self, tau, stamp_ns):
        """Torques on both outputs; joint_torques carries ``stamp_ns`` (the answered state's
        stamp) or, for a command of our own (fallback, zero), the node clock's now."""
        rt = self.rt
        if self.p.publish_command_array:
            self.cmd_pub.publish(cv.make_command_array(tau[rt.cmd_cols]))
        if self.p.publish_joint_torques:
            if stamp_ns is None:
                stamp_ns = max(0, self._now_ns())
            self.torque_pub.publish(cv.make_joint_state(rt.model.joint_names, stamp_ns,
                                                        effort=tau))

    def _command_publishers(self):
        return [self.cmd_pub, self.torque_pub]

    def _publish_monitors(self):
        theta_hat, errors = self.runtime.monitors()
        self.theta_pub.publish(_array(theta_hat, [("parameter", theta_hat.size)]))
        self.error_pub.publish(_array(errors, [("e,e_dot,s", 3), ("joint", errors.shape[1])]))


def main(args=None):
    """Console script ``adaptive_controller_node``; accepts standard ``--ros-args``."""
    return run_node(AdaptiveControllerNode, "adaptive_controller_node", args)


if __name__ == "__main__":
    sys.exit(main())
