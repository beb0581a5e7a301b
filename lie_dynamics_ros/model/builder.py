"""Build a multibody model from links and joints (URDF or code).

Fixed joints are merged: a link rigidly attached to a moving body adds its inertia to that body
(Kim eq. 21) and stays reachable as a frame. Mimic joints become kernel joints that read their
master's coordinate.
"""
import warnings
from dataclasses import dataclass, field

import numpy as np

from . import joint_types as JT
from .bounds import (MAX_DAMPING, MAX_FRICTION, MAX_INERTIA, MAX_LENGTH, MAX_MASS, MAX_MIMIC,
                     check_range)
from .model import Model, JointInfo
from ..errors import URDFError
from ..conventions import matrix_to_internal
from ..lie import se3


@dataclass
class _Joint:
    name: str
    joint: object
    parent: str            # parent link name, or None for the universe
    child: str
    origin: np.ndarray     # pose of the joint frame in the parent link frame
    mimic: tuple = None    # (master joint name, multiplier, offset)
    lower: float = -np.inf
    upper: float = np.inf
    effort: float = np.inf
    velocity: float = np.inf
    damping: float = 0.0   # viscous, N m s/rad (N s/m)
    friction: float = 0.0  # Coulomb, N m (N)


@dataclass
class ModelBuilder:
    """Add links and joints, then ``build()`` an immutable Model.

    >>> b = ModelBuilder("pendulum")
    >>> b.add_link("base")
    >>> b.add_link("bob", mass=1.0, com=(0, 0, -1))
    >>> b.add_joint("hinge", Revolute((0, 1, 0)), "base", "bob")
    >>> model = b.build()
    """
    name: str = "robot"
    strict_inertia: bool = True     # False: a negative principal moment only warns
    links: dict = field(default_factory=dict)
    #: stacklevel of inertia warnings: 3 points at the caller of add_link (load_urdf sets 5)
    warn_stacklevel: int = field(default=3, repr=False)
    joints: list = field(default_factory=list)

    def add_link(self, name, mass=0.0, com=(0.0, 0.0, 0.0), inertia=None, com_rotation=None):
        """A link with ``mass``, ``com`` in the link frame and the 3x3 ``inertia`` about the COM
        (expressed in axes rotated by ``com_rotation`` from the link frame, as URDF's
        inertial/origin rpy). Values beyond the bounds of ``model/bounds.py`` are refused."""
        if not isinstance(name, str) or not name:
            raise URDFError(f"a link name must be a non-empty string, got {name!r}", str(name))
        if name in self.links:
            raise URDFError(f"duplicate link name {name!r}", name)
        what = f"link {name!r}"
        mass = check_range(mass, 0.0, MAX_MASS, f"{what}: mass", name, " kg")
        Ic = _array(np.zeros((3, 3)) if inertia is None else inertia, (3, 3), f"{what}: inertia",
                    name)
        com = _array(com, (3,), f"{what}: center of mass", name)
        R = np.eye(3) if com_rotation is None else \
            _rotation(com_rotation, f"{what}: inertial rotation", name)
        if np.abs(Ic).max() > MAX_INERTIA:
            raise URDFError(f"{what}: inertia entry {np.abs(Ic).max():g} kg m^2 is beyond the sane "
                            f"bound {MAX_INERTIA:g} kg m^2", name)
        if np.abs(com).max() > MAX_LENGTH:
            raise URDFError(f"{what}: center of mass {com.tolist()} is beyond the sane bound "
                            f"{MAX_LENGTH:g} m", name)
        _check_inertia(name, Ic, self.strict_inertia, self.warn_stacklevel)
        self.links[name] = se3.spatial_inertia(mass, com, Ic, R)

    def add_joint(self, name, joint, parent, child, origin=None, mimic=None, lower=-np.inf,
                  upper=np.inf, effort=np.inf, velocity=np.inf, damping=0.0, friction=0.0):
        """Connect ``child`` to ``parent`` (None = the world). ``origin`` is a 4x4 pose of the
        joint frame in the parent link frame; ``mimic`` = (master, multiplier, offset).
        ``lower``/``upper`` may be infinite (no limit), never NaN; ``effort``/``velocity`` >= 0
        (inf = no limit). ``damping`` (viscous, N m s/rad) and ``friction`` (Coulomb, N m) are
        the URDF's ``<dynamics>``: >= 0, per degree of freedom of the joint."""
        if not isinstance(name, str) or not name:
            raise URDFError(f"a joint name must be a non-empty string, got {name!r}", str(name))
        what = f"joint {name!r}"
        T = _array(np.eye(4) if origin is None else origin, (4, 4), f"{what}: origin", name)
        _rotation(T[:3, :3], f"{what}: origin", name)
        if np.any(T[3] != (0.0, 0.0, 0.0, 1.0)):
            raise URDFError(f"{what}: origin's last row must be (0, 0, 0, 1)", name)
        if np.abs(T[:3, 3]).max() > MAX_LENGTH:
            raise URDFError(f"{what}: origin {T[:3, 3].tolist()} is beyond the sane bound "
                            f"{MAX_LENGTH:g} m", name)
        if isinstance(joint, JT.General):
            if joint.T is None or joint.S is None:
                raise URDFError(f"{what}: a General joint needs T and S callables", name)
            if not isinstance(joint.nq, (int, np.integer)) or joint.nq < 1:
                raise URDFError(f"{what}: a General joint needs nq >= 1, got {joint.nq!r}", name)
        elif not isinstance(joint, (JT.Fixed, JT.Revolute, JT.Prismatic, JT.Free, JT.Spherical,
                                    JT.Planar, JT.Universal)):
            raise URDFError(f"{what}: {joint!r} is not a joint type of ldr", name)
        else:
            JT.joint_axes(joint, name)      # validates the axis early
        if not isinstance(parent, (str, type(None))) or not isinstance(child, str):
            raise URDFError(f"{what}: parent and child must be link names", name)
        lim = [_limit(x, f"{what}: {nm} limit", name)
               for nm, x in (("lower", lower), ("upper", upper), ("effort", effort),
                             ("velocity", velocity))]
        if lim[0] > lim[1]:
            raise URDFError(f"{what}: lower limit {lim[0]:g} is above upper limit {lim[1]:g}",
                            name)
        for nm, x in (("effort", lim[2]), ("velocity", lim[3])):
            if x < 0:
                raise URDFError(f"{what}: {nm} limit must be >= 0, got {x:g}", name)
        if mimic is not None:
            if not isinstance(joint, (JT.Revolute, JT.Prismatic)):
                raise URDFError(f"{what}: only revolute and prismatic joints can mimic", name)
            mimic = _mimic(mimic, what, name)
        damping = check_range(damping, 0.0, MAX_DAMPING, f"{what}: damping", name, " N m s/rad")
        friction = check_range(friction, 0.0, MAX_FRICTION, f"{what}: friction", name, " N m")
        self.joints.append(_Joint(name, joint, parent, child, T, mimic, *lim, damping, friction))

    def build(self):
        if not self.links:
            raise URDFError(f"robot {self.name!r} has no links")
        names = [j.name for j in self.joints]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise URDFError(f"duplicate joint name {sorted(dup)[0]!r}", sorted(dup)[0])
        by_child = {}
        children = {ln: [] for ln in self.links}
        for j in self.joints:
            if j.child not in self.links:
                raise URDFError(f"joint {j.name!r}: child link {j.child!r} does not exist", j.name)
            if j.parent is not None and j.parent not in self.links:
                raise URDFError(f"joint {j.name!r}: parent link {j.parent!r} does not exist", j.name)
            if j.child in by_child:
                raise URDFError(f"link {j.child!r} is the child of two joints "
                                f"({by_child[j.child].name!r} and {j.name!r})", j.child)
            by_child[j.child] = j
            if j.parent is not None:
                children[j.parent].append(j)
        roots = [ln for ln in self.links if ln not in by_child or by_child[ln].parent is None]
        if not roots:                           # every link has a parent: follow them to a loop
            ln, path = next(iter(self.links)), []
            while ln not in path:
                path.append(ln)
                ln = by_child[ln].parent
            loop = path[path.index(ln):]
            raise URDFError(f"the joints form a cycle through links {loop} (joint "
                            f"{by_child[ln].name!r}); a URDF must be a tree", by_child[ln].name)
        if len(roots) != 1:
            raise URDFError(f"robot {self.name!r} must have exactly one root link, found "
                            f"{sorted(roots)}", sorted(roots)[0])
        root = roots[0]
        # depth-first order, children in declaration order (Pinocchio sorts siblings by name)
        order, stack, seen = [], [root], set()
        while stack:
            ln = stack.pop()
            seen.add(ln)
            order.append(ln)
            stack.extend(j.child for j in reversed(children[ln]))
        missing = [ln for ln in self.links if ln not in seen]
        if missing:
            j = by_child[missing[0]]
            raise URDFError(f"joint {j.name!r} closes a kinematic loop (link {missing[0]!r} is "
                            "not reachable from the root)", j.name)
        return _assemble(self, root, order, by_child)


