"""Joint damping, Coulomb friction and armature on the Model (URDF/SDF ``<dynamics>``,
``Model.with_joint_dynamics``, ``load_urdf(armature=...)``) and ``ldr.friction_torques``.

Oracle: Pinocchio reads the same URDF ``<dynamics>`` into ``model.damping`` and
``model.friction``. Pinocchio ignores a mimic joint's own ``<dynamics>``; ours adds it to the
primary's DOF by virtual work (multiplier^2 damping, |multiplier| friction), so for a primary
with mimic followers the expected value is Pinocchio's plus those terms.
"""
import warnings

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from oracle import all_erd_urdfs, build_pin_model, erd

ARM = "arm7"


def _erd_pairs():
    out = []
    for rel in all_erd_urdfs():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                pm = build_pin_model(erd(rel))
                lm = ldr.load_urdf(erd(rel), inertia_check="warn")
            except Exception:      # files neither loads are covered by test_example_robot_data
                continue
        out.append((rel, pm, lm))
    return out


PAIRS = _erd_pairs()


def _mimic_terms(path, lm):
    """{primary joint: (extra damping, extra friction)} from the mimic joints' <dynamics>."""
    import xml.etree.ElementTree as ET
    root = ET.parse(path).getroot()
    extra = {}
    for j in root.iter("joint"):
        mim, dyn = j.find("mimic"), j.find("dynamics")
        if mim is None or dyn is None:
            continue
        m = float(mim.get("multiplier", 1.0))
        d, f = float(dyn.get("damping", 0.0)), float(dyn.get("friction", 0.0))
        # a chain of mimics resolves to the primary the model reports
        primary = lm.mimic_joints[j.get("name")][0]
        m = lm.mimic_joints[j.get("name")][1]
        e = extra.setdefault(primary, [0.0, 0.0])
        e[0] += m * m * d
        e[1] += abs(m) * f
    return extra


def test_example_robot_data_damping_and_friction_equal_pinocchio():
    assert len(PAIRS) > 50
    with_terms = 0
    for rel, pm, lm in PAIRS:
        extra = _mimic_terms(erd(rel), lm)
        for name, vi, nv in zip(lm.joint_names, lm.joint_v_index, lm.joint_nv):
            if not pm.existJointName(name):
                continue
            j = pm.joints[pm.getJointId(name)]
            d_add, f_add = extra.get(name, (0.0, 0.0))
            np.testing.assert_allclose(lm.joint_damping[vi:vi + nv],
                                       pm.damping[j.idx_v:j.idx_v + j.nv] + d_add,
                                       rtol=0, atol=1e-12, err_msg=f"{rel} {name} damping")
            np.testing.assert_allclose(lm.joint_friction[vi:vi + nv],
                                       pm.friction[j.idx_v:j.idx_v + j.nv] + f_add,
                                       rtol=0, atol=1e-12, err_msg=f"{rel} {name} friction")
        with_terms += bool(lm.joint_damping.any() or lm.joint_friction.any())
    assert with_terms >= 25      # the issue counts 30 robots with <dynamics>


def test_friction_torques_match_pinocchio_terms_on_a_real_arm():
    rel, pm, lm = next((r, p, m) for r, p, m in PAIRS if "xarm7" in r)
    assert lm.joint_damping.any()
    rng = np.random.default_rng(0)
    v = rng.normal(size=(5, lm.nv))
    idx = [pm.joints[pm.getJointId(n)].idx_v for n in lm.joint_names]
    expect = pm.damping[idx] * v + pm.friction[idx] * np.sign(v)
    np.testing.assert_allclose(ldr.friction_torques(lm, v), expect, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ldr.friction_torques(lm, v[0]), expect[0], rtol=0, atol=1e-12)
    assert not ldr.friction_torques(lm, np.zeros(lm.nv)).any()


