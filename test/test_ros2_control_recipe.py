"""The ros2_control recipe (config/arm7_ros2_control.yaml, launch/
inverse_dynamics_ros2_control.launch.py, docs/ros.md): the controllers file parses (PyYAML and
rcl), its forward_command_controller commands efforts on exactly the URDF's joints, our node's
block points at that controller's input with the same joint order, and the node, started with
the YAML files of the launch file (ldr_bringup's graph of the same name), publishes
std_msgs/Float64MultiArray on /effort_controller/commands in the controller's joint order.
controller_manager itself is not installed here: what it reads is checked as data.
"""
import os
import xml.etree.ElementTree as ET

import numpy as np
import yaml

from ros_fixtures import ARM7, CONFIG_DIR, NodeProcess, ros, wait_matched  # noqa: F401
from test_launch_files import parameter_file_problems
from test_node_schemas import config_problems

import lie_dynamics_ros as ldr
from lie_dynamics_ros.ros import bringup

CONTROLLERS = os.path.join(CONFIG_DIR, "arm7_ros2_control.yaml")
GRAPH = "inverse_dynamics_ros2_control"
NODE = "lie_dynamics_ros.ros.inverse_dynamics_node"


def blocks(path=CONTROLLERS):
    """{node name: ros__parameters} of a file keyed /**/<node name>."""
    with open(path) as f:
        data = yaml.safe_load(f)
    assert all(k.startswith("/**/") and list(v) == ["ros__parameters"] for k, v in data.items())
    return {k[len("/**/"):]: v["ros__parameters"] for k, v in data.items()}


def effort_controllers(b):
    return {name: p for name, p in b.items()
            if p.get("type") == "forward_command_controller/ForwardCommandController"}


def urdf_moving_joints(path):
    """Names of the URDF's non-fixed joints, read from the XML (not through our parser)."""
    root = ET.parse(path).getroot()
    return [j.get("name") for j in root.findall("joint") if j.get("type") != "fixed"]


def test_controllers_file_is_complete_for_the_bundled_arm():
    b = blocks()
    rate = b["controller_manager"]["update_rate"]
    assert isinstance(rate, int) and rate > 0
    assert b["joint_state_broadcaster"]["type"] == "joint_state_broadcaster/JointStateBroadcaster"
    ctrl = effort_controllers(b)
    assert list(ctrl) == ["effort_controller"]
    p = ctrl["effort_controller"]
    assert p["interface_name"] == "effort"
    urdf = urdf_moving_joints(ARM7)
    assert sorted(p["joints"]) == sorted(urdf) and len(set(p["joints"])) == len(urdf)
    assert set(urdf) == set(ldr.load_urdf(ARM7).joint_names)


def test_our_node_is_wired_to_the_controller_in_its_joint_order():
    b = blocks()
    ours = b["inverse_dynamics"]
    assert ours["command_topic"] == "effort_controller/commands"   # follows the namespace
    assert ours["joints"] == b["effort_controller"]["joints"]
    # every other block is ros2_control's: our parameter checks apply to ours only
    mine = {"/**/inverse_dynamics": {"ros__parameters": ours}}
    assert parameter_file_problems(mine) == []
    assert config_problems("arm7_ros2_control.yaml", mine) == []


def test_rcl_parses_the_controllers_file_for_each_node_in_a_namespace(ros):
    from rclpy.node import Node
    for name, params in blocks().items():
        node = Node(name, namespace="/arm_ns", context=ros.context,
                    cli_args=["--ros-args", "--params-file", CONTROLLERS],
                    automatically_declare_parameters_from_overrides=True)
        try:
            for key, value in params.items():
                got = node.get_parameter(key).value
                assert (list(got) if isinstance(value, list) else got) == value, (name, key)
        finally:
            node.destroy_node()


def graph_args(*extra):
    """--ros-args of the graph's node, as ldr_bringup (and so the launch file) builds them."""
    opts = bringup.build_parser().parse_args([GRAPH, *extra])
    opts.urdf_abs, opts.sim_time, opts.ros_args = ARM7, "false", []
    (spec,) = bringup.GRAPHS[GRAPH]
    return bringup.node_cli_args(spec, opts, "arm7")


def commands_in_controller_order(ros, args, controller_joints):
    """Run the node with ``args``; publish states with the joints shuffled; the commands it
    publishes equal RNEA's torques in ``controller_joints`` order."""
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from lie_dynamics_ros.ros import conversions as cv
    model = ldr.load_urdf(ARM7)
    names = list(model.joint_names)
    proc = NodeProcess(NODE, args)
    try:
        cmds = []
        ros.node.create_subscription(Float64MultiArray, "/effort_controller/commands",
                                     cmds.append, 10)
        pub = ros.node.create_publisher(JointState, "joint_states", 10)
        assert proc.wait_for_log("robot model loaded", 60, ros.executor), proc.describe()
        assert wait_matched(ros, pub=pub), proc.describe()
        rng = np.random.default_rng(7)
        q, v = ldr.random_configuration(model, rng), rng.normal(size=model.nv)
        perm = rng.permutation(model.nv)
        msg = cv.make_joint_state([names[i] for i in perm], 2_000_000_000, q[perm], v[perm],
                                  None)
        want = cv.reorder(ldr.inverse_dynamics(model, q, v, np.zeros(model.nv)), names,
                          controller_joints)

        def answered():
            pub.publish(msg)
            return any(np.allclose(c.data, want, rtol=0, atol=1e-9) for c in cmds)
        assert ros.spin_until(answered, 30), "%s\n%s" % (cmds[-1:], proc.describe())
        assert all(len(c.data) == model.nv and not c.layout.dim for c in cmds)
        assert proc.alive(), proc.describe()
    finally:
        proc.stop()


def test_node_publishes_on_the_controller_input_in_its_joint_order(ros):
    assert "--params-file" in graph_args() and CONTROLLERS in graph_args()
    commands_in_controller_order(ros, graph_args() + ["-p", "clamp_efforts:=false"],
                                 blocks()["effort_controller"]["joints"])


def test_another_controller_joint_order_is_followed(ros, tmp_path):
    """The shipped order is the model's; a controllers file listing the joints in another
    order (both lists, as they must agree) reorders the commands."""
    text = open(CONTROLLERS).read()
    order = ["panda_joint%d" % k for k in (3, 1, 7, 2, 6, 4, 5)]
    shipped = "[panda_joint1, panda_joint2, panda_joint3, panda_joint4, panda_joint5,\n" \
              "             panda_joint6, panda_joint7]"
    assert text.count(shipped) == 2
    path = tmp_path / "arm7_ros2_control.yaml"
    path.write_text(text.replace(shipped, "[%s]" % ", ".join(order)))
    b = blocks(str(path))
    assert b["effort_controller"]["joints"] == b["inverse_dynamics"]["joints"] == order
    args = [str(path) if a == CONTROLLERS else a for a in graph_args()]
    commands_in_controller_order(ros, args + ["-p", "clamp_efforts:=false"], order)
