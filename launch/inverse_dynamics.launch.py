"""inverse_dynamics_node alone, next to a real arm or another simulator (docs/ros.md).

    ros2 launch lie_dynamics_ros inverse_dynamics.launch.py \
        joint_states_topic:=/arm/joint_states urdf_file:=/path/to/robot.urdf
    ros2 launch lie_dynamics_ros inverse_dynamics.launch.py \
        command_topic:=/effort_controller/commands      # a forward_command_controller's input

inverse_dynamics_ros2_control.launch.py adds the controller's joint order and its spawner.

`ldr_bringup inverse_dynamics` runs the same node from the same YAML file without launch.
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
            description='URDF file of the robot model (parameter urdf_path).'),
        DeclareLaunchArgument(
            'params_file',
            default_value=PathJoinSubstitution([share, 'config', 'inverse_dynamics.yaml']),
            description='ros__parameters of inverse_dynamics_node (node name inverse_dynamics).'),
        DeclareLaunchArgument(
            'namespace', default_value='',
            description='Namespace of the node and of its relative topics.'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false',
            description='Follow /clock (true next to a simulator that publishes it).'),
        DeclareLaunchArgument(
            'joint_states_topic', default_value='joint_states',
            description='Joint states to read (sensor_msgs/JointState, matched by name).'),
        DeclareLaunchArgument(
            'joint_torques_topic', default_value='joint_torques',
            description='Where the torques go (sensor_msgs/JointState, effort field).'),
        DeclareLaunchArgument(
            'reference_topic', default_value='reference',
            description='Optional desired accelerations (trajectory_msgs/JointTrajectory).'),
        DeclareLaunchArgument(
            'command_topic', default_value='',
            description='Also publish the torques here as std_msgs/Float64MultiArray in the '
                        'order of the joints parameter (a forward_command_controller\'s input, '
                        'e.g. /effort_controller/commands). Empty: as params_file says '
                        '(default: none).'),
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
