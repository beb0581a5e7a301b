"""adaptive_controller_node over real DDS (and the adaptive demo, through the nodes).

In-process nodes in the test's executor (same code path as the console script, faster), one
run of the console script as a subprocess, and the closed loop simulator <-> controller of
``ldr_adaptive_demo`` (the arm with an unknown 2 kg payload) in lockstep on simulated time.
The session's DDS domain comes from ros_fixtures (derived from the pid); every wait has a
deadline and subprocesses are stopped in ``finally``.
"""
import os
import time

import numpy as np

from ros_fixtures import (ARM7, DOUBLE_PENDULUM, NodeProcess, ros, ros_args,  # noqa: F401
                         wait_matched)

from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import qos_profile_sensor_data  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import SetBool, Trigger  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402

import lie_dynamics_ros as ldr  # noqa: E402
from models import bundled, damped_pendulum_xml  # noqa: E402
from lie_dynamics_ros.control import AdaptiveGains, AdaptiveSlotineLiController  # noqa: E402
from lie_dynamics_ros.ros import adaptive_demo as demo  # noqa: E402
from lie_dynamics_ros.ros import conversions as cv  # noqa: E402
from lie_dynamics_ros.ros.adaptive_controller_node import AdaptiveControllerNode  # noqa: E402

NODE_MODULE = "lie_dynamics_ros.ros.adaptive_controller_node"
MODEL = ldr.load_urdf(ARM7)
NAMES = list(MODEL.joint_names)


def make_node(ros, **params):
    params.setdefault("urdf_path", ARM7)
    overrides = [Parameter(k, value=v) for k, v in params.items()]
    return ros.add(AdaptiveControllerNode(context=ros.context, parameter_overrides=overrides))


class Loop:
    """Test side: publishes joint states (stamped with the node clock unless told otherwise)
    and collects everything the controller publishes."""

    def __init__(self, ros, ns="adaptive_controller"):
        self.ros = ros
        n = ros.node
        self.pub = n.create_publisher(JointState, "joint_states", 10)
        self.best_effort = n.create_publisher(JointState, "joint_states", qos_profile_sensor_data)
        self.ref_pub = n.create_publisher(JointTrajectory, "reference", 10)
        self.torques, self.cmds, self.theta, self.err = [], [], [], []
        self.sub = n.create_subscription(JointState, "joint_torques", self.torques.append, 100)
        n.create_subscription(Float64MultiArray, "effort_controller/commands",
                              self.cmds.append, 100)
        n.create_subscription(Float64MultiArray, "%s/parameter_estimates" % ns,
                              self.theta.append, 100)
        n.create_subscription(Float64MultiArray, "%s/tracking_error" % ns, self.err.append, 100)

    def now(self):
        return self.ros.node.get_clock().now().nanoseconds

    def send(self, q, v, stamp=None, names=None, pub=None):
        stamp = self.now() if stamp is None else stamp
        msg = cv.make_joint_state(names or NAMES, stamp, q, v)
        (pub or self.pub).publish(msg)
        return stamp

    def ask(self, q, v, stamp=None, names=None, timeout_s=10.0):
        """Send one state and wait for the joint_torques answering it (by stamp)."""
        stamp = self.send(q, v, stamp, names)
        ok = self.ros.spin_until(lambda: any(cv.stamp_to_ns(m.header.stamp) == stamp
                                             for m in self.torques), timeout_s)
        return next((m for m in self.torques if cv.stamp_to_ns(m.header.stamp) == stamp),
                    None) if ok else None

    def ready(self, node):
        return wait_matched(self.ros, pub=self.pub, sub=self.sub) and self.ros.spin_until(
            lambda: self.ref_pub.get_subscription_count() >= 1, 10)


def call(ros, srv_type, name, request, timeout_s=10.0):
    client = ros.node.create_client(srv_type, name)
    assert client.wait_for_service(timeout_sec=timeout_s)
    fut = client.call_async(request)
    assert ros.spin_until(fut.done, timeout_s)
    return fut.result()


READY = demo.READY


