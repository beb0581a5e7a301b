"""The structure-of-arrays batched CRBA (``algorithms/batch_soa_crba.py``, ``kernels/soa_crba.py``).

It must give what ``ldr.mass_matrix`` gives state by state (to 1e-12 of each matrix's largest
entry), for every batch size around the block of ``kernels.soa.B`` states; be symmetric; agree
with the SoA RNEA (M a = RNEA(q, v, a) - RNEA(q, v, 0)) and with Pinocchio's CRBA (armature
included); and be what the public batched call returns.
"""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms.batch_soa import MIN_STATES, inverse_dynamics_soa, soa_plan
from lie_dynamics_ros.algorithms.batch_soa_crba import mass_matrix_soa
from lie_dynamics_ros.kernels import soa as KS
from oracle import Oracle
from test_batch_soa import PATHS, ROBOTS, _mimic_model, model, states
from models import general_twin, zoo

TOL = 1e-12


def assert_matrices_close(ours, ref):
    assert ours.shape == ref.shape
    scale = np.maximum(np.abs(ref).max(axis=(1, 2), keepdims=True), 1e-300)
    err = (np.abs(ours - ref) / scale).max()
    assert err <= TOL, f"matrix-relative deviation {err:.2e}"


def per_state(m, Q):
    return np.array([ldr.mass_matrix(m, q) for q in Q]).reshape(len(Q), m.nv, m.nv)


@pytest.mark.parametrize("N", [1, 7, KS.B - 1, KS.B, KS.B + 1, MIN_STATES, 1000])
@pytest.mark.parametrize("name", ROBOTS)
def test_equals_the_per_state_path(name, N):
    m = model(name)
    Q, _, _ = states(m, N, seed=N)
    M = mass_matrix_soa(m, Q)
    assert_matrices_close(M, per_state(m, Q))
    np.testing.assert_array_equal(M, np.swapaxes(M, 1, 2))      # mirrored, not recomputed
    batched = ldr.mass_matrix(m, Q)
    if N >= MIN_STATES:      # the public batched call takes this kernel
        np.testing.assert_array_equal(batched, M)
    else:
        assert_matrices_close(batched, per_state(m, Q))


@pytest.mark.parametrize("name", ROBOTS)
def test_agrees_with_the_soa_rnea(name):
    """M(q) a = RNEA(q, v, a) - RNEA(q, v, 0) row by row (armature and prismatic included)."""
    m = model(name)
    Q, V, A = states(m, 200, seed=5)
    lhs = np.einsum("nij,nj->ni", mass_matrix_soa(m, Q), A)
    rhs = inverse_dynamics_soa(m, Q, V, A) - inverse_dynamics_soa(m, Q, V, np.zeros_like(A))
    np.testing.assert_allclose(lhs, rhs, rtol=0, atol=1e-10 * np.abs(rhs).max())


def test_armature_is_on_the_diagonal():
    m0, m = model("xarm7"), model("xarm7_armature")
    Q, _, _ = states(m, 20)
    d = mass_matrix_soa(m, Q) - mass_matrix_soa(m0, Q)
    np.testing.assert_allclose(d, np.broadcast_to(np.diag(m.armature), d.shape), rtol=1e-9,
                               atol=1e-12)


@pytest.mark.parametrize("name", ["arm7", "xarm7", "ur5", "xarm7_armature"])
def test_against_pinocchio(name):
    m = model(name)
    oracle = Oracle(m, PATHS[name.split("_")[0]], False)
    pm = oracle.pm
    for jn, vi in zip(m.joint_names, m.joint_v_index):
        pm.armature[pm.joints[pm.getJointId(jn)].idx_v] = m.armature[vi]
    Q, _, _ = states(m, 5, seed=11)
    M = mass_matrix_soa(m, Q)
    for r in range(5):
        ref = oracle.crba(Q[r])
        assert np.abs(M[r] - ref).max() <= 1e-10 * np.abs(ref).max()


def test_large_angles_use_libm():
    m = model("arm7")
    Q, _, _ = states(m, 20)
    Q[3, 2] += 1e6
    Q[17, 0] -= 3e7
    assert_matrices_close(mass_matrix_soa(m, Q), per_state(m, Q))


def test_input_forms_and_plan():
    m = model("ur5")
    Q, _, _ = states(m, 10)
    ref = mass_matrix_soa(m, Q)
    np.testing.assert_array_equal(mass_matrix_soa(m, Q, soa_plan(m)), ref)
    np.testing.assert_array_equal(mass_matrix_soa(m, np.asfortranarray(Q).tolist()), ref)
    with pytest.raises(ldr.InputError, match="plan was made for another model"):
        mass_matrix_soa(m, Q, soa_plan(model("arm7")))
    with pytest.raises(ldr.InputError, match=r"batched q must have shape"):
        mass_matrix_soa(m, np.zeros((3, m.nq + 1)))
    assert mass_matrix_soa(m, np.zeros((0, m.nq))).shape == (0, m.nv, m.nv)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_row_is_named(bad):
    m = model("xarm7")
    Q, _, _ = states(m, 40)
    Q[29, 3] = bad
    with pytest.raises(ldr.InputError, match=r"row 29: non-finite .* in q$"):
        mass_matrix_soa(m, Q)
    with pytest.raises(ldr.InputError, match=r"row 29: non-finite .* in q$"):
        ldr.mass_matrix(m, Q)


@pytest.mark.parametrize("make, says", [
    (lambda: zoo(), "joint 'ball' is spherical"),
    (_mimic_model, "joint 'j2' is a mimic joint"),
    (lambda: general_twin()[1], "is general"),
])
def test_unsupported_models_are_refused_and_the_public_call_falls_back(make, says):
    m = make()
    Q, _, _ = states(m, MIN_STATES)
    with pytest.raises(ldr.InputError, match=says.replace("(", r"\(")):
        mass_matrix_soa(m, Q)
    np.testing.assert_array_equal(ldr.mass_matrix(m, Q), per_state(m, Q))


def test_concurrent_callers_get_bit_identical_results():
    m = model("xarm7")
    plan = soa_plan(m)
    batches = [states(m, 700 + 50 * k, seed=k)[0] for k in range(4)]
    alone = [mass_matrix_soa(m, Q, plan) for Q in batches]
    with ThreadPoolExecutor(4) as ex:
        for _ in range(3):
            together = list(ex.map(lambda Q: mass_matrix_soa(m, Q, plan), batches))
            public = list(ex.map(lambda Q: ldr.mass_matrix(m, Q), batches))
            for x, y, z in zip(alone, together, public):
                np.testing.assert_array_equal(x, y)
                np.testing.assert_array_equal(x, z)
