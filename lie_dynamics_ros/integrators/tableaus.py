"""Explicit Butcher tableaus used by the RKMK methods (Celledoni et al. 2021, §2.2, §4.1).

Every tableau is an immutable :class:`Tableau` with strictly lower-triangular ``a``, weights
``b``, nodes ``c``, classical ``order`` and, for embedded pairs, ``b_hat`` with its order
``order_hat``.  ``Tableau.check_order_conditions()`` verifies the classical order conditions
up to order 5 (the tests call it for every tableau below).
"""
from dataclasses import dataclass
from fractions import Fraction as Fr

import numpy as np

__all__ = [
    "Tableau", "EULER", "HEUN", "MIDPOINT", "RK3", "RALSTON3", "RK4", "DOPRI5", "TABLEAUS",
]


@dataclass(frozen=True)
class Tableau:
    """An explicit Runge–Kutta method (a, b, c) with an optional embedded weight vector."""
    name: str
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    order: int
    b_hat: np.ndarray = None
    order_hat: int = None

    @property
    def stages(self):
        return len(self.b)

    @property
    def embedded(self):
        return self.b_hat is not None

    def order_conditions(self, b=None, max_order=5):
        """Residuals of the classical order conditions (rooted trees up to ``max_order``).

        Returns a dict ``{order: max |residual|}``.
        """
        a, c = self.a, self.c
        b = self.b if b is None else b
        e = np.ones(len(b))
        res = {}
        # order 1..5 conditions in the usual elementary-differential form
        conds = {
            1: [(b @ e, 1.0)],
            2: [(b @ c, 1 / 2)],
            3: [(b @ c**2, 1 / 3), (b @ (a @ c), 1 / 6)],
            4: [(b @ c**3, 1 / 4), (b @ (c * (a @ c)), 1 / 8), (b @ (a @ c**2), 1 / 12),
                (b @ (a @ (a @ c)), 1 / 24)],
            5: [(b @ c**4, 1 / 5), (b @ (c**2 * (a @ c)), 1 / 10), (b @ ((a @ c)**2), 1 / 20),
                (b @ (c * (a @ c**2)), 1 / 15), (b @ (c * (a @ (a @ c))), 1 / 30),
                (b @ (a @ c**3), 1 / 20), (b @ (a @ (c * (a @ c))), 1 / 40),
                (b @ (a @ (a @ c**2)), 1 / 60), (b @ (a @ (a @ (a @ c))), 1 / 120)],
        }
        for p in range(1, max_order + 1):
            res[p] = max(abs(v - t) for v, t in conds[p])
        return res

    def check_order_conditions(self, tol=1e-14):
        """True when the row-sum condition holds and b (and b_hat) satisfy their orders exactly."""
        ok = np.allclose(self.a.sum(axis=1), self.c, atol=tol, rtol=0)
        r = self.order_conditions(self.b)
        ok &= all(r[p] < tol for p in range(1, self.order + 1))
        if self.embedded:
            rh = self.order_conditions(self.b_hat)
            ok &= all(rh[p] < tol for p in range(1, self.order_hat + 1))
        return bool(ok)


def _tab(name, rows, b, order, b_hat=None, order_hat=None):
    s = len(b)
    a = np.zeros((s, s))
    for i, row in enumerate(rows):
        a[i, :len(row)] = [float(Fr(x)) for x in row]
    b = np.array([float(Fr(x)) for x in b])
    c = a.sum(axis=1)
    bh = None if b_hat is None else np.array([float(Fr(x)) for x in b_hat])
    for arr in (a, b, c) + (() if bh is None else (bh,)):
        arr.setflags(write=False)
    return Tableau(name, a, b, c, order, bh, order_hat)


#: explicit Euler (order 1)
EULER = _tab("euler", [[]], ["1"], 1)
#: Heun's method / explicit trapezoid (order 2); with RKMK it is Lie–Euler–Heun
HEUN = _tab("heun", [[], ["1"]], ["1/2", "1/2"], 2, b_hat=["1", "0"], order_hat=1)
#: explicit midpoint (order 2)
MIDPOINT = _tab("midpoint", [[], ["1/2"]], ["0", "1"], 2)
#: Heun's third-order method, c = (0, 1/3, 2/3), b = (1/4, 0, 3/4); the classical method
#: underneath CF 3(2) version A, embedded b_hat = (0, 1/2, 1/2) as in that pair
RK3 = _tab("rk3", [[], ["1/3"], ["0", "2/3"]], ["1/4", "0", "3/4"], 3,
           b_hat=["0", "1/2", "1/2"], order_hat=2)
#: Ralston's third-order method, b = (2/9, 1/3, 4/9) (the auxiliary scheme of CF 4(3), eq. 34)
RALSTON3 = _tab("ralston3", [[], ["1/2"], ["0", "3/4"]], ["2/9", "1/3", "4/9"], 3)
#: classical Runge–Kutta 4
RK4 = _tab("rk4", [[], ["1/2"], ["0", "1/2"], ["0", "0", "1"]], ["1/6", "1/3", "1/3", "1/6"], 4)
#: Dormand–Prince 5(4) (Dormand & Prince 1980; Celledoni et al. 2021, §4.1); b is 5th order
DOPRI5 = _tab(
    "dopri5",
    [[], ["1/5"], ["3/40", "9/40"], ["44/45", "-56/15", "32/9"],
     ["19372/6561", "-25360/2187", "64448/6561", "-212/729"],
     ["9017/3168", "-355/33", "46732/5247", "49/176", "-5103/18656"],
     ["35/384", "0", "500/1113", "125/192", "-2187/6784", "11/84"]],
    ["35/384", "0", "500/1113", "125/192", "-2187/6784", "11/84", "0"], 5,
    b_hat=["5179/57600", "0", "7571/16695", "393/640", "-92097/339200", "187/2100", "1/40"],
    order_hat=4)

TABLEAUS = {t.name: t for t in (EULER, HEUN, MIDPOINT, RK3, RALSTON3, RK4, DOPRI5)}
