"""Reading sensor_msgs/JointState from rosbag2 bags into ``JointSamples`` for identification.

A bag is a rosbag2 folder (``metadata.yaml`` naming its storage and files, several files when
it was split) or a single file: MCAP (read with ``mcap`` and ``mcap-ros2-support``, the
package's ``record`` extra) or sqlite3 ``.db3`` (stdlib ``sqlite3``, messages deserialized by
rclpy). Messages are streamed one by one; each is placed by joint name into the requested
order, with NaN for a joint or a field it does not carry (an empty ``velocity`` or
``effort`` is unknown, as the joint_state_broadcaster sends it). The stamp is the header's,
or the bag's receive time when the header stamp is zero.

Several bags give several recordings, which ``identification.signals.prepare`` keeps as
separate segments.
"""
import os
import sqlite3
import sys
import time
from typing import List, Optional, Sequence

import numpy as np
import yaml

from lie_dynamics_ros.errors import InputError
from lie_dynamics_ros.identification.signals import JointSamples

JOINT_STATE = "sensor_msgs/msg/JointState"
DEFAULT_TOPIC = "/joint_states"
MCAP_MAGIC = b"\x89MCAP0\r\n"
SQLITE_MAGIC = b"SQLite format 3\x00"
#: reads of at least this many messages (or bag files of this size when the file has no
#: message count) show a progress line on stderr
PROGRESS_MIN_MESSAGES = 20_000
PROGRESS_MIN_BYTES = 2_000_000
_BLOCK = 4096                     # rows per preallocated block while streaming


class ReadProgress:
    """``reading BAG [####------]  40%  4000/10000 messages`` on one stderr line (the count
    alone when ``total`` is None), redrawn at most 10 times a second."""

    def __init__(self, label, total, stream=sys.stderr, enabled=True):
        self.label, self.total, self.stream, self.enabled = label, total, stream, enabled
        self._last = 0.0

    def update(self, done, force=False):
        now = time.monotonic()
        if not self.enabled or (not force and now - self._last < 0.1):
            return
        self._last = now
        if self.total is None:            # a file without a message count
            self.stream.write("\rreading %s  %d messages " % (self.label, done))
        else:
            frac = min(1.0, done / self.total) if self.total else 1.0
            bar = "#" * int(30 * frac) + "-" * (30 - int(30 * frac))
            self.stream.write("\rreading %s [%s] %5.1f%%  %d/%d messages "
                              % (self.label, bar, 100 * frac, done, self.total))
        self.stream.flush()

    def close(self, done):
        if self.enabled:
            self.update(done, force=True)
            self.stream.write("\n")
            self.stream.flush()


class _Rows:
    """Growing (N, n) arrays of stamps, positions, velocities and efforts, filled by name."""

    def __init__(self, names):
        self.names = list(names)
        self.col = {nm: j for j, nm in enumerate(self.names)}
        self.blocks, self.n = [], 0

    def add(self, stamp_s, names, position, velocity, effort):
        if not self.blocks or self.n == len(self.blocks[-1][0]) * len(self.blocks):
            n = len(self.names)
            self.blocks.append((np.empty(_BLOCK),) + tuple(np.full((_BLOCK, n), np.nan)
                                                           for _ in range(3)))
        t, p, v, e = self.blocks[-1]
        i = self.n % _BLOCK
        t[i] = stamp_s
        for k, nm in enumerate(names):
            j = self.col.get(nm)
            if j is None:
                continue
            if len(position) == len(names):
                p[i, j] = position[k]
            if len(velocity) == len(names):
                v[i, j] = velocity[k]
            if len(effort) == len(names):
                e[i, j] = effort[k]
        self.n += 1

    def samples(self, source):
        if self.n == 0:
            empty = np.zeros((0, len(self.names)))
            return JointSamples(self.names, np.zeros(0), empty, empty, empty, source)
        t, p, v, e = (np.concatenate([b[k] for b in self.blocks])[:self.n] for k in range(4))
        return JointSamples(self.names, t, p, v, e, source)


def bag_files(path: str):
    """(storage, [files]) of a bag folder or file; InputError when it is not a bag."""
    if os.path.isdir(path):
        meta = os.path.join(path, "metadata.yaml")
        if os.path.isfile(meta):
            try:
                with open(meta, encoding="utf-8") as f:
                    info = yaml.safe_load(f)["rosbag2_bagfile_information"]
                storage = info["storage_identifier"]
                files = [os.path.join(path, p) for p in info["relative_file_paths"]]
            except (yaml.YAMLError, KeyError, TypeError) as e:
                raise InputError("%s: not a rosbag2 bag: unreadable metadata.yaml (%s)"
                                 % (path, e)) from None
            if storage not in ("mcap", "sqlite3"):
                raise InputError("%s: storage %r is not supported (mcap, sqlite3)"
                                 % (path, storage))
            return storage, files
        files = sorted(os.path.join(path, f) for f in os.listdir(path)
                       if f.endswith((".mcap", ".db3")))
        if not files:
            raise InputError("%s: not a rosbag2 bag: no metadata.yaml, .mcap or .db3 file in "
                             "the folder" % path)
        kinds = {_file_kind(f) for f in files}
        if len(kinds) != 1:
            raise InputError("%s: mixes MCAP and sqlite3 files without a metadata.yaml" % path)
        return kinds.pop(), files
    if not os.path.exists(path):
        raise InputError("%s: no such bag (file or folder)" % path)
    return _file_kind(path), [path]


def _file_kind(path):
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError as e:
        raise InputError("%s: cannot read the bag: %s" % (path, e.strerror)) from None
    if head.startswith(MCAP_MAGIC):
        return "mcap"
    if head.startswith(SQLITE_MAGIC):
        return "sqlite3"
    raise InputError("%s: not a rosbag2 bag (neither MCAP nor sqlite3)" % path)


