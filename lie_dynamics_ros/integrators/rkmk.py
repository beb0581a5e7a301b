"""Runge–Kutta–Munthe-Kaas methods (Celledoni et al. 2021, §2.2, eqs. 6–8).

y(t) = exp(sigma(t)) . y_n with  sigma' = dexp_sigma^{-1} f(exp(sigma) . y_n),  sigma(0) = 0   (6)

A classical Runge–Kutta method applied to (6) gives sigma_1 and y_{n+1} = exp(sigma_1) . y_n.
Every stage goes through dexp^{-1}_{sigma_i} and f is evaluated at exp(sigma_i) . y_n.

``f(t, y)`` returns an element of the Lie algebra (a flat vector, see ``spaces``).
``dexp_order``: ``None`` = exact dexp^{-1} (closed form on so(3)/se(3), identity on R^n);
an int k = the Bernoulli series truncated after ad^k; ``"auto"`` = k = p - 2 for a method of
order p, the fewest commutators that keep the order (Munthe-Kaas 1999).
"""
from collections import namedtuple

import numpy as np

from .tableaus import DOPRI5, EULER, HEUN, RK3, RK4, Tableau

__all__ = ["StepOut", "RKMK", "RKMK4TwoCommutators", "lie_euler", "lie_euler_heun", "rkmk3",
           "rkmk4", "rkmk4_truncated", "rkmk4_2c", "rkmk5", "rkmk45"]

#: result of one step: new state, error estimate (None, an algebra vector, or a float distance),
#: number of f evaluations, and f(t+h, y_new) when the method computed it (FSAL) else None
StepOut = namedtuple("StepOut", "y err nfev f_end")


class RKMK:
    """RKMK method built on an explicit Butcher tableau (any order, optional embedded pair).

    The error estimate of an embedded pair is sigma_1 - sigma~_1 in the Lie algebra (§4.1).
    """
    kind = "rkmk"

    def __init__(self, tableau: Tableau, dexp_order=None, name=None):
        self.tableau = tableau
        self.order = tableau.order
        self.order_hat = tableau.order_hat
        if dexp_order == "auto":
            dexp_order = max(self.order - 2, 0)
        self.dexp_order = dexp_order
        self.name = name or f"rkmk_{tableau.name}"
        b = tableau.b
        nz = np.nonzero(b)[0]
        self._s_main = int(nz[-1]) + 1 if len(nz) else tableau.stages
        a = tableau.a
        # first-same-as-last: last stage evaluated at exp(sigma_1) . y_n (DOPRI5)
        self.fsal = bool(tableau.stages > 1 and np.allclose(a[-1, :-1], b[:-1]) and b[-1] == 0
                         and abs(tableau.c[-1] - 1.0) < 1e-15)

    @property
    def embedded(self):
        return self.tableau.embedded

    def step(self, space, f, t, y, h, embedded=False, f0=None):
        tab = self.tableau
        s = tab.stages if embedded else self._s_main
        K = np.empty((s, space.dim))
        nfev = 0
        raw_last = None
        for i in range(s):
            if i == 0:
                if f0 is None:
                    f0 = f(t, y)
                    nfev += 1
                K[0] = f0
                continue
            u = h * (tab.a[i, :i] @ K[:i])
            yi = space.exp_act(u, y)
            fi = f(t + tab.c[i] * h, yi)
            nfev += 1
            K[i] = space.dexp_inv(u, fi, self.dexp_order)
            raw_last = fi
        sigma = h * (tab.b[:s] @ K)
        y1 = space.exp_act(sigma, y)
        err = None
        f_end = None
        if embedded:
            err = h * ((tab.b - tab.b_hat) @ K)
            if self.fsal:
                f_end = raw_last
        return StepOut(y1, err, nfev, f_end)

    def __repr__(self):
        return f"RKMK({self.tableau.name}, dexp_order={self.dexp_order})"


class RKMK4TwoCommutators:
    """Casas–Owren RKMK4 with two commutators (Casas & Owren 2003; Celledoni et al. 2021, §2.2).

    f1 = h f(y);  f2 = h f(exp(f1/2) y);  f3 = h f(exp(f2/2 - [f1, f2]/8) y);  f4 = h f(exp(f3) y)
    y1 = exp((f1 + 2 f2 + 2 f3 + f4 - [f1, f4]/2) / 6) y
    """
    kind = "rkmk"
    order, order_hat, embedded, fsal = 4, None, False, False
    name = "rkmk4_2c"

    def step(self, space, f, t, y, h, embedded=False, f0=None):
        nfev = 3
        if f0 is None:
            f0 = f(t, y)
            nfev += 1
        k1 = h * f0
        k2 = h * f(t + 0.5 * h, space.exp_act(0.5 * k1, y))
        k3 = h * f(t + 0.5 * h, space.exp_act(0.5 * k2 - 0.125 * space.bracket(k1, k2), y))
        k4 = h * f(t + h, space.exp_act(k3, y))
        sigma = (k1 + 2.0 * k2 + 2.0 * k3 + k4 - 0.5 * space.bracket(k1, k4)) / 6.0
        return StepOut(space.exp_act(sigma, y), None, nfev, None)

    def __repr__(self):
        return "RKMK4TwoCommutators()"


def lie_euler():
    """Lie–Euler: y1 = exp(h f(y0)) . y0 (order 1)."""
    return RKMK(EULER, None, "lie_euler")


def lie_euler_heun():
    """Lie–Euler–Heun: RKMK with Heun's trapezoid tableau, dexp^-1 = identity suffices (order 2)."""
    return RKMK(HEUN, 0, "lie_euler_heun")


def rkmk3(dexp_order=None):
    """RKMK on Heun's third-order tableau (order 3)."""
    return RKMK(RK3, dexp_order, "rkmk3")


def rkmk4(dexp_order=None):
    """RKMK on classical RK4 (order 4), exact dexp^-1 by default."""
    return RKMK(RK4, dexp_order, "rkmk4")


def rkmk4_truncated():
    """RKMK on classical RK4 with dexp^-1 = v - [u,v]/2 + [u,[u,v]]/12 (order 4)."""
    return RKMK(RK4, 2, "rkmk4_trunc")


def rkmk4_2c():
    return RKMK4TwoCommutators()


def rkmk5(dexp_order=None):
    """Constant-step RKMK5: the 5th-order weights of Dormand–Prince, 6 stages."""
    return RKMK(DOPRI5, dexp_order, "rkmk5")


def rkmk45(dexp_order=None):
    """RKMK(5,4): Dormand–Prince pair on (6); error sigma_1 - sigma~_1 (Celledoni §4.1)."""
    return RKMK(DOPRI5, dexp_order, "rkmk45")
