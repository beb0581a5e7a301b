"""Inputs as real drivers send them: unmeasured velocities, joints spread over several
topics, positions in the wrong unit. ROS-free; the nodes feed arrays in model order, with NaN
for a value that a message does not carry."""
import math
from typing import List, Sequence

import numpy as np

from ..errors import InputError

MISSING_POLICIES = ("reject", "hold")


class VelocityEstimator:
    """Velocities of the joints whose driver sends none (NaN or an empty velocity array).

    joint_state_broadcaster fills the interfaces a robot lacks with NaN. For such joints the
    velocity is a first-order low-pass filtered backward difference of successive positions::

        v_raw = (q_k - q_{k-1}) / dt,    v_k = v_{k-1} + alpha (v_raw - v_{k-1}),
        alpha = dt / (tau + dt),         tau = 1 / (2 pi cutoff_hz)

    (the discrete RC filter; cutoff_hz <= 0 gives the raw difference). dt is the stamp
    difference. The first state, a gap longer than ``max_gap`` s, or time going backwards
    restart the filter at zero velocity; a repeated stamp keeps the previous estimate.
    """

    def __init__(self, n: int, cutoff_hz: float = 20.0, max_gap: float = 0.1):
        self.n = int(n)
        self.cutoff_hz = float(cutoff_hz)
        self.max_gap = float(max_gap)
        self.reset()

    def reset(self):
        self._q = None
        self._t_ns = None
        self._v = np.zeros(self.n)

    def continue_from(self, other: "VelocityEstimator"):
        """Carry on from ``other``'s last state and estimate (a runtime rebuilt for the same
        robot keeps its velocity filter)."""
        if other.n != self.n:
            raise InputError(f"velocity estimator of {other.n} joints given to one of {self.n}")
        self._q, self._t_ns, self._v = other._q, other._t_ns, other._v.copy()

    def update(self, q, t_ns: int) -> np.ndarray:
        """Feed the positions of a state stamped ``t_ns``; returns the estimate (n,)."""
        q = np.asarray(q, dtype=float)
        if self._q is not None:
            dt = (int(t_ns) - self._t_ns) * 1e-9
            if dt == 0:
                return self._v.copy()
            if 0 < dt <= self.max_gap:
                raw = (q - self._q) / dt
                if self.cutoff_hz > 0:
                    tau = 1.0 / (2 * math.pi * self.cutoff_hz)
                    self._v = self._v + dt / (tau + dt) * (raw - self._v)
                else:
                    self._v = raw
            else:
                self._v = np.zeros(self.n)
        self._q, self._t_ns = q.copy(), int(t_ns)
        self._v[~np.isfinite(self._v)] = 0.0
        return self._v.copy()

    def fill(self, q, v, t_ns: int):
        """``v`` with its NaN entries (or all, when ``v`` is None) replaced by the estimate.
        Returns (v (n,), mask of estimated joints)."""
        est = self.update(q, t_ns)
        if v is None:
            return est, np.ones(self.n, dtype=bool)
        v = np.array(v, dtype=float)
        mask = np.isnan(v)
        v[mask] = est[mask]
        return v, mask


class JointStateMerger:
    """Joint states from several sources (topics), merged by joint name.

    The main source (joint_states) is answered; the others (``source_list``, e.g. a gripper)
    only fill in the joints the main message lacks, like joint_state_publisher's
    ``source_list``. ``update(q, v, now_ns)`` records a message of another source (NaN = not
    in it); its values are usable for ``max_age`` seconds of node clock (0 = forever).
    ``merge(q, v, now_ns)`` completes a main message, or gives the reason it cannot; a joint
    that no source measures is

    - ``"reject"``: a reason naming the joints (the message is dropped);
    - ``"hold"``: held at ``hold_positions`` (default 0.0) with zero velocity.

    Velocities may stay NaN (unmeasured): see VelocityEstimator.
    """

    def __init__(self, names: Sequence[str], missing: str = "reject", hold_positions=None,
                 max_age: float = 0.0):
        if missing not in MISSING_POLICIES:
            raise InputError("missing_joints must be one of %s, got %r"
                             % ("|".join(MISSING_POLICIES), missing))
        self.names = list(names)
        n = len(self.names)
        self.missing = missing
        self.hold = broadcast_values("hold_positions", hold_positions, n, 0.0)
        self.max_age_ns = int(max_age * 1e9)
        self._q = np.full(n, np.nan)
        self._v = np.full(n, np.nan)
        self._t = np.full(n, -1, dtype=np.int64)

    def update(self, q, v, now_ns: int) -> None:
        q = np.asarray(q, dtype=float)
        have = ~np.isnan(q)
        self._q[have] = q[have]
        self._v[have] = np.nan if v is None else np.asarray(v, dtype=float)[have]
        self._t[have] = int(now_ns)

    def merge(self, q, v, now_ns: int):
        """Main message (q, v; NaN = absent / unmeasured) -> (q, v, held mask) or
        (None, None, reason)."""
        q = np.array(q, dtype=float)
        v = np.full(q.shape, np.nan) if v is None else np.array(v, dtype=float)
        absent = np.isnan(q)
        if not absent.any():
            return q, v, absent
        other = self._t >= 0
        if self.max_age_ns > 0:
            other &= (int(now_ns) - self._t) <= self.max_age_ns
        fill = absent & other
        q[fill], v[fill] = self._q[fill], self._v[fill]
        held = absent & ~other
        if held.any():
            if self.missing == "reject":
                return None, None, "missing joints %s (missing_joints: reject)" % [
                    self.names[k] for k in np.flatnonzero(held)]
            q[held], v[held] = self.hold[held], 0.0
        return q, v, held


