"""SRDF reference configurations against Pinocchio's loadReferenceConfigurations (test oracle
only) on example-robot-data robots, mapped to our q by joint name; and the errors."""
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import lie_dynamics_ros as ldr

pin = pytest.importorskip("pinocchio")
from oracle import PinMap, build_pin_model, erd  # noqa: E402

# (urdf, srdf, floating base, extra): romeo.srdf lists joints romeo.urdf does not have
ROBOTS = [
    ("talos_data/robots/talos_reduced.urdf", "talos_data/srdf/talos.srdf", True, "error"),
    ("solo_description/robots/solo12.urdf", "solo_description/srdf/solo.srdf", True, "error"),
    ("z1_description/urdf/z1.urdf", "z1_description/srdf/z1.srdf", False, "error"),
    ("xarm_description/urdf/xarm7.urdf", "xarm_description/srdf/xarm7.srdf", False, "error"),
    ("panda_description/urdf/panda.urdf", "panda_description/srdf/panda.srdf", False, "error"),
    ("go2_description/urdf/go2.urdf", "go2_description/srdf/go2.srdf", True, "error"),
    ("anymal_b_simple_description/robots/anymal.urdf",
     "anymal_b_simple_description/srdf/anymal.srdf", True, "error"),
    ("romeo_description/urdf/romeo.urdf", "romeo_description/srdf/romeo.srdf", True, "ignore"),
]


@pytest.mark.parametrize("urdf, srdf, floating, extra", ROBOTS,
                         ids=[r[0].split("/")[-1] for r in ROBOTS])
def test_reference_configurations_equal_pinocchio(urdf, srdf, floating, extra):
    model = ldr.load_urdf(erd(urdf), floating_base=floating, inertia_check="warn")
    pm = build_pin_model(erd(urdf), floating_base=floating)
    pin.loadReferenceConfigurations(pm, erd(srdf), False)
    theirs = {e.key(): np.array(e.data()) for e in pm.referenceConfigurations}
    ours = ldr.reference_configurations(model, erd(srdf), extra=extra)
    assert ours and set(ours) == set(theirs)
    m = PinMap(model, pm, erd(urdf))
    for name, q in ours.items():
        ref = m.q_from_pin(theirs[name])
        assert np.abs(q - ref).max() < 1e-12, name
    # some state is not the neutral configuration: the SRDF's numbers were read
    assert any(np.abs(q - ldr.neutral_configuration(model)).max() > 1e-3 for q in ours.values()) \
        or all(not float(x) for x in _values(erd(srdf)))
    first = sorted(ours)[0]
    assert np.array_equal(ldr.reference_configuration(model, erd(srdf), first, extra=extra),
                          ours[first])


def _values(path):
    return [v for j in ET.parse(path).getroot().iter("joint") if j.get("value")
            for v in j.get("value").split()]


def test_talos_half_sitting_stands_at_its_height():
    model = ldr.load_urdf(erd("talos_data/robots/talos_reduced.urdf"), floating_base=True)
    q = ldr.reference_configuration(model, erd("talos_data/srdf/talos.srdf"), "half_sitting")
    # the numbers of talos.srdf: <joint name="root_joint" value="0. 0. 1.01927 0. 0. 0. 1." />
    # and <joint name="leg_left_4_joint" value="0.859395" />
    assert model.joint_names[0] == "root_joint"
    assert np.array_equal(q[:7], [0, 0, 1.01927, 0, 0, 0, 1])
    assert q[model.joint_q_index[model.joint_names.index("leg_left_4_joint")]] == 0.859395


def test_a_joint_the_model_lacks_is_named_unless_ignored():
    model = ldr.load_urdf(erd("romeo_description/urdf/romeo.urdf"), floating_base=True)
    with pytest.raises(ldr.InputError, match=r"group_state '\w+', joint '\w+': no such "
                                             "joint.*extra='ignore'"):
        ldr.reference_configurations(model, erd("romeo_description/srdf/romeo.srdf"))


SRDF = """<robot name="r"><group_state name="{state}" group="arm">
  <joint name="{joint}" value="{value}"/></group_state></robot>"""


@pytest.mark.parametrize("joint, value, words", [
    ("shoulder_pan_joint", "0.1 0.2", r"joint 'shoulder_pan_joint': 2 values .* nq = 1"),
    ("shoulder_pan_joint", "zero", "joint 'shoulder_pan_joint': value 'zero' is not a list of "
                                   "numbers"),
    ("shoulder_pan_joint", "nan", "joint 'shoulder_pan_joint': value 'nan' is not finite"),
    ("root_joint", "0 0 1 0 0 0 2", r"joint 'root_joint': the quaternion .* norm 2"),
    ("elbow", "0.3", "joint 'elbow': no such joint in model"),
])
def test_bad_values_raise_input_errors_naming_state_and_joint(joint, value, words):
    model = ldr.load_urdf(erd("ur_description/urdf/ur5_robot.urdf"), floating_base=True)
    with pytest.raises(ldr.InputError, match="group_state 'home', " + words):
        ldr.reference_configurations(model, SRDF.format(state="home", joint=joint, value=value))


def test_a_free_joint_takes_xyz_and_a_quaternion_xyzw_normalized_from_rounding():
    model = ldr.load_urdf(erd("ur_description/urdf/ur5_robot.urdf"), floating_base=True)
    q = ldr.reference_configurations(model, SRDF.format(
        state="tilted", joint="root_joint", value="1 2 3 0.7071 0 0 0.7071"))["tilted"]
    assert np.allclose(q[:3], [1, 2, 3]) and abs(np.linalg.norm(q[3:7]) - 1) < 1e-15
    assert np.allclose(q[3:7], [np.sqrt(0.5), 0, 0, np.sqrt(0.5)])
    assert np.array_equal(q[7:], np.zeros(model.nv - 6))


def test_unknown_states_files_and_documents_are_named():
    model = ldr.load_urdf(erd("ur_description/urdf/ur5_robot.urdf"))
    with pytest.raises(ldr.InputError, match=r"no group_state 'away'.*\['home'\]"):
        ldr.reference_configuration(model, SRDF.format(state="home", joint="elbow_joint",
                                                       value="1"), "away")
    with pytest.raises(ldr.InputError, match="not found"):
        ldr.reference_configurations(model, "/nonexistent/robot.srdf")
    with pytest.raises(ldr.InputError, match="not XML"):
        ldr.reference_configurations(model, "<robot>")
    with pytest.raises(ldr.InputError, match="extra must be"):
        ldr.reference_configurations(model, SRDF, extra="skip")
    twice = "<robot>" + 2 * '<group_state name="home" group="g"/>' + "</robot>"
    with pytest.raises(ldr.InputError, match="'home' appears twice"):
        ldr.reference_configurations(model, twice)