def _stamp_s(stamp, log_time_ns):
    ns = int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)
    return (ns if ns else int(log_time_ns)) * 1e-9


def _no_topic(path, topic, topics):
    listed = ", ".join("%s (%s)" % kv for kv in sorted(topics.items())) or "none"
    return InputError("%s: no %s messages on topic %s; the bag's topics: %s"
                      % (path, JOINT_STATE, topic, listed))


def _read_mcap(path, topic, progress_factory):
    try:
        from mcap.reader import make_reader
        from mcap_ros2.decoder import DecoderFactory
    except ImportError:
        raise InputError("%s: reading MCAP needs the mcap and mcap-ros2-support packages "
                         "(pip install 'lie_dynamics_ros[record]')" % path) from None
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        try:
            summary = reader.get_summary()
        except Exception:           # an unfinished file (no summary): stream without a total
            summary = None
        total = None
        if summary is not None:
            topics = {c.topic: summary.schemas[c.schema_id].name
                      for c in summary.channels.values() if c.schema_id in summary.schemas}
            if topics.get(topic) != JOINT_STATE:
                raise _no_topic(path, topic, topics)
            if summary.statistics is not None:
                total = sum(summary.statistics.channel_message_counts.get(cid, 0)
                            for cid, c in summary.channels.items() if c.topic == topic)
        f.seek(0)
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        progress = progress_factory(path, total)
        count = 0
        for schema, _channel, message, msg in reader.iter_decoded_messages(topics=[topic]):
            if schema is None or schema.name != JOINT_STATE:
                raise InputError("%s: topic %s carries %s, not %s" % (
                    path, topic, schema.name if schema else "no schema", JOINT_STATE))
            yield (_stamp_s(msg.header.stamp, message.log_time), msg.name, msg.position,
                   msg.velocity, msg.effort)
            count += 1
            progress.update(count)
        progress.close(count)
        if count == 0 and summary is None:
            raise _no_topic(path, topic, {})


def _read_sqlite(path, topic, progress_factory):
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import JointState
    try:
        con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        topics = {n: ty for _, n, ty in con.execute("SELECT id, name, type FROM topics")}
    except sqlite3.DatabaseError as e:
        raise InputError("%s: not a rosbag2 sqlite3 bag (%s)" % (path, e)) from None
    try:
        if topics.get(topic) != JOINT_STATE:
            raise _no_topic(path, topic, topics)
        (tid,) = con.execute("SELECT id FROM topics WHERE name = ?", (topic,)).fetchone()
        (total,) = con.execute("SELECT COUNT(*) FROM messages WHERE topic_id = ?",
                               (tid,)).fetchone()
        progress = progress_factory(path, total)
        count = 0
        for ts, data in con.execute("SELECT timestamp, data FROM messages WHERE topic_id = ? "
                                    "ORDER BY timestamp", (tid,)):
            msg = deserialize_message(data, JointState)
            yield (_stamp_s(msg.header.stamp, ts), msg.name, msg.position, msg.velocity,
                   msg.effort)
            count += 1
            progress.update(count)
        progress.close(count)
    finally:
        con.close()


def _messages(bag, topic, progress, stream):
    """(stamp s, names, position, velocity, effort) of every JointState on ``topic``, file by
    file in the bag's order."""
    storage, files = bag_files(bag)

    def progress_factory(path, total):
        if progress is not None:
            on = progress
        elif total is not None:
            on = total >= PROGRESS_MIN_MESSAGES
        else:
            on = os.path.getsize(path) >= PROGRESS_MIN_BYTES
        return ReadProgress(os.path.basename(path), total, stream, bool(on))

    count = 0
    for path in files:
        if not os.path.isfile(path):
            raise InputError("%s: the bag's file %s is missing" % (bag, path))
        for m in (_read_mcap if storage == "mcap" else _read_sqlite)(path, topic,
                                                                      progress_factory):
            count += 1
            yield m
    if count == 0:
        raise InputError("%s: no messages on topic %s" % (bag, topic))


def read_joint_states(bag: str, joint_names: Sequence[str], topic: str = DEFAULT_TOPIC,
                      progress: Optional[bool] = None, stream=sys.stderr) -> JointSamples:
    """One bag's JointState messages on ``topic`` as ``JointSamples`` in ``joint_names``'
    order (NaN where a message lacks a joint or a field).

    ``progress``: None shows a progress line for reads of ``PROGRESS_MIN_MESSAGES`` or more.
    Raises InputError: not a bag, no such topic or the wrong type on it, no messages.
    """
    rows = _Rows(joint_names)
    for m in _messages(bag, topic, progress, stream):
        rows.add(*m)
    return rows.samples(bag)


def iter_joint_states(bag: str, joint_names: Sequence[str], topic: str = DEFAULT_TOPIC,
                      progress: Optional[bool] = None, stream=sys.stderr,
                      block: int = _BLOCK):
    """``read_joint_states`` in pieces: ``JointSamples`` of at most ``block`` consecutive
    messages each, so that a long bag is never held whole."""
    rows = _Rows(joint_names)
    for m in _messages(bag, topic, progress, stream):
        rows.add(*m)
        if rows.n == block:
            yield rows.samples(bag)
            rows = _Rows(joint_names)
    if rows.n:
        yield rows.samples(bag)


def read_bags(bags: Sequence[str], joint_names: Sequence[str], topic: str = DEFAULT_TOPIC,
              progress: Optional[bool] = None, stream=sys.stderr) -> List[JointSamples]:
    """``read_joint_states`` of each bag: one recording per bag, in the order given."""
    return [read_joint_states(b, joint_names, topic, progress, stream) for b in bags]
