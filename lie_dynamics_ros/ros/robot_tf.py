"""The topics that let a viewer draw the robot from a bag: ``/tf`` and ``/tf_static``
(tf2_msgs/msg/TFMessage) and ``/robot_description`` (std_msgs/msg/String).

tf2_msgs has no Jazzy wheel, so TFMessage is written here: its ``ros2msg`` definition (the
one line of TFMessage.msg, then the installed geometry_msgs definitions it nests) and its CDR
bytes (XCDR1 little endian, each primitive aligned to its size from the start of the payload).
"""
import functools
import struct
from typing import Iterable, Tuple

import numpy as np
from geometry_msgs.msg import TransformStamped
from rclpy.qos import QoSProfile
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from ..algorithms.link_transforms import moving_link_transforms, static_link_transforms
from ..lie import so3
from ..runtime.robot import joint_state_reason
from .conversions import JointIndex, parse_joint_state
from .model_source import load_model, transient_local_qos
from .recording import MessageType, Rosbag2Recorder, message_definition, qos_profile_dict

TF_TOPIC, TF_STATIC_TOPIC, DESCRIPTION_TOPIC = "/tf", "/tf_static", "/robot_description"
#: tf2_ros' TransformBroadcaster publisher depth
TF_DEPTH = 100


def tf_message_type() -> MessageType:
    """tf2_msgs/msg/TFMessage as a schema: name and complete definition."""
    nested = message_definition(TransformStamped)
    return MessageType("tf2_msgs/msg/TFMessage",
                       "geometry_msgs/TransformStamped[] transforms\n" + "=" * 80 +
                       "\nMSG: geometry_msgs/msg/TransformStamped\n" + nested)


@functools.lru_cache(maxsize=64)
def _layout(frames: Tuple[Tuple[str, str], ...]):
    """struct.Struct of a TFMessage with these (parent, child) frames. CDR pads each primitive
    to a multiple of its size, counted from after the 4-byte encapsulation header."""
    fmt, off = ["<4sI"], 4                             # header, sequence length

    def align(n):
        nonlocal off
        pad = -off % n
        fmt.append("%dx" % pad if pad else "")
        off += pad
    for parent, child in frames:
        align(4)
        fmt.append("iI")                               # stamp sec, nanosec
        off += 8
        for name in (parent, child):
            align(4)
            n = len(name.encode("utf-8")) + 1          # the length counts the NUL
            fmt.append("I%ds" % n)
            off += 4 + n
        align(8)
        fmt.append("7d")                               # translation, quaternion x y z w
        off += 56
    return struct.Struct("".join(fmt))


def encode_tf_message(transforms: Iterable[Tuple[int, str, str, np.ndarray]]) -> bytes:
    """CDR bytes of a TFMessage of (stamp ns, parent frame, child frame, 4x4 pose) items."""
    transforms = list(transforms)
    values = [b"\x00\x01\x00\x00", len(transforms)]   # CDR little endian, no options
    for stamp_ns, parent, child, T in transforms:
        values += divmod(int(stamp_ns), 1_000_000_000)
        for name in (parent, child):
            b = name.encode("utf-8") + b"\x00"
            values += (len(b), b)
        values += T[:3, 3].tolist() + so3.rot_to_quat(T[:3, :3]).tolist()
    return _layout(tuple((p, c) for _, p, c, _ in transforms)).pack(*values)


class RobotTf:
    """Writes a robot's /robot_description and /tf_static once (``start``) and its /tf for
    every sensor_msgs/JointState (``joint_state``), from our forward kinematics, into a
    ``Rosbag2Recorder`` or ``McapRecorder``.

    A JointState that does not give every joint's position gets no /tf; ``skipped`` counts
    them and ``skip_reason`` keeps the first reason."""

    def __init__(self, model, description: str):
        reason = joint_state_reason(model)
        if reason:
            raise ValueError("cannot record /tf from joint_states: " + reason)
        self.model, self.description = model, description
        self.index = JointIndex(model.joint_names)
        self.tf_type = tf_message_type()
        self.skipped, self.skip_reason = 0, None
        self._latched = [qos_profile_dict(transient_local_qos())]
        self._volatile = [qos_profile_dict(QoSProfile(depth=TF_DEPTH))]

    @classmethod
    def from_file(cls, path: str) -> "RobotTf":
        """From a URDF (or SDF) file; raises ValueError naming what is wrong with it."""
        with open(path, encoding="utf-8") as f:
            text = f.read()
        return cls(load_model(path, True), text)

    @staticmethod
    def _write(recorder, topic, msg_type, data, log_time_ns, qos):
        if isinstance(recorder, Rosbag2Recorder):
            recorder.write(topic, msg_type, data, log_time_ns, offered_qos=qos)
        else:
            recorder.write(topic, msg_type, data, log_time_ns)

    def start(self, recorder, log_time_ns: int):
        """/robot_description and /tf_static, latched (transient local) as
        robot_state_publisher and tf2's StaticTransformBroadcaster offer them."""
        self._write(recorder, DESCRIPTION_TOPIC, String,
                    serialize_message(String(data=self.description)), log_time_ns, self._latched)
        static = [(log_time_ns, t.parent, t.child, t.pose)
                  for t in static_link_transforms(self.model)]
        self._write(recorder, TF_STATIC_TOPIC, self.tf_type, encode_tf_message(static),
                    log_time_ns, self._latched)

    def joint_state(self, recorder, data: bytes, log_time_ns: int):
        """/tf for one serialized JointState, stamped with its header stamp."""
        js, reason = parse_joint_state(deserialize_message(bytes(data), JointState), self.index,
                                       need=("position",), optional=())
        if reason:
            self.skipped += 1
            self.skip_reason = self.skip_reason or reason
            return
        q = np.zeros(self.model.nq)
        q[self.model.joint_q_index] = js.position
        tf = [(js.stamp_ns, t.parent, t.child, t.pose)
              for t in moving_link_transforms(self.model, q)]
        self._write(recorder, TF_TOPIC, self.tf_type, encode_tf_message(tf), log_time_ns,
                    self._volatile)
