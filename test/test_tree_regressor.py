"""The inverse-dynamics regressor on the tree plan (kernels/tree_regressor.py).

Its rows must be the general kernel's (algorithms/regressor.py: 6 x nv Jacobians moved with
SE(3) adjoints, a dense 6 x 10 wrench map per body) to 1e-12 of the largest entry, on fixed
bases, off-axis and prismatic joints, floating bases and big angles; Pinocchio's
``computeJointTorqueRegressor`` to 1e-10; and the identity Y theta = tau - armature a with
``ldr.inverse_dynamics``. The public paths (``ldr.regressor`` with v_r = v, the
identification's stacking) take it on the models it serves, name a bad sample, and give the
same bits for any form of the same samples.
"""
import math

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms import _inputs as I
from lie_dynamics_ros.algorithms import regressor as R
from lie_dynamics_ros.algorithms.tree_plan import regressor_plan, tree_plan
from lie_dynamics_ros.identification.regressors import stacked_regressor
from lie_dynamics_ros.kernels import layout as L
from lie_dynamics_ros.kernels import soa as KS
from lie_dynamics_ros.kernels import tree_regressor as KR
from lie_dynamics_ros.kernels.tree import TOPO
from oracle import Oracle, erd
import test_batch_soa_free as F
from test_tree_crba import free_model
from test_tree_rnea import PATHS, model as fixed_model, revolute_q, state

import pinocchio as pin  # noqa: E402  (a test oracle only)

TOL = 1e-12
FIXED = ["arm7", "xarm7", "ur5", "axes_tree"]
FLOATING = ["go2", "solo12", "arm_and_free"]


def model(name):
    return free_model(name) if name in FLOATING else fixed_model(name)


def states(m, n, seed):
    if m.nq == m.nv:
        rng = np.random.default_rng(seed)
        return [state(m, rng) for _ in range(n)]
    return [tuple(x) for x in zip(*F.states(m, n, seed=seed))]


def general(m, q, v, a):
    """The general kernel's inverse-dynamics regressor (status, Y)."""
    d = m.create_data()
    Y = np.empty((m.nv, 10 * m.njoints))
    st = R.regressor_kernel(m.mi, m.mc, m.mI, d.dv, d.dm, q, v, v, a, Y, d.W, d.Wd, True)
    return st, Y


def closed():
    """Both entries compiled for their one signature, as the public calls leave them."""
    for name in KR.SIGNATURES:
        I.compile_entry(name, KR.SIGNATURES, I.tree_ready)


def tree(m, q, v, a, extra=0):
    """The tree entry (status, Y), ``extra`` columns past 10 nb holding a sentinel."""
    closed()
    Y = np.full((m.nv, 10 * m.njoints + extra), 7.0)
    return KR.regressor(regressor_plan(m), q, v, a, Y), Y


def rel(ours, ref):
    return np.abs(ours - ref).max() / max(np.abs(ref).max(), 1e-300)


@pytest.mark.parametrize("big", [0.0, 1e3, 3 * KS.BIG_ANGLE])
@pytest.mark.parametrize("name", FIXED + FLOATING)
def test_equals_the_general_kernel(name, big):
    """Random states; ``big`` added to every revolute angle (beyond BIG_ANGLE the sine hands
    over to libm). About an off-axis joint the general kernel's Rodrigues formula takes the
    angle as |a q|, an ulp or two of q off: the tolerance grows by that."""
    m = model(name)
    assert regressor_plan(m) is not None
    tol = TOL + (4 * np.finfo(float).eps * big if name in ("axes_tree", "arm_and_free") else 0)
    rng = np.random.default_rng(3)
    nr = 10 * m.njoints
    for q, v, a in states(m, 8, seed=5):
        q = q.copy()
        q[revolute_q(m)] += big * rng.choice([-1.0, 1.0], len(revolute_q(m)))
        st, Y = tree(m, q, v, a, extra=3)
        st_ref, ref = general(m, q, v, a)
        assert st == st_ref == L.OK
        assert rel(Y[:, :nr], ref) <= tol, rel(Y[:, :nr], ref)
        assert (Y[:, nr:] == 7.0).all()                 # the columns past 10 nb untouched


