"""Compile the numba kernels ahead of time (``ldr_precompile``), so that nodes start warm.

numba caches compiled kernels (``cache=True``). Where the cache goes:

- ``NUMBA_CACHE_DIR`` when it is set;
- else the ``__pycache__`` folder next to the modules when that is writable (a source checkout,
  a user's colcon workspace);
- else numba's user-wide cache (``~/.cache/numba`` on Linux), which is what a read-only install
  such as ``/opt/ros/jazzy`` gets.

An entry is valid while the kernel's file and the kernel files it imports are unchanged
(``kernels/jit.py``), so an edited callee recompiles its callers in other modules too.

``ldr_precompile`` compiles every kernel that the nodes and the first calls of the library use,
once per installation (one to two minutes on a slow machine), one group at a time with a line
per group saying what it compiles and how long it took; a node that finds the cache cold says
"compiling numba kernels (first run only)" and compiles before it subscribes to anything, and
the library logs one line the first time it compiles (``compile_notice.py``).
"""
import argparse
import importlib
import os
import sys
import time

import numpy as np
from numba.core.registry import CPUDispatcher

from .algorithms.centroidal import (center_of_mass, center_of_mass_jacobian,
                                    centroidal_momentum, centroidal_momentum_matrix,
                                    centroidal_momentum_matrix_time_variation,
                                    mass_matrix_inverse)
from .algorithms import batch_soa
from .algorithms._inputs import compile_entry
from .algorithms.configuration import difference, integrate, neutral_configuration
from .algorithms.contacts import contact_dynamics, contact_jacobian, impulse_dynamics
from .algorithms.derivatives import (forward_dynamics_derivatives,
                                     hybrid_dynamics_derivatives, inverse_dynamics_derivatives)
from .algorithms.dynamics import (coriolis_matrix, forward_dynamics, gravity_torques,
                                  hybrid_dynamics, inverse_dynamics, mass_matrix,
                                  nonlinear_effects)
from .algorithms.geometry import christoffel_symbols
from .algorithms.regressor import regressor, regressor_rows
from .algorithms.kinematics import (body_jacobian, forward_kinematics, kinetic_energy,
                                    potential_energy)
from .algorithms.frames import (kinematics, frame_pose, frame_jacobian, frame_velocity,
                                frame_acceleration, frame_jacobian_time_variation)
from .control.controllers import AdaptiveGains, AdaptiveSlotineLiController
from .identification.regressors import stacked_regressor
from .integrators.simulate import make_stepper, rollout, simulate
from .kernels.plan import SIGNATURES as PLAN_SIGNATURES
from .lie import se3
from . import compile_notice
from .model.contacts import RigidContact
from .model.loading import load_urdf
from .resources import bundled_urdf

#: modules holding cached numba kernels
KERNEL_MODULES = ("lie_dynamics_ros.kernels.lie", "lie_dynamics_ros.kernels.spatial",
                  "lie_dynamics_ros.kernels.joint_kinematics",
                  "lie_dynamics_ros.kernels.dynamics", "lie_dynamics_ros.kernels.plan",
                  "lie_dynamics_ros.kernels.integrate", "lie_dynamics_ros.kernels.configuration",
                  "lie_dynamics_ros.kernels.derivatives",
                  "lie_dynamics_ros.kernels.derivatives_plan", "lie_dynamics_ros.kernels.batch",
                  "lie_dynamics_ros.kernels.constraints", "lie_dynamics_ros.kernels.soa",
                  "lie_dynamics_ros.kernels.soa_aba", "lie_dynamics_ros.kernels.soa_crba",
                  "lie_dynamics_ros.algorithms.regressor",
                  "lie_dynamics_ros.control.controllers",
                  "lie_dynamics_ros.kernels.centroidal", "lie_dynamics_ros.kernels.frames",
                  "lie_dynamics_ros.kernels.contacts", "lie_dynamics_ros.kernels.inverse_mass",
                  "lie_dynamics_ros.kernels.centroidal_plan",
                  "lie_dynamics_ros.kernels.se3_public", "lie_dynamics_ros.kernels.tree_aba",
                  "lie_dynamics_ros.kernels.tree_crba", "lie_dynamics_ros.kernels.tree_rnea",
                  "lie_dynamics_ros.kernels.tree_regressor",
                  "lie_dynamics_ros.kernels.tree_derivatives")


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


