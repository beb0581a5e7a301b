"""Header stamps that go backwards: rejected, until a restarted source is recognised."""
from typing import Optional


class StampMonitor:
    """Rejects stamps (integer nanoseconds) that go backwards.

    ``check(ns)`` returns a reason string or None; ``accept(ns)`` records an accepted stamp.
    Unstamped messages (stamp 0) are never rejected. When a source restarts (e.g. a simulator
    whose time starts again at 0), stamps go backwards for good; after ``reset_after``
    consecutive backward stamps the monitor takes the new time base (``check`` then returns
    None and ``reset_happened`` is set until read).
    """

    def __init__(self, reset_after: int = 50):
        self.last_ns: Optional[int] = None
        self.reset_after = int(reset_after)
        self._backwards = 0
        self.reset_happened = False

    def check(self, ns: int) -> Optional[str]:
        if ns == 0 or self.last_ns is None or ns >= self.last_ns:
            self._backwards = 0
            return None
        self._backwards += 1
        if self.reset_after > 0 and self._backwards >= self.reset_after:
            self._backwards = 0
            self.reset_happened = True
            self.last_ns = None
            return None
        return "stamp goes backwards (%.9f s < last accepted %.9f s)" % (
            ns * 1e-9, self.last_ns * 1e-9)

    def accept(self, ns: int) -> None:
        if ns != 0:
            self.last_ns = ns

    def reset(self) -> None:
        self.last_ns = None
        self._backwards = 0
