"""The robot as a tf tree: parent link -> child link transforms of every joint.

``moving_link_transforms(model, q)`` gives one per moving joint (what tf2's /tf carries,
restamped each state); ``static_link_transforms(model)`` one per link the model merged into
a body through fixed joints (tf2's /tf_static). The parent of each is the link of the body it
hangs from; together they name every link of the URDF once as a child, so a viewer given the
robot description finds a pose for every link.
"""
from typing import List, NamedTuple

import numpy as np

from ..lie import se3
from .kinematics import forward_kinematics


class LinkTransform(NamedTuple):
    """Pose (4x4) of link ``child`` in the frame of link ``parent``."""
    parent: str
    child: str
    pose: np.ndarray


def root_link(model) -> str:
    """The link welded to the world (body row 0): the first such frame at the identity;
    "world" when there is none (a floating base)."""
    for name in model.frame_names:
        row, T = model.frame(name)
        if row == 0 and np.array_equal(T, np.eye(4)):
            return name
    return "world"


def _row_links(model) -> List[str]:
    return [root_link(model)] + list(model.body_names)


def moving_joints(model) -> List[str]:
    """Names of the joints that move a body (mimic joints included), in body order."""
    names = list(model.joint_names) + list(model.mimic_joints)
    return sorted(names, key=lambda n: model.joint(n).row)


def moving_link_transforms(model, q, data=None) -> List[LinkTransform]:
    """(parent link, child link, pose) of every moving joint at configuration ``q``, from
    forward kinematics: pose = T_parent^-1 T_child (Kim 2012, eq. 4 for the inverse)."""
    poses = forward_kinematics(model, q, data)
    links = _row_links(model)
    poses.setdefault(links[0], np.eye(4))
    out = []
    for name in moving_joints(model):
        j = model.joint(name)
        parent = links[j.parent_row]
        out.append(LinkTransform(parent, j.child_link,
                                 se3.inv(poses[parent]) @ poses[j.child_link]))
    return out


def static_link_transforms(model) -> List[LinkTransform]:
    """(body link, merged link, pose) of every link that fixed joints merged into a body;
    these poses do not depend on q."""
    links = _row_links(model)
    out = []
    for name in model.frame_names:
        row, T = model.frame(name)
        if name != links[row]:
            out.append(LinkTransform(links[row], name, np.array(T, dtype=float)))
    return out
