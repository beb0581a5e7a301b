"""Bad input over real DDS: logged, dropped, the node stays alive, answers the next good
message correctly and never publishes NaN.

Bad and good messages go through the same reliable publisher, so DDS delivers them in order:
when the answer to the good message arrives, the bad one before it has been handled.
"""
import math

import numpy as np

from ros_fixtures import (ARM7, DOUBLE_PENDULUM, NodeProcess, ros, ros_args,  # noqa: F401
                          wait_matched)

from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402

import lie_dynamics_ros as ldr  # noqa: E402
from lie_dynamics_ros.ros import conversions as cv  # noqa: E402
from lie_dynamics_ros.ros.forward_dynamics_node import ForwardDynamicsNode  # noqa: E402
from lie_dynamics_ros.ros.inverse_dynamics_node import InverseDynamicsNode  # noqa: E402

TOL = 1e-9
ID_NODE = "lie_dynamics_ros.ros.inverse_dynamics_node"
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


class Probe:
    """Test-side publisher of joint states and recorder of joint_torques by stamp."""

    def __init__(self, session):
        self.s = session
        self.answers = {}
        self.all = []
        self.sub = session.node.create_subscription(JointState, "joint_torques", self._on, 10)
        self.pub = session.node.create_publisher(JointState, "joint_states", 10)
        self.ref_pub = session.node.create_publisher(JointTrajectory, "reference", 10)
        self.stamp = 10_000_000_000

    def _on(self, msg):
        self.all.append(msg)
        self.answers[cv.stamp_to_ns(msg.header.stamp)] = msg

    def new_stamp(self):
        self.stamp += 1_000_000
        return self.stamp

    def good(self, model, rng, timeout_s=20.0):
        """Send a good state (re-sent until answered) and check the answer; returns it."""
        q, v = ldr.random_configuration(model, rng), rng.normal(size=model.nv)
        stamp = self.new_stamp()
        msg = cv.make_joint_state(model.joint_names, stamp, q, v)
        out = self.s.request(lambda: self.pub.publish(msg), lambda: self.answers.get(stamp),
                             timeout_s)
        assert out is not None, "no answer to a good state"
        np.testing.assert_allclose(out.effort, ldr.inverse_dynamics(model, q, v, np.zeros(
            model.nv)), rtol=0, atol=TOL)
        return out

    def all_finite(self):
        return all(np.isfinite(m.effort).all() for m in self.all)


def bad_messages(names, last_good_stamp):
    """(label, message, expected log fragment); stamps above the last good one unless the
    point is a backwards stamp."""
    n = len(names)
    s = last_good_stamp + 500_000     # between the last good and the next good stamp
    q = np.linspace(0.1, 0.7, n)
    out = [
        ("mismatched lengths", cv.make_joint_state(names, s, q[:-1], q), "mismatched lengths"),
        ("NaN position", cv.make_joint_state(names, s, np.r_[q[:-1], math.nan], q),
         "non-finite position"),
        ("Inf velocity", cv.make_joint_state(names, s, q, np.r_[math.inf, q[1:]]),
         "non-finite velocity"),
        ("unknown joints", cv.make_joint_state(["x%d" % i for i in range(n)], s, q, q),
         "unknown joints"),
        ("missing joint", cv.make_joint_state(names[:-1], s, q[:-1], q[:-1]),
         "missing joints"),
        ("empty message", JointState(), "empty message"),
        ("backwards stamp", cv.make_joint_state(names, last_good_stamp - 5_000_000, q, q),
         "stamp goes backwards"),
        ("duplicate names", cv.make_joint_state(names + names[:1], s, np.r_[q, 0.0],
                                                np.r_[q, 0.0]), "duplicate joint name"),
    ]
    return out


def test_inverse_dynamics_process_survives_bad_joint_states(ros):
    model = ldr.load_urdf(ARM7)
    proc = NodeProcess(ID_NODE, ros_args(("urdf_path", ARM7), ("log_throttle_sec", "0.0")))
    try:
        probe = Probe(ros)
        assert proc.wait_for_log("robot model loaded", 60, ros.executor), proc.describe()
        assert wait_matched(ros, pub=probe.pub, sub=probe.sub), proc.describe()
        rng = np.random.default_rng(11)
        probe.good(model, rng)
        for label, msg, fragment in bad_messages(list(model.joint_names), probe.stamp):
            bad_stamp = cv.stamp_to_ns(msg.header.stamp)
            probe.pub.publish(msg)
            probe.good(model, rng)   # in order after the bad one: it was handled by now
            assert bad_stamp == 0 or bad_stamp not in probe.answers, label
            assert proc.alive(), "%s killed the node\n%s" % (label, proc.describe())
            assert fragment in proc.log(), "%s was not logged\n%s" % (label, proc.describe())
        # a bad reference (NaN acceleration) is dropped too; the next state is still right
        bad_ref = cv.make_trajectory(model.joint_names, [0.0],
                                     accelerations=[[math.nan] * model.nv])
        assert wait_matched(ros, pub=probe.ref_pub), proc.describe()
        probe.ref_pub.publish(bad_ref)
        assert proc.wait_for_log("non-finite accelerations", 20, ros.executor), proc.describe()
        probe.good(model, rng)
        assert probe.all_finite()
        assert proc.alive(), proc.describe()
    finally:
        proc.stop()


