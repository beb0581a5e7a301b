"""Parameters of external_torque_observer_node (node name external_torque_observer);
docs/ros.md."""
from lie_dynamics_ros.ros.parameters import Param, schema
from lie_dynamics_ros.ros.schemas.checks import positive_values, three_values
from lie_dynamics_ros.ros.schemas.common import MODEL_SOURCE, SPIN
from lie_dynamics_ros.runtime.observer import TORQUE_SOURCES

PARAMS = [
    Param("observer_gain", [50.0], "double_array",
          "K_O (1/s): one value for every joint, or one per joint; the estimate's time "
          "constant is 1/K_O. Any state period works (exact exponential update).",
          check=positive_values),
    Param("contact_threshold", [2.0], "double_array",
          "|r_i| above this (N m or N) means contact: one value, or one per joint.",
          check=positive_values),
    Param("torque_source", "joint_states", "string",
          "Where the applied torques come from. joint_states: each state's effort field "
          "(forward_dynamics_node reports the torque it applied, after its clamp; drivers "
          "report the measured one). command: the last joint_torques / "
          "effort_controller/commands before each state, for drivers without efforts "
          "(exact only if the drive applies commands unclamped and at once).",
          read_only=True, choices=TORQUE_SOURCES),
    Param("wait_for_torque", False, "bool",
          "Start estimating at the first state whose applied torque acts (a non-zero effort, "
          "or after the first command): before it, brakes or the simulator's start-up hold "
          "hold the arm, and their holding torque would be reported as a contact.",
          read_only=True),
    Param("joints", [], "string_array",
          "Element order of effort_controller/commands; default: the model's joint order.",
          read_only=True),
    Param("gravity", [0.0, 0.0, -9.81], "double_array", "Gravity in the world frame, m/s^2.",
          check=three_values),
    Param("compensate_friction", True, "bool",
          "Subtract the model's joint damping and Coulomb friction at the measured velocity "
          "(ldr.friction_torques) from the applied torques before estimating, so that a "
          "joint's own friction is not flagged as a contact. No effect on a model without "
          "them."),
    Param("log_throttle_sec", 2.0, "double",
          "Minimum period of repeated warnings (dropped messages, skipped states)."),
]

#: everything external_torque_observer_node declares
SCHEMA = schema(MODEL_SOURCE, PARAMS, SPIN)
