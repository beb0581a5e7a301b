"""Compile the numba kernels ahead of time (``ldr_precompile``), so that nodes start warm.

numba caches compiled kernels (``cache=True``). Where the cache goes:

- ``NUMBA_CACHE_DIR`` when it is set;
- else the ``__pycache__`` folder next to the modules when that is writable (a source checkout,
  a user's colcon workspace);
- else numba's user-wide cache (``~/.cache/numba`` on Linux), which is what a read-only install
  such as ``/opt/ros/jazzy`` gets.

``ldr_precompile`` compiles every kernel that the nodes use, once per installation (about 30 s
on a slow machine); a node that finds the cache cold says "compiling numba kernels (first run
only)" and compiles before it subscribes to anything.
"""
import argparse
import importlib
import os
import sys
import time

import numpy as np
from numba.core.registry import CPUDispatcher

from .algorithms.configuration import neutral_configuration
from .algorithms.dynamics import (coriolis_matrix, forward_dynamics, gravity_torques,
                                  hybrid_dynamics, inverse_dynamics, mass_matrix)
from .control.controllers import AdaptiveGains, AdaptiveSlotineLiController
from .integrators.simulate import make_stepper
from .model.loading import load_urdf
from .resources import bundled_urdf

#: modules holding cached numba kernels
KERNEL_MODULES = ("lie_dynamics_ros.kernels.lie", "lie_dynamics_ros.kernels.spatial",
                  "lie_dynamics_ros.kernels.joint_kinematics",
                  "lie_dynamics_ros.kernels.dynamics", "lie_dynamics_ros.kernels.plan",
                  "lie_dynamics_ros.algorithms.regressor",
                  "lie_dynamics_ros.control.controllers")


def kernel_dispatchers(modules=KERNEL_MODULES):
    """The cached numba dispatchers defined in ``modules``."""
    out = []
    for name in modules:
        mod = importlib.import_module(name)
        for attr in vars(mod).values():
            if (isinstance(attr, CPUDispatcher) and attr.__module__ == name
                    and getattr(attr, "_cache", None) is not None
                    and hasattr(attr._cache, "_cache_file")):
                out.append(attr)
    return out


def _index_path(dispatcher):
    return dispatcher._cache._cache_file._index_path


def cache_is_cold(modules=("lie_dynamics_ros.kernels.dynamics",)):
    """True when no kernel of one of ``modules`` has a cache index yet: the next dynamics call
    compiles (tens of seconds) instead of loading (a fraction of a second).

    Helpers that numba inlines into their callers never get an index of their own, so a
    module with at least one index counts as warm. The default checks the dynamics kernels,
    which every node uses."""
    for name in modules:
        if not any(os.path.exists(_index_path(d)) for d in kernel_dispatchers((name,))):
            return True
    return False


def cache_dir():
    """Folder where numba keeps the dynamics kernels' cache (see the module docstring)."""
    return os.path.dirname(_index_path(kernel_dispatchers(("lie_dynamics_ros.kernels.dynamics",))[0]))


def warm_up(model, integrators=("semi_implicit",)):
    """Call each public dynamics function once on ``model`` (at its neutral configuration
    clipped to its limits), which compiles or loads every kernel they use, and build and take
    one step of each integrator in ``integrators``."""
    q = np.clip(neutral_configuration(model), model.lower_limits, model.upper_limits) \
        if model.nq == model.nv else neutral_configuration(model)
    z = np.zeros(model.nv)
    inverse_dynamics(model, q, z, z)
    forward_dynamics(model, q, z, z)
    mass_matrix(model, q)
    coriolis_matrix(model, q, z)
    gravity_torques(model, q)
    hybrid_dynamics(model, q, z, z, z, np.zeros(model.nv, dtype=bool))
    for method in integrators:
        make_stepper(model, method)(q, z, 1e-3, tau=z)


def warm_up_controller(model):
    """One step of the adaptive Slotine-Li controller with projection (regressor kernels and
    the projection's eigen-solver, which needs SciPy inside numba)."""
    gains = AdaptiveGains(Lambda=10.0, K_D=5.0, Gamma=1.0)
    ctrl = AdaptiveSlotineLiController(model, gains, payload_only=True, projection=True)
    q = np.clip(np.zeros(model.nq), model.lower_limits, model.upper_limits)
    z = np.zeros(model.nv)
    ctrl.step(0.0, q, z, q, z, z, 1e-3)


def main(argv=None):
    """Console script ``ldr_precompile``: compile every kernel the nodes use."""
    p = argparse.ArgumentParser(prog="ldr_precompile", description=__doc__.split("\n")[0])
    p.add_argument("urdf", nargs="*", default=["arm7"],
                   help="robots to warm up (bundled names or URDF paths; default arm7)")
    opts = p.parse_args(argv)
    t0 = time.monotonic()
    cold = cache_is_cold()
    print("ldr_precompile: %s cache in %s" % ("cold" if cold else "warm", cache_dir()),
          file=sys.stderr)
    for name in opts.urdf:
        model = load_urdf(name if os.path.isfile(name) else bundled_urdf(name))
        warm_up(model, integrators=("semi_implicit", "rkmk4"))
        warm_up_controller(model)
    print("ldr_precompile: kernels ready in %.1f s" % (time.monotonic() - t0), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
