"""Forward dynamics of one state on the tree plan (``kernels/tree_aba.py``), which
``ldr.forward_dynamics`` takes for a float64 state without f_ext or data= on a served model.

It must give what the general ABA (``kernels/plan.forward_dynamics`` on a Data buffer) gives, to
1e-12 of the largest acceleration (another summation order, FMA contraction and the polynomial
sine), on the bundled arm, two robots of example-robot-data, a tree of off-axis revolute and
prismatic joints, with armature and at big angles, and on floating bases (a free root row:
go2, solo12, centauro, talos_reduced and a built tree with a rotated free origin); agree with
Pinocchio's ABA; and leave every bad input and singular case to the general path, which names
what is wrong.
"""
import re
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms import _inputs
from lie_dynamics_ros.algorithms.tree_plan import tree_plan
from lie_dynamics_ros.kernels import layout as L
from lie_dynamics_ros.kernels import plan as KP
from lie_dynamics_ros.kernels import soa as KS
from lie_dynamics_ros.kernels import tree_aba as TA
from lie_dynamics_ros.kernels.tree import TOPO
from lie_dynamics_ros.lie import so3
from oracle import Oracle, rel_err
from test_batch_soa import PATHS, ROBOTS, model, states
from test_batch_soa_free import PATHS as FREE_PATHS, ROBOTS as FREE_ROBOTS
from test_batch_soa_free import model as free_model
from models import zoo

TOL = 1e-12


def tree(m, q, v, tau):
    """(status, qdd) of the tree entry called directly (a free root served too)."""
    acc = np.full(m.nv, np.nan)
    return TA.forward_dynamics(tree_plan(m), q, v, tau, acc), acc


def general(m, q, v, tau):
    """qdd of the general compiled entry (kernels/plan.py) on a Data of m."""
    acc = np.empty(m.nv)
    assert KP.forward_dynamics(m.create_data().buf, q, v, tau, acc) == L.OK
    return acc


def assert_close(ours, ref, tol=TOL):
    err = np.abs(ours - ref).max() / max(np.abs(ref).max(), 1e-300)
    assert err <= tol, f"relative deviation {err:.2e}"


@pytest.mark.parametrize("name", ROBOTS)
def test_equals_the_general_kernel(name):
    m = model(name)
    assert tree_plan(m) is not None
    Q, V, T = states(m, 20, seed=5)
    T *= 5.0
    for q, v, t in zip(Q, V, T):
        st, acc = tree(m, q, v, t)
        assert st == L.OK
        assert_close(acc, general(m, q, v, t))
        np.testing.assert_array_equal(ldr.forward_dynamics(m, q, v, t), acc)


@pytest.mark.parametrize("name", ["arm7", "axes_tree"])
@pytest.mark.parametrize("scale", [1e3, 3 * KS.BIG_ANGLE, 1e9])
def test_big_angles(name, scale):
    """|q| around 1e3 (the polynomial sine) and beyond BIG_ANGLE (libm's) on every revolute
    joint (a prismatic q that large puts a body so far that both kernels lose digits). An angle
    of |q| is known to |q| eps only: the general kernel's Rodrigues formula about an off-axis
    joint (axis of norm 1 +- an ulp) turns by |q| (1 +- eps), so the tolerance grows so."""
    m = model(name)
    P = tree_plan(m)
    revolute = np.zeros(m.nq, dtype=bool)
    revolute[P[1:, TOPO + KS.TQ].astype(int)] = P[1:, TOPO + KS.TK] == KS.REVOLUTE
    Q, V, T = states(m, 6, seed=8)
    rng = np.random.default_rng(1)
    for q, v, t in zip(Q, V, T):
        big = scale * rng.choice([-1.0, 1.0], m.nq) * rng.uniform(0.5, 1.0, m.nq)
        qb = np.where(revolute, q + big, q)
        st, acc = tree(m, qb, v, t)
        assert st == L.OK
        assert_close(acc, general(m, qb, v, t), TOL + 8 * np.finfo(float).eps * abs(qb).max())


def test_armature_is_used():
    m0, m = model("xarm7"), model("xarm7_armature")
    q, v, t = (x[0] for x in states(m, 1, seed=2))
    a0, a = tree(m0, q, v, t)[1], tree(m, q, v, t)[1]
    assert np.abs(a - a0).max() > 1e-3 * np.abs(a0).max()
    assert_close(a, general(m, q, v, t))


