"""The simulator's runtime: everything ``forward_dynamics_node`` does between parsing a
message and publishing, without ROS.

- **Model.** 1-DOF joints, joint names the parameters know, gravity, ``loops_file``, the
  initial state (parameters, else ``initial_state_file``, else the robot's
  ``config/<urdf stem>_initial_state.yaml``, else neutral clipped to the limits) assembled onto
  the loop closures. A reload keeps the simulation time and the state of every joint both
  models share; commands, watchdog and reference start afresh.
- **Start.** ``wait_for_command`` holds the initial state (time advancing) until the first
  command or ``start_timeout`` wall seconds; ``immediate`` integrates from the first tick.
- **Lockstep.** A tick steps only once a command answered the last published state
  (a ``joint_torques`` stamped with it, or any array when no stamped commands come), or
  ``lockstep_timeout`` wall seconds passed; the answer takes the step the tick owed. A
  timeout steps once with the last command and the next step waits again: a controller
  stalled for a few seconds (a loaded machine) catches up with the state it missed, where
  running on without it would hand its late commands to newer states, a delay that makes the
  arm's damping loop unstable. A silence is said once, until a command arrives again; the
  controllers of this package answer every state (a disabled one with zero), so only a dead
  or stalled controller costs a timeout per step.
- **Commands.** Held until the watchdog (``command_timeout`` of simulation time) applies zero;
  clamped to the URDF effort limits. Both are ``safety.TorqueGuard`` with the zero fallback.
- **Joint damping and friction** of the model (URDF ``<dynamics>``) act on the joints
  that are not prescribed while ``apply_joint_friction`` is true (``Simulator``), except on a
  model with loop closures (a warning says so).
- **Divergence** (``integrators.simulator.SimulationDiverged``) stops the integration for
  good: the last finite configuration is published at rest.

The wall clock, the node clock (the start time when ``publish_clock`` is false: with
use_sim_time the first state waits for its first /clock), the log sink
and the kernel warm-up are injected, so tests drive all of it deterministically.
"""
import time
from typing import Callable, NamedTuple, Optional

import numpy as np

from ..algorithms.configuration import neutral_configuration
from ..algorithms.constrained import assemble, project
from ..algorithms.dynamics import hybrid_dynamics
from ..integrators.passive import has_passive
from ..integrators.registry import resolve_integrator
from ..integrators.simulator import Simulator, velocity_bounds
from ..safety.guard import GuardConfig, TorqueGuard
from .stamps import StampMonitor
from .config_files import read_parameters, robot_config_file
from .robot import joint_state_reason, unknown_joints_reason, with_loops_file

START_MODES = ("wait_for_command", "immediate")
NO_MODEL = "no robot model yet"


class State(NamedTuple):
    """What a node publishes after a tick: joint_states (and /clock at ``t_ns``)."""
    t_ns: int
    names: tuple
    q: np.ndarray
    v: np.ndarray
    tau: np.ndarray


def read_initial_state(path):
    """initial_positions / initial_velocities of a ros__parameters YAML file."""
    return read_parameters(path, ("initial_positions", "initial_velocities"))


def _log_nowhere(level, text, key=None):
    pass


