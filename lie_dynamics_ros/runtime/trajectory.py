"""A joint-space reference trajectory, sampled by time in the model's joint order.

Between two points each joint follows the spline the points allow, as in ros2_controllers'
joint_trajectory_controller: quintic when both points have positions, velocities and
accelerations, cubic with positions and velocities, linear with positions only. The cubic and
quintic are the Hermite polynomials fixed by the boundary values at both ends of a segment
(Biagiotti & Melchiorri 2008, sec. 2.1). Without positions, velocities and accelerations are
interpolated linearly.

Outside the time range a trajectory with positions holds its end point, as
joint_trajectory_controller does: before the first point the first point's position, after the
last point the last point's position, with zero velocity and acceleration. A trajectory without
positions (desired accelerations for inverse dynamics, or velocities only) has no position to
hold and keeps the values of its end point (zero acceleration when it gives only velocities).

Times are integer nanoseconds. ``ros.conversions.parse_trajectory`` builds one from a
trajectory_msgs/JointTrajectory.
"""
from typing import Optional

import numpy as np

FIELDS = ("positions", "velocities", "accelerations")


def _frozen(x, what, shape):
    if x is None:
        return None
    arr = np.array(x, dtype=float)
    if arr.shape != shape:
        raise ValueError("%s must have shape %s (points, joints), got %s"
                         % (what, shape, arr.shape))
    bad = ~np.isfinite(arr)
    if bad.any():
        p, j = np.argwhere(bad)[0]
        raise ValueError("non-finite %s %r at point %d, column %d"
                         % (what, float(arr[p, j]), p, j))
    arr.flags.writeable = False
    return arr


class Trajectory:
    """Points at ``times_ns`` for the model joints ``cols``; read-only once built.

    Args:
        times_ns: (P,) strictly increasing absolute times, integer nanoseconds.
        cols: (m,) distinct model indices of the trajectory's joints, in column order.
        n_model: number of model joints; ``sample`` returns arrays of this length.
        q, v, a: (P, m) positions, velocities, accelerations, each None when not given; at
            least one is given.
    Raises ValueError naming what is wrong (shape, order, non-finite value).

    ``mask[k]`` is True for the model joints the trajectory names; ``sample`` returns zeros
    for the others.
    """

    def __init__(self, times_ns, cols, n_model: int, q=None, v=None, a=None):
        times = np.array(times_ns, dtype=np.int64).reshape(-1)
        if times.size == 0:
            raise ValueError("a trajectory needs at least one point")
        back = np.flatnonzero(np.diff(times) <= 0)
        if back.size:
            p = int(back[0]) + 1
            raise ValueError("times are not increasing: point %d at %d ns, point %d at %d ns"
                             % (p - 1, times[p - 1], p, times[p]))
        cols = np.array(cols, dtype=np.intp).reshape(-1)
        n_model = int(n_model)
        if cols.size == 0 or len(set(cols.tolist())) != cols.size:
            raise ValueError("cols must name distinct joints, got %s" % cols.tolist())
        if cols.min() < 0 or cols.max() >= n_model:
            raise ValueError("cols %s outside the model's %d joints" % (cols.tolist(), n_model))
        shape = (times.size, cols.size)
        self.q, self.v, self.a = (_frozen(x, f, shape) for x, f in zip((q, v, a), FIELDS))
        if self.q is None and self.v is None and self.a is None:
            raise ValueError("a trajectory needs positions, velocities or accelerations")
        times.flags.writeable = False
        cols.flags.writeable = False
        self.times_ns, self.cols, self.n_model = times, cols, n_model
        mask = np.zeros(n_model, dtype=bool)
        mask[cols] = True
        mask.flags.writeable = False
        self.mask = mask

    @property
    def end_ns(self) -> int:
        return int(self.times_ns[-1])

    def sample(self, t_ns: int):
        """(q, v, a) at absolute time ``t_ns``, each (n_model,) in model order, or None for a
        quantity that cannot be derived (positions of an acceleration-only trajectory)."""
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

    def _expand(self, x) -> Optional[np.ndarray]:
        if x is None:
            return None
        full = np.zeros(self.n_model)
        full[self.cols] = x
        return full

    def _segment(self, k, s, T):
        Q, V, A = self.q, self.v, self.a      # T > 0: times are strictly increasing
        if Q is not None:
            q0, q1 = Q[k], Q[k + 1]
            if V is not None and A is not None:
                return quintic(q0, V[k], A[k], q1, V[k + 1], A[k + 1], s, T)
            if V is not None:
                return cubic(q0, V[k], q1, V[k + 1], s, T)
            vel = (q1 - q0) / T
            return q0 + vel * s, vel, np.zeros_like(q0)
        lam = s / T
        v = None if V is None else (1 - lam) * V[k] + lam * V[k + 1]
        a = None if A is None else (1 - lam) * A[k] + lam * A[k + 1]
        if V is not None and A is None:
            a = (V[k + 1] - V[k]) / T
        return None, v, a


def cubic(q0, v0, q1, v1, s, T):
    """(q, v, a) at ``s`` in [0, T] of the cubic with q(0) = q0, q'(0) = v0, q(T) = q1,
    q'(T) = v1."""
    c2 = (3 * (q1 - q0) - (2 * v0 + v1) * T) / T ** 2
    c3 = (2 * (q0 - q1) + (v0 + v1) * T) / T ** 3
    q = q0 + v0 * s + c2 * s ** 2 + c3 * s ** 3
    v = v0 + 2 * c2 * s + 3 * c3 * s ** 2
    a = 2 * c2 + 6 * c3 * s
    return q, v, a


def quintic(q0, v0, a0, q1, v1, a1, s, T):
    """(q, v, a) at ``s`` in [0, T] of the quintic with q, q', q'' equal to (q0, v0, a0) at 0
    and (q1, v1, a1) at T."""
    T2, T3, T4, T5 = T ** 2, T ** 3, T ** 4, T ** 5
    h = q1 - q0
    c3 = (20 * h - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T2) / (2 * T3)
    c4 = (-30 * h + (14 * v1 + 16 * v0) * T + (3 * a0 - 2 * a1) * T2) / (2 * T4)
    c5 = (12 * h - 6 * (v1 + v0) * T + (a1 - a0) * T2) / (2 * T5)
    q = q0 + v0 * s + 0.5 * a0 * s ** 2 + c3 * s ** 3 + c4 * s ** 4 + c5 * s ** 5
    v = v0 + a0 * s + 3 * c3 * s ** 2 + 4 * c4 * s ** 3 + 5 * c5 * s ** 4
    a = a0 + 6 * c3 * s + 12 * c4 * s ** 2 + 20 * c5 * s ** 3
    return q, v, a
