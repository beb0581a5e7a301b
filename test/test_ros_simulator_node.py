"""forward_dynamics_node (the simulator) over real DDS.

Stepping is checked against ldr.forward_dynamics / ldr.hybrid_dynamics with the semi-implicit
step ``v+ = v + dt a``, ``q+ = integrate(q, v+, dt)``. JointState doubles survive CDR exactly,
so the test recomputes each step from the published states.

Timer-driven runs use a low rate (the default 1000 Hz is measured separately and reported,
not asserted: a loaded 2-core CI machine may not keep up).
"""
import io
import math
import os
import time

import numpy as np
import pytest

from ros_fixtures import (ARM7, CONFIG_DIR, DOUBLE_PENDULUM, NodeProcess, RosSession,  # noqa
                          ros, ros_args, wait_matched)

from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import QoSProfile  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402

import lie_dynamics_ros as ldr  # noqa: E402
from lie_dynamics_ros.ros import conversions as cv  # noqa: E402
from lie_dynamics_ros.ros.forward_dynamics_node import ForwardDynamicsNode  # noqa: E402

TOL = 1e-9
READY = [0.0, -math.pi / 4, 0.0, -3 * math.pi / 4, 0.0, math.pi / 2, math.pi / 4]
SIM_NODE = "lie_dynamics_ros.ros.forward_dynamics_node"


def make_sim(session, drive="timer", **params):
    params.setdefault("urdf_path", ARM7)
    params.setdefault("initial_positions", READY)
    params.setdefault("start_mode", "immediate")
    overrides = [Parameter(k, value=v) for k, v in params.items()]
    return session.add(ForwardDynamicsNode(context=session.context, drive=drive,
                                           parameter_overrides=overrides))


def collect(session, topic="joint_states", cls=JointState):
    box = []
    session.node.create_subscription(cls, topic, box.append, QoSProfile(depth=1000))
    return box


def arrays(msg):
    return (cv.stamp_to_ns(msg.header.stamp), np.array(msg.position), np.array(msg.velocity),
            np.array(msg.effort))


def test_zero_torque_under_gravity_first_steps_match_forward_dynamics(ros):
    model = ldr.load_urdf(ARM7)
    rate = 100.0
    states = collect(ros)
    t_wall = time.monotonic()
    sim = make_sim(ros, rate=rate, publish_clock=True)
    assert ros.spin_until(lambda: len(states) >= 15, 30), "got %d states" % len(states)
    elapsed = time.monotonic() - t_wall
    dt_ns = sim.dt_ns
    assert dt_ns == 10_000_000
    by_stamp = {arrays(m)[0]: arrays(m) for m in states}
    t0, q0, v0, e0 = by_stamp[0]                          # the initial state comes first
    np.testing.assert_allclose(q0, READY, atol=0)
    assert not v0.any() and not e0.any()
    checked = 0
    for t, q, v, e in sorted(by_stamp.values(), key=lambda x: x[0]):
        prev = by_stamp.get(t - dt_ns)
        if prev is None:
            continue
        _, qp, vp, _ = prev
        a = ldr.forward_dynamics(model, qp, vp, np.zeros(model.nv))
        np.testing.assert_allclose(v, vp + a * dt_ns * 1e-9, rtol=0, atol=TOL)
        np.testing.assert_allclose(q, ldr.integrate(model, qp, v, dt_ns * 1e-9), rtol=0,
                                   atol=TOL)
        assert not e.any()
        checked += 1
    assert checked >= 10
    assert np.abs(by_stamp[max(by_stamp)][2]).max() > 1e-3   # it is falling
    print("timer-driven simulator: %d steps at rate %.0f Hz in %.2f s wall"
          % (len(states) - 1, rate, elapsed))


