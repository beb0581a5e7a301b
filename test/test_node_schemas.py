"""Each node's one parameter schema (``ros/schemas/<node>.py`` ``SCHEMA``) is what the node
declares, what the docs tables show and what the config YAMLs may override."""
import glob
import os
import re

import pytest
import yaml

from ros_fixtures import ARM7, CONFIG_DIR, REPO, ros  # noqa: F401

from lie_dynamics_ros.ros import parameter_docs as pd
from lie_dynamics_ros.ros.schemas import (adaptive_controller, external_torque_observer,
                                          inverse_dynamics, simulator)

#: node name -> its schema module
SCHEMAS = {"forward_dynamics": simulator, "inverse_dynamics": inverse_dynamics,
           "adaptive_controller": adaptive_controller,
           "external_torque_observer": external_torque_observer}

#: (config file, node name, parameter) -> why it stays although it equals the default
KEPT_DEFAULTS = {
    ("inverse_dynamics.yaml", "inverse_dynamics", "compensate_gravity"):
        "depends on the arm (false where the firmware compensates gravity): every robot's "
        "file must decide it",
    ("adaptive_controller.yaml", "adaptive_controller", "compensate_gravity"):
        "as in inverse_dynamics.yaml",
    ("external_torque_observer.yaml", "external_torque_observer", "torque_source"):
        "the estimate is right only with the torque applied: the graph's file says where it "
        "comes from",
}


def _node_class(name):
    from lie_dynamics_ros.ros import (adaptive_controller_node, external_torque_observer_node,
                                      forward_dynamics_node, inverse_dynamics_node)
    return {"forward_dynamics": forward_dynamics_node.ForwardDynamicsNode,
            "inverse_dynamics": inverse_dynamics_node.InverseDynamicsNode,
            "adaptive_controller": adaptive_controller_node.AdaptiveControllerNode,
            "external_torque_observer":
                external_torque_observer_node.ExternalTorqueObserverNode}[name]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_every_parameter_has_a_description_and_one_name(name):
    schema = SCHEMAS[name].SCHEMA
    names = [p.name for p in schema]
    assert len(names) == len(set(names)), name
    for p in schema:
        assert p.description.strip(), "%s: parameter %s has no description" % (name, p.name)
    # the node's own parameters and the shared groups, nothing else
    own = {p.name for p in SCHEMAS[name].PARAMS}
    shared = {p.name for p in pd.table("model_source") + pd.table("spin")}
    assert set(names) - own - shared <= {p.name for p in pd.table("guard") + pd.table("inputs")}
    assert shared <= set(names)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_a_running_node_declares_exactly_its_schema(ros, name):
    from rclpy.parameter import Parameter
    bare = ros.add(ros.rclpy.create_node("bare_" + name, context=ros.context))
    rclpy_own = set(bare.list_parameters([], 0).names)     # use_sim_time, ...
    assert "use_sim_time" in rclpy_own
    kwargs = {"drive": "external"} if name == "forward_dynamics" else {}
    node = ros.add(_node_class(name)(context=ros.context, **kwargs,
                                     parameter_overrides=[Parameter("urdf_path", value=ARM7)]))
    declared = set(node.list_parameters([], 0).names)
    # rclpy adds the qos_overrides.<topic>.* of a subscription created with them
    declared = {n for n in declared if not n.startswith("qos_overrides.")}
    schema = {p.name for p in SCHEMAS[name].SCHEMA}
    assert declared - rclpy_own == schema, name
    for p in SCHEMAS[name].SCHEMA:          # ros2 param describe: from the same table
        d = node.describe_parameters([p.name])[0]
        assert (d.description, d.read_only) == (p.description, p.read_only), p.name


def _docs_with_tables():
    return [p for p in sorted(glob.glob(os.path.join(REPO, "docs", "*.md")))
            if "<!-- parameters:" in open(p, encoding="utf-8").read()]


def test_every_node_table_is_registered_and_in_the_docs():
    shown = set()
    for path in _docs_with_tables():
        shown |= set(re.findall(r"<!-- parameters: ([\w-]+) -->",
                                open(path, encoding="utf-8").read()))
    for name in SCHEMAS:
        assert name in pd.TABLES, name
        assert pd.table(name) == SCHEMAS[name].PARAMS, name
    assert set(pd.TABLES) <= shown, sorted(set(pd.TABLES) - shown)


@pytest.mark.parametrize("path", _docs_with_tables(), ids=os.path.basename)
def test_docs_tables_are_in_sync_with_the_schemas(path, capsys):
    code = pd.main(["--check", path])
    stale = pd.stale_tables(open(path, encoding="utf-8").read())
    assert (code, stale) == (0, []), "%s: out of date: %s (%s)" % (
        path, ", ".join(stale), capsys.readouterr().err.strip())


def _same(a, b):
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(
            b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b or (
        isinstance(a, (int, float)) and isinstance(b, (int, float))
        and not isinstance(a, bool) and not isinstance(b, bool) and float(a) == float(b))


def config_problems(filename, data):
    """What is wrong with a config file against the schemas: an unknown node or parameter
    (a typo), a value that is the default without a reason in ``KEPT_DEFAULTS``."""
    out = []
    for key, block in data.items():
        node = key[len("/**/"):]
        if node not in SCHEMAS:
            out.append("%s: %s is not one of our nodes" % (filename, key))
            continue
        specs = {p.name: p for p in SCHEMAS[node].SCHEMA}
        for name, value in ((block or {}).get("ros__parameters") or {}).items():
            if name == "qos_overrides":
                continue
            if name not in specs:
                out.append("%s: %s has no parameter %s" % (filename, node, name))
            elif _same(value, specs[name].default) and (filename, node,
                                                        name) not in KEPT_DEFAULTS:
                out.append("%s: %s: %s is the default (%r)" % (filename, node, name, value))
    return out


# the ros2_control files hold ros2_control's nodes too: test_ros2_control_recipe.py checks
# their block of our node with config_problems
@pytest.mark.parametrize("path", sorted(p for p in glob.glob(os.path.join(CONFIG_DIR, "*.yaml"))
                                         if "ros2_control" not in os.path.basename(p)),
                         ids=os.path.basename)
def test_config_files_only_override(path):
    with open(path) as f:
        data = yaml.safe_load(f)
    assert config_problems(os.path.basename(path), data) == []


def test_config_check_catches_a_typo_and_a_repeated_default():
    data = {"/**/forward_dynamics": {"ros__parameters": {
        "rate": 500.0, "rat": 500.0, "gravity": [0, 0, -9.81], "publish_clock": True}}}
    assert config_problems("x.yaml", data) == [
        "x.yaml: forward_dynamics has no parameter rat",
        "x.yaml: forward_dynamics: gravity is the default ([0, 0, -9.81])"]
    assert config_problems("x.yaml", {"/**/simulator": {"ros__parameters": {}}}) == [
        "x.yaml: /**/simulator is not one of our nodes"]


def test_kept_defaults_are_still_in_their_files():
    for (filename, node, name) in KEPT_DEFAULTS:
        with open(os.path.join(CONFIG_DIR, filename)) as f:
            params = yaml.safe_load(f)["/**/" + node]["ros__parameters"]
        assert name in params, (filename, name)