@pytest.mark.parametrize("name", ["axes_tree", "go2"])
def test_rows_entry_is_the_single_state_entry(name):
    """regressor_rows over N samples: each sample's rows are the single entry's, bit for bit
    (one inlined body), and its extra columns are left alone."""
    m = model(name)
    Q, V, A = (np.ascontiguousarray(x) for x in zip(*states(m, 40, seed=6)))
    nr = 10 * m.njoints
    Y = np.full((40, m.nv, nr + 2), 7.0)
    status = np.full(40, -1, dtype=np.int64)
    closed()
    assert KR.regressor_rows(regressor_plan(m), Q, V, A, Y, status) == L.OK
    assert (status == L.OK).all() and (Y[:, :, nr:] == 7.0).all()
    for k in range(40):
        assert np.array_equal(Y[k, :, :nr], tree(m, Q[k], V[k], A[k])[1])


@pytest.mark.parametrize("name", ["xarm7_armature", "axes_tree_armature", "go2", "solo12",
                                  "arm_and_free"])
def test_times_the_parameters_is_the_inverse_dynamics(name):
    """Y theta + armature a = ldr.inverse_dynamics (an independent kernel), 1e-10."""
    m = free_model(name) if name in FLOATING else fixed_model(name)
    theta = ldr.inertial_parameters(m)
    for q, v, a in states(m, 10, seed=7):
        st, Y = tree(m, q, v, a)
        assert st == L.OK
        tau = ldr.inverse_dynamics(m, q, v, a)
        assert rel(Y @ theta + m.armature * a, tau) <= 1e-10


def _pin_columns(m, orc):
    """Our column -> Pinocchio's, bodies matched by joint name."""
    names = [j.name for j in m.joints]
    cols = np.empty(10 * m.njoints, dtype=int)
    assert orc.pm.njoints - 1 == m.njoints
    for i in range(1, orc.pm.njoints):
        b = names.index(orc.pm.names[i])
        cols[10 * b:10 * b + 10] = np.arange(10 * (i - 1), 10 * i)
    return cols


@pytest.mark.parametrize("name", ["xarm7", "ur5", "solo12"])
def test_against_pinocchio(name):
    """ldr.regressor(q, v, v, a), the tree entry, against computeJointTorqueRegressor (the
    floating base's v is a body twist in both)."""
    m = model(name)
    orc = Oracle(m, F.PATHS[name] if name in FLOATING else PATHS[name], name in FLOATING)
    cols = _pin_columns(m, orc)
    mp = orc.map
    worst = 0.0
    for q, v, a in states(m, 10, seed=8):
        Yp = np.array(pin.computeJointTorqueRegressor(orc.pm, orc.pd, mp.q_to_pin(q),
                                                      mp.v_to_pin(v, q), mp.a_to_pin(a, q, v)))
        ref = mp.T(q).T @ Yp[:, cols]
        Y = ldr.regressor(m, q, v, v, a)
        assert np.array_equal(Y, tree(m, q, v, a)[1])       # the public call takes the entry
        worst = max(worst, rel(Y, ref))
    assert worst <= 1e-10, worst


def test_plan_frames_turn_the_joint_axis():
    """The C_j of the regressor plan take e_z to each joint's axis (rotations); the plan's
    first columns are tree_plan's."""
    m = fixed_model("axes_tree")
    P, T = regressor_plan(m), tree_plan(m)
    assert not P.flags.writeable and np.array_equal(P[:, :T.shape[1]], T)
    for i in range(1, P.shape[0]):
        C = P[i, KR.GCR:KR.GCR + 9].reshape(3, 3)
        np.testing.assert_allclose(C.T @ C, np.eye(3), atol=1e-15)
        np.testing.assert_allclose(C[:, 2], m.mc[i, L.AX:L.AX + 3], atol=1e-15)
    assert regressor_plan(m) is P                           # kept with the model


