"""ROS 2 layer of lie_dynamics_ros: the only subpackage that imports rclpy or message packages.

- ``conversions``: JointState / Float64MultiArray / JointTrajectory <-> arrays, validation
  (no rclpy import; testable without a ROS graph);
- ``model_source``: robot model from the ``robot_description`` parameter, ``urdf_path`` or the
  ``robot_description`` topic, and typed parameter declaration;
- ``inverse_dynamics_node``, ``forward_dynamics_node``: the nodes (console scripts);
- ``bringup``: runs the launch files' graphs in one process (``ldr_bringup``);
- ``recording``: rosbag2-compatible MCAP writer.

Importing this package does not import rclpy; import the submodules you need.
"""
