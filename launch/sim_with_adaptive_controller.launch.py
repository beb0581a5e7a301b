"""The simulator with adaptive_controller_node in the loop: the arm follows the trajectory
published on `reference` (Slotine-Li; `adapt: false` makes it computed torque with the
model's parameters and a PD term). joint_states -> adaptive_controller -> joint_torques ->
simulator.

    ros2 launch lie_dynamics_ros sim_with_adaptive_controller.launch.py

`ldr_bringup sim_with_adaptive_controller --reference FILE.yaml` runs the same graph from the
same YAML files in one process and publishes the reference (docs/ros.md).
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    share = FindPackageShare('lie_dynamics_ros')
    urdf_file = LaunchConfiguration('urdf_file')
    use_sim_time = ParameterValue(LaunchConfiguration('use_sim_time'), value_type=bool)
    return LaunchDescription([
        DeclareLaunchArgument(
            'urdf_file',
            default_value=PathJoinSubstitution([share, 'urdf', 'arm7.urdf']),
            description='URDF file of the robot, for both nodes (parameter urdf_path).'),
        DeclareLaunchArgument(
            'simulator_params_file',
            default_value=PathJoinSubstitution([share, 'config', 'simulator.yaml']),
            description='ros__parameters of forward_dynamics_node.'),
        DeclareLaunchArgument(
            'initial_state_file', default_value='',
            description='YAML with initial_positions / initial_velocities; default: '
                        'config/<urdf stem>_initial_state.yaml of the package when it '
                        'exists, else the neutral configuration.'),
        DeclareLaunchArgument(
            'adaptive_controller_params_file',
            default_value=PathJoinSubstitution([share, 'config', 'adaptive_controller.yaml']),
            description='ros__parameters of adaptive_controller_node.'),
        DeclareLaunchArgument(
            'namespace', default_value='',
            description='Namespace of both nodes and of their relative topics.'),
        DeclareLaunchArgument(
            'publish_clock', default_value='true',
            description='The simulator publishes /clock; false while Gazebo owns it.'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='true',
            description='Both nodes follow /clock.'),
        DeclareLaunchArgument(
            'lockstep', default_value='true',
            description='The simulator steps only when adaptive_controller has answered the '
                        'last state: deterministic, at the controller\'s pace. On by default: '
                        'with a separate process the commands arrive milliseconds late, and '
                        'the wrist\'s damping loop (k_d / I with a delay) goes unstable.'),
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
            executable='adaptive_controller_node',
            name='adaptive_controller',
            namespace=LaunchConfiguration('namespace'),
            output='screen',
            parameters=[
                LaunchConfiguration('adaptive_controller_params_file'),
                {'urdf_path': urdf_file, 'use_sim_time': use_sim_time},
            ],
        ),
    ])
