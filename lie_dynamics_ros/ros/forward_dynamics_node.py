"""forward_dynamics_node: the simulator (standalone, or as a companion next to Gazebo).

Integrates the robot model at ``rate`` Hz with the integrator named by ``integrator`` and
publishes ``joint_states`` (name, position, velocity, effort) after every step, and ``/clock``
when ``publish_clock`` is true. Torque commands come from ``effort_controller/commands``
(std_msgs/Float64MultiArray in ``joints`` order, as forward_command_controller takes them) and
``joint_torques`` (sensor_msgs/JointState efforts, by name). Joints listed in
``prescribed_joints`` follow the ``reference`` trajectory instead (Kim's hybrid dynamics); the
efforts published for them are the torques that this motion needs. Parameters and topics:
docs/ros.md.

Time: the simulation advances by exactly ``1/rate`` per step. Stamps are the simulation time,
which starts at 0 when ``publish_clock`` is true and at the node clock's "now" otherwise. The
watchdog (``command_timeout``) and zero-stamped references use the same time. Reloading the
model at run time (``robot_description`` / ``urdf_path``) keeps the time, and the position and
velocity of every joint whose name the new model shares.
"""
import sys
import time

import numpy as np
from rclpy.clock import Clock as RosClock, ClockType
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

import lie_dynamics_ros as ldr
from lie_dynamics_ros.ros import conversions as cv
from lie_dynamics_ros.ros.model_source import ModelSource, Param, declare_parameters
from lie_dynamics_ros.ros.node_common import (ThrottledWarnings, positive_number, run_node,
                                              three_values)

# ---------------------------------------------------------------------------------------------
# integrators: step(q, v, dt, accel=accel, t=0.0) -> (q, v), accel(t, q, v) -> a at time t
# (``integrators.simulate.make_stepper``)


def available_integrators():
    """Names the ``integrator`` parameter accepts: the fixed-step methods of
    ``lie_dynamics_ros.integrators.simulate`` (semi_implicit, RKMK, CF, ...)."""
    from lie_dynamics_ros.integrators.simulate import (SIMULATE_ADAPTIVE_METHODS,
                                                       SIMULATE_METHODS)
    return sorted(set(SIMULATE_METHODS) - set(SIMULATE_ADAPTIVE_METHODS))


def resolve_integrator(name, model):
    """Step function ``step(q, v, dt, accel=accel, t=0.0) -> (q, v)`` for ``name``.

    It is ``integrators.simulate.make_stepper(model, name)``: ``accel(t, q, v)`` is the
    acceleration at time ``t`` after the start of the step (forward or hybrid dynamics),
    evaluated once per stage. Raises ValueError for an unknown name.
    """
    reason = _known_integrator(name)
    if reason:
        raise ValueError(reason)
    from lie_dynamics_ros.integrators.simulate import make_stepper
    return make_stepper(model, name)


def _known_integrator(name):
    names = available_integrators()
    return None if name in names else "unknown integrator '%s' (available: %s)" % (
        name, ", ".join(names))


# ---------------------------------------------------------------------------------------------
# the simulation itself, without ROS


