"""Writing JointState bags for the tests with the rosbags package, which implements rosbag2
(MCAP and sqlite3) and CDR independently of the package's reader."""
import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

TYPESTORE = get_typestore(Stores.ROS2_JAZZY)
JOINT_STATE = "sensor_msgs/msg/JointState"
STORAGE = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}


def joint_state(stamp_ns, names, position=(), velocity=(), effort=()):
    T = TYPESTORE.types
    return T[JOINT_STATE](
        header=T["std_msgs/msg/Header"](
            stamp=T["builtin_interfaces/msg/Time"](sec=int(stamp_ns // 10**9),
                                                   nanosec=int(stamp_ns % 10**9)),
            frame_id=""),
        name=list(names), position=np.asarray(position, dtype=np.float64),
        velocity=np.asarray(velocity, dtype=np.float64),
        effort=np.asarray(effort, dtype=np.float64))


def write_bag(path, messages, storage="mcap", topic="/joint_states", extra_topics=()):
    """A rosbag2 folder at ``path`` with ``messages`` [(receive time ns, JointState)] on
    ``topic``; ``extra_topics`` adds (topic, type, [(ns, msg)]) channels."""
    with Writer(path, version=9, storage_plugin=STORAGE[storage]) as w:
        conn = w.add_connection(topic, JOINT_STATE, typestore=TYPESTORE)
        extra = [(w.add_connection(tp, ty, typestore=TYPESTORE), ty, msgs)
                 for tp, ty, msgs in extra_topics]
        for ns, msg in messages:
            w.write(conn, ns, TYPESTORE.serialize_cdr(msg, JOINT_STATE))
        for c, ty, msgs in extra:
            for ns, msg in msgs:
                w.write(c, ns, TYPESTORE.serialize_cdr(msg, ty))


def write_recording(path, t, names, position, velocity=None, effort=None, storage="mcap",
                    order=None, topic="/joint_states"):
    """Rows of (N, n) arrays as JointState messages, each listing the joints in ``order``
    (a permutation of ``names``; default as given); None fields are left empty."""
    order = list(range(len(names))) if order is None else [list(names).index(n) for n in order]
    msgs = []
    for i, ti in enumerate(t):
        ns = int(round(ti * 1e9))
        msgs.append((ns, joint_state(
            ns, [names[j] for j in order], np.asarray(position[i])[order],
            () if velocity is None else np.asarray(velocity[i])[order],
            () if effort is None else np.asarray(effort[i])[order])))
    write_bag(path, msgs, storage, topic)