def test_torques_match_the_library_controller_in_joints_order(ros):
    order = list(reversed(NAMES))
    node = make_node(ros, joints=order, clamp_efforts=False)
    loop = Loop(ros)
    assert loop.ready(node)
    rng = np.random.default_rng(0)
    q, v = READY + 0.1 * rng.normal(size=7), rng.normal(size=7)
    # shuffled names plus joints the model does not know
    names = NAMES + ["panda_finger_joint1"]
    perm = rng.permutation(len(names))
    out = loop.ask(np.r_[q, 0.01][perm], np.r_[v, 0.0][perm], names=[names[i] for i in perm])
    assert out is not None and list(out.name) == NAMES
    # without a reference the node holds the first position: q_d = q, v_d = a_d = 0
    g = node.controller.gains       # arm7's gains file (test_gains_come_from_...)
    ref = AdaptiveSlotineLiController(ldr.load_urdf(ARM7), AdaptiveGains(
        g.Lambda, g.K_D, g.Gamma), payload_only=True)
    expected = ref.step(0.0, q, v, q, np.zeros(7), np.zeros(7), 0.0)
    np.testing.assert_allclose(out.effort, expected, rtol=0, atol=1e-9)
    assert ros.spin_until(lambda: loop.cmds and np.allclose(
        loop.cmds[-1].data, cv.reorder(expected, NAMES, order), atol=1e-9), 10)
    # the monitors: theta_hat (10 numbers, payload body) and (e, e_dot, s) as 3 x 7
    assert ros.spin_until(lambda: loop.theta and loop.err, 10)
    assert len(loop.theta[-1].data) == 10
    np.testing.assert_allclose(loop.theta[-1].data, ref.theta_hat, atol=1e-12)
    assert [d.label for d in loop.err[-1].layout.dim] == ["e,e_dot,s", "joint"]
    np.testing.assert_allclose(np.reshape(loop.err[-1].data, (3, 7)),
                               [np.zeros(7), v, v], atol=1e-12)
    # a best-effort publisher is heard too (sensor-data QoS)
    out = None
    for _ in range(20):
        stamp = loop.send(q, v, pub=loop.best_effort)
        if ros.spin_until(lambda: any(cv.stamp_to_ns(m.header.stamp) == stamp
                                      for m in loop.torques), 0.5):
            out = True
            break
    assert out


def test_reference_is_sampled_at_the_state_stamp_and_adaptation_runs(ros):
    node = make_node(ros, state_timeout=0.0)
    loop = Loop(ros)
    assert loop.ready(node)
    t0 = loop.now()
    q0, q1 = READY, READY + np.linspace(0.1, 0.7, 7)
    traj = cv.make_trajectory(NAMES, [0.0, 1.0], positions=[q0, q1], stamp_ns=t0)
    loop.ref_pub.publish(traj)
    assert ros.spin_until(lambda: node.reference is not None, 10)
    q, v = READY + 0.05, np.zeros(7)
    out = loop.ask(q, v, stamp=t0 + 250_000_000)
    assert out is not None
    q_d = q0 + 0.25 * (q1 - q0)             # positions only: linear interpolation
    assert ros.spin_until(lambda: loop.err and np.allclose(
        np.reshape(loop.err[-1].data, (3, 7))[0], q - q_d, atol=1e-12), 10)
    theta0 = node.controller.theta_hat
    for k in range(1, 20):                   # consecutive stamps: the estimate moves
        assert loop.ask(q, v, stamp=t0 + 250_000_000 + k * 10_000_000) is not None
    assert not np.allclose(node.controller.theta_hat, theta0)
    # ~/reset_parameters puts it back
    res = call(ros, Trigger, "/adaptive_controller/reset_parameters", Trigger.Request())
    assert res.success
    np.testing.assert_array_equal(node.controller.theta_hat, theta0)


