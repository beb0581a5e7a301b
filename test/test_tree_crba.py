"""The single-state specialized CRBA (``kernels/tree_crba.py``) behind ``ldr.mass_matrix``.

Its M must be the general kernel's (``kernels/plan.mass_matrix`` on a Data buffer, the path
every model took before) to 1e-12 of the matrix's largest entry on the same states, exactly
symmetric, Pinocchio's to 1e-10, and satisfy M a = ID(q, v, a) - ID(q, v, 0). Bad input keeps
the general path's errors; other array forms are converted and give the same bits. The same
for floating-base robots (a free root joint), whose base q is only checked.
"""
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pinocchio as pin
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms import _inputs
from lie_dynamics_ros.algorithms.tree_plan import tree_plan
from lie_dynamics_ros.kernels import layout as L
from lie_dynamics_ros.kernels import plan as KP
from lie_dynamics_ros.kernels import soa as KS
from lie_dynamics_ros.kernels import tree_crba as TC
from lie_dynamics_ros.kernels.tree import TOPO
from lie_dynamics_ros.lie import so3
from oracle import Oracle, PinMap, build_pin_model, symmetrize_upper
from test_batch_soa import PATHS, model, states
import test_batch_soa_free as F

TOL = 1e-12
ROBOTS = ["arm7", "xarm7", "ur5", "xarm7_armature", "axes_tree"]


@pytest.fixture(autouse=True, scope="module")
def compiled():
    """One public call compiles the entry and closes it to other signatures."""
    m = model("arm7")
    ldr.mass_matrix(m, ldr.random_configuration(m, rng=0))
    fn, sig = TC.SIGNATURES["mass_matrix"]
    assert _inputs.tree_ready.mass_matrix and fn.signatures == [sig]


def tree(m, q):
    M = np.full((m.nv, m.nv), np.nan)
    assert TC.mass_matrix(tree_plan(m), q, M) == L.OK
    return M


def general(m, q, d):
    M = np.empty((m.nv, m.nv))
    assert KP.mass_matrix(d.buf, q, M) == L.OK
    return M


def assert_close(ours, ref, tol=TOL):
    err = np.abs(ours - ref).max() / np.abs(ref).max()
    assert err <= tol, f"matrix-relative deviation {err:.2e}"


def revolute_q_indices(m):
    P = tree_plan(m)
    return [int(P[i, TOPO + KS.TQ]) for i in range(1, P.shape[0])
            if P[i, TOPO + KS.TK] == KS.REVOLUTE]


@pytest.mark.parametrize("name", ROBOTS)
def test_equals_the_general_kernel(name):
    m = model(name)
    assert tree_plan(m) is not None
    d = m.create_data()
    Q, _, _ = states(m, 30, seed=1)
    for q in Q:
        M = tree(m, q)
        assert_close(M, general(m, q, d))
        np.testing.assert_array_equal(M, M.T)              # mirrored, not recomputed
        np.testing.assert_array_equal(ldr.mass_matrix(m, q), M)    # the public call takes it


@pytest.mark.parametrize("name", ["arm7", "axes_tree"])
@pytest.mark.parametrize("big", [1e3, 3e5, 4e7])
def test_big_angles(name, big):
    """|q| ~ 1e3 (the polynomial sine) and beyond BIG_ANGLE (libm), against the general kernel
    at the same q, and against M at q reduced by whole turns."""
    assert 3e5 > KS.BIG_ANGLE
    m = model(name)
    d = m.create_data()
    Q, _, _ = states(m, 10, seed=2)
    rev = revolute_q_indices(m)
    for q in Q:
        turns = np.round(big / (2 * np.pi)) * 2 * np.pi
        qb = q.copy()
        qb[rev] += turns * np.where(np.arange(len(rev)) % 2, 1.0, -1.0)
        M = tree(m, qb)
        assert_close(M, general(m, qb, d))
        assert_close(M, tree(m, q), tol=1e-15 * big * 100)