def kernel_cache(dispatcher):
    """numba's cache object of ``dispatcher`` (``kernels.jit.KernelCache`` for our kernels)."""
    return dispatcher._cache


def _index_path(dispatcher):
    return kernel_cache(dispatcher)._cache_file._index_path


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


def _state(model):
    """The neutral configuration clipped to the limits, at rest."""
    q = np.clip(neutral_configuration(model), model.lower_limits, model.upper_limits) \
        if model.nq == model.nv else neutral_configuration(model)
    return q, np.zeros(model.nv)


def warm_up(model, integrators=("semi_implicit",)):
    """Call each public dynamics function once on ``model`` (at its neutral configuration
    clipped to its limits), which compiles or loads every kernel they use, and build and take
    one step of each integrator in ``integrators``; ``integrate`` and ``difference`` too."""
    q, z = _state(model)
    difference(model, integrate(model, q, z), q)
    inverse_dynamics(model, q, z, z)
    forward_dynamics(model, q, z, z)
    mass_matrix(model, q)
    coriolis_matrix(model, q, z)
    gravity_torques(model, q)
    nonlinear_effects(model, q, z)
    hybrid_dynamics(model, q, z, z, z, np.zeros(model.nv, dtype=bool))
    # the entries on the Data's buffer (kernels/plan.py), which the models the tree kernels
    # do not serve take: a tree model's calls above reach the tree entries only
    for name in PLAN_SIGNATURES:
        compile_entry(name)
    for method in integrators:
        make_stepper(model, method)(q, z, 1e-3, tau=z)


def warm_up_controller(model):
    """One step of the adaptive Slotine-Li controller with projection (regressor kernels and
    the projection's eigen-solver, which needs SciPy inside numba), and the identification's
    stacked regressor."""
    gains = AdaptiveGains(Lambda=10.0, K_D=5.0, Gamma=1.0)
    ctrl = AdaptiveSlotineLiController(model, gains, payload_only=True, projection=True)
    q = np.clip(np.zeros(model.nq), model.lower_limits, model.upper_limits)
    z = np.zeros(model.nv)
    ctrl.step(0.0, q, z, q, z, z, 1e-3)
    Z = np.zeros((2, model.nv))
    stacked_regressor(model, np.tile(q, (2, 1)), Z, Z, True, False)
    regressor(model, q, z, z, z)        # v_r is v: the tree entry on the models it serves
    # and the general rows kernel, which the models the tree plan does not serve stack with
    d, none = model.default_data(), np.zeros((0, model.nv))
    regressor_rows(model.mi, model.mc, model.mI, d.dv, d.dm, np.zeros((0, model.nq)), none,
                   none, np.zeros((0, model.nv, 10 * model.njoints)), d.W, d.Wd,
                   np.zeros(0, dtype=np.int64), 0, 0)


def warm_up_simulate(model):
    """``ldr.simulate`` (rkmk4, the default) as one compiled run, and ``ldr.rollout``."""
    q, z = _state(model)
    simulate(model, q, z, 2e-3, 1e-3, tau=z)
    rollout(model, np.tile(q, (2, 1)), np.zeros((2, model.nv)), 2e-3, 1e-3, tau=z)


def warm_up_kinematics(model):
    """Forward kinematics, the kinematics pass and its reads, the one-shot frame functions, a
    body Jacobian and the energies."""
    q, z = _state(model)
    forward_kinematics(model, q)
    tip = model.body_names[-1]
    kin = kinematics(model, q, z, z)
    kin.placement(tip), kin.placements(), kin.jacobian(tip), kin.velocity(tip)
    kin.acceleration(tip), kin.jacobian_time_variation(tip)
    frame_pose(model, q, tip), frame_jacobian(model, q, tip), frame_velocity(model, q, z, tip)
    frame_acceleration(model, q, z, z, tip), frame_jacobian_time_variation(model, q, z, tip)
    body_jacobian(model, q, tip)
    kinetic_energy(model, q, z)
    potential_energy(model, q)


def warm_up_derivatives(model):
    """The analytic derivatives (Kim 2012, Tables 5-7) and the Christoffel symbols."""
    q, z = _state(model)
    inverse_dynamics_derivatives(model, q, z, z)
    forward_dynamics_derivatives(model, q, z, z)
    hybrid_dynamics_derivatives(model, q, z, z, z, np.zeros(model.nv, dtype=bool))
    christoffel_symbols(model, q)