def test_default_rate_is_measured(ros):
    """Runs the default 1000 Hz for ~1 s and reports the achieved rate (not asserted)."""
    states = collect(ros)
    sim = make_sim(ros, publish_clock=True)
    assert sim.p.rate == 1000.0
    assert ros.spin_until(lambda: len(states) >= 1, 30)
    steps0, t0 = sim.sim.steps, time.monotonic()
    ros.spin_for(1.0)
    steps, wall = sim.sim.steps - steps0, time.monotonic() - t0
    assert steps > 0
    assert sim.sim.t_ns == sim.sim.steps * sim.dt_ns       # simulation time is exact
    print("default rate 1000 Hz: achieved %.0f steps/s (%.2fx real time)"
          % (steps / wall, steps / wall / 1000.0))


def test_process_watchdog_clock_and_effort_limits():
    session = RosSession()
    # double pendulum (effort limit 100 N m) without gravity: stays bounded at this rate
    proc = NodeProcess(SIM_NODE, ros_args(
        ("urdf_path", DOUBLE_PENDULUM), ("rate", "200.0"), ("publish_clock", "true"),
        ("command_timeout", "0.5"), ("log_throttle_sec", "0.0"), ("gravity", "[0.0, 0.0, 0.0]"),
        params_files=[os.path.join(CONFIG_DIR, "double_pendulum_initial_state.yaml")]))
    try:
        clocks = collect(session, "/clock", Clock)
        states = collect(session)
        cmd_pub = session.node.create_publisher(Float64MultiArray, "effort_controller/commands",
                                                10)
        assert proc.wait_for_log("robot model loaded", 60, session.executor), proc.describe()
        # /clock advances
        assert session.spin_until(lambda: len(clocks) >= 5, 30), proc.describe()
        ticks = [cv.stamp_to_ns(c.clock) for c in clocks]
        assert all(b > a for a, b in zip(ticks, ticks[1:])) and ticks[-1] > ticks[0]
        # a command above the URDF limit (100 N m) is clamped and reported
        assert wait_matched(session, pub=cmd_pub), proc.describe()
        command = cv.make_command_array([150.0, -20.0])
        clamped = np.array([100.0, -20.0])

        def effort_is(target):
            return bool(states) and np.allclose(states[-1].effort, target, atol=0)

        assert session.request(lambda: cmd_pub.publish(command), lambda: effort_is(clamped),
                               20, every_s=0.05), proc.describe()
        assert proc.wait_for_log("clamped commanded torques", 10, session.executor)
        assert "watchdog" not in proc.log()
        # no more commands: after command_timeout the effort drops to zero, logged once
        assert session.spin_until(lambda: effort_is(np.zeros(2)), 20), proc.describe()
        n_states = len(states)
        assert session.spin_until(lambda: len(states) >= n_states + 40, 20), proc.describe()
        assert effort_is(np.zeros(2))
        assert proc.log().count("watchdog: no command") == 1, proc.describe()
        assert proc.alive(), proc.describe()
    finally:
        proc.stop()
        session.close()


def test_joint_torques_by_name_drive_the_simulator(ros):
    model = ldr.load_urdf(ARM7)
    sim = make_sim(ros, drive="external", command_timeout=0.0)
    states = collect(ros)
    pub = ros.node.create_publisher(JointState, "joint_torques", 10)
    assert wait_matched(ros, pub=pub)
    tau = np.linspace(-3.0, 3.0, 7)
    names = list(model.joint_names)
    perm = [3, 0, 6, 2, 5, 1, 4]
    msg = cv.make_joint_state([names[i] for i in perm] + ["extra"], 0, effort=np.r_[
        tau[perm], math.nan])
    pub.publish(msg)
    assert ros.spin_until(lambda: sim.runtime.last_cmd_ns is not None, 10)
    sim.tick()      # publishes the initial state
    sim.tick()      # one step with tau
    assert ros.spin_until(lambda: len(states) >= 2, 10)
    _, q0, v0, _ = arrays(states[0])
    _, q1, v1, e1 = arrays(states[1])
    np.testing.assert_array_equal(e1, tau)
    a = ldr.forward_dynamics(model, q0, v0, tau)
    np.testing.assert_allclose(v1, v0 + a * sim.dt_ns * 1e-9, atol=TOL)


