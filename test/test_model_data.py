"""Model / Data: a frozen model shared by threads, per-thread work memory, batched calls.

The defect this guards against: four threads sharing one model once got 28 wrong torques in
80,000 calls, silently, because the model owned the kernels' work buffers.
"""
import threading
import tracemalloc

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms import batch
from models import bundled, general_twin, zoo


def _states(model, n, seed):
    rng = np.random.default_rng(seed)
    Q = np.array([ldr.random_configuration(model, rng) for _ in range(n)])
    return Q, rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))


def test_model_is_frozen_and_data_is_separate(arm):
    assert not arm.mi.flags.writeable and not arm.mc.flags.writeable
    assert not arm.mI.flags.writeable
    with pytest.raises(AttributeError, match="with_gravity"):
        arm.gravity = (0.0, 0.0, -1.0)
    moon = arm.with_gravity((0.0, 0.0, -1.62))
    assert np.array_equal(arm.gravity, [0, 0, -9.81]) and np.array_equal(moon.gravity,
                                                                        [0, 0, -1.62])
    q = ldr.random_configuration(arm, 1)
    np.testing.assert_allclose(ldr.gravity_torques(moon, q),
                               ldr.gravity_torques(arm, q) * 1.62 / 9.81, rtol=1e-12, atol=1e-14)
    # an explicit Data gives the same numbers as the per-thread one, and holds the twists
    d = arm.create_data()
    Q, V, A = _states(arm, 1, 2)
    assert np.array_equal(ldr.inverse_dynamics(arm, Q[0], V[0], A[0], data=d),
                          ldr.inverse_dynamics(arm, Q[0], V[0], A[0]))
    Jb = ldr.body_jacobian(arm, Q[0], arm.body_names[-1], data=d)    # fills d.Jb
    assert np.allclose(d.twist[-1] @ np.zeros(6), 0.0) and Jb.shape == (6, arm.nv)
    names = [name for name, _ in ldr.Data.FIELDS]
    assert {"twist", "wrench", "articulated_inertia", "motion_subspace"} <= set(names)
    assert all(getattr(type(d), name).__doc__ for name in names)


def test_data_of_another_model_is_refused(arm, floating):
    q = ldr.neutral_configuration(arm)
    z = np.zeros(arm.nv)
    with pytest.raises(ldr.InputError, match="another model"):
        ldr.inverse_dynamics(arm, q, z, z, data=floating.create_data())


def test_four_threads_share_one_model_and_every_result_is_exact(arm):
    """4 threads x 10^4 calls on one model: each result equals the single-threaded one bit for
    bit (inverse dynamics, forward dynamics and the mass matrix, interleaved)."""
    Q, V, A = _states(arm, 16, 3)
    ref_tau = [ldr.inverse_dynamics(arm, Q[k], V[k], A[k]) for k in range(16)]
    ref_a = [ldr.forward_dynamics(arm, Q[k], V[k], ref_tau[k]) for k in range(16)]
    ref_M = [ldr.mass_matrix(arm, Q[k]) for k in range(16)]
    wrong = []
    barrier = threading.Barrier(4)

    def worker(seed):
        barrier.wait()
        for i in range(10_000):
            k = (i * 7 + seed) % 16
            which = i % 3
            if which == 0:
                ok = np.array_equal(ldr.inverse_dynamics(arm, Q[k], V[k], A[k]), ref_tau[k])
            elif which == 1:
                ok = np.array_equal(ldr.forward_dynamics(arm, Q[k], V[k], ref_tau[k]), ref_a[k])
            else:
                ok = np.array_equal(ldr.mass_matrix(arm, Q[k]), ref_M[k])
            if not ok:
                wrong.append((seed, i))

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


@pytest.mark.parametrize("which", ["arm", "floating"])
def test_batched_calls_equal_the_per_state_calls(which, arm, floating):
    model = arm if which == "arm" else floating
    N = 200      # enough work to be split over the pool
    Q, V, A = _states(model, N, 4)
    tau = ldr.inverse_dynamics(model, Q, V, A)
    assert tau.shape == (N, model.nv)
    for k in range(0, N, 37):
        # the arm's batch runs the structure-of-arrays kernel (algorithms/batch_soa.py):
        # another summation order and FMA contraction, so equal to round-off, not bit-exact
        one = ldr.inverse_dynamics(model, Q[k], V[k], A[k])
        if which == "arm":
            np.testing.assert_allclose(tau[k], one, rtol=0, atol=1e-13 * np.abs(one).max())
        else:
            assert np.array_equal(tau[k], one)
    acc = ldr.forward_dynamics(model, Q, V, tau)
    np.testing.assert_allclose(acc, A, atol=1e-8 * (1 + np.abs(A).max()))
    M = ldr.mass_matrix(model, Q)
    assert M.shape == (N, model.nv, model.nv)
    g = ldr.gravity_torques(model, Q)
    b = ldr.nonlinear_effects(model, Q, V)
    for k in range(0, N, 37):
        one = ldr.forward_dynamics(model, Q[k], V[k], tau[k])
        if which == "arm":      # FD too (algorithms/batch_soa_aba.py): equal to round-off
            np.testing.assert_allclose(acc[k], one, rtol=0, atol=1e-13 * np.abs(one).max())
        else:
            assert np.array_equal(acc[k], one)
        one = ldr.mass_matrix(model, Q[k])
        if which == "arm":      # and M (algorithms/batch_soa_crba.py)
            np.testing.assert_allclose(M[k], one, rtol=0, atol=1e-13 * np.abs(one).max())
        else:
            assert np.array_equal(M[k], one)
        for batched, one in ((g[k], ldr.gravity_torques(model, Q[k])),
                             (b[k], ldr.nonlinear_effects(model, Q[k], V[k]))):
            if which == "arm":  # one state: the tree entries (kernels/tree_rnea.py)
                np.testing.assert_allclose(batched, one, rtol=0, atol=1e-13 * np.abs(one).max())
            else:
                assert np.array_equal(batched, one)
        np.testing.assert_allclose(M[k] @ A[k] + b[k], tau[k], atol=1e-9 * (1 + abs(tau[k]).max()))
    mask = np.zeros(model.nv, bool)
    mask[model.joint_v_index[-1]:] = True          # the last joint follows a, the rest tau
    a_full, tau_full = ldr.hybrid_dynamics(model, Q, V, A, tau, mask)
    np.testing.assert_allclose(a_full, A, atol=1e-8 * (1 + np.abs(A).max()))
    np.testing.assert_allclose(tau_full, tau, atol=1e-8 * (1 + np.abs(tau).max()))