def test_stacking_takes_the_tree_entry_and_any_form_of_the_samples():
    """The identification's stacking: the tree entry's bits, whatever the samples' dtype or
    layout; ldr.regressor with v_r = v (the same object or not, a list) gives them too."""
    m = fixed_model("arm7")
    Q, V, A = (np.ascontiguousarray(x) for x in zip(*states(m, 30, seed=9)))
    nr = 10 * m.njoints
    W = stacked_regressor(m, Q, V, A, True, False).reshape(30, m.nv, -1)
    for k in range(30):
        assert np.array_equal(W[k, :, :nr], tree(m, Q[k], V[k], A[k])[1])
        assert np.array_equal(W[k, :, :nr], ldr.regressor(m, Q[k], V[k], V[k].copy(), A[k]))
    assert np.array_equal(ldr.regressor(m, list(Q[0]), list(V[0]), list(V[0]), A[0]),
                          W[0, :, :nr])
    Qi, Vi, Ai = (np.round(x).astype(np.int64) for x in (Q, V, A))
    ref = stacked_regressor(m, Qi.astype(float), Vi.astype(float), Ai.astype(float), True,
                            False)
    assert np.array_equal(stacked_regressor(m, Qi, Vi, Ai, True, False), ref)
    Qs, Vs, As = (np.repeat(x, 2, axis=1)[:, ::2] for x in (Q, V, A))      # strided views
    assert not Qs.flags.c_contiguous
    assert np.array_equal(stacked_regressor(m, Qs, Vs, As, True, False),
                          W.reshape(30 * m.nv, -1))
    ro = Q.copy()
    ro.flags.writeable = False
    assert np.array_equal(stacked_regressor(m, ro, V, A, True, False), W.reshape(30 * m.nv, -1))


def test_entries_are_closed_to_other_types():
    """The public calls compile each entry for its one signature and close it: an int64 q
    or a float32 output is a TypeError, never reinterpreted memory."""
    m = fixed_model("arm7")
    q, v, a = states(m, 1, seed=1)[0]
    ldr.regressor(m, q, v, v, a)
    stacked_regressor(m, *(np.zeros((2, n)) for n in (m.nq, m.nv, m.nv)), True, False)
    for name, (fn, sig) in KR.SIGNATURES.items():
        assert fn.signatures == [sig], name
    with pytest.raises(TypeError):
        KR.regressor(regressor_plan(m), np.arange(m.nq), v, a, np.empty((m.nv, 70)))
    with pytest.raises(TypeError):
        KR.regressor(regressor_plan(m), q, v, a, np.empty((m.nv, 70), dtype=np.float32))


def test_a_plan_or_output_of_another_shape_is_refused():
    m = fixed_model("arm7")
    q, v, a = states(m, 1, seed=2)[0]
    Y = np.empty((m.nv, 10 * m.njoints))
    narrow = np.ascontiguousarray(regressor_plan(m)[:, :KR.GCR])     # tree_plan's columns only
    narrow.flags.writeable = False
    closed()
    assert KR.regressor(narrow, q, v, a, Y) == L.BAD_SIZE
    assert KR.regressor(regressor_plan(m), q, v, a, Y[:, :-1].copy()) == L.BAD_SIZE
    assert KR.regressor(regressor_plan(m), q[:-1].copy(), v, a, Y) == L.BAD_SIZE
    st = np.zeros(3, dtype=np.int64)
    assert KR.regressor_rows(regressor_plan(m), np.zeros((3, m.nq)), np.zeros((2, m.nv)),
                             np.zeros((3, m.nv)), np.empty((3, m.nv, 70)), st) == L.BAD_SIZE


