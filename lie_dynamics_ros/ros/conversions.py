"""Message <-> array conversion and validation for the ROS nodes.

Nothing here imports rclpy: the functions take message objects (or anything with the same
fields) and return numpy arrays, or a short *reason* string saying why a message is rejected.
The nodes log the reason (throttled) and drop the message. Message classes are imported lazily,
only by the functions that build messages.

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
import math
import time
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

import numpy as np

FIELDS = ("position", "velocity", "effort")

_MSG_CLASSES = {}


def _msg_class(module: str, name: str):
    """Message class, imported on first use (keeps this module free of ROS imports)."""
    cls = _MSG_CLASSES.get((module, name))
    if cls is None:
        import importlib
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


class StampMonitor:
    """Rejects stamps that go backwards.

    ``check(ns)`` returns a reason string or None; ``accept(ns)`` records an accepted stamp.
    Unstamped messages (stamp 0) are never rejected. When a source restarts (e.g. a simulator
    whose time starts again at 0), stamps go backwards for good; after ``reset_after``
    consecutive backward stamps the monitor takes the new time base (``check`` then returns
    None and ``reset_happened`` is set until read).
    """

    def __init__(self, reset_after: int = 50):
        self.last_ns: Optional[int] = None
        self.reset_after = int(reset_after)
        self._backwards = 0
        self.reset_happened = False

    def check(self, ns: int) -> Optional[str]:
        if ns == 0 or self.last_ns is None or ns >= self.last_ns:
            self._backwards = 0
            return None
        self._backwards += 1
        if self.reset_after > 0 and self._backwards >= self.reset_after:
            self._backwards = 0
            self.reset_happened = True
            self.last_ns = None
            return None
        return "stamp goes backwards (%.9f s < last accepted %.9f s)" % (
            ns * 1e-9, self.last_ns * 1e-9)

    def accept(self, ns: int) -> None:
        if ns != 0:
            self.last_ns = ns

    def reset(self) -> None:
        self.last_ns = None
        self._backwards = 0


# ---------------------------------------------------------------------------------------------
# names


class JointIndex:
    """Maps the joint names of incoming messages onto a fixed joint order (the model's).

    ``lookup(names)`` returns ``(idx, None)`` with ``idx[k]`` the position in the message of
    ``self.names[k]``, or ``(None, reason)``. Successful lookups are cached by (name list,
    required mask), since a publisher normally sends the same name list every time; the
    cached index arrays are read-only.
    """

    #: distinct (names, required) keys kept; a graph has a handful of publishers
    CACHE_SIZE = 16

    def __init__(self, names: Sequence[str]):
        self.names = [str(n) for n in names]
        if len(set(self.names)) != len(self.names):
            raise ValueError("duplicate joint names in %r" % (self.names,))
        self._known = set(self.names)
        self._cache = {}

    def __len__(self):
        return len(self.names)

    def lookup(self, names: Sequence[str], required: Optional[Sequence[bool]] = None):
        """Indices of ``self.names`` inside ``names``.

        Args:
            names: joint names of a message, any order, extra names allowed.
            required: optional mask over ``self.names``; joints with False may be absent (their
                index is then -1).
        Returns:
            (idx (len(self.names),) int array or None, reason or None)
        """
        names = tuple(names)
        mask = None if required is None else np.asarray(required, dtype=bool)
        key = (names, None if mask is None else mask.tobytes())
        idx = self._cache.get(key)
        if idx is not None:
            return idx, None
        pos = {}
        for i, n in enumerate(names):
            if n in pos:
                return None, "duplicate joint name '%s'" % n
            pos[n] = i
        idx = np.array([pos.get(n, -1) for n in self.names], dtype=np.intp)
        absent = idx < 0
        if mask is not None:
            absent &= mask
        if absent.any():
            missing = [self.names[k] for k in np.flatnonzero(absent)]
            unknown = [n for n in names if n not in self._known]
            reason = "missing joints %s" % missing
            if unknown:
                reason += " (unknown joints %s)" % unknown
            return None, reason
        idx.flags.writeable = False
        if len(self._cache) >= self.CACHE_SIZE:
            self._cache.clear()
        self._cache[key] = idx
        return idx, None


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


def reorder(values: np.ndarray, from_names: Sequence[str], to_names: Sequence[str]):
    """Values given in ``from_names`` order -> ``to_names`` order (every name must exist)."""
    pos = {n: i for i, n in enumerate(from_names)}
    return np.asarray(values, dtype=float)[[pos[n] for n in to_names]]


# ---------------------------------------------------------------------------------------------
# trajectory_msgs/JointTrajectory


class TrajectoryReference:
    """A validated JointTrajectory, sampled by time in the model's joint order.

    Between two points each joint follows the spline the points allow, as in ros2_controllers'
    joint_trajectory_controller: quintic when both points have positions, velocities and
    accelerations, cubic with positions and velocities, linear with positions only. Points
    that only carry accelerations (or velocities) are interpolated linearly in that quantity.

    Outside the time range a trajectory with positions holds its end point, as
    joint_trajectory_controller does: before the first point the first point's position,
    after the last point the last point's position, with zero velocity and acceleration.
    A trajectory without positions (velocities or accelerations only: desired accelerations
    for inverse_dynamics_node, hybrid mode) has no position to hold and keeps the values of
    its end point (zero acceleration when it gives only velocities).

    ``mask[k]`` is True for the model joints the trajectory names; ``sample`` returns zeros
    for the others.
    """

    def __init__(self, times_ns, joint_cols, n_model, q, v, a):
        self.times_ns = times_ns      # (P,) absolute times
        self.cols = joint_cols        # (m,) model indices of the trajectory's joints
        self.mask = np.zeros(n_model, dtype=bool)
        self.mask[joint_cols] = True
        self.n_model = n_model
        self.q, self.v, self.a = q, v, a   # (P, m) each, or None when no point has them

    @classmethod
    def from_msg(cls, msg, index: JointIndex, now_ns: int):
        """Validate ``msg``; returns (TrajectoryReference or None, reason or None).

        A zero header stamp means "start now" (``now_ns``), as in joint_trajectory_controller.
        Joint names the model does not know are ignored; an empty trajectory is rejected.
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
        cols = np.array([known[names[k]] for k in keep], dtype=np.intp)
        start = stamp_to_ns(msg.header.stamp) or int(now_ns)
        times, per_field = [], {f: [] for f in ("positions", "velocities", "accelerations")}
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
            if not np.isfinite(mat).all():
                return None, "non-finite %s" % f
            out[f] = mat
        ref = cls(np.array(times, dtype=np.int64), cols, len(index), out["positions"],
                  out["velocities"], out["accelerations"])
        return ref, None

    @property
    def end_ns(self) -> int:
        return int(self.times_ns[-1])

    def sample(self, t_ns: int):
        """Positions, velocities, accelerations at absolute time ``t_ns``, model order (n,).

        Quantities the trajectory does not define come back as None when they cannot be
        derived (e.g. positions from an acceleration-only trajectory). Outside the time range
        a trajectory with positions holds the nearer end point's position with zero velocity
        and acceleration (see the class docstring).
        """
        m = len(self.cols)
        P = len(self.times_ns)
        k = int(np.searchsorted(self.times_ns, t_ns, side="right")) - 1
        if k < 0 or k >= P - 1:
            outside = k < 0 or t_ns > self.times_ns[-1]
            k = 0 if k < 0 else P - 1
            q = None if self.q is None else self.q[k]
            if q is not None and outside:
                v, a = np.zeros(m), np.zeros(m)      # hold the end point
            else:
                v = None if self.v is None else self.v[k]
                a = None if self.a is None else self.a[k]
                if q is not None and v is None:
                    v = np.zeros(m)
                if (q is not None or v is not None) and a is None:
                    a = np.zeros(m)
        else:
            T = (self.times_ns[k + 1] - self.times_ns[k]) * 1e-9
            s = (t_ns - self.times_ns[k]) * 1e-9
            q, v, a = self._segment(k, s, T)
        return self._expand(q), self._expand(v), self._expand(a)

    def _expand(self, x):
        if x is None:
            return None
        full = np.zeros(self.n_model)
        full[self.cols] = x
        return full

    def _segment(self, k, s, T):
        Q, V, A = self.q, self.v, self.a      # T > 0: times are strictly increasing
        if Q is not None:
            q0, q1 = Q[k], Q[k + 1]
            v0 = V[k] if V is not None else None
            v1 = V[k + 1] if V is not None else None
            if V is not None and A is not None:
                return _quintic(q0, v0, A[k], q1, v1, A[k + 1], s, T)
            if V is not None:
                return _cubic(q0, v0, q1, v1, s, T)
            vel = (q1 - q0) / T
            return q0 + vel * s, vel, np.zeros_like(q0)
        lam = s / T
        v = None if V is None else (1 - lam) * V[k] + lam * V[k + 1]
        a = None if A is None else (1 - lam) * A[k] + lam * A[k + 1]
        if V is not None and A is None:
            a = (V[k + 1] - V[k]) / T
        return None, v, a


def _cubic(q0, v0, q1, v1, s, T):
    c2 = (3 * (q1 - q0) - (2 * v0 + v1) * T) / T ** 2
    c3 = (2 * (q0 - q1) + (v0 + v1) * T) / T ** 3
    q = q0 + v0 * s + c2 * s ** 2 + c3 * s ** 3
    v = v0 + 2 * c2 * s + 3 * c3 * s ** 2
    a = 2 * c2 + 6 * c3 * s
    return q, v, a


def _quintic(q0, v0, a0, q1, v1, a1, s, T):
    T2, T3, T4, T5 = T ** 2, T ** 3, T ** 4, T ** 5
    h = q1 - q0
    c3 = (20 * h - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T2) / (2 * T3)
    c4 = (-30 * h + (14 * v1 + 16 * v0) * T + (3 * a0 - 2 * a1) * T2) / (2 * T4)
    c5 = (12 * h - 6 * (v1 + v0) * T + (a1 - a0) * T2) / (2 * T5)
    q = q0 + v0 * s + 0.5 * a0 * s ** 2 + c3 * s ** 3 + c4 * s ** 4 + c5 * s ** 5
    v = v0 + a0 * s + 3 * c3 * s ** 2 + 4 * c4 * s ** 3 + 5 * c5 * s ** 4
    a = a0 + 6 * c3 * s + 12 * c4 * s ** 2 + 20 * c5 * s ** 3
    return q, v, a


def make_trajectory(names, times_s, positions=None, velocities=None, accelerations=None,
                    stamp_ns: int = 0):
    """Build a trajectory_msgs/JointTrajectory; arrays are (P, len(names)) or None."""
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


# ---------------------------------------------------------------------------------------------
# throttled reporting


class Throttle:
    """Per-key log throttle: ``ready(key)`` is True at most once per ``period_s``.

    ``suppressed(key)`` says how many calls were swallowed since the last True, so a log line
    can say "(12 more since last report)". The clock is monotonic wall time by default.
    """

    def __init__(self, period_s: float = 2.0, clock=time.monotonic):
        self.period_s = float(period_s)
        self.clock = clock
        self._last = {}
        self._count = {}

    def ready(self, key) -> bool:
        now = self.clock()
        last = self._last.get(key)
        if last is not None and now - last < self.period_s:
            self._count[key] = self._count.get(key, 0) + 1
            return False
        self._last[key] = now
        return True

    def suppressed(self, key) -> int:
        return self._count.pop(key, 0)


def clamp_efforts(tau: np.ndarray, limits: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Clamp ``tau`` to ``[-limits, limits]`` (inf = no limit); returns (clamped, acted mask)."""
    clamped = np.clip(tau, -limits, limits)
    return clamped, clamped != tau


def finite_limits(limits) -> np.ndarray:
    """URDF effort limits with 0 or negative (meaning "not set" in many URDFs) read as inf."""
    lim = np.asarray(limits, dtype=float).copy()
    lim[~(lim > 0)] = math.inf
    return lim
