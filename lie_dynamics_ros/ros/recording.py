"""Recording ROS 2 topics to rosbag2 bags (a folder with ``metadata.yaml`` and an MCAP file),
as ``ros2 bag record -s mcap`` writes them, for ``ros2 bag``, Foxglove and PlotJuggler.

``Rosbag2Recorder`` writes the folder: the MCAP file (below) with each channel's
``offered_qos_profiles`` in its metadata, and ``metadata.yaml`` (rosbag2 format version 9,
as ROS 2 Jazzy writes it) when it is closed. ``McapRecorder`` writes the MCAP file alone.

The file uses the ``ros2`` profile: one schema per message type (encoding ``ros2msg``, name
``pkg/msg/Type``, data = the complete message definition with its dependencies, as in
rosbag2's docs/message_definition_encoding.md) and one channel per topic (message encoding
``cdr``). Messages are written as the CDR bytes that came over DDS (raw subscriptions), so
nothing is re-serialized. ``ros2 bag info/play FILE.mcap`` (rosbag2 with the MCAP storage
plugin), Foxglove Studio and PlotJuggler open the result.

A type with no installed class (tf2_msgs/msg/TFMessage, see ``robot_tf``) is given as a
``MessageType`` (name, definition) with bytes serialized by its writer.

Only ``mcap`` is needed to write (``mcap-ros2-support`` is used by the tests to read back).
"""
import importlib
import os
import re
import sys
import time
from typing import Callable, Dict, List, NamedTuple, Optional

import yaml

_PRIMITIVES = {"double": "float64", "float": "float32", "boolean": "bool", "octet": "byte"}
_NAMESPACED = re.compile(r"([A-Za-z0-9_]+)/([A-Za-z0-9_]+)")


class MessageType(NamedTuple):
    """A message type without an installed Python class (e.g. tf2_msgs/msg/TFMessage): its
    full name and complete ``ros2msg`` definition. Accepted wherever a message class is."""
    name: str
    definition: str


def type_name(msg_cls) -> str:
    """Full ROS type name, e.g. ``sensor_msgs/msg/JointState``."""
    if isinstance(msg_cls, MessageType):
        return msg_cls.name
    pkg = msg_cls.__module__.split(".")[0]
    return "%s/msg/%s" % (pkg, msg_cls.__name__)


def _msg_class(pkg: str, name: str):
    return getattr(importlib.import_module("%s.msg" % pkg), name)


def _msg_file_text(pkg: str, name: str) -> Optional[str]:
    """The installed .msg file, from the ament index or <prefix>/share."""
    dirs = []
    try:
        from ament_index_python.packages import get_package_share_directory  # optional: ROS
        dirs.append(get_package_share_directory(pkg))
    except (ImportError, LookupError, OSError, ValueError):  # no ament index, or not in it
        pass
    dirs += [os.path.join(p, "share", pkg) for p in (sys.prefix, sys.base_prefix)]
    for d in dirs:
        path = os.path.join(d, "msg", name + ".msg")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                return f.read()
    return None


def _ros_type(t: str) -> str:
    """rosidl field type string (get_fields_and_field_types) -> .msg syntax."""
    m = re.fullmatch(r"sequence<(.+?)(?:, (\d+))?>", t)
    if m:
        inner, bound = m.groups()
        return _ros_type(inner) + ("[<=%s]" % bound if bound else "[]")
    m = re.fullmatch(r"(.+)\[(\d+)\]", t)
    if m:
        return _ros_type(m.group(1)) + "[%s]" % m.group(2)
    m = re.fullmatch(r"(w?string)<(\d+)>", t)
    if m:
        return "%s<=%s" % m.groups()
    return _PRIMITIVES.get(t, t)


def _generated_text(msg_cls) -> str:
    """A .msg text rebuilt from the Python class (fields only), when no .msg file is found."""
    return "\n".join("%s %s" % (_ros_type(t), f)
                     for f, t in msg_cls.get_fields_and_field_types().items()) + "\n"


def _dependencies(msg_cls):
    out = []
    for t in msg_cls.get_fields_and_field_types().values():
        for pkg, name in _NAMESPACED.findall(t):
            out.append((pkg, name))
    return out


def message_definition(msg_cls) -> str:
    """Complete ``ros2msg`` definition of ``msg_cls``: its own text, then every dependency
    (depth first, once each) after a line of 80 ``=`` and ``MSG: pkg/msg/Type``."""
    if isinstance(msg_cls, MessageType):
        return msg_cls.definition
    parts, seen = [], set()

    def text_of(cls):
        pkg = cls.__module__.split(".")[0]
        return _msg_file_text(pkg, cls.__name__) or _generated_text(cls)

    def visit(cls):
        for pkg, name in _dependencies(cls):
            key = "%s/msg/%s" % (pkg, name)
            if key in seen:
                continue
            seen.add(key)
            dep = _msg_class(pkg, name)
            parts.append("=" * 80 + "\nMSG: %s\n%s" % (key, text_of(dep).rstrip("\n")))
            visit(dep)

    main = text_of(msg_cls).rstrip("\n")
    visit(msg_cls)
    return "\n".join([main] + parts) + "\n"