def test_bad_input_is_dropped_and_never_kills_the_node(ros):
    node = make_node(ros)
    loop = Loop(ros)
    assert loop.ready(node)
    q, v = READY.copy(), np.zeros(7)
    bad = []
    s = loop.now()
    bad.append(cv.make_joint_state(NAMES, s, np.r_[q[:6], np.nan], v))          # NaN
    bad.append(cv.make_joint_state(NAMES[:6], s, q[:6], v[:6]))                 # missing joint
    m = cv.make_joint_state(NAMES, s, q, v)
    m.velocity = cv.to_float_array(v[:5])                                        # lengths
    bad.append(m)
    bad.append(cv.make_joint_state(NAMES, s, q, np.r_[v[:6], np.inf]))           # inf velocity
    bad.append(cv.make_joint_state(NAMES + [NAMES[0]], s, np.r_[q, 0.0], np.r_[v, 0.0]))
    bad.append(JointState())                                                     # empty
    for k, msg in enumerate(bad):     # re-sent until dropped (best effort may lose one early)
        assert ros.request(lambda: loop.pub.publish(msg), lambda: node.dropped >= k + 1, 10)
    ros.spin_for(0.2)
    assert not loop.torques
    # bad references: empty, no positions, non-increasing times
    refs = [JointTrajectory(), cv.make_trajectory(NAMES, [0.0], accelerations=[np.zeros(7)]),
            cv.make_trajectory(NAMES, [1.0, 0.5], positions=[q, q])]
    for k, msg in enumerate(refs):
        n = node.dropped
        loop.ref_pub.publish(msg)
        assert ros.spin_until(lambda: node.dropped == n + 1, 10)
    assert node.reference is None
    # stamps going backwards are refused, then a good state is answered
    out = loop.ask(q, v)
    assert out is not None
    n, dropped = len(loop.torques), node.dropped
    loop.send(q, v, stamp=cv.stamp_to_ns(out.header.stamp) - 1_000_000)
    assert ros.spin_until(lambda: node.dropped == dropped + 1, 10)
    assert not any(np.any(np.array(m.effort) != 0.0) for m in loop.torques[n:])
    assert loop.ask(q, v) is not None


def test_state_timeout_sends_the_zero_fallback_repeatedly_then_control_resumes(ros):
    node = make_node(ros, state_timeout=0.3, fallback_period=0.2)
    loop = Loop(ros)
    assert loop.ready(node)
    q, v = READY.copy(), np.full(7, 0.3)
    out = loop.ask(q, v)
    assert out is not None and np.abs(out.effort).max() > 1.0
    # no states: zero fallback (exactly 0.0), repeated every fallback_period
    n = len(loop.torques)
    assert ros.spin_until(lambda: len(loop.torques) >= n + 3, 5)
    zeros = loop.torques[n:n + 3]
    assert all(np.all(np.array(m.effort) == 0.0) for m in zeros)
    gaps = np.diff([cv.stamp_to_ns(m.header.stamp) for m in zeros]) * 1e-9
    assert np.all(gaps > 0.19) and np.all(gaps < 0.4), gaps
    assert node.stale and node.rt.guard.counts["timeouts"] == 1
    # valid states again: control resumes without adapting across the gap
    theta = node.controller.theta_hat.copy()
    out = loop.ask(q, v)
    assert out is not None and np.abs(out.effort).max() > 1.0 and not node.stale
    np.testing.assert_array_equal(node.controller.theta_hat, theta)
    # an old stamp is still a valid state (the timeout is about arrival): answered
    assert loop.ask(q, v, stamp=cv.stamp_to_ns(out.header.stamp) + 1) is not None


