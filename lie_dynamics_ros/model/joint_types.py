"""Joint descriptions for the builder API (URDF joints map onto these)."""
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from ..kernels import joints as J
from ..errors import URDFError


def _unit(axis, what):
    try:
        a = np.asarray(axis, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        a = np.full(1, np.nan)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise URDFError(f"joint {what!r}: axis must be 3 finite numbers, got {axis!r}", what)
    s = np.abs(a).max()                  # scaled first: the norm of (1e308, 1e308, 0) overflows
    if s * np.linalg.norm(a / s if s > 0 else a) < 1e-12:
        raise URDFError(f"joint {what!r}: zero joint axis", what)
    a = a / s
    return a / np.linalg.norm(a)


@dataclass(frozen=True)
class Fixed:
    """Rigid attachment: the child link is merged into its parent body."""
    kind: int = 0


@dataclass(frozen=True)
class Revolute:
    axis: tuple = (0.0, 0.0, 1.0)
    kind: int = J.REVOLUTE


@dataclass(frozen=True)
class Prismatic:
    axis: tuple = (1.0, 0.0, 0.0)
    kind: int = J.PRISMATIC


@dataclass(frozen=True)
class Free:
    """SE(3) joint: q = (x, y, z, qx, qy, qz, qw), v = (v_lin, w) in the child frame."""
    kind: int = J.FREE


@dataclass(frozen=True)
class Spherical:
    """Ball joint on SO(3): q = quaternion (x, y, z, w), v = angular velocity in the child frame."""
    kind: int = J.SPHERICAL


@dataclass(frozen=True)
class Planar:
    """Motion in the plane normal to ``normal``: q = (x, y, theta) along (e1, normal x e1)."""
    normal: tuple = (0.0, 0.0, 1.0)
    kind: int = J.PLANAR


@dataclass(frozen=True)
class Universal:
    """T = exp([a1] q1) exp([a2] q2): a1 in the parent's joint frame, a2 in the child frame."""
    axis1: tuple = (1.0, 0.0, 0.0)
    axis2: tuple = (0.0, 1.0, 0.0)
    kind: int = J.UNIVERSAL


@dataclass(frozen=True)
class General:
    """Any joint given by its kinematics (Kim §2: T(q), S(q) = [T^-1 dT/dq_k], Sdot).

    ``T(q) -> 4x4`` pose of the child in the joint origin frame, ``S(q) -> (6, nv)``, and
    ``Sdot(q, v) -> (6, nv)``, rows in the public (linear, angular) order of ``lie.se3``.
    ``nq == nv`` (q integrates as a vector). Evaluated in Python, so slower than the built-in kinds.
    """
    nq: int = 1
    T: Optional[Callable] = None
    S: Optional[Callable] = None
    Sdot: Optional[Callable] = None
    kind: int = J.GENERAL

    @property
    def nv(self):
        return self.nq


def joint_axes(joint, where):
    """(axis, axis2) unit vectors for the kernel's AX/AX2 columns (``where``: the joint name)."""
    z = np.zeros(3)
    if isinstance(joint, (Revolute, Prismatic)):
        return _unit(joint.axis, where), z
    if isinstance(joint, Universal):
        a1, a2 = _unit(joint.axis1, where), _unit(joint.axis2, where)
        # rotating about a2 keeps a parallel a1 parallel: the joint would have one DOF, M a
        # zero eigenvalue at every q
        if np.linalg.norm(np.cross(a1, a2)) < 1e-6:
            raise URDFError(f"joint {where!r}: the axes of a universal joint must not be parallel",
                            where)
        return a1, a2
    if isinstance(joint, Planar):
        n = _unit(joint.normal, where)
        # in-plane e1: the unit vector closest to x that is normal to n
        e1 = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        e1 = e1 - n * (n @ e1)
        return n, e1 / np.linalg.norm(e1)
    return z, z


def dims(joint):
    if isinstance(joint, General):
        return joint.nq, joint.nv
    if isinstance(joint, Fixed):
        return 0, 0
    return J.NQ[joint.kind], J.NV[joint.kind]