def test_hybrid_prescribed_joints_follow_the_reference(ros):
    model = ldr.load_urdf(ARM7)
    names = list(model.joint_names)
    prescribed = ["panda_joint2", "panda_joint4"]
    mask = np.array([n in prescribed for n in names])
    sim = make_sim(ros, drive="external", prescribed_joints=prescribed, publish_clock=True,
                   command_timeout=0.0)
    states = collect(ros)
    ref_pub = ros.node.create_publisher(JointTrajectory, "reference", 10)
    assert wait_matched(ros, pub=ref_pub)
    # q(t) = q0 + A sin(w t) for the prescribed joints, points every 50 ms with exact q, v, a
    A, w = np.array([0.3, 0.4]), 2 * math.pi
    q0 = np.array(READY)[mask]
    times = np.arange(0.0, 1.0001, 0.05)
    qs = q0 + A * np.sin(w * times)[:, None]
    vs = A * w * np.cos(w * times)[:, None]
    accs = -A * w ** 2 * np.sin(w * times)[:, None]
    msg = cv.make_trajectory(prescribed, times, qs, vs, accs)   # stamp 0: starts "now" = 0
    ref_pub.publish(msg)
    assert ros.spin_until(lambda: sim.sim.reference is not None, 10)
    ref, _ = cv.TrajectoryReference.from_msg(msg, cv.JointIndex(names), 0)
    n_steps = 300
    for _ in range(n_steps + 1):
        sim.tick()
    assert ros.spin_until(lambda: len(states) >= n_steps + 1, 20)
    seq = [arrays(m) for m in states]
    dt = sim.dt_ns * 1e-9
    for k in range(1, n_steps + 1):
        t, q, v, e = seq[k]
        tp, qp, vp, _ = seq[k - 1]
        assert t == tp + sim.dt_ns
        rq, rv, _ = ref.sample(t)
        np.testing.assert_allclose(q[mask], rq[mask], atol=1e-12)        # follows exactly
        np.testing.assert_allclose(v[mask], rv[mask], atol=1e-12)
        tt = t * 1e-9
        np.testing.assert_allclose(q[mask], q0 + A * np.sin(w * tt), atol=1e-5)
        # the torques published are those of Kim's hybrid dynamics for this motion
        a_given = np.zeros(model.nv)
        a_given[mask] = ref.sample(tp)[2][mask]
        a_full, tau_full = ldr.hybrid_dynamics(model, qp, vp, a_given, np.zeros(model.nv),
                                               mask)
        np.testing.assert_allclose(e, tau_full, rtol=0, atol=TOL)
        np.testing.assert_allclose(ldr.inverse_dynamics(model, qp, vp, a_full), tau_full,
                                   rtol=0, atol=1e-8)
        assert not e[~mask].any()
        np.testing.assert_allclose(v[~mask], vp[~mask] + dt * a_full[~mask], rtol=0, atol=TOL)
    assert np.abs(np.array([s[3][mask] for s in seq[1:]])).max() > 1.0


