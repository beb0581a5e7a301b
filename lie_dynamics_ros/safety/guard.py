"""TorqueGuard: the last stage before a torque command leaves a node.

Semantics (docs/safety.md):

- **Timeout.** When no valid joint state has arrived for ``state_timeout`` seconds (node
  clock, receive time), ``poll`` returns the fallback command, then repeats the same command
  every ``repeat_period`` until a valid state returns. The timeout starts with the first
  valid state: before it nothing has been commanded and there is nothing to fall back from.
  ``state_timeout = 0`` disables it.
- **Fallback.** ``"zero"``: exactly 0.0 on every joint. ``"gravity"``: g(q) at the last valid
  state (``gravity_fn(q)``), computed once when the timeout starts, clamped to the effort
  limits; if it is not finite the fallback is zero.
- **Slew limiter.** With ``max_torque_rate = r > 0``, consecutive commands differ per joint by
  at most ``r * dt``, dt the difference of the header stamps of the states they answer (the
  receive times when unstamped). The first command after start is not limited; a held pose
  still reaches its exact torques, a few steps later.
- **Clamping.** ``clip(tau, -e, e)`` element-wise, after the slew limiter (so the limits
  always hold), every clamped element counted.
- **What bypasses the slew limiter.** The fallback and the final zero are published as they
  are: when states are lost or the node stops, reaching zero (or g(q)) at once matters more
  than smoothness. The first command after a fallback is limited relative to the fallback,
  with dt from the last answered state, so it may step by ``r * (gap)``.
- **Never a non-finite element.** A non-finite tau is refused (``command`` returns None and
  counts it); nothing is published for it.
"""
import math
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from ..errors import InputError

FALLBACKS = ("zero", "gravity")

OK, WARN, ERROR = 0, 1, 2          # diagnostic_msgs/DiagnosticStatus levels


@dataclass(frozen=True)
class GuardConfig:
    """The guard's parameters (the same ROS parameters in every commanding node)."""
    state_timeout: float = 0.1      # s; 0 = no timeout
    fallback: str = "zero"          # "zero" | "gravity"
    max_torque_rate: float = 0.0    # N m/s per joint; 0 = off
    clamp_efforts: bool = True
    repeat_period: float = 0.1      # s between repeats of the fallback

    def check(self) -> Optional[str]:
        """None, or why this configuration is invalid."""
        for name in ("state_timeout", "max_torque_rate", "repeat_period"):
            x = getattr(self, name)
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
                return "%s must be a finite number, got %r" % (name, x)
            if x < 0:
                return "%s must be >= 0, got %r" % (name, x)
        if self.repeat_period <= 0:
            return "repeat_period must be > 0"
        if self.fallback not in FALLBACKS:
            return "fallback must be one of %s, got %r" % ("|".join(FALLBACKS), self.fallback)
        return None


