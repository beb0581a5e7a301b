"""The simulator's ROS-free runtime (runtime/simulation.py), driven without DDS: a fake wall
clock and a list as the log sink make start modes, lockstep, the watchdog (simulation time),
clamping, reload carry-over, loop assembly and the divergence halt deterministic."""
import math
import os
from types import SimpleNamespace

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.ros.schemas.simulator import PARAMS
from lie_dynamics_ros.runtime.simulation import SimulationRuntime

from ros_fixtures import ARM7, DOUBLE_PENDULUM, URDF_DIR

READY = [0.0, -math.pi / 4, 0.0, -3 * math.pi / 4, 0.0, math.pi / 2, math.pi / 4]
FOUR_BAR = os.path.join(URDF_DIR, "loops", "four_bar.urdf")


class Wall:
    """A monotonic clock that moves only when told."""

    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def make(path=ARM7, origin=None, **params):
    """A runtime over the schema's defaults (rate 100 Hz, /clock time from 0) with ``params``
    overriding them, and the model of ``path``; returns (runtime, wall clock, log lines)."""
    values = {p.name: p.default for p in PARAMS}
    values.update(rate=100.0, publish_clock=True)
    values.update(params)
    wall, log = Wall(), []
    rt = SimulationRuntime(SimpleNamespace(**values), wall=wall,
                           log=lambda level, text, key=None: log.append((level, text)))
    reason = rt.set_model(ldr.load_urdf(path), origin or "urdf_path %s" % path)
    assert reason is None, reason
    return rt, wall, log


def logged(log, words):
    return [text for _, text in log if words in text]


def test_wait_for_command_holds_until_the_first_command_then_integrates():
    rt, _, log = make(initial_positions=READY)
    states = [rt.tick() for _ in range(4)]
    assert [s.t_ns for s in states] == [0, rt.dt_ns, 2 * rt.dt_ns, 3 * rt.dt_ns]
    assert rt.sim.steps == 0 and not rt.integrating
    for s in states:
        np.testing.assert_array_equal(s.q, READY)          # held: no fall under gravity
        assert not s.v.any()
    assert logged(log, "holding the initial state (parameters)")
    assert rt.command_array(np.zeros(7)) is None
    rt.tick()
    assert rt.integrating and rt.sim.steps == 1 and rt.sim.v[1] != 0.0   # falling now
    assert logged(log, "first command received")


def test_immediate_integrates_from_the_second_tick_and_start_timeout_uses_the_wall_clock():
    rt, _, _ = make(initial_positions=READY, start_mode="immediate")
    first = rt.tick()
    np.testing.assert_array_equal(first.q, READY)           # the initial state comes first
    rt.tick()
    assert rt.sim.steps == 1
    rt, wall, log = make(initial_positions=READY, start_timeout=0.2)
    rt.tick()
    wall.t += 0.19
    rt.tick()
    assert not rt.integrating and rt.sim.steps == 0
    wall.t += 0.02
    rt.tick()
    assert rt.integrating and rt.sim.steps == 1
    assert logged(log, "no command for start_timeout 0.2 s")


def test_lockstep_steps_only_on_the_answer_to_the_last_state():
    model = ldr.load_urdf(ARM7)
    g = ldr.gravity_torques(model, np.array(READY))
    rt, wall, log = make(initial_positions=READY, start_mode="immediate", lockstep=True,
                         lockstep_timeout=0.0)
    t0 = rt.tick().t_ns                        # the initial state
    assert rt.tick() is None and rt.tick() is None       # no answer: no step, nothing out
    assert rt.sim.steps == 0 and rt.lockstep_waits == 2 and rt.published == 1
    state = rt.joint_torques(g, t0)            # the answer takes the owed step at once
    assert state is not None and state.t_ns == t0 + rt.dt_ns and rt.sim.steps == 1
    np.testing.assert_allclose(state.q, READY, atol=1e-12)      # gravity compensated
    assert rt.joint_torques(g, t0) is None     # stale: it answers the state before
    assert rt.tick() is None and rt.sim.steps == 1
    assert rt.joint_torques(g, state.t_ns) is not None and rt.sim.steps == 2
    # lockstep_timeout: wall seconds without an answer, then a step with the last command
    rt.p.lockstep_timeout = 0.05
    assert rt.tick() is None
    wall.t += 0.049
    assert rt.tick() is None and rt.lockstep_timeouts == 0
    wall.t += 0.002
    assert rt.tick() is not None
    assert rt.sim.steps == 3 and rt.lockstep_timeouts == 1
    assert logged(log, "stepping with the last command")


