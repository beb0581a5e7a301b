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

Start: with ``start_mode: wait_for_command`` (the default) the node publishes its initial
state, time advancing and the state held, until the first command arrives (or until
``start_timeout`` seconds of wall time have passed, when > 0); then it integrates. A
controller that starts a little later (or compiles its kernels first) thus finds the robot
where it was put, not falling. The kernels are compiled (or loaded from numba's cache) before
anything is subscribed.

Divergence: a step that produces a non-finite value or a joint speed above
``velocity_bound_factor`` x its URDF velocity limit stops the integration; the node logs the
simulation time, the joint and "reduce dt or use rkmk4", and keeps publishing the last finite
configuration at rest (garbage never reaches a subscriber).
"""
import sys
import time

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rclpy.clock import Clock as RosClock, ClockType
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

import lie_dynamics_ros as ldr
from lie_dynamics_ros.integrators.simulator import (SimulationDiverged,  # noqa: F401
                                                    Simulator, velocity_bounds)
from lie_dynamics_ros.ros import conversions as cv
from lie_dynamics_ros.ros.model_source import (ModelSource, Param, declare_parameters,
                                               read_parameters, robot_config_file)
from lie_dynamics_ros.ros.node_common import (ThrottledWarnings, nonnegative_number,
                                              positive_number, run_node, three_values,
                                              warm_up)

START_MODES = ("wait_for_command", "immediate")

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


# The simulation itself, without ROS, is lie_dynamics_ros.integrators.simulator.Simulator.


# ---------------------------------------------------------------------------------------------
# the node


PARAMS = [
    Param("rate", 1000.0, "double", "Simulation steps per second (Hz); dt = 1/rate.",
          read_only=True, check=positive_number),
    Param("real_time_factor", 1.0, "double",
          "Simulated seconds per wall second of the timer (steps every dt / factor). Below 1 "
          "gives controllers in other processes more wall time per step, so their commands "
          "arrive fewer simulated steps late.", read_only=True, check=positive_number),
    Param("lockstep", False, "bool",
          "Step only when a command answers the last published state (a joint_torques with "
          "that stamp, or any effort_controller/commands array from a controller that sends "
          "no joint_torques): the simulation then runs at the controller's pace, at most "
          "real_time_factor, and its result does not depend on the DDS latency. The "
          "controller must answer every state (inverse_dynamics_node, "
          "adaptive_controller_node).", read_only=True),
    Param("lockstep_timeout", 1.0, "double",
          "With lockstep: wall seconds to wait for the answer before stepping with the last "
          "command (the command watchdog then acts in simulation time); 0 waits forever.",
          check=nonnegative_number),
    Param("integrator", "semi_implicit", "string",
          "Integrator on the configuration group: semi_implicit (symplectic Euler, default) or "
          "a fixed-step method of lie_dynamics_ros.integrators (rkmk4, cf4, heun, ...).",
          read_only=True, check=_known_integrator),
    Param("loops_file", "", "string",
          "YAML file of loop closures added to the model's own (URDF <loop_joint> elements or "
          "the joints of an SDF that close cycles; docs/loops.md). A closed-loop model is "
          "simulated with constrained forward dynamics and projection after every step.",
          read_only=True),
    Param("initial_positions", [], "double_array",
          "Initial joint positions in `joints` order (rad, m); default: initial_state_file, "
          "else config/<robot>_initial_state.yaml when the package has one for the URDF's file "
          "name, else the neutral configuration (zeros, clipped to the joint limits).",
          read_only=True),
    Param("initial_state_file", "", "string",
          "YAML parameter file whose initial_positions / initial_velocities are used when "
          "those parameters are not set.", read_only=True),
    Param("start_mode", "wait_for_command", "string",
          "wait_for_command: publish the initial state, held, until the first command "
          "arrives (or start_timeout passes), then integrate; immediate: integrate from the "
          "first tick (zero torque until a command arrives).", read_only=True,
          check=lambda m: None if m in START_MODES else "must be one of %s" % (START_MODES,)),
    Param("start_timeout", 0.0, "double",
          "With start_mode wait_for_command: start integrating after this many seconds of "
          "wall time without a command (0 = wait for the first command).", read_only=True,
          check=nonnegative_number),
    Param("velocity_bound_factor", 100.0, "double",
          "Divergence check: a joint faster than this factor times its URDF velocity limit "
          "(1000 rad/s or m/s without one) stops the integration (0 disables; non-finite values "
          "always do).", check=nonnegative_number),
    Param("enforce_position_limits", False, "bool",
          "Stop joints at their URDF position limits (inelastic: the velocity into the limit "
          "is set to zero). Off by default: the URDF limits are often the controller's, not "
          "the mechanism's."),
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
        self.ticks = 0                   # published states (steps, held or not)
        self.cmd_stamps = cv.StampMonitor()
        self.integrating = False         # False while holding the initial state (start_mode)
        self.halted = None               # the divergence that stopped the integration
        self.lockstep_waits = 0          # lockstep: timer ticks that found no answer yet
        self.lockstep_timeouts = 0       # lockstep: steps taken without an answer
        self._answered = False           # lockstep: a command answered the last state
        self._owed = False               # lockstep: a timer tick waits for that answer
        self._published_ns = None        # stamp of the last published state
        self._published_wall = 0.0
        self._t_wall_start = time.monotonic()
        self.pub = self.create_publisher(JointState, "joint_states", 10)
        self.clock_pub = (self.create_publisher(Clock, "/clock", QoSProfile(depth=10))
                          if self.p.publish_clock else None)
        self._rate_window = (time.monotonic(), 0)
        self.achieved_rate = None
        # the model (and the kernels' compilation) before any subscription
        self.source = ModelSource(self, self._set_model)
        self.create_subscription(Float64MultiArray, "effort_controller/commands",
                                 self._on_array_command, 10)
        # the answer a lockstep simulation waits for: served straight from a wait set
        self.hot_subscription = self.create_subscription(JointState, "joint_torques",
                                                         self._on_state_command, 10)
        self.create_subscription(JointTrajectory, "reference", self._on_reference, 10)
        self.create_subscription(WrenchStamped, "external_wrench", self._on_wrench, 10)
        if drive == "timer":
            # steady clock: with use_sim_time the node clock would wait for our own /clock
            self.timer = self.create_timer(self.dt_ns * 1e-9 / self.p.real_time_factor, self.tick,
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
        q0 = np.clip(ldr.neutral_configuration(model), model.lower_limits, model.upper_limits)
        v0 = np.zeros(model.nv)
        given, source = self._initial_state(origin)
        for what, arr in (("initial_positions", q0), ("initial_velocities", v0)):
            vals = given.get(what)
            if vals:
                if len(vals) != len(joints):
                    return "%s (%s) has %d values for %d joints" % (what, source, len(vals),
                                                                    len(joints))
                arr[cols] = vals
        prescribed = np.array([n in self.p.prescribed_joints for n in names], dtype=bool)
        model = model.with_gravity(np.array(self.p.gravity, dtype=float))
        if self.p.loops_file:
            try:
                model = model.with_loops(tuple(model.loops)
                                         + tuple(ldr.load_loops_yaml(self.p.loops_file)))
            except ValueError as e:
                return "loops_file %r: %s" % (self.p.loops_file, e)
        if model.nc and prescribed.any():
            return "prescribed_joints are not supported on a model with loop closures"
        if model.nc:
            try:       # the initial state onto the closures (assembly, consistent velocities)
                q0 = ldr.assemble(model, q0)
                q0, v0 = ldr.project(model, q0, v0)
            except ValueError as e:
                return "the initial state cannot close the loops: %s" % e
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
        self._warm_up(model, q0)
        sim = self._make_simulator(model, prescribed, q0, v0, t0)
        if old is not None:
            sim.steps = old.steps
            sim.t0_ns = old.t0_ns
        self.sim = sim
        self.halted = None
        self.index = cv.JointIndex(names)
        self.cmd_cols = cols
        self.limits = cv.finite_limits(model.effort_limits)
        self.cmd = np.zeros(model.nv)
        self.last_cmd_ns = None
        self.cmd_stamps.reset()
        if old is None:
            self._started = False   # the first tick publishes the initial state
            self._rate_window = (time.monotonic(), self.ticks)
            self._t_wall_start = time.monotonic()
            self.integrating = self.p.start_mode == "immediate"
            if not self.integrating:
                self.get_logger().info(
                    "holding the initial state (%s) until the first command arrives%s "
                    "(start_mode wait_for_command)" % (source, "" if self.p.start_timeout <= 0
                                                       else " or %.1f s pass"
                                                       % self.p.start_timeout))
        return None

    def _make_simulator(self, model, prescribed, q0, v0, t0):
        limits = ((model.lower_limits, model.upper_limits) if self.p.enforce_position_limits
                  else None)
        return Simulator(model, self.dt_ns, resolve_integrator(self.p.integrator, model),
                         prescribed, q0, v0, t0,
                         velocity_bound=velocity_bounds(model, self.p.velocity_bound_factor),
                         position_limits=limits)

    def _warm_up(self, model, q0):
        """Compile (cold numba cache) or load the kernels of one step now, before any
        subscription, not on the first command."""
        def one_step():
            sim = Simulator(model, self.dt_ns, resolve_integrator(self.p.integrator, model),
                            np.zeros(model.nv, dtype=bool), q0, np.zeros(model.nv))
            try:
                sim.step(np.zeros(model.nv))
            except FloatingPointError:
                pass   # compiled all the same; the real run reports divergence itself
            if self.p.prescribed_joints:
                ldr.hybrid_dynamics(model, q0, np.zeros(model.nv), np.zeros(model.nv),
                                    np.zeros(model.nv), np.ones(model.nv, dtype=bool))
        warm_up(self, one_step)

    def _initial_state(self, origin):
        """({initial_positions, initial_velocities}, where they come from): the parameters,
        else initial_state_file, else config/<urdf stem>_initial_state.yaml of the package,
        else {} (the neutral configuration at rest)."""
        if self.p.initial_positions or self.p.initial_velocities:
            return ({"initial_positions": list(self.p.initial_positions),
                     "initial_velocities": list(self.p.initial_velocities)}, "parameters")
        path = self.p.initial_state_file or robot_config_file(origin, "_initial_state.yaml")
        if not path:
            return {}, "the neutral configuration"
        return read_initial_state(path), path

    def _on_params(self, names):
        self.throttle.period_s = self.p.log_throttle_sec
        if self.sim is not None and ("gravity" in names or "velocity_bound_factor" in names
                                     or "enforce_position_limits" in names):
            old = self.sim
            model = old.model.with_gravity(np.array(self.p.gravity, dtype=float))
            sim = self._make_simulator(model, old.prescribed, old.q, old.v, old.t_ns)
            sim.steps, sim.t0_ns, sim.reference, sim.f_ext = (old.steps, old.t0_ns,
                                                              old.reference, old.f_ext)
            sim.hold = old.hold
            self.sim = sim

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
        if self.last_cmd_stamp_ns is None:     # arrays carry no stamp: any one answers
            self._answer()

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
        if self._published_ns is not None and js.stamp_ns >= self._published_ns:
            self._answer()

    def _answer(self):
        """Lockstep: the last published state has its command; take the step a timer tick
        left waiting for it."""
        self._answered = True
        if self._owed:
            self._owed = False
            self.tick()

    def _on_reference(self, msg):
        if self.sim is None:
            return self._drop("reference", "no robot model yet")
        ref, reason = cv.TrajectoryReference.from_msg(msg, self.index, self.sim.t_ns)
        if reason:
            return self._drop("reference", reason)
        self.sim.reference = ref

    def _on_wrench(self, msg):
        """geometry_msgs/WrenchStamped: a wrench on the link named by header.frame_id,
        (force, torque) in that link's frame, applied from now on (a zero wrench removes it)."""
        if self.sim is None:
            return self._drop("external_wrench", "no robot model yet")
        f, t = msg.wrench.force, msg.wrench.torque
        try:
            self.sim.set_external_wrench(msg.header.frame_id, [f.x, f.y, f.z, t.x, t.y, t.z])
        except (ValueError, KeyError) as e:   # InputError is a ValueError
            return self._drop("external_wrench", "header.frame_id %r: %s"
                              % (msg.header.frame_id, e))

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
        """Publish the initial state on the first call, then one step + publish per call.

        While holding (start_mode wait_for_command, no command yet) or after a divergence,
        a call advances the time and publishes the state unchanged."""
        if self.sim is None:
            return
        if self._started and not self.integrating:
            self._maybe_start()
        if (self.p.lockstep and self._started and self.integrating and self.halted is None
                and not self._answered and not self._lockstep_expired()):
            self.lockstep_waits += 1
            self._owed = True
            return
        if self._started and self.integrating and self.halted is None:
            try:
                self.sim.step(self.command_torques())
            except (FloatingPointError, ValueError) as e:
                self._halt(e)
                self.sim.hold_step()
        elif self._started:
            self.sim.hold_step()
        else:
            self.sim.apply_prescribed()
        self._started = True
        self.ticks += 1
        self._publish()
        self._measure_rate()

    def _lockstep_expired(self):
        timeout = self.p.lockstep_timeout
        if timeout <= 0 or time.monotonic() - self._published_wall < timeout:
            return False
        self.lockstep_timeouts += 1
        self._warn("lockstep", "lockstep: no command answered the state of t = %.3f s within "
                   "%.1f s; stepping with the last command"
                   % ((self._published_ns - self.sim.t0_ns) * 1e-9, timeout))
        return True

    def _maybe_start(self):
        timeout = self.p.start_timeout
        if self.last_cmd_ns is not None:
            why = "first command received"
        elif timeout > 0 and time.monotonic() - self._t_wall_start >= timeout:
            why = "no command for start_timeout %.1f s" % timeout
        else:
            return
        self.integrating = True
        self.get_logger().info("integrating from t = %.3f s (%s)%s"
                               % ((self.sim.t_ns - self.sim.t0_ns) * 1e-9, why,
                                  ", in lockstep with the controller" if self.p.lockstep
                                  else ""))

    def _halt(self, error):
        """Stop integrating for good (until a new model): the last finite configuration stays,
        at rest, and is published from now on."""
        self.diverged += 1
        self.halted = str(error)
        self.get_logger().error("%s. Integration stopped; publishing the last finite "
                                "configuration at rest." % error)
        self.sim.v = np.zeros_like(self.sim.v)
        self.sim.tau = np.zeros_like(self.sim.tau)

    def _publish(self):
        sim = self.sim
        msg = cv.make_joint_state(sim.model.joint_names, sim.t_ns, sim.q, sim.v, sim.tau)
        self._answered = False
        self._owed = False
        self._published_ns = sim.t_ns
        self._published_wall = time.monotonic()
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
            self.achieved_rate = (self.ticks - n0) / (now - t0)
            self._rate_window = (now, self.ticks)
            wanted = self.p.rate * self.p.real_time_factor
            if (hasattr(self, "timer") and not self.p.lockstep
                    and self.achieved_rate < 0.9 * wanted):
                self._warn("rate", "simulating at %.0f steps/s, below %.0f (%.2fx real "
                           "time)" % (self.achieved_rate, wanted,
                                      self.achieved_rate / self.p.rate))


def read_initial_state(path):
    """initial_positions / initial_velocities from a ros__parameters YAML file (the first
    node entry that has them; keys like ``/**/forward_dynamics:`` or ``/**:``)."""
    return read_parameters(path, ("initial_positions", "initial_velocities"))


def main(args=None):
    """Console script ``forward_dynamics_node``; accepts standard ``--ros-args``."""
    return run_node(ForwardDynamicsNode, "forward_dynamics_node", args)


if __name__ == "__main__":
    sys.exit(main())
