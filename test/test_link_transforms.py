"""Parent link -> child link transforms (the robot's tf tree) against Pinocchio's frame
placements: T_parent^-1 T_child from pin.updateFramePlacements, at random configurations."""
import glob
import os
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms.link_transforms import (moving_link_transforms, root_link,
                                                         static_link_transforms)
from models import zoo
from oracle import PinMap, urdf_joints

HERE = os.path.dirname(os.path.abspath(__file__))
URDF_DIR = os.path.join(os.path.dirname(HERE), "urdf")
URDFS = sorted(glob.glob(os.path.join(URDF_DIR, "*.urdf")) +
               glob.glob(os.path.join(URDF_DIR, "loops", "*.urdf")))
TOL = 1e-12


def tree_only(path, tmp_path):
    """The URDF without <loop_joint> elements (Pinocchio reads trees)."""
    root = ET.parse(path).getroot()
    for el in root.findall("loop_joint"):
        root.remove(el)
    out = tmp_path / os.path.basename(path)
    out.write_text(ET.tostring(root, encoding="unicode"))
    return str(out)


@pytest.mark.parametrize("path", URDFS, ids=os.path.basename)
def test_transforms_match_pinocchio_frame_placements(path, tmp_path):
    model = ldr.load_urdf(path)
    pin_path = tree_only(path, tmp_path)
    pm = pin.buildModelFromUrdf(pin_path)
    pmap = PinMap(model, pm, pin_path)
    pd = pm.createData()
    rng = np.random.default_rng(7)
    static = static_link_transforms(model)
    for _ in range(5):
        q = ldr.random_configuration(model, rng)
        pin.framesForwardKinematics(pm, pd, pmap.q_to_pin(q))

        def placement(link):
            return pd.oMf[pm.getFrameId(link, pin.BODY)].homogeneous
        moving = moving_link_transforms(model, q)
        assert moving
        for parent, child, T in moving + static:
            ref = np.linalg.inv(placement(parent)) @ placement(child)
            np.testing.assert_allclose(T, ref, rtol=0, atol=TOL, err_msg=(parent, child))


@pytest.mark.parametrize("path", URDFS, ids=os.path.basename)
def test_every_link_but_the_root_is_a_child_once(path):
    model = ldr.load_urdf(path)
    joints = urdf_joints(path)
    links = [el.get("name") for el in ET.parse(path).getroot().findall("link")]
    moving = moving_link_transforms(model, ldr.neutral_configuration(model))
    static = static_link_transforms(model)
    children = [t.child for t in moving + static]
    assert sorted(children + [root_link(model)]) == sorted(links)
    assert {t.child for t in moving} == {j["child"] for j in joints.values()
                                         if j["type"] != "fixed"}
    assert {t.child for t in static} == {j["child"] for j in joints.values()
                                         if j["type"] == "fixed"}
    assert {t.parent for t in moving + static} <= set(links)


def test_every_joint_kind_against_our_frame_poses():
    """The builder's zoo (free base, ball, universal, planar, mimic, fixed link): the root
    body hangs from "world", and each transform is the relative pose of frame_pose's."""
    model = zoo(seed=3)
    rng = np.random.default_rng(3)
    q = ldr.random_configuration(model, rng)
    moving = moving_link_transforms(model, q)
    assert [t.child for t in moving] == list(model.body_names)
    assert moving[0].parent == "world" and moving[0].child == "base"
    assert [t.child for t in static_link_transforms(model)] == ["l_fix"]

    def pose(link):
        return np.eye(4) if link == "world" else ldr.frame_pose(model, q, link)
    for parent, child, T in moving + static_link_transforms(model):
        np.testing.assert_allclose(T, np.linalg.inv(pose(parent)) @ pose(child), rtol=0,
                                   atol=TOL, err_msg=(parent, child))
    # a mimic joint moves with its master
    mim = next(t for t in moving if t.child == "l_mim")
    q2 = q.copy()
    q2[model.joint("rev").q_index] += 0.3
    mim2 = next(t for t in moving_link_transforms(model, q2) if t.child == "l_mim")
    assert not np.allclose(mim.pose, mim2.pose)
