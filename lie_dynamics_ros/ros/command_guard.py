"""The torque guard and the input pipeline of the commanding nodes (inverse_dynamics_node with
``command_topic``, adaptive_controller_node): the same parameters with the same meaning.

The logic is ROS-free (``lie_dynamics_ros.safety``) and the parameters are the tables ``GUARD``
and ``INPUTS`` of ``schemas/common.py``; this module runs the watchdog and ``/diagnostics``
timers, and sends the final zero. docs/safety.md.
"""
import numpy as np
from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from rclpy.qos_overriding_options import QoSOverridingOptions
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from lie_dynamics_ros.ros import conversions as cv
from lie_dynamics_ros.ros.model_source import ModelSource
# carry_over works on runtime setups, ROS-free; re-exported for the nodes
from lie_dynamics_ros.runtime.commanding import carry_over  # noqa: F401
from lie_dynamics_ros.safety import (GuardConfig, JointStateMerger, LimitMonitor, TorqueGuard,
                                     VelocityEstimator)
from lie_dynamics_ros.safety.inputs import broadcast_values

#: commands are published reliably, as forward_command_controller subscribes
COMMAND_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)


def guard_config(p) -> GuardConfig:
    return GuardConfig(state_timeout=p.state_timeout, fallback=p.fallback,
                       max_torque_rate=p.max_torque_rate, clamp_efforts=p.clamp_efforts,
                       repeat_period=p.fallback_period)


class StatePipeline:
    """joint_states messages (main topic and ``source_list``) -> (stamp, q, v) in model order.

    Positions must be finite for the joints a message names; NaN velocities (and an empty
    velocity array) mean "not measured". Joints missing from a joint_states message are taken
    from the ``source_list`` topics (values fresh within ``state_timeout``) or held
    (``missing_joints: hold``); never from earlier joint_states messages.
    """

    def __init__(self, model, p):
        n = model.nv
        self.names = list(model.joint_names)
        self.index = cv.JointIndex(self.names)
        self._known = set(self.names)
        self._optional = np.zeros(n, dtype=bool)
        hold = broadcast_values("hold_positions", p.hold_positions, n, 0.0)
        self.merger = JointStateMerger(self.names, p.missing_joints, hold,
                                       max_age=p.state_timeout)
        self.estimate = p.unmeasured_velocity == "estimate"
        self.estimator = VelocityEstimator(n, p.velocity_cutoff_hz,
                                           max_gap=max(0.1, p.state_timeout))
        self.limits = LimitMonitor(self.names, model.lower_limits, model.upper_limits,
                                   p.position_limit_margin)
        self.stamps = cv.StampMonitor()
        self._told = set()

    def _parse(self, msg):
        js, reason = cv.parse_joint_state(msg, self.index, need=("position",), optional=(),
                                          required_joints=self._optional)
        if reason:
            return None, None, reason
        v = np.full(len(self.names), np.nan)
        if len(msg.velocity):
            idx, _ = self.index.lookup(msg.name, self._optional)
            have = idx >= 0
            v[have] = cv._as_array(msg.velocity)[idx[have]]
            bad = np.isinf(v)
            if bad.any():
                j = int(np.flatnonzero(bad)[0])
                return None, None, "non-finite velocity %r for joint '%s'" % (v[j], self.names[j])
        return js, v, None

    def secondary(self, msg, now_ns):
        """A message from a ``source_list`` topic: remembered, never answered. -> reason."""
        js, v, reason = self._parse(msg)
        if reason is None:
            self.merger.update(js.position, v, now_ns)
        return reason

    def state(self, msg, now_ns):
        """A message on joint_states -> ((stamp_ns, q, v), notes, None) or (None, [], reason).
        ``notes`` are one-time log lines. Call ``accept(stamp)`` once it is answered."""
        js, v, reason = self._parse(msg)
        if reason is None:
            q, v, held = self.merger.merge(js.position, v, now_ns)
            if q is None:
                reason = held
                unknown = [n for n in msg.name if n not in self._known]
                reason += " (unknown joints %s)" % unknown if unknown else ""
        if reason is None:
            reason = self.stamps.check(js.stamp_ns)
        if reason:
            return None, [], reason
        notes = []
        if held.any() and "hold" not in self._told:
            self._told.add("hold")
            notes.append("no source measures %s: held at hold_positions (missing_joints: "
                         "hold)" % [self.names[k] for k in np.flatnonzero(held)])
        unmeasured = np.isnan(v)
        t = js.stamp_ns or now_ns
        if self.estimate:
            est = self.estimator.update(q, t)
            v[unmeasured] = est[unmeasured]
        else:
            v[unmeasured] = 0.0
        if unmeasured.any() and "velocity" not in self._told:
            self._told.add("velocity")
            names = [self.names[k] for k in np.flatnonzero(unmeasured)]
            notes.append("joint_states carry no velocity for %s: %s" % (names, (
                "estimated from successive positions (first-order filter, cut-off %g Hz)"
                % self.estimator.cutoff_hz) if self.estimate else "read as zero"))
        notes += self.limits.check(q, v)
        return (js.stamp_ns, q, v), notes, None

    def accept(self, stamp_ns):
        self.stamps.accept(stamp_ns)


def make_guard(model, p, gravity_fn):
    """TorqueGuard of ``model`` with the node's parameters and effort limits."""
    return TorqueGuard(cv.finite_limits(model.effort_limits), gravity_fn, guard_config(p))


