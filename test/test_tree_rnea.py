"""The single-state RNEA on the tree plan (kernels/tree_rnea.py): ID, g and C v + g.

Each entry must give what the general compiled entry (kernels/plan.inverse_dynamics, 6 x nv S
matrices and 6 x 6 inertias) gives on the same states, to 1e-12 of the largest torque (another
frame per body, another summation order, FMA contraction, a polynomial sine); what Pinocchio
gives to 1e-10; the status codes of the general path; and the public functions take it for a
float64 state and give the same bits for any other form of the same state.
"""
import math

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms.tree_plan import tree_plan
from lie_dynamics_ros.kernels import layout as L
from lie_dynamics_ros.kernels import plan as KP
from lie_dynamics_ros.kernels import soa as KS
from lie_dynamics_ros.kernels import tree_rnea as KR
from lie_dynamics_ros.kernels.tree import MAX_BODIES, TOPO
from oracle import Oracle, bundled, erd, rel_err
from test_batch_soa import axes_tree

TOL = 1e-12
PATHS = {"arm7": bundled("arm7.urdf"), "xarm7": erd("xarm_description/urdf/xarm7.urdf"),
         "ur5": erd("ur_description/urdf/ur5_robot.urdf")}
_CACHE = {}


def model(name):
    if name not in _CACHE:
        if name == "axes_tree":         # prismatic joints, off-axis and negative axes, branches
            _CACHE[name] = axes_tree()
        elif name.endswith("_armature"):
            m0 = model(name[:-len("_armature")])
            _CACHE[name] = m0.with_joint_dynamics(
                armature=np.random.default_rng(3).uniform(0.05, 0.5, m0.nv))
        else:
            _CACHE[name] = ldr.load_urdf(PATHS[name])
    return _CACHE[name]


def state(m, rng):
    return (np.asarray(ldr.random_configuration(m, rng), dtype=float),
            rng.uniform(-2, 2, m.nv), rng.uniform(-3, 3, m.nv))


def revolute_q(m):
    """Indices in q of the revolute joints (for the big angles)."""
    P = tree_plan(m)
    return [int(P[i, TOPO + KS.TQ]) for i in range(1, P.shape[0])
            if P[i, TOPO + KS.TK] == KS.REVOLUTE]


def general(m, q, v, a):
    """The general compiled entry on the same state (status, tau)."""
    tau = np.empty(m.nv)
    st = KP.inverse_dynamics(m.create_data().buf, q, v, a, tau)
    return st, tau


def tree(m, q, v, a, which):
    """The tree entry ``which`` (status, tau)."""
    P, tau = tree_plan(m), np.empty(m.nv)
    args = {"inverse_dynamics": (q, v, a), "nonlinear": (q, v), "gravity": (q,)}[which]
    return getattr(KR, which)(P, *args, tau), tau


def assert_close(ours, ref, tol=TOL):
    err = np.abs(ours - ref).max() / max(np.abs(ref).max(), 1e-300)
    assert err <= tol, f"relative deviation {err:.2e}"


ROBOTS = ["arm7", "xarm7", "ur5", "axes_tree", "xarm7_armature", "axes_tree_armature"]


@pytest.mark.parametrize("big", [0.0, 1e3, 3 * KS.BIG_ANGLE])
@pytest.mark.parametrize("name", ROBOTS)
def test_equals_the_general_kernel(name, big):
    """ID, g (v = a = 0) and C v + g (a = 0) against kernels/plan.py's entry; ``big`` is added
    to every revolute angle (beyond BIG_ANGLE the sine hands over to libm). About an off-axis
    joint the general kernel's Rodrigues formula takes the angle as |a q|, an ulp or two of q
    off: the tolerance grows by that."""
    m = model(name)
    tol = TOL + (4 * np.finfo(float).eps * big if name.startswith("axes_tree") else 0.0)
    assert tree_plan(m) is not None
    rng = np.random.default_rng(7)
    z = np.zeros(m.nv)
    for _ in range(10):
        q, v, a = state(m, rng)
        q[revolute_q(m)] += big * rng.choice([-1.0, 1.0], len(revolute_q(m)))
        for which, (vv, aa) in (("inverse_dynamics", (v, a)), ("nonlinear", (v, z)),
                                ("gravity", (z, z))):
            st, tau = tree(m, q, vv, aa, which)
            st_ref, ref = general(m, q, vv, aa)
            assert st == st_ref == L.OK
            assert_close(tau, ref, tol)


