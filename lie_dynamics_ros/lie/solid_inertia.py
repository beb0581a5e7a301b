"""Spatial inertias of homogeneous solids, about their centre (the frame origin), as 6x6
matrices on (linear, angular) twists like ``se3.spatial_inertia`` (Pinocchio's
``Inertia.FromSphere``/``FromCylinder``/``FromBox``). ``I[3:, 3:]`` is the 3x3 rotational
inertia that ``ModelBuilder.add_link(inertia=...)`` takes; ``se3.inertia_to_parameters(I)``
gives the 10 parameters of ``ldr.inertial_parameters``.
"""
import math

import numpy as np

from . import se3
from ..errors import InputError


def _nonnegative(x, name):
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, got {x!r}") from None
    if not (math.isfinite(x) and x >= 0.0):
        raise InputError(f"{name} must be finite and >= 0, got {x!r}")
    return x


def sphere_inertia(mass, radius):
    """Solid sphere: 2/5 m r^2 about every axis."""
    m, r = _nonnegative(mass, "mass"), _nonnegative(radius, "radius")
    return se3.spatial_inertia(m, np.zeros(3), np.eye(3) * (0.4 * m * r * r))


def cylinder_inertia(mass, radius, length):
    """Solid cylinder of axis z: m r^2 / 2 about z, m (3 r^2 + l^2) / 12 about x and y."""
    m, r = _nonnegative(mass, "mass"), _nonnegative(radius, "radius")
    h = _nonnegative(length, "length")
    side = m * (3.0 * r * r + h * h) / 12.0
    return se3.spatial_inertia(m, np.zeros(3), np.diag([side, side, 0.5 * m * r * r]))


def box_inertia(mass, x, y, z):
    """Solid box of side lengths x, y, z along the axes: m (y^2 + z^2) / 12 about x, etc."""
    m = _nonnegative(mass, "mass")
    x, y, z = (_nonnegative(s, n) for s, n in ((x, "x"), (y, "y"), (z, "z")))
    k = m / 12.0
    return se3.spatial_inertia(m, np.zeros(3), np.diag([k * (y * y + z * z), k * (x * x + z * z),
                                                        k * (x * x + y * y)]))
