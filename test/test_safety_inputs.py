"""VelocityEstimator, JointStateMerger, LimitMonitor (lie_dynamics_ros.safety), without DDS."""
import math

import numpy as np
import pytest

from lie_dynamics_ros.safety import JointStateMerger, LimitMonitor, VelocityEstimator

MS = 1_000_000


def test_velocity_estimate_tracks_a_sine_with_the_rc_filter_lag():
    f, fc, dt = 1.0, 20.0, 1e-3
    est = VelocityEstimator(2, cutoff_hz=fc)
    t = np.arange(0, 2.0, dt)
    out = np.array([est.update([math.sin(2 * math.pi * f * s), 0.5], int(round(s * 1e9)))
                    for s in t])
    true = 2 * math.pi * f * np.cos(2 * math.pi * f * t)
    # first-order low-pass at fc: amplitude 1/sqrt(1+(f/fc)^2), phase lag atan(f/fc) (+dt/2)
    lag = math.atan(f / fc) / (2 * math.pi * f) + dt / 2
    gain = 1 / math.sqrt(1 + (f / fc) ** 2)
    expect = gain * 2 * math.pi * f * np.cos(2 * math.pi * f * (t - lag))
    steady = t > 0.5
    assert np.max(np.abs(out[steady, 0] - expect[steady])) < 0.01 * 2 * math.pi
    assert np.max(np.abs(out[steady, 0] - true[steady])) < 0.06 * 2 * math.pi
    np.testing.assert_array_equal(out[:, 1], 0.0)          # a joint at rest


def test_velocity_estimate_restarts_on_gaps_and_ignores_repeated_stamps():
    est = VelocityEstimator(1, cutoff_hz=0.0, max_gap=0.1)
    assert est.update([0.0], 0)[0] == 0.0
    assert est.update([0.01], 10 * MS)[0] == pytest.approx(1.0)
    assert est.update([5.0], 10 * MS)[0] == pytest.approx(1.0)       # same stamp: kept
    assert est.update([0.02], 500 * MS)[0] == 0.0                      # gap: restart
    assert est.update([0.03], 5 * MS)[0] == 0.0                        # backwards: restart
    v, mask = est.fill([0.04], [np.nan], 15 * MS)
    assert mask.tolist() == [True] and v[0] == pytest.approx(1.0)
    v, mask = est.fill([0.05], [3.0], 25 * MS)
    assert mask.tolist() == [False] and v[0] == 3.0


def test_a_rebuilt_estimator_continues_the_old_filter():
    steps = [([0.0, 1.0], 0), ([0.01, 1.02], 10 * MS), ([0.03, 1.03], 20 * MS)]
    old, ref = VelocityEstimator(2, cutoff_hz=5.0), VelocityEstimator(2, cutoff_hz=5.0)
    for q, t in steps:
        old.update(q, t)
        ref.update(q, t)
    new = VelocityEstimator(2, cutoff_hz=5.0)
    new.continue_from(old)
    moving = ref.update([0.06, 1.05], 30 * MS)
    assert np.all(moving != 0.0)                  # a restarted filter would give zeros
    np.testing.assert_array_equal(new.update([0.06, 1.05], 30 * MS), moving)
    old.update([9.0, 9.0], 40 * MS)               # the two no longer share state
    np.testing.assert_array_equal(new.update([0.08, 1.06], 40 * MS),
                                  ref.update([0.08, 1.06], 40 * MS))
    with pytest.raises(ValueError, match="3 joints given to one of 2"):
        new.continue_from(VelocityEstimator(3))