def test_bringup_offline_gravity_compensation_records_a_rosbag2_bag(tmp_path):
    """--record writes a rosbag2 bag (folder, metadata.yaml, MCAP with offered QoS), read
    back with the rosbags package, which parses rosbag2 independently of our writer."""
    from rosbags.rosbag2 import Reader
    from rosbags.typesys import Stores, get_typestore
    from lie_dynamics_ros.ros import bringup
    path = os.path.join(tmp_path, "run")
    out = io.StringIO()
    summary = bringup.run(["sim_with_gravity_compensation", "--offline", "--duration", "0.2",
                           "--record", path, "--progress"], stream=out)
    assert summary["steps"] == 200      # every step answered (a miss stops the run)
    # gravity compensation in the loop: the arm holds the initial pose
    np.testing.assert_allclose(summary["final_positions"], READY, atol=1e-8)
    assert "100.0%" in out.getvalue()
    assert sorted(os.listdir(path)) == ["metadata.yaml", "run_0.mcap"]
    typestore = get_typestore(Stores.ROS2_JAZZY)
    counts, last = {}, {}
    with Reader(path) as reader:
        conns = {c.topic: c for c in reader.connections}
        js_qos = conns["/joint_states"].ext.offered_qos_profiles
        # forward_dynamics' publisher, as discovery reports it (DDS does not carry the depth)
        assert len(js_qos) == 1 and js_qos[0].reliability.name == "RELIABLE"
        assert js_qos[0].durability.name == "VOLATILE"
        assert conns["/joint_states"].msgtype == "sensor_msgs/msg/JointState"
        for conn, t, raw in reader.messages():
            counts[conn.topic] = counts.get(conn.topic, 0) + 1
            last[conn.topic] = typestore.deserialize_cdr(raw, conn.msgtype)
        assert reader.message_count == sum(counts.values())
    assert counts["/joint_states"] == 201 and counts["/clock"] == 201
    assert counts["/joint_torques"] >= 200
    stamp = last["/joint_states"].header.stamp
    assert stamp.sec * 1_000_000_000 + stamp.nanosec == 200_000_000
    assert np.isfinite(last["/joint_torques"].effort).all()
    # the MCAP file alone is valid ros2-profile MCAP (Foxglove opens it)
    from mcap.reader import make_reader
    with open(os.path.join(path, "run_0.mcap"), "rb") as f:
        header = make_reader(f).get_header()
    assert header.profile == "ros2"


def test_divergence_stops_integrating_and_keeps_publishing_finite_states(ros):
    sim = make_sim(ros, drive="external", command_timeout=0.0)
    states = collect(ros)
    sim.tick()
    sim.sim.stepper = lambda q, v, dt, tau=None, t=0.0, accel=None: (q, v * math.nan)  # blows up
    sim.tick()
    sim.tick()
    assert ros.spin_until(lambda: len(states) >= 3, 10)
    assert sim.runtime.diverged == 1 and "panda_joint1" in sim.runtime.halted
    assert "reduce dt" in sim.runtime.halted and "rkmk4" in sim.runtime.halted
    for m in states:
        assert np.isfinite(m.position).all() and np.isfinite(m.velocity).all()
    np.testing.assert_array_equal(states[-1].velocity, np.zeros(7))
    np.testing.assert_array_equal(states[-1].position, states[0].position)
    assert cv.stamp_to_ns(states[-1].header.stamp) > cv.stamp_to_ns(states[1].header.stamp)


@pytest.mark.parametrize("method", ["rkmk4", "cf4"])
def test_other_integrators_plug_in(ros, method):
    from lie_dynamics_ros.integrators.simulate import make_stepper
    model = ldr.load_urdf(ARM7)
    sim = make_sim(ros, drive="external", integrator=method, command_timeout=0.0)
    states = collect(ros)
    for _ in range(3):
        sim.tick()
    assert ros.spin_until(lambda: len(states) >= 3, 10)
    step = make_stepper(model, method)
    dt = sim.dt_ns * 1e-9
    for k in (1, 2):
        _, qp, vp, _ = arrays(states[k - 1])
        _, q, v, _ = arrays(states[k])
        q_ref, v_ref = step(qp, vp, dt)
        np.testing.assert_allclose(q, q_ref, rtol=0, atol=TOL)
        np.testing.assert_allclose(v, v_ref, rtol=0, atol=TOL)


