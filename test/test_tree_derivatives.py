"""The dynamics derivatives of one state on the tree plan (kernels/tree_derivatives.py).

The entry must give what the general compiled entry (kernels/derivatives_plan.py: world-frame
Table 5 with 6 x nv S matrices and 6 x 6 products on a Data buffer) gives on the same states,
to 1e-11 of each matrix's largest entry (another frame per root, another summation order, FMA
contraction, a polynomial sine); what Pinocchio's computeRNEADerivatives gives; central
differences of ldr.inverse_dynamics (an identity: dtau/dq on the configuration manifold,
dtau/dv, and M = dtau/da with the armature); the statuses and errors of the general path; and
the public call takes it for a float64 state and gives the same bits for every other form of
the same state. The forward-dynamics derivatives the same way, to 1e-10 of the general entry
(M^-1 multiplies M's rounding by its condition number), against computeABADerivatives and
central differences of ldr.forward_dynamics.
"""
import math

import numpy as np
import pinocchio as pin
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros import precompile
from lie_dynamics_ros.algorithms import derivatives as AD
from lie_dynamics_ros.algorithms.tree_plan import tree_plan
from lie_dynamics_ros.kernels import derivatives_plan as E
from lie_dynamics_ros.kernels import layout as L
from lie_dynamics_ros.kernels import soa as KS
from lie_dynamics_ros.kernels import tree_derivatives as TD
from lie_dynamics_ros.kernels.tree import MAX_BODIES, TOPO
from lie_dynamics_ros.lie import so3
from oracle import Oracle, rel_err
import test_batch_soa_free as F
from test_tree_rnea import PATHS, free_model, model, revolute_q, state

TOL = 1e-11
NAMES = ("dtau_dq", "dtau_dv", "M")
FIXED = ["arm7", "xarm7", "ur5", "axes_tree", "xarm7_armature", "axes_tree_armature"]
FREE = ["go2", "solo12", "talos_reduced", "free_tree", "arm_and_free", "two_free"]
_TWO_FREE = []


def robot(name):
    if name == "two_free":
        if not _TWO_FREE:
            _TWO_FREE.append(two_free())
        return _TWO_FREE[0]
    return model(name) if name in FIXED else free_model(name)


def two_free(seed=5):
    """Two floating bodies on the world, each root of its own frame, one carrying a revolute
    and a prismatic joint about arbitrary axes."""
    rng = np.random.default_rng(seed)
    b = ldr.ModelBuilder("two_free")
    b.add_link("base")
    for name, joint, parent in (("f1", ldr.Free(), "base"),
                                ("r1", ldr.Revolute(rng.normal(size=3)), "l_f1"),
                                ("f2", ldr.Free(), "base"), ("r2", ldr.Revolute((0, 1, 0)), "l_f2"),
                                ("p2", ldr.Prismatic(rng.normal(size=3)), "l_r2")):
        b.add_link("l_" + name, mass=rng.uniform(0.5, 2.0), com=rng.normal(size=3) * 0.1,
                   inertia=np.diag(rng.uniform(0.015, 0.025, 3)))
        origin = np.eye(4)
        origin[:3, :3], origin[:3, 3] = so3.exp(rng.normal(size=3)), rng.normal(size=3) * 0.3
        b.add_joint(name, joint, parent, "l_" + name, origin=origin)
    return b.build()


def states(m, n, seed):
    if m.nq == m.nv:
        rng = np.random.default_rng(seed)
        return [state(m, rng) for _ in range(n)]
    Q, V, A = F.states(m, n, seed=seed)
    return list(zip(Q, V, A))


def general(m, q, v, a):
    """The general compiled entry on the same state (status, out)."""
    out = np.empty((3, m.nv, m.nv))
    return E.inverse_dynamics_derivatives(m.create_data().buf, q, v, a, out), out


def tree(m, q, v, a):
    """The tree entry (status, out)."""
    out = np.empty((3, m.nv, m.nv))
    return TD.inverse_dynamics_derivatives(tree_plan(m), q, v, a, out), out


