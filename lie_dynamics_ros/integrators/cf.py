"""Commutator-free Lie group methods (Celledoni et al. 2021, §2.2, eq. 9, and §4.2).

Format:  Y_r = exp(h sum_k alpha^k_{r,J} f_k) ... exp(h sum_k alpha^k_{r,1} f_k) . Y_start,
f_r = f(Y_r), with the same form for y_{n+1}.  The rightmost exponential is applied first
(so Y_4 of CF4 starts from Y_2): in the tables below each stage is ``(start, [c_1, ...])`` meaning
Y = exp(h c_J.f) ... exp(h c_1.f) . Y_start, i.e. ``c_1`` acts first; ``start`` is -1 for y_n
or the index of an earlier stage whose exponentials are reused.

The embedded pairs estimate the error by a distance on the manifold, e = d(y_{n+1}, y~_{n+1})
(``space.dist``, geodesic on the groups; Celledoni et al. 2021, §4).
"""
from dataclasses import dataclass

import numpy as np

from .rkmk import StepOut

__all__ = ["CFScheme", "CF3", "CF4", "CF32A", "CF32B", "CF43", "CF_SCHEMES"]


@dataclass(frozen=True)
class CFScheme:
    name: str
    order: int
    stages: tuple            # ((start, (coef, ...)), ...) ; coef = tuple of len n_stages_total
    output: tuple            # (start, (coef, ...))
    n_main: int              # stages the main method needs
    embedded_output: tuple = None
    order_hat: int = None
    kind = "cf"
    fsal = False

    @property
    def embedded(self):
        return self.embedded_output is not None

    @property
    def nodes(self):
        """Time nodes c_r = sum of all coefficients leading to stage r (for non-autonomous f)."""
        c = []
        for start, coefs in self.stages:
            base = 0.0 if start < 0 else c[start]
            c.append(base + sum(float(np.sum(k)) for k in coefs))
        return tuple(c)

    def classical(self):
        """(a, b, b_hat) of the underlying classical RK method (a_r^k = sum_j alpha^k_{r,j})."""
        n = len(self.stages)
        m = len(self.output[1][0])

        def total(start, coefs, acc):
            v = np.zeros(m) if start < 0 else acc[start].copy()
            for k in coefs:
                v += np.asarray(k, dtype=float)
            return v
        rows = []
        for start, coefs in self.stages:
            rows.append(total(start, coefs, rows))
        a = np.array(rows)[:, :n]
        b = total(*self.output, rows)[:n]
        bh = total(*self.embedded_output, rows)[:n] if self.embedded else None
        return a, b, bh

    def step(self, space, f, t, y, h, embedded=False, f0=None):
        n = len(self.stages) if embedded else self.n_main
        F = np.zeros((len(self.output[1][0]), space.dim))
        Y = []
        nodes = self.nodes
        nfev = 0
        for r in range(n):
            start, coefs = self.stages[r]
            Yr = y if start < 0 else Y[start]
            for k in coefs:
                Yr = space.exp_act(h * (np.asarray(k) @ F), Yr)
            Y.append(Yr)
            if r == 0 and f0 is not None:
                F[0] = f0
            else:
                F[r] = f(t + nodes[r] * h, Yr)
                nfev += 1

        def out(spec):
            start, coefs = spec
            z = y if start < 0 else Y[start]
            for k in coefs:
                z = space.exp_act(h * (np.asarray(k) @ F), z)
            return z
        y1 = out(self.output)
        err = None
        if embedded:
            err = space.dist(y1, out(self.embedded_output))
        return StepOut(y1, err, nfev, None)


def _c(*x):
    return tuple(float(v) for v in x)


# CF4 (eq. 9): classical RK4 underneath, Y4 reuses the exponential of Y2
_CF4_STAGES = (
    (-1, ()),
    (-1, (_c(1 / 2, 0, 0, 0, 0),)),
    (-1, (_c(0, 1 / 2, 0, 0, 0),)),
    (1, (_c(-1 / 2, 0, 1, 0, 0),)),
    # extra stage of the 4(3) pair, eq. (34): Ybar_3 = exp(3h f2/4) y_n
    (-1, (_c(0, 3 / 4, 0, 0, 0),)),
)
_CF4_OUT = (-1, (_c(3 / 12, 2 / 12, 2 / 12, -1 / 12, 0), _c(-1 / 12, 2 / 12, 2 / 12, 3 / 12, 0)))
# Ralston's RK3, b = (2/9, 1/3, 4/9): y~ = exp(h(-f1 + 3 f2 + 4 fbar3)/9) exp(h f1/3) y_n
_CF43_EMB = (-1, (_c(1 / 3, 0, 0, 0, 0), _c(-1 / 9, 3 / 9, 0, 0, 4 / 9)))

CF4 = CFScheme("cf4", 4, _CF4_STAGES[:4], _CF4_OUT, 4)
CF43 = CFScheme("cf43", 4, _CF4_STAGES, _CF4_OUT, 4, _CF43_EMB, 3)

# CF 3(2) version A (Heun's RK3 underneath, reuses Y2 in the update)
_CF32A_STAGES = (
    (-1, ()),
    (-1, (_c(1 / 3, 0, 0),)),
    (-1, (_c(0, 2 / 3, 0),)),
)
CF32A = CFScheme("cf32a", 3, _CF32A_STAGES, (1, (_c(-1 / 12, 0, 3 / 4),)), 3,
                 (-1, (_c(0, 1 / 2, 1 / 2),)), 2)
#: CF3: the main method of CF 3(2) A
CF3 = CFScheme("cf3", 3, _CF32A_STAGES, (1, (_c(-1 / 12, 0, 3 / 4),)), 3)

# CF 3(2) version B (reuses Y3 in the update)
_CF32B_STAGES = (
    (-1, ()),
    (-1, (_c(2 / 3, 0, 0),)),
    (-1, (_c(5 / 12, 1 / 4, 0),)),
)
CF32B = CFScheme("cf32b", 3, _CF32B_STAGES, (2, (_c(-1 / 6, -1 / 2, 1),)), 3,
                 (-1, (_c(1 / 4, 0, 3 / 4),)), 2)

CF_SCHEMES = {s.name: s for s in (CF3, CF4, CF32A, CF32B, CF43)}
