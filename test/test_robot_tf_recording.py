"""The robot in a bag: /tf, /tf_static (tf2_msgs/msg/TFMessage, written without tf2_msgs) and
/robot_description, read back with the rosbags package, which parses rosbag2 and CDR
independently of our writer; the transforms are compared with our forward kinematics."""
import io
import os

import numpy as np
import pytest

import ros_fixtures  # noqa: F401  (isolates DDS before rclpy is initialised)
from ros_fixtures import ARM7, DOUBLE_PENDULUM

from rclpy.serialization import serialize_message  # noqa: E402
from rosbags.rosbag2 import Reader  # noqa: E402
from rosbags.typesys import Stores, get_types_from_msg, get_typestore  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

import lie_dynamics_ros as ldr  # noqa: E402
from lie_dynamics_ros.lie import so3  # noqa: E402
from lie_dynamics_ros.ros.recording import Rosbag2Recorder  # noqa: E402
from lie_dynamics_ros.ros.robot_tf import (RobotTf, encode_tf_message,  # noqa: E402
                                           tf_message_type)

TOL = 1e-9
TYPESTORE = get_typestore(Stores.ROS2_JAZZY)
TF = "tf2_msgs/msg/TFMessage"


def pose_of(tf):
    """4x4 of a deserialized geometry_msgs/Transform."""
    t, r = tf.translation, tf.rotation
    T = np.eye(4)
    T[:3, :3] = so3.quat_to_rot([r.x, r.y, r.z, r.w])
    T[:3, 3] = t.x, t.y, t.z
    return T