def test_armature_is_on_the_diagonal():
    m0, m = model("xarm7"), model("xarm7_armature")
    for q in states(m, 10, seed=3)[0]:
        diff = tree(m, q) - tree(m0, q)
        np.testing.assert_allclose(diff, np.diag(m.armature), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ROBOTS)
def test_m_a_is_the_inverse_dynamics_without_velocity_terms(name):
    m = model(name)
    Q, V, A = states(m, 10, seed=4)
    for q, v, a in zip(Q, V, A):
        rhs = ldr.inverse_dynamics(m, q, v, a) - ldr.inverse_dynamics(m, q, v, np.zeros(m.nv))
        np.testing.assert_allclose(tree(m, q) @ a, rhs, rtol=0,
                                   atol=1e-10 * np.abs(rhs).max())


@pytest.mark.parametrize("name", ["xarm7", "ur5", "xarm7_armature"])
def test_against_pinocchio(name):
    m = model(name)
    oracle = Oracle(m, PATHS[name.split("_")[0]], False)
    pm = oracle.pm
    for jn, vi in zip(m.joint_names, m.joint_v_index):
        pm.armature[pm.joints[pm.getJointId(jn)].idx_v] = m.armature[vi]
    for q in states(m, 10, seed=5)[0]:
        assert_close(ldr.mass_matrix(m, q), oracle.crba(q), tol=1e-10)


def test_entry_status_codes():
    m = model("xarm7")
    P, q = tree_plan(m), states(m, 1)[0][0]
    M = np.empty((m.nv, m.nv))
    assert TC.mass_matrix(P, q[:-1], M) == L.BAD_SIZE
    assert TC.mass_matrix(P, np.append(q, 0.0), M) == L.BAD_SIZE
    assert TC.mass_matrix(P, q, np.empty((m.nv, m.nv + 1))) == L.BAD_SIZE
    assert TC.mass_matrix(P, q, np.empty((m.nv - 1, m.nv))) == L.BAD_SIZE
    assert TC.mass_matrix(P[:1], q, M) == L.BAD_SIZE            # a plan without bodies
    for k in range(m.nq):
        for bad in (np.nan, np.inf, -np.inf):
            qb = q.copy()
            qb[k] = bad
            assert TC.mass_matrix(P, qb, M) == L.NONFINITE


def test_other_argument_types_are_refused_by_the_entry():
    m = model("ur5")
    P, q = tree_plan(m), states(m, 1)[0][0]
    M = np.empty((m.nv, m.nv))
    ro = q.copy()
    ro.flags.writeable = False
    for bad in (np.arange(m.nq), np.repeat(q, 2)[::2], q.reshape(m.nq, 1), ro,
                q.astype(np.float32)):
        with pytest.raises(TypeError):
            TC.mass_matrix(P, bad, M)
    with pytest.raises(TypeError):
        TC.mass_matrix(P, q, np.empty((m.nv, m.nv), order="F"))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_q_is_named(bad):
    m = model("xarm7")
    q = states(m, 1)[0][0]
    q[3] = bad
    with pytest.raises(ldr.InputError, match=r"non-finite values \(NaN or Inf\) in q$"):
        ldr.mass_matrix(m, q)


def test_wrong_length_is_named():
    m = model("ur5")
    q = states(m, 1)[0][0]
    for bad in (q[:-1], np.append(q, 1.0)):
        with pytest.raises(ldr.InputError, match=r"^q must have shape \(6,\)"):
            ldr.mass_matrix(m, bad)


def test_other_forms_of_q_give_the_same_bits():
    """int64, strided, (nq, 1) columns, read-only, unaligned, float32 and lists: converted by
    the checked path, which then takes the same kernel."""
    m = model("axes_tree")
    q = states(m, 1, seed=6)[0][0]
    ref = ldr.mass_matrix(m, q)
    ro = q.copy()
    ro.flags.writeable = False
    unaligned = np.frombuffer(bytearray(8 * m.nq + 1), dtype=np.float64, offset=1)
    unaligned[:] = q
    assert not unaligned.flags.aligned
    qi = np.arange(m.nq) % 3 - 1
    assert np.array_equal(ldr.mass_matrix(m, qi), tree(m, qi.astype(float)))
    for form in (np.repeat(q, 2)[::2], q.reshape(m.nq, 1), ro, unaligned, list(q)):
        np.testing.assert_array_equal(ldr.mass_matrix(m, form), ref)
    q32 = q.astype(np.float32)
    np.testing.assert_array_equal(ldr.mass_matrix(m, q32), tree(m, q32.astype(float)))


