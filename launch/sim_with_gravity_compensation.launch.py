"""The simulator with inverse_dynamics_node in the loop as a gravity compensator: the arm
holds its initial pose. joint_states -> inverse_dynamics -> joint_torques -> simulator.

    ros2 launch lie_dynamics_ros sim_with_gravity_compensation.launch.py

`ldr_bringup sim_with_gravity_compensation` runs the same graph from the same YAML files in
one process (and can record it to MCAP). See docs/ros.md.
"""
from launch import LaunchDescription
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from lie_dynamics_ros.ros.launch_arguments import declare


def generate_launch_description():
    urdf_file = LaunchConfiguration('urdf_file')
    use_sim_time = ParameterValue(LaunchConfiguration('use_sim_time'), value_type=bool)
    return LaunchDescription(declare('sim_with_gravity_compensation') + [
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
    ])