def test_batches_of_python_joints_and_mimic_models(arm):
    builtin, general = general_twin(5)
    Q, V, A = _states(builtin, 6, 5)
    np.testing.assert_allclose(ldr.inverse_dynamics(general, Q, V, A),
                               ldr.inverse_dynamics(builtin, Q, V, A), atol=1e-10)
    mimic = bundled("double_pendulum.urdf")
    Q, V, A = _states(mimic, 4, 6)
    tau = ldr.inverse_dynamics(mimic, Q, V, A)
    np.testing.assert_allclose(ldr.forward_dynamics(mimic, Q, V, tau), A, atol=1e-9)


def test_a_bad_row_is_named_and_nothing_is_returned(arm, floating):
    Q, V, A = _states(arm, 50, 7)
    V[31, 2] = np.nan
    with pytest.raises(ldr.InputError, match=r"row 31: non-finite"):
        ldr.inverse_dynamics(arm, Q, V, A)
    with pytest.raises(ldr.InputError, match=r"\(50, 7\)"):
        ldr.inverse_dynamics(arm, Q, V[:49], A)
    with pytest.raises(ldr.InputError, match="f_ext"):
        ldr.inverse_dynamics(arm, Q, V, A, f_ext=np.zeros((arm.njoints, 6)))
    Qf, Vf, Af = _states(floating, 40, 8)
    Qf[12, 3:7] *= 1.5
    with pytest.raises(ldr.InputError, match=r"row 12: .*quaternion"):
        ldr.forward_dynamics(floating, Qf, Vf, Af)


def test_concurrent_batched_callers(arm):
    """Two Python threads running batched kernels at once (a MultiThreadedExecutor's case)."""
    Q, V, A = _states(arm, 400, 9)
    ref = ldr.inverse_dynamics(arm, Q, V, A)
    bad = []

    def worker():
        for _ in range(20):
            if not np.array_equal(ldr.inverse_dynamics(arm, Q, V, A), ref):
                bad.append(1)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bad == [] and batch.WORKERS >= 1


@pytest.mark.parametrize("fn,nargs", [("inverse_dynamics", 3), ("forward_dynamics", 3),
                                      ("mass_matrix", 1), ("gravity_torques", 1),
                                      ("nonlinear_effects", 2)])
def test_no_allocation_beyond_the_returned_array(fn, nargs):
    """What a call leaves allocated is its result; what it allocates on the way is small and
    does not grow with the model (the work memory is the Data's). Without mimic joints, which
    forward dynamics solves through M."""
    floating = zoo(0, mimic=False)
    Q, V, A = _states(floating, 1, 10)
    args = (Q[0], V[0], A[0])[:nargs]
    f = getattr(ldr, fn)
    out = f(floating, *args)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        kept = [f(floating, *args) for _ in range(50)]
        cur, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    per_call = (cur - base) / len(kept)
    assert per_call <= out.nbytes + 200, per_call      # the array and its header
    assert peak - cur < 2048, peak - cur


def test_with_gravity_keeps_the_loops():
    import os
    four_bar = ldr.load_urdf(os.path.join(os.path.dirname(__file__), "..", "urdf", "loops",
                                          "four_bar.urdf"))
    assert four_bar.nc > 0
    moon = four_bar.with_gravity((0.0, 0.0, -1.62))
    assert moon.nc == four_bar.nc and [lp.name for lp in moon.loops] == \
        [lp.name for lp in four_bar.loops]
    q = ldr.assemble(moon, ldr.neutral_configuration(moon) + 0.05)
    assert np.abs(ldr.constraint_residual(moon, q)).max() < 1e-10
    tree = four_bar.with_loops(())
    assert tree.nc == 0 and four_bar.nc > 0