class McapRecorder:
    """Writes serialized ROS 2 messages to one MCAP file.

    >>> rec = McapRecorder("run.mcap")
    >>> rec.write("/joint_states", JointState, cdr_bytes, log_time_ns)
    >>> rec.close()
    """

    def __init__(self, path: str, compression: str = "zstd", metadata: Dict[str, str] = None):
        from mcap.writer import CompressionType, Writer   # optional: only a recording needs it
        self.path = path
        parent = os.path.dirname(os.path.abspath(path))
        os.makedirs(parent, exist_ok=True)
        self._file = open(path, "wb")
        comp = {"zstd": CompressionType.ZSTD, "lz4": CompressionType.LZ4,
                "none": CompressionType.NONE}[compression]
        self._writer = Writer(self._file, compression=comp)
        self._writer.start(profile="ros2", library="lie_dynamics_ros")
        self._schemas: Dict[str, int] = {}
        self._channels: Dict[str, int] = {}
        self._sequence: Dict[str, int] = {}
        self.count = 0
        if metadata:
            self._writer.add_metadata("lie_dynamics_ros", {k: str(v) for k, v in
                                                           metadata.items()})

    def _channel(self, topic: str, msg_cls, metadata: Dict[str, str] = None) -> int:
        cid = self._channels.get(topic)
        if cid is None:
            name = type_name(msg_cls)
            sid = self._schemas.get(name)
            if sid is None:
                sid = self._writer.register_schema(
                    name=name, encoding="ros2msg",
                    data=message_definition(msg_cls).encode("utf-8"))
                self._schemas[name] = sid
            cid = self._writer.register_channel(topic=topic, message_encoding="cdr",
                                                schema_id=sid, metadata=metadata or {})
            self._channels[topic] = cid
            self._sequence[topic] = 0
        return cid

    def write(self, topic: str, msg_cls, data: bytes, log_time_ns: int,
              publish_time_ns: Optional[int] = None, channel_metadata: Dict[str, str] = None):
        """Append one CDR-serialized message (``rclpy.serialization.serialize_message``).
        ``channel_metadata`` is used when the topic's channel is created (first message)."""
        cid = self._channel(topic, msg_cls, channel_metadata)
        seq = self._sequence[topic] = self._sequence[topic] + 1
        self._writer.add_message(channel_id=cid, log_time=int(log_time_ns), data=bytes(data),
                                 publish_time=int(publish_time_ns if publish_time_ns is not None
                                                  else log_time_ns), sequence=seq)
        self.count += 1

    def close(self):
        if self._file is not None:
            self._writer.finish()
            self._file.close()
            self._file = None


# --- rosbag2 ----------------------------------------------------------------------------------

#: rosbag2's spelling of an infinite QoS duration (rmw's RMW_DURATION_INFINITE)
_INFINITE = {"sec": 9223372036, "nsec": 854775807}


