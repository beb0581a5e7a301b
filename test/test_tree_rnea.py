"""The single-state RNEA on the tree plan (kernels/tree_rnea.py): ID, g and C v + g.

Each entry must give what the general compiled entry (kernels/plan.inverse_dynamics, 6 x nv S
matrices and 6 x 6 inertias) gives on the same states, to 1e-12 of the largest torque (another
frame per body, another summation order, FMA contraction, a polynomial sine); what Pinocchio
gives to 1e-10; the status codes of the general path; and the public functions take it for a
float64 state and give the same bits for any other form of the same state. The same on
floating-base robots (a free root joint: ``tree_plan(model)``), whose base quaternion is
checked as the general path checks it, and a free fall and a robot at rest as identities.
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
from lie_dynamics_ros.lie import so3
from oracle import Oracle, bundled, erd, rel_err
from test_batch_soa import axes_tree
import test_batch_soa_free as F
from test_tree_crba import free_model

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
    """A free joint below another body is not served: the public call is the general kernel's."""
    m = F.free_tree(free_below=True)
    assert tree_plan(m) is None
    rng = np.random.default_rng(9)
    q, v, a = state(m, rng)
    st, ref = general(m, q, v, a)
    assert st == L.OK and np.array_equal(ldr.inverse_dynamics(m, q, v, a), ref)


# a free root joint (a floating base): tree_plan(model), which the public calls ask for

FREE_ROBOTS = ["centauro", "go2", "solo12", "talos_reduced", "free_tree", "free_chain",
               "arm_and_free"]
WHICH = ("inverse_dynamics", "nonlinear", "gravity")


def free_states(m, n, seed):
    Q, V, A = F.states(m, n, seed=seed)
    return list(zip(Q, V, A))


def zeroed(m, v, a, which):
    """(v, a) as the entry ``which`` takes them: zero where it does not read them."""
    z = np.zeros(m.nv)
    return {"inverse_dynamics": (v, a), "nonlinear": (v, z), "gravity": (z, z)}[which]


@pytest.mark.parametrize("name", FREE_ROBOTS)
def test_free_root_equals_the_general_kernel(name):
    """ID, C v + g and g against kernels/plan.py's entry, and the public calls give the tree
    entry's bits (a float64 state)."""
    m = free_model(name)
    P = tree_plan(m)
    assert P is not None and (P[1:, TOPO + KS.TK] == KS.FREE).sum() == 1
    for q, v, a in free_states(m, 10, seed=21):
        for which in WHICH:
            vv, aa = zeroed(m, v, a, which)
            st, tau = tree(m, q, vv, aa, which)
            st_ref, ref = general(m, q, vv, aa)
            assert st == st_ref == L.OK
            assert_close(tau, ref)
        assert np.array_equal(ldr.inverse_dynamics(m, q, v, a),
                              tree(m, q, v, a, "inverse_dynamics")[1])
        assert np.array_equal(ldr.nonlinear_effects(m, q, v), tree(m, q, v, a, "nonlinear")[1])
        assert np.array_equal(ldr.gravity_torques(m, q), tree(m, q, v, a, "gravity")[1])


@pytest.mark.parametrize("name", ["centauro", "talos_reduced"])
def test_free_root_big_angles(name):
    """Beyond BIG_ANGLE the joints' sine hands over to libm; the base is unaffected."""
    m = free_model(name)
    P = tree_plan(m)
    rev = [int(P[i, TOPO + KS.TQ]) for i in range(1, P.shape[0])
           if P[i, TOPO + KS.TK] == KS.REVOLUTE]
    rng = np.random.default_rng(22)
    for q, v, a in free_states(m, 5, seed=22):
        q[rev] += 3 * KS.BIG_ANGLE * rng.choice([-1.0, 1.0], len(rev))
        st, tau = tree(m, q, v, a, "inverse_dynamics")
        st_ref, ref = general(m, q, v, a)
        assert st == st_ref == L.OK
        assert_close(tau, ref)