def test_enable_disable_service_and_parameter_validation(ros):
    node = make_node(ros)
    loop = Loop(ros)
    assert loop.ready(node)
    q, v = READY.copy(), np.zeros(7)
    assert loop.ask(q, v) is not None
    res = call(ros, SetBool, "/adaptive_controller/enable", SetBool.Request(data=False))
    assert res.success and not node.enabled
    assert ros.spin_until(lambda: np.all(np.array(loop.torques[-1].effort) == 0.0), 10)
    # disabled: each state is answered with zero torque, stamped with it (lockstep)
    out = loop.ask(q, v)
    assert out is not None and np.all(np.array(out.effort) == 0.0)
    res = call(ros, SetBool, "/adaptive_controller/enable", SetBool.Request(data=True))
    assert res.success and node.enabled
    assert loop.ask(q, v) is not None
    # a reference received before disabling is forgotten on enable: the node holds the
    # position of the first state after it (e = 0) until a new reference arrives
    t0 = loop.now()
    loop.ref_pub.publish(cv.make_trajectory(NAMES, [0.0, 100.0], positions=[q + 0.3, q + 0.6],
                                            stamp_ns=t0))
    assert ros.spin_until(lambda: node.reference is not None, 10)
    assert call(ros, SetBool, "/adaptive_controller/enable",
                SetBool.Request(data=False)).success
    assert call(ros, SetBool, "/adaptive_controller/enable",
                SetBool.Request(data=True)).success
    assert node.reference is None
    n_err = len(loop.err)
    assert loop.ask(q, v) is not None
    assert ros.spin_until(lambda: len(loop.err) > n_err, 10)
    np.testing.assert_array_equal(np.reshape(loop.err[-1].data, (3, 7))[0], np.zeros(7))
    # gains: negative, non-finite or wrongly sized values are refused, the old ones stay
    for name, value in (("kd_gains", [-1.0]), ("lambda_gains", [1.0, 2.0]),
                        ("gamma_gains", [0.0]), ("gamma_gains", [1.0, 2.0, 3.0]),
                        ("effort_limits", [1.0, 2.0]), ("kd_gains", [float("nan")])):
        res = node.set_parameters([Parameter(name, value=value)])
        assert not res[0].successful, (name, value)
    assert node.p.kd_gains == []                # unset: arm7's gains file
    np.testing.assert_allclose(node.controller.gains.K_D, ARM7_KD)
    theta = node.controller.theta_hat
    res = node.set_parameters([Parameter("kd_gains", value=[5.0] * 7)])
    assert res[0].successful
    np.testing.assert_allclose(node.controller.gains.K_D, [5.0] * 7)
    np.testing.assert_array_equal(node.controller.theta_hat, theta)   # estimate kept
    # compensate_gravity false: at rest on the held pose the torque is zero
    assert node.set_parameters([Parameter("compensate_gravity", value=False)])[0].successful
    out = loop.ask(q, v)
    assert out is not None and np.abs(out.effort).max() < 1e-9
    assert node.set_parameters([Parameter("adapt", value=False)])[0].successful
    assert not node.controller.adapt


def test_effort_limits_clamp_and_are_reported(ros):
    node = make_node(ros, effort_limits=[2.0])
    loop = Loop(ros)
    assert loop.ready(node)
    out = loop.ask(READY, np.full(7, 1.0))
    assert out is not None and np.abs(out.effort).max() <= 2.0 and node.clamped == 1


def test_console_script_runs_and_refuses_bad_gains(ros):
    proc = NodeProcess(NODE_MODULE, ros_args(("urdf_path", ARM7), ("state_timeout", "0.0")))
    bad = NodeProcess(NODE_MODULE, ros_args(("urdf_path", ARM7), ("kd_gains", "[-1.0]")))
    try:
        loop = Loop(ros)
        assert proc.wait_for_log("adaptive Slotine-Li on 7 joints", 60, ros.executor), \
            proc.describe()
        assert wait_matched(ros, pub=loop.pub, sub=loop.sub, timeout_s=30), proc.describe()
        got = None
        for _ in range(40):          # the first message may precede discovery: re-send
            got = loop.ask(READY, np.zeros(7), timeout_s=0.5)
            if got is not None:
                break
        assert got is not None and len(got.effort) == 7, proc.describe()
        deadline = time.monotonic() + 30
        while bad.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not bad.alive() and bad.proc.returncode == 1, bad.describe()
        assert "kd_gains" in bad.log()
    finally:
        rc = proc.stop()        # stop both before asserting anything about them
        bad.stop()
    assert rc in (0, -2), proc.describe()


def test_closed_loop_through_the_nodes_converges(tmp_path, capsys):
    """Simulator node (arm7 + 2 kg payload) <-> adaptive_controller_node (arm7), 10 s of
    simulated time at 1 kHz in lockstep: RMS of the last second <= 10% of the first."""
    s = demo.run(duration=10.0, out_dir=str(tmp_path), plot=False, which=("adaptive",),
                 stream=open(os.devnull, "w"))
    rms = s["rms_per_second"][:, 0]
    V = s["adaptive_V"]
    with capsys.disabled():
        print("\n[through the nodes] RMS per second %s, ratio %.3f, V %.3g -> %.3g (largest "
              "increase %.2e), %.2fx real time, lockstep timeouts %d"
              % (np.array2string(rms, precision=4), s["ratio_adaptive"], V[0], V[-1],
                 s["V_max_increase"], s["realtime_factor"], s["lockstep_misses"]))
    assert s["lockstep_misses"] == 0
    assert s["dropped"] == {"adaptive": 0}
    assert s["ratio_adaptive"] <= 0.1
    assert s["V_max_increase"] <= 1e-6 * V[0]
    assert abs(s["theta_hat"][0] - s["theta_nominal"][0] - demo.PAYLOAD_MASS) < 0.2
    assert (tmp_path / "adaptive_demo.npz").exists()


