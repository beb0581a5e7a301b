"""The simulator with adaptive_controller_node in the loop: the arm follows the trajectory
published on `reference` (Slotine-Li; `adapt: false` makes it computed torque with the
model's parameters and a PD term). joint_states -> adaptive_controller -> joint_torques ->
simulator.

    ros2 launch lie_dynamics_ros sim_with_adaptive_controller.launch.py

`ldr_bringup sim_with_adaptive_controller --reference FILE.yaml` runs the same graph from the
same YAML files in one process and publishes the reference (docs/ros.md).
"""
from launch import LaunchDescription
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from lie_dynamics_ros.ros.launch_arguments import declare


def generate_launch_description():
    urdf_file = LaunchConfiguration('urdf_file')
    use_sim_time = ParameterValue(LaunchConfiguration('use_sim_time'), value_type=bool)
    return LaunchDescription(declare('sim_with_adaptive_controller') + [
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