@pytest.mark.parametrize("gravity", [None, (1.5, -2.0, -9.0)])
@pytest.mark.parametrize("name", ["centauro", "go2", "solo12", "talos_reduced"])
def test_free_root_against_pinocchio(name, gravity):
    m = free_model(name)
    if gravity is not None:
        m = m.with_gravity(gravity)
    oracle = Oracle(m, F.PATHS[name], True)
    z = np.zeros(m.nv)
    for q, v, a in free_states(m, 5, seed=23):
        for tau, ref in ((ldr.inverse_dynamics(m, q, v, a), oracle.rnea(q, v, a)),
                         (ldr.nonlinear_effects(m, q, v), oracle.rnea(q, v, z)),
                         (ldr.gravity_torques(m, q), oracle.gravity(q))):
            assert rel_err(tau, ref) <= 1e-10, rel_err(tau, ref)


@pytest.mark.parametrize("name", FREE_ROBOTS)
def test_free_root_gravity_and_nonlinear_are_the_inverse_dynamics(name):
    """g = ID(q, 0, 0) and C v + g = ID(q, v, 0): the entries of one kernel, the zero terms
    removed at compile time."""
    m = free_model(name)
    z = np.zeros(m.nv)
    for q, v, _ in free_states(m, 10, seed=24):
        assert_close(tree(m, q, z, z, "gravity")[1], tree(m, q, z, z, "inverse_dynamics")[1])
        assert_close(tree(m, q, v, z, "nonlinear")[1], tree(m, q, v, z, "inverse_dynamics")[1])


@pytest.mark.parametrize("name", ["go2", "talos_reduced"])
def test_free_root_free_fall_and_rest(name):
    """The base accelerating with gravity (R^T g in its frame), no velocity: every body falls
    freely and no torque is needed. At rest the base holds the weight: its force, turned to the
    world, is -(total mass) g. A gravity off the z axis tests the base's rotation."""
    m = free_model(name).with_gravity((2.0, -1.0, -9.5))
    mass = sum(float(m.mI[i, 3, 3]) for i in range(1, m.mi.shape[0]))
    z = np.zeros(m.nv)
    for q, _, _ in free_states(m, 10, seed=25):
        R = so3.quat_to_rot(q[3:7])
        fall = z.copy()
        fall[:3] = R.T @ np.asarray(m.gravity)
        st, tau = tree(m, q, z, fall, "inverse_dynamics")
        assert st == L.OK
        np.testing.assert_allclose(tau, 0.0, rtol=0, atol=1e-12 * mass * 10)
        st, g = tree(m, q, z, z, "gravity")
        assert st == L.OK
        np.testing.assert_allclose(R @ g[:3], -mass * np.asarray(m.gravity), rtol=1e-12,
                                   atol=1e-12 * mass * 10)


@pytest.mark.parametrize("where", [("q", 0), ("q", 2), ("q", 4), ("q", 6), ("q", 9),
                                   ("v", 1), ("v", 5), ("v", 8), ("a", 3), ("a", 10)])
@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_free_root_non_finite_input_is_named(where, bad):
    """A NaN or Inf in the base position (which no torque depends on), quaternion, twist or
    acceleration, or in a leg joint: the entries say NONFINITE, the public calls the general
    path's error naming the argument."""
    m = free_model("go2")
    q, v, a = free_states(m, 1, seed=26)[0]
    which, k = where
    {"q": q, "v": v, "a": a}[which][k] = bad
    for entry in WHICH:
        if (entry == "nonlinear" and which == "a") or (entry == "gravity" and which != "q"):
            continue
        vv, aa = zeroed(m, v, a, entry)
        assert tree(m, q, vv, aa, entry)[0] == L.NONFINITE, entry
    pattern = rf"^non-finite values \(NaN or Inf\) in {which}$"
    with pytest.raises(ldr.InputError, match=pattern):
        ldr.inverse_dynamics(m, q, v, a)
    if which != "a":
        with pytest.raises(ldr.InputError, match=pattern):
            ldr.nonlinear_effects(m, q, v)
    if which == "q":
        with pytest.raises(ldr.InputError, match=pattern):
            ldr.gravity_torques(m, q)


