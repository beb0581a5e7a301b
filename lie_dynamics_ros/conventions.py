"""The single boundary between the public 6-vector order and the kernels' order.

Public API and ``ldr.lie`` (ROS Twist/Wrench, Pinocchio): twists (linear, angular), wrenches
(force, torque). The compiled kernels keep Kim's (2012) order internally: (angular, linear)
and (moment, force), so their code reads like his equations. Every kernel buffer that
reaches Python API code is converted here, and nowhere else. See docs/conventions.md.
"""
import numpy as np

#: index permutation between the two orders (it is its own inverse)
_SWAP6 = np.array([3, 4, 5, 0, 1, 2])
#: the same permutation for a compiled read that writes public rows itself (read-only):
#: public row r = kernel row PUBLIC_ROWS[r]
PUBLIC_ROWS = np.array(_SWAP6, dtype=np.int64)
PUBLIC_ROWS.flags.writeable = False


def to_internal(x, axis=-1):
    """Public (linear, angular) -> kernel (angular, linear) along ``axis`` (6 long)."""
    return np.take(np.asarray(x), _SWAP6, axis=axis)


def to_public(x, axis=-1):
    """Kernel (angular, linear) -> public (linear, angular) along ``axis`` (6 long)."""
    return np.take(np.asarray(x), _SWAP6, axis=axis)


def rows_to_public(J):
    """Reorder the 6 rows of a (..., 6, n) kernel matrix (a Jacobian) to the public order."""
    return to_public(J, axis=-2)


def rows_to_internal(J):
    """Reorder the 6 rows of a (..., 6, n) public matrix (a motion subspace) to the kernels'."""
    return to_internal(J, axis=-2)


def matrix_to_internal(A):
    """A 6x6 operator on 6-vectors (Ad, an inertia; stacks too) from public to kernel order:
    P A P with P the permutation, both sides."""
    return to_internal(to_internal(A, axis=-1), axis=-2)


def matrix_to_public(A):
    """A 6x6 operator (stacks too) from kernel to public order (inverse of matrix_to_internal)."""
    return to_public(to_public(A, axis=-1), axis=-2)
