"""From time-stamped joint samples to (q, v, a, tau) for identification.

A recording (``JointSamples``: stamps, positions, optional velocities, efforts, in the model's
joint order) becomes ``IdentificationData``, a list of uniform segments:

1. Stamps are sorted; a step longer than ``max_gap_periods`` times the median period splits
   the recording into segments (a pause, a dropped stretch, the next bag). A row with a
   non-finite position or effort is a gap too.
2. Each segment is resampled by linear interpolation to a uniform grid of as many samples
   over the same span, so jittery stamps are handled, not refused.
3. Positions are low-passed with a zero-phase Butterworth filter (``scipy.signal.filtfilt``,
   order ``FILTER_ORDER`` forwards and backwards, cut-off ``cutoff_hz``), then differentiated
   by central differences: v = dq/dt, a = d^2q/dt^2. A joint whose velocity is measured
   (finite throughout the segment) takes the filtered measurement for v and its central
   difference for a. The efforts go through the same filter, so the regressor's signals and
   the torque see the same attenuation and delay (none: zero phase).
4. ``trim_periods`` cut-off periods are dropped at both ends of each segment, where the
   filter's start-up transient lives.

Long segments are filtered in chunks of ``chunk_samples`` with ``overlap_samples`` of context
on each side, so the filter's memory stays bounded; away from the segment ends the result
equals the one-shot filter to rounding (the Butterworth's impulse response has decayed far
below it over the overlap).

The default cut-off, 20 Hz, suits arms sampled at 100 Hz to 1 kHz: an excitation's highest
harmonic is a few Hz (Swevers et al. 1997), which it passes untouched, while it removes the
sensor noise above. Lower is not better: the filter smears each Coulomb sign change of the
torque over about 1 / (2 cut-off) s, where the model's friction sign(v) is sharp, so the
identified Coulomb friction comes out low by roughly the share of time so smeared (a few % at
20 Hz for a motion reversing about once a second, twice that at 10 Hz).
"""
from dataclasses import dataclass
from typing import List, Optional, Sequence

import numpy as np

from ..errors import InputError

DEFAULT_CUTOFF_HZ = 20.0
#: order of the Butterworth filter run forwards and backwards (net order 8, zero phase)
FILTER_ORDER = 4
#: a step longer than this many median periods splits the recording
MAX_GAP_PERIODS = 5.0
#: cut-off periods dropped at each segment end (the filter's transient)
TRIM_PERIODS = 5.0
#: fewest samples a segment must keep after trimming
MIN_SEGMENT_SAMPLES = 20
DEFAULT_CHUNK_SAMPLES = 100_000
#: context each side of a chunk, in cut-off periods
OVERLAP_PERIODS = 20.0


@dataclass(frozen=True)
class JointSamples:
    """One recording in the model's joint order: ``t`` (N,) in s, ``position``, ``velocity``
    and ``effort`` (N, n) with NaN where a value is unknown (``velocity`` may be None)."""
    names: Sequence[str]
    t: np.ndarray
    position: np.ndarray
    velocity: Optional[np.ndarray]
    effort: np.ndarray
    source: str = "recording"


@dataclass(frozen=True)
class Segment:
    """One uniform stretch: ``t`` (M,) and ``q``, ``v``, ``a``, ``tau`` (M, n)."""
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    tau: np.ndarray

    def __len__(self):
        return len(self.t)

    def slice(self, start, stop):
        s = slice(start, stop)
        return Segment(self.t[s], self.q[s], self.v[s], self.a[s], self.tau[s])


