"""identification/signals.py against analytic signals: a sum of sines, its exact derivatives."""
import numpy as np
import pytest

from lie_dynamics_ros.errors import InputError
from lie_dynamics_ros.identification.signals import (
    JointSamples, filtfilt_chunked, butterworth, prepare)

NAMES = ["j1", "j2"]
# (amplitude rad, frequency Hz, phase) per joint: an excitation's harmonics, well below 10 Hz
WAVES = [[(0.5, 0.3, 0.1), (0.2, 1.1, 1.0), (0.05, 2.0, 2.0)],
         [(0.3, 0.5, 0.4), (0.1, 1.7, 0.3)]]


def exact(t):
    q, v, a = (np.zeros((len(t), len(WAVES))) for _ in range(3))
    for j, waves in enumerate(WAVES):
        for amp, f, ph in waves:
            w = 2 * np.pi * f
            q[:, j] += amp * np.sin(w * t + ph)
            v[:, j] += amp * w * np.cos(w * t + ph)
            a[:, j] -= amp * w * w * np.sin(w * t + ph)
    return q, v, a


def bound(rate):
    """Central differences of a sine of angular frequency w at step h err by w^2 h^2 / 6
    (v) and w^2 h^2 / 12 twice (a); the filter passes <= 2 Hz with gain 1 - O((f/fc)^8).
    Allow each joint 1e-3 of its peak plus that difference error at the top frequency.
    (The default cut-off, 20 Hz, passes them with a gain nearer 1 still.)"""
    w = 2 * np.pi * 2.0
    return 1e-3 + (w / rate) ** 2 / 3


def samples(t, with_velocity=False, effort=None):
    q, v, a = exact(t)
    tau = 2.0 * a + 3.0 * v if effort is None else effort
    return JointSamples(NAMES, t, q, v if with_velocity else None, tau)


@pytest.mark.parametrize("rate", [100.0, 500.0, 1000.0])
def test_derivatives_of_a_sum_of_sines(rate):
    t = np.arange(0, 20, 1 / rate)
    data = prepare(samples(t), cutoff_hz=10.0)
    (seg,) = data.segments
    q, v, a = exact(seg.t)
    for name, got, want in (("q", seg.q, q), ("v", seg.v, v), ("a", seg.a, a)):
        err = np.abs(got - want).max(axis=0) / np.abs(want).max(axis=0)
        assert np.all(err < bound(rate)), (name, err, bound(rate))
    # the torque went through the same zero-phase filter: no lag, the same gain
    tau = 2.0 * a + 3.0 * v
    assert np.all(np.abs(seg.tau - tau).max(axis=0) / np.abs(tau).max(axis=0) < bound(rate))
    # the edges are trimmed by 5 cut-off periods (0.5 s at 10 Hz)
    assert seg.t[0] == pytest.approx(0.5, abs=2 / rate)
    assert seg.t[-1] == pytest.approx(t[-1] - 0.5, abs=2 / rate)


def test_measured_velocity_is_used_and_noise_is_filtered():
    rng = np.random.default_rng(0)
    t = np.arange(0, 20, 1e-3)
    s = samples(t, with_velocity=True)
    noisy = JointSamples(NAMES, t, s.position + 1e-4 * rng.standard_normal(s.position.shape),
                         s.velocity + 1e-3 * rng.standard_normal(s.position.shape), s.effort)
    (seg,) = prepare(noisy, cutoff_hz=10.0).segments
    q, v, a = exact(seg.t)
    # white noise of std s at 1 kHz keeps about s sqrt(2 fc / fs) = 0.14 s below 10 Hz; its
    # difference is amplified by at most 2 pi fc: bounds of a few times that, relative to peaks
    assert np.all(np.abs(seg.q - q).max(axis=0) < 1e-4)
    assert np.all(np.abs(seg.v - v).max(axis=0) < 5 * 1e-3 * 0.14 + 1e-3 * np.abs(v).max())
    assert np.all(np.abs(seg.a - a).max(axis=0) / np.abs(a).max(axis=0) < 0.02)


