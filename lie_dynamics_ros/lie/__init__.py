"""Lie-group primitives in Kim's (2012) angular-first order: ``so3`` and ``se3``."""
from . import se3, so3

__all__ = ["so3", "se3"]