def test_steppers_take_the_acceleration_directly(ros, monkeypatch):
    """Every integrator, the default semi_implicit included, is make_stepper's step: with
    held torques one compiled call (no Python dynamics at all), in hybrid mode fed with the
    simulator's accelerations; never inverse dynamics to turn them into torques and back."""
    from lie_dynamics_ros.integrators.simulate import make_stepper
    from lie_dynamics_ros.integrators.registry import resolve_integrator
    from lie_dynamics_ros.integrators.simulator import Simulator
    from lie_dynamics_ros.ros import forward_dynamics_node as fdn
    assert not hasattr(fdn, "semi_implicit_step")        # one implementation: simulate.py's
    model = ldr.load_urdf(ARM7)
    calls = {"inverse_dynamics": 0, "forward_dynamics": 0}
    for name in calls:
        def counted(*args, _f=getattr(ldr, name), _name=name, **kw):
            calls[_name] += 1
            return _f(*args, **kw)
        monkeypatch.setattr(ldr, name, counted)
    tau = np.linspace(-2.0, 2.0, 7)
    for method in ("semi_implicit", "rkmk4"):
        sim = Simulator(model, 1_000_000, resolve_integrator(method, model),
                        np.zeros(7, bool), READY, np.zeros(7))
        calls.update(inverse_dynamics=0, forward_dynamics=0)
        sim.step(tau)
        assert calls == {"inverse_dynamics": 0, "forward_dynamics": 0}, method
        q_ref, v_ref = make_stepper(model, method)(np.array(READY), np.zeros(7), 1e-3, tau=tau)
        np.testing.assert_allclose(sim.q, q_ref, rtol=0, atol=1e-15)
        np.testing.assert_allclose(sim.v, v_ref, rtol=0, atol=1e-15)
        np.testing.assert_array_equal(sim.tau, tau)
    # hybrid mode with rkmk4: joint 2 held by hybrid dynamics, its torque reported
    mask = np.array([False, True, False, False, False, False, False])
    sim = Simulator(model, 1_000_000, resolve_integrator("rkmk4", model), mask,
                    READY, np.zeros(7))
    calls.update(inverse_dynamics=0)
    sim.step(tau)
    assert calls["inverse_dynamics"] == 0
    assert sim.q[1] == READY[1] and sim.v[1] == 0.0
    a_full, tau_full = ldr.hybrid_dynamics(model, np.array(READY), np.zeros(7), np.zeros(7),
                                           tau, mask)
    np.testing.assert_allclose(sim.tau, tau_full, rtol=0, atol=1e-12)


def test_applied_effort_does_not_alias_the_next_command(ros):
    """command_torques() and the applied torques are copies: a command arriving after a
    step must not change what that step applied (enforce_effort_limits off: no clamp copy)."""
    sim = make_sim(ros, drive="external", command_timeout=0.0, enforce_effort_limits=False)
    first = np.linspace(-1.0, 1.0, 7)
    sim._on_array_command(cv.make_command_array(first))
    tau = sim.runtime.command_torques()
    sim.tick()
    sim.tick()
    applied = sim.sim.tau.copy()
    np.testing.assert_array_equal(applied, first)
    sim._on_array_command(cv.make_command_array(2 * first))
    np.testing.assert_array_equal(tau, first)
    np.testing.assert_array_equal(sim.sim.tau, applied)


