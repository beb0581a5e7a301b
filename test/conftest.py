"""Test session setup shared by every module.

DDS discovery stays on this machine: without it Fast DDS multicasts discovery beyond loopback.
Set before any test module can import rclpy, and inherited by node subprocesses.
"""
import os
import sys

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("MPLBACKEND", "Agg")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # test helpers (models, oracle)


import pytest  # noqa: E402

from models import bundled, zoo  # noqa: E402


@pytest.fixture(scope="module")
def arm():
    """The bundled 7-DOF arm (Franka Panda); test_controllers has its own with a payload."""
    return bundled("arm7.urdf")


@pytest.fixture(scope="module")
def floating():
    """A floating-base robot of the generated zoo."""
    return zoo(0)