def warm_up_batches(model):
    """The batched calls (N states on all cores; ID, FD and M on MIN_STATES states or more
    take the structure-of-arrays kernels for the models they serve; the derivatives' rows)."""
    q, z = _state(model)
    Q, Z = np.tile(q, (2, 1)), np.zeros((2, model.nv))
    inverse_dynamics(model, Q, Z, Z)
    n = batch_soa.MIN_STATES
    Qn, Zn = np.tile(q, (n, 1)), np.zeros((n, model.nv))
    inverse_dynamics(model, Qn, Zn, Zn)
    forward_dynamics(model, Q, Z, Z)
    forward_dynamics(model, Qn, Zn, Zn)
    mass_matrix(model, Q)
    mass_matrix(model, Qn)
    inverse_dynamics_derivatives(model, Q, Z, Z)        # the rows entries of derivatives_plan
    forward_dynamics_derivatives(model, Q, Z, Z)


def warm_up_centroidal(model):
    """Centre of mass, its Jacobian, the centroidal momentum and map, and M^-1."""
    q, z = _state(model)
    center_of_mass(model, q, z, z)
    center_of_mass_jacobian(model, q)
    centroidal_momentum(model, q, z)
    centroidal_momentum_matrix(model, q)
    centroidal_momentum_matrix_time_variation(model, q, z)
    mass_matrix_inverse(model, q)


def warm_up_contacts(model):
    """Contact and impulse dynamics with a weld on the last body (one compiled kernel each,
    whatever the robot or the contact set); models with mimic joints take no contacts."""
    if model.has_mimic:
        return
    q, z = _state(model)
    contacts = [RigidContact(model, model.body_names[-1], "6d")]
    contact_dynamics(model, q, z, z, contacts)
    impulse_dynamics(model, q, z, contacts)
    contact_jacobian(model, q, contacts)


def warm_up_se3(model):
    """Every compiled function of the public SE(3) algebra (``ldr.lie.se3``); the model is
    not used."""
    xi, T = np.full(6, 0.1), np.eye(4)
    se3.exp(xi), se3.log(T), se3.inv(T), se3.compose(T, T), se3.act_point(T, xi[:3])
    se3.act_twist(T, xi), se3.Ad(T), se3.ad(xi), se3.right_jacobian(xi)
    se3.right_jacobian_inv(xi), se3.log_jacobian(T)


#: (what, function of a model): the groups ``ldr_precompile`` compiles, in order
GROUPS = (("dynamics (RNEA, ABA, CRBA, C, g, hybrid) and the nodes' integrator steps",
           lambda m: warm_up(m, integrators=("semi_implicit", "rkmk4"))),
          ("kinematics, Jacobians and energies", warm_up_kinematics),
          ("regressor and adaptive Slotine-Li controller", warm_up_controller),
          ("simulate and rollout", warm_up_simulate),
          ("derivatives", warm_up_derivatives),
          ("batched calls", warm_up_batches),
          ("centroidal quantities and M^-1", warm_up_centroidal),
          ("contact and impulse dynamics", warm_up_contacts),
          ("the public SE(3) algebra", warm_up_se3))


def run_groups(models, stream, groups=None):
    """Compile ``groups`` for each (name, model) of ``models``: one line per group on
    ``stream`` (what, for which robot, [k/n] and the seconds it took), written as the group
    starts and finished when it ends. ``groups`` defaults to ``GROUPS``."""
    groups = GROUPS if groups is None else groups
    n = len(groups) * len(models)
    k = 0
    for name, model in models:
        for what, fn in groups:
            k += 1
            stream.write("ldr_precompile: [%d/%d] %s, %s ... " % (k, n, what, name))
            stream.flush()
            t = time.monotonic()
            fn(model)
            stream.write("%.1f s\n" % (time.monotonic() - t))
            stream.flush()
    return k


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
    models = [(name, load_urdf(name if os.path.isfile(name) else bundled_urdf(name)))
              for name in opts.urdf]
    compile_notice.NOTICE.said = True     # the group lines say it here
    run_groups(models, sys.stderr)
    print("ldr_precompile: kernels ready in %.1f s" % (time.monotonic() - t0), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
