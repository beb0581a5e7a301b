"""The arguments of the seven launch files of launch/, declared once: name, default and
description per graph (graph = launch file name without ``.launch.py``, as in ldr_bringup).

Plain data, without an import of ROS 2's launch system, so that ldr_bringup (which runs the
same graphs without launch) and the tests read the same defaults where launch is absent;
``declare(graph)`` turns a graph's rows into the DeclareLaunchArgument actions of its launch
file, the only place that imports launch.
"""
from typing import NamedTuple

PACKAGE = "lie_dynamics_ros"
#: a default that is a file of the package share: ("share", folder, file name)
DEFAULT_URDF = "arm7.urdf"


def share(folder: str, name: str) -> tuple:
    return ("share", folder, name)


class Argument(NamedTuple):
    name: str
    default: object          # a string, or share(folder, file): a file of the package share
    description: str


#: defaults that differ between graphs
DEFAULT_USE_SIM_TIME = {"inverse_dynamics": False, "simulator": False,
                        "sim_with_gravity_compensation": True, "adaptive_controller": False,
                        "sim_with_adaptive_controller": True,
                        "inverse_dynamics_ros2_control": False, "observer": True}
#: on with a separate controller process whose commands arrive late (see its description)
DEFAULT_LOCKSTEP = {"simulator": False, "sim_with_gravity_compensation": False,
                    "sim_with_adaptive_controller": True, "observer": False}

_INITIAL_STATE = Argument(
    "initial_state_file", "",
    "YAML with initial_positions / initial_velocities; default: config/<urdf stem>"
    "_initial_state.yaml of the package when it exists, else the neutral configuration.")
_PUBLISH_CLOCK = Argument("publish_clock", "true",
                          "The simulator publishes /clock; false while Gazebo owns it.")
_SIMULATOR_PARAMS = Argument("simulator_params_file", share("config", "simulator.yaml"),
                             "ros__parameters of forward_dynamics_node.")
_ID_PARAMS = Argument("inverse_dynamics_params_file", share("config", "inverse_dynamics.yaml"),
                      "ros__parameters of inverse_dynamics_node.")
_FOLLOW_CLOCK = "Follow /clock (true next to a simulator that publishes it)."
_LOCKSTEP_ID = ("The simulator steps only when inverse_dynamics has answered the last state: "
                "deterministic, at the controller's pace.")


def _urdf(description):
    return Argument("urdf_file", share("urdf", DEFAULT_URDF), description)


def _namespace(description):
    return Argument("namespace", "", description)


def _flag(name, graph, description):
    table = DEFAULT_USE_SIM_TIME if name == "use_sim_time" else DEFAULT_LOCKSTEP
    return Argument(name, str(table[graph]).lower(), description)


