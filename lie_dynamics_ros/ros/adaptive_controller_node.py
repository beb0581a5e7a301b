"""adaptive_controller_node: Slotine-Li adaptive (passivity-based) joint-space controller.

joint_states (+ the ``reference`` trajectory) -> torques, for ros2_control arms in effort mode.
The control law and the adaptation are ``lie_dynamics_ros.control.AdaptiveSlotineLiController``
(docs/control.md); this node only validates, samples the reference, keeps the clock and
publishes. Everything about it (topics, parameters, services): docs/control.md.

Topics
  sub  joint_states                 sensor_msgs/JointState, sensor-data QoS (qos_overrides)
  sub  reference                    trajectory_msgs/JointTrajectory (positions required;
                                    sampled at each state's stamp, spline interpolation)
  pub  effort_controller/commands   std_msgs/Float64MultiArray, torques in `joints` order
  pub  joint_torques                sensor_msgs/JointState, effort = torques (model order,
                                    header stamp of the state they answer)
  pub  ~/parameter_estimates        std_msgs/Float64MultiArray, theta_hat (10 per adapted body,
                                    (m, mc, I about the body origin), Pinocchio's order)
  pub  ~/tracking_error             std_msgs/Float64MultiArray, 3 x n: e, e_dot, s
Services
  ~/enable (std_srvs/SetBool)       true: run; false: send zero torque once, then stay silent
  ~/reset_parameters (std_srvs/Trigger)   theta_hat <- initial estimate

Without a reference the node holds the position it had when it was enabled (or when its first
state arrived). Stale states (older than ``state_timeout`` against the node clock, or none for
that long) give zero torque, reported once, and control resumes when fresh states return.
"""
import sys
from types import SimpleNamespace

import numpy as np
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from rclpy.qos_overriding_options import QoSOverridingOptions
from rcl_interfaces.msg import SetParametersResult
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory

from lie_dynamics_ros.control import AdaptiveGains, AdaptiveSlotineLiController
from lie_dynamics_ros.ros import conversions as cv
from lie_dynamics_ros.ros.model_source import ModelSource, Param, declare_parameters
from lie_dynamics_ros.ros.node_common import (ThrottledWarnings, nonnegative_number,
                                              nonnegative_values, positive_values, run_node,
                                              three_values)

GAIN_PARAMS = ("lambda_gains", "kd_gains", "gamma_gains", "adapt_body", "payload_only",
               "projection", "initial_parameters", "effort_limits", "compensate_gravity",
               "gravity")

PARAMS = [
    Param("lambda_gains", [10.0], "double_array",
          "Lambda (1/s): v_r = v_d - Lambda e. One value for every joint or one per joint "
          "(model order). >= 0.", check=nonnegative_values),
    Param("kd_gains", [20.0], "double_array",
          "K_D (N m s/rad): tau = Y theta_hat - K_D s. One value or one per joint. >= 0.",
          check=nonnegative_values),
    Param("gamma_gains", [1.0, 0.1, 0.1, 0.1, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01],
          "double_array",
          "Gamma (> 0) of theta_hat_dot = -Gamma Y^T s: one value, 10 values (per parameter "
          "kind m, mc_xyz, Ixx Ixy Iyy Ixz Iyz Izz; repeated for each adapted body) or one per "
          "adapted parameter.", check=positive_values),
    Param("adapt", True, "bool", "Adapt theta_hat (false: Slotine-Li with the current "
          "estimate)."),
    Param("payload_only", True, "bool",
          "Adapt only the 10 parameters of `adapt_body` (a payload at the flange merges into "
          "the last body); false: every body's parameters adapt."),
    Param("adapt_body", "", "string",
          "Body whose parameters adapt in payload_only mode; default the model's last body."),
    Param("projection", True, "bool",
          "Keep theta_hat physically consistent (pseudo-inertia projection in the Gamma^-1 "
          "metric)."),
    Param("initial_parameters", [], "double_array",
          "Initial theta_hat (10 per adapted body); default: the URDF's parameters."),
    Param("effort_limits", [], "double_array",
          "Torque limits (N m), one value or one per joint (model order); default the URDF "
          "<limit effort>. 0 or negative = no limit.", read_only=False),
    Param("clamp_efforts", True, "bool",
          "Clamp the torques to the effort limits and report when it acts."),
    Param("compensate_gravity", True, "bool",
          "Include gravity in the model (and the torques). False for arms whose firmware "
          "already compensates gravity (Franka FCI, KUKA FRI)."),
    Param("gravity", [0.0, 0.0, -9.81], "double_array", "Gravity in the world frame, m/s^2.",
          check=three_values),
    Param("state_timeout", 0.1, "double",
          "Seconds (node clock) after which a joint state is stale: zero torque until fresh "
          "states return. <= 0 disables."),
    Param("max_dt", 0.05, "double",
          "Longest time step (s) integrated by the adaptation; longer gaps do not adapt."),
    Param("joints", [], "string_array",
          "Element order of effort_controller/commands; default the model's joint order.",
          read_only=True),
    Param("publish_command_array", True, "bool",
          "Publish effort_controller/commands (Float64MultiArray, forward_command_controller)."),
    Param("publish_joint_torques", True, "bool", "Publish joint_torques (JointState)."),
    Param("monitor_decimation", 1, "int",
          "Publish ~/parameter_estimates and ~/tracking_error every this many states "
          "(0: never).", check=nonnegative_number),
    Param("start_enabled", True, "bool", "Control from the start (else wait for ~/enable).",
          read_only=True),
    Param("log_throttle_sec", 2.0, "double",
          "Minimum period of repeated warnings (dropped messages, clamping)."),
]


