"""Parameters of forward_dynamics_node (the simulator); semantics in docs/ros.md."""
from lie_dynamics_ros.integrators.registry import available_integrators
from lie_dynamics_ros.ros.parameters import Param, schema
from lie_dynamics_ros.ros.schemas.checks import positive_number, three_values
from lie_dynamics_ros.ros.schemas.common import MODEL_SOURCE, SPIN
from lie_dynamics_ros.runtime.simulation import START_MODES

PARAMS = [
    Param("rate", 1000.0, "double", "Simulation steps per second (Hz); dt = 1/rate.",
          read_only=True, check=positive_number),
    Param("real_time_factor", 1.0, "double",
          "Simulated seconds per wall second of the timer (steps every dt / factor). Below 1 "
          "gives controllers in other processes more wall time per step, so their commands "
          "arrive fewer simulated steps late.", read_only=True, check=positive_number),
    Param("lockstep", False, "bool",
          "Step only when a command answers the last published state (a joint_torques with "
          "that stamp, or any effort_controller/commands array from a controller that sends "
          "no joint_torques): the simulation then runs at the controller's pace, at most "
          "real_time_factor, and its result does not depend on the DDS latency. The "
          "controller must answer every state (inverse_dynamics_node, "
          "adaptive_controller_node).", read_only=True),
    Param("lockstep_timeout", 1.0, "double",
          "With lockstep: wall seconds to wait for the answer before stepping with the last "
          "command (the command watchdog then acts in simulation time); the next step waits "
          "again, and a silence is said once until a command arrives. 0 waits forever.",
          min=0.0),
    Param("integrator", "semi_implicit", "string",
          "Integrator on the configuration group: semi_implicit (symplectic Euler, default) or "
          "a fixed-step method of lie_dynamics_ros.integrators.",
          read_only=True, choices=available_integrators()),
    Param("loops_file", "", "string",
          "YAML file of loop closures added to the model's own (URDF <loop_joint> elements or "
          "the joints of an SDF that close cycles; docs/loops.md). A closed-loop model is "
          "simulated with constrained forward dynamics and projection after every step.",
          read_only=True),
    Param("initial_positions", [], "double_array",
          "Initial joint positions in `joints` order (rad, m); default: initial_state_file, "
          "else config/<robot>_initial_state.yaml when the package has one for the URDF's file "
          "name, else the neutral configuration (zeros, clipped to the joint limits).",
          read_only=True),
    Param("initial_state_file", "", "string",
          "YAML parameter file whose initial_positions / initial_velocities are used when "
          "those parameters are not set.", read_only=True),
    Param("start_mode", "wait_for_command", "string",
          "wait_for_command: publish the initial state, held, until the first command "
          "arrives (or start_timeout passes), then integrate; immediate: integrate from the "
          "first tick (zero torque until a command arrives).", read_only=True,
          choices=START_MODES),
    Param("start_timeout", 0.0, "double",
          "With start_mode wait_for_command: start integrating after this many seconds of "
          "wall time without a command (0 = wait for the first command).", read_only=True,
          min=0.0),
    Param("velocity_bound_factor", 100.0, "double",
          "Divergence check: a joint faster than this factor times its URDF velocity limit "
          "(1000 rad/s or m/s without one) stops the integration (0 disables; non-finite values "
          "always do).", min=0.0),
    Param("enforce_position_limits", False, "bool",
          "Stop joints at their URDF position limits (inelastic: the velocity into the limit "
          "is set to zero). Off by default: the URDF limits are often the controller's, not "
          "the mechanism's."),
    Param("initial_velocities", [], "double_array",
          "Initial joint velocities in `joints` order; default zeros.", read_only=True),
    Param("joints", [], "string_array",
          "Joint order of effort_controller/commands and of the initial_* arrays; default: "
          "the model's joint order.", read_only=True),
    Param("prescribed_joints", [], "string_array",
          "Joints that follow the `reference` trajectory (hybrid dynamics) instead of "
          "integrating torques.", read_only=True),
    Param("publish_clock", False, "bool",
          "Publish /clock (simulation time). Keep false while Gazebo owns the clock.",
          read_only=True),
    Param("command_timeout", 0.5, "double",
          "Watchdog: apply zero torque when no command arrived for this many seconds of "
          "simulation time (<= 0 disables)."),
    Param("gravity", [0.0, 0.0, -9.81], "double_array", "Gravity in the world frame, m/s^2.",
          check=three_values),
    Param("apply_joint_friction", True, "bool",
          "Apply the model's joint damping and Coulomb friction (URDF <dynamics damping "
          "friction>) to the joints that are not prescribed, solved implicitly at the "
          "velocity level each step (stable at any step, sticks without creep; "
          "docs/integrators.md). Not applied on a model with loop closures."),
    Param("enforce_effort_limits", True, "bool",
          "Clamp commanded torques to the URDF <limit effort> and report when it acts."),
    Param("log_throttle_sec", 2.0, "double",
          "Minimum period of repeated warnings (dropped commands, clamping, timing)."),
]

#: everything forward_dynamics_node declares
SCHEMA = schema(MODEL_SOURCE, PARAMS, SPIN)
