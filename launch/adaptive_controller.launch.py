"""The adaptive Slotine-Li controller for an arm under ros2_control: joint_states in, effort
commands out for a forward_command_controller (interface_name: effort).

    ros2 launch lie_dynamics_ros adaptive_controller.launch.py \
        command_topic:=/effort_controller/commands

`ldr_bringup adaptive_controller` runs the same node from the same YAML file. See docs/control.md.
"""
from launch import LaunchDescription
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from lie_dynamics_ros.ros.launch_arguments import declare


def generate_launch_description():
    return LaunchDescription(declare('adaptive_controller') + [
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
