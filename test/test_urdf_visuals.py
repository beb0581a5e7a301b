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