def _array(x, shape, what, name):
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise URDFError(f"{what} must be numbers of shape {shape}, got {x!r}", name) from None
    if a.shape != shape or not np.isfinite(a).all():
        raise URDFError(f"{what} must be finite numbers of shape {shape}, got {a.tolist()}", name)
    return a


def _rotation(R, what, name):
    """A proper rotation to 1e-6: a scaled or sheared matrix would silently scale the dynamics."""
    R = _array(R, (3, 3), what, name)
    E = R.T @ R
    E[0, 0] -= 1.0
    E[1, 1] -= 1.0
    E[2, 2] -= 1.0
    if np.abs(E).max() > 1e-6 or np.linalg.det(R) < 0:
        raise URDFError(f"{what}: the rotation is not orthonormal with det +1 (tolerance 1e-6)",
                        name)
    return R


def _limit(x, what, name):
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise URDFError(f"{what} must be a number, got {x!r}", name) from None
    if np.isnan(x):
        raise URDFError(f"{what} is NaN", name)
    return x


def _mimic(mimic, what, name):
    try:
        master, mult, off = mimic
    except (TypeError, ValueError):
        raise URDFError(f"{what}: mimic must be (master, multiplier, offset), got {mimic!r}",
                        name) from None
    if not isinstance(master, str) or not master:
        raise URDFError(f"{what}: mimic master must be a joint name, got {master!r}", name)
    return (master, check_range(mult, -MAX_MIMIC, MAX_MIMIC, f"{what}: mimic multiplier", name),
            check_range(off, -MAX_MIMIC, MAX_MIMIC, f"{what}: mimic offset", name))