def test_merger_completes_main_messages_from_other_sources_and_rejects_or_holds_the_rest():
    names = ["a1", "a2", "finger"]
    nan = np.nan
    m = JointStateMerger(names, "reject", max_age=0.1)
    q, v, reason = m.merge([0.1, 0.2, nan], [1.0, 2.0, nan], 0)
    assert q is None and "finger" in reason and "a1" not in reason
    m.update([nan, nan, 0.03], [nan, nan, 0.3], 5 * MS)                # the gripper topic
    q, v, held = m.merge([0.1, 0.2, nan], [1.0, 2.0, nan], 6 * MS)
    np.testing.assert_array_equal(q, [0.1, 0.2, 0.03])
    np.testing.assert_array_equal(v, [1.0, 2.0, 0.3])
    assert not held.any()
    q, v, held = m.merge([0.1, 0.2, 0.5], None, 6 * MS)                # main has it: main wins
    assert q[2] == 0.5 and np.isnan(v).all()
    q, v, reason = m.merge([0.4, 0.5, nan], None, 150 * MS)
    assert q is None and "finger" in reason                            # gripper too old
    q, v, reason = m.merge([nan, nan, nan], None, 6 * MS)              # main names none of ours
    assert q is None and "a1" in reason and "a2" in reason
    h = JointStateMerger(names, "hold", hold_positions=[0.0, 0.0, 0.04])
    q, v, held = h.merge([0.1, 0.2, nan], [1.0, 2.0, nan], 10**12)
    np.testing.assert_array_equal(q, [0.1, 0.2, 0.04])
    np.testing.assert_array_equal(v, [1.0, 2.0, 0.0])
    assert held.tolist() == [False, False, True]
    with pytest.raises(ValueError, match="missing_joints"):
        JointStateMerger(names, "ignore")
    with pytest.raises(ValueError, match="hold_positions has 2 values"):
        JointStateMerger(names, "hold", hold_positions=[1.0, 2.0])


def test_limit_monitor_warns_once_per_joint_naming_it():
    mon = LimitMonitor(["j1", "j2"], [-1.0, -2.0], [1.0, 2.0], margin=0.1)
    assert mon.check([1.05, 0.0]) == []
    w = mon.check([90.0, 0.0])                 # 90 degrees sent as radians
    assert len(w) == 1 and "'j1'" in w[0] and "90" in w[0]
    w2 = mon.check([90.0, -3.0])               # j1 again: silent; j2: new
    assert len(w2) == 1 and "'j2'" in w2[0]
    assert mon.check([90.0, -3.0]) == []
    mon.reset()
    assert len(mon.check([90.0, -3.0])) == 2


def test_limit_monitor_names_a_joint_that_moved_past_its_limit_not_a_unit_error():
    """An arm falling through its (unenforced) limits moves there state by state: the warning
    says the limits are not enforced and nothing holds the joint, not "degrees"."""
    mon = LimitMonitor(["j1"], [-1.0], [1.0], margin=0.1)
    for x in np.linspace(0.5, 1.3, 17):               # 0.05 rad per state, a fall
        notes = mon.check([x])
        if notes:
            break
    assert len(notes) == 1 and "'j1'" in notes[0]
    assert "not enforced" in notes[0] and "nothing holds" in notes[0]
    assert "degrees" not in notes[0]


def test_limit_monitor_suspects_degrees_only_when_the_value_as_degrees_fits_the_limits():
    mon = LimitMonitor(["j1", "j2"], [-2.0, -1.0], [2.0, 1.0], margin=0.1)
    notes = mon.check([60.0, 0.0])                     # 60 deg = 1.047 rad: inside [-2, 2]
    assert len(notes) == 1 and "degrees sent as radians" in notes[0] and "1.047" in notes[0]
    mon.check([60.0, 0.2])
    notes = mon.check([60.0, 115.0])                   # 115 deg = 2.0 rad: outside [-1, 1]
    assert len(notes) == 1 and "'j2'" in notes[0] and "jumped there from 0.2" in notes[0]
    assert "degrees" not in notes[0]


def test_limit_monitor_a_fast_joint_moving_outwards_moved_there_even_in_one_big_step():
    mon = LimitMonitor(["j1"], [-2.0], [2.0], margin=0.1)
    mon.check([1.0], [5.0])
    notes = mon.check([3.0], [40.0])            # 2 rad in one state: fast, outwards
    assert len(notes) == 1 and "moved there at 40 rad/s" in notes[0]
    assert "degrees" not in notes[0]
