"""The structure-of-arrays batched ABA (``algorithms/batch_soa_aba.py``, ``kernels/soa_aba.py``).

It must give what ``ldr.forward_dynamics`` gives state by state (to 1e-12 of each row's largest
acceleration: another summation order, FMA contraction and the polynomial sine), for every
batch size around the block of ``kernels.soa.B`` states; invert the SoA RNEA; agree with
Pinocchio's ABA (armature included); and be what the public batched call returns. The models
of the SoA RNEA (revolute/prismatic trees) are served; others are refused, bad rows named.
"""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms.batch_soa import MIN_STATES, inverse_dynamics_soa, soa_plan
from lie_dynamics_ros.algorithms.batch_soa_aba import forward_dynamics_soa
from lie_dynamics_ros.kernels import soa as KS
from oracle import Oracle, rel_err
from test_batch_soa import PATHS, ROBOTS, _mimic_model, assert_rows_close, model, states
from models import general_twin, zoo


def per_state(m, Q, V, T):
    """The single-state path, row by row (the reference the SoA kernel must reproduce)."""
    return np.array([ldr.forward_dynamics(m, q, v, t) for q, v, t in zip(Q, V, T)])


@pytest.mark.parametrize("N", [1, 7, KS.B - 1, KS.B, KS.B + 1, MIN_STATES, 1000])
@pytest.mark.parametrize("name", ROBOTS)
def test_equals_the_per_state_path(name, N):
    m = model(name)
    Q, V, T = states(m, N, seed=N)
    T *= 5.0
    assert_rows_close(forward_dynamics_soa(m, Q, V, T), per_state(m, Q, V, T))
    batched = ldr.forward_dynamics(m, Q, V, T)
    if N >= MIN_STATES:      # the public batched call takes this kernel
        np.testing.assert_array_equal(batched, forward_dynamics_soa(m, Q, V, T))
    else:
        assert_rows_close(batched, per_state(m, Q, V, T))


@pytest.mark.parametrize("name", ROBOTS)
def test_inverts_the_soa_rnea(name):
    """ABA(q, v, RNEA(q, v, a)) = a, both batched, armature and prismatic joints included."""
    m = model(name)
    Q, V, A = states(m, 300, seed=7)
    acc = forward_dynamics_soa(m, Q, V, inverse_dynamics_soa(m, Q, V, A))
    np.testing.assert_allclose(acc, A, rtol=0, atol=1e-10 * np.abs(A).max())


def test_mass_matrix_identity():
    """M(q) qdd = tau - (C v + g) on each row (CRBA and RNEA of the per-state path)."""
    m = model("axes_tree")
    Q, V, T = states(m, 40, seed=3)
    acc = forward_dynamics_soa(m, Q, V, T)
    for q, v, t, a in zip(Q, V, T, acc):
        r = ldr.mass_matrix(m, q) @ a - (t - ldr.nonlinear_effects(m, q, v))
        assert np.abs(r).max() <= 1e-11 * (1 + np.abs(t).max())


def test_armature_changes_the_acceleration_as_the_single_call():
    m0, m = model("xarm7"), model("xarm7_armature")
    Q, V, T = states(m, 50, seed=4)
    a0, a = forward_dynamics_soa(m0, Q, V, T), forward_dynamics_soa(m, Q, V, T)
    assert np.abs(a - a0).max() > 1e-3 * np.abs(a0).max()    # the armature is not ignored
    assert_rows_close(a, per_state(m, Q, V, T))


@pytest.mark.parametrize("name", ["arm7", "xarm7", "ur5", "xarm7_armature"])
def test_against_pinocchio(name):
    m = model(name)
    oracle = Oracle(m, PATHS[name.split("_")[0]], False)
    pm = oracle.pm
    for jn, vi in zip(m.joint_names, m.joint_v_index):
        pm.armature[pm.joints[pm.getJointId(jn)].idx_v] = m.armature[vi]
    Q, V, T = states(m, 5, seed=11)
    acc = forward_dynamics_soa(m, Q, V, T)
    for r in range(5):
        ref = oracle.aba(Q[r], V[r], T[r])
        assert rel_err(acc[r], ref) <= 1e-9, (r, rel_err(acc[r], ref))


def test_gravity_is_honoured():
    """At rest with zero torque each row falls as the single call says, for another gravity."""
    m = model("axes_tree").with_gravity((1.0, -2.0, -9.0))
    Q, _, _ = states(m, 33)
    Z = np.zeros((33, m.nv))
    acc = forward_dynamics_soa(m, Q, Z, Z)
    assert np.abs(acc).max() > 1.0
    assert_rows_close(acc, per_state(m, Q, Z, Z))


def test_large_angles_use_libm():
    m = model("arm7")
    Q, V, T = states(m, 20)
    Q[3, 2] += 1e6
    Q[17, 0] -= 3e7
    assert_rows_close(forward_dynamics_soa(m, Q, V, T), per_state(m, Q, V, T))