def test_armature_is_in_the_torque():
    m0, m = model("axes_tree"), model("axes_tree_armature")
    rng = np.random.default_rng(2)
    q, v, a = state(m, rng)
    d = tree(m, q, v, a, "inverse_dynamics")[1] - tree(m0, q, v, a, "inverse_dynamics")[1]
    np.testing.assert_allclose(d, a * m.armature, rtol=1e-9, atol=1e-12)
    assert np.array_equal(tree(m, q, v, a, "nonlinear")[1], tree(m0, q, v, a, "nonlinear")[1])


@pytest.mark.parametrize("name", ["xarm7", "ur5", "xarm7_armature"])
def test_against_pinocchio(name):
    m = model(name)
    oracle = Oracle(m, PATHS[name.split("_")[0]], False)
    pm = oracle.pm
    for jn, vi in zip(m.joint_names, m.joint_v_index):
        pm.armature[pm.joints[pm.getJointId(jn)].idx_v] = m.armature[vi]
    rng = np.random.default_rng(11)
    z = np.zeros(m.nv)
    for _ in range(5):
        q, v, a = state(m, rng)
        for tau, ref in ((ldr.inverse_dynamics(m, q, v, a), oracle.rnea(q, v, a)),
                         (ldr.nonlinear_effects(m, q, v), oracle.rnea(q, v, z)),
                         (ldr.gravity_torques(m, q), oracle.rnea(q, z, z))):
            assert rel_err(tau, ref) <= 1e-10, rel_err(tau, ref)


def test_the_public_calls_take_the_tree_entries():
    """A float64 state gives the entry's bits; lists, int64, strided, read-only arrays and
    (n, 1) columns (the checked path) give the bits of the same state as float64."""
    m = model("arm7")
    rng = np.random.default_rng(5)
    q, v, a = state(m, rng)
    z = np.zeros(m.nv)
    tau = ldr.inverse_dynamics(m, q, v, a)
    assert np.array_equal(tau, tree(m, q, v, a, "inverse_dynamics")[1])
    assert np.array_equal(ldr.nonlinear_effects(m, q, v), tree(m, q, v, z, "nonlinear")[1])
    assert np.array_equal(ldr.gravity_torques(m, q), tree(m, q, z, z, "gravity")[1])
    for name, (fn, sig) in KR.SIGNATURES.items():
        assert fn.signatures == [sig], name         # closed: no other type is compiled
    with pytest.raises(TypeError):
        KR.inverse_dynamics(tree_plan(m), np.arange(m.nq), v, a, np.empty(m.nv))
    qi = np.arange(m.nq) % 3 - 1
    strided = np.repeat(q, 2)[::2]
    ro = q.copy()
    ro.flags.writeable = False
    for qq, ref in ((qi, qi.astype(float)), (strided, q), (ro, q), (list(q), q),
                    (q.reshape(-1, 1), q)):
        assert np.array_equal(ldr.inverse_dynamics(m, qq, v, a),
                              ldr.inverse_dynamics(m, ref, v, a))
        assert np.array_equal(ldr.nonlinear_effects(m, qq, v), ldr.nonlinear_effects(m, ref, v))
        assert np.array_equal(ldr.gravity_torques(m, qq), ldr.gravity_torques(m, ref))
    vi = np.arange(m.nv) - 3
    assert np.array_equal(ldr.inverse_dynamics(m, q, vi, vi.reshape(-1, 1)),
                          ldr.inverse_dynamics(m, q, vi.astype(float), vi.astype(float)))
    # a caller's Data: the same numbers (the tree entries keep their scratch on the stack)
    d = m.create_data()
    assert np.array_equal(ldr.inverse_dynamics(m, q, v, a, data=d), tau)
    # f_ext takes the general kernel: equal to round-off
    assert_close(ldr.inverse_dynamics(m, q, v, a, f_ext=np.zeros((m.njoints, 6))), tau)