def test_lockstep_with_arrays_only_any_array_answers():
    rt, _, _ = make(initial_positions=READY, start_mode="immediate", lockstep=True,
                    lockstep_timeout=0.0)
    rt.tick()
    assert rt.tick() is None
    assert rt.command_array(np.zeros(7)) is not None and rt.sim.steps == 1


def test_watchdog_counts_simulation_time_not_wall_time():
    """command_timeout 0.05 s at 100 Hz: the torque a step applies is the one held at its
    start, so steps starting 0, 10, ..., 40 ms after the command apply it, later ones zero.
    The wall clock never moves."""
    rt, _, log = make(DOUBLE_PENDULUM, start_mode="immediate", command_timeout=0.05,
                      gravity=[0.0, 0.0, 0.0])
    rt.tick()
    tau = np.array([1.0, -2.0])
    rt.command_array(tau)
    applied = []
    for _ in range(8):
        rt.tick()
        applied.append(rt.sim.tau.copy())
    for k, a in enumerate(applied):
        np.testing.assert_array_equal(a, tau if k * 10 < 50 else np.zeros(2))
    assert rt.watchdog_trips == 1 and len(logged(log, "watchdog: no command")) == 1
    rt.command_array(tau)                      # commands resume, the watchdog re-arms
    rt.tick()
    np.testing.assert_array_equal(rt.sim.tau, tau)
    assert logged(log, "commands resumed")
    for _ in range(6):
        rt.tick()
    assert rt.watchdog_trips == 2 and not rt.sim.tau.any()


def test_effort_limits_clamp_through_the_torque_guard_and_can_be_switched_off():
    rt, _, log = make(DOUBLE_PENDULUM, start_mode="immediate", command_timeout=0.0)
    rt.tick()
    rt.command_array(np.array([150.0, -20.0]))  # the URDF limit is 100 N m
    rt.tick()
    np.testing.assert_array_equal(rt.sim.tau, [100.0, -20.0])
    np.testing.assert_array_equal(rt.cmd, [150.0, -20.0])        # as received
    assert rt.clamped == 1 and logged(log, "URDF limits on ['joint1']")
    rt.p.enforce_effort_limits = False
    rt.reconfigure(["enforce_effort_limits"])
    rt.command_array(np.array([150.0, -20.0]))
    rt.tick()
    np.testing.assert_array_equal(rt.sim.tau, [150.0, -20.0])
    assert rt.clamped == 1


def test_bad_commands_are_dropped_and_named():
    rt, _, log = make(DOUBLE_PENDULUM, start_mode="immediate")
    rt.command_array(np.array([0.5, -0.25]))
    rt.command_array(None, "expected 2 values, got 1")
    rt.joint_torques(np.array([1.0, math.nan]), 0)
    rt.joint_torques(np.array([0.1, 0.2]), 2_000_000_000)
    rt.joint_torques(np.array([9.0, 9.0]), 1_000_000_000)        # goes backwards
    rt.wrench("no_such_link", [1.0, 0, 0, 0, 0, 0])
    assert rt.dropped == 4
    np.testing.assert_array_equal(rt.cmd, [0.1, 0.2])
    assert logged(log, "dropped joint_torques: stamp goes backwards")
    assert logged(log, "dropped external_wrench: header.frame_id 'no_such_link'")
    empty = SimulationRuntime(SimpleNamespace(**{p.name: p.default for p in PARAMS}))
    assert empty.tick() is None and empty.command_array(np.zeros(2)) is None
    assert empty.dropped == 1


def test_reload_keeps_time_and_the_state_of_shared_joints():
    rt, _, _ = make(initial_positions=READY, start_mode="immediate", command_timeout=0.0)
    for _ in range(30):
        rt.tick()
    t, steps, q, v = rt.sim.t_ns, rt.sim.steps, rt.sim.q.copy(), rt.sim.v.copy()
    assert t == 290_000_000 and np.abs(v).max() > 0.1
    with open(ARM7) as f:
        xml = f.read().replace('name="panda_joint7"', 'name="wrist_joint"')
    assert rt.set_model(ldr.load_urdf(xml), "parameter robot_description") is None
    assert rt.sim.model.joint_names[-1] == "wrist_joint"
    assert rt.sim.t_ns == t and rt.sim.steps == steps
    np.testing.assert_array_equal(rt.sim.q[:6], q[:6])
    np.testing.assert_array_equal(rt.sim.v[:6], v[:6])
    assert rt.sim.q[6] == READY[6] and rt.sim.v[6] == 0.0    # from initial_positions
    assert rt.tick().t_ns == t + rt.dt_ns


