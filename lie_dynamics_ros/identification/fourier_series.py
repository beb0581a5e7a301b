"""A finite Fourier series per joint, the periodic excitation of Swevers, Ganseman, Tukel,
De Schutter & Van Brussel (1997):

    q_i(t) = q_i0 + sum_l a_il / (w_f l) sin(w_f l t) - b_il / (w_f l) cos(w_f l t)
    v_i(t) = sum_l a_il cos(w_f l t) + b_il sin(w_f l t)
    a_i(t) = sum_l -a_il w_f l sin(w_f l t) + b_il w_f l cos(w_f l t)

with w_f = 2 pi f and l = 1..L. Every term has period 1 / f, so the motion can be repeated and
averaged over periods. q, v and a are linear in (a, b, q0): the limits are linear constraints.
"""
from dataclasses import dataclass

import numpy as np


def basis(t, harmonics, base_frequency):
    """(Phi_q, Phi_v, Phi_a), each (N, 2L): q = Phi_q @ C + q0, v = Phi_v @ C, a = Phi_a @ C
    with C = [a^T; b^T] (2L, nv) the coefficients stacked by harmonic."""
    wl = 2.0 * np.pi * base_frequency * np.arange(1, harmonics + 1)
    phase = np.outer(np.asarray(t, dtype=float).reshape(-1), wl)
    s, c = np.sin(phase), np.cos(phase)
    return (np.hstack([s / wl, -c / wl]), np.hstack([c, s]), np.hstack([-s * wl, c * wl]))


@dataclass(frozen=True)
class FourierSeries:
    """Coefficients a, b (nv, L) and offsets q0 (nv,) of the series at ``base_frequency`` (Hz).
    Note q(0) = q0 - sum_l b_l / (w_f l): q0 is the mean position, not the start."""
    a: np.ndarray
    b: np.ndarray
    q0: np.ndarray
    base_frequency: float

    def __post_init__(self):
        for name in ("a", "b", "q0"):
            arr = np.array(getattr(self, name), dtype=float)
            arr.flags.writeable = False
            object.__setattr__(self, name, arr)

    @property
    def harmonics(self) -> int:
        return self.a.shape[1]

    @property
    def period(self) -> float:
        return 1.0 / self.base_frequency

    def stacked(self):
        """C = [a^T; b^T], (2L, nv): the matrix ``basis`` multiplies."""
        return np.vstack([self.a.T, self.b.T])

    def evaluate(self, t):
        """q, v, a at the times ``t`` (N,), each (N, nv)."""
        Pq, Pv, Pa = basis(t, self.harmonics, self.base_frequency)
        C = self.stacked()
        return Pq @ C + self.q0, Pv @ C, Pa @ C

    def derivative_bounds(self, order):
        """(nv,) bound on |d^k (q - q0) / dt^k| over all t, for k = ``order``: each harmonic's
        a sin + b cos has amplitude sqrt(a^2 + b^2), scaled by (w_f l)^(k - 1)."""
        wl = 2.0 * np.pi * self.base_frequency * np.arange(1, self.harmonics + 1)
        return np.hypot(self.a, self.b) @ wl ** (order - 1)

    def extremes(self, points_per_period=None):
        """Certified bounds over all t (not only at samples): (q_min, q_max, |v|_max, |a|_max),
        each (nv,).

        Sampled on a uniform grid of spacing h over one period; between two grid points a
        function f with |f''| <= M exceeds the larger grid value by at most M h^2 / 8 (the
        interpolation error of the chord), so grid extreme + M h^2 / 8 bounds the true one.
        The default grid (64 points per period of the highest harmonic) keeps that term below
        0.2 % of the amplitude.
        """
        n = int(points_per_period or 64 * self.harmonics)
        h = self.period / n
        q, v, a = self.evaluate(np.arange(n) * h)
        slack = h * h / 8.0
        bq, bv, ba = (self.derivative_bounds(k) * slack for k in (2, 3, 4))
        return (q.min(axis=0) - bq, q.max(axis=0) + bq, np.abs(v).max(axis=0) + bv,
                np.abs(a).max(axis=0) + ba)
