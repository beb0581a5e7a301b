"""Lie-group primitives ``so3`` and ``se3`` (the public SE(3) algebra, docs/api.md), and
``solid_inertia``; 6-vectors in the public order (linear, angular), wrenches (force, torque)
(docs/conventions.md)."""
from . import se3, so3

__all__ = ["so3", "se3"]