def _check_inertia(name, Ic, strict, stacklevel):
    if np.abs(Ic - Ic.T).max() > 1e-8 + 1e-5 * np.abs(Ic).max():     # np.allclose's tolerance
        raise URDFError(f"link {name!r}: inertia must be a symmetric 3x3 matrix", name)
    ev = np.linalg.eigvalsh(Ic)
    # rounding in published files leaves tiny negative moments (TIAGo: -3.5e-8 kg m^2)
    tol = max(1e-7, 1e-9 * abs(ev).max())
    if ev[0] < -tol:
        msg = f"link {name!r}: inertia is not positive semi-definite (eigenvalues {ev})"
        if strict:
            raise URDFError(msg + "; load_urdf(..., inertia_check='warn') accepts it", name)
        warnings.warn(msg, stacklevel=stacklevel)
    elif ev[0] + ev[1] < ev[2] - 1e-6 * max(1e-12, ev[2]) - tol:
        # physically impossible, yet common in published URDFs: warn, do not refuse
        warnings.warn(f"link {name!r}: principal moments {ev} violate the triangle inequality",
                      stacklevel=stacklevel)


def _assemble(b, root, order, by_child):
    # each link -> (body row, pose of the link in the body frame); row 0 = universe
    body_of = {}
    rows = []                                  # kernel joints, topological order
    for ln in order:
        j = by_child.get(ln)
        if j is None:                          # the root link, welded to the world
            body_of[ln] = (0, np.eye(4))
            continue
        pb, pT = body_of[j.parent] if j.parent is not None else (0, np.eye(4))
        if isinstance(j.joint, JT.Fixed):      # merged: a frame on its parent's body
            body_of[ln] = (pb, pT @ j.origin)
        else:
            rows.append((j, pb, pT @ j.origin))
            body_of[ln] = (len(rows), np.eye(4))
    nj = len(rows)
    inertia = np.zeros((nj + 1, 6, 6))
    for ln, (bi, T) in body_of.items():
        inertia[bi] += se3.transform_inertia(se3.inv(T), b.links[ln])
    # q/v indices: non-mimic joints in order, then mimic joints read their master's
    index, qn, vn = {}, 0, 0                   # name -> (q index, v index, nq, nv, mimic)
    by_name = {j.name: j for j in b.joints}
    for j, pb, T in rows:
        if j.mimic is None:
            nq, nv = JT.dims(j.joint)
            index[j.name] = (qn, vn, nq, nv, None)
            qn, vn = qn + nq, vn + nv
    for j, pb, T in rows:
        if j.mimic is not None:
            master, mult, off = j.mimic
            chain = [j.name]
            while True:                         # resolve mimic chains to a real master
                mj = by_name.get(master)
                if mj is None:
                    raise URDFError(f"joint {j.name!r} mimics unknown joint {master!r}", j.name)
                if mj.mimic is None:
                    break
                if mj.name in chain:
                    raise URDFError(f"joint {j.name!r}: mimic cycle {chain + [mj.name]}", j.name)
                chain.append(mj.name)
                master, mult, off = mj.mimic[0], mult * mj.mimic[1], mult * mj.mimic[2] + off
                if max(abs(mult), abs(off)) > MAX_MIMIC:
                    raise URDFError(f"joint {j.name!r}: the mimic chain {chain + [master]} has "
                                    f"multiplier {mult:g} and offset {off:g}, beyond the sane "
                                    f"bound {MAX_MIMIC:g}", j.name)
            m = index.get(master)
            if m is None or m[3] != 1:
                raise URDFError(f"joint {j.name!r} mimics {master!r}, which is not a moving "
                                "1-DOF joint", j.name)
            index[j.name] = (m[0], m[1], 1, 1, (master, float(mult), float(off)))
    kernel_joints = []
    for r, (j, pb, T) in enumerate(rows, start=1):
        qi, vi, nq, nv, mimic = index[j.name]
        origin = np.array(T, dtype=float)
        origin.flags.writeable = False
        kernel_joints.append(JointInfo(j.name, r, j.joint, qi, vi, nq, nv, mimic=mimic,
                                       parent_row=pb, origin=origin,
                                       limits=(j.lower, j.upper, j.effort, j.velocity),
                                       dynamics=(j.damping, j.friction),
                                       child_link=j.child))
    frames = {ln: (bi, T) for ln, (bi, T) in body_of.items()}
    fixed = {j.name: ln for ln, j in by_child.items() if isinstance(j.joint, JT.Fixed)}
    return Model(b.name, kernel_joints, matrix_to_internal(inertia), frames, qn, vn,
                 total_mass=float(sum(I[0, 0] for I in b.links.values())), fixed_joints=fixed)
