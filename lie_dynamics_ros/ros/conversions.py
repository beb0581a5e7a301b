"""Message <-> array conversion and validation for the ROS nodes.

Nothing here imports rclpy: the functions take message objects (or anything with the same
fields) and return numpy arrays or core objects, or a short *reason* string saying why a message
is rejected. The nodes log the reason (throttled) and drop the message. Message classes are
imported lazily, only by the functions that build messages. What is not message conversion
(name lookup, stamp order, splines, throttling, effort limits) is in ``lie_dynamics_ros.runtime``.

Conventions (docs/ros.md):

- joints are always matched by name (ros2_controllers#159, kuka_drivers#254); names that the
  model does not know are ignored, a model joint that is missing rejects the message;
- only the fields a node uses are checked for NaN/Inf, and only for the model's joints, because
  joint_state_broadcaster fills missing interfaces with NaN (ros2_controllers PR #1572);
- an empty ``velocity`` array means "not measured": ``parse_joint_state`` returns zeros; the
  commanding nodes estimate it instead (``command_guard.StatePipeline``, docs/safety.md);
- stamps are integers in nanoseconds; a stamp of zero means "not stamped".
"""
import array
import importlib
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

# the ROS-free parts live in the core; re-exported here under the names the nodes use
from ..runtime.effort_limits import clamp_efforts, finite_limits  # noqa: F401
from ..runtime.joint_index import JointIndex, reorder  # noqa: F401
from ..runtime.stamps import StampMonitor  # noqa: F401
from ..runtime.throttle import Throttle  # noqa: F401
from ..runtime.trajectory import FIELDS as TRAJECTORY_FIELDS, Trajectory

FIELDS = ("position", "velocity", "effort")

_MSG_CLASSES = {}


def _msg_class(module: str, name: str):
    """Message class, imported on first use (keeps this module free of ROS imports)."""
    cls = _MSG_CLASSES.get((module, name))
    if cls is None:
        cls = _MSG_CLASSES[(module, name)] = getattr(importlib.import_module(module), name)
    return cls


# ---------------------------------------------------------------------------------------------
# stamps


def stamp_to_ns(stamp) -> int:
    """builtin_interfaces/Time (``sec``, ``nanosec``) -> integer nanoseconds."""
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def set_stamp(stamp, ns: int) -> None:
    """Write integer nanoseconds ``ns`` (>= 0) into a builtin_interfaces/Time in place."""
    ns = int(ns)
    stamp.sec = ns // 1_000_000_000
    stamp.nanosec = ns % 1_000_000_000


def duration_to_ns(duration) -> int:
    """builtin_interfaces/Duration -> integer nanoseconds (may be negative)."""
    return int(duration.sec) * 1_000_000_000 + int(duration.nanosec)


# ---------------------------------------------------------------------------------------------
# sensor_msgs/JointState


@dataclass(frozen=True)
class JointStateArrays:
    """A validated JointState in model order. Absent fields are None."""
    stamp_ns: int
    position: Optional[np.ndarray]
    velocity: Optional[np.ndarray]
    effort: Optional[np.ndarray]


def _as_array(seq) -> np.ndarray:
    if isinstance(seq, array.array) and seq.typecode == "d":
        return np.frombuffer(seq, dtype=np.float64) if len(seq) else np.zeros(0)
    return np.asarray(seq, dtype=np.float64).reshape(-1)


def parse_joint_state(msg, index: JointIndex, need=("position",), optional=("velocity",),
                      required_joints: Optional[Sequence[bool]] = None):
    """Validate a sensor_msgs/JointState and pick the model's joints out of it.

    Args:
        msg: the message (``header.stamp``, ``name``, ``position``, ``velocity``, ``effort``).
        index: the model's joint order.
        need: fields that must be present (non-empty) and finite.
        optional: fields that are used if present (then they must be finite); an empty one
            comes back as zeros.
        required_joints: optional mask over ``index.names``; joints with False may be absent
            (their entries then come back as NaN and are not checked).
    Returns:
        (JointStateArrays or None, reason or None). Fields not in ``need`` or ``optional``
        come back as None.
    """
    names = msg.name
    n = len(names)
    arrays = {f: getattr(msg, f) for f in FIELDS}
    if n == 0:
        if any(len(a) for a in arrays.values()):
            return None, "message has values but no joint names"
        return None, "empty message"
    for f, a in arrays.items():
        if len(a) not in (0, n):
            return None, "mismatched lengths: %d names but %d %s values" % (n, len(a), f)
    idx, reason = index.lookup(names, required_joints)
    if reason:
        return None, reason
    present = idx >= 0
    all_present = bool(present.all())
    out = {}
    for f in FIELDS:
        if f not in need and f not in optional:
            out[f] = None
            continue
        raw = arrays[f]
        if len(raw) == 0:
            if f in need:
                return None, "no %s values" % f
            out[f] = np.zeros(len(index))
            continue
        if all_present:
            vals = _as_array(raw)[idx]
        else:
            vals = np.full(len(index), np.nan)
            vals[present] = _as_array(raw)[idx[present]]
        bad = ~np.isfinite(vals) & present
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            return None, "non-finite %s %r for joint '%s'" % (f, float(vals[j]), index.names[j])
        out[f] = vals
    return JointStateArrays(stamp_to_ns(msg.header.stamp), out["position"], out["velocity"],
                            out["effort"]), None