class TorqueGuard:
    """Gatekeeper of the torque commands of one model (n joints).

    Args:
        effort_limits: (n,) limits, inf (or <= 0, read as inf) = none.
        gravity_fn: q -> g(q) (n,), used by the ``"gravity"`` fallback.
        config: GuardConfig (InputError if invalid).
    """

    def __init__(self, effort_limits, gravity_fn: Optional[Callable] = None,
                 config: GuardConfig = GuardConfig()):
        lim = np.asarray(effort_limits, dtype=float).reshape(-1).copy()
        lim[~(lim > 0)] = math.inf
        self.limits = lim
        self.n = lim.size
        self.gravity_fn = gravity_fn
        self.config = config
        reason = config.check()
        if reason:
            raise InputError(reason)
        self.counts = dict(commands=0, clamped_elements=0, clamped_commands=0,
                           rate_limited_commands=0, timeouts=0, fallbacks=0,
                           refused_nonfinite=0, fallback_errors=0)
        self.last = None                 # last published command (n,)
        self._last_ref_ns = None         # stamp (or receive time) of the state it answered
        self._last_valid_ns = None       # node clock of the last valid state
        self._last_q = None
        self.in_timeout = False
        self._fallback = None
        self._fallback_sent_ns = None
        self._reported = dict(self.counts)

    # -- configuration ----------------------------------------------------------------------
    def configure(self, config: GuardConfig) -> None:
        """New parameters; the state (last command, timeout) is kept. InputError if invalid.
        A fallback already in progress keeps its value until valid states return."""
        reason = config.check()
        if reason:
            raise InputError(reason)
        self.config = config

    def continue_from(self, previous: "TorqueGuard") -> "TorqueGuard":
        """Carry the state of ``previous`` (last command, timeout, counters) over to this
        guard of the same robot with new limits, gravity or configuration; returns self."""
        if previous.n == self.n:
            for k in ("last", "_last_ref_ns", "_last_valid_ns", "_last_q", "in_timeout",
                      "_fallback", "_fallback_sent_ns", "_reported"):
                setattr(self, k, getattr(previous, k))
            self.counts = dict(previous.counts)
        return self

    # -- commands ---------------------------------------------------------------------------
    def command(self, tau, stamp_ns: int, q, now_ns: int) -> Optional[np.ndarray]:
        """The command answering a valid state (q, its header stamp) received at ``now_ns``,
        or None if ``tau`` is not finite (then nothing may be published)."""
        tau = np.asarray(tau, dtype=float)
        if tau.shape != (self.n,) or not np.all(np.isfinite(tau)):
            self.counts["refused_nonfinite"] += 1
            return None
        ref_ns = int(stamp_ns) if stamp_ns else int(now_ns)
        cmd = tau.copy()
        r = self.config.max_torque_rate
        if r > 0 and self.last is not None and self._last_ref_ns is not None:
            dt = max(0.0, (ref_ns - self._last_ref_ns) * 1e-9)
            step = r * dt
            limited = np.clip(cmd, self.last - step, self.last + step)
            if np.any(limited != cmd):
                self.counts["rate_limited_commands"] += 1
            cmd = limited
        if self.config.clamp_efforts:
            clipped = np.clip(cmd, -self.limits, self.limits)
            k = int(np.count_nonzero(clipped != cmd))
            if k:
                self.counts["clamped_elements"] += k
                self.counts["clamped_commands"] += 1
            cmd = clipped
        self.counts["commands"] += 1
        self.last = cmd
        self._last_ref_ns = ref_ns
        self._last_valid_ns = int(now_ns)
        self._last_q = None if q is None else np.array(q, dtype=float)
        self.in_timeout = False
        self._fallback = None
        return cmd.copy()

    def clamped_mask(self, tau) -> np.ndarray:
        """Which elements of ``tau`` the clamp would change (for naming joints in a log)."""
        return np.abs(np.asarray(tau, dtype=float)) > self.limits

    def poll(self, now_ns: int) -> Optional[np.ndarray]:
        """Call periodically: the fallback command when one is due, else None."""
        T = self.config.state_timeout
        if T <= 0 or self._last_valid_ns is None:
            return None
        now_ns = int(now_ns)
        if not self.in_timeout:
            if now_ns - self._last_valid_ns < T * 1e9:
                return None
            self.in_timeout = True
            self.counts["timeouts"] += 1
            self._fallback = self._compute_fallback()
        elif now_ns - self._fallback_sent_ns < self.config.repeat_period * 1e9:
            return None
        self._fallback_sent_ns = now_ns
        self.counts["fallbacks"] += 1
        self.last = self._fallback
        return self._fallback.copy()

    def _compute_fallback(self) -> np.ndarray:
        zero = np.zeros(self.n)
        if self.config.fallback != "gravity" or self.gravity_fn is None or self._last_q is None:
            return zero
        try:
            g = np.asarray(self.gravity_fn(self._last_q), dtype=float).reshape(-1)
        except Exception:  # a fallback must never raise: zero is always safe to send
            g = None
        if g is None or g.shape != (self.n,) or not np.all(np.isfinite(g)):
            self.counts["fallback_errors"] += 1
            return zero
        if self.config.clamp_efforts:
            g = np.clip(g, -self.limits, self.limits)
        return g

    def final(self) -> np.ndarray:
        """The last command of a stopping node: all zero (not slew-limited)."""
        self.last = np.zeros(self.n)
        return self.last.copy()

    # -- diagnostics ------------------------------------------------------------------------
    def status(self, dropped: int = 0):
        """(level, message, counts) for a diagnostics report.

        ERROR while the fallback is active; WARN when clamping, slew limiting, refusals or
        dropped messages (the node's count) happened since the previous call; else OK.
        """
        counts = dict(self.counts, dropped=int(dropped))
        if self.in_timeout:
            level, msg = ERROR, "no valid joint states: %s fallback active" % \
                self.config.fallback
        else:
            news = [k for k in ("clamped_commands", "rate_limited_commands",
                                "refused_nonfinite", "dropped", "timeouts")
                    if counts[k] > self._reported.get(k, 0)]
            if news:
                level, msg = WARN, "since last report: " + ", ".join(
                    "%s +%d" % (k, counts[k] - self._reported.get(k, 0)) for k in news)
            elif self._last_valid_ns is None:
                level, msg = OK, "waiting for joint states"
            else:
                level, msg = OK, "commanding"
        self._reported = counts
        return level, msg, counts
