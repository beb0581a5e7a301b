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
state arrived). Every command passes the torque guard (docs/safety.md): no valid state for
``state_timeout`` gives the ``fallback`` command (repeated at ``fallback_period``), control
resumes with valid states (the adaptation does not integrate across the gap); slew limit,
clamping, ``/diagnostics``, a final zero on SIGINT/SIGTERM.
"""
import sys
from types import SimpleNamespace

import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from std_srvs.srv import SetBool, Trigger

import lie_dynamics_ros as ldr
from lie_dynamics_ros.control import AdaptiveGains, AdaptiveSlotineLiController
from lie_dynamics_ros.ros import conversions as cv
from lie_dynamics_ros.ros.command_guard import (COMMAND_QOS, GUARD_PARAMS, INPUT_PARAMS,
                                                GuardedCommands, StatePipeline, carry_over,
                                                guard_config)
from lie_dynamics_ros.ros.model_source import (Param, Parameters, read_parameters,
                                               robot_config_file)
from lie_dynamics_ros.ros.node_common import (ThrottledWarnings, nonnegative_number,
                                              nonnegative_values, positive_values, run_node,
                                              three_values, warm_up)
from lie_dynamics_ros.safety import TorqueGuard
from lie_dynamics_ros.safety.inputs import broadcast_values

#: parameters whose change rebuilds the controller (checked on the model they will meet)
GAIN_PARAMS = ("lambda_gains", "kd_gains", "gamma_gains", "gains_file", "adapt_body",
               "payload_only", "projection", "initial_parameters", "effort_limits",
               "compensate_gravity", "gravity")
REBUILD = set(GAIN_PARAMS) | {"robot_description", "urdf_path", "missing_joints",
                              "hold_positions", "unmeasured_velocity", "velocity_cutoff_hz",
                              "position_limit_margin"}

#: the gains when neither the parameters nor a gains file set them
BUILT_IN_GAINS = {"lambda_gains": [10.0], "kd_gains": [20.0],
                  "gamma_gains": [1.0, 0.1, 0.1, 0.1, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01]}


def _unset_or(check):
    return lambda values: None if not len(values) else check(values)


PARAMS = [
    Param("lambda_gains", [], "double_array",
          "Lambda (1/s): v_r = v_d - Lambda e. One value for every joint or one per joint "
          "(model order). >= 0. Empty: from the gains file, else 10.",
          check=_unset_or(nonnegative_values)),
    Param("kd_gains", [], "double_array",
          "K_D (N m s/rad): tau = Y theta_hat - K_D s. One value or one per joint. >= 0. "
          "Empty: from the gains file, else 20.", check=_unset_or(nonnegative_values)),
    Param("gamma_gains", [], "double_array",
          "Gamma (> 0) of theta_hat_dot = -Gamma Y^T s: one value, 10 values (per parameter "
          "kind m, mc_xyz, Ixx Ixy Iyy Ixz Iyz Izz; repeated for each adapted body) or one per "
          "adapted parameter. Empty: from the gains file, else "
          "[1, 0.1 x 3, 0.01 x 6].", check=_unset_or(positive_values)),
    Param("gains_file", "", "string",
          "YAML parameter file whose lambda_gains / kd_gains / gamma_gains are used for the "
          "gains not set as parameters; default: config/<urdf stem>_adaptive_gains.yaml of the "
          "package when the URDF has one (config/arm7_adaptive_gains.yaml), so urdf_file:= "
          "alone switches robots."),
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
    Param("compensate_gravity", True, "bool",
          "Include gravity in the model (and the torques). False for arms whose firmware "
          "already compensates gravity (Franka FCI, KUKA FRI)."),
    Param("gravity", [0.0, 0.0, -9.81], "double_array", "Gravity in the world frame, m/s^2.",
          check=three_values),
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
] + GUARD_PARAMS + INPUT_PARAMS


def resolve_gains(p, origin):
    """(``p`` with every gain set, where the gains come from): the parameters, else
    ``gains_file``, else config/<urdf stem>_adaptive_gains.yaml for a model from ``urdf_path``
    (``origin``), else BUILT_IN_GAINS. ValueError for an unreadable gains file."""
    unset = [k for k in BUILT_IN_GAINS if not len(getattr(p, k))]
    if not unset:
        return p, "parameters"
    path = p.gains_file or robot_config_file(origin, "_adaptive_gains.yaml")
    found = {}
    if path:
        try:
            found = read_parameters(path, unset)
        except (OSError, ValueError) as e:
            raise ValueError("gains_file %s: %s" % (path, e)) from None
    filled = SimpleNamespace(**vars(p))
    for k in unset:
        setattr(filled, k, found.get(k, BUILT_IN_GAINS[k]))
    sources = ["parameters"] if len(unset) < len(BUILT_IN_GAINS) else []
    sources += [path] if found else []
    sources += ["built-in"] if len(found) < len(unset) else []
    return filled, " + ".join(sources)


def build_controller(base, p, theta_hat=None):
    """AdaptiveSlotineLiController from the node's parameter namespace ``p`` (ValueError with
    a reason on bad gains or sizes), on ``base`` with the gravity of compensate_gravity."""
    n = base.nv
    model = base.with_gravity(np.array(p.gravity if p.compensate_gravity else [0.0] * 3))
    gains = AdaptiveGains(broadcast_values("lambda_gains", p.lambda_gains, n, 0.0),
                          broadcast_values("kd_gains", p.kd_gains, n, 0.0),
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
    return cv.finite_limits(broadcast_values("effort_limits", values, model.nv, 0.0))


def _layout(msg, dims):
    stride = int(np.prod([s for _, s in dims])) if dims else 0
    for label, size in dims:
        d = MultiArrayDimension()
        d.label, d.size, d.stride = label, int(size), int(stride)
        msg.layout.dim.append(d)
        stride //= max(1, int(size))
    return msg


class AdaptiveControllerNode(GuardedCommands, ThrottledWarnings, Node):
    """The node. Everything that depends on the model or the gains lives in ``self.rt``
    (model, controller, inputs, guard, command columns), replaced as a whole."""

    def __init__(self, node_name="adaptive_controller", **kwargs):
        super().__init__(node_name, **kwargs)
        self.params = Parameters(self)
        self.p = self.params.declare(PARAMS)
        self.throttle = cv.Throttle(self.p.log_throttle_sec)
        self.rt = None
        self.reference = None
        self.enabled = bool(self.p.start_enabled)
        self.hold = None            # position held without a reference
        self.last_t_ns = None       # stamp (or receive time) of the last controlled state
        self.dropped = 0
        self.clamped = 0
        self.controlled = 0         # states answered with a control torque
        self.last_tau = None
        self._subscribed = False
        self.cmd_pub = self.create_publisher(Float64MultiArray, "effort_controller/commands",
                                             COMMAND_QOS)
        self.torque_pub = self.create_publisher(JointState, "joint_torques", COMMAND_QOS)
        self.theta_pub = self.create_publisher(Float64MultiArray, "~/parameter_estimates", 10)
        self.error_pub = self.create_publisher(Float64MultiArray, "~/tracking_error", 10)
        self.create_service(SetBool, "~/enable", self._srv_enable)
        self.create_service(Trigger, "~/reset_parameters", self._srv_reset)
        self._start_model_source()

    @property
    def controller(self):
        return None if self.rt is None else self.rt.controller

    @property
    def stale(self):
        """The state timeout is active (the fallback is being sent)."""
        return self.rt is not None and self.rt.guard.in_timeout

    @property
    def stale_events(self):
        """State timeouts so far (of the current model)."""
        return 0 if self.rt is None else self.rt.guard.counts["timeouts"]

    # -- model, gains -------------------------------------------------------------------------
    def _prepare(self, base, p, theta_hat=None, origin=None):
        """(reason, runtime) for model ``base`` (from ``origin``, default the current one) and
        parameters ``p``; nothing is installed."""
        if base.nq != base.nv or any(n != 1 for n in base.joint_nq):
            return "JointState needs 1-DOF joints; the model has multi-DOF joints", None
        joints = p.joints or list(base.joint_names)
        unknown = [j for j in joints if j not in base.joint_names]
        if unknown:
            return "parameter joints names %s, not in the model" % unknown, None
        if len(set(joints)) != len(joints) or len(joints) != base.nv:
            return "parameter joints must name every model joint once", None
        try:
            p, gains_source = resolve_gains(p, origin or self.source.origin)
            controller = build_controller(base, p, theta_hat)
            model = controller.model
            limits = effort_limits(model, p.effort_limits)
            inputs = StatePipeline(model, p)
            guard = TorqueGuard(limits, lambda q: ldr.gravity_torques(model, q), guard_config(p))
        except ValueError as e:
            return str(e), None
        cols = np.array([model.joint_names.index(j) for j in joints], dtype=np.intp)
        return None, SimpleNamespace(base=base, model=model, controller=controller,
                                     inputs=inputs, guard=guard, cmd_cols=cols,
                                     gains_source=gains_source)

    def _adopt(self, base, origin):
        reason, rt = self._prepare(base, self.p, origin=origin)
        if reason:
            return reason
        self._install(rt, new_model=True)
        return None

    def _install(self, rt, new_model):
        if new_model:
            # the first call compiles / loads the numba kernels: now, before subscribing
            ctrl = rt.controller
            q0 = np.clip(np.zeros(rt.model.nq), rt.model.lower_limits, rt.model.upper_limits)
            warm_up(self, lambda: (ctrl.step(0.0, q0, q0 * 0, q0, q0 * 0, q0 * 0, 1e-3),
                                   ldr.gravity_torques(rt.model, q0)))   # gravity fallback
            ctrl.reset()
            self.reference = None
            self.hold = None
            self.last_t_ns = None
        elif self.rt is not None:          # same robot: its state carries over
            carry_over(rt, self.rt)
        self.rt = rt
        if new_model:
            self.get_logger().info(
                "adaptive Slotine-Li on %d joints, adapting %d parameters (%s); gains from %s"
                % (rt.model.nv, rt.controller.theta0.size,
                   ", ".join(rt.controller.adapted_bodies)
                   if len(rt.controller.adapted_bodies) < 4
                   else "%d bodies" % len(rt.controller.adapted_bodies), rt.gains_source))
        self._subscribe_inputs()          # once the kernels are compiled

    def _check(self, trial, names):
        """Validate a parameter update against the model it will meet (the new one when
        urdf_path or robot_description change with it); nothing is applied here."""
        reason, base, origin = self._staged_model(trial, names, REBUILD)
        if base is None:
            return reason, None
        keep = None
        if origin is None and self.rt is not None and not (
                {"payload_only", "adapt_body", "initial_parameters"} & names):
            keep = self.rt.controller.theta_hat
        reason, rt = self._prepare(base, trial, keep, origin)
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
        if self.rt is not None:
            self.rt.controller.adapt = self.p.adapt
            self.rt.guard.configure(guard_config(self.p))
        if {"state_timeout", "diagnostics_period"} & set(names):
            self._restart_guard_timers()

    # -- services ------------------------------------------------------------------------------
    def _srv_enable(self, request, response):
        if request.data and not self.enabled:
            # forget the old reference too: hold the position of the next state until a
            # new reference arrives (docs/control.md)
            self.enabled = True
            self.reference = None
            self.hold = None
            self.last_t_ns = None
            if self.rt is not None:     # a fresh guard: no timeout from before the pause
                old = self.rt.guard
                self.rt.guard = TorqueGuard(old.limits, old.gravity_fn, old.config)
            response.message = "enabled"
            self.get_logger().info("controller enabled")
        elif not request.data and self.enabled:
            self.enabled = False
            if self.rt is not None:
                self._send(self.rt.guard.final(), None)
            response.message = "disabled: zero torque sent"
            self.get_logger().info("controller disabled, zero torque sent")
        else:
            response.message = "already %s" % ("enabled" if self.enabled else "disabled")
        response.success = True
        return response

    def _srv_reset(self, request, response):
        if self.rt is None:
            response.success, response.message = False, "no robot model yet"
            return response
        self.rt.controller.set_theta_hat(self.rt.controller.theta0)
        response.success, response.message = True, "parameter estimates reset"
        self.get_logger().info("parameter estimates reset")
        return response

    # -- messages ------------------------------------------------------------------------------
    def _on_reference(self, msg):
        rt = self.rt
        ref, reason = cv.TrajectoryReference.from_msg(
            msg, rt.inputs.index, self.get_clock().now().nanoseconds)
        if reason is None and ref.q is None:
            reason = "the reference needs positions"
        if reason:
            return self._drop("reference", reason)
        self.reference = ref

    def _now_ns(self):
        return self.get_clock().now().nanoseconds

    def _guard_enabled(self):
        return self.enabled

    def _on_source(self, msg):
        reason = self.rt.inputs.secondary(msg, self._now_ns())
        if reason:
            self._drop("source_list", reason)

    def _on_state(self, msg):
        rt = self.rt
        now = self._now_ns()
        st, notes, reason = rt.inputs.state(msg, now)
        if reason:
            return self._drop("joint_states", reason)
        for note in notes:
            self.get_logger().warning(note)
        if not self.enabled:
            rt.inputs.accept(st[0])
            return
        stamp, q, v = st
        t_ns = stamp or now
        if rt.guard.in_timeout:
            self.last_t_ns = None          # no adaptation across the gap
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
            tau = rt.controller.step(t_ns * 1e-9, q, v, q_d, v_d, a_d, dt)
        except ValueError as e:
            return self._drop("joint_states", "controller refused the state: %s" % e)
        if self._guard_command(rt, tau, stamp, q, now) is None:
            return
        rt.inputs.accept(stamp)
        self.last_t_ns = t_ns
        self.controlled += 1
        k = self.p.monitor_decimation
        if k > 0 and self.controlled % k == 0:
            self._publish_monitors()

    def _send(self, tau, stamp_ns):
        """Torques on both outputs; joint_torques carries ``stamp_ns`` (the answered state's
        stamp) or, for a command of our own (fallback, zero), the node clock's now."""
        rt = self.rt
        self.last_tau = tau
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
        st = self.rt.controller.state
        n = self.rt.model.nv
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
