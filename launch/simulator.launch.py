"""forward_dynamics_node, the simulator: standalone (publishes /clock) or as a Gazebo
companion (publish_clock:=false use_sim_time:=true). See docs/ros.md.

    ros2 launch lie_dynamics_ros simulator.launch.py

`ldr_bringup simulator` runs the same node from the same YAML files without launch.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    share = FindPackageShare('lie_dynamics_ros')
    return LaunchDescription([
        DeclareLaunchArgument(
            'urdf_file',
            default_value=PathJoinSubstitution([share, 'urdf', 'arm7.urdf']),
            description='URDF file of the simulated robot (parameter urdf_path).'),
        DeclareLaunchArgument(
            'params_file',
            default_value=PathJoinSubstitution([share, 'config', 'simulator.yaml']),
            description='ros__parameters of forward_dynamics_node (node name forward_dynamics).'),
        DeclareLaunchArgument(
            'initial_state_file', default_value='',
            description='YAML with initial_positions / initial_velocities; default: '
                        'config/<urdf stem>_initial_state.yaml of the package when it '
                        'exists, else the neutral configuration.'),
        DeclareLaunchArgument(
            'namespace', default_value='',
            description='Namespace of the node and of its relative topics.'),
        DeclareLaunchArgument(
            'publish_clock', default_value='true',
            description='Publish /clock; set false while Gazebo owns the clock.'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false',
            description='Follow /clock (true as a Gazebo companion).'),
        DeclareLaunchArgument(
            'lockstep', default_value='false',
            description='Step only when the controller has answered the last state: the '
                        'controller\'s pace, independent of DDS latency.'),
        Node(
            package='lie_dynamics_ros',
            executable='forward_dynamics_node',
            name='forward_dynamics',
            namespace=LaunchConfiguration('namespace'),
            output='screen',
            parameters=[
                LaunchConfiguration('params_file'),
                {
                    'initial_state_file': LaunchConfiguration('initial_state_file'),
                    'urdf_path': LaunchConfiguration('urdf_file'),
                    'publish_clock': ParameterValue(LaunchConfiguration('publish_clock'),
                                                    value_type=bool),
                    'use_sim_time': ParameterValue(LaunchConfiguration('use_sim_time'),
                                                   value_type=bool),
                    'lockstep': ParameterValue(LaunchConfiguration('lockstep'),
                                               value_type=bool),
                },
            ],
        ),
    ])