def test_plan_reuse_and_input_forms():
    m = model("ur5")
    Q, V, T = states(m, 10)
    ref = forward_dynamics_soa(m, Q, V, T)
    np.testing.assert_array_equal(forward_dynamics_soa(m, Q, V, T, soa_plan(m)), ref)
    np.testing.assert_array_equal(forward_dynamics_soa(m, Q.tolist(), np.asfortranarray(V),
                                                       np.hstack([T, T])[:, :m.nv]), ref)
    out = forward_dynamics_soa(m, Q, V, T)
    assert out is not ref and out.flags.c_contiguous and out.shape == (10, m.nv)
    with pytest.raises(ldr.InputError, match="plan was made for another model"):
        forward_dynamics_soa(m, Q, V, T, soa_plan(model("arm7")))


@pytest.mark.parametrize("arg", ["q", "v", "tau"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_row_is_named(arg, bad):
    m = model("xarm7")
    Q, V, T = states(m, 40)
    {"q": Q, "v": V, "tau": T}[arg][23, 4] = bad
    with pytest.raises(ldr.InputError, match=rf"row 23: non-finite .* in {arg}$"):
        forward_dynamics_soa(m, Q, V, T)
    with pytest.raises(ldr.InputError, match=rf"row 23: non-finite .* in {arg}$"):
        ldr.forward_dynamics(m, Q, V, T)


def test_overflow_row_is_named():
    m = model("arm7")
    Q, V, T = states(m, 40)
    V[37] = 1e160
    with pytest.raises(ldr.InputError, match="row 37: overflow"):
        forward_dynamics_soa(m, Q, V, T)


def test_singular_articulated_inertia_names_the_joint():
    """A revolute joint whose subtree has no inertia about its axis (a point mass on the axis):
    D = 0, as the single call says."""
    b = ldr.ModelBuilder("singular")
    b.add_link("base")
    b.add_link("upper", mass=1.0, com=(0.3, 0, 0), inertia=np.eye(3) * 0.01)
    b.add_link("bead", mass=1.0, com=(0, 0, 0.2), inertia=np.zeros((3, 3)))
    b.add_joint("shoulder", ldr.Revolute((0, 1, 0)), "base", "upper")
    b.add_joint("spin", ldr.Revolute((0, 0, 1)), "upper", "bead")
    m = b.build()
    Q, V, T = states(m, 40)
    with pytest.raises(ldr.InputError, match="singular articulated inertia: joint 'spin'"):
        ldr.forward_dynamics(m, Q[0], V[0], T[0])
    with pytest.raises(ldr.InputError, match="row 0: singular articulated inertia: joint 'spin'"):
        forward_dynamics_soa(m, Q, V, T)


@pytest.mark.parametrize("shapes, arg", [(((5, 6), (5, 7), (5, 7)), "q"),
                                         (((5, 7), (4, 7), (5, 7)), "v"),
                                         (((5, 7), (5, 7), (5,)), "tau")])
def test_wrong_shapes_are_named(shapes, arg):
    m = model("arm7")
    with pytest.raises(ldr.InputError, match=rf"batched {arg} must have shape"):
        forward_dynamics_soa(m, *[np.zeros(s) for s in shapes])


@pytest.mark.parametrize("make, says", [
    (lambda: zoo(), "joint 'ball' is spherical"),
    (_mimic_model, "joint 'j2' is a mimic joint"),
    (lambda: general_twin()[1], "is general"),
])
def test_unsupported_models_are_refused_and_the_public_call_falls_back(make, says):
    m = make()
    Q, V, T = states(m, MIN_STATES)
    with pytest.raises(ldr.InputError, match="use ldr.forward_dynamics"):
        forward_dynamics_soa(m, Q, V, T)
    assert_rows_close(ldr.forward_dynamics(m, Q, V, T), per_state(m, Q, V, T))


def test_empty_batch():
    m = model("arm7")
    assert forward_dynamics_soa(m, np.zeros((0, m.nq)), np.zeros((0, m.nv)),
                                np.zeros((0, m.nv))).shape == (0, m.nv)


def test_concurrent_callers_get_bit_identical_results():
    """Four Python threads (a multi-threaded executor) share one model and its plan, each
    batch itself split over the pool."""
    m = model("xarm7")
    plan = soa_plan(m)
    batches = [states(m, 700 + 50 * k, seed=k) for k in range(4)]
    alone = [forward_dynamics_soa(m, *s, plan=plan) for s in batches]
    with ThreadPoolExecutor(4) as ex:
        for _ in range(3):
            together = list(ex.map(lambda s: forward_dynamics_soa(m, *s, plan=plan), batches))
            for x, y in zip(alone, together):
                np.testing.assert_array_equal(x, y)
            public = list(ex.map(lambda s: ldr.forward_dynamics(m, *s), batches))
            for x, y in zip(alone, public):
                np.testing.assert_array_equal(x, y)