def test_a_callers_data_gives_the_same_and_is_checked():
    m = model("xarm7")
    d = m.create_data()
    for q in states(m, 5, seed=7)[0]:
        np.testing.assert_array_equal(ldr.mass_matrix(m, q, data=d), ldr.mass_matrix(m, q))
    with pytest.raises(ldr.InputError, match="another model"):
        ldr.mass_matrix(m, q, data=model("ur5").create_data())


def far_model():
    """Two prismatic joints, then a revolute one."""
    b = ldr.ModelBuilder("far")
    b.add_link("base")
    for name, joint, parent in (("a", ldr.Prismatic((1, 0, 0)), "base"),
                                ("b", ldr.Prismatic((0, 1, 0)), "l_a"),
                                ("c", ldr.Revolute((0, 0, 1)), "l_b")):
        b.add_link("l_" + name, mass=1.0, com=(0.1, 0.0, 0.0), inertia=np.eye(3) * 0.01)
        b.add_joint(name, joint, parent, "l_" + name)
    return b.build()


def test_a_far_body_takes_the_general_kernel():
    """Composites about a common frame 1e200 m away overflow (the entry says OVERFLOW); the
    local-frame general kernel still has M, and the public call returns it."""
    m = far_model()
    q = np.array([0.3, 1e200, 0.4])
    assert TC.mass_matrix(tree_plan(m), q, np.empty((3, 3))) == L.OVERFLOW
    M = ldr.mass_matrix(m, q)
    assert np.all(np.isfinite(M))
    np.testing.assert_array_equal(M, general(m, q, m.create_data()))


def test_a_prismatic_travel_of_a_few_metres_keeps_the_digits():
    m = far_model()
    d = m.create_data()
    for travel in (-10.0, 0.0, 10.0):
        q = np.array([0.3, travel, 0.4])
        ours, ref = tree(m, q), general(m, q, d)
        np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())


def test_models_without_a_tree_plan_keep_the_general_kernel():
    from models import zoo
    m = zoo(1, mimic=False)
    assert tree_plan(m) is None
    d = m.create_data()
    q = ldr.random_configuration(m, rng=8)
    np.testing.assert_array_equal(ldr.mass_matrix(m, q), general(m, q, d))


# a free root joint (a floating base): tree_plan(model), which mass_matrix asks for

FREE_ROBOTS = ["centauro", "go2", "solo12", "talos_reduced", "free_tree", "free_chain",
               "arm_and_free"]


def free_model(name):
    builders = {"free_chain": free_chain, "arm_and_free": arm_and_free}
    return builders[name]() if name in builders else F.model(name)


def arm_and_free(seed=5):
    """A fixed base carrying a two-joint arm and, on a free joint (a floating object), a body
    with two revolute joints: the free row is a root but not the first, next to another root."""
    rng = np.random.default_rng(seed)
    b = ldr.ModelBuilder("arm_and_free")
    b.add_link("base")
    for name, joint, parent in (("r0", ldr.Revolute(rng.normal(size=3)), "base"),
                                ("p0", ldr.Prismatic(rng.normal(size=3)), "l_r0"),
                                ("float", ldr.Free(), "base"),
                                ("r1", ldr.Revolute(rng.normal(size=3)), "l_float"),
                                ("r2", ldr.Revolute(rng.normal(size=3)), "l_float")):
        b.add_link("l_" + name, mass=rng.uniform(0.5, 2.0), com=rng.normal(size=3) * 0.1,
                   inertia=np.diag(rng.uniform(0.015, 0.025, 3)))   # a + b > c: physical
        origin = np.eye(4)
        origin[:3, :3], origin[:3, 3] = so3.exp(rng.normal(size=3)), rng.normal(size=3) * 0.3
        b.add_joint(name, joint, parent, "l_" + name, origin=origin)
    m = b.build()
    P = tree_plan(m)
    assert P[3, TOPO + KS.TK] == KS.FREE and P[3, TOPO + KS.TP] == 0 == P[1, TOPO + KS.TP]
    return m