def test_jittery_stamps_are_resampled_and_gaps_split():
    rng = np.random.default_rng(1)
    t = np.arange(0, 30, 2e-3) + rng.uniform(-4e-4, 4e-4, 15000)    # +-20 % of the period
    keep = (t < 12) | (t > 13)                                        # a 1 s gap
    s = samples(t[keep])
    data = prepare(s)
    assert len(data.segments) == 2
    assert data.segments[0].t[-1] < 12 and data.segments[1].t[0] > 13
    for seg in data.segments:
        assert np.allclose(np.diff(seg.t), 2e-3, rtol=1e-3)
        q, v, a = exact(seg.t)
        assert np.all(np.abs(seg.v - v).max(axis=0) / np.abs(v).max(axis=0) < 2e-3)
        assert np.all(np.abs(seg.a - a).max(axis=0) / np.abs(a).max(axis=0) < 1e-2)


def test_nan_rows_split_and_shuffled_stamps_are_sorted():
    t = np.arange(0, 10, 1e-2)
    s = samples(t)
    eff = s.effort.copy()
    eff[500, 1] = np.nan
    perm = np.random.default_rng(2).permutation(len(t))
    data = prepare(JointSamples(NAMES, t[perm], s.position[perm], None, eff[perm]))
    assert len(data.segments) == 2
    assert data.segments[0].t[-1] < t[500] < data.segments[1].t[0]


def test_chunked_equals_one_shot():
    t = np.arange(0, 60, 1e-3)
    s = samples(t)
    one = prepare(s, chunk_samples=None)
    chunked = prepare(s, chunk_samples=5000)
    for f in ("q", "v", "a", "tau"):
        x, y = getattr(one.segments[0], f), getattr(chunked.segments[0], f)
        assert np.abs(x - y).max() <= 1e-9 * np.abs(x).max(), f
    # the chunked filter itself, at the ends too (the first and last chunk see the same ends)
    sos = butterworth(10.0, 1000.0)
    x = np.random.default_rng(3).standard_normal((30000, 2))
    from scipy.signal import sosfiltfilt
    assert np.abs(filtfilt_chunked(sos, x, 4000, 2000) - sosfiltfilt(sos, x, axis=0)).max() < 1e-12


def test_holdout_is_the_last_fraction_of_each_segment():
    t = np.concatenate([np.arange(0, 10, 1e-2), np.arange(20, 30, 1e-2)])
    data = prepare(samples(t))
    train, hold = data.split_holdout(0.25)
    for full, tr, ho in zip(data.segments, train.segments, hold.segments):
        assert len(tr) + len(ho) == len(full)
        assert len(ho) == round(0.25 * len(full))
        assert tr.t[-1] < ho.t[0] and ho.t[-1] == full.t[-1]
    q, v, a, tau = train.stacked()
    assert q.shape == (len(train), 2) and tau.shape == q.shape
    with pytest.raises(InputError, match="holdout fraction"):
        data.split_holdout(1.0)


def test_errors_name_what_is_wrong():
    t = np.arange(0, 10, 1e-2)
    s = samples(t)
    no_effort = JointSamples(NAMES, t, s.position, None, np.full_like(s.position, np.nan))
    with pytest.raises(InputError, match="no effort for joint.*j1, j2"):
        prepare(no_effort)
    pos = s.position.copy()
    pos[:, 1] = np.nan
    with pytest.raises(InputError, match="no position for joint.*j2"):
        prepare(JointSamples(NAMES, t, pos, None, s.effort))
    with pytest.raises(InputError, match="too little data: 30 samples"):
        prepare(samples(t[:30]))
    with pytest.raises(InputError, match="Nyquist"):
        prepare(s, cutoff_hz=60.0)
    with pytest.raises(InputError, match=r"shape \(1000, 3\)"):
        prepare(JointSamples(NAMES, t, s.position, None, np.zeros((1000, 3))))