def build_controller(model, p, theta_hat=None):
    """AdaptiveSlotineLiController from the node's parameter namespace ``p`` (ValueError with
    a reason on bad gains or sizes). Its model has gravity per compensate_gravity."""
    n = model.nv
    model = model.with_gravity(p.gravity if p.compensate_gravity else [0.0, 0.0, 0.0])

    def per_joint(name, vals):
        if len(vals) == 1:
            return float(vals[0])
        if len(vals) != n:
            raise ValueError("%s has %d values: give 1 or %d (one per joint)"
                             % (name, len(vals), n))
        return np.array(vals)

    gains = AdaptiveGains(per_joint("lambda_gains", p.lambda_gains),
                          per_joint("kd_gains", p.kd_gains),
                          p.gamma_gains[0] if len(p.gamma_gains) == 1 else p.gamma_gains)
    theta0 = p.initial_parameters or None
    ctrl = AdaptiveSlotineLiController(model, gains, payload_only=p.payload_only,
                                       adapt_body=p.adapt_body or None, theta0=theta0,
                                       projection=p.projection, adapt=p.adapt)
    if theta_hat is not None and theta_hat.shape == ctrl.theta0.shape:
        ctrl.set_theta_hat(theta_hat)
    return ctrl


def effort_limits(model, values):
    """Effort limits (n,), inf = none: URDF limits, or one value / one per joint."""
    if not values:
        return cv.finite_limits(model.effort_limits)
    if len(values) not in (1, model.nv):
        raise ValueError("effort_limits has %d values: give 1 or %d" % (len(values), model.nv))
    return cv.finite_limits(np.broadcast_to(np.asarray(values, dtype=float), (model.nv,)))


def _layout(msg, dims):
    stride = int(np.prod([s for _, s in dims])) if dims else 0
    for label, size in dims:
        d = MultiArrayDimension()
        d.label, d.size, d.stride = label, int(size), int(stride)
        msg.layout.dim.append(d)
        stride //= max(1, int(size))
    return msg


