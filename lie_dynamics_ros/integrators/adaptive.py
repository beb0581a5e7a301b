"""Variable step size with embedded pairs (Celledoni et al. 2021, §4, eq. 33).

The paper's controller:

    repeat
        step from y_n with h -> y_{n+1}, y~_{n+1}, e_{n+1}
        h := theta (tol / e_{n+1})^alpha h,   alpha = 1 / (1 + min(p, p~))       (33)
        accepted := e_{n+1} < tol
    until accepted

with the safety factor theta in [0.8, 0.9].  For RKMK pairs e = |sigma_1 - sigma~_1| in the
Lie algebra; for commutator-free pairs e = d(y_{n+1}, y~_{n+1}) on the manifold.

Two ways to state the tolerance:

* ``tol`` (the paper): e is the Euclidean norm of sigma_1 - sigma~_1 (or the distance) and the
  step is accepted when e < tol;
* ``rtol``/``atol`` (ODE-solver style, used by ``simulate``): e is the RMS of
  (sigma_1 - sigma~_1)_i / (atol + rtol * s_i), where s_i = ``space.scale(y)`` (|y_i| on vector
  components, 1 on group components), and the step is accepted when e < 1.  For CF pairs the
  distance is divided by atol + rtol.

Guards that the paper does not state (documented departures): the step never grows by more than
``fac_max`` (default 10) per step — this only matters when e is ~0 — and a step below ``h_min``
raises ``RuntimeError``.
"""
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError

__all__ = ["StepSizeController", "AdaptiveResult", "solve_adaptive"]


@dataclass
class StepSizeController:
    """h_new = theta (1 / e)^alpha h for an error e already divided by the tolerance."""
    order: int
    order_hat: int
    theta: float = 0.9
    fac_max: float = 10.0
    fac_min: float = 0.0

    @property
    def alpha(self):
        return 1.0 / (1.0 + min(self.order, self.order_hat))

    def propose(self, h, e):
        fac = self.fac_max if e <= 0.0 else self.theta * (1.0 / e) ** self.alpha
        return h * min(self.fac_max, max(self.fac_min, fac))


@dataclass
class AdaptiveResult:
    t: np.ndarray
    y: np.ndarray
    h: np.ndarray                 # accepted step sizes, len(t) - 1
    err: np.ndarray               # normalised error estimate of each accepted step
    nfev: int = 0
    naccept: int = 0
    nreject: int = 0
    rejected_t: list = field(default_factory=list)


def _normalised_error(space, method, out, y, tol, rtol, atol):
    err = out.err
    if np.ndim(err) == 0:       # manifold distance (CF)
        d = float(err)
        return d / tol if tol is not None else d / (atol + rtol)
    err = np.asarray(err)
    if tol is not None:
        return float(np.linalg.norm(err)) / tol
    w = atol + rtol * np.asarray(space.scale(y))
    return float(np.sqrt(np.mean((err / w) ** 2)))


def solve_adaptive(space, f, y0, t_span, method, tol=None, rtol=None, atol=None, h0=None,
                   theta=0.9, fac_max=10.0, h_min=1e-14, max_steps=1_000_000, callback=None):
    """Integrate y' = f(t, y) . y on ``space`` over ``t_span`` with an embedded pair.

    ``method`` has ``step(space, f, t, y, h, embedded=True, f0=None)``, ``order`` and
    ``order_hat``.  Give either ``tol`` (paper) or ``rtol``/``atol``.  ``callback(t, y)`` is
    called after every accepted step (if it returns True the integration stops).
    """
    if not getattr(method, "embedded", False):
        raise InputError(f"method {getattr(method, 'name', method)!r} has no embedded pair")
    if tol is None:
        rtol = 1e-6 if rtol is None else float(rtol)
        atol = 1e-9 if atol is None else float(atol)
        if rtol <= 0 and atol <= 0:
            raise InputError("rtol and atol cannot both be zero")
    elif tol <= 0:
        raise InputError("tol must be positive")
    t0, t1 = float(t_span[0]), float(t_span[1])
    direction = 1.0 if t1 >= t0 else -1.0
    ctrl = StepSizeController(method.order, method.order_hat, theta, fac_max)
    y = np.array(y0, dtype=float)
    t = t0
    nfev = 0
    f0 = None
    if h0 is None:
        f0 = f(t, y)
        nfev += 1
        tol_eff = tol if tol is not None else (atol + rtol)
        rate = max(float(np.linalg.norm(f0)), 1e-12)
        h0 = min(abs(t1 - t0), 0.1 * tol_eff ** (1.0 / (1 + method.order_hat)) / rate * 10.0)
        h0 = max(h0, 1e-6 * abs(t1 - t0))
    h = abs(float(h0))
    ts, ys, hs, es = [t], [y.copy()], [], []
    naccept = nreject = 0
    rejected_t = []
    while direction * (t1 - t) > 1e-13 * max(1.0, abs(t1)):
        if naccept + nreject >= max_steps:
            raise RuntimeError(f"solve_adaptive: more than {max_steps} steps")
        last = h >= abs(t1 - t)
        h_try = abs(t1 - t) if last else h
        out = method.step(space, f, t, y, direction * h_try, embedded=True, f0=f0)
        nfev += out.nfev
        e = _normalised_error(space, method, out, y, tol, rtol, atol)
        h_new = ctrl.propose(h_try, e)
        if e < 1.0:
            t = t1 if last else t + direction * h_try
            y = out.y
            ts.append(t)
            ys.append(y.copy())
            hs.append(h_try)
            es.append(e)
            naccept += 1
            f0 = out.f_end if getattr(method, "fsal", False) else None
            # after a shortened last step keep the controller's proposal from the full step
            h = h_new if not last else max(h, h_new)
            if callback is not None and callback(t, y):
                break
        else:
            nreject += 1
            rejected_t.append(t)
            h = h_new      # f0 (f at the unchanged y_n, if known) stays valid
        if h < h_min:
            raise RuntimeError(f"solve_adaptive: step size {h:.3g} below h_min at t = {t:.6g}")
    return AdaptiveResult(np.array(ts), np.array(ys), np.array(hs), np.array(es), nfev, naccept,
                          nreject, rejected_t)
