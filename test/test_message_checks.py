"""What the nodes check on incoming messages, without ROS: joints looked up by name
(runtime.joint_index), stamps that go backwards (runtime.stamps), throttled reports
(runtime.throttle) and effort limits (runtime.effort_limits)."""
import math

import numpy as np
import pytest

from lie_dynamics_ros.runtime.effort_limits import clamp_efforts, finite_limits
from lie_dynamics_ros.runtime.joint_index import JointIndex, reorder
from lie_dynamics_ros.runtime.stamps import StampMonitor
from lie_dynamics_ros.runtime.throttle import Throttle

NAMES = ["j1", "j2", "j3"]


def test_lookup_finds_each_joint_by_name_in_any_order():
    index = JointIndex(NAMES)
    msg = ["extra", "j3", "j1", "finger", "j2"]
    idx, reason = index.lookup(msg)
    assert reason is None and len(index) == 3
    assert [msg[i] for i in idx] == NAMES
    again, _ = index.lookup(list(msg))            # cached: the same read-only array
    assert again is idx and not idx.flags.writeable


def test_lookup_names_missing_unknown_and_duplicate_joints():
    index = JointIndex(NAMES)
    idx, reason = index.lookup(["j1", "x", "j3"])
    assert idx is None and reason == "missing joints ['j2'] (unknown joints ['x'])"
    assert index.lookup(["j1", "j2", "j1", "j3"])[1] == "duplicate joint name 'j1'"
    idx, reason = index.lookup(["j3", "j1"], required=[True, False, True])
    assert reason is None and list(idx) == [1, -1, 0]
    assert "missing joints ['j1']" in index.lookup(["j3"], required=[True, False, True])[1]
    with pytest.raises(ValueError, match="duplicate joint names"):
        JointIndex(["a", "b", "a"])


def test_lookup_stays_right_past_the_cache_size():
    index = JointIndex(NAMES)
    for k in range(3 * JointIndex.CACHE_SIZE):
        names = ["extra%d" % i for i in range(k % 5)] + NAMES[::-1]
        idx, reason = index.lookup(names)
        assert reason is None and [names[i] for i in idx] == NAMES


def test_reorder_is_undone_by_the_inverse_reorder_and_names_a_missing_joint():
    x = np.array([1.5, -2.0, 0.25])
    perm = ["j3", "j1", "j2"]
    y = reorder(x, NAMES, perm)
    assert list(y) == [x[2], x[0], x[1]]
    np.testing.assert_array_equal(reorder(y, perm, NAMES), x)
    with pytest.raises(ValueError, match=r"\['j4'\]"):
        reorder(x, NAMES, ["j1", "j4"])


def test_stamp_monitor_rejects_backwards_stamps_until_a_restart_is_clear():
    mon = StampMonitor(reset_after=3)
    assert mon.check(10) is None
    mon.accept(10)
    assert mon.check(10) is None and mon.check(0) is None     # equal and unstamped pass
    reason = mon.check(9)
    assert "backwards" in reason and "0.000000009" in reason and "0.000000010" in reason
    assert mon.check(11) is None                               # a forward stamp resets the count
    assert mon.check(1) and mon.check(2) and not mon.reset_happened
    assert mon.check(3) is None and mon.reset_happened         # the third in a row: restarted
    assert mon.last_ns is None
    mon.accept(3)
    assert mon.check(2)                                        # the new base holds
    mon.reset()
    assert mon.check(1) is None


def test_stamp_monitor_without_reset_rejects_forever():
    mon = StampMonitor(reset_after=0)
    mon.accept(100)
    assert all(mon.check(50) for _ in range(200)) and not mon.reset_happened


def test_throttle_lets_one_report_through_per_period_and_counts_the_rest():
    now = [0.0]
    th = Throttle(1.0, clock=lambda: now[0])
    assert th.ready("x") and not th.ready("x") and not th.ready("x")
    assert th.ready("y")                                       # keys are independent
    now[0] = 0.999
    assert not th.ready("x")
    now[0] = 1.0
    assert th.ready("x") and th.suppressed("x") == 3 and th.suppressed("x") == 0


def test_clamp_keeps_efforts_within_the_limits_and_marks_what_it_changed():
    lim = finite_limits([87.0, 0.0, math.inf, -1.0, 12.0])
    assert list(lim) == [87.0, math.inf, math.inf, math.inf, 12.0]
    tau = np.array([100.0, -1e6, 5.0, 1.0, -12.5])
    out, acted = clamp_efforts(tau, lim)
    assert np.all(np.abs(out) <= lim)
    np.testing.assert_array_equal(acted, np.abs(tau) > lim)
    np.testing.assert_array_equal(out[~acted], tau[~acted])
    np.testing.assert_array_equal(out[acted], np.sign(tau[acted]) * lim[acted])