def test_malformed_urdf_from_parameter_and_topic_then_a_good_one(ros):
    model = ldr.load_urdf(DOUBLE_PENDULUM)
    with open(DOUBLE_PENDULUM) as f:
        good_xml = f.read()
    proc = NodeProcess(ID_NODE, ros_args(("robot_description", '<robot name="broken"><link'),
                                         ("log_throttle_sec", "0.0")))
    try:
        probe = Probe(ros)
        assert proc.wait_for_log("ignoring robot model from parameter robot_description", 60,
                                 ros.executor), proc.describe()
        assert proc.wait_for_log("waiting for the robot model on topic", 20, ros.executor)
        desc = ros.node.create_publisher(String, "robot_description", LATCHED)
        assert wait_matched(ros, pub=desc), proc.describe()
        # before any model the node does not subscribe to joint_states (it subscribes once
        # its kernels are compiled for a model)
        ros.spin_for(0.5)
        assert probe.pub.get_subscription_count() == 0, proc.describe()
        desc.publish(String(data="<robot name='x'><joint name='j' type='revolute'>"))
        assert proc.wait_for_log("ignoring robot model from topic", 20, ros.executor), \
            proc.describe()
        assert proc.alive(), proc.describe()
        desc.publish(String(data=good_xml))
        assert proc.wait_for_log("robot model loaded from topic", 20, ros.executor), \
            proc.describe()
        assert wait_matched(ros, sub=probe.sub), proc.describe()
        probe.good(model, np.random.default_rng(2))
        # a malformed description after a good one keeps the good model
        desc.publish(String(data="not xml at all"))
        assert proc.wait_for_log("robot_description is not XML", 20, ros.executor)
        probe.good(model, np.random.default_rng(3))
        assert probe.all_finite() and proc.alive(), proc.describe()
    finally:
        proc.stop()


def test_malformed_urdf_set_at_run_time_is_refused(ros):
    model = ldr.load_urdf(ARM7)
    node = ros.add(InverseDynamicsNode(context=ros.context, parameter_overrides=[
        Parameter("urdf_path", value=ARM7)]))
    probe = Probe(ros)
    assert wait_matched(ros, pub=probe.pub, sub=probe.sub)
    rng = np.random.default_rng(4)
    probe.good(model, rng)
    res = node.set_parameters([Parameter("robot_description", value="<robot name='b'><x")])
    assert not res[0].successful
    res = node.set_parameters([Parameter("urdf_path", value="/nonexistent/robot.urdf")])
    assert not res[0].successful and "not found" in res[0].reason
    probe.good(model, rng)
    assert node.model is not None and node.source.rejected == 2


def test_simulator_drops_bad_commands_and_never_publishes_nan(ros):
    model = ldr.load_urdf(DOUBLE_PENDULUM)
    sim = ros.add(ForwardDynamicsNode(context=ros.context, drive="external",
                                      parameter_overrides=[
                                          Parameter("urdf_path", value=DOUBLE_PENDULUM),
                                          Parameter("command_timeout", value=0.0),
                                          Parameter("log_throttle_sec", value=0.0)]))
    states = []
    sub = ros.node.create_subscription(JointState, "joint_states", states.append, 10)
    arr_pub = ros.node.create_publisher(Float64MultiArray, "effort_controller/commands", 10)
    js_pub = ros.node.create_publisher(JointState, "joint_torques", 10)
    assert wait_matched(ros, pub=arr_pub) and wait_matched(ros, pub=js_pub)
    assert wait_matched(ros, sub=sub)
    names = list(model.joint_names)

    good = cv.make_command_array([0.5, -0.25])
    bad = [
        (arr_pub, cv.make_command_array([1.0])),
        (arr_pub, cv.make_command_array([1.0, math.nan])),
        (arr_pub, Float64MultiArray()),
        (js_pub, cv.make_joint_state(names[:1], 5, effort=[1.0])),
        (js_pub, cv.make_joint_state(names, 5, effort=[math.inf, 1.0])),
        (js_pub, cv.make_joint_state(names, 5, effort=[1.0])),
        (js_pub, JointState()),
    ]
    arr_pub.publish(good)
    assert ros.spin_until(lambda: sim.runtime.last_cmd_ns is not None, 10)
    for pub, msg in bad:
        dropped = sim.dropped
        pub.publish(msg)
        assert ros.spin_until(lambda: sim.dropped == dropped + 1, 10)
        np.testing.assert_array_equal(sim.runtime.cmd, [0.5, -0.25])
    # backwards stamps on joint_torques
    js_pub.publish(cv.make_joint_state(names, 2_000_000_000, effort=[0.1, 0.2]))
    assert ros.spin_until(lambda: sim.runtime.cmd[0] == 0.1, 10)
    dropped = sim.dropped
    js_pub.publish(cv.make_joint_state(names, 1_000_000_000, effort=[9.0, 9.0]))
    assert ros.spin_until(lambda: sim.dropped == dropped + 1, 10)
    np.testing.assert_array_equal(sim.runtime.cmd, [0.1, 0.2])
    for _ in range(5):
        sim.tick()
    assert ros.spin_until(lambda: len(states) >= 5, 10)
    np.testing.assert_array_equal(states[-1].effort, [0.1, 0.2])
    assert all(np.isfinite(m.position).all() and np.isfinite(m.velocity).all()
               and np.isfinite(m.effort).all() for m in states)


def test_bad_parameter_values_stop_the_node_with_a_message(capsys):
    from lie_dynamics_ros.ros import forward_dynamics_node, inverse_dynamics_node
    rc = forward_dynamics_node.main(["fd", "--ros-args", "-p", "rate:=-5.0", "-p",
                                     "urdf_path:=%s" % ARM7])
    assert rc == 1 and "rate" in capsys.readouterr().err
    rc = inverse_dynamics_node.main(["id", "--ros-args", "-p", "gravity:=[1.0, 2.0]"])
    assert rc == 1 and "gravity" in capsys.readouterr().err
    rc = forward_dynamics_node.main(["fd", "--ros-args", "-p", "integrator:=no_such_method"])
    assert rc == 1 and "parameter integrator: 'no_such_method' is not one of" in (
        capsys.readouterr().err)
