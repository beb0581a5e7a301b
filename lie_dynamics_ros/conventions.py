"""The single boundary between the public 6-vector order and Kim's (2012) order.

Public API (ROS Twist/Wrench, Pinocchio): (linear, angular) and (force, torque).
Kernels and ``ldr.lie`` (Kim, Park, Ploen): (angular, linear) and (moment, force).
See docs/conventions.md.
"""
import numpy as np

#: index permutation that maps one 6-vector order to the other (it is its own inverse)
SWAP6 = np.array([3, 4, 5, 0, 1, 2])


def to_internal(x):
    """(linear, angular) -> (angular, linear), along the last axis of ``x``."""
    return np.asarray(x)[..., SWAP6]


def to_public(x):
    """(angular, linear) -> (linear, angular), along the last axis."""
    return np.asarray(x)[..., SWAP6]


def rows_to_public(J):
    """Reorder the 6 rows of a (6, n) matrix from Kim's (2012) order to the public order."""
    return np.asarray(J)[SWAP6, :]