@pytest.mark.parametrize("which", ["q", "v", "a"])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_non_finite_input_is_named(which, bad):
    m = model("axes_tree")
    rng = np.random.default_rng(1)
    args = dict(zip("qva", state(m, rng)))
    args[which][m.nv // 2] = bad
    z = np.zeros(m.nv)
    # the entries' status is the general path's
    assert tree(m, args["q"], args["v"], args["a"], "inverse_dynamics")[0] == L.NONFINITE
    assert general(m, args["q"], args["v"], args["a"])[0] == L.NONFINITE
    with pytest.raises(ldr.InputError, match=rf"non-finite values \(NaN or Inf\) in {which}$"):
        ldr.inverse_dynamics(m, args["q"], args["v"], args["a"])
    if which != "a":
        assert tree(m, args["q"], args["v"], z, "nonlinear")[0] == L.NONFINITE
        with pytest.raises(ldr.InputError, match=rf"in {which}$"):
            ldr.nonlinear_effects(m, args["q"], args["v"])
    if which == "q":
        assert tree(m, args["q"], z, z, "gravity")[0] == L.NONFINITE
        with pytest.raises(ldr.InputError, match="in q$"):
            ldr.gravity_torques(m, args["q"])


def test_finite_inputs_with_an_overflowing_result():
    m = model("arm7")
    q, v, a = state(m, np.random.default_rng(4))
    v[:] = 1e160                       # (1e160)^2 overflows float64
    assert tree(m, q, v, a, "inverse_dynamics")[0] == L.OVERFLOW
    assert general(m, q, v, a)[0] == L.OVERFLOW
    with pytest.raises(ldr.InputError, match="overflow"):
        ldr.inverse_dynamics(m, q, v, a)
    with pytest.raises(ldr.InputError, match="overflow"):
        ldr.nonlinear_effects(m, q, v)


@pytest.mark.parametrize("which", ["q", "v", "a"])
def test_a_wrong_length_is_named(which):
    m = model("arm7")
    args = dict(zip("qva", state(m, np.random.default_rng(6))))
    args[which] = args[which][:-1]
    assert tree(m, args["q"], args["v"], args["a"], "inverse_dynamics")[0] == L.BAD_SIZE
    with pytest.raises(ldr.InputError, match=rf"^{which} must have shape"):
        ldr.inverse_dynamics(m, args["q"], args["v"], args["a"])
    if which != "a":
        with pytest.raises(ldr.InputError, match=rf"^{which} must have shape"):
            ldr.nonlinear_effects(m, args["q"], args["v"])
    if which == "q":
        with pytest.raises(ldr.InputError, match="^q must have shape"):
            ldr.gravity_torques(m, args["q"])


def test_a_plan_of_another_shape_is_refused():
    """BAD_SIZE before any read: a plan without its topology columns, or one whose bodies do
    not fit the stack scratch."""
    m = model("arm7")
    q, v, a = state(m, np.random.default_rng(8))
    P = tree_plan(m)
    tau = np.empty(m.nv)
    narrow = np.ascontiguousarray(P[:, :TOPO])
    narrow.flags.writeable = False
    assert KR.inverse_dynamics(narrow, q, v, a, tau) == L.BAD_SIZE
    tall = np.zeros((MAX_BODIES + 1, P.shape[1]))
    tall[0] = P[0]
    tall.flags.writeable = False
    assert KR.inverse_dynamics(tall, q, v, a, tau) == L.BAD_SIZE


def test_models_the_plan_does_not_serve_keep_the_general_path():
    """A floating base (free joint) is not served: the public call is the general kernel's."""
    m = ldr.load_urdf("arm7", floating_base=True)
    assert tree_plan(m) is None
    rng = np.random.default_rng(9)
    q, v, a = state(m, rng)
    st, ref = general(m, q, v, a)
    assert st == L.OK and np.array_equal(ldr.inverse_dynamics(m, q, v, a), ref)
