"""ldr_precompile's helpers: where numba keeps the kernels, and whether a node would compile."""
import os

import numpy as np

import lie_dynamics_ros as ldr
from lie_dynamics_ros import precompile

from ros_fixtures import DOUBLE_PENDULUM


def test_after_a_dynamics_call_the_cache_is_warm_and_its_folder_holds_an_index():
    model = ldr.load_urdf(DOUBLE_PENDULUM)
    ldr.forward_dynamics(model, np.zeros(2), np.zeros(2), np.zeros(2))   # compiles or loads
    assert not precompile.cache_is_cold()
    folder = precompile.cache_dir()
    assert os.path.isdir(folder)
    assert any(f.startswith("dynamics.") and f.endswith(".nbi") for f in os.listdir(folder))


def test_the_kernel_list_covers_the_nodes_modules():
    names = {d.__module__ for d in precompile.kernel_dispatchers()}
    assert {"lie_dynamics_ros.kernels.dynamics", "lie_dynamics_ros.algorithms.regressor",
            "lie_dynamics_ros.control.controllers"} <= names


def test_warm_up_runs_every_public_dynamics_function():
    model = ldr.load_urdf(DOUBLE_PENDULUM)
    precompile.warm_up(model, integrators=("semi_implicit",))