@dataclass(frozen=True)
class IdentificationData:
    """Filtered segments of one or more recordings, and the settings that made them."""
    names: Sequence[str]
    segments: List[Segment]
    cutoff_hz: float

    def __len__(self):
        return sum(len(s) for s in self.segments)

    def stacked(self):
        """(q, v, a, tau) of all segments, one below the other."""
        return tuple(np.concatenate([getattr(s, f) for s in self.segments])
                     for f in ("q", "v", "a", "tau"))

    def split_holdout(self, fraction):
        """(train, holdout): the last ``fraction`` of every segment is held out."""
        if not 0.0 < fraction < 1.0:
            raise InputError("holdout fraction must be in (0, 1), got %r" % (fraction,))
        train, hold = [], []
        for s in self.segments:
            k = len(s) - int(round(fraction * len(s)))
            if k < 1 or k >= len(s):
                raise InputError("too little data: a segment of %d samples cannot hold out %g "
                                 "of itself" % (len(s), fraction))
            train.append(s.slice(0, k))
            hold.append(s.slice(k, None))
        return (IdentificationData(self.names, train, self.cutoff_hz),
                IdentificationData(self.names, hold, self.cutoff_hz))


def butterworth(cutoff_hz, rate_hz, order=FILTER_ORDER):
    """Second-order sections of the low-pass Butterworth filter at ``cutoff_hz`` for samples
    at ``rate_hz`` (sections, not (b, a): at cut-offs far below Nyquist the polynomial form
    loses digits)."""
    from scipy.signal import butter
    nyquist = 0.5 * rate_hz
    if not 0.0 < cutoff_hz < nyquist:
        raise InputError("cutoff %g Hz must be positive and below the Nyquist frequency "
                         "%g Hz of %g Hz sampling" % (cutoff_hz, nyquist, rate_hz))
    return butter(order, cutoff_hz / nyquist, output="sos")


def filtfilt_chunked(sos, x, chunk_samples=DEFAULT_CHUNK_SAMPLES, overlap_samples=1000):
    """Zero-phase filter along axis 0, ``chunk_samples`` rows at a time with
    ``overlap_samples`` of context each side; equals ``sosfiltfilt(sos, x, axis=0)`` to
    rounding once the overlap exceeds the impulse response's decay (the first and last chunk
    see the same ends as the one-shot filter)."""
    from scipy.signal import sosfiltfilt
    n = len(x)
    if chunk_samples is None or n <= chunk_samples + 2 * overlap_samples:
        return sosfiltfilt(sos, x, axis=0)
    out = np.empty_like(x, dtype=float)
    for start in range(0, n, chunk_samples):
        stop = min(n, start + chunk_samples)
        lo, hi = max(0, start - overlap_samples), min(n, stop + overlap_samples)
        out[start:stop] = sosfiltfilt(sos, x[lo:hi], axis=0)[start - lo:stop - lo]
    return out


def _central_difference(x, dt):
    d = np.empty_like(x)
    d[1:-1] = (x[2:] - x[:-2]) / (2.0 * dt)
    d[0], d[-1] = (x[1] - x[0]) / dt, (x[-1] - x[-2]) / dt   # trimmed away afterwards
    return d


def _check(samples: JointSamples):
    t = np.asarray(samples.t, dtype=float).reshape(-1)
    n = len(samples.names)
    arrays = {}
    for f in ("position", "velocity", "effort"):
        x = getattr(samples, f)
        if x is None:
            arrays[f] = None
            continue
        x = np.asarray(x, dtype=float)
        if x.shape != (len(t), n):
            raise InputError("%s: %s has shape %s, expected (%d, %d) (samples, joints)"
                             % (samples.source, f, x.shape, len(t), n))
        arrays[f] = x
    if not np.all(np.isfinite(t)):
        raise InputError("%s: non-finite time stamps" % samples.source)
    missing = [nm for j, nm in enumerate(samples.names)
               if not np.isfinite(arrays["position"][:, j]).any()]
    if missing:
        raise InputError("%s: no position for joint(s) %s" % (samples.source, ", ".join(missing)))
    no_effort = [nm for j, nm in enumerate(samples.names)
                 if not np.isfinite(arrays["effort"][:, j]).any()]
    if no_effort:
        raise InputError("%s: no effort for joint(s) %s; identification needs the joint "
                         "torques" % (samples.source, ", ".join(no_effort)))
    return t, arrays["position"], arrays["velocity"], arrays["effort"]


