"""Every link of every bundled robot has a primitive <visual> of positive size (so viewers
draw the robot), and the files still load as models."""
import glob
import os
import xml.etree.ElementTree as ET

import pytest

import lie_dynamics_ros as ldr

HERE = os.path.dirname(os.path.abspath(__file__))
URDF_DIR = os.path.join(os.path.dirname(HERE), "urdf")
URDFS = sorted(glob.glob(os.path.join(URDF_DIR, "*.urdf")) +
               glob.glob(os.path.join(URDF_DIR, "loops", "*.urdf")))
SDFS = sorted(glob.glob(os.path.join(URDF_DIR, "loops", "*.sdf")))


def _sizes(geometry, sdf):
    (shape,) = list(geometry)
    if sdf:
        return shape.tag, [float(c.text) for c in shape]
    return shape.tag, [float(v) for k, v in shape.attrib.items()
                       if k in ("radius", "length", "size")
                       for v in v.split()]


@pytest.mark.parametrize("path", URDFS + SDFS, ids=os.path.basename)
def test_every_link_has_a_visual_of_positive_size(path):
    sdf = path.endswith(".sdf")
    root = ET.parse(path).getroot()
    links = root.findall("model/link" if sdf else "link")
    assert links
    for link in links:
        visuals = link.findall("visual")
        assert visuals, "link %r of %s has no <visual>" % (link.get("name"), path)
        for v in visuals:
            kind, sizes = _sizes(v.find("geometry"), sdf)
            assert kind in ("cylinder", "box", "sphere")
            assert sizes and min(sizes) > 0, (link.get("name"), kind, sizes)


def test_the_bundled_urdfs_are_found():
    names = {os.path.relpath(p, URDF_DIR) for p in URDFS}
    assert {"arm7.urdf", "double_pendulum.urdf", "planar_2r.urdf",
            os.path.join("loops", "four_bar.urdf")} <= names


@pytest.mark.parametrize("path", URDFS + SDFS, ids=os.path.basename)
def test_the_model_still_loads(path):
    model = ldr.load_sdf(path) if path.endswith(".sdf") else ldr.load_urdf(path)
    assert model.nv > 0 and model.total_mass > 0


@pytest.mark.parametrize("path", URDFS, ids=os.path.basename)
def test_pinocchio_reads_the_visuals_and_each_rod_starts_at_its_link_frame(path, tmp_path):
    """An independent URDF reader (Pinocchio's geometry model) finds every <visual> as a
    primitive; each cylinder runs from the link frame (where the joint moving it is) along
    the rotated z axis of its origin's rpy."""
    import numpy as np
    import pinocchio as pin
    root = ET.parse(path).getroot()
    for el in root.findall("loop_joint"):
        root.remove(el)
    tree = tmp_path / os.path.basename(path)
    tree.write_text(ET.tostring(root, encoding="unicode"))
    pm = pin.buildModelFromUrdf(str(tree))
    geoms = pin.buildGeomFromUrdf(pm, str(tree), pin.GeometryType.VISUAL)
    visuals = [v for link in root.findall("link") for v in link.findall("visual")]
    assert geoms.ngeoms == len(visuals)
    assert {type(g.geometry).__name__ for g in geoms.geometryObjects} <= {"Cylinder", "Sphere",
                                                                         "Box"}
    rods = 0
    for v in visuals:
        cyl = v.find("geometry/cylinder")
        if cyl is None:
            continue
        o = v.find("origin")
        xyz = np.array([float(x) for x in o.get("xyz").split()])
        R = pin.rpy.rpyToMatrix(*[float(x) for x in o.get("rpy").split()])
        half = R[:, 2] * float(cyl.get("length")) / 2
        assert min(np.linalg.norm(xyz - half), np.linalg.norm(xyz + half)) < 1e-5
        rods += 1
    assert rods > 0
