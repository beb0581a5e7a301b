"""The one update protocol (ros/parameters.py ``Parameters``) on real rclpy nodes: declaration
from a table, start-up errors, staged check / post-set apply with several listeners,
``ModelSource`` on the same protocol, and what ``ros2 param describe`` returns over DDS."""
import math

import pytest

from ros_fixtures import ARM7, DOUBLE_PENDULUM, ros  # noqa: F401

from rclpy.parameter import Parameter  # noqa: E402

from lie_dynamics_ros.ros.model_source import ModelSource  # noqa: E402
from lie_dynamics_ros.ros.parameters import Param, Parameters  # noqa: E402
from lie_dynamics_ros.ros.schemas.common import GUARD, INPUTS, SPIN  # noqa: E402
from lie_dynamics_ros.ros.spin import spin_settings  # noqa: E402


def make_node(ros, name="params_under_test", **overrides):
    return ros.add(ros.rclpy.create_node(
        name, context=ros.context,
        parameter_overrides=[Parameter(k, value=v) for k, v in overrides.items()]))


def test_declared_values_are_typed_and_defaults_fill_the_rest(ros):
    node = make_node(ros, state_timeout=1, source_list=["/gripper/joint_states"])
    p = Parameters(node).declare(GUARD + INPUTS)
    assert p.state_timeout == 1.0 and isinstance(p.state_timeout, float)
    assert p.source_list == ["/gripper/joint_states"]
    assert p.hold_positions == [] and p.fallback == "zero"
    for s in GUARD + INPUTS:
        d = node.describe_parameter(s.name)
        assert (d.description, d.read_only) == (s.description, s.read_only), s.name


@pytest.mark.parametrize("name, value, says", [
    ("velocity_cutoff_hz", -1.0, "parameter velocity_cutoff_hz: -1.0 is not >= 0"),
    ("fallback", "brake", "parameter fallback: 'brake' is not one of zero, gravity"),
    ("fallback_period", 0.0, "parameter fallback_period: must be > 0"),
    ("clamp_efforts", "yes", "parameter clamp_efforts: 'yes' is not of type bool"),
    ("state_timeout", math.nan, "parameter state_timeout: nan is not finite"),
])
def test_a_bad_value_at_start_up_is_a_value_error_naming_it(ros, name, value, says):
    node = make_node(ros, **{name: value})
    with pytest.raises(ValueError) as e:
        Parameters(node).declare(GUARD + INPUTS)
    assert str(e.value) == says


def test_check_refuses_atomically_and_apply_follows_acceptance(ros):
    node = make_node(ros)
    ps = Parameters(node)
    p = ps.declare(GUARD + INPUTS)
    checked, applied = [], []

    def check_a(trial, names):
        checked.append(("a", sorted(names)))
        if trial.fallback == "gravity" and trial.max_torque_rate == 0.0:
            return "gravity fallback needs max_torque_rate", None
        return None, ("prepared a", trial.max_torque_rate)

    def check_b(trial, names):
        checked.append(("b", sorted(names)))
        return None, "prepared b"

    ps.listen(check_a, lambda names, ready: applied.append(("a", names, ready)))
    ps.listen(check_b, lambda names, ready: applied.append(("b", names, ready)))
    res = node.set_parameters_atomically([Parameter("fallback", value="gravity"),
                                          Parameter("velocity_cutoff_hz", value=5.0)])
    assert not res.successful and res.reason == "gravity fallback needs max_torque_rate"
    assert checked == [("a", ["fallback", "velocity_cutoff_hz"])]    # b never asked
    assert applied == [] and p.fallback == "zero" and p.velocity_cutoff_hz == 20.0
    assert node.get_parameter("fallback").value == "zero"
    checked.clear()
    res = node.set_parameters_atomically([Parameter("fallback", value="gravity"),
                                          Parameter("max_torque_rate", value=40)])
    assert res.successful, res.reason
    assert p.fallback == "gravity" and p.max_torque_rate == 40.0
    names = ["fallback", "max_torque_rate"]
    assert checked == [("a", names), ("b", names)]
    assert applied == [("a", names, ("prepared a", 40.0)), ("b", names, "prepared b")]
    # a parameter that is not in the tables passes by without a check or an apply
    checked.clear()
    applied.clear()
    assert node.set_parameters([Parameter("use_sim_time", value=True)])[0].successful
    assert checked == [] and applied == []
    # declaring more through the same Parameters calls no listener either
    ps.declare(SPIN)
    assert checked == [] and applied == [] and p.executor == "wait_set"