@pytest.mark.parametrize("scale", [1 + 2e-6, 1 - 2e-6, 0.5, 0.0])
def test_free_root_non_unit_quaternion_is_named(scale):
    m = free_model("centauro")
    q, v, a = free_states(m, 1, seed=27)[0]
    q[3:7] *= scale
    for entry in WHICH:
        vv, aa = zeroed(m, v, a, entry)
        assert tree(m, q, vv, aa, entry)[0] == L.BAD_QUATERNION, entry
    assert general(m, q, v, a)[0] == L.BAD_QUATERNION
    pattern = r"^a quaternion in q is not of unit norm \(tolerance 1e-6\)"
    for form in (q, list(q)):           # the fast path, and the checked one after conversion
        with pytest.raises(ldr.InputError, match=pattern):
            ldr.inverse_dynamics(m, form, v, a)
        with pytest.raises(ldr.InputError, match=pattern):
            ldr.nonlinear_effects(m, form, v)
        with pytest.raises(ldr.InputError, match=pattern):
            ldr.gravity_torques(m, form)


def test_free_root_quaternion_within_tolerance_is_normalized():
    """A norm less than 1e-6 off 1 is served and normalized, as the general kernel does."""
    m = free_model("free_tree")
    q, v, a = free_states(m, 1, seed=28)[0]
    for scale in (1 + 5e-7, 1 - 5e-7):
        qs = q.copy()
        qs[3:7] *= scale
        for which in WHICH:
            vv, aa = zeroed(m, v, a, which)
            st, tau = tree(m, qs, vv, aa, which)
            assert st == L.OK
            assert_close(tau, general(m, qs, vv, aa)[1])
            assert_close(tau, tree(m, q, vv, aa, which)[1])


def test_free_root_other_forms_give_the_same_bits():
    m = free_model("go2")
    q, v, a = free_states(m, 1, seed=29)[0]
    tau, nle, g = (ldr.inverse_dynamics(m, q, v, a), ldr.nonlinear_effects(m, q, v),
                   ldr.gravity_torques(m, q))
    ro = q.copy()
    ro.flags.writeable = False
    for qq in (np.repeat(q, 2)[::2], q.reshape(m.nq, 1), list(q), ro):
        assert np.array_equal(ldr.inverse_dynamics(m, qq, v, a), tau)
        assert np.array_equal(ldr.nonlinear_effects(m, qq, v), nle)
        assert np.array_equal(ldr.gravity_torques(m, qq), g)
    assert np.array_equal(ldr.inverse_dynamics(m, q, v, a, data=m.create_data()), tau)
    # f_ext takes the general kernel: equal to round-off
    assert_close(ldr.inverse_dynamics(m, q, v, a, f_ext=np.zeros((m.njoints, 6))), tau)


@pytest.mark.parametrize("name", ["axes_tree", "free_chain"])
def test_a_non_finite_joint_anywhere_gives_nonfinite(name):
    """Every joint's q, v and a, one at a time (a prismatic root's q included, on which no
    gravity torque depends): each entry that reads the input says NONFINITE."""
    m = model(name) if name == "axes_tree" else free_model(name)
    q0, v0, a0 = free_states(m, 1, seed=30)[0]
    for arg, n in (("q", m.nq), ("v", m.nv), ("a", m.nv)):
        for k in range(n):
            q, v, a = q0.copy(), v0.copy(), a0.copy()
            {"q": q, "v": v, "a": a}[arg][k] = math.nan
            for entry in WHICH:
                if (entry == "nonlinear" and arg == "a") or (entry == "gravity" and arg != "q"):
                    continue
                vv, aa = zeroed(m, v, a, entry)
                assert tree(m, q, vv, aa, entry)[0] == L.NONFINITE, (arg, k, entry)
