"""Joints matched by name: incoming name lists mapped onto a fixed joint order (the model's).

Joints are always matched by name, never by position (ros2_controllers#159, kuka_drivers#254);
names the model does not know are ignored.
"""
from typing import Optional, Sequence

import numpy as np


class JointIndex:
    """Maps the joint names of incoming messages onto a fixed joint order (the model's).

    ``lookup(names)`` returns ``(idx, None)`` with ``idx[k]`` the position in the message of
    ``self.names[k]``, or ``(None, reason)``. Successful lookups are cached by (name list,
    required mask), since a publisher normally sends the same name list every time; the
    cached index arrays are read-only.
    """

    #: distinct (names, required) keys kept; a graph has a handful of publishers
    CACHE_SIZE = 16

    def __init__(self, names: Sequence[str]):
        self.names = [str(n) for n in names]
        if len(set(self.names)) != len(self.names):
            raise ValueError("duplicate joint names in %r" % (self.names,))
        self._known = set(self.names)
        self._cache = {}

    def __len__(self):
        return len(self.names)

    def lookup(self, names: Sequence[str], required: Optional[Sequence[bool]] = None):
        """Indices of ``self.names`` inside ``names``.

        Args:
            names: joint names of a message, any order, extra names allowed.
            required: optional mask over ``self.names``; joints with False may be absent (their
                index is then -1).
        Returns:
            (idx (len(self.names),) int array or None, reason or None)
        """
        names = tuple(names)
        mask = None if required is None else np.asarray(required, dtype=bool)
        key = (names, None if mask is None else mask.tobytes())
        idx = self._cache.get(key)
        if idx is not None:
            return idx, None
        pos = {}
        for i, n in enumerate(names):
            if n in pos:
                return None, "duplicate joint name '%s'" % n
            pos[n] = i
        idx = np.array([pos.get(n, -1) for n in self.names], dtype=np.intp)
        absent = idx < 0
        if mask is not None:
            absent &= mask
        if absent.any():
            missing = [self.names[k] for k in np.flatnonzero(absent)]
            unknown = [n for n in names if n not in self._known]
            reason = "missing joints %s" % missing
            if unknown:
                reason += " (unknown joints %s)" % unknown
            return None, reason
        idx.flags.writeable = False
        if len(self._cache) >= self.CACHE_SIZE:
            self._cache.clear()
        self._cache[key] = idx
        return idx, None


def reorder(values, from_names: Sequence[str], to_names: Sequence[str]) -> np.ndarray:
    """Values given in ``from_names`` order -> ``to_names`` order. ValueError naming the
    joints of ``to_names`` that ``from_names`` lacks."""
    pos = {n: i for i, n in enumerate(from_names)}
    missing = [n for n in to_names if n not in pos]
    if missing:
        raise ValueError("joints %s not among %s" % (missing, list(from_names)))
    return np.asarray(values, dtype=float)[[pos[n] for n in to_names]]
