"""A model with some joints locked at a reference configuration (Pinocchio's
``buildReducedModel``): each locked joint becomes a fixed joint at its pose in ``q_ref``, so its
child body merges into its parent (Kim 2012, eq. 21, as the builder merges URDF fixed joints).
The rebuild goes through ``ModelBuilder``; every link stays a frame, the kept joints keep their
placements, limits, damping, friction and armature, the model its gravity.
"""
import numpy as np

from ..conventions import matrix_to_public
from ..errors import InputError
from ..lie import se3
from ..model import joint_types as JT
from ..model.builder import ModelBuilder
from .kinematics import forward_kinematics


def _locked_set(model, locked_joints):
    if isinstance(locked_joints, str):
        locked_joints = [locked_joints]
    try:
        names = list(locked_joints)
    except TypeError:
        raise InputError("locked_joints must be a list of joint names, got "
                         f"{locked_joints!r}") from None
    for n in names:
        if n in model.mimic_joints:
            raise InputError(f"joint {n!r} mimics {model.mimic_joints[n][0]!r}: lock that joint "
                             "(its mimic joints are locked with it)")
        if n not in model.joint_names:
            raise InputError(f"locked_joints: unknown joint {n!r}; joints: {model.joint_names}")
    locked = set(names)
    locked |= {m for m, (master, _, _) in model.mimic_joints.items() if master in locked}
    return locked


def _root_link(model):
    """The link at the world's origin on body row 0 (a fixed base), or None (a floating one)."""
    for name, (row, T) in model.frames.items():
        if row == 0 and np.array_equal(T, np.eye(4)):
            return name
    if any(row == 0 for row, _ in model.frames.values()):
        raise InputError("the model has links on the world body but none at the world origin")
    return None


def reduced_model(model, locked_joints, q_ref):
    """The model with ``locked_joints`` (names from ``model.joint_names``) fixed at their values
    in ``q_ref`` (the full model's q). Its q and v are the full ones without the locked joints'
    entries, in the same order. Models with loop closures are refused (InputError)."""
    if model.loops:
        raise InputError(f"model {model.name!r} has loop closures "
                         f"({[lp.name for lp in model.loops]}); lock joints of the open tree "
                         "and add the closures to the reduced model with with_loops")
    locked = _locked_set(model, locked_joints)
    poses = forward_kinematics(model, q_ref)              # validates q_ref (shape, finite, unit)
    root = _root_link(model)
    anchor = {0: root, **{j.row: j.child_link for j in model.joints}}
    b = ModelBuilder(model.name)
    for name in model.frames:
        b.add_link(name)
    for j in model.joints:                                # body inertias, public order
        b.links[j.child_link] = np.array(model.inertias[j.row - 1])
    if root is not None:
        b.links[root] = matrix_to_public(model.mI[0])
    taken = set(model.frames) | {j.name for j in model.joints}
    for name, (row, T) in model.frames.items():           # merged links: frames on their body
        if name != anchor[row]:
            jn = name + "_frame"
            while jn in taken:
                jn += "_"
            taken.add(jn)
            b.add_joint(jn, JT.Fixed(), anchor[row], name, origin=np.array(T))
    for j in model.joints:
        parent = anchor[j.parent_row]
        if j.name in locked:
            T_parent = np.eye(4) if parent is None or j.parent_row == 0 else poses[parent]
            b.add_joint(j.name, JT.Fixed(), parent, j.child_link,
                        origin=se3.inv(T_parent) @ poses[j.child_link])
        else:
            lower, upper, effort, velocity = j.limits
            b.add_joint(j.name, j.joint, parent, j.child_link, origin=np.array(j.origin),
                        mimic=j.mimic, lower=lower, upper=upper, effort=effort,
                        velocity=velocity, damping=j.dynamics[0], friction=j.dynamics[1])
    reduced = b.build()
    if np.any(model.armature):
        arm = np.zeros(reduced.nv)
        for name, vi, nv in zip(reduced.joint_names, reduced.joint_v_index, reduced.joint_nv):
            old = model.joint_v_index[model.joint_names.index(name)]
            arm[vi:vi + nv] = model.armature[old:old + nv]
        reduced = reduced.with_joint_dynamics(armature=arm)
    if not np.array_equal(model.gravity, reduced.gravity):
        reduced = reduced.with_gravity(model.gravity)
    return reduced