#: graph -> its arguments, in the order ``ros2 launch --show-args`` lists them
GRAPHS = {
    "simulator": (
        _urdf("URDF file of the simulated robot (parameter urdf_path)."),
        Argument("params_file", share("config", "simulator.yaml"),
                 "ros__parameters of forward_dynamics_node (node name forward_dynamics)."),
        _INITIAL_STATE,
        _namespace("Namespace of the node and of its relative topics."),
        Argument("publish_clock", "true",
                 "Publish /clock; set false while Gazebo owns the clock."),
        _flag("use_sim_time", "simulator", "Follow /clock (true as a Gazebo companion)."),
        _flag("lockstep", "simulator",
              "Step only when the controller has answered the last state: the controller's "
              "pace, independent of DDS latency."),
    ),
    "inverse_dynamics": (
        _urdf("URDF file of the robot model (parameter urdf_path)."),
        Argument("params_file", share("config", "inverse_dynamics.yaml"),
                 "ros__parameters of inverse_dynamics_node (node name inverse_dynamics)."),
        _namespace("Namespace of the node and of its relative topics."),
        _flag("use_sim_time", "inverse_dynamics", _FOLLOW_CLOCK),
        Argument("joint_states_topic", "joint_states",
                 "Joint states to read (sensor_msgs/JointState, matched by name)."),
        Argument("joint_torques_topic", "joint_torques",
                 "Where the torques go (sensor_msgs/JointState, effort field)."),
        Argument("reference_topic", "reference",
                 "Optional desired accelerations (trajectory_msgs/JointTrajectory)."),
        Argument("command_topic", "",
                 "Also publish the torques here as std_msgs/Float64MultiArray in the order of "
                 "the joints parameter (a forward_command_controller's input, e.g. "
                 "/effort_controller/commands). Empty: as params_file says (default: none)."),
    ),
    "inverse_dynamics_ros2_control": (
        _urdf("URDF file of the robot model (parameter urdf_path)."),
        Argument("params_file", share("config", "inverse_dynamics.yaml"),
                 "ros__parameters of inverse_dynamics_node (compensate_gravity: false for "
                 "Franka FCI / KUKA FRI)."),
        Argument("controllers_file", share("config", "arm7_ros2_control.yaml"),
                 "ros2_control parameters (controller_manager, joint_state_broadcaster, "
                 "effort_controller) and our node's command_topic and joints."),
        _namespace("Namespace of the node, of its relative topics and of the spawner."),
        _flag("use_sim_time", "inverse_dynamics_ros2_control", _FOLLOW_CLOCK),
        Argument("spawn_controllers", "false",
                 "Also run controller_manager's spawner for joint_state_broadcaster and "
                 "effort_controller (needs ros2_control and a running controller_manager)."),
        Argument("controller_manager", "controller_manager",
                 "Name of the controller_manager node the spawner talks to."),
    ),
    "adaptive_controller": (
        _urdf("URDF of the arm as the controller knows it (parameter urdf_path)."),
        Argument("params_file", share("config", "adaptive_controller.yaml"),
                 "ros__parameters of adaptive_controller_node (gains, adaptation)."),
        Argument("command_topic", "effort_controller/commands",
                 "Float64MultiArray input of the forward_command_controller."),
        _namespace("Namespace of the node and of its relative topics."),
        _flag("use_sim_time", "adaptive_controller", _FOLLOW_CLOCK),
    ),
    "sim_with_gravity_compensation": (
        _urdf("URDF file of the robot, for both nodes (parameter urdf_path)."),
        _SIMULATOR_PARAMS, _INITIAL_STATE, _ID_PARAMS,
        _namespace("Namespace of both nodes and of their relative topics."),
        _PUBLISH_CLOCK,
        _flag("use_sim_time", "sim_with_gravity_compensation", "Both nodes follow /clock."),
        _flag("lockstep", "sim_with_gravity_compensation", _LOCKSTEP_ID),
    ),
    "sim_with_adaptive_controller": (
        _urdf("URDF file of the robot, for both nodes (parameter urdf_path)."),
        _SIMULATOR_PARAMS, _INITIAL_STATE,
        Argument("adaptive_controller_params_file", share("config", "adaptive_controller.yaml"),
                 "ros__parameters of adaptive_controller_node."),
        _namespace("Namespace of both nodes and of their relative topics."),
        _PUBLISH_CLOCK,
        _flag("use_sim_time", "sim_with_adaptive_controller", "Both nodes follow /clock."),
        _flag("lockstep", "sim_with_adaptive_controller",
              "The simulator steps only when adaptive_controller has answered the last state: "
              "deterministic, at the controller's pace. On by default: with a separate process "
              "the commands arrive milliseconds late, and the wrist's damping loop (k_d / I "
              "with a delay) goes unstable."),
    ),
    "observer": (
        _urdf("URDF file of the robot, for the three nodes (parameter urdf_path)."),
        _SIMULATOR_PARAMS, _INITIAL_STATE, _ID_PARAMS,
        Argument("observer_params_file", share("config", "external_torque_observer.yaml"),
                 "ros__parameters of external_torque_observer_node (torque_source: "
                 "joint_states, the torque the simulator applied)."),
        _namespace("Namespace of the three nodes and of their relative topics."),
        _PUBLISH_CLOCK,
        _flag("use_sim_time", "observer", "The three nodes follow /clock."),
        _flag("lockstep", "observer", _LOCKSTEP_ID),
    ),
}


def arguments(graph: str) -> tuple:
    """The Argument rows of ``graph``; KeyError names the known graphs."""
    try:
        return GRAPHS[graph]
    except KeyError:
        raise KeyError("no launch graph %r (known: %s)" % (graph, ", ".join(sorted(GRAPHS))))


def declare(graph: str) -> list:
    """DeclareLaunchArgument actions for the launch file of ``graph``."""
    from launch.actions import DeclareLaunchArgument
    from launch.substitutions import PathJoinSubstitution
    from launch_ros.substitutions import FindPackageShare
    out = []
    for a in arguments(graph):
        default = a.default
        if isinstance(default, tuple):
            default = PathJoinSubstitution([FindPackageShare(PACKAGE), *default[1:]])
        out.append(DeclareLaunchArgument(a.name, default_value=default,
                                         description=a.description))
    return out
