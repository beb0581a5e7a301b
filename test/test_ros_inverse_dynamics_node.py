"""inverse_dynamics_node over real DDS, against ldr.inverse_dynamics.

The first test runs the node as a separate process (``python -m ...inverse_dynamics_node
--ros-args ...``), the others run it in-process in the test's executor (same code path,
faster start-up).
"""
import numpy as np

from ros_fixtures import ARM7, DOUBLE_PENDULUM, NodeProcess, ros, ros_args, wait_matched  # noqa

from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import (DurabilityPolicy, QoSProfile, ReliabilityPolicy,  # noqa: E402
                       qos_profile_sensor_data)
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402

import lie_dynamics_ros as ldr  # noqa: E402
from models import bundled, damped_pendulum_xml  # noqa: E402
from lie_dynamics_ros.ros import conversions as cv  # noqa: E402
from lie_dynamics_ros.ros.inverse_dynamics_node import InverseDynamicsNode  # noqa: E402

TOL = 1e-9
EXTRA = ["panda_finger_joint1", "panda_finger_joint2", "some_other_robot_joint"]


class Exchange:
    """Publishes joint states and waits for the torques with the same stamp."""

    def __init__(self, session, state_topic="joint_states", torque_topic="joint_torques",
                 qos=10):
        self.s = session
        self.by_stamp = {}
        self.all = []
        self.sub = session.node.create_subscription(JointState, torque_topic, self._on, 10)
        self.pub = session.node.create_publisher(JointState, state_topic, qos)
        self.stamp = 1_000_000_000

    def _on(self, msg):
        self.all.append(msg)
        self.by_stamp[cv.stamp_to_ns(msg.header.stamp)] = msg

    def next_stamp(self):
        self.stamp += 10_000_000
        return self.stamp

    def ask(self, names, q, v, effort=None, pub=None, timeout_s=20.0, stamp=None):
        """Publish (re-publishing until answered: best effort may drop) -> torques msg."""
        stamp = self.next_stamp() if stamp is None else stamp
        msg = cv.make_joint_state(names, stamp, q, v, effort)
        pub = pub or self.pub
        return self.s.request(lambda: pub.publish(msg), lambda: self.by_stamp.get(stamp),
                              timeout_s)


def shuffled_message(model, q, v, rng):
    """Model joints in a random order plus extra joints (NaN effort, as from a broadcaster)."""
    names = list(model.joint_names) + EXTRA
    pos = np.r_[q, rng.normal(size=len(EXTRA))]
    vel = np.r_[v, rng.normal(size=len(EXTRA))]
    eff = np.full(len(names), np.nan)
    perm = rng.permutation(len(names))
    return [names[i] for i in perm], pos[perm], vel[perm], eff[perm]


def test_node_process_matches_inverse_dynamics_shuffled_and_extra_joints(ros):
    model = ldr.load_urdf(ARM7)
    names = list(model.joint_names)
    cmd_order = list(reversed(names))
    proc = NodeProcess("lie_dynamics_ros.ros.inverse_dynamics_node", ros_args(
        ("urdf_path", ARM7), ("command_topic", "/effort_controller/commands"),
        ("joints", "[%s]" % ", ".join(cmd_order)), ("clamp_efforts", "false"),
        remaps=[("joint_states", "/arm/joint_states")]))
    try:
        ex = Exchange(ros, state_topic="/arm/joint_states")
        best_effort = ros.node.create_publisher(JointState, "/arm/joint_states",
                                                qos_profile_sensor_data)
        cmds = []
        ros.node.create_subscription(Float64MultiArray, "/effort_controller/commands",
                                     cmds.append, 10)
        ref_pub = ros.node.create_publisher(JointTrajectory, "reference", 10)
        assert proc.wait_for_log("robot model loaded", 60, ros.executor), proc.describe()
        assert wait_matched(ros, pub=ex.pub, sub=ex.sub), proc.describe()

        rng = np.random.default_rng(3)
        for k in range(8):
            q, v = ldr.random_configuration(model, rng), rng.normal(size=model.nv)
            msg_names, pos, vel, eff = shuffled_message(model, q, v, rng)
            # alternate a reliable and a best-effort publisher: sensor-data QoS hears both
            out = ex.ask(msg_names, pos, vel, eff, pub=ex.pub if k % 2 else best_effort)
            assert out, "no joint_torques for state %d\n%s" % (k, proc.describe())
            assert list(out.name) == names
            expected = ldr.inverse_dynamics(model, q, v, np.zeros(model.nv))
            np.testing.assert_allclose(np.array(out.effort), expected, rtol=0, atol=TOL)
        # the Float64MultiArray command is in `joints` order (commands carry no stamp: wait
        # for the one of the last state)
        want = cv.reorder(expected, names, cmd_order)
        assert ros.spin_until(lambda: cmds and np.allclose(cmds[-1].data, want, rtol=0,
                                                            atol=TOL), 10), proc.describe()

        # reference accelerations, given for the joints in another order
        a_ref = rng.normal(size=model.nv)
        ref = cv.make_trajectory(cmd_order, [0.0], accelerations=[cv.reorder(a_ref, names,
                                                                            cmd_order)])
        q, v = ldr.random_configuration(model, rng), rng.normal(size=model.nv)
        expected = ldr.inverse_dynamics(model, q, v, a_ref)
        assert wait_matched(ros, pub=ref_pub), proc.describe()

        def matches():
            ref_pub.publish(ref)
            out = ex.ask(names, q, v, timeout_s=2.0)
            return out is not None and np.allclose(out.effort, expected, rtol=0, atol=TOL)
        assert ros.spin_until(matches, 30), proc.describe()
        assert proc.alive(), proc.describe()
    finally:
        proc.stop()


