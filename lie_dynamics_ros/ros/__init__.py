"""ROS 2 layer of lie_dynamics_ros: the only subpackage that imports rclpy or message packages.

- ``conversions``: JointState / Float64MultiArray / JointTrajectory <-> arrays, validation
  (no rclpy import; testable without a ROS graph);
- ``model_source``: robot model from the ``robot_description`` parameter, ``urdf_path`` or the
  ``robot_description`` topic;
- ``parameters``: typed parameters (``Param``), their validation and descriptors, and the one
  update protocol (``Parameters``: declare, on-set check, post-set apply);
- ``schemas``: one parameter table per node (``SCHEMA``) and the shared groups (model source,
  spin loop, torque guard, inputs); ``parameter_docs`` writes the docs tables from them;
- ``node_common``: what the nodes share (console-script ``run_node`` with the one SIGINT/SIGTERM
  handling, throttled warnings, kernel warm-up);
- ``spin``: the spin loop (joint_states straight from a wait set, SCHED_FIFO);
- ``command_guard``: the input pipeline, watchdog, diagnostics and final zero of the
  commanding nodes (the state machine is ``lie_dynamics_ros.safety``);
- the nodes (console scripts of the same names): ``inverse_dynamics_node`` (RNEA torques),
  ``forward_dynamics_node`` (the simulator), ``adaptive_controller_node`` (adaptive Slotine-Li
  control, docs/control.md) and ``external_torque_observer_node`` (contact detection);
- ``bringup``: runs the launch files' graphs in one process (``ldr_bringup``);
- ``adaptive_demo``: the closed-loop adaptive-control demo (``ldr_adaptive_demo``,
  ``make demo``);
- ``recording``: rosbag2 bags (metadata.yaml + MCAP);
- ``robot_tf``: the robot in a bag, ``/tf``, ``/tf_static`` and ``/robot_description``
  (tf2_msgs/TFMessage defined and serialized without tf2_msgs).

Importing this package does not import rclpy; import the submodules you need.
"""