def free_chain(seed=3):
    """A free body on the world (origin rotated and shifted) and a chain below it of revolute
    and prismatic joints about arbitrary axes: every body the child of the one before, so the
    kernel writes every entry of M itself."""
    rng = np.random.default_rng(seed)
    b = ldr.ModelBuilder("free_chain")
    parent = None
    for name, joint in (("float", ldr.Free()), ("r1", ldr.Revolute(rng.normal(size=3))),
                        ("p1", ldr.Prismatic(rng.normal(size=3))),
                        ("r2", ldr.Revolute(rng.normal(size=3)))):
        mass, (x, y, z) = rng.uniform(0.5, 2.0), rng.uniform(0.05, 0.5, 3)
        b.add_link("l_" + name, mass=mass, com=rng.normal(size=3) * 0.1,
                   inertia=mass / 12 * np.diag([y * y + z * z, x * x + z * z, x * x + y * y]),
                   com_rotation=so3.exp(rng.normal(size=3)))
        origin = np.eye(4)
        origin[:3, :3], origin[:3, 3] = so3.exp(rng.normal(size=3)), rng.normal(size=3) * 0.3
        b.add_joint(name, joint, parent, "l_" + name, origin=origin)
        parent = "l_" + name
    return b.build()


def free_tree_entry(m, q):
    M = np.full((m.nv, m.nv), np.nan)
    assert TC.mass_matrix(tree_plan(m), q, M) == L.OK
    return M


@pytest.mark.parametrize("name", FREE_ROBOTS)
def test_free_root_equals_the_general_kernel(name):
    m = free_model(name)
    P = tree_plan(m)
    assert P is not None
    assert (P[1:, TOPO + KS.TK] == KS.FREE).sum() == 1
    d = m.create_data()
    for q in F.states(m, 20, seed=11)[0]:
        M = free_tree_entry(m, q)
        assert_close(M, general(m, q, d))
        np.testing.assert_array_equal(M, M.T)
        np.testing.assert_array_equal(ldr.mass_matrix(m, q), M)


@pytest.mark.parametrize("name", FREE_ROBOTS)
def test_free_root_m_a_is_the_inverse_dynamics_without_velocity_terms(name):
    m = free_model(name)
    Q, V, A = F.states(m, 10, seed=12)
    for q, v, a in zip(Q, V, A):
        rhs = ldr.inverse_dynamics(m, q, v, a) - ldr.inverse_dynamics(m, q, v, np.zeros(m.nv))
        np.testing.assert_allclose(free_tree_entry(m, q) @ a, rhs, rtol=0,
                                   atol=1e-10 * np.abs(rhs).max())


@pytest.mark.parametrize("name", ["centauro", "go2", "solo12", "talos_reduced"])
def test_free_root_against_pinocchio(name):
    m, path = free_model(name), F.PATHS[name]
    pm = build_pin_model(path, True)
    pd, mp = pm.createData(), PinMap(m, pm, path)
    for q in F.states(m, 5, seed=13)[0]:
        Mp = np.array(pin.crba(pm, pd, mp.q_to_pin(q)))
        assert_close(ldr.mass_matrix(m, q), mp.mat_from_pin(symmetrize_upper(Mp), q), tol=1e-10)