class Simulator:
    """State and step of the simulation; the node only feeds commands and publishes.

    Args:
        model: ldr model (1-DOF joints).
        dt_ns: step in nanoseconds.
        stepper: integrator step (see ``resolve_integrator``).
        prescribed: (nv,) bool mask of joints that follow the reference.
        q0, v0: initial state (nv,), model order.
        t0_ns: simulation time of the initial state.
    """

    def __init__(self, model, dt_ns, stepper, prescribed, q0, v0, t0_ns=0):
        self.model, self.stepper = model, stepper
        self.dt_ns, self.dt = int(dt_ns), int(dt_ns) * 1e-9
        self.prescribed = np.asarray(prescribed, dtype=bool)
        self.free = ~self.prescribed
        self.hybrid = bool(self.prescribed.any())
        self.q, self.v = np.array(q0, dtype=float), np.array(v0, dtype=float)
        self.t_ns = int(t0_ns)
        self.tau = np.zeros(model.nv)    # torques applied in the last step
        self.hold = self.q[self.prescribed].copy()
        self.reference = None            # conversions.TrajectoryReference
        self.steps = 0
        # per-step inputs of the acceleration callback (bound once, no closure per step)
        self._tau_cmd = np.zeros(model.nv)
        self._applied = None
        self._a_given = np.zeros(model.nv)
        self._accel = self._accel_hybrid if self.hybrid else self._accel_free

    def prescribed_motion(self, t_ns):
        """(q, v, a) of the prescribed joints at ``t_ns`` (each (k,)); q or v may be None
        when the reference gives only accelerations. Without a reference: hold still."""
        m = self.prescribed
        q, v, a = self.hold.copy(), np.zeros(m.sum()), np.zeros(m.sum())
        if self.reference is not None:
            rq, rv, ra = self.reference.sample(t_ns)
            covered = self.reference.mask[m]
            if rq is None:  # acceleration-only reference: integrate it, no override
                q = v = None
            else:
                q[covered] = rq[m][covered]
            if rv is not None and v is not None:
                v[covered] = rv[m][covered]
            if ra is not None:
                a[covered] = ra[m][covered]
        return q, v, a

    def _override(self, q, v, t_ns):
        """q, v with the prescribed joints set to the reference at ``t_ns``."""
        m = self.prescribed
        if self.hybrid:
            qp, vp, _ = self.prescribed_motion(t_ns)
            q, v = q.copy(), v.copy()
            if qp is not None:
                q[m] = qp
            if vp is not None:
                v[m] = vp
        return q, v

    def apply_prescribed(self):
        """Put the prescribed joints where the reference says they are now."""
        self.q, self.v = self._override(self.q, self.v, self.t_ns)

    def _accel_free(self, s, q, v):
        """Forward dynamics with the commanded torques (``s``: time into the step)."""
        if self._applied is None:
            self._applied = self._tau_cmd
        return ldr.forward_dynamics(self.model, q, v, self._tau_cmd)

    def _accel_hybrid(self, s, q, v):
        """Hybrid dynamics: the prescribed joints follow the reference at ``t + s``."""
        a_given = self._a_given
        a_given[self.prescribed] = self.prescribed_motion(self.t_ns + int(s * 1e9))[2]
        a_full, tau_full = ldr.hybrid_dynamics(self.model, q, v, a_given, self._tau_cmd,
                                               self.prescribed)
        if self._applied is None:
            self._applied = tau_full
        return a_full

    def step(self, tau_cmd):
        """One step with commanded torques ``tau_cmd`` (nv,) on the free joints.

        Raises FloatingPointError (state unchanged) if the step is not finite.
        """
        self._tau_cmd = np.array(tau_cmd, dtype=float)   # a copy: the caller may reuse it
        self._applied = None
        self.apply_prescribed()
        q, v = self.stepper(self.q, self.v, self.dt, accel=self._accel, t=0.0)
        t_next = self.t_ns + self.dt_ns
        tau = self._tau_cmd if self._applied is None else np.asarray(self._applied, dtype=float)
        q, v = self._override(q, v, t_next)
        if not (np.isfinite(q).all() and np.isfinite(v).all() and np.isfinite(tau).all()):
            raise FloatingPointError("simulation step is not finite")
        self.q, self.v, self.tau, self.t_ns = q, v, tau, t_next
        self.steps += 1


# ---------------------------------------------------------------------------------------------
# the node


PARAMS = [
    Param("rate", 1000.0, "double", "Simulation steps per second (Hz); dt = 1/rate.",
          read_only=True, check=positive_number),
    Param("integrator", "semi_implicit", "string",
          "Integrator on the configuration group: semi_implicit (symplectic Euler, default) or "
          "a fixed-step method of lie_dynamics_ros.integrators (rkmk4, cf4, heun, ...).",
          read_only=True, check=_known_integrator),
    Param("initial_positions", [], "double_array",
          "Initial joint positions in `joints` order (rad, m); default zeros.", read_only=True),
    Param("initial_velocities", [], "double_array",
          "Initial joint velocities in `joints` order; default zeros.", read_only=True),
    Param("joints", [], "string_array",
          "Joint order of effort_controller/commands and of the initial_* arrays; default: "
          "the model's joint order.", read_only=True),
    Param("prescribed_joints", [], "string_array",
          "Joints that follow the `reference` trajectory (hybrid dynamics) instead of "
          "integrating torques.", read_only=True),
    Param("publish_clock", False, "bool",
          "Publish /clock (simulation time). Keep false while Gazebo owns the clock.",
          read_only=True),
    Param("command_timeout", 0.5, "double",
          "Watchdog: apply zero torque when no command arrived for this many seconds of "
          "simulation time (<= 0 disables)."),
    Param("gravity", [0.0, 0.0, -9.81], "double_array", "Gravity in the world frame, m/s^2.",
          check=three_values),
    Param("enforce_effort_limits", True, "bool",
          "Clamp commanded torques to the URDF <limit effort> and report when it acts."),
    Param("log_throttle_sec", 2.0, "double",
          "Minimum period of repeated warnings (dropped commands, clamping, timing)."),
]