def test_initial_state_from_the_robot_file_else_neutral_and_refusals_name_the_parameter():
    rt, _, _ = make(DOUBLE_PENDULUM)        # config/double_pendulum_initial_state.yaml
    np.testing.assert_array_equal(rt.sim.q, [1.0, 0.0])
    rt, _, _ = make(DOUBLE_PENDULUM, origin="parameter robot_description")
    np.testing.assert_array_equal(rt.sim.q, [0.0, 0.0])
    model = ldr.load_urdf(DOUBLE_PENDULUM)
    for params, words in ((dict(joints=["joint1", "elbow"]), "parameter joints names ['elbow']"),
                          (dict(prescribed_joints=["x"]), "parameter prescribed_joints"),
                          (dict(initial_positions=[1.0]), "initial_positions (parameters) has 1"),
                          (dict(initial_state_file="/nonexistent.yaml"), "initial state"),
                          (dict(loops_file="/nonexistent.yaml"), "loops_file")):
        values = {p.name: p.default for p in PARAMS}
        values.update(params)
        rt = SimulationRuntime(SimpleNamespace(**values))
        reason = rt.set_model(model, None)
        assert reason and words in reason, (params, reason)
        assert rt.sim is None


def test_multi_dof_models_are_refused(floating):
    values = {p.name: p.default for p in PARAMS}
    reason = SimulationRuntime(SimpleNamespace(**values)).set_model(floating, None)
    assert "multi-DOF" in reason


@pytest.mark.parametrize("path, loops_file", [
    (FOUR_BAR, ""),
    (os.path.join(URDF_DIR, "loops", "four_bar_tree.urdf"),
     os.path.join(URDF_DIR, "loops", "four_bar_closures.yaml"))])
def test_a_closed_loop_model_is_assembled_and_stays_on_its_closures(path, loops_file):
    rt, _, _ = make(path, loops_file=loops_file, start_mode="immediate",
                    initial_positions=[0.3, 0.0, 0.0], initial_velocities=[1.0, 0.0, 0.0])
    model = rt.sim.model
    assert model.nc > 0
    assert np.abs(ldr.constraint_residual(model, rt.sim.q)).max() < 1e-10
    assert np.abs(ldr.constraint_jacobian(model, rt.sim.q) @ rt.sim.v).max() < 1e-10
    assert rt.sim.q[0] != 0.0 and abs(rt.sim.q[0] - 0.3) < 0.3    # near the guess
    for _ in range(50):
        rt.tick()
    assert rt.sim.steps == 49
    assert np.abs(ldr.constraint_residual(model, rt.sim.q)).max() < 1e-9
    refused = make(path, loops_file=loops_file)[0]
    refused.p.prescribed_joints = [model.joint_names[0]]
    assert "prescribed_joints are not supported" in refused.set_model(
        ldr.load_urdf(path), None)


def test_divergence_halts_and_the_last_finite_configuration_is_published_at_rest():
    rt, _, log = make(initial_positions=READY, start_mode="immediate", command_timeout=0.0)
    first = rt.tick()
    q0 = first.q.copy()
    rt.sim.stepper = lambda q, v, dt, tau=None, t=0.0, accel=None: (q, v * math.nan)
    states = [rt.tick() for _ in range(3)]
    assert rt.diverged == 1 and "panda_joint1" in rt.halted and "rkmk4" in rt.halted
    assert logged(log, "Integration stopped")
    for s in states:
        np.testing.assert_array_equal(s.q, q0)
        assert not s.v.any() and np.isfinite(s.tau).all()
    assert [s.t_ns for s in states] == [first.t_ns + k * rt.dt_ns for k in (1, 2, 3)]


def test_gravity_changed_at_run_time_rebuilds_the_step_keeping_the_state():
    rt, _, _ = make(initial_positions=READY, start_mode="immediate", command_timeout=0.0)
    for _ in range(5):
        rt.tick()
    t, q, v = rt.sim.t_ns, rt.sim.q.copy(), rt.sim.v.copy()
    rt.p.gravity = [0.0, 0.0, 0.0]
    rt.reconfigure(["gravity"])
    assert rt.sim.t_ns == t and rt.sim.steps == 4
    np.testing.assert_array_equal(rt.sim.q, q)
    model = rt.sim.model
    rt.tick()
    a = ldr.forward_dynamics(model, q, v, np.zeros(7))
    np.testing.assert_allclose(rt.sim.v, v + a * rt.dt_ns * 1e-9, rtol=0, atol=1e-12)
    assert not model.gravity.any()


