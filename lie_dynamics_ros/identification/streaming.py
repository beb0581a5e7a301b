"""``signals.prepare`` and the hold-out split on recordings read piece by piece, with memory
bounded by the filter's chunk (not the recording's length).

Each recording is a callable ``read(show)`` returning a fresh iterable of ``JointSamples``
pieces in time order (e.g. a bag read block by block; ``show`` False asks for no progress
line: that read may stop early); it is read three times:

1. the median sampling period from the first ``PERIOD_STEPS`` steps (``prepare`` takes the
   median of all steps: the same for a regular clock);
2. the segments: runs of good rows (finite position and effort) without a gap, their sample
   count, first and last stamp, and which joints have a measured velocity throughout;
3. each kept segment resampled, filtered (the same chunks with overlap as
   ``signals.filtfilt_chunked``), differentiated and trimmed as ``prepare`` does, its last
   ``holdout`` kept aside (at most ``holdout_max_samples`` in all) and the rest yielded as
   (q, v, a, tau) chunks for ``identify_chunks``.

A recording whose stamps go backwards is read whole and given to ``prepare`` (sorting needs
it all); so is nothing else.
"""
import numpy as np

from ..errors import InputError
from .signals import (DEFAULT_CHUNK_SAMPLES, DEFAULT_CUTOFF_HZ, MAX_GAP_PERIODS,
                      MIN_SEGMENT_SAMPLES, OVERLAP_PERIODS, TRIM_PERIODS,
                      IdentificationData, JointSamples, Segment, butterworth, prepare)

#: steps whose median sets the gap threshold
PERIOD_STEPS = 10_000
DEFAULT_HOLDOUT_MAX_SAMPLES = 500_000


def _clean(pieces):
    """(t, q, vm, tau) pieces as ``prepare`` sees them after its sort: a repeated stamp keeps
    its last row (one row is held back to the next piece to see the repeat). Yields None and
    stops where the stamps go backwards."""
    held = None
    for s in pieces:
        t = np.asarray(s.t, dtype=float)
        if not np.all(np.isfinite(t)):
            raise InputError("%s: non-finite time stamps" % s.source)
        vm = s.velocity
        arrays = [t, np.asarray(s.position, dtype=float),
                  None if vm is None else np.asarray(vm, dtype=float),
                  np.asarray(s.effort, dtype=float)]
        if held is not None:
            arrays = [None if x is None else np.concatenate([h, x])
                      for h, x in zip(held, arrays)]
        t = arrays[0]
        if len(t) == 0:
            continue
        if np.any(np.diff(t) < 0):
            yield None
            return
        keep = np.concatenate([np.diff(t) > 0, [False]])
        yield tuple(None if x is None else x[keep] for x in arrays)
        held = tuple(None if x is None else x[-1:] for x in arrays)
    if held is not None:
        yield held


def _period(read):
    """Median of the first PERIOD_STEPS positive steps between good rows (None: unsorted)."""
    steps, last = [], None
    for rows in _clean(read(False)):
        if rows is None:
            return None
        t, q, _, tau = rows
        tg = t[np.isfinite(q).all(axis=1) & np.isfinite(tau).all(axis=1)]
        if len(tg):
            d = np.diff(tg if last is None else np.concatenate([[last], tg]))
            steps.append(d[d > 0])
            last = tg[-1]
            if sum(len(x) for x in steps) >= PERIOD_STEPS:
                break
    d = np.concatenate(steps)[:PERIOD_STEPS] if steps else np.zeros(0)
    return float(np.median(d)) if len(d) else 0.0


