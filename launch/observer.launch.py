"""The flagship graph (the simulator holding the arm through inverse_dynamics_node's gravity
compensation) with the external-torque observer watching it: push the arm and the contact is
flagged on the joints that feel it. joint_states -> inverse_dynamics -> joint_torques ->
simulator; joint_states (their effort: the torque the simulator applied) -> observer ->
external_torque_estimate, contact.

    ros2 launch lie_dynamics_ros observer.launch.py
    # a 25 N push along the flange's axis, until a zero wrench releases it
    ros2 topic pub --once /external_wrench geometry_msgs/msg/WrenchStamped \
        "{header: {frame_id: panda_link7}, wrench: {force: {z: 25.0}}}"

While the simulator holds its initial state (before inverse_dynamics' first command),
something outside the dynamics holds the arm: the observer (wait_for_torque in
config/external_torque_observer.yaml) starts at the first applied torque, so that hold is not
reported as a contact. `ldr_bringup observer` runs the same graph in
one process. See docs/ros.md.
"""
from launch import LaunchDescription
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from lie_dynamics_ros.ros.launch_arguments import declare


def generate_launch_description():
    urdf_file = LaunchConfiguration('urdf_file')
    use_sim_time = ParameterValue(LaunchConfiguration('use_sim_time'), value_type=bool)
    return LaunchDescription(declare('observer') + [
        Node(
            package='lie_dynamics_ros',
            executable='forward_dynamics_node',
            name='forward_dynamics',
            namespace=LaunchConfiguration('namespace'),
            output='screen',
            parameters=[
                LaunchConfiguration('simulator_params_file'),
                {
                    'initial_state_file': LaunchConfiguration('initial_state_file'),
                    'urdf_path': urdf_file,
                    'publish_clock': ParameterValue(LaunchConfiguration('publish_clock'),
                                                    value_type=bool),
                    'use_sim_time': use_sim_time,
                    'lockstep': ParameterValue(LaunchConfiguration('lockstep'),
                                               value_type=bool),
                },
            ],
        ),
        Node(
            package='lie_dynamics_ros',
            executable='inverse_dynamics_node',
            name='inverse_dynamics',
            namespace=LaunchConfiguration('namespace'),
            output='screen',
            parameters=[
                LaunchConfiguration('inverse_dynamics_params_file'),
                {'urdf_path': urdf_file, 'use_sim_time': use_sim_time},
            ],
        ),
        Node(
            package='lie_dynamics_ros',
            executable='external_torque_observer_node',
            name='external_torque_observer',
            namespace=LaunchConfiguration('namespace'),
            output='screen',
            parameters=[
                LaunchConfiguration('observer_params_file'),
                {'urdf_path': urdf_file, 'use_sim_time': use_sim_time},
            ],
        ),
    ])
