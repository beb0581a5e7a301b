"""Lie-group primitives in the seeds' angular-first order: ``so3`` and ``se3``."""
from . import se3, so3

__all__ = ["so3", "se3"]
