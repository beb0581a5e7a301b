"""Parameters of inverse_dynamics_node (node name inverse_dynamics); docs/ros.md."""
from lie_dynamics_ros.ros.parameters import Param, schema
from lie_dynamics_ros.ros.schemas.checks import three_values
from lie_dynamics_ros.ros.schemas.common import (GUARD, INPUTS, MODEL_SOURCE, SPIN,
                                                friction_feedforward)

PARAMS = [
    Param("compensate_gravity", True, "bool",
          "Include gravity in the torques. Set false for arms whose firmware already "
          "compensates gravity (Franka FCI, KUKA FRI)."),
    Param("gravity", [0.0, 0.0, -9.81], "double_array",
          "Gravity in the world frame, m/s^2.", check=three_values),
    Param("command_topic", "", "string",
          "If set, also publish the torques as std_msgs/Float64MultiArray in `joints` order "
          "(forward_command_controller with interface_name: effort), e.g. "
          "/effort_controller/commands. Reliable QoS.", read_only=True),
    Param("joints", [], "string_array",
          "Joint order of command_topic; default: the model's joint order.", read_only=True),
    Param("log_throttle_sec", 2.0, "double",
          "Minimum period of repeated warnings about dropped or clamped messages."),
    Param("loops_file", "", "string",
          "YAML file of loop closures added to the URDF's own <loop_joint> elements "
          "(docs/loops.md)."),
    Param("actuated_joints", [], "string_array",
          "Closed-loop mechanisms: the actuated joints. The node then publishes the torques of "
          "Kim's constrained inverse dynamics (zero on passive joints); the passive joints' "
          "velocities and accelerations follow from the closures."),
] + friction_feedforward(
    "the reference's velocity on the joints it gives one for (its sign turns before the joint "
    "moves, breaking a stick), the measured velocity elsewhere (on a closed loop, the "
    "actuated joints' own friction; a passive joint with friction is then refused)")

#: everything inverse_dynamics_node declares
SCHEMA = schema(MODEL_SOURCE, PARAMS, GUARD, INPUTS, SPIN)
