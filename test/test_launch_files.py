"""Launch files, YAML configs and ldr_bringup describe the same graphs.

Checked statically (AST) in every environment:
- each launch file only declares: imports, ``generate_launch_description`` returning a
  LaunchDescription of its arguments (``declare(<its graph>)``: the rows of
  lie_dynamics_ros/ros/launch_arguments.py, each with a description) and launch_ros Nodes;
- every Node of this package names an executable that setup.py's console_scripts provides;
  a Node of another package (ros2_control's spawner) runs only under an IfCondition on an
  argument that defaults to false, so every launch file runs where that package is absent;
- every YAML / URDF file name it mentions exists under config/ or urdf/;
- every LaunchConfiguration it reads is declared;
- every launch file is one of ldr_bringup's GRAPHS, which runs the same executables, node
  names and YAML files;
- every config/*.yaml is a ``ros__parameters`` file whose keys are ``/**/<node name>`` of our
  nodes (any namespace: a bare ``inverse_dynamics:`` key does not match
  ``/X/inverse_dynamics``, so ``namespace:=X`` would drop it) or ``/**``, whose parameters
  those nodes declare, and rcl's own YAML parser accepts it, in a namespace too (the
  ros2_control files, ``*ros2_control*.yaml``, are checked in test_ros2_control_recipe.py).

When launch_ros is importable (a sourced ROS 2 install; it is not on PyPI) the launch files'
``generate_launch_description()`` is also run. Without it that check is reported as NOT RUN
(a warning in the pytest summary), never silently skipped.
"""
import ast
import glob
import os
import re
import warnings

import pytest
import yaml

from lie_dynamics_ros.ros import launch_arguments
from ros_fixtures import CONFIG_DIR, REPO, URDF_DIR, ros  # noqa: F401

LAUNCH_DIR = os.path.join(REPO, "launch")
LAUNCH_FILES = sorted(glob.glob(os.path.join(LAUNCH_DIR, "*.launch.py")))
# declarative launch vocabulary (actions, substitutions, conditions); anything else is logic
ALLOWED_CALLS = {"LaunchDescription", "DeclareLaunchArgument", "Node", "LaunchConfiguration",
                 "PathJoinSubstitution", "FindPackageShare", "ParameterValue", "IfCondition",
                 "UnlessCondition", "Command", "FileContent", "TextSubstitution",
                 "IncludeLaunchDescription", "PythonLaunchDescriptionSource", "GroupAction",
                 "PushRosNamespace", "SetParameter", "EnvironmentVariable", "declare"}


