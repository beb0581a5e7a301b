"""The parameter groups several nodes share: the robot model's source, the spin loop, and
the torque guard and input pipeline of the commanding nodes (docs/safety.md)."""
from lie_dynamics_ros.ros.parameters import Param
from lie_dynamics_ros.ros.schemas.checks import positive_number
from lie_dynamics_ros.safety.guard import FALLBACKS
from lie_dynamics_ros.safety.inputs import MISSING_POLICIES

#: values of ``executor`` (ros/spin.py)
EXECUTORS = ("wait_set", "single_threaded")

#: every node (ros/model_source.py)
MODEL_SOURCE = [
    Param("robot_description", "", "string",
          "URDF XML of the robot. Takes precedence over urdf_path and the topic."),
    Param("urdf_path", "", "string",
          "URDF file, used when robot_description is empty. Absolute, relative to "
          "the working directory, or a file name in the package's urdf/ folder."),
]

#: every node: the spin loop (ros/spin.py)
SPIN = [
    Param("executor", "wait_set", "string",
          "Spin loop: wait_set (joint_states straight from a wait set, the rest through "
          "rclpy's executor) or single_threaded (docs/ros.md, Latency).",
          read_only=True, choices=EXECUTORS),
    Param("realtime_priority", 0, "int",
          "SCHED_FIFO priority of the spin loop (1-99); 0: the default scheduler "
          "(docs/ros.md, Latency).", read_only=True, min=0, max=99),
]

def friction_feedforward(velocity):
    """The joint-friction compensation of a feedforward node (control/friction_feedforward.py),
    evaluated at ``velocity`` (said in the description)."""
    return [
        Param("compensate_friction", True, "bool",
              "Add the model's joint damping and Coulomb friction (URDF <dynamics damping "
              "friction>, model.with_joint_dynamics) at %s to the torques: what the drives "
              "spend on them. No effect on a model without them. False for drives whose "
              "firmware compensates friction already." % velocity),
        Param("friction_velocity_epsilon", 0.02, "double",
              "Half-width (rad/s or m/s) of the boundary layer that smooths the Coulomb sign "
              "of compensate_friction: friction * sat(v / epsilon), exact above it, so that "
              "velocity noise at rest does not chatter the torque. 0: the exact sign(v).",
              min=0.0),
    ]


#: the commanding nodes' torque guard (ros/command_guard.py, lie_dynamics_ros.safety)
GUARD = [
    Param("state_timeout", 0.1, "double",
          "Seconds without a valid joint state (node clock, arrival time; counted from the "
          "first valid state) after which the fallback command is sent (repeated every "
          "fallback_period until valid states return). 0 = never.", min=0.0),
    Param("fallback", "zero", "string",
          "Command sent on a state timeout: 'zero' (all 0.0) or 'gravity' (g(q) at the last "
          "valid state with the node's gravity, computed once when the timeout starts, "
          "clamped, zero if not finite; for arms without brakes).", choices=FALLBACKS),
    Param("fallback_period", 0.1, "double", "Repeat period (s) of the fallback command.",
          check=positive_number),
    Param("max_torque_rate", 0.0, "double",
          "Slew limit (N m/s per joint) between consecutive commands, dt from the header "
          "stamps of the states they answer. 0 = off. The fallback and the final zero are not "
          "limited.", min=0.0),
    Param("clamp_efforts", True, "bool",
          "Clip every command element to its effort limit, clip(tau, -e, e), never scaling "
          "(e: the URDF <limit effort>, or effort_limits where the node has it); every clamp "
          "is counted."),
    Param("diagnostics_period", 1.0, "double",
          "Period (s) of the diagnostic_msgs/DiagnosticArray on /diagnostics.",
          check=positive_number),
]

#: the commanding nodes' joint_states pipeline (ros/command_guard.py StatePipeline)
INPUTS = [
    Param("source_list", [], "string_array",
          "More sensor_msgs/JointState topics merged by joint name (e.g. a gripper's); only "
          "messages on joint_states are answered.", read_only=True),
    Param("missing_joints", "reject", "string",
          "A model joint that no source measures: 'reject' (drop the state) or 'hold' (use "
          "hold_positions, zero velocity).", choices=MISSING_POLICIES),
    Param("hold_positions", [], "double_array",
          "Positions of held joints (missing_joints: hold): one value or one per joint; "
          "default 0."),
    Param("unmeasured_velocity", "estimate", "string",
          "NaN or absent velocities: 'estimate' (filtered difference of positions, "
          "velocity_cutoff_hz) or 'zero'.", choices=("estimate", "zero")),
    Param("velocity_cutoff_hz", 20.0, "double",
          "Cut-off of the first-order filter of estimated velocities (0 = raw difference).",
          min=0.0),
    Param("position_limit_margin", 0.1, "double",
          "Warn once per joint when a position is outside the URDF limits by more than this "
          "(rad or m).", min=0.0),
]
