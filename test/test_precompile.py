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


def test_every_module_with_cached_kernels_is_listed():
    """A module of the package that defines a cached numba dispatcher is in KERNEL_MODULES
    (else ldr_precompile's cache checks miss it)."""
    import importlib
    import pkgutil
    found = set()
    for info in pkgutil.walk_packages(ldr.__path__, "lie_dynamics_ros."):
        if ".ros" in info.name or info.name.endswith(("__main__", "cli")):
            continue
        try:
            importlib.import_module(info.name)
        except ImportError:            # optional dependencies (dask, matplotlib)
            continue
        if precompile.kernel_dispatchers((info.name,)):
            found.add(info.name)
    assert found and found <= set(precompile.KERNEL_MODULES), found - set(
        precompile.KERNEL_MODULES)
    assert {"lie_dynamics_ros.kernels.derivatives",
            "lie_dynamics_ros.kernels.integrate"} <= found


def test_ldr_precompile_writes_one_line_per_group_with_its_progress(monkeypatch, capsys):
    seen = []
    monkeypatch.setattr(precompile, "GROUPS", (
        ("first group", lambda m: seen.append(("first", m.nv))),
        ("second group", lambda m: seen.append(("second", m.nv)))))
    assert precompile.main(["double_pendulum", "planar_2r"]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert seen == [("first", 2), ("second", 2), ("first", 2), ("second", 2)]
    groups = [line for line in lines if "] " in line]
    assert [g.split(" ... ")[0] for g in groups] == [
        "ldr_precompile: [1/4] first group, double_pendulum",
        "ldr_precompile: [2/4] second group, double_pendulum",
        "ldr_precompile: [3/4] first group, planar_2r",
        "ldr_precompile: [4/4] second group, planar_2r"]
    assert all(g.endswith(" s") for g in groups)
    assert lines[0].startswith("ldr_precompile: ") and "cache in" in lines[0]
    assert lines[-1].startswith("ldr_precompile: kernels ready in")


def test_the_groups_cover_the_derivatives_and_simulate():
    """Issue 21: ldr_precompile once skipped them (50 s left to the first calls)."""
    names = " ".join(what for what, _ in precompile.GROUPS)
    assert "derivatives" in names and "simulate" in names and "kinematics" in names
    model = ldr.load_urdf(DOUBLE_PENDULUM)
    precompile.warm_up_derivatives(model)
    precompile.warm_up_simulate(model)
    precompile.warm_up_kinematics(model)


def test_rollout_compiles_one_variant_for_any_number_of_rows():
    """A torque shared by the rows once reached the kernel as a broadcast view: one row gave
    a C-layout array, several an 'A' one, a second compilation (89 s cold) that
    ldr_precompile's warm-up did not cover."""
    from lie_dynamics_ros.kernels import integrate as KI
    model = ldr.load_urdf(DOUBLE_PENDULUM)
    z = np.zeros(model.nv)
    for rows in (1, 3):
        ldr.rollout(model, np.zeros((rows, 2)), np.zeros((rows, 2)), 2e-3, 1e-3, tau=z)
        if rows == 1:
            variants = len(KI.rollout_rows.signatures)
    assert len(KI.rollout_rows.signatures) == variants


def test_warm_up_compiles_every_single_state_entry():
    """After the dynamics and derivatives groups on a tree model no single-state entry is left
    to compile at a user's first call: the tree entries it takes, and the entries on the Data's
    buffer (kernels/plan.py, derivatives_plan.py) that the models the tree kernels do not serve
    take; each flag holds the raw entry point the public calls use."""
    from lie_dynamics_ros.algorithms import _inputs
    from lie_dynamics_ros.algorithms import derivatives as AD
    from lie_dynamics_ros.algorithms.tree_plan import tree_plan
    from lie_dynamics_ros.kernels import derivatives_plan, plan, tree_aba, tree_crba, tree_rnea
    from lie_dynamics_ros.kernels import tree_derivatives
    model = ldr.load_urdf(DOUBLE_PENDULUM)
    assert tree_plan(model) is not None
    precompile.warm_up(model, integrators=("semi_implicit",))
    precompile.warm_up_derivatives(model)
    entries = [(_inputs.ready, plan.SIGNATURES), (AD.ready, derivatives_plan.SIGNATURES),
               (_inputs.tree_ready, tree_rnea.SIGNATURES),
               (_inputs.tree_ready, tree_crba.SIGNATURES),
               (_inputs.tree_ready, tree_aba.SIGNATURES),
               (AD.tree_ready, tree_derivatives.SIGNATURES)]
    for flags, signatures in entries:
        for name, (fn, sig) in signatures.items():
            assert callable(getattr(flags, name)), name
            assert fn.signatures == [sig], name