class AdaptiveControllerNode(ThrottledWarnings, Node):
    """The node; ``self.controller`` is the library controller (None until a model)."""

    def __init__(self, node_name="adaptive_controller", **kwargs):
        super().__init__(node_name, **kwargs)
        self.p = declare_parameters(self, PARAMS, on_change=self._on_params)
        self.throttle = cv.Throttle(self.p.log_throttle_sec)
        self.model = None
        self.controller = None
        self.index = None
        self.reference = None
        self.enabled = bool(self.p.start_enabled)
        self.hold = None            # position held without a reference
        self.stamps = cv.StampMonitor()
        self.last_t_ns = None       # stamp (or receive time) of the last controlled state
        self.last_state_clock_ns = None
        self.stale = False
        self.zero_sent = False
        self.dropped = 0
        self.clamped = 0
        self.controlled = 0         # states answered with a control torque
        self.stale_events = 0
        self.last_tau = None
        self.cmd_pub = self.create_publisher(Float64MultiArray, "effort_controller/commands", 10)
        self.torque_pub = self.create_publisher(JointState, "joint_torques", 10)
        self.theta_pub = self.create_publisher(Float64MultiArray, "~/parameter_estimates", 10)
        self.error_pub = self.create_publisher(Float64MultiArray, "~/tracking_error", 10)
        self.create_subscription(
            JointState, "joint_states", self._on_state, qos_profile_sensor_data,
            qos_overriding_options=QoSOverridingOptions.with_default_policies())
        self.create_subscription(JointTrajectory, "reference", self._on_reference, 10)
        self.create_service(SetBool, "~/enable", self._srv_enable)
        self.create_service(Trigger, "~/reset_parameters", self._srv_reset)
        self.add_on_set_parameters_callback(self._check_params)
        self.source = ModelSource(self, self._set_model)
        period = self.p.state_timeout / 2 if self.p.state_timeout > 0 else 0.05
        self.watchdog = self.create_timer(max(0.005, period), self._watchdog)

    # -- model, gains -------------------------------------------------------------------------
    def _set_model(self, model, origin):
        if model.nq != model.nv or any(n != 1 for n in model.joint_nq):
            return "JointState needs 1-DOF joints; the model has multi-DOF joints"
        joints = self.p.joints or list(model.joint_names)
        unknown = [j for j in joints if j not in model.joint_names]
        if unknown:
            return "parameter joints names %s, not in the model" % unknown
        if len(set(joints)) != len(joints) or len(joints) != model.nv:
            return "parameter joints must name every model joint once"
        try:
            controller = build_controller(model, self.p)
            limits = effort_limits(model, self.p.effort_limits)
        except ValueError as e:
            return str(e)
        # the first call compiles / loads the numba kernels: do it now, not on the first state
        q0 = np.clip(np.zeros(model.nq), model.lower_limits, model.upper_limits)
        controller.step(0.0, q0, q0 * 0, q0, q0 * 0, q0 * 0, 1e-3)
        controller.reset()
        self.model, self.controller, self.limits = model, controller, limits
        self.index = cv.JointIndex(model.joint_names)
        self.cmd_cols = np.array([model.joint_names.index(j) for j in joints], dtype=np.intp)
        self.reference = None
        self.hold = None
        self.last_t_ns = None
        self.stamps.reset()
        self.get_logger().info(
            "adaptive Slotine-Li on %d joints, adapting %d parameters (%s)" % (
                model.nv, controller.theta0.size,
                ", ".join(controller.adapted_bodies) if len(controller.adapted_bodies) < 4
                else "%d bodies" % len(controller.adapted_bodies)))
        return None

    def _check_params(self, params):
        """Refuse gain changes that do not fit the model (sizes), before they are applied.
        Type errors are left to the typed validation of declare_parameters."""
        if self.model is None:
            return SetParametersResult(successful=True)
        staged = {p.name: p.value for p in params if p.name in GAIN_PARAMS}
        if not staged:
            return SetParametersResult(successful=True)
        trial = SimpleNamespace(**vars(self.p))
        kinds = {s.name: s.kind for s in PARAMS}
        try:
            for name, value in staged.items():
                if kinds[name] == "double_array":
                    value = [float(x) for x in value]
                elif kinds[name] == "bool" and not isinstance(value, bool):
                    raise TypeError(name)
                setattr(trial, name, value)
        except (TypeError, ValueError):
            return SetParametersResult(successful=True)
        try:
            build_controller(self.model, trial)
            effort_limits(self.model, trial.effort_limits)
        except ValueError as e:
            return SetParametersResult(successful=False, reason=str(e))
        return SetParametersResult(successful=True)

    def _on_params(self, names):
        self.throttle.period_s = self.p.log_throttle_sec
        if self.controller is None:
            return
        if "adapt" in names:
            self.controller.adapt = self.p.adapt
        if any(n in GAIN_PARAMS for n in names):
            keep = None
            if not ({"payload_only", "adapt_body", "initial_parameters"} & set(names)):
                keep = self.controller.theta_hat
            self.controller = build_controller(self.model, self.p, keep)
            self.limits = effort_limits(self.model, self.p.effort_limits)
            self.get_logger().info("gains updated (%s)" % ", ".join(names))

    # -- services ------------------------------------------------------------------------------
    def _srv_enable(self, request, response):
        if request.data and not self.enabled:
            # forget the old reference too: hold the position of the next state until a
            # new reference arrives (docs/control.md)
            self.enabled = True
            self.reference = None
            self.hold = None
            self.last_t_ns = None
            self.zero_sent = False
            response.message = "enabled"
            self.get_logger().info("controller enabled")
        elif not request.data and self.enabled:
            self.enabled = False
            self._send_zero()
            response.message = "disabled: zero torque sent"
            self.get_logger().info("controller disabled, zero torque sent")
        else:
            response.message = "already %s" % ("enabled" if self.enabled else "disabled")
        response.success = True
        return response

    def _srv_reset(self, request, response):
        if self.controller is None:
            response.success, response.message = False, "no robot model yet"
            return response
        self.controller.set_theta_hat(self.controller.theta0)
        response.success, response.message = True, "parameter estimates reset"
        self.get_logger().info("parameter estimates reset")
        return response

    # -- messages ------------------------------------------------------------------------------
    def _on_reference(self, msg):
        if self.model is None:
            return self._drop("reference", "no robot model yet")
        ref, reason = cv.TrajectoryReference.from_msg(
            msg, self.index, self.get_clock().now().nanoseconds)
        if reason is None and ref.q is None:
            reason = "the reference needs positions"
        if reason:
            return self._drop("reference", reason)
        self.reference = ref

    def _now_ns(self):
        return self.get_clock().now().nanoseconds

    def _go_stale(self, why):
        if not self.stale:
            self.stale = True
            self.stale_events += 1
            self.get_logger().warning("joint states are stale (%s): sending zero torque" % why)
        if not self.zero_sent:
            self._send_zero()

    def _send_zero(self):
        if self.model is None:
            return
        self._publish(np.zeros(self.model.nv))
        self.zero_sent = True

    def _watchdog(self):
        timeout = self.p.state_timeout
        if not (self.enabled and timeout > 0 and self.last_state_clock_ns is not None):
            return
        if self._now_ns() - self.last_state_clock_ns > timeout * 1e9:
            self._go_stale("none for %.3f s" % timeout)

    def _on_state(self, msg):
        if self.model is None:
            return self._drop("joint_states", "no robot model yet")
        js, reason = cv.parse_joint_state(msg, self.index, need=("position", "velocity"),
                                          optional=())
        if reason is None:
            reason = self.stamps.check(js.stamp_ns)
        if reason:
            return self._drop("joint_states", reason)
        self.stamps.accept(js.stamp_ns)
        now = self._now_ns()
        self.last_state_clock_ns = now
        if not self.enabled:
            return
        t_ns = js.stamp_ns or now
        timeout = self.p.state_timeout
        if timeout > 0 and js.stamp_ns and now > 0 and now - js.stamp_ns > timeout * 1e9:
            self.last_state_clock_ns = js.stamp_ns
            return self._go_stale("stamp %.3f s old" % ((now - js.stamp_ns) * 1e-9))
        if self.stale:
            self.stale = False
            self.last_t_ns = None          # no adaptation across the gap
            self.get_logger().info("fresh joint states again: control resumed")
        self.zero_sent = False
        q, v = js.position, js.velocity
        if self.hold is None:
            self.hold = q.copy()
        q_d, v_d, a_d = self.hold.copy(), np.zeros_like(q), np.zeros_like(q)
        if self.reference is not None:
            rq, rv, ra = self.reference.sample(t_ns)
            m = self.reference.mask
            q_d[m], v_d[m], a_d[m] = rq[m], rv[m], ra[m]
        dt = 0.0
        if self.last_t_ns is not None:
            dt = (t_ns - self.last_t_ns) * 1e-9
            if not 0.0 < dt <= self.p.max_dt:
                dt = 0.0
        try:
            tau = self.controller.step(t_ns * 1e-9, q, v, q_d, v_d, a_d, dt)
        except ValueError as e:
            return self._drop("joint_states", "controller refused the state: %s" % e)
        if not np.all(np.isfinite(tau)):
            return self._drop("joint_states", "non-finite torques")
        self.last_t_ns = t_ns
        if self.p.clamp_efforts:
            tau, acted = cv.clamp_efforts(tau, self.limits)
            if acted.any():
                self.clamped += 1
                names = [n for n, x in zip(self.model.joint_names, acted) if x]
                self._warn("clamp", "clamped torques to the effort limits on %s" % names)
        self.controlled += 1
        self._publish(tau, js.stamp_ns)
        k = self.p.monitor_decimation
        if k > 0 and self.controlled % k == 0:
            self._publish_monitors()

    def _publish(self, tau, stamp_ns=None):
        """Torques on both outputs; joint_torques carries ``stamp_ns`` (the answered state's
        stamp) or, for a zero command of our own, the node clock's now."""
        self.last_tau = tau
        if self.p.publish_command_array:
            self.cmd_pub.publish(cv.make_command_array(tau[self.cmd_cols]))
        if self.p.publish_joint_torques:
            if stamp_ns is None:
                stamp_ns = max(0, self._now_ns())
            self.torque_pub.publish(cv.make_joint_state(self.model.joint_names, stamp_ns,
                                                        effort=tau))

    def _publish_monitors(self):
        st = self.controller.state
        n = self.model.nv
        th = Float64MultiArray()
        _layout(th, [("parameter", st.theta_hat.size)])
        th.data = cv.to_float_array(st.theta_hat)
        self.theta_pub.publish(th)
        err = Float64MultiArray()
        _layout(err, [("e,e_dot,s", 3), ("joint", n)])
        err.data = cv.to_float_array(np.concatenate([st.e, st.e_dot, st.s]))
        self.error_pub.publish(err)


def main(args=None):
    """Console script ``adaptive_controller_node``; accepts standard ``--ros-args``."""
    return run_node(AdaptiveControllerNode, "adaptive_controller_node", args)


if __name__ == "__main__":
    sys.exit(main())