def stamp_ns(stamp):
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def test_tf_message_bytes_equal_rosbags_serializer():
    """Frame names of odd lengths move the doubles off 8-byte boundaries: the padding must
    match CDR's (what rosbags writes for the Jazzy TFMessage)."""
    rng = np.random.default_rng(1)
    items = []
    for k, (parent, child) in enumerate([("a", "bc"), ("base_link", "link_1x"), ("", "é")]):
        T = np.eye(4)
        T[:3, :3] = so3.exp(rng.normal(size=3))
        T[:3, 3] = rng.normal(size=3)
        items.append((1_700_000_000_123_456_789 + k, parent, child, T))
    ours = encode_tf_message(items)
    M = TYPESTORE.types
    msg = M[TF](transforms=[M["geometry_msgs/msg/TransformStamped"](
        header=M["std_msgs/msg/Header"](
            stamp=M["builtin_interfaces/msg/Time"](sec=ns // 10 ** 9, nanosec=ns % 10 ** 9),
            frame_id=p),
        child_frame_id=c,
        transform=M["geometry_msgs/msg/Transform"](
            translation=M["geometry_msgs/msg/Vector3"](x=T[0, 3], y=T[1, 3], z=T[2, 3]),
            rotation=M["geometry_msgs/msg/Quaternion"](*so3.rot_to_quat(T[:3, :3]))))
        for ns, p, c, T in items])
    assert ours == bytes(TYPESTORE.serialize_cdr(msg, TF))
    back = TYPESTORE.deserialize_cdr(ours, TF)
    for (ns, p, c, T), t in zip(items, back.transforms):
        assert (stamp_ns(t.header.stamp), t.header.frame_id, t.child_frame_id) == (ns, p, c)
        np.testing.assert_allclose(pose_of(t.transform), T, rtol=0, atol=1e-15)
    assert encode_tf_message([]) == bytes(TYPESTORE.serialize_cdr(M[TF](transforms=[]), TF))


def test_tf_message_definition_parses_to_the_jazzy_type():
    types = get_types_from_msg(tf_message_type().definition, TF)
    store = get_typestore(Stores.EMPTY)
    store.register(types)
    for name in (TF, "geometry_msgs/msg/TransformStamped", "geometry_msgs/msg/Transform",
                 "std_msgs/msg/Header", "builtin_interfaces/msg/Time"):
        ours = [(f[0], f[1]) for f in store.fielddefs[name][1]]
        jazzy = [(f[0], f[1]) for f in TYPESTORE.fielddefs[name][1]]
        assert ours == jazzy, name


def test_recorder_writes_tf_for_each_joint_state_without_dds(tmp_path):
    model = ldr.load_urdf(DOUBLE_PENDULUM)
    with open(DOUBLE_PENDULUM, encoding="utf-8") as f:
        urdf = f.read()
    robot = RobotTf(model, urdf)
    path = str(tmp_path / "bag")
    rec = Rosbag2Recorder(path)
    robot.start(rec, 5)
    rng = np.random.default_rng(2)
    sent = {}
    for k in range(4):
        q = rng.normal(size=2)
        stamp = 1_000_000 * (k + 1)
        js = JointState(name=["joint2", "joint1"], position=[q[1], q[0]])   # not model order
        js.header.stamp.sec, js.header.stamp.nanosec = 0, stamp
        robot.joint_state(rec, serialize_message(js), 10 + k)
        sent[stamp] = q
    robot.joint_state(rec, serialize_message(JointState(name=["joint1"], position=[0.0])), 20)
    rec.close()
    assert robot.skipped == 1 and "joint2" in robot.skip_reason
    got = {}
    with Reader(path) as reader:
        for conn, t, raw in reader.messages():
            got.setdefault(conn.topic, []).append(TYPESTORE.deserialize_cdr(raw, conn.msgtype))
    assert got["/robot_description"][0].data == urdf
    (static,) = got["/tf_static"]
    assert [(t.header.frame_id, t.child_frame_id) for t in static.transforms] == [("link2", "tip")]
    assert len(got["/tf"]) == 4
    for msg in got["/tf"]:
        stamps = {stamp_ns(t.header.stamp) for t in msg.transforms}
        assert len(stamps) == 1
        poses = ldr.forward_kinematics(model, sent[stamps.pop()])
        for t in msg.transforms:
            ref = np.linalg.inv(poses[t.header.frame_id]) @ poses[t.child_frame_id]
            np.testing.assert_allclose(pose_of(t.transform), ref, rtol=0, atol=TOL)


def test_a_model_joint_states_cannot_carry_is_refused_by_name():
    from models import zoo
    with pytest.raises(ValueError, match="root_joint"):
        RobotTf(zoo(0), "<robot/>")


def test_bringup_offline_record_carries_the_robot(tmp_path):
    """ldr_bringup --offline --record: /tf at every joint_states stamp equals forward
    kinematics of that state's positions; /tf_static is latched; /robot_description is the
    URDF. The arm starts moving (gravity is compensated), so every state differs."""
    from lie_dynamics_ros.ros import bringup
    path = str(tmp_path / "run")
    start = tmp_path / "moving.yaml"
    start.write_text("/**/forward_dynamics:\n  ros__parameters:\n"
                     "    initial_positions: [0.0, -0.8, 0.0, -2.4, 0.0, 1.6, 0.8]\n"
                     "    initial_velocities: [0.5, -0.4, 0.3, 0.6, -0.5, 0.4, 1.0]\n")
    summary = bringup.run(["sim_with_gravity_compensation", "--urdf", ARM7, "--offline",
                           "--initial-state", str(start), "--duration", "0.05",
                           "--record", path], stream=io.StringIO())
    assert summary["steps"] == 50
    model = ldr.load_urdf(ARM7)
    states, tfs, other = {}, {}, {}
    with Reader(path) as reader:
        conns = {c.topic: c for c in reader.connections}
        for topic in ("/tf_static", "/robot_description"):
            (qos,) = conns[topic].ext.offered_qos_profiles
            assert qos.durability.name == "TRANSIENT_LOCAL", topic
        assert conns["/tf"].msgtype == TF
        for conn, t, raw in reader.messages():
            msg = TYPESTORE.deserialize_cdr(raw, conn.msgtype)
            if conn.topic == "/joint_states":
                states[stamp_ns(msg.header.stamp)] = msg
            elif conn.topic == "/tf":
                tfs[stamp_ns(msg.transforms[0].header.stamp)] = msg
            else:
                other.setdefault(conn.topic, []).append(msg)
    with open(ARM7, encoding="utf-8") as f:
        assert other["/robot_description"][0].data == f.read()
    (static,) = other["/tf_static"]
    assert {t.child_frame_id for t in static.transforms} == {"panda_link8", "panda_hand",
                                                             "panda_hand_tcp"}
    assert len(states) == 51 and sorted(tfs) == sorted(states)
    moved = 0.0
    for stamp, js in states.items():
        q = np.zeros(model.nq)
        q[[model.joint(n).q_index for n in js.name]] = js.position
        poses = ldr.forward_kinematics(model, q)
        msg = tfs[stamp]
        assert sorted(t.child_frame_id for t in msg.transforms) == sorted(model.body_names)
        for t in msg.transforms + static.transforms:
            ref = np.linalg.inv(poses[t.header.frame_id]) @ poses[t.child_frame_id]
            np.testing.assert_allclose(pose_of(t.transform), ref, rtol=0, atol=TOL)
        moved = max(moved, float(np.abs(np.asarray(js.position) - states[0].position).max()))
    assert moved > 1e-3    # the states differ: each /tf comes from its own state


def test_plain_mcap_recorder_gets_tf_decoded_from_our_definition(tmp_path):
    """McapRecorder too; mcap_ros2 decodes /tf with the schema we wrote (our definition
    text, parsed by a second independent reader)."""
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    from lie_dynamics_ros.ros.recording import McapRecorder
    model = ldr.load_urdf(ARM7)
    robot = RobotTf(model, "<robot/>")
    path = str(tmp_path / "run.mcap")
    rec = McapRecorder(path)
    robot.start(rec, 0)
    q = ldr.random_configuration(model, np.random.default_rng(4))
    js = JointState(name=list(model.joint_names), position=list(q))
    js.header.stamp.sec = 3
    robot.joint_state(rec, serialize_message(js), 3_000_000_000)
    rec.close()
    with open(path, "rb") as f:
        msgs = {c.topic: m for _, c, _, m in make_reader(
            f, decoder_factories=[DecoderFactory()]).iter_decoded_messages()}
    assert msgs["/robot_description"].data == "<robot/>"
    assert len(msgs["/tf_static"].transforms) == 3
    poses = ldr.forward_kinematics(model, q)
    tf = msgs["/tf"].transforms
    assert len(tf) == 7 and all(t.header.stamp.sec == 3 for t in tf)
    for t in tf:
        ref = np.linalg.inv(poses[t.header.frame_id]) @ poses[t.child_frame_id]
        np.testing.assert_allclose(pose_of(t.transform), ref, rtol=0, atol=TOL)