def test_inverts_inverse_dynamics_and_gravity():
    """ABA(q, v, RNEA(q, v, a)) = a on the off-axis tree; another gravity is followed."""
    m = model("axes_tree")
    Q, V, A = states(m, 10, seed=4)
    for q, v, a in zip(Q, V, A):
        np.testing.assert_allclose(tree(m, q, v, ldr.inverse_dynamics(m, q, v, a))[1], a,
                                   rtol=0, atol=1e-10 * np.abs(a).max())
    g = m.with_gravity((1.0, -2.0, -3.0))
    q, v, t = Q[0], V[0], A[0]
    assert_close(tree(g, q, v, t)[1], general(g, q, v, t))
    assert np.abs(tree(g, q, v, t)[1] - tree(m, q, v, t)[1]).max() > 1e-3


@pytest.mark.parametrize("name", ["xarm7", "ur5", "xarm7_armature"])
def test_against_pinocchio(name):
    m = model(name)
    oracle = Oracle(m, PATHS[name.split("_")[0]], False)
    pm = oracle.pm
    for jn, vi in zip(m.joint_names, m.joint_v_index):
        pm.armature[pm.joints[pm.getJointId(jn)].idx_v] = m.armature[vi]
    Q, V, T = states(m, 8, seed=11)
    for q, v, t in zip(Q, V, T):
        ref = oracle.aba(q, v, t)
        acc = ldr.forward_dynamics(m, q, v, t)
        assert rel_err(acc, ref) <= 1e-10, rel_err(acc, ref)