class ForwardDynamicsNode(ThrottledWarnings, Node):
    """Simulator node. ``drive="external"`` leaves the stepping to the caller (bringup's
    offline mode calls ``tick()``); the default ``"timer"`` steps on a wall timer."""

    def __init__(self, node_name="forward_dynamics", drive="timer", **kwargs):
        super().__init__(node_name, **kwargs)
        self.p = declare_parameters(self, PARAMS, on_change=self._on_params)
        self.dt_ns = max(1, int(round(1e9 / self.p.rate)))
        self.throttle = cv.Throttle(self.p.log_throttle_sec)
        self.sim = None
        self.cmd = None
        self.last_cmd_ns = None          # simulation time of the last accepted command
        self.last_cmd_stamp_ns = None    # header stamp of the last accepted joint_torques
        self.watchdog_trips = 0
        self.watchdog_tripped = False
        self.dropped = 0
        self.clamped = 0
        self.published = 0
        self.diverged = 0
        self.cmd_stamps = cv.StampMonitor()
        self.pub = self.create_publisher(JointState, "joint_states", 10)
        self.clock_pub = (self.create_publisher(Clock, "/clock", QoSProfile(depth=10))
                          if self.p.publish_clock else None)
        self.create_subscription(Float64MultiArray, "effort_controller/commands",
                                 self._on_array_command, 10)
        self.create_subscription(JointState, "joint_torques", self._on_state_command, 10)
        self.create_subscription(JointTrajectory, "reference", self._on_reference, 10)
        self._rate_window = (time.monotonic(), 0)
        self.achieved_rate = None
        self.source = ModelSource(self, self._set_model)
        if drive == "timer":
            # steady clock: with use_sim_time the node clock would wait for our own /clock
            self.timer = self.create_timer(self.dt_ns * 1e-9, self.tick,
                                           clock=RosClock(clock_type=ClockType.STEADY_TIME))

    # -- model and parameters ---------------------------------------------------------------
    def _set_model(self, model, origin):
        """Use ``model``; a reload keeps the simulation time and the state of the joints whose
        names both models share (the others start from the initial_* parameters)."""
        if model.nq != model.nv or any(n != 1 for n in model.joint_nq):
            return "JointState needs 1-DOF joints; the model has multi-DOF joints"
        names = list(model.joint_names)
        joints = self.p.joints or names
        for what, listed in (("joints", joints), ("prescribed_joints", self.p.prescribed_joints)):
            unknown = [j for j in listed if j not in names]
            if unknown:
                return "parameter %s names %s, not in the model" % (what, unknown)
        cols = np.array([names.index(j) for j in joints], dtype=np.intp)
        q0, v0 = np.zeros(model.nv), np.zeros(model.nv)
        for what, arr, vals in (("initial_positions", q0, self.p.initial_positions),
                                ("initial_velocities", v0, self.p.initial_velocities)):
            if vals:
                if len(vals) != len(joints):
                    return "%s has %d values for %d joints" % (what, len(vals), len(joints))
                arr[cols] = vals
        prescribed = np.array([n in self.p.prescribed_joints for n in names], dtype=bool)
        model = model.with_gravity(np.array(self.p.gravity, dtype=float))
        old = self.sim
        if old is None:
            t0 = 0 if self.p.publish_clock else self.get_clock().now().nanoseconds
        else:
            # a reload must not rewind the simulation: keep its time (/clock never goes
            # back) and the state of the joints both models share
            t0 = old.t_ns
            old_cols = {n: k for k, n in enumerate(old.model.joint_names)}
            for k, n in enumerate(names):
                if n in old_cols:
                    q0[k], v0[k] = old.q[old_cols[n]], old.v[old_cols[n]]
        stepper = resolve_integrator(self.p.integrator, model)
        sim = Simulator(model, self.dt_ns, stepper, prescribed, q0, v0, t0)
        if old is not None:
            sim.steps = old.steps
        self.sim = sim
        self.index = cv.JointIndex(names)
        self.cmd_cols = cols
        self.limits = cv.finite_limits(model.effort_limits)
        self.cmd = np.zeros(model.nv)
        self.last_cmd_ns = None
        self.cmd_stamps.reset()
        if old is None:
            self._started = False   # the first tick publishes the initial state
            self._rate_window = (time.monotonic(), 0)
        return None

    def _on_params(self, names):
        self.throttle.period_s = self.p.log_throttle_sec
        if self.sim is not None:
            self.sim.model = self.sim.model.with_gravity(np.array(self.p.gravity, dtype=float))

    # -- commands -----------------------------------------------------------------------------
    def _accept_command(self, cols, values):
        self.cmd[cols] = values
        self.last_cmd_ns = self.sim.t_ns
        if self.watchdog_tripped:
            self.watchdog_tripped = False
            self.get_logger().info("commands resumed")

    def _on_array_command(self, msg):
        if self.sim is None:
            return self._drop("effort_controller/commands", "no robot model yet")
        vals, reason = cv.parse_command_array(msg, len(self.cmd_cols))
        if reason:
            return self._drop("effort_controller/commands", reason)
        self._accept_command(self.cmd_cols, vals)

    def _on_state_command(self, msg):
        if self.sim is None:
            return self._drop("joint_torques", "no robot model yet")
        free = self.sim.free
        js, reason = cv.parse_joint_state(msg, self.index, need=("effort",), optional=(),
                                          required_joints=free)
        if reason is None:
            reason = self.cmd_stamps.check(js.stamp_ns)
        if reason:
            return self._drop("joint_torques", reason)
        self.cmd_stamps.accept(js.stamp_ns)
        self._accept_command(free, js.effort[free])
        self.last_cmd_stamp_ns = js.stamp_ns

    def _on_reference(self, msg):
        if self.sim is None:
            return self._drop("reference", "no robot model yet")
        ref, reason = cv.TrajectoryReference.from_msg(msg, self.index, self.sim.t_ns)
        if reason:
            return self._drop("reference", reason)
        self.sim.reference = ref

    # -- stepping -----------------------------------------------------------------------------
    def command_torques(self):
        """Torques for the next step: watchdog, then effort limits."""
        timeout = self.p.command_timeout
        if (timeout > 0 and self.last_cmd_ns is not None
                and self.sim.t_ns - self.last_cmd_ns > timeout * 1e9):
            if not self.watchdog_tripped:
                self.watchdog_tripped = True
                self.watchdog_trips += 1
                self.get_logger().warning(
                    "watchdog: no command for %.3f s, applying zero torque" % timeout)
            return np.zeros_like(self.cmd)
        if not self.p.enforce_effort_limits:
            return self.cmd.copy()   # never the array the next command is written into
        tau, acted = cv.clamp_efforts(self.cmd, self.limits)
        if acted.any():
            self.clamped += 1
            names = [n for n, x in zip(self.sim.model.joint_names, acted) if x]
            self._warn("clamp", "clamped commanded torques to the URDF limits on %s" % names)
        return tau

    def tick(self):
        """Publish the initial state on the first call, then one step + publish per call."""
        if self.sim is None:
            return
        if self._started:
            try:
                self.sim.step(self.command_torques())
            except (FloatingPointError, ValueError) as e:
                # diverged (step too large for the dynamics?): keep the last finite
                # configuration at rest, keep time and publishing going
                self.diverged += 1
                if self.throttle.ready("step"):
                    self.get_logger().error(
                        "simulation step failed (%s): velocities reset to zero; a higher "
                        "rate may help" % e)
                self.sim.v = np.zeros_like(self.sim.v)
                self.sim.tau = np.zeros_like(self.sim.tau)
                self.sim.t_ns += self.sim.dt_ns
                self.sim.steps += 1
        else:
            self.sim.apply_prescribed()
        self._started = True
        self._publish()
        self._measure_rate()

    def _publish(self):
        sim = self.sim
        msg = cv.make_joint_state(sim.model.joint_names, sim.t_ns, sim.q, sim.v, sim.tau)
        self.pub.publish(msg)
        if self.clock_pub is not None:
            clock = Clock()
            cv.set_stamp(clock.clock, sim.t_ns)
            self.clock_pub.publish(clock)
        self.published += 1
        if sim.prescribed.any():
            lim = self.limits[sim.prescribed]
            if (np.abs(sim.tau[sim.prescribed]) > lim).any():
                self._warn("prescribed", "the prescribed motion needs torques above the "
                           "URDF effort limits")

    def _measure_rate(self):
        t0, n0 = self._rate_window
        now = time.monotonic()
        if now - t0 >= 2.0:
            self.achieved_rate = (self.sim.steps - n0) / (now - t0)
            self._rate_window = (now, self.sim.steps)
            if hasattr(self, "timer") and self.achieved_rate < 0.9 * self.p.rate:
                self._warn("rate", "simulating at %.0f Hz, below rate %.0f Hz (%.2fx real "
                           "time)" % (self.achieved_rate, self.p.rate,
                                      self.achieved_rate / self.p.rate))


def main(args=None):
    """Console script ``forward_dynamics_node``; accepts standard ``--ros-args``."""
    return run_node(ForwardDynamicsNode, "forward_dynamics_node", args)


if __name__ == "__main__":
    sys.exit(main())
