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
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
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
            description='URDF file of the robot model (parameter urdf_path).'),
        DeclareLaunchArgument(
            'params_file',
            default_value=PathJoinSubstitution([share, 'config', 'inverse_dynamics.yaml']),
            description='ros__parameters of inverse_dynamics_node (compensate_gravity: false '
                        'for Franka FCI / KUKA FRI).'),
        DeclareLaunchArgument(
            'controllers_file',
            default_value=PathJoinSubstitution([share, 'config', 'arm7_ros2_control.yaml']),
            description='ros2_control parameters (controller_manager, joint_state_broadcaster, '
                        'effort_controller) and our node\'s command_topic and joints.'),
        DeclareLaunchArgument(
            'namespace', default_value='',
            description='Namespace of the node, of its relative topics and of the spawner.'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false',
            description='Follow /clock (true next to a simulator that publishes it).'),
        DeclareLaunchArgument(
            'spawn_controllers', default_value='false',
            description='Also run controller_manager\'s spawner for joint_state_broadcaster '
                        'and effort_controller (needs ros2_control and a running '
                        'controller_manager).'),
        DeclareLaunchArgument(
            'controller_manager', default_value='controller_manager',
            description='Name of the controller_manager node the spawner talks to.'),
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