def console_scripts():
    """Executable names from setup.py's entry_points (parsed, not executed)."""
    tree = ast.parse(open(os.path.join(REPO, "setup.py")).read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and k.value == "console_scripts":
                    entries = ast.literal_eval(v)
                    return {e.split("=")[0].strip(): e.split("=")[1].strip() for e in entries}
    cfg = os.path.join(REPO, "setup.cfg")
    raise AssertionError("no console_scripts in setup.py (setup.cfg: %s)" % os.path.exists(cfg))


def _call_name(call):
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _kw(call, name):
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


class LaunchInfo:
    """What a launch file declares, read from its AST."""

    def __init__(self, path):
        self.path = path
        self.graph = os.path.basename(path)[:-len(".launch.py")]
        self.tree = ast.parse(open(path).read(), filename=path)
        self.calls = [n for n in ast.walk(self.tree) if isinstance(n, ast.Call)]
        nodes = [c for c in self.calls if _call_name(c) == "Node"]
        self.nodes = [n for n in nodes if _kw(n, "package").value == "lie_dynamics_ros"]
        self.other_nodes = [n for n in nodes if n not in self.nodes]
        # the arguments are declared once, in launch_arguments.py (the file calls declare)
        self.declare_calls = [c for c in self.calls if _call_name(c) == "declare"]
        self.arguments = launch_arguments.arguments(self.graph)
        self.defaults = {a.name: a.default for a in self.arguments}
        self.strings = [n.value for n in ast.walk(self.tree)
                        if isinstance(n, ast.Constant) and isinstance(n.value, str)] + [
            a.default[-1] for a in self.arguments if isinstance(a.default, tuple)]

    def declared(self):
        return {a.name for a in self.arguments}

    def used_configurations(self):
        return {c.args[0].value for c in self.calls if _call_name(c) == "LaunchConfiguration"}

    def node_entries(self):
        """[(executable, node name, [yaml basenames in parameter order])]."""
        out = []
        for n in self.nodes:
            params = _kw(n, "parameters")
            files = []
            for p in params.elts if params is not None else []:
                if isinstance(p, ast.Call) and _call_name(p) == "LaunchConfiguration":
                    files.append(self.argument_file(p.args[0].value))
            out.append((_kw(n, "executable").value, _kw(n, "name").value, files))
        return out

    def argument_file(self, arg):
        """Basename of the default file of launch argument ``arg``."""
        assert arg in self.defaults, "%s: %s is not declared" % (self.path, arg)
        default = self.defaults[arg]
        assert isinstance(default, tuple) and default[0] == "share", \
            "%s: default of %s is not a file of the package share" % (self.path, arg)
        return default[-1]


@pytest.fixture(scope="module", params=LAUNCH_FILES, ids=os.path.basename)
def launch(request):
    return LaunchInfo(request.param)


def test_there_are_the_four_launch_files():
    names = {os.path.basename(p) for p in LAUNCH_FILES}
    assert {"inverse_dynamics.launch.py", "simulator.launch.py",
            "sim_with_gravity_compensation.launch.py", "adaptive_controller.launch.py"} <= names


def test_executables_exist_in_setup_py(launch):
    scripts = console_scripts()
    for exe, _, _ in launch.node_entries():
        assert exe in scripts, "%s: executable %s not in console_scripts" % (launch.path, exe)
        module = scripts[exe].split(":")[0]
        assert os.path.exists(os.path.join(REPO, *module.split(".")) + ".py"), scripts[exe]
    assert launch.nodes, launch.path


def test_nodes_of_other_packages_run_only_when_asked(launch):
    """A Node of another package (ros2_control's spawner) has condition=IfCondition(<arg>)
    with an argument that defaults to false: the launch file runs without that package."""
    for n in launch.other_nodes:
        cond = _kw(n, "condition")
        assert cond is not None and _call_name(cond) == "IfCondition", \
            "%s: %s runs unconditionally" % (launch.path, _kw(n, "package").value)
        arg = cond.args[0]
        assert _call_name(arg) == "LaunchConfiguration", launch.path
        assert launch.defaults[arg.args[0].value] == "false", launch.path


def test_referenced_files_exist(launch):
    files = [s for s in launch.strings if s.endswith((".yaml", ".urdf"))]
    assert files
    for f in files:
        folder = CONFIG_DIR if f.endswith(".yaml") else URDF_DIR
        assert os.path.isfile(os.path.join(folder, f)), "%s: %s missing" % (launch.path, f)


def test_launch_file_only_declares(launch):
    body = launch.tree.body
    for stmt in body:
        assert isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef)) or (
            isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)), \
            "%s: top-level logic at line %d" % (launch.path, stmt.lineno)
    funcs = [s for s in body if isinstance(s, ast.FunctionDef)]
    assert [f.name for f in funcs] == ["generate_launch_description"]
    for stmt in funcs[0].body:
        assert isinstance(stmt, (ast.Assign, ast.Return)), \
            "%s: logic at line %d" % (launch.path, stmt.lineno)
    for node in ast.walk(funcs[0]):
        assert not isinstance(node, (ast.If, ast.For, ast.While, ast.IfExp, ast.Try,
                                     ast.Lambda, ast.ListComp)), launch.path
    for c in launch.calls:
        assert _call_name(c) in ALLOWED_CALLS, "%s: call to %s" % (launch.path, _call_name(c))
    # its arguments, once, from launch_arguments.py (paths: FindPackageShare there)
    assert [ast.literal_eval(c.args[0]) for c in launch.declare_calls] == [launch.graph]
    assert not any(_call_name(c) == "DeclareLaunchArgument" for c in launch.calls), \
        "%s declares an argument itself; add it to ros/launch_arguments.py" % launch.path