def _split(t, good, max_gap_periods):
    """[(start, stop)] index ranges of ``t`` (sorted) with no gap and only good rows."""
    idx = np.flatnonzero(good)
    if len(idx) < 2:
        return []
    steps = np.diff(t[idx])
    period = float(np.median(steps[steps > 0])) if np.any(steps > 0) else 0.0
    cuts = np.flatnonzero((steps > max_gap_periods * period) | (np.diff(idx) > 1)) + 1
    bounds = np.concatenate([[0], cuts, [len(idx)]])
    return [idx[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:]) if hi - lo >= 2]


def prepare(recordings, cutoff_hz=DEFAULT_CUTOFF_HZ, max_gap_periods=MAX_GAP_PERIODS,
            trim_periods=TRIM_PERIODS, chunk_samples=DEFAULT_CHUNK_SAMPLES,
            min_segment_samples=MIN_SEGMENT_SAMPLES):
    """``JointSamples`` (one or a list, all with the same ``names``) -> ``IdentificationData``.

    Raises InputError for a missing joint or effort (named), a cut-off above the Nyquist
    frequency, or too little data (no segment keeps ``min_segment_samples`` after trimming).
    """
    if isinstance(recordings, JointSamples):
        recordings = [recordings]
    if not recordings:
        raise InputError("too little data: no recording given")
    if not cutoff_hz > 0:
        raise InputError("cutoff must be positive, got %r Hz" % (cutoff_hz,))
    names = list(recordings[0].names)
    segments, total, dropped = [], 0, 0
    for rec in recordings:
        if list(rec.names) != names:
            raise InputError("%s: joints %s differ from %s" % (rec.source, list(rec.names), names))
        t, q, vm, tau = _check(rec)
        order = np.argsort(t, kind="stable")
        t, q, tau = t[order], q[order], tau[order]
        vm = vm[order] if vm is not None else None
        keep = np.concatenate([np.diff(t) > 0, [True]])   # a repeated stamp: the last wins
        t, q, tau = t[keep], q[keep], tau[keep]
        vm = vm[keep] if vm is not None else None
        total += len(t)
        good = np.isfinite(q).all(axis=1) & np.isfinite(tau).all(axis=1)
        for idx in _split(t, good, max_gap_periods):
            seg = _segment(t[idx], q[idx], None if vm is None else vm[idx], tau[idx],
                           cutoff_hz, trim_periods, chunk_samples, min_segment_samples)
            if seg is None:
                dropped += len(idx)
            else:
                segments.append(seg)
    if not segments:
        raise InputError(
            "too little data: %d samples, %d of them in stretches too short to keep %d samples "
            "after trimming %g cut-off periods (%g s at %g Hz) at each end"
            % (total, dropped, min_segment_samples, trim_periods, trim_periods / cutoff_hz,
               cutoff_hz))
    return IdentificationData(names, segments, float(cutoff_hz))


def _segment(t, q, vm, tau, cutoff_hz, trim_periods, chunk_samples, min_samples):
    m = len(t)                  # the mean period: the median of jittered steps is biased
    dt = float(t[-1] - t[0]) / (m - 1)
    trim = int(np.ceil(trim_periods / (cutoff_hz * dt)))
    if m - 2 * trim < min_samples:
        return None
    grid = t[0] + dt * np.arange(m)

    def resample(x):
        return np.column_stack([np.interp(grid, t, x[:, j]) for j in range(x.shape[1])])

    sos = butterworth(cutoff_hz, 1.0 / dt)
    overlap = int(np.ceil(OVERLAP_PERIODS / (cutoff_hz * dt)))

    def low_pass(x):
        return filtfilt_chunked(sos, x, chunk_samples, overlap)

    qf = low_pass(resample(q))
    v = _central_difference(qf, dt)
    if vm is not None:
        measured = np.isfinite(vm).all(axis=0)
        if measured.any():
            v[:, measured] = low_pass(resample(vm[:, measured]))
    acc = _central_difference(v, dt)
    tauf = low_pass(resample(tau))
    keep = slice(trim, m - trim)
    return Segment(grid[keep], qf[keep], v[keep], acc[keep], tauf[keep])