@pytest.mark.parametrize("arg", ["q", "v", "tau"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input_is_named(arg, bad):
    m = model("xarm7")
    args = dict(zip(("q", "v", "tau"), (x[0] for x in states(m, 1))))
    args[arg][4] = bad
    assert tree(m, *args.values())[0] == L.NONFINITE
    with pytest.raises(ldr.InputError, match=rf"^non-finite .* in {arg}$"):
        ldr.forward_dynamics(m, *args.values())


def test_overflow_is_named():
    m = model("arm7")
    q, v, t = (x[0] for x in states(m, 1))
    v[:] = 1e160
    assert tree(m, q, v, t)[0] == L.OVERFLOW
    with pytest.raises(ldr.InputError, match="^overflow"):
        ldr.forward_dynamics(m, q, v, t)


@pytest.mark.parametrize("arg", ["q", "v", "tau"])
def test_wrong_length(arg):
    m = model("ur5")
    args = dict(zip(("q", "v", "tau"), (x[0] for x in states(m, 1))))
    args[arg] = args[arg][:-1]
    assert tree(m, *args.values())[0] == L.BAD_SIZE
    assert TA.forward_dynamics(tree_plan(m), *(x[0] for x in states(m, 1)),
                               np.empty(m.nv + 1)) == L.BAD_SIZE
    with pytest.raises(ldr.InputError, match=rf"^{arg} must have shape"):
        ldr.forward_dynamics(m, *args.values())


def _chain(end_mass, end_inertia, com):
    b = ldr.ModelBuilder("singular")
    b.add_link("base")
    b.add_link("upper", mass=1.0, com=(0.3, 0, 0), inertia=np.eye(3) * 0.01)
    b.add_link("end", mass=end_mass, com=com, inertia=end_inertia)
    b.add_joint("shoulder", ldr.Revolute((0, 1, 0)), "base", "upper")
    b.add_joint("spin", ldr.Revolute((0, 0, 1)), "upper", "end")
    return b.build()


@pytest.mark.parametrize("m", [
    pytest.param(_chain(0.0, np.zeros((3, 3)), (0, 0, 0)), id="massless_end"),
    pytest.param(_chain(1.0, np.zeros((3, 3)), (0, 0, 0.2)), id="point_mass_on_the_axis")])
def test_singular_articulated_inertia_names_the_joint(m):
    """D = 0 at the chain's end: the entry says SINGULAR, the general path names the joint."""
    assert tree_plan(m) is not None
    q, v, t = (x[0] for x in states(m, 1))
    assert tree(m, q, v, t)[0] == L.SINGULAR
    with pytest.raises(ldr.InputError, match="singular articulated inertia: joint 'spin'"):
        ldr.forward_dynamics(m, q, v, t)


def test_other_inputs_take_the_checked_path():
    """int64, strided, read-only and (n, 1) inputs: the entry refuses them (numba's TypeError,
    never a reinterpretation), the checked path converts them and gives the entry's bits."""
    m = model("arm7")
    q, v, t = (x[0] for x in states(m, 1, seed=9))
    ldr.forward_dynamics(m, q, v, t)
    fn, sig = TA.SIGNATURES["forward_dynamics"]
    assert _inputs.tree_ready.forward_dynamics and fn.signatures == [sig]
    qi = np.arange(m.nq) % 3
    with pytest.raises(TypeError):
        TA.forward_dynamics(tree_plan(m), qi, v, t, np.empty(m.nv))
    ro = q.copy()
    ro.flags.writeable = False
    for args, ref in (((qi, v, t), (qi.astype(float), v, t)),
                      ((np.repeat(q, 2)[::2], v, t), (q, v, t)),
                      ((ro, v, t), (q, v, t)),
                      ((q, v.reshape(-1, 1), t[:, None]), (q, v, t)),
                      ((list(q), list(v), list(t)), (q, v, t))):
        np.testing.assert_array_equal(ldr.forward_dynamics(m, *args), tree(m, *ref)[1])


def test_a_callers_data_keeps_the_general_kernel():
    """With data= the general ABA runs and leaves its articulated inertias in that Data
    (contacts and loops read them); without, nothing of the thread's Data changes."""
    m = model("arm7")
    q, v, t = (x[0] for x in states(m, 1, seed=3))
    d = m.create_data()
    np.testing.assert_array_equal(ldr.forward_dynamics(m, q, v, t, data=d), general(m, q, v, t))
    ref = m.create_data()
    KP.forward_dynamics(ref.buf, q, v, t, np.empty(m.nv))
    np.testing.assert_array_equal(d.buf, ref.buf)
    before = m.default_data().buf.copy()
    ldr.forward_dynamics(m, q + 0.5, v, t)
    np.testing.assert_array_equal(m.default_data().buf, before)


def test_threads_share_the_model():
    """Stack scratch only: concurrent calls on one model give each state's own answer."""
    m = model("axes_tree")
    Q, V, T = states(m, 64, seed=6)
    ref = [tree(m, q, v, t)[1] for q, v, t in zip(Q, V, T)]

    def run(k):
        return [ldr.forward_dynamics(m, Q[k], V[k], T[k]) for _ in range(200)]

    with ThreadPoolExecutor(4) as pool:
        for k, outs in enumerate(pool.map(run, range(64))):
            for out in outs:
                np.testing.assert_array_equal(out, ref[k])


def test_unserved_models_keep_the_general_path():
    """A ball joint has no tree plan: the public call still answers (general kernel)."""
    m = zoo(floating=False, mimic=False)
    assert tree_plan(m) is None
    q, v, t = (x[0] for x in states(m, 1))
    np.testing.assert_array_equal(ldr.forward_dynamics(m, q, v, t), general(m, q, v, t))


# ----------------------------------------------------------------------------- free root
def _arm_and_box():
    """A fixed-base arm next to a free box carrying an off-axis joint: the free row is a root,
    but not the first row."""
    rng = np.random.default_rng(4)
    b = ldr.ModelBuilder("arm_and_box")
    b.add_link("base")
    for name, joint, parent in (("r1", ldr.Revolute(rng.normal(size=3)), "base"),
                                ("p1", ldr.Prismatic(rng.normal(size=3)), "l_r1"),
                                ("box", ldr.Free(), "base"),
                                ("r2", ldr.Revolute(rng.normal(size=3)), "l_box")):
        b.add_link("l_" + name, mass=rng.uniform(0.5, 2), com=rng.normal(size=3) * 0.1,
                   inertia=np.diag(rng.uniform(0.01, 0.1, 3)))
        origin = np.eye(4)
        origin[:3, :3], origin[:3, 3] = so3.exp(rng.normal(size=3)), rng.normal(size=3) * 0.3
        b.add_joint(name, joint, parent, "l_" + name, origin=origin)
    return b.build()


FREE = FREE_ROBOTS + ["arm_and_box"]


def fmodel(name):
    return _arm_and_box() if name == "arm_and_box" else free_model(name)


@pytest.mark.parametrize("name", FREE)
def test_free_root_equals_the_general_kernel(name):
    """A floating base is served; the public call gives the entry's bits."""
    m = fmodel(name)
    assert tree_plan(m) is not None
    Q, V, T = states(m, 20, seed=5)
    T *= 5.0
    for q, v, t in zip(Q, V, T):
        st, acc = tree(m, q, v, t)
        assert st == L.OK
        assert_close(acc, general(m, q, v, t))
        np.testing.assert_array_equal(ldr.forward_dynamics(m, q, v, t), acc)
        np.testing.assert_array_equal(ldr.forward_dynamics(m, list(q), v, t), acc)


@pytest.mark.parametrize("name", list(FREE_PATHS))
def test_free_root_against_pinocchio(name):
    m = free_model(name)
    oracle = Oracle(m, FREE_PATHS[name], True)
    Q, V, T = states(m, 8, seed=12)
    for q, v, t in zip(Q, V, T):
        ref = oracle.aba(q, v, t)
        acc = ldr.forward_dynamics(m, q, v, t)
        assert rel_err(acc, ref) <= 1e-10, rel_err(acc, ref)


@pytest.mark.parametrize("name", ["free_tree", "arm_and_box"])
def test_free_root_inverts_inverse_dynamics_and_follows_gravity(name):
    """ABA(q, v, RNEA(q, v, a)) = a; at rest without torques a free body falls: the base's
    acceleration turned to the world is g when nothing else moves (a single free body)."""
    m = fmodel(name)
    Q, V, A = states(m, 10, seed=4)
    for q, v, a in zip(Q, V, A):
        np.testing.assert_allclose(tree(m, q, v, ldr.inverse_dynamics(m, q, v, a))[1], a,
                                   rtol=0, atol=1e-10 * np.abs(a).max())
    g = m.with_gravity((1.0, -2.0, -3.0))
    q, v, t = Q[0], V[0], A[0]
    assert_close(tree(g, q, v, t)[1], general(g, q, v, t))
    assert np.abs(tree(g, q, v, t)[1] - tree(m, q, v, t)[1]).max() > 1e-3
    b = ldr.ModelBuilder("box")
    b.add_link("box", mass=2.0, com=(0.1, -0.2, 0.3), inertia=np.diag([0.1, 0.2, 0.3]))
    b.add_joint("float", ldr.Free(), None, "box")
    box = b.build().with_gravity((0.5, -1.0, -9.0))
    assert tree_plan(box) is not None
    q = ldr.random_configuration(box, np.random.default_rng(0))
    st, acc = tree(box, q, np.zeros(6), np.zeros(6))
    # the COM falls with g: R (a_lin + w_dot x c) = g, the body at rest does not turn
    assert st == L.OK and np.abs(acc[3:]).max() <= 1e-14
    np.testing.assert_allclose(so3.quat_to_rot(q[3:7]) @ acc[:3], (0.5, -1.0, -9.0),
                               rtol=0, atol=1e-13)


def test_free_root_normalizes_a_quaternion_as_the_general_kernel():
    m = free_model("go2")
    Q, V, T = states(m, 4, seed=2)
    for q, v, t, s in zip(Q, V, T, (1 + 5e-7, 1 - 5e-7, 1 + 9e-7, 1.0)):
        q = q.copy()
        q[3:7] *= s
        st, acc = tree(m, q, v, t)
        assert st == L.OK
        assert_close(acc, general(m, q, v, t))


def _error(fn):
    with pytest.raises(ldr.InputError) as e:
        fn()
    return str(e.value)


@pytest.mark.parametrize("scale", [1.01, 1 + 2e-6, 0.0])
def test_free_root_non_unit_quaternion_is_named(scale):
    """BAD_QUATERNION from the entry; the public call raises the general path's error (a
    caller's Data keeps the general kernel: the error it raised before)."""
    m = free_model("solo12")
    q, v, t = (x[0] for x in states(m, 1, seed=3))
    q[3:7] *= scale
    assert tree(m, q, v, t)[0] == L.BAD_QUATERNION
    msg = _error(lambda: ldr.forward_dynamics(m, q, v, t))
    assert msg.startswith("a quaternion in q is not of unit norm")
    assert msg == _error(lambda: ldr.forward_dynamics(m, q, v, t, data=m.create_data()))


@pytest.mark.parametrize("arg, col", [("q", 0), ("q", 4), ("v", 1), ("v", 5), ("v", 10),
                                      ("tau", 2), ("tau", 3), ("tau", 12)])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_free_root_non_finite_input_is_named(arg, col, bad):
    """In the base position (which no acceleration depends on), quaternion, twist, wrench or
    a leg joint."""
    m = free_model("go2")
    args = dict(zip(("q", "v", "tau"), (x[0] for x in states(m, 1, seed=7))))
    args[arg][col] = bad
    assert tree(m, *args.values())[0] == L.NONFINITE
    msg = _error(lambda: ldr.forward_dynamics(m, *args.values()))
    assert re.match(rf"^non-finite .* in {arg}$", msg)
    assert msg == _error(lambda: ldr.forward_dynamics(m, *args.values(), data=m.create_data()))


def test_free_root_singular_inertia_names_the_joint():
    """arm7 on a free joint: its base link has no mass, so the root's I^ is singular."""
    m = ldr.load_urdf("arm7", floating_base=True)
    q, v, t = (x[0] for x in states(m, 1))
    assert tree(m, q, v, t)[0] == L.SINGULAR
    msg = _error(lambda: ldr.forward_dynamics(m, q, v, t))
    assert msg.startswith("singular articulated inertia: joint 'root_joint'")
    assert msg == _error(lambda: ldr.forward_dynamics(m, q, v, t, data=m.create_data()))


def test_free_root_overflow_is_named():
    m = free_model("go2")
    q, v, t = (x[0] for x in states(m, 1))
    v[:] = 1e160
    assert tree(m, q, v, t)[0] != L.OK
    with pytest.raises(ldr.InputError, match="^overflow"):
        ldr.forward_dynamics(m, q, v, t)