def test_free_root_block_is_the_body_frame_composite():
    """The base block is [[m 1, -m [c]], [m [c], I_c]] of the whole robot about the base frame:
    its linear part the total mass, whatever the configuration and the base pose, which M does
    not depend on (the same bits at another base pose)."""
    m = free_model("talos_reduced")
    mass = sum(float(m.mI[i, 3, 3]) for i in range(1, m.mi.shape[0]))
    Q = F.states(m, 5, seed=14)[0]
    for q, other in zip(Q, Q[::-1]):
        M = free_tree_entry(m, q)
        np.testing.assert_allclose(M[:3, :3], mass * np.eye(3), rtol=1e-14, atol=0)
        moved = q.copy()
        moved[:7] = other[:7]
        np.testing.assert_array_equal(free_tree_entry(m, moved), M)


@pytest.mark.parametrize("k", range(7))
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_free_root_non_finite_q_is_named(k, bad):
    """A NaN or Inf in the base position (which M does not depend on) or quaternion: the entry
    says NONFINITE, the public call the general path's error."""
    m = free_model("go2")
    q = F.states(m, 1, seed=15)[0][0]
    q[k] = bad
    assert TC.mass_matrix(tree_plan(m), q, np.empty((m.nv, m.nv))) == L.NONFINITE
    with pytest.raises(ldr.InputError, match=r"^non-finite values \(NaN or Inf\) in q$"):
        ldr.mass_matrix(m, q)


@pytest.mark.parametrize("scale", [1 + 2e-6, 1 - 2e-6, 0.5, 0.0])
def test_free_root_non_unit_quaternion_is_named(scale):
    m = free_model("centauro")
    q = F.states(m, 1, seed=16)[0][0]
    q[3:7] *= scale
    assert TC.mass_matrix(tree_plan(m), q, np.empty((m.nv, m.nv))) == L.BAD_QUATERNION
    with pytest.raises(ldr.InputError, match=r"^a quaternion in q is not of unit norm "
                                             r"\(tolerance 1e-6\)"):
        ldr.mass_matrix(m, q)
    with pytest.raises(ldr.InputError, match="not of unit norm"):
        ldr.mass_matrix(m, list(q))     # the checked path, after its conversion


def test_free_root_quaternion_within_tolerance_is_served():
    m = free_model("centauro")
    d = m.create_data()
    q = F.states(m, 1, seed=17)[0][0]
    for scale in (1 + 5e-7, 1 - 5e-7):
        qs = q.copy()
        qs[3:7] *= scale
        assert_close(free_tree_entry(m, qs), general(m, qs, d))


def test_free_root_other_forms_of_q_give_the_same_bits():
    m = free_model("go2")
    q = F.states(m, 1, seed=18)[0][0]
    ref = ldr.mass_matrix(m, q)
    np.testing.assert_array_equal(ref, free_tree_entry(m, q))
    for form in (np.repeat(q, 2)[::2], q.reshape(m.nq, 1), list(q)):
        np.testing.assert_array_equal(ldr.mass_matrix(m, form), ref)


def test_a_free_joint_below_a_body_has_no_tree_plan():
    """A free joint below a body has no plan: the general kernel, as before."""
    below = F.free_tree(free_below=True)
    assert tree_plan(below) is None
    q = ldr.random_configuration(below, rng=19)
    np.testing.assert_array_equal(ldr.mass_matrix(below, q), general(below, q, below.create_data()))


def test_free_root_threads_share_the_model():
    """Stack scratch only: concurrent calls on one floating-base model, each state's own M."""
    m = free_model("centauro")
    Q = F.states(m, 32, seed=20)[0]
    ref = [free_tree_entry(m, q) for q in Q]

    def run(k):
        return [ldr.mass_matrix(m, Q[k]) for _ in range(100)]

    with ThreadPoolExecutor(4) as pool:
        for k, outs in enumerate(pool.map(run, range(32))):
            for out in outs:
                np.testing.assert_array_equal(out, ref[k])


def test_free_root_allocates_only_the_returned_matrix():
    m = free_model("go2")
    q = F.states(m, 1, seed=21)[0][0]
    out = ldr.mass_matrix(m, q)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        kept = [ldr.mass_matrix(m, q) for _ in range(50)]
        cur, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (cur - base) / len(kept) <= out.nbytes + 200
    assert peak - cur < 2048
