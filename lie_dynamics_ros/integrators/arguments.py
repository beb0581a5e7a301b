"""The scalar and array arguments of ``simulate`` and ``rollout``, checked before any work:
a string, a list where a number belongs, NaN or a non-positive step is an ``InputError``
naming the argument, never a TypeError or a bare ValueError from deep inside."""
import numpy as np

from ..errors import InputError


def number(x, name, positive=False, allow_none=False):
    """``x`` as a finite float (> 0 with ``positive``); None passes with ``allow_none``."""
    if x is None and allow_none:
        return None
    try:
        if isinstance(x, (str, bytes)) or np.ndim(x) != 0:
            raise TypeError
        value = float(x)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, got {x!r}") from None
    if not np.isfinite(value) or (positive and not value > 0.0):
        raise InputError(f"{name} must be {'positive and ' if positive else ''}finite, got "
                         f"{value!r}")
    return value


def numbers(x, name):
    """``x`` as a float array (None and callables pass unchanged), or InputError."""
    if x is None or callable(x):
        return x
    try:
        if isinstance(x, (str, bytes)):
            raise TypeError
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be an array of numbers or a callable, got "
                         f"{type(x).__name__}") from None


def count(x, name):
    """``x`` as a positive int, or InputError."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)) or x < 1:
        raise InputError(f"{name} must be a positive integer, got {x!r}")
    return int(x)


def check_run(q0, v0, duration, dt, t0, max_steps, tau, a_prescribed, callback=None,
              rtol=None, atol=None):
    """The checked arguments of a run: (q0, v0, duration, dt, t0, max_steps, tau,
    a_prescribed); shapes are the caller's to check."""
    if callback is not None and not callable(callback):
        raise InputError(f"callback must be callable (t, q, v), got {type(callback).__name__}")
    number(rtol, "rtol", positive=True, allow_none=True)
    number(atol, "atol", positive=True, allow_none=True)
    return (numbers(q0, "q0"), numbers(v0, "v0"), number(duration, "duration", positive=True),
            number(dt, "dt", positive=True, allow_none=True), number(t0, "t0"),
            count(max_steps, "max_steps"), numbers(tau, "tau"),
            numbers(a_prescribed, "a_prescribed"))