def general_fd(m, q, v, tau):
    out = np.empty((3, m.nv, m.nv))
    return E.forward_dynamics_derivatives(m.create_data().buf, q, v, tau, out), out


def tree_fd(m, q, v, tau):
    out = np.empty((3, m.nv, m.nv))
    return TD.forward_dynamics_derivatives(tree_plan(m), q, v, tau, out), out


def assert_close(ours, ref, tol=TOL):
    for name, x, y in zip(NAMES, ours, ref):
        err = np.abs(x - y).max() / max(np.abs(y).max(), 1e-300)
        assert err <= tol, f"{name}: relative deviation {err:.2e}"


@pytest.mark.parametrize("big", [0.0, 1e3, 3 * KS.BIG_ANGLE])
@pytest.mark.parametrize("name", FIXED + FREE)
def test_equals_the_general_entry(name, big):
    """Random states; ``big`` moves the revolute joints by about that many radians (beyond
    BIG_ANGLE the sine is libm's). About an off-axis joint the general kernel's Rodrigues
    formula takes the angle as |a q|, an ulp or two of q off: the tolerance grows by that (as
    in test_tree_rnea.py)."""
    m = robot(name)
    off_axis = name.startswith("axes_tree") or name in ("free_tree", "arm_and_free", "two_free")
    tol = TOL + (4 * np.finfo(float).eps * big if off_axis else 0.0)
    assert tree_plan(m) is not None
    rev = revolute_q(m)
    rng = np.random.default_rng(31)
    for q, v, a in states(m, 6, seed=32):
        q[rev] += big * rng.choice([-1.0, 1.0], len(rev))
        st, ours = tree(m, q, v, a)
        st_ref, ref = general(m, q, v, a)
        assert st == st_ref == L.OK
        assert_close(ours, ref, tol)
        assert np.array_equal(ours[2], ours[2].T)


def test_armature_is_on_the_diagonal_of_M_alone():
    m0, m = model("axes_tree"), model("axes_tree_armature")
    q, v, a = state(m, np.random.default_rng(2))
    ours, ref = tree(m, q, v, a)[1], tree(m0, q, v, a)[1]
    assert np.array_equal(ours[:2], ref[:2])
    np.testing.assert_allclose(ours[2] - ref[2], np.diag(m.armature), rtol=1e-12, atol=1e-13)


def _pin_derivatives(oracle, m, q, v, a):
    pm = oracle.pm
    for jn, vi in zip(m.joint_names, m.joint_v_index):
        pm.armature[pm.joints[pm.getJointId(jn)].idx_v] = m.armature[vi]
    qp, vp, ap = oracle._qva(q, v, a)
    dq, dv, M = pin.computeRNEADerivatives(pm, oracle.pd, qp, vp, ap)
    M = np.triu(M) + np.triu(M, 1).T
    T = oracle.map.T(q)
    return [T.T @ np.asarray(x) @ T for x in (dq, dv, M)]


@pytest.mark.parametrize("name,fb", [("xarm7", False), ("xarm7_armature", False),
                                     ("solo12", True)])
def test_against_pinocchio(name, fb):
    m = robot(name)
    path = PATHS[name.split("_")[0]] if not fb else F.PATHS[name]
    oracle = Oracle(m, path, fb)
    for q, v, a in states(m, 5, seed=13):
        st, ours = tree(m, q, v, a)
        assert st == L.OK
        for what, x, y in zip(NAMES, ours, _pin_derivatives(oracle, m, q, v, a)):
            assert rel_err(x, y) <= 1e-10, (what, rel_err(x, y))