def test_with_joint_dynamics_number_array_and_dict():
    m = ldr.load_urdf(ARM)
    assert not (m.joint_damping.any() or m.joint_friction.any() or m.armature.any())
    arm = np.linspace(0.1, 0.7, m.nv)
    m2 = m.with_joint_dynamics(damping=0.5, friction={m.joint_names[2]: 1.5}, armature=arm)
    np.testing.assert_array_equal(m2.joint_damping, np.full(m.nv, 0.5))
    np.testing.assert_array_equal(m2.joint_friction, np.eye(m.nv)[2] * 1.5)
    np.testing.assert_array_equal(m2.armature, arm)
    # a dict changes only its joints; None keeps the others; gravity and loops keep them all
    m3 = m2.with_joint_dynamics(damping={m.joint_names[0]: 2.0})
    assert m3.joint_damping[0] == 2.0 and np.all(m3.joint_damping[1:] == 0.5)
    np.testing.assert_array_equal(m3.joint_friction, m2.joint_friction)
    np.testing.assert_array_equal(m3.armature, arm)
    m4 = m3.with_gravity([0.0, 0.0, -1.0])
    for a, b in ((m4.joint_damping, m3.joint_damping), (m4.joint_friction, m3.joint_friction),
                 (m4.armature, m3.armature)):
        np.testing.assert_array_equal(a, b)
    # the loader argument is the same thing
    np.testing.assert_array_equal(ldr.load_urdf(ARM, armature=arm).armature, arm)
    for a in (m2.joint_damping, m2.joint_friction, m2.armature):
        with pytest.raises(ValueError):
            a[0] = 1.0


@pytest.mark.parametrize("kwargs, words", [
    (dict(damping=-1.0), ["damping", "outside"]),
    (dict(friction=np.nan), ["friction", "outside"]),
    (dict(armature=1e9), ["armature", "outside"]),
    (dict(damping=[1.0, 2.0]), ["damping", "7 numbers"]),
    (dict(friction={"no_such_joint": 1.0}), ["unknown joint", "no_such_joint"]),
    (dict(armature={"panda_joint3": -0.1}), ["panda_joint3", "outside"]),
    (dict(damping="x"), ["damping"]),
])
def test_with_joint_dynamics_refuses_bad_values(kwargs, words):
    m = ldr.load_urdf(ARM)
    with pytest.raises(ldr.InputError) as e:
        m.with_joint_dynamics(**kwargs)
    for w in words:
        assert w in str(e.value)


ONE_JOINT = """<robot name="r"><link name="a"/>
<link name="b"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0"
 iyz="0"/></inertial></link>
<joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
<limit lower="-1" upper="1" effort="10" velocity="1"/>{dyn}</joint></robot>"""


@pytest.mark.parametrize("dyn, words", [
    ('<dynamics damping="-0.1"/>', ["joint 'j'", "damping", ">= 0"]),
    ('<dynamics friction="nan"/>', ["joint 'j'", "friction"]),
    ('<dynamics damping="1e300"/>', ["joint 'j'", "damping", "outside"]),
    ('<dynamics damping="1"/><dynamics damping="2"/>', ["joint 'j'", "dynamics"]),
])
def test_bad_urdf_dynamics_name_the_joint(dyn, words):
    with pytest.raises(ldr.URDFError) as e:
        ldr.load_urdf(ONE_JOINT.format(dyn=dyn))
    assert e.value.element == "j"
    for w in words:
        assert w in str(e.value)


def test_urdf_and_sdf_read_the_same_dynamics():
    m = ldr.load_urdf(ONE_JOINT.format(dyn='<dynamics damping="0.25" friction="1.5"/>'))
    assert (m.joint_damping[0], m.joint_friction[0]) == (0.25, 1.5)
    sdf = """<sdf version="1.7"><model name="r">
    <link name="a"/><link name="b"><inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy>
    <izz>0.1</izz></inertia></inertial></link>
    <joint name="j" type="revolute"><parent>a</parent><child>b</child><axis><xyz>0 0 1</xyz>
    <dynamics><damping>0.25</damping><friction>1.5</friction></dynamics></axis></joint>
    <joint name="w" type="fixed"><parent>world</parent><child>a</child></joint>
    </model></sdf>"""
    s = ldr.load_sdf(sdf)
    assert (s.joint_damping[0], s.joint_friction[0]) == (0.25, 1.5)