class LimitMonitor:
    """Positions outside [lower - margin, upper + margin]: one warning per joint, naming the
    likely cause.

    - A joint that left its range in one jump (or was out of it from the first state) and
      whose value read as degrees lies inside the limits: degrees sent as radians, which give
      plausible but wrong torques.
    - A joint that moved out continuously (a small change since the last state, or a
      velocity of more than ``MOVING`` outwards): the source does not enforce the limits (a
      simulator with ``enforce_position_limits`` false) and nothing holds the joint, e.g. an
      arm falling under gravity while no command reaches it.

    ``check(q, v=None)`` returns the warnings not given before (a joint warns again only after
    ``reset``).
    """

    #: a change larger than this between two states is a jump, not a motion (rad or m)
    JUMP = 0.5
    #: a joint faster than this (rad/s or m/s) towards where it is got there by moving
    MOVING = 0.5

    def __init__(self, names: Sequence[str], lower, upper, margin: float = 0.1):
        self.names = list(names)
        self.lower = np.asarray(lower, dtype=float)
        self.upper = np.asarray(upper, dtype=float)
        self.margin = float(margin)
        self.warned = np.zeros(len(self.names), dtype=bool)
        self.previous = np.full(len(self.names), np.nan)   # last position seen in range

    def reset(self):
        self.warned[:] = False
        self.previous[:] = np.nan

    def check(self, q, v=None) -> List[str]:
        q = np.asarray(q, dtype=float)
        out = (q < self.lower - self.margin) | (q > self.upper + self.margin)
        new = out & ~self.warned
        self.warned |= out
        v = np.zeros_like(q) if v is None else np.nan_to_num(np.asarray(v, dtype=float))
        notes = [self._cause(k, q[k], v[k]) for k in np.flatnonzero(new)]
        self.previous[~out] = q[~out]
        return notes

    def _cause(self, k, x, v):
        lo, hi, before = self.lower[k], self.upper[k], self.previous[k]
        where = "joint '%s' at %.4g rad is outside its URDF limits [%.4g, %.4g] by more than " \
                "%g" % (self.names[k], x, lo, hi, self.margin)
        outwards = v * (1.0 if x > hi else -1.0) > self.MOVING
        if outwards or np.isfinite(before) and abs(x - before) <= self.JUMP + self.margin:
            return (where + ": it moved there%s: the limits are not enforced by the source of "
                    "joint_states and nothing holds the joint (is a controller commanding it?)"
                    % (" at %.3g rad/s" % v if v else ""))
        as_rad = math.radians(x)
        if lo <= as_rad <= hi:
            return where + ": degrees sent as radians? (%.4g deg = %.4g rad is inside the " \
                "limits)" % (x, as_rad)
        return where + (": it jumped there from %.4g" % before if np.isfinite(before) else "")


def broadcast_values(name: str, values, n: int, default: float) -> np.ndarray:
    """None/[] -> default; one value -> every joint; n values -> as given; else InputError."""
    if values is None or len(values) == 0:
        return np.full(n, float(default))
    vals = np.asarray(values, dtype=float).reshape(-1)
    if vals.size == 1:
        return np.full(n, float(vals[0]))
    if vals.size != n:
        raise InputError("%s has %d values: give 1 or %d (one per joint)" % (name, vals.size, n))
    return vals.copy()