@pytest.mark.parametrize("name", ["xarm7_armature", "axes_tree", "arm_and_free"])
def test_central_differences_of_inverse_dynamics(name):
    """dtau/dq along ldr.integrate (the tangent space), dtau/dv and dtau/da = M."""
    m = robot(name)
    q, v, a = states(m, 1, seed=17)[0]
    st, (dq, dv, M) = tree(m, q, v, a)
    assert st == L.OK
    tau = lambda qq, vv, aa: ldr.inverse_dynamics(m, qq, vv, aa)  # noqa: E731
    h = 1e-6
    fq = np.stack([(tau(ldr.integrate(m, q, h * e), v, a) - tau(ldr.integrate(m, q, -h * e), v, a))
                   / (2 * h) for e in np.eye(m.nv)], axis=1)
    fv = np.stack([(tau(q, v + h * e, a) - tau(q, v - h * e, a)) / (2 * h)
                   for e in np.eye(m.nv)], axis=1)
    fa = np.stack([(tau(q, v, a + e) - tau(q, v, a - e)) / 2 for e in np.eye(m.nv)], axis=1)
    for what, x, y, tol in (("dq", dq, fq, 1e-6), ("dv", dv, fv, 1e-6), ("M", M, fa, 1e-12)):
        assert rel_err(x, y) <= tol, (what, rel_err(x, y))
    assert rel_err(M, ldr.mass_matrix(m, q)) <= 1e-13


@pytest.mark.parametrize("name", ["arm7", "solo12"])
def test_the_public_call_takes_the_tree_entry(name):
    """A float64 state gives the entry's bits; lists, int64, strided, read-only arrays and
    (n, 1) columns (the checked path) give the bits of the same state as float64; the entry
    is closed to other signatures; f_ext takes the general kernels."""
    m = robot(name)
    q, v, a = states(m, 1, seed=5)[0]
    ours = ldr.inverse_dynamics_derivatives(m, q, v, a)
    ref = tree(m, q, v, a)[1]
    for x, y in zip(ours, ref):
        assert np.array_equal(x, y)
    fn, sig = TD.SIGNATURES["inverse_dynamics_derivatives"]
    assert fn.signatures == [sig]
    with pytest.raises(TypeError):
        fn(tree_plan(m), np.arange(m.nq), v, a, np.empty((3, m.nv, m.nv)))
    strided = np.repeat(q, 2)[::2]
    ro = q.copy()
    ro.flags.writeable = False
    for qq in (strided, ro, list(q), q.reshape(-1, 1)):
        for x, y in zip(ldr.inverse_dynamics_derivatives(m, qq, v, a), ref):
            assert np.array_equal(x, y)
    vi, ai = np.arange(m.nv) - 3, np.arange(m.nv) % 4
    for x, y in zip(ldr.inverse_dynamics_derivatives(m, q, vi, list(ai)),
                    tree(m, q, vi.astype(float), ai.astype(float))[1]):
        assert np.array_equal(x, y)
    for x, y in zip(ldr.inverse_dynamics_derivatives(m, q, v, a, data=m.create_data()), ref):
        assert np.array_equal(x, y)
    fext = ldr.inverse_dynamics_derivatives(m, q, v, a, f_ext=np.zeros((len(m.body_names), 6)))
    assert_close(fext, ref)
    # the per-direction form of Table 5 (no world frame), the test hook of the general path
    assert_close(ldr.inverse_dynamics_derivatives(m, q, v, a, _world_form=False), ref, 1e-10)


def test_batches_keep_the_general_rows():
    m = robot("arm7")
    Q, V, A = (np.array(x) for x in zip(*states(m, 3, seed=7)))
    dq, dv, M = ldr.inverse_dynamics_derivatives(m, Q, V, A)
    for r in range(3):
        assert_close((dq[r], dv[r], M[r]), tree(m, Q[r], V[r], A[r])[1])


@pytest.mark.parametrize("name,where", [("axes_tree", 0), ("axes_tree", -1), ("solo12", 0),
                                        ("solo12", 4), ("solo12", -1)])
@pytest.mark.parametrize("which", ["q", "v", "a"])
@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_a_non_finite_input_is_named(name, where, which, bad):
    """Anywhere: a root's q, a free joint's position or quaternion, a leaf's v or a."""
    m = robot(name)
    args = dict(zip("qva", states(m, 1, seed=1)[0]))
    args[which][where] = bad
    assert tree(m, *args.values())[0] == L.NONFINITE
    assert general(m, *args.values())[0] == L.NONFINITE
    with pytest.raises(ldr.InputError, match=rf"non-finite values \(NaN or Inf\) in {which}$"):
        ldr.inverse_dynamics_derivatives(m, *args.values())