def test_reloading_the_model_keeps_time_and_the_state_of_shared_joints(ros):
    """robot_description set at run time: time goes on (no /clock rewind), joints whose
    names the new model has keep q and v; a renamed joint starts from initial_positions."""
    clocks = collect(ros, "/clock", Clock)
    sim = make_sim(ros, drive="external", publish_clock=True, command_timeout=0.0, rate=100.0)
    for _ in range(30):              # the arm falls under gravity for 0.29 s
        sim.tick()
    t_before, q_before, v_before = sim.sim.t_ns, sim.sim.q.copy(), sim.sim.v.copy()
    steps_before = sim.sim.steps
    assert t_before == 290_000_000 and np.abs(v_before).max() > 0.1
    with open(ARM7) as f:
        xml = f.read().replace('name="panda_joint7"', 'name="wrist_joint"')
    assert 'name="wrist_joint"' in xml
    res = sim.set_parameters([Parameter("robot_description", value=xml)])
    assert res[0].successful, res[0].reason
    assert sim.sim.model.joint_names[-1] == "wrist_joint"
    assert sim.sim.t_ns == t_before and sim.sim.steps == steps_before
    np.testing.assert_array_equal(sim.sim.q[:6], q_before[:6])
    np.testing.assert_array_equal(sim.sim.v[:6], v_before[:6])
    assert sim.sim.q[6] == READY[6] and sim.sim.v[6] == 0.0    # initial state, by position
    sim.tick()                       # the next tick steps on from there
    assert sim.sim.t_ns == t_before + sim.dt_ns
    assert ros.spin_until(lambda: len(clocks) >= 31, 10)
    ticks = [cv.stamp_to_ns(c.clock) for c in clocks]
    assert ticks == sorted(ticks) and len(set(ticks)) == len(ticks)   # never back, no repeat
    assert ticks[-1] == t_before + sim.dt_ns


def test_unknown_integrator_is_refused(ros):
    with pytest.raises(ValueError, match="parameter integrator: 'no_such_method' is not one "
                       "of .*rkmk4.*semi_implicit"):
        make_sim(ros, integrator="no_such_method")


def test_wait_for_command_holds_the_initial_state_until_the_first_command(ros):
    """The default start mode: time advances, the state is held (no fall under gravity)
    until a command arrives; then the simulator integrates."""
    sim = make_sim(ros, drive="external", start_mode="wait_for_command", command_timeout=0.0)
    states = collect(ros)
    for _ in range(5):
        sim.tick()
    assert not sim.runtime.integrating and sim.sim.steps == 0
    sim._on_array_command(cv.make_command_array(np.zeros(7)))
    sim.tick()
    sim.tick()
    assert sim.runtime.integrating and sim.sim.steps == 2
    assert ros.spin_until(lambda: len(states) >= 7, 10)
    stamps = [cv.stamp_to_ns(m.header.stamp) for m in states]
    assert stamps == sorted(stamps) and len(set(stamps)) == 7          # time advances
    for m in states[:5]:
        np.testing.assert_array_equal(m.position, READY)                # held
        assert not any(m.velocity)
    assert states[-1].velocity[1] != 0.0                                # falling now


def test_start_timeout_starts_integrating_without_a_command(ros):
    sim = make_sim(ros, drive="external", start_mode="wait_for_command", start_timeout=0.2,
                   command_timeout=0.0)
    sim.tick()
    sim.tick()
    assert not sim.runtime.integrating
    time.sleep(0.25)
    sim.tick()
    assert sim.runtime.integrating and sim.sim.steps == 1


def test_without_an_initial_state_a_robot_starts_from_its_own_file_or_neutral(ros):
    """urdf_path alone: the double pendulum starts from config/double_pendulum_initial_state
    .yaml; a robot without such a file from its neutral configuration."""
    sim = make_sim(ros, drive="external", urdf_path=DOUBLE_PENDULUM, initial_positions=[])
    np.testing.assert_array_equal(sim.sim.q, [1.0, 0.0])
    other = os.path.join(os.path.dirname(DOUBLE_PENDULUM), "planar_2r.urdf")
    import shutil
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        copy = os.path.join(d, "my_robot.urdf")
        shutil.copy(other, copy)
        sim2 = make_sim(ros, drive="external", urdf_path=copy, initial_positions=[])
        np.testing.assert_array_equal(sim2.sim.q, np.zeros(2))