def test_demo_console_entry_writes_the_figure(tmp_path):
    """The make-demo entry point, short: both loops, the printout and the PNG."""
    import io
    import contextlib
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = demo.main(["--duration", "2", "--out", str(tmp_path)])
    text = buf.getvalue()
    assert rc == 0
    assert "tracking RMS" in text and "2.0 s" in text, text
    assert (tmp_path / "adaptive_demo.png").stat().st_size > 10_000


def test_demo_without_matplotlib_skips_the_figure_with_a_message(tmp_path, monkeypatch):
    """matplotlib is optional at run time: the demo runs, writes the data and says why
    there is no figure."""
    import io
    import sys
    monkeypatch.setitem(sys.modules, "matplotlib", None)     # import matplotlib -> ImportError
    out = io.StringIO()
    s = demo.run(duration=0.2, out_dir=str(tmp_path), stream=out)
    assert "figure" not in s
    assert "matplotlib is not installed: no figure" in out.getvalue()
    assert (tmp_path / "adaptive_demo.npz").exists()
    assert not (tmp_path / "adaptive_demo.png").exists()


ARM7_KD = [20.0, 20.0, 20.0, 20.0, 4.0, 4.0, 2.0]      # config/arm7_adaptive_gains.yaml


def test_gains_come_from_parameters_else_the_robots_gains_file_else_built_in(ros, tmp_path):
    """urdf_path alone switches robots: arm7 finds config/arm7_adaptive_gains.yaml, the
    double pendulum (no such file) gets the built-in scalars, a parameter beats the file,
    gains_file beats the robot's file, and a bad gains file is refused with its name."""
    arm = make_node(ros)
    np.testing.assert_allclose(arm.controller.gains.K_D, ARM7_KD)
    assert "arm7_adaptive_gains.yaml" in arm.rt.gains_source
    pend = make_node(ros, urdf_path=DOUBLE_PENDULUM)
    g = pend.controller.gains
    assert (g.K_D == 20.0).all() and (g.Lambda == 10.0).all()
    assert pend.rt.gains_source == "built-in"
    mixed = make_node(ros, kd_gains=[5.0])
    assert (mixed.controller.gains.K_D == 5.0).all()
    np.testing.assert_allclose(mixed.controller.gains.Gamma,
                               [10.0, 1.0, 1.0, 1.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1])
    f = tmp_path / "gains.yaml"
    f.write_text("/**:\n  ros__parameters:\n    kd_gains: [7.0]\n")
    res = arm.set_parameters([Parameter("gains_file", value=str(f))])[0]
    assert res.successful, res.reason
    assert (arm.controller.gains.K_D == 7.0).all() and (arm.controller.gains.Lambda == 10.0).all()
    f.write_text("/**:\n  ros__parameters:\n    kd_gains: [-7.0]\n")
    res = arm.set_parameters([Parameter("gains_file", value=str(tmp_path / "none.yaml"))])[0]
    assert not res.successful and "none.yaml" in res.reason
    res = arm.set_parameters([Parameter("gains_file", value=str(f))])[0]
    assert not res.successful and "K_D" in res.reason, res.reason
    for text, says in (("kd_gains: [a, b]", "kd_gains must be numbers"),
                       ("kd_gains: [1", "not valid YAML")):
        f.write_text("/**:\n  ros__parameters:\n    %s\n" % text)
        res = arm.set_parameters([Parameter("gains_file", value=str(f))])[0]
        assert not res.successful and says in res.reason, res.reason
    assert (arm.controller.gains.K_D == 7.0).all()            # the old gains stay
    f.write_text("/**:\n  ros__parameters:\n    kd_gains: 3.0\n")     # a scalar is fine
    assert arm.set_parameters([Parameter("gains_file", value=str(f))])[0].successful
    assert (arm.controller.gains.K_D == 3.0).all()



