"""inverse_dynamics_node commanding an arm through ros2_control (docs/ros.md, "With
ros2_control on a real arm"): joint_states from joint_state_broadcaster in, the torques out
on effort_controller/commands, in the namespace (std_msgs/Float64MultiArray), in the effort
forward_command_controller's joint order, both from controllers_file.

Where ros2_control is installed and the arm's controller_manager runs (its driver's bringup),
spawn_controllers:=true also runs controller_manager's spawner, which loads and activates
joint_state_broadcaster and effort_controller with their parameters from controllers_file:

    ros2 launch lie_dynamics_ros inverse_dynamics_ros2_control.launch.py spawn_controllers:=true

With the default spawn_controllers:=false only our node starts (no ros2_control needed): it
waits for joint_states. `ldr_bringup inverse_dynamics_ros2_control` runs the same node from
the same YAML files.
"""
from launch import LaunchDescription
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from lie_dynamics_ros.ros.launch_arguments import declare


def generate_launch_description():
    return LaunchDescription(declare('inverse_dynamics_ros2_control') + [
        Node(
            package='lie_dynamics_ros',
            executable='inverse_dynamics_node',
            name='inverse_dynamics',
            namespace=LaunchConfiguration('namespace'),
            output='screen',
            parameters=[
                LaunchConfiguration('params_file'),
                LaunchConfiguration('controllers_file'),
                {
                    'urdf_path': LaunchConfiguration('urdf_file'),
                    'use_sim_time': ParameterValue(LaunchConfiguration('use_sim_time'),
                                                   value_type=bool),
                },
            ],
        ),
        # ros2_control's side: only where it is installed (spawn_controllers:=true)
        Node(
            package='controller_manager',
            executable='spawner',
            namespace=LaunchConfiguration('namespace'),
            output='screen',
            arguments=['joint_state_broadcaster', 'effort_controller',
                       '--param-file', LaunchConfiguration('controllers_file'),
                       '--controller-manager', LaunchConfiguration('controller_manager')],
            condition=IfCondition(LaunchConfiguration('spawn_controllers')),
        ),
    ])