@pytest.mark.parametrize("name, value, says", [
    ("state_timeout", -1.0, "Parameter state_timeout out of range"),   # rclpy: descriptor
    ("state_timeout", -1, "parameter state_timeout: -1.0 is not >= 0"),  # int: ours
    ("hold_positions", [0.0, math.nan], "parameter hold_positions: [0.0, nan] is not finite"),
    ("missing_joints", "guess", "parameter missing_joints: 'guess' is not one of reject"),
    ("source_list", ["/other"], "read-only parameter: source_list"),
])
def test_a_bad_value_at_run_time_is_refused_with_the_reason(ros, name, value, says):
    node = make_node(ros)
    ps = Parameters(node)
    p = ps.declare(GUARD + INPUTS)
    applied = []
    ps.listen(None, lambda names, ready: applied.append(names))
    before = getattr(p, name)
    res = node.set_parameters([Parameter(name, value=value)])[0]
    assert not res.successful and says in res.reason, res.reason
    assert getattr(p, name) == before and applied == []


def test_spin_parameters_are_declared_once_and_read_back(ros):
    node = make_node(ros, executor="single_threaded", realtime_priority=5)
    first = spin_settings(node)
    assert (first.executor, first.realtime_priority) == ("single_threaded", 5)
    assert vars(spin_settings(node)) == vars(first)                    # no second declaration
    assert node.describe_parameter("executor").read_only


def test_model_source_reloads_through_the_same_protocol(ros):
    """ModelSource with a Parameters of its own: on_model vets the new model in the check
    stage; a refusal refuses the set call and keeps the model."""
    seen = []

    def on_model(model, origin):
        seen.append((model.nv, origin))
        return "too few joints" if model.nv < 7 else None

    node = make_node(ros, urdf_path=ARM7)
    source = ModelSource(node, on_model)
    assert seen == [(7, "urdf_path %s" % ARM7)] and source.origin == seen[0][1]
    res = node.set_parameters([Parameter("urdf_path", value=DOUBLE_PENDULUM)])[0]
    assert not res.successful and res.reason == "too few joints"
    assert source.origin == "urdf_path %s" % ARM7 and source.params.urdf_path == ARM7
    assert source.rejected == 1 and seen[-1] == (2, "urdf_path %s" % DOUBLE_PENDULUM)
    res = node.set_parameters([Parameter("urdf_path", value="/nonexistent/robot.urdf")])[0]
    assert not res.successful and "not found" in res.reason and source.rejected == 2
    res = node.set_parameters([Parameter("urdf_path", value=42)])[0]
    assert not res.successful and "urdf_path: 42 is not of type string" in res.reason
    with open(ARM7) as f:
        xml = f.read()
    res = node.set_parameters([Parameter("robot_description", value=xml)])[0]
    assert res.successful, res.reason
    assert source.origin == "parameter robot_description" and len(seen) == 3


def test_model_source_joins_the_nodes_parameters(ros):
    """ModelSource(parameters=ps, start=False): the node's own listener sees the change."""
    node = make_node(ros, urdf_path=ARM7)
    ps = Parameters(node)
    ps.declare([Param("gain", 1.0, "double", "A gain.", min=0.0)])
    source = ModelSource(node, lambda model, origin: None, parameters=ps, start=False)
    staged = []

    def check(trial, names):
        model, origin = source.load_staged(trial, names)
        staged.append((sorted(names), None if model is None else model.nv))
        return None, origin

    ps.listen(check, lambda names, origin: origin and source.adopted(origin))
    source.start()
    res = node.set_parameters_atomically([Parameter("urdf_path", value=DOUBLE_PENDULUM),
                                          Parameter("gain", value=2.0)])
    assert res.successful, res.reason
    assert staged == [(["gain", "urdf_path"], 2)]
    assert ps.values.gain == 2.0 and source.origin == "urdf_path %s" % DOUBLE_PENDULUM


def test_ros2_param_describe_shows_the_table(ros):
    """What ``ros2 param describe`` asks: the describe_parameters service, over DDS."""
    from rclpy.parameter_client import AsyncParameterClient
    node = make_node(ros, name="described")
    Parameters(node).declare(GUARD + SPIN)
    client = AsyncParameterClient(ros.node, "/described")
    assert ros.spin_until(client.services_are_ready, 20)
    future = client.describe_parameters(["state_timeout", "realtime_priority", "fallback"])
    assert ros.spin_until(future.done, 20)
    st, rt, fb = future.result().descriptors
    assert st.description.startswith("Seconds without a valid joint state")
    assert [(r.from_value, r.to_value) for r in st.floating_point_range] == [(0.0, math.inf)]
    assert rt.read_only and [(r.from_value, r.to_value) for r in rt.integer_range] == [(0, 99)]
    assert fb.additional_constraints == "one of zero, gravity" and not fb.read_only