def test_every_argument_is_described_and_every_configuration_declared(launch):
    for a in launch.arguments:
        assert isinstance(a.description, str) and len(a.description) > 10, \
            "%s: argument %s without description" % (launch.path, a.name)
    assert launch.used_configurations() <= launch.declared(), launch.path
    assert launch.declared() <= launch.used_configurations(), "unused arguments"


def test_bringup_runs_the_same_graphs_as_the_launch_files(launch):
    from lie_dynamics_ros.ros import bringup
    graph = os.path.basename(launch.path)[:-len(".launch.py")]
    assert graph in bringup.GRAPHS, "%s has no ldr_bringup graph" % launch.path
    robot = os.path.splitext(bringup.DEFAULT_URDF)[0]
    expected = sorted((n.executable, n.name, [f.format(robot=robot) for f in n.params_files])
                      for n in bringup.GRAPHS[graph])
    assert sorted(launch.node_entries()) == expected
    assert bringup.DEFAULT_URDF in launch.strings
    assert launch.defaults["urdf_file"] == ("share", "urdf", bringup.DEFAULT_URDF)
    assert launch.defaults["use_sim_time"] == str(bringup.DEFAULT_USE_SIM_TIME[graph]).lower()


def _declared_parameters():
    """{node name: parameters it declares} for the four nodes (default node names): its
    schema, and rclpy's use_sim_time."""
    from lie_dynamics_ros.ros.schemas import (adaptive_controller, external_torque_observer,
                                              inverse_dynamics, simulator)
    return {name: {p.name for p in schema.SCHEMA} | {"use_sim_time"}
            for name, schema in (("forward_dynamics", simulator),
                                 ("inverse_dynamics", inverse_dynamics),
                                 ("adaptive_controller", adaptive_controller),
                                 ("external_torque_observer", external_torque_observer))}


def test_every_node_of_the_launch_files_has_its_parameters_checked(launch):
    """The YAML check below covers every node a launch file starts."""
    declared = _declared_parameters()
    for _, name, _ in launch.node_entries():
        assert name in declared, "%s: node %s" % (launch.path, name)


def parameter_file_problems(data):
    """What is wrong with a parsed ``ros__parameters`` YAML file for our nodes (a list)."""
    declared = _declared_parameters()
    problems = []
    for key, block in data.items():
        if not isinstance(block, dict) or list(block) != ["ros__parameters"]:
            problems.append("%s: not a ros__parameters block" % key)
            continue
        if key == "/**":      # wildcard block: parameters of every node
            continue
        if not key.startswith("/**/"):
            problems.append("%s: key without /**/ (dropped in a namespace)" % key)
            continue
        node_name = key[len("/**/"):]
        if node_name not in declared:
            problems.append("%s is not one of our nodes" % node_name)
            continue
        unknown = set(block["ros__parameters"]) - declared[node_name] - {"qos_overrides"}
        if unknown:
            problems.append("%s does not declare %s" % (node_name, sorted(unknown)))
    return problems


def test_parameter_file_check_catches_unknown_nodes_and_parameters():
    good = yaml.safe_load(open(os.path.join(CONFIG_DIR, "adaptive_controller.yaml")))
    assert set(good) == {"/**/adaptive_controller"} and parameter_file_problems(good) == []
    typo = {"/**/adaptive_controller": {"ros__parameters": {"kd_gain": [1.0]}}}
    assert parameter_file_problems(typo) == ["adaptive_controller does not declare "
                                             "['kd_gain']"]
    assert parameter_file_problems({"/**/controller": {"ros__parameters": {}}}) == [
        "controller is not one of our nodes"]
    assert parameter_file_problems({"adaptive_controller": {"ros__parameters": {}}}) == [
        "adaptive_controller: key without /**/ (dropped in a namespace)"]