@pytest.mark.parametrize("scale", [0.0, 0.9, 1.0 + 2e-6])
def test_a_non_unit_quaternion_is_named(scale):
    m = robot("solo12")
    q, v, a = states(m, 1, seed=3)[0]
    q[3:7] *= scale
    assert tree(m, q, v, a)[0] == L.BAD_QUATERNION
    with pytest.raises(ldr.InputError, match="quaternion"):
        ldr.inverse_dynamics_derivatives(m, q, v, a)


def test_a_quaternion_within_tolerance_is_normalized():
    m = robot("solo12")
    q, v, a = states(m, 1, seed=4)[0]
    q1 = q.copy()
    q1[3:7] *= 1.0 + 5e-7
    st, ours = tree(m, q1, v, a)
    assert st == L.OK
    assert_close(ours, tree(m, q, v, a)[1], 1e-12)


def test_finite_inputs_with_an_overflowing_result():
    m = robot("arm7")
    q, v, a = state(m, np.random.default_rng(4))
    v[:] = 1e160                       # (1e160)^2 overflows float64
    assert tree(m, q, v, a)[0] == L.OVERFLOW
    assert general(m, q, v, a)[0] == L.OVERFLOW
    with pytest.raises(ldr.InputError, match="overflow"):
        ldr.inverse_dynamics_derivatives(m, q, v, a)


@pytest.mark.parametrize("which", ["q", "v", "a"])
def test_a_wrong_length_is_named(which):
    m = robot("arm7")
    args = dict(zip("qva", state(m, np.random.default_rng(6))))
    args[which] = args[which][:-1]
    assert tree(m, *args.values())[0] == L.BAD_SIZE
    with pytest.raises(ldr.InputError, match=rf"^{which} must have shape"):
        ldr.inverse_dynamics_derivatives(m, *args.values())


def test_a_plan_or_output_of_another_shape_is_refused():
    m = robot("arm7")
    q, v, a = state(m, np.random.default_rng(8))
    P, fn = tree_plan(m), TD.inverse_dynamics_derivatives
    out = np.empty((3, m.nv, m.nv))
    narrow = np.ascontiguousarray(P[:, :TOPO])
    narrow.flags.writeable = False
    assert fn(narrow, q, v, a, out) == L.BAD_SIZE
    tall = np.zeros((MAX_BODIES + 1, P.shape[1]))
    tall[0] = P[0]
    tall.flags.writeable = False
    assert fn(tall, q, v, a, out) == L.BAD_SIZE
    assert fn(P, q, v, a, np.empty((2, m.nv, m.nv))) == L.BAD_SIZE
    assert fn(P, q, v, a, np.empty((3, m.nv, m.nv + 1))) == L.BAD_SIZE


def test_models_the_plan_does_not_serve_keep_the_general_entry():
    m = F.free_tree(free_below=True)
    assert tree_plan(m) is None
    q, v, a = states(m, 1, seed=9)[0]
    st, ref = general(m, q, v, a)
    assert st == L.OK
    for x, y in zip(ldr.inverse_dynamics_derivatives(m, q, v, a), ref):
        assert np.array_equal(x, y)


def test_precompile_reaches_the_entries():
    assert "lie_dynamics_ros.kernels.tree_derivatives" in precompile.KERNEL_MODULES
    precompile.warm_up_derivatives(ldr.load_urdf("arm7"))
    for entry in ("inverse_dynamics_derivatives", "forward_dynamics_derivatives"):
        assert getattr(AD.tree_ready, entry)
        fn, sig = TD.SIGNATURES[entry]
        assert fn.signatures == [sig]


# ------------------------------------------------------------- forward-dynamics derivatives
FD_TOL = 1e-10


@pytest.mark.parametrize("name", FIXED + FREE)
def test_forward_dynamics_derivatives_equal_the_general_entry(name):
    m = robot(name)
    for q, v, tau in states(m, 4, seed=41):
        st, ours = tree_fd(m, q, v, tau)
        st_ref, ref = general_fd(m, q, v, tau)
        assert st == st_ref == L.OK
        assert_close(ours, ref, FD_TOL)
        assert rel_err(ours[2] @ tree(m, q, v, v)[1][2], np.eye(m.nv)) <= 1e-12
        assert np.array_equal(ours[2], ours[2].T)