def _node(session, **params):
    overrides = [Parameter(k, value=v) for k, v in params.items()]
    return session.add(InverseDynamicsNode(context=session.context,
                                           parameter_overrides=overrides))


def test_compensate_gravity_false_and_runtime_gravity_change(ros):
    model = ldr.load_urdf(ARM7)
    node = _node(ros, urdf_path=ARM7, compensate_gravity=False)
    ex = Exchange(ros)
    assert wait_matched(ros, pub=ex.pub, sub=ex.sub)
    rng = np.random.default_rng(5)
    q, v = ldr.random_configuration(model, rng), rng.normal(size=model.nv)
    out = ex.ask(model.joint_names, q, v)
    model = model.with_gravity(np.zeros(3))
    np.testing.assert_allclose(out.effort, ldr.inverse_dynamics(model, q, v, np.zeros(7)),
                               atol=TOL)
    # switch gravity compensation on at run time, with another gravity vector
    res = node.set_parameters([Parameter("compensate_gravity", value=True),
                               Parameter("gravity", value=[0.0, 0.0, -3.7])])
    assert all(r.successful for r in res)
    out = ex.ask(model.joint_names, q, v)
    model = model.with_gravity(np.array([0.0, 0.0, -3.7]))
    np.testing.assert_allclose(out.effort, ldr.inverse_dynamics(model, q, v, np.zeros(7)),
                               atol=TOL)
    # a bad value is refused, the old one stays
    res = node.set_parameters([Parameter("gravity", value=[0.0, -1.0])])
    assert not res[0].successful and "3 values" in res[0].reason
    assert node.p.gravity == [0.0, 0.0, -3.7]


def test_clamping_to_urdf_effort_limits_acts_and_is_reported(ros):
    model = ldr.load_urdf(ARM7)
    node = _node(ros, urdf_path=ARM7)
    ex = Exchange(ros)
    ref_pub = ros.node.create_publisher(JointTrajectory, "reference", 10)
    assert wait_matched(ros, pub=ex.pub, sub=ex.sub) and wait_matched(ros, pub=ref_pub)
    a_big = np.full(model.nv, 500.0)
    ref_pub.publish(cv.make_trajectory(model.joint_names, [0.0], accelerations=[a_big]))
    assert ros.spin_until(lambda: node.reference is not None, 10)
    q = np.zeros(model.nv)
    out = ex.ask(model.joint_names, q, q)
    limits = np.asarray(model.effort_limits)
    raw = ldr.inverse_dynamics(model, q, q, a_big)
    assert (np.abs(raw) > limits).any()
    np.testing.assert_allclose(out.effort, np.clip(raw, -limits, limits), atol=TOL)
    assert node.clamped >= 1


def test_model_from_robot_description_parameter_and_integer_gravity(ros):
    with open(DOUBLE_PENDULUM) as f:
        xml = f.read()
    node = ros.add(InverseDynamicsNode(context=ros.context, cli_args=[
        "--ros-args", "-p", "gravity:=[0, 0, -5]"],
        parameter_overrides=[Parameter("robot_description", value=xml)]))
    assert node.source.origin == "parameter robot_description"
    assert node.p.gravity == [0.0, 0.0, -5.0]
    model = ldr.load_urdf(DOUBLE_PENDULUM)
    model = model.with_gravity(np.array([0.0, 0.0, -5.0]))
    ex = Exchange(ros)
    assert wait_matched(ros, pub=ex.pub, sub=ex.sub)
    q, v = np.array([0.3, -0.4]), np.array([0.1, 0.2])
    out = ex.ask(["joint2", "joint1"], q[::-1], v[::-1])
    np.testing.assert_allclose(out.effort, ldr.inverse_dynamics(model, q, v, np.zeros(2)),
                               atol=TOL)


def test_model_from_transient_local_robot_description_topic(ros):
    with open(DOUBLE_PENDULUM) as f:
        xml = f.read()
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
    desc_pub = ros.node.create_publisher(String, "robot_description", latched)
    desc_pub.publish(String(data=xml))       # before the node exists, like robot_state_publisher
    node = _node(ros)
    assert ros.spin_until(lambda: node.source.has_model, 20)
    assert node.source.origin.startswith("topic")
    ex = Exchange(ros)
    assert wait_matched(ros, pub=ex.pub, sub=ex.sub)
    model = ldr.load_urdf(DOUBLE_PENDULUM)
    q, v = np.array([1.0, 0.5]), np.array([-0.2, 0.3])
    out = ex.ask(model.joint_names, q, v)
    np.testing.assert_allclose(out.effort, ldr.inverse_dynamics(model, q, v, np.zeros(2)),
                               atol=TOL)


def test_compensate_friction_is_declared_and_adds_the_urdfs_friction(ros):
    node = _node(ros, robot_description=damped_pendulum_xml(0.5, 0.3))
    assert node.p.compensate_friction and node.p.friction_velocity_epsilon == 0.02
    model = bundled("double_pendulum.urdf")          # the same robot without <dynamics>
    ex = Exchange(ros)
    assert wait_matched(ros, pub=ex.pub, sub=ex.sub)
    q, v = np.array([0.3, -0.4]), np.array([0.4, -0.01])   # joint2 inside the 0.02 layer
    rigid = ldr.inverse_dynamics(model, q, v, np.zeros(2))
    out = ex.ask(model.joint_names, q, v)
    np.testing.assert_allclose(out.effort, rigid + 0.5 * v + 0.3 * np.array([1.0, -0.5]),
                               atol=TOL)
    assert all(r.successful for r in node.set_parameters(
        [Parameter("compensate_friction", value=False)]))
    np.testing.assert_allclose(ex.ask(model.joint_names, q, v).effort, rigid, atol=TOL)