def _segments(read, names, source, max_gap):
    """[(first row, count, t0, t_end, measured-velocity mask)] of the runs of good rows
    without a gap (rows counted after ``_clean``), and the total number of rows; None when
    the stamps go backwards."""
    n = len(names)
    has_q, has_tau = np.zeros(n, bool), np.zeros(n, bool)
    runs, cur, row, last_t = [], None, 0, None
    for rows in _clean(read(True)):
        if rows is None:
            return None
        t, q, vm, tau = rows
        has_q |= np.isfinite(q).any(axis=0)
        has_tau |= np.isfinite(tau).any(axis=0)
        good = np.isfinite(q).all(axis=1) & np.isfinite(tau).all(axis=1)
        vfin = np.isfinite(vm) if vm is not None else np.zeros((len(t), n), bool)
        for i in range(len(t)):
            if not good[i]:
                cur = None
            elif cur is not None and t[i] - last_t <= max_gap:
                cur[1] += 1
                cur[3] = t[i]
                cur[4] &= vfin[i]
            else:
                cur = [row + i, 1, t[i], t[i], vfin[i].copy()]
                runs.append(cur)
            if good[i]:
                last_t = t[i]
        row += len(t)
    missing = [nm for j, nm in enumerate(names) if not has_q[j]]
    if missing:
        raise InputError("%s: no position for joint(s) %s" % (source, ", ".join(missing)))
    no_effort = [nm for j, nm in enumerate(names) if not has_tau[j]]
    if no_effort:
        raise InputError("%s: no effort for joint(s) %s; identification needs the joint "
                         "torques" % (source, ", ".join(no_effort)))
    return [r for r in runs if r[1] >= 2], row


class _Segment:
    """One segment streamed through resampling, the chunked zero-phase filter, the central
    differences, the trim and the hold-out split."""

    def __init__(self, first, m, t0, t_end, measured, cutoff, trim_periods, chunk, fraction):
        self.first, self.m, self.measured = first, m, measured
        self.dt = float(t_end - t0) / (m - 1)
        self.t0 = t0
        self.trim = int(np.ceil(trim_periods / (cutoff * self.dt)))
        self.sos = butterworth(cutoff, 1.0 / self.dt)
        ov = int(np.ceil(OVERLAP_PERIODS / (cutoff * self.dt)))
        if chunk is None or m <= chunk + 2 * ov:
            self.chunks = [(0, m, 0, m)]
        else:
            self.chunks = [(s, min(m, s + chunk), max(0, s - ov), min(m, s + chunk + ov))
                           for s in range(0, m, chunk)]
        kept = m - 2 * self.trim
        self.k = kept - int(round(fraction * kept))     # fit rows after the trim
        self.raw = None                 # (t, X) raw rows not yet passed by the grid
        self.res = []                   # resampled rows from grid index self.r0
        self.r0 = self.next_grid = 0
        self.tail = None                # the last 4 filtered rows (grid indices, columns)
        self.held_open = False          # its held-out rows started a held Segment

    def grid(self, lo, hi):
        return self.t0 + self.dt * np.arange(lo, hi)

    def _before(self, t_last):
        """How many grid points lie strictly before ``t_last`` (without building the grid)."""
        k = min(self.m, max(0, int(np.ceil((t_last - self.t0) / self.dt))))
        while k > 0 and self.t0 + self.dt * (k - 1) >= t_last:
            k -= 1
        while k < self.m and self.t0 + self.dt * k < t_last:
            k += 1
        return k

    def push(self, t, X, final):
        """Raw rows (stamps t, columns X = [q | v measured | tau]); yields emitted rows
        (grid index, t, q, v, a, tau) blocks."""
        if self.raw is not None:
            t, X = np.concatenate([self.raw[0], t]), np.concatenate([self.raw[1], X])
        hi = self.m if final else self._before(t[-1])
        if hi > self.next_grid:
            g = self.grid(self.next_grid, hi)
            self.res.append(np.column_stack([np.interp(g, t, X[:, c])
                                             for c in range(X.shape[1])]))
            self.next_grid = hi
        if not final:           # keep the last raw row at or before the next grid point
            j = max(0, int(np.searchsorted(t, self.grid(hi, hi + 1)[0], "right")) - 1)
            self.raw = (t[j:].copy(), X[j:].copy())
        yield from self._filter()

    def _filter(self):
        while self.chunks and self.chunks[0][3] <= self.next_grid:
            start, stop, lo, hi = self.chunks.pop(0)
            R = np.concatenate(self.res) if len(self.res) > 1 else self.res[0]
            from scipy.signal import sosfiltfilt
            out = sosfiltfilt(self.sos, R[lo - self.r0:hi - self.r0], axis=0)
            out = out[start - lo:stop - lo]
            nxt = self.chunks[0][2] if self.chunks else stop
            self.res, self.r0 = [R[nxt - self.r0:].copy()], nxt     # a view would keep R
            yield from self._differentiate(start, out, not self.chunks)
        if not self.chunks:             # done: free the buffers
            self.res, self.raw, self.tail = [], None, None

    def _differentiate(self, start, F, final):
        nq = (F.shape[1] - int(self.measured.sum())) // 2
        idx = np.arange(start, start + len(F))
        if self.tail is not None:
            idx, F = np.concatenate([self.tail[0], idx]), np.concatenate([self.tail[1], F])
        qf, vmf, tauf = F[:, :nq], F[:, nq:F.shape[1] - nq], F[:, F.shape[1] - nq:]
        v = _central_difference(qf, self.dt)
        v[:, self.measured] = vmf
        acc = _central_difference(v, self.dt)
        lo = 0 if idx[0] == 0 else 2
        hi = len(idx) if final else len(idx) - 2
        self.tail = (idx[-4:].copy(), F[-4:].copy())
        s = slice(lo, hi)
        yield idx[s], self.t0 + self.dt * idx[s], qf[s], v[s], acc[s], tauf[s]