class GuardedCommands:
    """Mixin for the commanding nodes.

    The node provides ``self.p`` (its values, the tables ``GUARD`` and ``INPUTS`` among
    them), ``self.rt`` (None or an object with ``guard``, ``model``), ``self.dropped``,
    ``self._send(tau, stamp_ns)`` (publish on every command output) and
    ``self._guard_enabled()``. ``_start_guard()`` creates the watchdog
    and the diagnostics timer; ``on_shutdown()`` (called by ``run_node``) sends the final zero.
    """

    def _subscribe_inputs(self):
        """joint_states (and the ``source_list`` topics) and ``reference``, once: only after
        the first model's kernels are compiled, so no state waits behind a compilation."""
        if self._subscribed:
            return
        self._subscribed = True
        self.hot_subscription = self.create_subscription(
            JointState, "joint_states", self._on_state, qos_profile_sensor_data,
            qos_overriding_options=QoSOverridingOptions.with_default_policies())
        for topic in self.p.source_list:
            self.create_subscription(JointState, topic, self._on_source, qos_profile_sensor_data)
        self.create_subscription(JointTrajectory, "reference", self._on_reference, 10)

    def _staged_model(self, trial, names, rebuild):
        """(reason, model, origin) of a parameter update that touches ``rebuild``: the model
        it would run on, the one its urdf_path or robot_description gives (origin not None)
        or else the current one; model None when there is nothing to check (no rebuild, no
        model yet), reason set when the new description does not load."""
        if not names & rebuild:
            return None, None, None
        try:
            base, origin = self.source.load_staged(trial, names)
        except ValueError as e:
            return str(e), None, None
        if base is None and self.rt is not None:
            base = self.rt.base
        return None, base, origin

    def _start_model_source(self):
        """Last step of a commanding node's __init__: parameters are validated and applied
        through ``_check``/``_apply``, the guard runs, and the model loads (ValueError, exit 1,
        when urdf_path is unusable)."""
        self.source = ModelSource(self, self._adopt, parameters=self.params, start=False)
        self.params.listen(self._check, self._apply)
        self._start_guard()
        self.source.start()

    @property
    def model(self):
        return None if self.rt is None else self.rt.model

    def _start_guard(self):
        from diagnostic_msgs.msg import DiagnosticArray
        self._diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self._watchdog = None
        self._diag_timer = None
        self._restart_guard_timers()

    def _restart_guard_timers(self):
        for t in (self._watchdog, self._diag_timer):
            if t is not None:
                self.destroy_timer(t)
        self._watchdog = self.create_timer(self.watchdog_period(), self._guard_tick)
        self._diag_timer = self.create_timer(self.p.diagnostics_period, self._publish_diagnostics)

    def watchdog_period(self) -> float:
        """The fallback comes within this period after ``state_timeout``."""
        T = self.p.state_timeout
        return 0.01 if T <= 0 else min(0.01, max(0.005, T / 4))

    def _guard_enabled(self) -> bool:
        return True

    def _guard_tick(self):
        rt = self.rt
        if rt is None or not self._guard_enabled():
            return
        was = rt.guard.in_timeout
        cmd = rt.guard.poll(self.get_clock().now().nanoseconds)
        if cmd is None:
            return
        if not was:
            self._warn("timeout", "no valid joint states for %.3f s: sending the %s fallback "
                       "until they return" % (rt.guard.config.state_timeout,
                                              rt.guard.config.fallback))
        self._send(cmd, None)

    def _guard_command(self, rt, tau, stamp_ns, q, now_ns):
        """tau answering a valid state -> published command, or None (refused, counted)."""
        resumed = rt.guard.in_timeout
        clamped = rt.guard.counts["clamped_commands"]
        cmd = rt.guard.command(tau, stamp_ns, q, now_ns)
        if cmd is None:
            self._drop("joint_states", "non-finite torques")
            return None
        if resumed and self.throttle.ready("resumed"):
            self.get_logger().info("valid joint states again: commanding resumed")
        if rt.guard.counts["clamped_commands"] > clamped:
            self.clamped += 1
            names = [n for n, x in zip(rt.model.joint_names, rt.guard.clamped_mask(tau)) if x]
            self._warn("clamp", "clamped efforts to the effort limits on %s" % names)
        self._send(cmd, stamp_ns)
        return cmd

    def _publish_diagnostics(self):
        from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
        rt = self.rt
        st = DiagnosticStatus()
        st.name = "%s: torque guard" % self.get_fully_qualified_name()
        if rt is None:
            level, msg, counts = 0, "no robot model yet", {"dropped": self.dropped}
        else:
            st.hardware_id = rt.model.name or ""
            level, msg, counts = rt.guard.status(self.dropped)
        st.level = (DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR)[level]
        st.message = msg
        st.values = [KeyValue(key=k, value=str(v)) for k, v in sorted(counts.items())]
        arr = DiagnosticArray()
        arr.header.stamp = self.get_clock().now().to_msg()
        arr.status = [st]
        self._diag_pub.publish(arr)

    def on_shutdown(self):
        """SIGINT/SIGTERM: one final all-zero command (not slew-limited), delivered before
        the node goes."""
        rt = self.rt
        if rt is None:
            return
        self._send(rt.guard.final(), None)
        self.get_logger().info("stopping: final zero command sent")
        from rclpy.duration import Duration
        for pub in self._command_publishers():
            try:
                pub.wait_for_all_acked(Duration(seconds=0.5))
            except Exception:  # best effort: the message is already on the wire
                pass
