"""TorqueGuard (lie_dynamics_ros.safety): timeout, fallback, slew limit, clamping, without DDS."""
import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.safety import GuardConfig, TorqueGuard
from lie_dynamics_ros.safety.guard import ERROR, OK, WARN

from ros_fixtures import ARM7

MS = 1_000_000


@pytest.fixture(scope="module")
def arm7():
    return ldr.load_urdf(ARM7)


def guard(model, **cfg):
    return TorqueGuard(model.effort_limits, lambda q: ldr.gravity_torques(model, q),
                       GuardConfig(**cfg))


def test_clamping_is_elementwise_saturation_and_every_clamp_is_counted(arm7):
    g = guard(arm7)
    e = arm7.effort_limits
    tau = np.array([2, -3, 0.5, 0, 1.5, -0.99, 10.0]) * e
    out = g.command(tau, 1 * MS, np.zeros(7), 1 * MS)
    np.testing.assert_array_equal(out, np.clip(tau, -e, e))      # clip, never scaling
    assert out[2] == tau[2] and out[5] == tau[5]
    assert g.counts["clamped_elements"] == 4 and g.counts["clamped_commands"] == 1
    g.command(0.5 * e, 2 * MS, np.zeros(7), 2 * MS)
    assert g.counts["clamped_commands"] == 1
    off = guard(arm7, clamp_efforts=False)
    np.testing.assert_array_equal(off.command(tau, 1 * MS, None, 1 * MS), tau)


def test_non_finite_torques_are_refused_and_never_published(arm7):
    g = guard(arm7)
    for bad in (np.nan, np.inf, -np.inf):
        tau = np.ones(7)
        tau[3] = bad
        assert g.command(tau, 1 * MS, np.zeros(7), 1 * MS) is None
    assert g.command(np.ones(6), 1 * MS, None, 1 * MS) is None    # wrong size
    assert g.counts["refused_nonfinite"] == 4 and g.counts["commands"] == 0
    assert g.last is None


def test_slew_limiter_uses_stamp_differences_first_command_free_and_held_pose_converges(arm7):
    rate = 100.0                                     # N m/s
    g = guard(arm7, max_torque_rate=rate, clamp_efforts=False)
    target = np.array([30.0, -20, 10, 5, -5, 2, 1])
    first = g.command(np.zeros(7), 1000 * MS, None, 0)
    np.testing.assert_array_equal(first, 0.0)
    # receive times are irrelevant: only header stamps (1 ms apart) count
    out, prev, k = None, first, 0
    while k < 1000:
        k += 1
        out = g.command(target, (1000 + k) * MS, None, 5 * k * MS)
        assert np.all(np.abs(out - prev) <= rate * 1e-3 * (1 + 1e-12))
        prev = out
        if np.array_equal(out, target):
            break
    np.testing.assert_array_equal(out, target)               # exact torques, not approximate
    assert k == int(np.ceil(30.0 / (rate * 1e-3)))           # the largest step sets the time
    assert g.counts["rate_limited_commands"] == k - 1
    # a fresh guard's first command is never limited
    g2 = guard(arm7, max_torque_rate=rate, clamp_efforts=False)
    np.testing.assert_array_equal(g2.command(target, 5 * MS, None, 5 * MS), target)
    # same stamp twice: dt = 0, the command cannot move
    np.testing.assert_array_equal(g2.command(-target, 5 * MS, None, 6 * MS), target)


def test_rate_limit_then_clamp_keeps_the_limits(arm7):
    e = arm7.effort_limits
    g = guard(arm7, max_torque_rate=1e6)
    g.command(np.zeros(7), 1 * MS, None, 1 * MS)
    out = g.command(5 * e, 2 * MS, None, 2 * MS)
    np.testing.assert_array_equal(out, e)


def test_zero_fallback_timing_exact_zero_repeats_and_resume(arm7):
    g = guard(arm7, state_timeout=0.1, repeat_period=0.05, max_torque_rate=1000.0)
    t0 = 10_000 * MS
    tau = np.array([5.0, 4, 3, 2, 1, 0.5, 0.1])
    g.command(tau, t0, np.zeros(7), t0)
    assert g.poll(t0) is None and g.poll(t0 + 99 * MS) is None    # no earlier than timeout
    f1 = g.poll(t0 + 100 * MS)
    assert f1 is not None and np.all(f1 == 0.0) and not np.signbit(f1).any()
    assert g.poll(t0 + 120 * MS) is None                           # repeats at repeat_period
    f2 = g.poll(t0 + 150 * MS)
    np.testing.assert_array_equal(f1, f2)
    assert g.counts["timeouts"] == 1 and g.counts["fallbacks"] == 2
    level, msg, counts = g.status()
    assert level == ERROR and "zero fallback" in msg
    # valid states return: answered as usual, limited relative to the fallback (0) with dt
    # from the last answered state (0.2 s -> 200 N m allowed: tau passes unchanged)
    out = g.command(tau, t0 + 200 * MS, np.zeros(7), t0 + 200 * MS)
    np.testing.assert_array_equal(out, tau)
    assert g.poll(t0 + 250 * MS) is None and not g.in_timeout
    assert g.status()[0] == OK                     # the timeout was reported while ERROR
    g.command(100 * tau, t0 + 201 * MS, np.zeros(7), t0 + 201 * MS)   # slew-limited
    level, msg, counts = g.status()
    assert level == WARN and "rate_limited_commands +1" in msg
    assert counts["timeouts"] == 1 and counts["rate_limited_commands"] == 1