def to_float_array(values) -> array.array:
    """numpy (n,) -> array.array('d'), the fast path of the generated message setters."""
    return array.array("d", np.ascontiguousarray(values, dtype=np.float64).tobytes())


def make_joint_state(names, stamp_ns: int = 0, position=None, velocity=None, effort=None,
                     frame_id: str = ""):
    """Build a sensor_msgs/JointState; fields given as None stay empty."""
    msg = _msg_class("sensor_msgs.msg", "JointState")()
    set_stamp(msg.header.stamp, stamp_ns)
    msg.header.frame_id = frame_id
    msg.name = list(names)
    if position is not None:
        msg.position = to_float_array(position)
    if velocity is not None:
        msg.velocity = to_float_array(velocity)
    if effort is not None:
        msg.effort = to_float_array(effort)
    return msg


# ---------------------------------------------------------------------------------------------
# std_msgs/Float64MultiArray (forward_command_controller convention)


def parse_command_array(msg, n: int):
    """Validate a std_msgs/Float64MultiArray command of ``n`` values (``joints`` order).

    Like forward_command_controller: a wrong size or any non-finite value drops the whole
    message. Returns (values (n,) or None, reason or None).
    """
    data = msg.data
    if len(data) == 0:
        return None, "empty message"
    if len(data) != n:
        return None, "mismatched lengths: %d values for %d joints" % (len(data), n)
    vals = _as_array(data).copy()
    if not np.isfinite(vals).all():
        j = int(np.flatnonzero(~np.isfinite(vals))[0])
        return None, "non-finite value %r at index %d" % (float(vals[j]), j)
    return vals, None


def make_command_array(values):
    """numpy (n,) -> std_msgs/Float64MultiArray (empty layout, as ros2_control expects)."""
    msg = _msg_class("std_msgs.msg", "Float64MultiArray")()
    msg.data = to_float_array(values)
    return msg


# ---------------------------------------------------------------------------------------------
# trajectory_msgs/JointTrajectory


def parse_trajectory(msg, index: JointIndex, now_ns: int):
    """Validate a trajectory_msgs/JointTrajectory -> (Trajectory or None, reason or None).

    A zero header stamp means "start now" (``now_ns``), as in joint_trajectory_controller.
    Joint names the model does not know are ignored; an empty trajectory is rejected. The
    splines and the hold outside the time range are ``runtime.trajectory.Trajectory``'s.
    """
    names = list(msg.joint_names)
    if not names or not msg.points:
        return None, "empty trajectory"
    if len(set(names)) != len(names):
        return None, "duplicate joint names in trajectory"
    known = {n: i for i, n in enumerate(index.names)}
    keep = [k for k, n in enumerate(names) if n in known]
    if not keep:
        return None, "trajectory names no model joint (got %s)" % names
    start = stamp_to_ns(msg.header.stamp) or int(now_ns)
    times, per_field = [], {f: [] for f in TRAJECTORY_FIELDS}
    for p, pt in enumerate(msg.points):
        times.append(start + duration_to_ns(pt.time_from_start))
        for f, rows in per_field.items():
            vals = getattr(pt, f)
            if len(vals) not in (0, len(names)):
                return None, "point %d: %d %s for %d joints" % (p, len(vals), f, len(names))
            rows.append(None if len(vals) == 0 else _as_array(vals)[keep])
    for p in range(1, len(times)):
        if times[p] <= times[p - 1]:
            return None, ("time_from_start is not increasing: point %d at %.9f s, point %d "
                          "at %.9f s" % (p - 1, (times[p - 1] - start) * 1e-9, p,
                                         (times[p] - start) * 1e-9))
    out = {}
    for f, rows in per_field.items():
        given = [r is not None for r in rows]
        if not any(given):
            out[f] = None
            continue
        if not all(given):
            return None, "%s given in some points but not in all" % f
        mat = np.vstack(rows)
        bad = np.argwhere(~np.isfinite(mat))
        if bad.size:
            p, j = bad[0]
            return None, "non-finite %s %r at point %d for joint '%s'" % (
                f, float(mat[p, j]), p, names[keep[j]])
        out[f] = mat
    cols = [known[names[k]] for k in keep]
    try:
        return Trajectory(times, cols, len(index), out["positions"], out["velocities"],
                          out["accelerations"]), None
    except ValueError as e:
        return None, str(e)


class TrajectoryReference:
    """The nodes' call form: ``TrajectoryReference.from_msg(msg, index, now_ns)`` is
    ``parse_trajectory`` and returns a ``runtime.trajectory.Trajectory``."""
    from_msg = staticmethod(parse_trajectory)


def make_trajectory(names, times_s, positions=None, velocities=None, accelerations=None,
                    stamp_ns: int = 0):
    """Build a trajectory_msgs/JointTrajectory; arrays are (P, len(names)) or None."""
    # on first use: the module is imported (and tested) without the message packages
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    msg = JointTrajectory()
    set_stamp(msg.header.stamp, stamp_ns)
    msg.joint_names = list(names)
    for p, t in enumerate(times_s):
        pt = JointTrajectoryPoint()
        ns = int(round(t * 1e9))
        pt.time_from_start.sec = ns // 1_000_000_000
        pt.time_from_start.nanosec = ns % 1_000_000_000
        if positions is not None:
            pt.positions = to_float_array(positions[p])
        if velocities is not None:
            pt.velocities = to_float_array(velocities[p])
        if accelerations is not None:
            pt.accelerations = to_float_array(accelerations[p])
        msg.points.append(pt)
    return msg
