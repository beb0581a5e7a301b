"""ROS-free runtimes of the nodes: what a node does between parsing a message and publishing,
tested without DDS. A node (``lie_dynamics_ros.ros``) converts messages and calls one of these.
"""
