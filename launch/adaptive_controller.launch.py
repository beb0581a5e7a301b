"""The adaptive Slotine-Li controller for an arm under ros2_control: joint_states in, effort
commands out for a forward_command_controller (interface_name: effort).

    ros2 launch lie_dynamics_ros adaptive_controller.launch.py \
        command_topic:=/effort_controller/commands

`ldr_bringup adaptive_controller` runs the same node from the same YAML file. See docs/control.md.
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
            description='URDF of the arm as the controller knows it (parameter urdf_path).'),
        DeclareLaunchArgument(
            'params_file',
            default_value=PathJoinSubstitution([share, 'config', 'adaptive_controller.yaml']),
            description='ros__parameters of adaptive_controller_node (gains, adaptation).'),
        DeclareLaunchArgument(
            'command_topic', default_value='effort_controller/commands',
            description='Float64MultiArray input of the forward_command_controller.'),
        DeclareLaunchArgument(
            'namespace', default_value='',
            description='Namespace of the node and of its relative topics.'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false',
            description='Follow /clock (true next to a simulator that publishes it).'),
        Node(
            package='lie_dynamics_ros',
            executable='adaptive_controller_node',
            name='adaptive_controller',
            namespace=LaunchConfiguration('namespace'),
            output='screen',
            parameters=[
                LaunchConfiguration('params_file'),
                {'urdf_path': LaunchConfiguration('urdf_file'),
                 'use_sim_time': ParameterValue(LaunchConfiguration('use_sim_time'),
                                                value_type=bool)},
            ],
            remappings=[('effort_controller/commands', LaunchConfiguration('command_topic'))],
        ),
    ])