def test_lockstep_steps_only_on_the_answer_to_the_last_state(ros):
    """lockstep: a tick without the controller's answer neither steps nor publishes; a
    joint_torques carrying the last state's stamp steps at once (a stale stamp does not);
    after lockstep_timeout the simulator steps with the last command and says so."""
    model = ldr.load_urdf(ARM7)
    sim = make_sim(ros, drive="external", lockstep=True, lockstep_timeout=0.0,
                   command_timeout=0.0)
    states = collect(ros)
    pub = ros.node.create_publisher(JointState, "joint_torques", 10)
    assert wait_matched(ros, pub)
    g = ldr.gravity_torques(model, np.array(READY))

    def answer(stamp_ns):
        pub.publish(cv.make_joint_state(model.joint_names, stamp_ns, effort=g))

    sim.tick()                                 # the initial state
    t0 = sim.sim.t_ns
    sim.tick()
    sim.tick()
    assert sim.sim.steps == 0 and sim.runtime.published == 1 and sim.runtime.lockstep_waits == 2
    answer(t0)
    assert ros.spin_until(lambda: sim.runtime.published == 2, 10)   # stepped from the callback
    assert sim.sim.steps == 1 and sim.sim.t_ns == t0 + sim.dt_ns
    answer(t0)                                 # stale: answers the state before
    ros.spin_for(0.2)
    sim.tick()
    assert sim.sim.steps == 1 and sim.runtime.published == 2
    answer(sim.sim.t_ns)
    assert ros.spin_until(lambda: sim.runtime.published == 3, 10)
    assert ros.spin_until(lambda: len(states) == 3, 10)
    for m in states:            # gravity compensated at every step: the arm stays
        np.testing.assert_allclose(m.position, READY, atol=1e-12)
    # no answer: after lockstep_timeout the step is taken with the last command
    assert sim.sim.steps == 2
    sim.set_parameters([Parameter("lockstep_timeout", value=0.05)])
    sim.tick()
    assert sim.sim.steps == 2 and sim.runtime.lockstep_timeouts == 0
    time.sleep(0.06)
    sim.tick()
    assert sim.sim.steps == 3 and sim.runtime.lockstep_timeouts == 1



def late_subscriber(ros):
    """Messages on robot_description for a transient-local subscriber created now."""
    from std_msgs.msg import String
    from lie_dynamics_ros.ros.model_source import transient_local_qos
    box = []
    ros.node.create_subscription(String, "robot_description", box.append,
                                 transient_local_qos())
    return box


def test_robot_description_reaches_a_late_subscriber_and_follows_a_reload(ros):
    """The description of the model in use, latched as robot_state_publisher's: the text of
    the urdf_path file, then the parameter's XML set at run time."""
    with open(ARM7) as f:
        xml = f.read()
    sim = make_sim(ros, drive="external")
    ros.spin_for(0.2)
    got = late_subscriber(ros)
    assert ros.spin_until(lambda: got, 10)
    assert [m.data for m in got] == [xml]
    renamed = xml.replace('name="panda_joint7"', 'name="wrist_joint"')
    res = sim.set_parameters([Parameter("robot_description", value=renamed)])
    assert res[0].successful, res[0].reason
    assert ros.spin_until(lambda: len(got) == 2, 10)
    assert got[1].data == renamed
    later = late_subscriber(ros)
    assert ros.spin_until(lambda: later, 10)
    ros.spin_for(0.3)
    assert [m.data for m in later] == [renamed]          # depth 1: the model in use


def test_a_model_from_the_robot_description_topic_is_not_echoed(ros):
    from std_msgs.msg import String
    from lie_dynamics_ros.ros.model_source import transient_local_qos
    with open(DOUBLE_PENDULUM) as f:
        xml = f.read()
    desc = ros.node.create_publisher(String, "robot_description", transient_local_qos())
    desc.publish(String(data=xml))
    sim = make_sim(ros, drive="external", urdf_path="", initial_positions=[])
    assert ros.spin_until(lambda: sim.sim is not None, 20)
    assert sim.sim.model.joint_names == ldr.load_urdf(DOUBLE_PENDULUM).joint_names
    got = late_subscriber(ros)
    assert ros.spin_until(lambda: got, 10)
    ros.spin_for(0.5)
    assert [m.data for m in got] == [xml]                  # ours alone, once
