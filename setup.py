"""Packaging for lie_dynamics_ros (ROS 2 ament_python layout, also pip-installable).

* colcon (ament_python) runs this file with ``setup.py build/install/develop``;
  ``setup.cfg`` sends the console scripts to ``lib/lie_dynamics_ros`` so that
  ``ros2 run lie_dynamics_ros <node>`` finds them.
* ``pip install -e .[test,plot,record]`` builds a PEP 660 editable wheel; pip
  then writes the console scripts to ``<venv>/bin`` (setup.cfg's ``[develop]``
  and ``[install]`` sections only affect the legacy ``setup.py develop/install``
  paths, which pip >= 25.3 never uses; the Makefile upgrades pip first).
* The ROS 2 Python wheels (``ros-jazzy-*``) are NOT install_requires: a colcon
  or apt ROS install provides rclpy, and a plain venv gets them from
  ``requirements-ros.txt``.  ``import lie_dynamics_ros`` works without rclpy.
"""

import os
import re
from glob import glob

from setuptools import find_packages, setup

PACKAGE_NAME = 'lie_dynamics_ros'
HERE = os.path.dirname(os.path.abspath(__file__))


def _version():
    """Single source of truth for the version: package.xml."""
    with open(os.path.join(HERE, 'package.xml'), encoding='utf-8') as f:
        match = re.search(r'<version>\s*([^<\s]+)\s*</version>', f.read())
    if not match:
        raise RuntimeError('package.xml has no <version>')
    return match.group(1)


def _files(pattern):
    # Relative paths (setuptools wants them relative to setup.py), sorted for
    # reproducible installs.  glob() is relative to the cwd, which colcon and
    # pip both set to the package root; chdir-independent just in case.
    return sorted(os.path.relpath(p, HERE) for p in glob(os.path.join(HERE, pattern)))


setup(
    name=PACKAGE_NAME,
    version=_version(),
    packages=find_packages(where=HERE, exclude=['test', 'test.*', 'tests', 'tests.*']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + PACKAGE_NAME]),
        (os.path.join('share', PACKAGE_NAME), ['package.xml']),
        (os.path.join('share', PACKAGE_NAME, 'launch'), _files('launch/*.launch.py')),
        (os.path.join('share', PACKAGE_NAME, 'config'), _files('config/*.yaml')),
        (os.path.join('share', PACKAGE_NAME, 'urdf'), _files('urdf/*.urdf')),
        (os.path.join('share', PACKAGE_NAME, 'urdf', 'loops'),
         _files('urdf/loops/*.urdf') + _files('urdf/loops/*.sdf') + _files('urdf/loops/*.yaml')),
    ],
    python_requires='>=3.10',
    install_requires=[
        'numpy',
        'numba',
        'pyyaml',          # loop-closure YAML files and the simulator's initial state
        'scipy',           # numba's np.linalg.eigh (the adaptive controller's projection)
    ],
    extras_require={
        'test': ['pytest', 'pin', 'example-robot-data', 'matplotlib', 'rosbags', 'hypothesis',
                 'mujoco', 'dask[distributed]'],
        'plot': ['matplotlib'],
        'record': ['mcap', 'mcap-ros2-support'],
        'cluster': ['dask[distributed]'],   # identify on a Dask cluster
    },
    zip_safe=False,   # numba caches compiled kernels next to the modules
    maintainer='lie_dynamics_ros maintainers',
    maintainer_email='maintainers@lie-dynamics-ros.invalid',
    description='Lie-group rigid-body dynamics (RNEA, ABA, hybrid) with ROS 2 nodes',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [
            'ldr_demo = lie_dynamics_ros.cli:main',
            'inverse_dynamics_node = lie_dynamics_ros.ros.inverse_dynamics_node:main',
            'forward_dynamics_node = lie_dynamics_ros.ros.forward_dynamics_node:main',
            'ldr_bringup = lie_dynamics_ros.ros.bringup:main',
            'adaptive_controller_node = lie_dynamics_ros.ros.adaptive_controller_node:main',
            'ldr_adaptive_demo = lie_dynamics_ros.ros.adaptive_demo:main',
            'ldr_precompile = lie_dynamics_ros.precompile:main',
            'ldr_identify = lie_dynamics_ros.ros.identify_cli:main',
            'external_torque_observer_node = '
            'lie_dynamics_ros.ros.external_torque_observer_node:main',
        ],
    },
)