def test_gravity_fallback_is_g_at_the_last_valid_state_and_stays_constant(arm7):
    g = guard(arm7, fallback="gravity", state_timeout=0.05)
    rng = np.random.default_rng(3)
    q1 = ldr.random_configuration(arm7, rng=rng)
    q2 = rng.uniform(-1, 1, 7)
    g.command(np.ones(7), 1 * MS, q2, 1 * MS)
    g.command(np.ones(7), 2 * MS, q1, 2 * MS)
    f = g.poll(2 * MS + 50 * MS)
    expect = np.clip(ldr.gravity_torques(arm7, q1), -arm7.effort_limits, arm7.effort_limits)
    np.testing.assert_allclose(f, expect, rtol=0, atol=1e-12)
    assert np.linalg.norm(f) > 1.0                                 # not trivially zero
    np.testing.assert_array_equal(g.poll(2 * MS + 500 * MS), f)


def test_gravity_fallback_that_fails_or_is_not_finite_sends_zero(arm7):
    for fn in (lambda q: np.full(7, np.nan), lambda q: 1 / 0):
        g = TorqueGuard(arm7.effort_limits, fn, GuardConfig(fallback="gravity"))
        g.command(np.ones(7), 1 * MS, np.zeros(7), 1 * MS)
        np.testing.assert_array_equal(g.poll(200 * MS), 0.0)
        assert g.counts["fallback_errors"] == 1


def test_no_fallback_before_the_first_state_or_when_disabled(arm7):
    g = guard(arm7)
    assert g.poll(10**12) is None
    g0 = guard(arm7, state_timeout=0.0)
    g0.command(np.ones(7), 1, None, 1)
    assert g0.poll(10**12) is None


def test_final_command_is_exact_zero_and_bypasses_the_limiter(arm7):
    g = guard(arm7, max_torque_rate=1.0)
    g.command(np.full(7, 10.0), 1 * MS, None, 1 * MS)
    np.testing.assert_array_equal(g.final(), np.zeros(7))


@pytest.mark.parametrize("cfg,word", [
    (dict(state_timeout=-0.1), "state_timeout"), (dict(state_timeout=float("nan")), "finite"),
    (dict(max_torque_rate=-1.0), "max_torque_rate"), (dict(fallback="brake"), "fallback"),
    (dict(max_torque_rate=float("inf")), "finite")])
def test_invalid_configurations_are_refused_with_a_reason(arm7, cfg, word):
    reason = GuardConfig(**cfg).check()
    assert reason and word in reason
    with pytest.raises(ValueError, match=word):
        guard(arm7, **cfg)
    g = guard(arm7)
    with pytest.raises(ValueError):
        g.configure(GuardConfig(**cfg))
    assert g.config == GuardConfig()


def test_random_streams_never_emit_non_finite_or_out_of_limit_commands(arm7):
    rng = np.random.default_rng(0)
    e = arm7.effort_limits
    g = guard(arm7, max_torque_rate=500.0, fallback="gravity", state_timeout=0.02)
    t, now, emitted = 0, 0, 0
    for k in range(3000):
        now += int(rng.integers(0, 30)) * MS
        t += int(rng.integers(-2, 10)) * MS
        tau = rng.normal(scale=3, size=7) * e
        tau[rng.random(7) < 0.02] = rng.choice([np.nan, np.inf, -np.inf])
        for out in (g.command(tau, max(t, 0), rng.uniform(-2, 2, 7), now), g.poll(now)):
            if out is not None:
                emitted += 1
                assert np.all(np.isfinite(out)) and np.all(np.abs(out) <= e)
    assert emitted > 2500 and g.counts["refused_nonfinite"] > 100 and g.counts["timeouts"] > 10


def test_a_reconfigured_guard_continues_the_old_ones_state(arm7):
    g = guard(arm7, max_torque_rate=100.0, clamp_efforts=False)
    g.command(np.zeros(7), 1 * MS, np.zeros(7), 1 * MS)
    h = guard(arm7, max_torque_rate=1000.0, clamp_efforts=False).continue_from(g)
    out = h.command(np.full(7, 50.0), 2 * MS, np.zeros(7), 2 * MS)
    np.testing.assert_allclose(out, 1.0)             # limited from g's last command, new rate
    assert h.counts["commands"] == 2
