"""ldr.load_sdf: spanning tree + closures, poses with relative_to, nested models, errors."""
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.model.sdf import SDFError

HERE = os.path.dirname(os.path.abspath(__file__))
MECH = os.path.join(HERE, "..", "urdf", "loops")


def _inertials():
    """link -> SDF <inertial> text, from the bundled four-bar URDF."""
    out = {}
    for ln in ET.parse(os.path.join(MECH, "four_bar.urdf")).getroot().findall("link"):
        ine = ln.find("inertial")
        if ine is None:
            continue
        i = ine.find("inertia").attrib
        out[ln.get("name")] = (
            f"<inertial><pose>{ine.find('origin').get('xyz')} 0 0 0</pose>"
            f"<mass>{ine.find('mass').get('value')}</mass><inertia>"
            + "".join(f"<{k}>{i[k]}</{k}>" for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
            + "</inertia></inertial>")
    return out


def four_bar_sdf(model_pose="0 0 0 0 0 0"):
    """The bundled four-bar written the SDFormat way: a <frame>, poses relative_to other frames,
    a rotated joint frame with the axis expressed in the model frame, the rocker inside a nested
    model, and the closing joint running from the rocker to the coupler."""
    I = _inertials()
    return f"""<?xml version="1.0"?>
<sdf version="1.9">
  <model name="four_bar_sdf">
    <pose>{model_pose}</pose>
    <frame name="rocker_pivot"><pose>0.4 0 0 0 0 0</pose></frame>
    <link name="ground"/>
    <link name="crank">{I['crank']}<visual name="v"><geometry><box><size>1 1 1</size></box></geometry></visual></link>
    <link name="coupler"><pose relative_to="crank">0.1 0 0.12 0 0 0</pose>{I['coupler']}</link>
    <model name="right">
      <pose relative_to="rocker_pivot">0 0 0 0 0 0</pose>
      <link name="rocker">{I['rocker']}</link>
    </model>
    <joint name="world_weld" type="fixed"><parent>world</parent><child>ground</child></joint>
    <joint name="crank_joint" type="revolute"><parent>ground</parent><child>crank</child>
      <axis><xyz>0 1 0</xyz><limit><lower>-6.3</lower><upper>6.3</upper></limit></axis></joint>
    <joint name="coupler_joint" type="revolute"><parent>crank</parent><child>coupler</child>
      <pose>0 0 0 1.5707963267948966 0 0.4</pose>
      <axis><xyz expressed_in="__model__">0 1 0</xyz></axis></joint>
    <joint name="rocker_joint" type="continuous"><parent>ground</parent><child>right::rocker</child>
      <axis><xyz>0 1 0</xyz></axis></joint>
    <joint name="coupler_rocker" type="revolute"><parent>right::rocker</parent><child>coupler</child>
      <pose relative_to="crank">0.45 0 0.3 0 0 0</pose><axis><xyz>0 1 0</xyz></axis></joint>
  </model>
</sdf>"""


def test_bundled_sdf_equals_urdf_with_loop_joints():
    for name in ("four_bar", "slider_crank", "five_bar", "parallelogram", "delta"):
        mu = ldr.load_urdf(os.path.join(MECH, f"{name}.urdf"))
        ms = ldr.load_sdf(os.path.join(MECH, f"{name}.sdf"))
        assert ms.joint_names == mu.joint_names and ms.nc == mu.nc
        for a, b in zip(ms.loops, mu.loops):
            assert (a.name, a.kind, a.link_a, a.link_b) == (b.name, b.kind, b.link_a, b.link_b)
            assert np.allclose(a.T_a, b.T_a, atol=1e-15) and np.allclose(a.T_b, b.T_b, atol=1e-15)
            assert a.kind == "weld" or np.allclose(a.axis, b.axis, atol=1e-15)
        q = ldr.assemble(mu, 0.05 * np.random.default_rng(0).standard_normal(mu.nq))
        assert np.allclose(ldr.mass_matrix(ms, q), ldr.mass_matrix(mu, q), atol=1e-14)
        assert np.allclose(ldr.constraint_residual(ms, q), ldr.constraint_residual(mu, q),
                           atol=1e-14)


def test_hand_written_sdf_has_the_same_dynamics():
    mu = ldr.load_urdf(os.path.join(MECH, "four_bar.urdf"))
    ms = ldr.load_sdf(four_bar_sdf())
    assert ms.joint_names == mu.joint_names
    assert [lp.name for lp in ms.loops] == ["coupler_rocker"]
    assert ms.loops[0].link_a == "right::rocker" and ms.loops[0].link_b == "coupler"
    assert ms.upper_limits[0] == 6.3 and ms.upper_limits[2] == np.inf
    rng = np.random.default_rng(1)
    for _ in range(3):
        q = ldr.assemble(mu, 0.1 * rng.standard_normal(3))
        assert np.max(np.abs(ldr.constraint_residual(ms, q))) < 1e-12
        assert np.allclose(ldr.mass_matrix(ms, q), ldr.mass_matrix(mu, q), atol=1e-12)
        v = np.linalg.svd(ldr.constraint_jacobian(mu, q))[2][-1]
        tau = rng.standard_normal(3)
        a_u, _ = ldr.constrained_forward_dynamics(mu, q, v, tau)
        a_s, _ = ldr.constrained_forward_dynamics(ms, q, v, tau)
        assert np.max(np.abs(a_u - a_s)) < 1e-9


def test_model_pose_rotates_gravity():
    """A top model rolled by pi about x hangs the other way up: gravity torques flip sign."""
    mu = ldr.load_sdf(four_bar_sdf())
    mr = ldr.load_sdf(four_bar_sdf("0 0 1 3.141592653589793 0 0"))
    q = np.array([0.3, -0.2, 0.1])
    assert np.allclose(ldr.gravity_torques(mr, q), -ldr.gravity_torques(mu, q), atol=1e-12)


def _bad(body, joints=""):
    return f"""<sdf version="1.9"><model name="m">
      <link name="a"><inertial><mass>1</mass></inertial></link>
      <link name="b"><pose>0 0 -1 0 0 0</pose><inertial><mass>1</mass></inertial></link>
      {body}
      {joints or '<joint name="j" type="revolute"><parent>a</parent><child>b</child></joint>'}
    </model></sdf>"""


@pytest.mark.parametrize("text,element,match", [
    (_bad("", '<joint name="u" type="universal"><parent>a</parent><child>b</child></joint>'),
     "u", "universal"),
    (_bad("", '<joint name="j" type="revolute"><parent>a</parent><child>c</child></joint>'),
     "j", "does not exist"),
    (_bad('<include><uri>model://x</uri></include>'), "m", "include"),
    (_bad('<frame name="f1"><pose relative_to="f2">0 0 0 0 0 0</pose></frame>'
          '<frame name="f2"><pose relative_to="f1">0 0 0 0 0 0</pose></frame>'
          '<link name="c"><pose relative_to="f1">0 0 0 0 0 0</pose></link>',
          '<joint name="j" type="revolute"><parent>a</parent><child>b</child></joint>'
          '<joint name="k" type="fixed"><parent>b</parent><child>c</child></joint>'), None, "cycle"),
    (_bad("", '<joint name="j" type="revolute"><parent>a</parent><child>b</child>'
              '<pose>0 0 x 0 0 0</pose></joint>'), "j", "finite"),
    (_bad("", '<joint name="j" type="revolute"><parent>b</parent><child>a</child></joint>'
              '<joint name="k" type="revolute"><parent>a</parent><child>b</child></joint>'
              '<joint name="l" type="revolute"><parent>b</parent><child>a</child></joint>'),
     "m", "no root link"),
    ("<robot name='r'/>", None, "not <sdf>"),
])
def test_errors_name_the_element(text, element, match):
    with pytest.raises(SDFError, match=match) as e:
        ldr.load_sdf(text)
    if element is not None:
        assert e.value.element == element
    assert isinstance(e.value, ldr.URDFError)


def test_ball_joint_becomes_the_closure():
    """A loop with a ball joint: the ball joint is the one left out of the tree (spherical)."""
    text = """<sdf version="1.9"><model name="tri">
      <link name="a"/>
      <link name="b"><pose>1 0 0 0 0 0</pose><inertial><mass>1</mass></inertial></link>
      <link name="c"><pose>1 0 -1 0 0 0</pose><inertial><mass>1</mass></inertial></link>
      <joint name="ab" type="ball"><parent>a</parent><child>b</child></joint>
      <joint name="ac" type="revolute"><parent>a</parent><child>c</child><axis><xyz>0 1 0</xyz></axis></joint>
      <joint name="cb" type="revolute"><parent>c</parent><child>b</child><axis><xyz>0 1 0</xyz></axis></joint>
    </model></sdf>"""
    m = ldr.load_sdf(text)
    assert m.joint_names == ["ac", "cb"]
    assert [(lp.name, lp.kind) for lp in m.loops] == [("ab", "spherical")]
    assert np.max(np.abs(ldr.constraint_residual(m, np.zeros(2)))) < 1e-15


def test_world_wrapper_and_floating_base():
    text = four_bar_sdf().replace('<sdf version="1.9">', '<sdf version="1.9"><world name="w">')
    text = text.replace("</sdf>", "</world></sdf>").replace(
        '<joint name="world_weld" type="fixed"><parent>world</parent><child>ground</child></joint>', "")
    m = ldr.load_sdf(text, floating_base=True)
    assert m.joint_names[0] == "root_joint" and (m.nq, m.nv) == (10, 9)
    q = ldr.assemble(m, ldr.integrate(m, ldr.neutral_configuration(m), 0.05 * np.ones(9)))
    assert np.max(np.abs(ldr.constraint_residual(m, q))) <= 1e-12


def test_revolute_joint_to_the_world():
    """A pendulum hinged to the world: the joint frame (pose relative_to the child) is the body
    frame, gravity torque m g l sin(q) about +y."""
    text = """<sdf version="1.9"><model name="p">
      <link name="bob"><pose>0 0 -1 0 0 0</pose><inertial><mass>2</mass>
        <inertia><ixx>1e-6</ixx><iyy>1e-6</iyy><izz>1e-6</izz></inertia></inertial></link>
      <joint name="hinge" type="revolute"><parent>world</parent><child>bob</child>
        <pose>0 0 1 0 0 0</pose><axis><xyz>0 1 0</xyz></axis></joint>
    </model></sdf>"""
    m = ldr.load_sdf(text)
    assert m.joint_names == ["hinge"] and m.nc == 0
    q = np.array([0.4])
    assert np.allclose(ldr.gravity_torques(m, q), [2 * 9.81 * np.sin(0.4)], atol=1e-12)
    assert np.allclose(ldr.frame_pose(m, np.zeros(1), "bob")[:3, 3], 0.0, atol=1e-15)