@pytest.mark.parametrize("which", ["q", "v", "a"])
@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_a_non_finite_sample_is_named(which, bad):
    m = fixed_model("axes_tree")
    Q, V, A = (np.ascontiguousarray(x) for x in zip(*states(m, 50, seed=10)))
    {"q": Q, "v": V, "a": A}[which][37, m.nv // 2] = bad
    st, _ = tree(m, Q[37], V[37], A[37])
    assert st == L.NONFINITE
    with pytest.raises(ldr.InputError,
                       match=rf"^sample 37: non-finite values \(NaN or Inf\) in .*{which}"):
        stacked_regressor(m, Q, V, A, True, False)
    with pytest.raises(ldr.InputError, match=rf"non-finite values \(NaN or Inf\) in .*{which}"):
        ldr.regressor(m, Q[37], V[37], V[37], A[37])


def test_free_root_non_finite_and_non_unit_quaternion():
    m = free_model("go2")
    Q, V, A = (np.ascontiguousarray(x) for x in zip(*states(m, 20, seed=11)))
    Q[4, 5] = math.nan                       # the base quaternion
    Q[9, 3:7] *= 1 + 2e-6
    status = np.zeros(20, dtype=np.int64)
    Y = np.empty((20, m.nv, 10 * m.njoints))
    closed()
    KR.regressor_rows(regressor_plan(m), Q, V, A, Y, status)
    assert status[4] == L.NONFINITE and status[9] == L.BAD_QUATERNION
    assert (np.delete(status, [4, 9]) == L.OK).all()
    with pytest.raises(ldr.InputError, match=r"^sample 4: non-finite values .* in q"):
        stacked_regressor(m, Q, V, A, True, False)
    with pytest.raises(ldr.InputError, match=r"^sample 4: a quaternion in q is not of unit"):
        stacked_regressor(m, Q[5:], V[5:], A[5:], True, False)        # sample 9 is now 4


def test_finite_inputs_with_an_overflowing_result():
    m = fixed_model("arm7")
    q, v, a = states(m, 1, seed=12)[0]
    v = np.full(m.nv, 1e160)                 # (1e160)^2 overflows float64
    assert tree(m, q, v, a)[0] == L.OVERFLOW
    with pytest.raises(ldr.InputError, match="overflow"):
        ldr.regressor(m, q, v, v, a)


def test_models_the_plan_does_not_serve_keep_the_general_kernel():
    """A mimic joint (panda's finger) or a free joint below a body: no regressor plan; the
    stacking is the general kernel's."""
    for m in (ldr.load_urdf(erd("panda_description/urdf/panda.urdf")),
              F.free_tree(free_below=True)):
        assert regressor_plan(m) is None
        rng = np.random.default_rng(13)
        q = np.array([ldr.random_configuration(m, rng) for _ in range(3)])
        v, a = rng.normal(size=(2, 3, m.nv))
        W = stacked_regressor(m, q, v, a, False, False).reshape(3, m.nv, -1)
        for k in range(3):
            assert np.array_equal(W[k], general(m, q[k], v[k], a[k])[1])


def test_a_free_root_is_the_only_row_kind_besides_revolute_and_prismatic():
    """The plans these tests rely on: every row kind occurs."""
    kinds = set()
    for name in ("axes_tree", "arm_and_free"):
        P = regressor_plan(model(name))
        kinds |= set(P[1:, TOPO + KS.TK].astype(int))
    assert kinds == {KS.REVOLUTE, KS.PRISMATIC, KS.FREE}


def test_a_model_without_moving_bodies_has_no_regressor_plan():
    b = ldr.ModelBuilder("welded")
    b.add_link("base")
    b.add_link("tool", mass=1.0, com=(0, 0, 0.1), inertia=np.eye(3) * 1e-2)
    b.add_joint("weld", ldr.Fixed(), "base", "tool")
    m = b.build()
    assert regressor_plan(m) is None
    assert ldr.regressor(m, [], [], [], []).shape == (0, 0)