class SimulationRuntime:
    """The simulator between messages. ``params`` is the node's typed parameter namespace (the
    names of ``ros/schemas/simulator.py``), read when used, so run-time changes apply;
    ``reconfigure(names)`` after a change rebuilds what depends on them.

    Args:
        log: ``log(level, text, key=None)``, level "info" | "warning" | "error"; with a key
            the sink may throttle repeats of that key.
        wall: monotonic wall clock, seconds (start_timeout, lockstep_timeout, rate).
        clock_ns: node clock, ns: the start time when ``publish_clock`` is false.
        warm_up: ``warm_up(fn)`` runs ``fn`` (the first step's compilation) for the node.
        timed: stepped by a wall timer (then a rate below 90 % of ``rate`` is reported).
    """

    def __init__(self, params, log: Callable = _log_nowhere, wall: Callable = time.monotonic,
                 clock_ns: Callable = lambda: 0, warm_up: Optional[Callable] = None,
                 timed: bool = False):
        self.p, self.log, self.wall, self.clock_ns = params, log, wall, clock_ns
        self._warm_up = warm_up or (lambda fn: fn())
        self.timed = timed
        self.dt_ns = max(1, int(round(1e9 / params.rate)))
        self.sim = None                  # integrators.simulator.Simulator
        self.guard = None                # safety.TorqueGuard: watchdog and effort clamp
        self.cmd = None                  # last commanded torques as received (model order)
        self.cmd_cols = None             # model columns of the `joints` order
        self.cmd_stamps = StampMonitor()
        self.last_cmd_ns = None          # simulation time of the last accepted command
        self.last_cmd_stamp_ns = None    # header stamp of the last accepted joint_torques
        self.integrating = False         # False while holding the initial state
        self.halted = None               # the divergence that stopped the integration
        self.achieved_rate = None
        self.names = ()                  # joint names of the model in use
        for k in ("watchdog_trips", "dropped", "clamped", "published", "diverged", "ticks",
                  "lockstep_waits", "lockstep_timeouts"):
            setattr(self, k, 0)
        self._started = False            # the initial state is published
        self._clock_wait_logged = False  # "waiting for /clock" said once
        self._tripped = False            # the watchdog applies zero (logged once per trip)
        self._answered = False           # lockstep: a command answered the last state
        self._owed = False               # lockstep: a tick waits for that answer
        self._unanswered = False         # lockstep: timed out, silence said, until a command
        self._published_ns = None
        self._published_wall = 0.0
        self._t_wall_start = self._rate_window = None

    @property
    def n_commands(self) -> int:
        """Length of an effort_controller/commands array (the `joints` parameter)."""
        return 0 if self.cmd_cols is None else len(self.cmd_cols)

    # -- model ----------------------------------------------------------------------------
    def set_model(self, model, origin: Optional[str] = None) -> Optional[str]:
        """Use ``model`` (loaded from ``origin``, e.g. "urdf_path <path>"); None, or the reason
        it cannot be used (nothing changes then)."""
        p = self.p
        names = list(model.joint_names)
        joints = list(p.joints) or names
        reason = (joint_state_reason(model) or unknown_joints_reason(model, "joints", joints)
                  or unknown_joints_reason(model, "prescribed_joints", p.prescribed_joints))
        if reason:
            return reason
        cols = np.array([names.index(j) for j in joints], dtype=np.intp)
        q0 = np.clip(neutral_configuration(model), model.lower_limits, model.upper_limits)
        v0 = np.zeros(model.nv)
        try:
            given, source = self._initial_state(origin)
        except (OSError, ValueError) as e:
            return "initial state: %s" % e
        for what, arr in (("initial_positions", q0), ("initial_velocities", v0)):
            vals = given.get(what)
            if vals:
                if len(vals) != len(joints):
                    return "%s (%s) has %d values for %d joints" % (what, source, len(vals),
                                                                    len(joints))
                arr[cols] = vals
        prescribed = np.array([n in p.prescribed_joints for n in names], dtype=bool)
        try:
            model = with_loops_file(model.with_gravity(np.array(p.gravity, dtype=float)),
                                    p.loops_file)
        except ValueError as e:
            return str(e)
        if model.nc and prescribed.any():
            return "prescribed_joints are not supported on a model with loop closures"
        if model.nc:
            try:       # the initial state onto the closures (assembly, consistent velocities)
                q0 = assemble(model, q0)
                q0, v0 = project(model, q0, v0)
            except ValueError as e:
                return "the initial state cannot close the loops: %s" % e
        old = self.sim
        if old is None:
            t0 = 0 if p.publish_clock else int(self.clock_ns())
        else:
            # a reload must not rewind (/clock never goes back): keep the time and the
            # state of the joints both models share
            t0 = old.t_ns
            old_cols = {n: k for k, n in enumerate(old.model.joint_names)}
            for k, n in enumerate(names):
                if n in old_cols:
                    q0[k], v0[k] = old.q[old_cols[n]], old.v[old_cols[n]]
        self._warm_up(lambda: self._first_step(model, q0))
        sim = self._simulator(model, prescribed, q0, v0, t0)
        if old is not None:
            sim.steps, sim.t0_ns = old.steps, old.t0_ns
        self.sim, self.halted, self.cmd_cols, self.names = sim, None, cols, tuple(names)
        self.cmd = np.zeros(model.nv)
        self.guard = TorqueGuard(model.effort_limits, config=self._guard_config())
        self.last_cmd_ns, self._tripped = None, False
        self.cmd_stamps.reset()
        if old is None:
            self._t_wall_start = self.wall()
            self._rate_window = (self._t_wall_start, self.ticks)
            self.integrating = p.start_mode == "immediate"
            if not self.integrating:
                self.log("info", "holding the initial state (%s) until the first command "
                         "arrives%s (start_mode wait_for_command)" % (
                             source, "" if p.start_timeout <= 0
                             else " or %.1f s pass" % p.start_timeout))
        return None

    def _initial_state(self, origin):
        """({initial_positions, initial_velocities}, where they come from)."""
        p = self.p
        if p.initial_positions or p.initial_velocities:
            return ({"initial_positions": list(p.initial_positions),
                     "initial_velocities": list(p.initial_velocities)}, "parameters")
        path = p.initial_state_file or robot_config_file(origin, "_initial_state.yaml")
        if not path:
            return {}, "the neutral configuration"
        return read_initial_state(path), path

    def _simulator(self, model, prescribed, q0, v0, t0):
        p = self.p
        limits = ((model.lower_limits, model.upper_limits) if p.enforce_position_limits
                  else None)
        friction = bool(p.apply_joint_friction) and has_passive(model)
        if friction and model.nc:
            self.log("warning", "joint damping and friction are not applied on a model with "
                     "loop closures")
            friction = False
        return Simulator(model, self.dt_ns, resolve_integrator(p.integrator, model),
                         prescribed, q0, v0, t0,
                         velocity_bound=velocity_bounds(model, p.velocity_bound_factor),
                         position_limits=limits, joint_friction=friction)

    def _first_step(self, model, q0):
        """Compile (cold numba cache) or load the kernels of one step."""
        nv = model.nv
        sim = Simulator(model, self.dt_ns, resolve_integrator(self.p.integrator, model),
                        np.zeros(nv, dtype=bool), q0, np.zeros(nv), joint_friction=False)
        try:
            sim.step(np.zeros(nv))
        except FloatingPointError:
            pass   # compiled all the same; the real run reports divergence itself
        if self.p.prescribed_joints:
            hybrid_dynamics(model, q0, np.zeros(nv), np.zeros(nv), np.zeros(nv),
                            np.ones(nv, dtype=bool))

    def _guard_config(self):
        # the simulator's watchdog: zero torque, no slew limit, simulation time
        return GuardConfig(state_timeout=max(0.0, self.p.command_timeout), fallback="zero",
                           clamp_efforts=self.p.enforce_effort_limits)

    def reconfigure(self, names):
        """Parameters ``names`` changed at run time: rebuild what depends on them."""
        if self.sim is None:
            return
        if {"command_timeout", "enforce_effort_limits"} & set(names):
            self.guard.configure(self._guard_config())
        if {"gravity", "velocity_bound_factor", "enforce_position_limits",
                "apply_joint_friction"} & set(names):
            old = self.sim
            sim = self._simulator(old.model.with_gravity(np.array(self.p.gravity, dtype=float)),
                                  old.prescribed, old.q, old.v, old.t_ns)
            for k in ("steps", "t0_ns", "reference", "f_ext", "hold"):
                setattr(sim, k, getattr(old, k))
            self.sim = sim

    # -- inputs ---------------------------------------------------------------------------
    def drop(self, topic, reason):
        """A message on ``topic`` is refused for ``reason``: counted and logged."""
        self.dropped += 1
        self.log("warning", "dropped %s: %s" % (topic, reason), key=topic)

    def command_array(self, values, reason=None) -> Optional[State]:
        """effort_controller/commands (``values`` in `joints` order, or the parse ``reason``
        it was refused for). Returns the state to publish when it answered an owed step."""
        if self.sim is None or reason:
            return self.drop("effort_controller/commands", reason or NO_MODEL)
        if not self._accept("effort_controller/commands", self.cmd_cols, values):
            return None
        if self.last_cmd_stamp_ns is None:     # arrays carry no stamp: any one answers
            return self._answer()
        return None

    def joint_torques(self, effort, stamp_ns, reason=None) -> Optional[State]:
        """joint_torques: ``effort`` in model order (the free joints are used), header stamp
        ``stamp_ns``. Answers the last published state when stamped at or after it."""
        topic = "joint_torques"
        if self.sim is None or reason:
            return self.drop(topic, reason or NO_MODEL)
        reason = self.cmd_stamps.check(stamp_ns)
        if reason and stamp_ns != self._published_ns:
            # an exact answer to the last state counts even after a command stamped later
            # (a controller's own zero or fallback, stamped with its clock's now)
            return self.drop(topic, reason)
        free = self.sim.free
        if not self._accept(topic, free, np.asarray(effort, dtype=float)[free]):
            return None
        self.cmd_stamps.accept(stamp_ns)
        self.last_cmd_stamp_ns = stamp_ns
        if self._published_ns is not None and stamp_ns >= self._published_ns:
            return self._answer()
        return None

    def _accept(self, topic, cols, values) -> bool:
        cmd = self.cmd.copy()
        cmd[cols] = values
        clamped = self.guard.counts["clamped_commands"]
        held = self.guard.command(cmd, 0, None, self.sim.t_ns)   # watchdog in simulation time
        if held is None:
            self.drop(topic, "non-finite torques")
            return False
        self.cmd, self.last_cmd_ns = cmd, self.sim.t_ns
        if self.guard.counts["clamped_commands"] > clamped:
            self.clamped += 1
            names = [n for n, x in zip(self.sim.model.joint_names,
                                       self.guard.clamped_mask(cmd)) if x]
            self.log("warning", "clamped commanded torques to the URDF limits on %s" % names,
                     key="clamp")
        if self._tripped:
            self._tripped = False
            self.log("info", "commands resumed")
        if self._unanswered:
            self._unanswered = False
            self.log("info", "lockstep: commands arrive again; each step waits for its answer")
        return True

    def _answer(self) -> Optional[State]:
        """Lockstep: the last published state has its command; take the owed step."""
        self._answered = True
        if self._owed:
            self._owed = False
            return self.tick()
        return None

    def reference(self, ref, reason=None) -> None:
        """The prescribed joints' trajectory (``conversions.TrajectoryReference``)."""
        if self.sim is None or reason:
            return self.drop("reference", reason or NO_MODEL)
        self.sim.reference = ref

    def wrench(self, link, wrench) -> None:
        """A wrench (force, torque) on ``link`` in its frame from now on; zero removes it."""
        if self.sim is None:
            return self.drop("external_wrench", NO_MODEL)
        try:
            self.sim.set_external_wrench(link, wrench)
        except (ValueError, KeyError) as e:   # InputError is a ValueError
            self.drop("external_wrench", "header.frame_id %r: %s" % (link, e))

    # -- stepping -------------------------------------------------------------------------
    def command_torques(self):
        """Torques of the next step: the held command, clamped, or zero from the watchdog."""
        self.guard.poll(self.sim.t_ns)
        if self.guard.in_timeout and not self._tripped:
            self._tripped = True
            self.watchdog_trips += 1
            self.log("warning", "watchdog: no command for %.3f s, applying zero torque"
                     % self.p.command_timeout)
        last = self.guard.last
        return np.zeros(self.sim.model.nv) if last is None else last.copy()

    def tick(self) -> Optional[State]:
        """The initial state on the first call, then one step per call; None while lockstep
        waits for the answer (the step is then owed to it). Holding (no command yet) or
        halted, the time advances and the state stays."""
        sim = self.sim
        if sim is None or not (self._started or self._clock_started(sim)):
            return None
        if self._started and not self.integrating:
            self._maybe_start()
        running = self._started and self.integrating and self.halted is None
        if (running and self.p.lockstep and not self._answered
                and not self._lockstep_expired()):
            self.lockstep_waits += 1
            self._owed = True
            return None
        if running:
            try:
                sim.step(self.command_torques())
            except (FloatingPointError, ValueError) as e:
                self._halt(e)
                sim.hold_step()
        elif self._started:
            sim.hold_step()
        else:
            sim.apply_prescribed()
        self._started = True
        self.ticks += 1
        self._measure_rate()
        return self._published()

    def _clock_started(self, sim) -> bool:
        """Without ``publish_clock`` the simulation time starts at the node clock's, which
        with use_sim_time reads 0 until another node's /clock (Gazebo's) has arrived: the
        first state waits for it and starts there, on that clock's time axis."""
        if self.p.publish_clock or sim.steps or sim.t_ns:
            return True
        now = int(self.clock_ns())
        if now <= 0:
            if not self._clock_wait_logged:
                self._clock_wait_logged = True
                self.log("info", "waiting for /clock (use_sim_time true, publish_clock false): "
                         "the simulation time starts at that clock's time")
            return False
        sim.t0_ns = sim.t_ns = now
        return True

    def _published(self) -> State:
        sim = self.sim
        self._answered = self._owed = False
        self._published_ns, self._published_wall = sim.t_ns, self.wall()
        self.published += 1
        m = sim.prescribed
        if m.any() and (np.abs(sim.tau[m]) > self.guard.limits[m]).any():
            self.log("warning", "the prescribed motion needs torques above the URDF effort "
                     "limits", key="prescribed")
        return State(sim.t_ns, self.names, sim.q, sim.v, sim.tau)

    def _lockstep_expired(self) -> bool:
        timeout = self.p.lockstep_timeout
        if timeout <= 0 or self.wall() - self._published_wall < timeout:
            return False
        self.lockstep_timeouts += 1
        if not self._unanswered:
            self._unanswered = True
            self.log("warning", "lockstep: no command answered the state of t = %.3f s within "
                     "%.1f s; stepping with the last command once per %.1f s until a command "
                     "arrives again (is the controller running?)"
                     % ((self._published_ns - self.sim.t0_ns) * 1e-9, timeout, timeout))
        return True

    def _maybe_start(self):
        timeout = self.p.start_timeout
        if self.last_cmd_ns is not None:
            why = "first command received"
        elif timeout > 0 and self.wall() - self._t_wall_start >= timeout:
            why = "no command for start_timeout %.1f s" % timeout
        else:
            return
        self.integrating = True
        self.log("info", "integrating from t = %.3f s (%s)%s"
                 % ((self.sim.t_ns - self.sim.t0_ns) * 1e-9, why,
                    ", in lockstep with the controller" if self.p.lockstep else ""))

    def _halt(self, error):
        """Stop integrating until a new model: the last finite configuration, at rest."""
        self.diverged += 1
        self.halted = str(error) + self._command_history()
        self.log("error", "%s. Integration stopped; publishing the last finite "
                 "configuration at rest." % self.halted)
        self.sim.v = np.zeros_like(self.sim.v)
        self.sim.tau = np.zeros_like(self.sim.tau)

    def _command_history(self) -> str:
        """What the controller did before a divergence: the likeliest cause of a fall."""
        t0 = self.sim.t0_ns
        if self.last_cmd_ns is None:
            return " (no controller command has been received)"
        if self._tripped:
            since = (self.last_cmd_ns - t0) * 1e-9 + self.p.command_timeout
            return (" (the watchdog has applied zero torque since t = %.3f s: no command for "
                    "command_timeout)" % since)
        return " (last command at t = %.3f s)" % ((self.last_cmd_ns - t0) * 1e-9)

    def _measure_rate(self):
        t0, n0 = self._rate_window
        now = self.wall()
        if now - t0 >= 2.0:
            self.achieved_rate = (self.ticks - n0) / (now - t0)
            self._rate_window = (now, self.ticks)
            wanted = self.p.rate * self.p.real_time_factor
            if self.timed and not self.p.lockstep and self.achieved_rate < 0.9 * wanted:
                self.log("warning", "simulating at %.0f steps/s, below %.0f (%.2fx real "
                         "time)" % (self.achieved_rate, wanted, self.achieved_rate / self.p.rate),
                         key="rate")