def _central_difference(x, dt):
    d = np.empty_like(x)
    d[1:-1] = (x[2:] - x[:-2]) / (2.0 * dt)
    d[0], d[-1] = (x[1] - x[0]) / dt, (x[-1] - x[-2]) / dt
    return d


class StreamedData:
    """What ``stream`` leaves besides the fit chunks: the held-out ``IdentificationData``
    (filled as the chunks are consumed), the segment count and the fit sample count."""

    def __init__(self, names, cutoff):
        self.names, self.cutoff_hz = list(names), float(cutoff)
        self.held_segments, self.n_segments, self.n_fit, self.n_held_dropped = [], 0, 0, 0

    @property
    def held(self):
        return IdentificationData(self.names, self.held_segments, self.cutoff_hz)


def stream(recordings, names, holdout, cutoff_hz=DEFAULT_CUTOFF_HZ,
           holdout_max_samples=DEFAULT_HOLDOUT_MAX_SAMPLES,
           chunk_samples=DEFAULT_CHUNK_SAMPLES, max_gap_periods=MAX_GAP_PERIODS,
           trim_periods=TRIM_PERIODS, min_segment_samples=MIN_SEGMENT_SAMPLES):
    """(chunks, info): ``chunks`` a generator of (q, v, a, tau) fit chunks for
    ``identify_chunks``, equal in content to ``prepare(...).split_holdout(holdout)[0]``;
    ``info`` a ``StreamedData`` whose ``held`` is the held-out part once ``chunks`` is done
    (its first ``holdout_max_samples`` samples; the rest is neither fitted nor kept).
    ``recordings``: [(source, read)], ``read(show)`` a fresh iterable of ``JointSamples``."""
    if not 0.0 < holdout < 1.0:
        raise InputError("holdout fraction must be in (0, 1), got %r" % (holdout,))
    if not cutoff_hz > 0:
        raise InputError("cutoff must be positive, got %r Hz" % (cutoff_hz,))
    if not recordings:
        raise InputError("too little data: no recording given")
    if chunk_samples is not None and chunk_samples < 16:
        raise InputError("chunk_samples must be at least 16, got %r" % (chunk_samples,))
    info = StreamedData(names, cutoff_hz)
    return _chunks(recordings, names, holdout, cutoff_hz, holdout_max_samples, chunk_samples,
                   max_gap_periods, trim_periods, min_segment_samples, info), info


