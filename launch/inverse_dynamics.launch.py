"""inverse_dynamics_node alone, next to a real arm or another simulator (docs/ros.md).

    ros2 launch lie_dynamics_ros inverse_dynamics.launch.py \
        joint_states_topic:=/arm/joint_states urdf_file:=/path/to/robot.urdf
    ros2 launch lie_dynamics_ros inverse_dynamics.launch.py \
        command_topic:=/effort_controller/commands      # a forward_command_controller's input

inverse_dynamics_ros2_control.launch.py adds the controller's joint order and its spawner.

`ldr_bringup inverse_dynamics` runs the same node from the same YAML file without launch.
"""
from launch import LaunchDescription
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from lie_dynamics_ros.ros.launch_arguments import declare


def generate_launch_description():
    return LaunchDescription(declare('inverse_dynamics') + [
        Node(
            package='lie_dynamics_ros',
            executable='inverse_dynamics_node',
            name='inverse_dynamics',
            namespace=LaunchConfiguration('namespace'),
            output='screen',
            # command_topic first: a params_file that sets it wins over the empty default
            parameters=[
                {'command_topic': ParameterValue(LaunchConfiguration('command_topic'),
                                                 value_type=str)},
                LaunchConfiguration('params_file'),
                {
                    'urdf_path': LaunchConfiguration('urdf_file'),
                    'use_sim_time': ParameterValue(LaunchConfiguration('use_sim_time'),
                                                   value_type=bool),
                },
            ],
            remappings=[
                ('joint_states', LaunchConfiguration('joint_states_topic')),
                ('joint_torques', LaunchConfiguration('joint_torques_topic')),
                ('reference', LaunchConfiguration('reference_topic')),
            ],
        ),
    ])
