"""Per-key rate limit for repeated reports (log lines about dropped messages)."""
import time


class Throttle:
    """``ready(key)`` is True at most once per ``period_s`` for each key.

    ``suppressed(key)`` says how many calls were swallowed since the last True, so a log line
    can say "(12 more since last report)". The clock is monotonic wall time by default.
    """

    def __init__(self, period_s: float = 2.0, clock=time.monotonic):
        self.period_s = float(period_s)
        self.clock = clock
        self._last = {}
        self._count = {}

    def ready(self, key) -> bool:
        now = self.clock()
        last = self._last.get(key)
        if last is not None and now - last < self.period_s:
            self._count[key] = self._count.get(key, 0) + 1
            return False
        self._last[key] = now
        return True

    def suppressed(self, key) -> int:
        return self._count.pop(key, 0)
