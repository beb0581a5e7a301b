"""Method registry and the generic driver ``solve`` for y' = f(t, y) . y on a homogeneous space.

Method names (``METHODS``):

==================  =====  ========  ======================================================
name                order  embedded  what
==================  =====  ========  ======================================================
lie_euler / euler   1                exp(h f(y)) . y
lie_euler_heun/heun 2                RKMK on Heun's trapezoid tableau
rkmk3 / rk3         3                RKMK on Heun's RK3 (exact dexp^-1)
rkmk4               4                RKMK on classical RK4, exact dexp^-1
rkmk4_trunc         4                RKMK4 with dexp^-1 truncated after ad^2
rkmk4_2c            4                Casas–Owren RKMK4 with two commutators
rkmk5               5                Dormand–Prince 5th-order weights (constant step)
cf3                 3                commutator-free, version A of CF 3(2)
cf4                 4                commutator-free CF4 (eq. 9)
rkmk45              5(4)  yes        RKMK(5,4) Dormand–Prince pair
cf32 / cf32a        3(2)  yes        CF 3(2) version A
cf32b               3(2)  yes        CF 3(2) version B
cf43                4(3)  yes        CF4 + Ralston-3 auxiliary scheme (eq. 34)
rkmk_heun_euler     2(1)  yes        RKMK Heun–Euler pair
==================  =====  ========  ======================================================
"""
from dataclasses import dataclass

import numpy as np

from ..errors import InputError

from . import cf, rkmk
from .adaptive import solve_adaptive
from .tableaus import HEUN

__all__ = ["METHODS", "ADAPTIVE_METHODS", "get_method", "Solution", "solve", "solve_fixed"]


METHODS = {
    "lie_euler": rkmk.lie_euler,
    "euler": rkmk.lie_euler,
    "lie_euler_heun": rkmk.lie_euler_heun,
    "heun": rkmk.lie_euler_heun,
    "rkmk3": rkmk.rkmk3,
    "rk3": rkmk.rkmk3,
    "rkmk4": rkmk.rkmk4,
    "rkmk4_trunc": rkmk.rkmk4_truncated,
    "rkmk4_2c": rkmk.rkmk4_2c,
    "rkmk5": rkmk.rkmk5,
    "rkmk45": rkmk.rkmk45,
    "rkmk_heun_euler": lambda: rkmk.RKMK(HEUN, 0, "rkmk_heun_euler"),
    "cf3": lambda: cf.CF3,
    "cf4": lambda: cf.CF4,
    "cf32": lambda: cf.CF32A,
    "cf32a": lambda: cf.CF32A,
    "cf32b": lambda: cf.CF32B,
    "cf43": lambda: cf.CF43,
}
#: names that integrate with a variable step by default
ADAPTIVE_METHODS = ("rkmk45", "cf32", "cf32a", "cf32b", "cf43", "rkmk_heun_euler")


def get_method(method):
    """A method object from its name (``METHODS``), or the object itself."""
    if isinstance(method, str):
        try:
            return METHODS[method.lower()]()
        except KeyError:
            raise InputError(f"unknown method {method!r}; known: {sorted(METHODS)}") from None
    return method


@dataclass
class Solution:
    t: np.ndarray            # (k,)
    y: np.ndarray            # (k, space.size)
    h: np.ndarray            # (k-1,) step sizes
    nfev: int
    nreject: int = 0
    method: str = ""


def solve_fixed(space, f, y0, t_span, h, method="rkmk4", callback=None):
    """Constant step h (the last step is shortened to land on t_span[1])."""
    m = get_method(method)
    t0, t1 = float(t_span[0]), float(t_span[1])
    n = max(1, int(np.ceil(abs(t1 - t0) / abs(h) - 1e-9)))
    hh = (t1 - t0) / n
    y = np.array(y0, dtype=float)
    ys = np.empty((n + 1, y.size))
    ys[0] = y
    ts = t0 + hh * np.arange(n + 1)
    ts[-1] = t1
    nfev = 0
    for k in range(n):
        out = m.step(space, f, ts[k], y, hh)
        y = out.y
        nfev += out.nfev
        ys[k + 1] = y
        if callback is not None and callback(ts[k + 1], y):
            ys, ts = ys[:k + 2], ts[:k + 2]
            break
    return Solution(ts, ys, np.diff(ts), nfev, 0, getattr(m, "name", str(m)))


def solve(space, f, y0, t_span, h=None, method="rkmk4", tol=None, rtol=None, atol=None,
          **kwargs):
    """Integrate y' = psi_*(f(t, y))|_y from y0 over t_span.

    Fixed step: give ``h``.  Adaptive (embedded pairs, see ``ADAPTIVE_METHODS``): give ``tol``
    (the paper's absolute tolerance) or ``rtol``/``atol``; ``h`` is then the initial step.
    """
    m = get_method(method)
    adaptive = getattr(m, "embedded", False) and (
        tol is not None or rtol is not None or atol is not None or h is None)
    if adaptive:
        r = solve_adaptive(space, f, y0, t_span, m, tol=tol, rtol=rtol, atol=atol, h0=h,
                           **kwargs)
        return Solution(r.t, r.y, r.h, r.nfev, r.nreject, getattr(m, "name", str(m)))
    if h is None:
        raise InputError(f"method {method!r} needs a step size h")
    return solve_fixed(space, f, y0, t_span, h, m, **kwargs)
