"""Parameters of adaptive_controller_node (node name adaptive_controller); docs/control.md."""
from lie_dynamics_ros.ros.parameters import Param, schema
from lie_dynamics_ros.ros.schemas.checks import empty_or_positive_values, three_values
from lie_dynamics_ros.ros.schemas.common import (GUARD, INPUTS, MODEL_SOURCE, SPIN,
                                                friction_feedforward)


PARAMS = [
    Param("lambda_gains", [], "double_array",
          "Lambda (1/s): v_r = v_d - Lambda e. One value for every joint or one per joint "
          "(model order). Empty: from the gains file, else 10.",
          min=0.0),
    Param("kd_gains", [], "double_array",
          "K_D (N m s/rad): tau = Y theta_hat - K_D s. One value or one per joint. "
          "Empty: from the gains file, else 20.", min=0.0),
    Param("gamma_gains", [], "double_array",
          "Gamma (> 0) of theta_hat_dot = -Gamma Y^T s: one value, 10 values (per parameter "
          "kind m, mc_xyz, Ixx Ixy Iyy Ixz Iyz Izz; repeated for each adapted body) or one per "
          "adapted parameter. Empty: from the gains file, else "
          "[1, 0.1 x 3, 0.01 x 6].", check=empty_or_positive_values),
    Param("gains_file", "", "string",
          "YAML parameter file whose lambda_gains / kd_gains / gamma_gains are used for the "
          "gains not set as parameters; default: config/<urdf stem>_adaptive_gains.yaml of the "
          "package when the URDF has one (config/arm7_adaptive_gains.yaml), so urdf_file:= "
          "alone switches robots."),
    Param("adapt", True, "bool", "Adapt theta_hat (false: Slotine-Li with the current "
          "estimate)."),
    Param("payload_only", True, "bool",
          "Adapt only the 10 parameters of `adapt_body` (a payload at the flange merges into "
          "the last body); false: every body's parameters adapt."),
    Param("adapt_body", "", "string",
          "Body whose parameters adapt in payload_only mode; default the model's last body."),
    Param("projection", True, "bool",
          "Keep theta_hat physically consistent (pseudo-inertia projection in the Gamma^-1 "
          "metric)."),
    Param("initial_parameters", [], "double_array",
          "Initial theta_hat (10 per adapted body); default: the URDF's parameters."),
    Param("effort_limits", [], "double_array",
          "Torque limits (N m), one value or one per joint (model order); default the URDF "
          "<limit effort>. 0 or negative = no limit.", read_only=False),
    Param("compensate_gravity", True, "bool",
          "Include gravity in the model (and the torques). False for arms whose firmware "
          "already compensates gravity (Franka FCI, KUKA FRI)."),
    Param("gravity", [0.0, 0.0, -9.81], "double_array", "Gravity in the world frame, m/s^2.",
          check=three_values),
    Param("max_dt", 0.05, "double",
          "Longest time step (s) integrated by the adaptation; longer gaps do not adapt."),
    Param("joints", [], "string_array",
          "Element order of effort_controller/commands (every joint once); default the "
          "model's joint order.",
          read_only=True),
    Param("publish_command_array", True, "bool",
          "Publish effort_controller/commands (Float64MultiArray, forward_command_controller)."),
    Param("publish_joint_torques", True, "bool", "Publish joint_torques (JointState)."),
    Param("monitor_decimation", 1, "int",
          "Publish ~/parameter_estimates and ~/tracking_error every this many states "
          "(0: never).", min=0),
    Param("start_enabled", True, "bool", "Control from the start (else wait for ~/enable).",
          read_only=True),
    Param("log_throttle_sec", 2.0, "double",
          "Minimum period of repeated warnings (dropped messages, clamping)."),
] + friction_feedforward(
    "Slotine-Li's reference velocity v_r = v_d - Lambda e (so that the damping adds to K_D)")

#: everything adaptive_controller_node declares
SCHEMA = schema(MODEL_SOURCE, PARAMS, GUARD, INPUTS, SPIN)
