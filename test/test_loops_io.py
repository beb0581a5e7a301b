"""The three ways to give loop closures: Python objects, YAML, the URDF <loop_joint> element."""
import os

import numpy as np
import pytest

import lie_dynamics_ros as ldr

HERE = os.path.dirname(os.path.abspath(__file__))
MECH = os.path.join(HERE, "..", "urdf", "loops")
TREE = os.path.join(MECH, "four_bar_tree.urdf")


def _same(m1, m2):
    assert m1.nc == m2.nc == 5
    for a, b in zip(m1.loops, m2.loops):
        assert (a.name, a.kind, a.link_a, a.link_b) == (b.name, b.kind, b.link_a, b.link_b)
        assert np.allclose(a.T_a, b.T_a, atol=1e-15) and np.allclose(a.T_b, b.T_b, atol=1e-15)
        assert a.axis == b.axis


def test_three_ways_give_the_same_model():
    from_urdf = ldr.load_urdf(os.path.join(MECH, "four_bar.urdf"))
    from_yaml = ldr.load_urdf(TREE, loops=os.path.join(MECH, "four_bar_closures.yaml"))
    loop = ldr.LoopClosure("coupler_rocker", "revolute", "coupler", "rocker",
                           xyz_a=(0.35, 0, 0.18), xyz_b=(0.05, 0, 0.3), axis=(0, 1, 0))
    from_py = ldr.load_urdf(TREE, loops=[loop])
    _same(from_urdf, from_yaml)
    _same(from_urdf, from_py)
    assert isinstance(from_urdf.loops, tuple)


def test_yaml_text_and_constraint_alias():
    text = """closures:
  - {name: c, kind: ball, link_a: coupler, link_b: rocker, xyz_a: [0.35, 0, 0.18],
     xyz_b: [0.05, 0, 0.3]}
"""
    m = ldr.load_urdf(TREE, loops=text)
    assert m.loops[0].kind == "spherical" and m.nc == 3
    with open(TREE) as f:
        xml = f.read().replace("</robot>", """
  <constraint name="c" type="revolute">
    <parent link="coupler"/><parent_origin xyz="0.35 0 0.18"/>
    <child link="rocker"/><child_origin xyz="0.05 0 0.3"/>
    <parent_axis xyz="0 1 0"/>
  </constraint>
</robot>""")
    m2 = ldr.load_urdf(xml)
    assert m2.loops[0].axis == (0.0, 1.0, 0.0) and m2.nc == 5
    assert np.max(np.abs(ldr.constraint_residual(m2, np.zeros(3)))) < 1e-15


@pytest.mark.parametrize("closure,match", [
    ("{name: c, kind: hinge, link_a: coupler, link_b: rocker}", "unknown kind 'hinge'"),
    ("{name: c, kind: weld, link_a: coupler, link_b: nowhere}", "unknown link 'nowhere'"),
    ("{name: c, kind: weld, link_a: coupler}", "misses \\['link_b'\\]"),
    ("{name: c, kind: weld, link_a: coupler, link_b: rocker, xyz: [0, 0, 0]}",
     "unknown fields \\['xyz'\\]"),
    ("{name: c, kind: weld, link_a: coupler, link_b: rocker, axis: [0, 0, 0]}", "non-zero"),
    ("{name: crank_joint, kind: weld, link_a: coupler, link_b: rocker}", "name of a tree joint"),
])
def test_bad_yaml_closures_are_typed_errors(closure, match):
    with pytest.raises(ValueError, match=match):
        ldr.load_urdf(TREE, loops=f"closures:\n  - {closure}\n")


@pytest.mark.parametrize("element,match", [
    ('<loop_joint name="c" type="gear"><parent link="coupler"/><child link="rocker"/></loop_joint>',
     "unknown type 'gear'"),
    ('<loop_joint name="c" type="weld"><parent link="coupler"/></loop_joint>', "needs <child"),
    ('<loop_joint name="c" type="weld"><parent link="coupler"/><child link="rocker"/>'
     '<parent_origin xyz="0 nan 0"/></loop_joint>', "3 finite numbers"),
    ('<loop_joint name="c" type="weld"><parent link="coupler"/><child link="rocker"/>'
     '<limit effort="1"/></loop_joint>', "unknown element <limit>"),
    ('<loop_joint name="c" type="weld"><parent link="coupler"/><child link="ghost"/></loop_joint>',
     "unknown link 'ghost'"),
])
def test_bad_loop_joint_elements_name_the_closure(element, match):
    with open(TREE) as f:
        xml = f.read().replace("</robot>", element + "</robot>")
    with pytest.raises(ldr.URDFError, match=match) as e:
        ldr.load_urdf(xml)
    assert e.value.element == "c"


def test_missing_yaml_file():
    with pytest.raises(ldr.InputError, match="does not exist"):
        ldr.load_urdf(TREE, loops="no_such_closures.yaml")


def test_closure_between_rigidly_attached_links_is_refused():
    with open(TREE) as f:
        xml = f.read().replace("</robot>", """
  <link name="marker"/>
  <joint name="marker_joint" type="fixed"><parent link="coupler"/><child link="marker"/>
    <origin xyz="0.1 0 0"/></joint>
</robot>""")
    m = ldr.load_urdf(xml)
    with pytest.raises(ldr.InputError, match="rigidly attached"):
        m.with_loops([ldr.LoopClosure("c", "weld", "coupler", "marker")])
    assert m.with_loops([ldr.LoopClosure("c", "spherical", "crank", "marker")]).nc == 3