def _chunks(recordings, names, holdout, cutoff, hmax, chunk, max_gap_periods, trim_periods,
            min_samples, info):
    total, dropped = 0, 0
    for source, read in recordings:
        period = _period(read)
        found = None if period is None else _segments(read, names, source,
                                                      max_gap_periods * period)
        if found is None:       # stamps go backwards: sorting needs the whole recording
            yield from _in_memory(source, read, names, holdout, cutoff, hmax, chunk,
                                  max_gap_periods, trim_periods, min_samples, info)
            continue
        runs, rows = found
        total += rows
        segs = []
        for first, m, t0, t_end, measured in runs:
            seg = _Segment(first, m, t0, t_end, measured, cutoff, trim_periods, chunk, holdout)
            if m - 2 * seg.trim < min_samples:
                dropped += m
            else:
                _check_holdout(seg.m - 2 * seg.trim, seg.k, holdout)
                segs.append(seg)
        if segs:
            yield from _emit(read, segs, info, hmax)
    if info.n_segments == 0:
        raise InputError(
            "too little data: %d samples, %d of them in stretches too short to keep %d samples "
            "after trimming %g cut-off periods (%g s at %g Hz) at each end"
            % (total, dropped, min_samples, trim_periods, trim_periods / cutoff, cutoff))


def _check_holdout(kept, k, fraction):
    if k < 1 or k >= kept:
        raise InputError("too little data: a segment of %d samples cannot hold out %g "
                         "of itself" % (kept, fraction))


def _emit(read, segs, info, hmax):
    """Pass 3: route each kept segment's rows (consecutive good rows) through its
    ``_Segment``."""
    row, si = 0, 0
    for t, q, vm, tau in _clean(read(True)):
        n = len(t)
        while si < len(segs) and segs[si].first < row + n:
            seg = segs[si]
            lo, hi = max(seg.first, row), min(seg.first + seg.m, row + n)
            s = slice(lo - row, hi - row)
            cols = [q[s], tau[s]]
            if seg.measured.any():
                cols.insert(1, vm[s][:, seg.measured])
            final = hi == seg.first + seg.m
            for out in seg.push(t[s], np.column_stack(cols), final):
                yield from _split(seg, out, info, hmax)
            if not final:
                break
            info.n_segments += 1
            si += 1
        row += n


def _split(seg, out, info, hmax):
    idx, tt, q, v, a, tau = out
    fit = (idx >= seg.trim) & (idx < seg.trim + seg.k)
    held = (idx >= seg.trim + seg.k) & (idx < seg.m - seg.trim)
    if fit.any():
        info.n_fit += int(fit.sum())
        yield q[fit], v[fit], a[fit], tau[fit]
    if held.any():
        room = hmax - sum(len(s) for s in info.held_segments)
        sel = np.flatnonzero(held)
        info.n_held_dropped += max(0, len(sel) - room)
        sel = sel[:max(0, room)]
        if len(sel):
            piece = Segment(tt[sel], q[sel], v[sel], a[sel], tau[sel])
            if seg.held_open:
                last = info.held_segments[-1]
                piece = Segment(*(np.concatenate([getattr(last, f), getattr(piece, f)])
                                  for f in ("t", "q", "v", "a", "tau")))
                info.held_segments[-1] = piece
            else:
                info.held_segments.append(piece)
                seg.held_open = True


def _in_memory(source, read, names, holdout, cutoff, hmax, chunk, max_gap_periods,
               trim_periods, min_samples, info):
    pieces = list(read(True))
    vel = None if any(p.velocity is None for p in pieces) else \
        np.concatenate([p.velocity for p in pieces])
    rec = JointSamples(names, np.concatenate([p.t for p in pieces]),
                       np.concatenate([p.position for p in pieces]), vel,
                       np.concatenate([p.effort for p in pieces]), source)
    train, held = prepare(rec, cutoff, max_gap_periods, trim_periods, chunk,
                          min_samples).split_holdout(holdout)
    for s in train.segments:
        info.n_fit += len(s)
        yield s.q, s.v, s.a, s.tau
    for s in held.segments:
        room = hmax - sum(len(x) for x in info.held_segments)
        info.n_held_dropped += max(0, len(s) - room)
        if room > 0:
            info.held_segments.append(s.slice(0, room))
    info.n_segments += len(train.segments)