def _qos_duration(d):
    ns = getattr(d, "nanoseconds", 0)
    if ns <= 0 or ns >= 9223372036854775807:
        return dict(_INFINITE) if ns else {"sec": 0, "nsec": 0}
    return {"sec": ns // 1_000_000_000, "nsec": ns % 1_000_000_000}


def qos_profile_dict(qos) -> dict:
    """An rclpy QoSProfile as one entry of rosbag2's ``offered_qos_profiles`` (version 9)."""
    def name(policy, default):
        n = getattr(policy, "name", None)
        return n.lower() if n and n != "UNKNOWN" else default
    zero = {"sec": 0, "nsec": 0}
    deadline = _qos_duration(qos.deadline) if qos.deadline.nanoseconds else zero
    lifespan = _qos_duration(qos.lifespan) if qos.lifespan.nanoseconds else zero
    lease = (_qos_duration(qos.liveliness_lease_duration)
             if qos.liveliness_lease_duration.nanoseconds else zero)
    return {"history": name(qos.history, "keep_last"), "depth": int(qos.depth),
            "reliability": name(qos.reliability, "reliable"),
            "durability": name(qos.durability, "volatile"),
            "deadline": deadline, "lifespan": lifespan,
            "liveliness": name(qos.liveliness, "automatic"),
            "liveliness_lease_duration": lease,
            "avoid_ros_namespace_conventions": bool(qos.avoid_ros_namespace_conventions)}


class Rosbag2Recorder:
    """A rosbag2 bag: ``folder/`` with ``<folder name>_0.mcap`` and ``metadata.yaml``.

    >>> rec = Rosbag2Recorder("run")          # creates run/ (it must not exist)
    >>> rec.write("/joint_states", JointState, cdr_bytes, log_time_ns, offered_qos=[{...}])
    >>> rec.close()                           # writes run/metadata.yaml
    """

    def __init__(self, folder: str, compression: str = "zstd", metadata: Dict[str, str] = None):
        folder = folder[:-1] if folder.endswith(os.sep) else folder
        if os.path.exists(folder):
            raise FileExistsError("%s exists already; rosbag2 bags are new folders" % folder)
        os.makedirs(folder)
        self.folder = self.path = folder
        self.file_name = os.path.basename(os.path.abspath(folder)) + "_0.mcap"
        self._mcap = McapRecorder(os.path.join(folder, self.file_name), compression, metadata)
        self.custom_data = {k: str(v) for k, v in (metadata or {}).items()}
        self._topics: Dict[str, dict] = {}
        self._t_min = self._t_max = None
        self._mcap_count = 0

    def write(self, topic: str, msg_cls, data: bytes, log_time_ns: int,
              offered_qos: List[dict] = None):
        """Append one CDR message; ``offered_qos`` (``qos_profile_dict`` entries of the
        publishers) is recorded with the topic's first message."""
        info = self._topics.get(topic)
        if info is None:
            qos = list(offered_qos or [])
            info = self._topics[topic] = {"type": type_name(msg_cls), "qos": qos, "count": 0}
            meta = {"offered_qos_profiles": yaml.safe_dump(qos, sort_keys=False)}
        else:
            meta = None
        self._mcap.write(topic, msg_cls, data, log_time_ns, channel_metadata=meta)
        info["count"] += 1
        t = int(log_time_ns)
        self._t_min = t if self._t_min is None else min(self._t_min, t)
        self._t_max = t if self._t_max is None else max(self._t_max, t)

    def close(self):
        if self._mcap is None:
            return
        self._mcap.close()
        self._mcap_count, self._mcap = self._mcap.count, None
        start = self._t_min or 0
        duration = (self._t_max - self._t_min) if self._t_min is not None else 0
        info = {
            "version": 9,
            "storage_identifier": "mcap",
            "duration": {"nanoseconds": duration},
            "starting_time": {"nanoseconds_since_epoch": start},
            "message_count": self._mcap_count,
            "topics_with_message_count": [
                {"topic_metadata": {"name": name, "type": t["type"],
                                    "serialization_format": "cdr",
                                    "offered_qos_profiles": t["qos"],
                                    "type_description_hash": ""},
                 "message_count": t["count"]}
                for name, t in self._topics.items()],
            "compression_format": "",
            "compression_mode": "",
            "relative_file_paths": [self.file_name],
            "files": [{"path": self.file_name,
                       "starting_time": {"nanoseconds_since_epoch": start},
                       "duration": {"nanoseconds": duration},
                       "message_count": self._mcap_count}],
            "custom_data": self.custom_data,
            "ros_distro": os.environ.get("ROS_DISTRO", "jazzy"),
        }
        with open(os.path.join(self.folder, "metadata.yaml"), "w") as f:
            yaml.safe_dump({"rosbag2_bagfile_information": info}, f, sort_keys=False)

    @property
    def count(self) -> int:
        return self._mcap.count if self._mcap is not None else self._mcap_count


def offered_qos(node, topic: str) -> List[dict]:
    """QoS profiles offered by the publishers of ``topic`` that ``node`` has discovered."""
    try:
        return [qos_profile_dict(i.qos_profile)
                for i in node.get_publishers_info_by_topic(topic)]
    except Exception:   # graph query failed (shutting down): record without QoS
        return []


def record_topics(node, recorder, topics, clock: Callable[[], int] = None, qos=None,
                  robot=None, robot_topic: str = "joint_states"):
    """Subscribe ``node`` to ``topics`` (iterable of (name, msg class)) with raw subscriptions
    and write every message to ``recorder`` (``Rosbag2Recorder`` or ``McapRecorder``);
    ``clock()`` gives the log time in ns (default: wall time). For a rosbag2 bag the
    publishers' offered QoS is looked up when a topic's first message arrives.

    ``robot`` (a ``robot_tf.RobotTf``) also writes /robot_description and /tf_static now, and
    /tf for every message of ``robot_topic`` (one of ``topics``), at the same log time.
    Returns the subscriptions."""
    from rclpy.qos import QoSProfile      # the recorders above write bags without rclpy
    qos = qos or QoSProfile(depth=1000)
    clock = clock or time.time_ns
    bag = isinstance(recorder, Rosbag2Recorder)
    if robot is not None:
        robot.start(recorder, clock())
    subs = []
    for name, cls in topics:
        resolved = node.resolve_topic_name(name) if hasattr(node, "resolve_topic_name") \
            else name
        tf = robot if robot is not None and name == robot_topic else None

        def cb(data, topic=resolved, cls=cls, tf=tf):
            t = clock()
            if bag:
                first = topic not in recorder._topics
                recorder.write(topic, cls, data, t,
                               offered_qos=offered_qos(node, topic) if first else None)
            else:
                recorder.write(topic, cls, data, t)
            if tf is not None:
                tf.joint_state(recorder, data, t)
        subs.append(node.create_subscription(cls, name, cb, qos, raw=True))
    return subs