def test_compensate_friction_is_declared_and_acts_at_the_reference_velocity(ros):
    node = make_node(ros, robot_description=damped_pendulum_xml(0.5, 0.3), adapt=False,
                     clamp_efforts=False)
    assert node.p.compensate_friction and node.p.friction_velocity_epsilon == 0.02
    loop = Loop(ros)
    assert loop.ready(node)
    model = bundled("double_pendulum.urdf")           # the same robot without <dynamics>
    q1, v = np.array([0.3, -0.4]), np.array([0.2, -0.1])
    assert loop.ask(q1, v, names=list(model.joint_names)) is not None   # holds q1
    g = node.controller.gains
    ref = AdaptiveSlotineLiController(model, AdaptiveGains(g.Lambda, g.K_D, g.Gamma),
                                      payload_only=True, adapt=False)
    q2 = q1 + np.array([0.05, -0.0001])
    v_r = -g.Lambda * (q2 - q1)                       # v_d = 0: the held position
    assert abs(v_r[0]) > 0.02 > abs(v_r[1])
    rigid = ref.step(0.0, q2, v, q1, np.zeros(2), np.zeros(2), 0.0)
    out = loop.ask(q2, v, names=list(model.joint_names))
    np.testing.assert_allclose(out.effort, rigid + 0.5 * v_r + 0.3 * np.clip(v_r / 0.02, -1, 1),
                               atol=1e-9)
    assert all(r.successful for r in node.set_parameters(
        [Parameter("compensate_friction", value=False)]))
    np.testing.assert_allclose(loop.ask(q2, v, names=list(model.joint_names)).effort, rigid,
                               atol=1e-9)


def test_a_lockstep_simulator_keeps_its_pace_through_a_reference_and_a_disabled_controller(ros):
    """Issue 22: disabling the controller once slowed a lockstep simulator to one step per
    lockstep_timeout (1 s), and the first reference stalled it. The simulator (100 Hz wall
    timer, no gravity so the unpowered pendulum stays put) and the controller run in the
    test's executor; the disabled controller answers every state with zero torque. The double
    pendulum: arm7's light wrist under the built-in gains is too stiff for 10 ms steps."""
    from lie_dynamics_ros.ros.forward_dynamics_node import ForwardDynamicsNode
    rate = 100.0
    q0 = np.array([0.3, -0.2])
    sim = ros.add(ForwardDynamicsNode(context=ros.context, drive="timer", parameter_overrides=[
        Parameter(k, value=v) for k, v in dict(
            urdf_path=DOUBLE_PENDULUM, initial_positions=list(q0), start_mode="immediate",
            lockstep=True, lockstep_timeout=1.0, rate=rate, gravity=[0.0, 0.0, 0.0]).items()]))
    node = make_node(ros, urdf_path=DOUBLE_PENDULUM, gravity=[0.0, 0.0, 0.0])
    ref_pub = ros.node.create_publisher(JointTrajectory, "reference", 10)
    assert ros.spin_until(lambda: sim.sim.steps >= 20, 20)    # the loop runs

    def steps_in(seconds):
        n0, t0 = sim.sim.steps, time.monotonic()
        ros.spin_for(seconds)
        return (sim.sim.steps - n0) / (time.monotonic() - t0)

    assert ros.spin_until(lambda: ref_pub.get_subscription_count() >= 2, 10)
    ref_pub.publish(cv.make_trajectory(list(sim.sim.model.joint_names), [0.0, 2.0],
                                       positions=[q0, q0 + 0.2]))
    assert ros.spin_until(lambda: node.reference is not None, 10)
    with_reference = steps_in(1.5)
    # the service is called while the executor spins (a blocking call would pause the
    # simulator's timer and the controller with it, and the wall clock of the lockstep wait)
    client = ros.node.create_client(SetBool, "/adaptive_controller/enable")
    assert ros.spin_until(client.service_is_ready, 10)
    future = client.call_async(SetBool.Request(data=False))
    assert ros.spin_until(future.done, 10) and future.result().success
    disabled = steps_in(2.0)
    assert sim.runtime.lockstep_timeouts == 0 and sim.runtime.halted is None
    assert with_reference > 0.3 * rate and disabled > 0.3 * rate, (with_reference, disabled)