@pytest.mark.parametrize("name,fb", [("xarm7_armature", False), ("solo12", True)])
def test_forward_dynamics_derivatives_against_pinocchio(name, fb):
    m = robot(name)
    oracle = Oracle(m, PATHS[name.split("_")[0]] if not fb else F.PATHS[name], fb)
    pm = oracle.pm
    for jn, vi in zip(m.joint_names, m.joint_v_index):
        pm.armature[pm.joints[pm.getJointId(jn)].idx_v] = m.armature[vi]
    for q, v, tau in states(m, 4, seed=43):
        st, ours = tree_fd(m, q, v, tau)
        assert st == L.OK
        qp, vp, _ = oracle._qva(q, v)
        T = oracle.map.T(q)
        ref = pin.computeABADerivatives(pm, oracle.pd, qp, vp, T @ tau)
        for what, x, y in zip(("da_dq", "da_dv", "Minv"), ours, ref):
            y = T.T @ np.asarray(y) @ T
            assert rel_err(x, y) <= 1e-9, (what, rel_err(x, y))


@pytest.mark.parametrize("name", ["axes_tree_armature", "arm_and_free"])
def test_forward_dynamics_derivatives_central_differences(name):
    m = robot(name)
    q, v, tau = states(m, 1, seed=47)[0]
    st, (dq, dv, Minv) = tree_fd(m, q, v, tau)
    assert st == L.OK
    fd = lambda qq, vv, tt: ldr.forward_dynamics(m, qq, vv, tt)  # noqa: E731
    h = 1e-6
    fq = np.stack([(fd(ldr.integrate(m, q, h * e), v, tau)
                    - fd(ldr.integrate(m, q, -h * e), v, tau)) / (2 * h)
                   for e in np.eye(m.nv)], axis=1)
    fv = np.stack([(fd(q, v + h * e, tau) - fd(q, v - h * e, tau)) / (2 * h)
                   for e in np.eye(m.nv)], axis=1)
    ft = np.stack([(fd(q, v, tau + e) - fd(q, v, tau - e)) / 2 for e in np.eye(m.nv)], axis=1)
    for what, x, y, tol in (("dq", dq, fq, 1e-6), ("dv", dv, fv, 1e-6), ("Minv", Minv, ft, 1e-10)):
        assert rel_err(x, y) <= tol, (what, rel_err(x, y))


@pytest.mark.parametrize("name", ["arm7", "solo12"])
def test_the_public_fd_call_takes_the_tree_entry(name):
    m = robot(name)
    q, v, tau = states(m, 1, seed=6)[0]
    ref = tree_fd(m, q, v, tau)[1]
    for x, y in zip(ldr.forward_dynamics_derivatives(m, q, v, tau), ref):
        assert np.array_equal(x, y)
    fn, sig = TD.SIGNATURES["forward_dynamics_derivatives"]
    assert fn.signatures == [sig]
    strided = np.repeat(q, 2)[::2]
    ro = q.copy()
    ro.flags.writeable = False
    for qq in (strided, ro, list(q), q.reshape(-1, 1)):
        for x, y in zip(ldr.forward_dynamics_derivatives(m, qq, v, list(tau)), ref):
            assert np.array_equal(x, y)
    for x, y in zip(ldr.forward_dynamics_derivatives(m, q, v, tau, data=m.create_data()), ref):
        assert np.array_equal(x, y)
    fext = ldr.forward_dynamics_derivatives(m, q, v, tau, f_ext=np.zeros((len(m.body_names), 6)))
    assert_close(fext, ref, FD_TOL)
    Q, V, T = (np.array([x] * 2) for x in (q, v, tau))
    batch = ldr.forward_dynamics_derivatives(m, Q, V, T)
    assert_close([x[1] for x in batch], ref, FD_TOL)


