"""Recording ROS 2 topics to MCAP files laid out like rosbag2's, for Foxglove and PlotJuggler.

The file uses the ``ros2`` profile: one schema per message type (encoding ``ros2msg``, name
``pkg/msg/Type``, data = the complete message definition with its dependencies, as in
rosbag2's docs/message_definition_encoding.md) and one channel per topic (message encoding
``cdr``). Messages are written as the CDR bytes that came over DDS (raw subscriptions), so
nothing is re-serialized. ``ros2 bag info/play FILE.mcap`` (rosbag2 with the MCAP storage
plugin), Foxglove Studio and PlotJuggler open the result.

Only ``mcap`` is needed to write (``mcap-ros2-support`` is used by the tests to read back).
"""
import importlib
import os
import re
import sys
import time
from typing import Callable, Dict, Optional

_PRIMITIVES = {"double": "float64", "float": "float32", "boolean": "bool", "octet": "byte"}
_NAMESPACED = re.compile(r"([A-Za-z0-9_]+)/([A-Za-z0-9_]+)")


def type_name(msg_cls) -> str:
    """Full ROS type name, e.g. ``sensor_msgs/msg/JointState``."""
    pkg = msg_cls.__module__.split(".")[0]
    return "%s/msg/%s" % (pkg, msg_cls.__name__)


def _msg_class(pkg: str, name: str):
    return getattr(importlib.import_module("%s.msg" % pkg), name)


def _msg_file_text(pkg: str, name: str) -> Optional[str]:
    """The installed .msg file, from the ament index or <prefix>/share."""
    dirs = []
    try:
        from ament_index_python.packages import get_package_share_directory
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
        from mcap.writer import CompressionType, Writer
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

    def _channel(self, topic: str, msg_cls) -> int:
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
                                                schema_id=sid)
            self._channels[topic] = cid
            self._sequence[topic] = 0
        return cid

    def write(self, topic: str, msg_cls, data: bytes, log_time_ns: int,
              publish_time_ns: Optional[int] = None):
        """Append one CDR-serialized message (``rclpy.serialization.serialize_message``)."""
        cid = self._channel(topic, msg_cls)
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


def record_topics(node, recorder: McapRecorder, topics, clock: Callable[[], int] = None,
                  qos=None):
    """Subscribe ``node`` to ``topics`` (iterable of (name, msg class)) with raw subscriptions
    and write every message to ``recorder``; ``clock()`` gives the log time in ns (default:
    wall time). Returns the subscriptions."""
    from rclpy.qos import QoSProfile
    qos = qos or QoSProfile(depth=1000)
    clock = clock or time.time_ns
    subs = []
    for name, cls in topics:
        resolved = node.resolve_topic_name(name) if hasattr(node, "resolve_topic_name") \
            else name

        def cb(data, topic=resolved, cls=cls):
            recorder.write(topic, cls, data, clock())
        subs.append(node.create_subscription(cls, name, cb, qos, raw=True))
    return subs