def test_without_publish_clock_the_first_state_waits_for_the_node_clock():
    """Next to Gazebo (publish_clock false, use_sim_time true) the node clock reads 0 until
    Gazebo's /clock arrives: no state before it, then the time starts on that clock's axis;
    a node clock that runs from the start (the wall clock) is taken at once."""
    values = {p.name: p.default for p in PARAMS}
    values.update(rate=100.0, publish_clock=False, initial_positions=READY)
    now, log = [0], []
    rt = SimulationRuntime(SimpleNamespace(**values), wall=Wall(), clock_ns=lambda: now[0],
                           log=lambda level, text, key=None: log.append((level, text)))
    assert rt.set_model(ldr.load_urdf(ARM7), "urdf_path") is None
    assert rt.tick() is None and rt.tick() is None
    assert len(logged(log, "waiting for /clock")) == 1
    t0 = now[0] = 1000_000_000_000
    states = [rt.tick() for _ in range(3)]
    assert [s.t_ns for s in states] == [t0, t0 + rt.dt_ns, t0 + 2 * rt.dt_ns]
    np.testing.assert_array_equal(states[0].q, READY)
    now[0] = 7          # from then on each tick is one dt, whatever the clock says
    assert rt.tick().t_ns == t0 + 3 * rt.dt_ns
    rt = SimulationRuntime(SimpleNamespace(**values), wall=Wall(), clock_ns=lambda: 5_000)
    assert rt.set_model(ldr.load_urdf(ARM7), "urdf_path") is None
    assert rt.tick().t_ns == 5_000


def test_a_divergence_says_whether_any_command_came():
    """The halt names the controller's part: no command ever, or the watchdog's zero (the
    command at t = 0 expires after command_timeout 0.05 s)."""
    from test_simulator_core import inverted_pendulum
    values = {p.name: p.default for p in PARAMS}
    values.update(rate=1000.0, publish_clock=True, start_mode="immediate",
                  initial_positions=[0.3], command_timeout=0.05)
    for commands in (0, 1):
        log = []
        rt = SimulationRuntime(SimpleNamespace(**values), wall=Wall(),
                               log=lambda level, text, key=None: log.append((level, text)))
        assert rt.set_model(inverted_pendulum(), None) is None
        rt.tick()
        if commands:
            rt.command_array(np.zeros(1))
        for _ in range(5000):
            rt.tick()
            if rt.halted:
                break
        assert "a fall through the joint limits" in rt.halted
        assert ("no controller command has been received" in rt.halted) == (commands == 0)
        assert ("the watchdog has applied zero torque since t = 0.050 s" in rt.halted) == (
            commands == 1)
        assert logged(log, "Integration stopped")


def test_lockstep_steps_once_per_timeout_of_a_silent_controller_and_says_so_once():
    """A controller that stops answering (stalled, stopped) costs one lockstep_timeout per
    step, said once; each step still waits for its answer, so a controller back from a stall
    answers the state it missed (running on without it would hand its late commands to newer
    states). The next command ends the silence."""
    rt, wall, log = make(initial_positions=READY, start_mode="immediate", lockstep=True,
                         lockstep_timeout=1.0)
    t0 = rt.tick().t_ns
    assert rt.tick() is None                                   # owed to the answer
    assert rt.joint_torques(np.zeros(7), t0) is not None      # answered: one step
    for k in range(1, 4):
        assert rt.tick() is None                               # waits for the next answer
        wall.t += 1.01
        assert rt.tick() is not None and rt.lockstep_timeouts == k
    assert rt.tick() is None                                   # and waits again
    assert rt.sim.steps == 4
    assert len(logged(log, "no command answered")) == 1
    rt.joint_torques(np.zeros(7), rt.sim.t_ns)                 # the answer: it is back
    assert logged(log, "commands arrive again") and rt.sim.steps == 5
    assert rt.tick() is None                                   # lockstep as before
    wall.t += 5.0
    assert rt.tick() is not None
    assert len(logged(log, "no command answered")) == 2        # a new silence, said again


def test_an_exact_answer_counts_after_a_command_stamped_later():
    """A controller's own zero (on disabling, a fallback) carries its clock's now, later than
    the simulator's time: the answers that follow carry the states' stamps and must not be
    dropped as going backwards, or every step would wait for lockstep_timeout."""
    rt, _, log = make(initial_positions=READY, start_mode="immediate", lockstep=True,
                      lockstep_timeout=1.0)
    t0 = rt.tick().t_ns
    assert rt.tick() is None
    state = rt.joint_torques(np.zeros(7), t0 + 10**12)   # "now" far ahead: taken, one step
    assert state is not None and rt.tick() is None
    assert rt.joint_torques(np.zeros(7), state.t_ns) is not None    # the exact answer
    assert rt.joint_torques(np.zeros(7), state.t_ns - 1) is None      # older: still dropped
    assert logged(log, "stamp goes backwards")