@pytest.mark.parametrize("path", sorted(p for p in glob.glob(os.path.join(CONFIG_DIR, "*.yaml"))
                                         if "ros2_control" not in os.path.basename(p)),
                         ids=os.path.basename)
def test_config_yaml_is_a_parameter_file_for_our_nodes(path, ros):
    from rclpy.node import Node
    data = yaml.safe_load(open(path))
    assert parameter_file_problems(data) == [], path
    for key, block in data.items():
        if key == "/**":
            continue
        # rcl's parser (stricter than PyYAML: no mixed int/float arrays, ...) accepts it,
        # and a node in a namespace gets the parameters
        node = Node(key[len("/**/"):], namespace="/arm_ns", context=ros.context,
                    cli_args=["--ros-args", "--params-file", path],
                    automatically_declare_parameters_from_overrides=True)
        try:
            for name, value in block["ros__parameters"].items():
                assert node.get_parameter(name).value == value or list(
                    node.get_parameter(name).value) == value
        finally:
            node.destroy_node()


def test_generate_launch_description_when_launch_ros_is_available():
    try:
        import launch  # noqa: F401
        import launch_ros  # noqa: F401
    except ImportError:
        warnings.warn("launch_ros is not importable (it is not on PyPI): "
                      "generate_launch_description() NOT RUN; launch files were checked "
                      "statically (AST) only", UserWarning)
        # the static checks above are the assertion path in this environment
        for path in LAUNCH_FILES:
            info = LaunchInfo(path)
            assert info.nodes and info.arguments and info.declare_calls
        return
    import importlib.util
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument
    from launch_ros.actions import Node
    for path in LAUNCH_FILES:
        spec = importlib.util.spec_from_file_location("launch_under_test", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        ld = module.generate_launch_description()
        assert isinstance(ld, LaunchDescription)
        entities = ld.entities
        assert any(isinstance(e, Node) for e in entities)
        assert all(isinstance(e, (Node, DeclareLaunchArgument)) for e in entities)


def _documented_arguments():
    """{launch file: {argument}} from docs/ros.md's table of launch files."""
    text = open(os.path.join(REPO, "docs", "ros.md"), encoding="utf-8").read()
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\| `([a-z0-9_]+\.launch\.py)` \|[^|]*\| (.*) \|$", line)
        if m:
            rows[m.group(1)] = set(re.findall(r"`([a-z_]+)`", m.group(2)))
    return rows


def test_docs_list_every_launch_file_and_every_argument(launch):
    """docs/ros.md's launch table names each argument the file declares, and no other."""
    rows = _documented_arguments()
    name = os.path.basename(launch.path)
    assert name in rows, "docs/ros.md: no row for %s" % name
    assert rows[name] == launch.declared(), "%s: documented %s, declared %s" % (
        name, sorted(rows[name]), sorted(launch.declared()))


def test_launch_arguments_are_plain_data_that_ldr_bringup_reads_without_launch():
    """ldr_bringup imports launch_arguments where ROS 2's launch system is absent."""
    import subprocess
    import sys
    code = ("import sys; import lie_dynamics_ros.ros.bringup as b; "
            "import lie_dynamics_ros.ros.launch_arguments as a; "
            "assert b.DEFAULT_USE_SIM_TIME is a.DEFAULT_USE_SIM_TIME; "
            "print(sorted(m for m in sys.modules if m == 'launch' or m.startswith('launch.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=REPO), timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
    assert set(launch_arguments.GRAPHS) == {os.path.basename(p)[:-len(".launch.py")]
                                           for p in LAUNCH_FILES}
    with pytest.raises(KeyError, match="known: adaptive_controller"):
        launch_arguments.arguments("no_such_graph")
