"""forward_dynamics_node, the simulator: standalone (publishes /clock) or as a Gazebo
companion (publish_clock:=false use_sim_time:=true). See docs/ros.md.

    ros2 launch lie_dynamics_ros simulator.launch.py

`ldr_bringup simulator` runs the same node from the same YAML files without launch.
"""
from launch import LaunchDescription
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from lie_dynamics_ros.ros.launch_arguments import declare


def generate_launch_description():
    return LaunchDescription(declare('simulator') + [
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