@pytest.mark.parametrize("name,where", [("axes_tree", 0), ("axes_tree", -1), ("solo12", 4)])
@pytest.mark.parametrize("which", ["q", "v", "tau"])
def test_forward_dynamics_derivatives_name_a_non_finite_input(name, where, which):
    m = robot(name)
    args = dict(zip(("q", "v", "tau"), states(m, 1, seed=2)[0]))
    args[which][where] = math.nan
    assert tree_fd(m, *args.values())[0] == L.NONFINITE
    with pytest.raises(ldr.InputError, match=rf"non-finite values \(NaN or Inf\) in {which}$"):
        ldr.forward_dynamics_derivatives(m, *args.values())


def test_forward_dynamics_derivatives_other_statuses():
    m = robot("solo12")
    q, v, tau = states(m, 1, seed=3)[0]
    q[3:7] *= 0.9
    assert tree_fd(m, q, v, tau)[0] == L.BAD_QUATERNION
    with pytest.raises(ldr.InputError, match="quaternion"):
        ldr.forward_dynamics_derivatives(m, q, v, tau)
    m = robot("arm7")
    q, v, tau = state(m, np.random.default_rng(4))
    v[:] = 1e160
    assert tree_fd(m, q, v, tau)[0] == L.OVERFLOW
    with pytest.raises(ldr.InputError, match="overflow"):
        ldr.forward_dynamics_derivatives(m, q, v, tau)
    assert tree_fd(m, q[:-1], v, tau)[0] == L.BAD_SIZE
    with pytest.raises(ldr.InputError, match="^q must have shape"):
        ldr.forward_dynamics_derivatives(m, q[:-1], v, tau)


def test_a_massless_chain_is_singular():
    """A last joint that moves no mass: no positive pivot (SINGULAR), and the public call
    names the joint through the general path."""
    b = ldr.ModelBuilder("massless")
    b.add_link("base")
    b.add_link("l1", mass=1.0, com=(0, 0, 0.1), inertia=np.eye(3) * 1e-2)
    b.add_link("l2", mass=0.0, com=(0, 0, 0), inertia=np.zeros((3, 3)))
    b.add_joint("j1", ldr.Revolute((0, 0, 1)), "base", "l1")
    b.add_joint("j2", ldr.Revolute((0, 1, 0)), "l1", "l2")
    m = b.build()
    assert tree_plan(m) is not None
    z = np.zeros(m.nv)
    assert tree_fd(m, np.array([0.1, 0.2]), z, z)[0] == L.SINGULAR
    with pytest.raises(ldr.InputError, match="singular"):
        ldr.forward_dynamics_derivatives(m, np.array([0.1, 0.2]), z, z)


def test_four_threads_get_the_single_threaded_bits():
    """Scratch on the stack, no shared state: threads on one model agree bit for bit."""
    import threading
    m = robot("solo12")
    st = states(m, 8, seed=51)
    ref = [(tree(m, q, v, a)[1], tree_fd(m, q, v, a)[1]) for q, v, a in st]
    bad = []

    def worker(k):
        for _ in range(200):
            for (q, v, a), (r_id, r_fd) in zip(st[k::2], ref[k::2]):
                ours_id = ldr.inverse_dynamics_derivatives(m, q, v, a)
                ours_fd = ldr.forward_dynamics_derivatives(m, q, v, a)
                if not all(np.array_equal(x, y) for x, y in zip(ours_id + ours_fd,
                                                                list(r_id) + list(r_fd))):
                    bad.append(k)

    threads = [threading.Thread(target=worker, args=(k % 2,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad


@pytest.mark.parametrize("fn", ["inverse_dynamics_derivatives", "forward_dynamics_derivatives"])
def test_no_allocation_beyond_the_returned_arrays(fn):
    import tracemalloc
    m = robot("arm7")
    q, v, a = state(m, np.random.default_rng(52))
    f = getattr(ldr, fn)
    out = f(m, q, v, a)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        kept = [f(m, q, v, a) for _ in range(50)]
        cur, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    per_call = (cur - base) / len(kept)
    assert per_call <= 3 * out[0].nbytes + 600, per_call     # one (3, nv, nv) array, 3 views
    assert peak - cur < 2048, peak - cur
