"""The structure-of-arrays batched RNEA (``algorithms/batch_soa.py``, ``kernels/soa.py``).

It must give what ``ldr.inverse_dynamics`` gives state by state (to 1e-12 of each
row's largest torque: the kernels differ in summation order, FMA contraction and the sine), for
every batch size around the block of ``kernels.soa.B`` states, and what Pinocchio's RNEA gives.
Models it does not serve are refused with a sentence naming the joint; bad rows are named.
"""
import math

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms.batch_soa import (MIN_STATES, inverse_dynamics_soa, soa_plan,
                                                   soa_unsupported)
from lie_dynamics_ros.kernels import soa as KS
from lie_dynamics_ros.lie import so3
from models import general_twin, zoo
from oracle import Oracle, bundled, erd, rel_err

TOL = 1e-12
PATHS = {"arm7": bundled("arm7.urdf"), "xarm7": erd("xarm_description/urdf/xarm7.urdf"),
         "ur5": erd("ur_description/urdf/ur5_robot.urdf")}
_CACHE = {}


def axes_tree(seed=0):
    """A branching tree of revolute and prismatic joints about arbitrary, principal and negative
    principal axes, with rotated origins, a fixed link and rotated inertias."""
    rng = np.random.default_rng(seed)
    b = ldr.ModelBuilder("axes_tree")
    b.add_link("base")
    specs = [("r_any", ldr.Revolute(rng.normal(size=3)), "base"),
             ("p_any", ldr.Prismatic(rng.normal(size=3)), "l_r_any"),
             ("r_x", ldr.Revolute((1, 0, 0)), "l_p_any"),
             ("r_my", ldr.Revolute((0, -1, 0)), "l_r_x"),
             ("p_z", ldr.Prismatic((0, 0, 1)), "l_r_any"),       # a second branch
             ("r_mz", ldr.Revolute((0, 0, -1)), "l_p_z"),
             ("fix", ldr.Fixed(), "l_r_mz"),
             ("r_y", ldr.Revolute((0, 1, 0)), "l_fix"),
             ("p_mx", ldr.Prismatic((-1, 0, 0)), "base")]         # a second root
    for name, joint, parent in specs:
        m, (x, y, z) = rng.uniform(0.5, 2.0), rng.uniform(0.05, 0.5, 3)
        b.add_link("l_" + name, mass=m, com=rng.normal(size=3) * 0.1,
                   inertia=m / 12 * np.diag([y * y + z * z, x * x + z * z, x * x + y * y]),
                   com_rotation=so3.exp(rng.normal(size=3)))
        origin = np.eye(4)
        origin[:3, :3], origin[:3, 3] = so3.exp(rng.normal(size=3)), rng.normal(size=3) * 0.3
        b.add_joint(name, joint, parent, "l_" + name, origin=origin)
    return b.build()


def model(name):
    if name not in _CACHE:
        if name == "axes_tree":
            _CACHE[name] = axes_tree()
        elif name == "xarm7_armature":
            m0 = model("xarm7")
            _CACHE[name] = m0.with_joint_dynamics(
                armature=np.random.default_rng(3).uniform(0.05, 0.5, m0.nv))
        else:
            _CACHE[name] = ldr.load_urdf(PATHS[name])
    return _CACHE[name]


def states(m, N, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.array([ldr.random_configuration(m, rng) for _ in range(N)]).reshape(N, m.nq)
    return Q, rng.uniform(-2, 2, (N, m.nv)), rng.uniform(-3, 3, (N, m.nv))


def assert_rows_close(ours, ref):
    assert ours.shape == ref.shape
    scale = np.maximum(np.abs(ref).max(axis=1, keepdims=True), 1e-300)
    err = (np.abs(ours - ref) / scale).max()
    assert err <= TOL, f"row-relative deviation {err:.2e}"


ROBOTS = ["arm7", "xarm7", "ur5", "xarm7_armature", "axes_tree"]


@pytest.mark.parametrize("N", [1, 7, 8, 9, KS.B - 1, KS.B, KS.B + 1, 1000])
@pytest.mark.parametrize("name", ROBOTS)
def test_equals_the_per_state_path(name, N):
    m = model(name)
    Q, V, A = states(m, N, seed=N)
    assert_rows_close(inverse_dynamics_soa(m, Q, V, A), per_state(m, Q, V, A))
    # the public batched call takes this kernel from MIN_STATES states
    batched = ldr.inverse_dynamics(m, Q, V, A)
    if N >= MIN_STATES:
        np.testing.assert_array_equal(batched, inverse_dynamics_soa(m, Q, V, A))
    else:
        assert_rows_close(batched, per_state(m, Q, V, A))


def per_state(m, Q, V, A):
    """The single-state path, row by row (the reference the SoA kernel must reproduce)."""
    return np.array([ldr.inverse_dynamics(m, q, v, a) for q, v, a in zip(Q, V, A)])


def test_armature_is_in_the_torque():
    m0, m = model("xarm7"), model("xarm7_armature")
    Q, V, A = states(m, 20)
    d = inverse_dynamics_soa(m, Q, V, A) - inverse_dynamics_soa(m0, Q, V, A)
    np.testing.assert_allclose(d, A * m.armature, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["arm7", "xarm7", "ur5", "xarm7_armature"])
def test_against_pinocchio(name):
    m = model(name)
    path = PATHS[name.split("_")[0]]
    oracle = Oracle(m, path, False)
    pm = oracle.pm
    for jn, vi in zip(m.joint_names, m.joint_v_index):
        pm.armature[pm.joints[pm.getJointId(jn)].idx_v] = m.armature[vi]
    Q, V, A = states(m, 5, seed=11)
    tau = inverse_dynamics_soa(m, Q, V, A)
    for r in range(5):
        ref = oracle.rnea(Q[r], V[r], A[r])
        assert rel_err(tau[r], ref) <= 1e-10, (r, rel_err(tau[r], ref))


def test_gravity_and_static_torques():
    """A resting state gives the gravity torques; a different gravity is honoured."""
    m = model("axes_tree").with_gravity((1.0, -2.0, -9.0))
    Q, _, _ = states(m, 9)
    Z = np.zeros((9, m.nv))
    assert_rows_close(inverse_dynamics_soa(m, Q, Z, Z),
                      np.array([ldr.gravity_torques(m, q) for q in Q]))


def test_sincos_polynomial():
    """The branch-free sine and cosine of the revolute joints against libm: within 2 ulp of
    1 on |x| <= BIG_ANGLE, and libm itself beyond (a joint angle of 1e6 rad)."""
    rng = np.random.default_rng(5)
    xs = np.concatenate([rng.uniform(-7, 7, 2000), rng.uniform(-KS.BIG_ANGLE, KS.BIG_ANGLE, 2000),
                         np.arange(-8, 9) * math.pi / 4, [0.0, -0.0, 1e-300, KS.BIG_ANGLE]])
    for x in xs:
        s, c = KS._sincos(x)
        assert abs(s - math.sin(x)) <= 4.5e-16 and abs(c - math.cos(x)) <= 4.5e-16, x
    m = model("arm7")
    Q, V, A = states(m, 20)
    Q[3, 2] += 1e6
    Q[17, 0] -= 3e7
    assert_rows_close(inverse_dynamics_soa(m, Q, V, A), per_state(m, Q, V, A))


def test_plan_reuse_and_input_forms():
    m = model("ur5")
    Q, V, A = states(m, 10)
    ref = inverse_dynamics_soa(m, Q, V, A)
    plan = soa_plan(m)
    np.testing.assert_array_equal(inverse_dynamics_soa(m, Q, V, A, plan), ref)
    # lists, Fortran order, strided views: normalised once before the kernel
    np.testing.assert_array_equal(inverse_dynamics_soa(m, Q.tolist(), np.asfortranarray(V),
                                                       np.hstack([A, A])[:, :m.nv]), ref)
    out = inverse_dynamics_soa(m, Q, V, A)
    assert out is not ref and out.flags.c_contiguous and out.shape == (10, m.nv)
    with pytest.raises(ldr.InputError, match="plan was made for another model"):
        inverse_dynamics_soa(m, Q, V, A, soa_plan(model("arm7")))


@pytest.mark.parametrize("arg", ["q", "v", "a"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_row_is_named(arg, bad):
    m = model("xarm7")
    Q, V, A = states(m, 40)
    {"q": Q, "v": V, "a": A}[arg][23, 4] = bad
    with pytest.raises(ldr.InputError, match=rf"row 23: non-finite .* in {arg}$"):
        inverse_dynamics_soa(m, Q, V, A)


def test_overflow_row_is_named():
    m = model("arm7")
    Q, V, A = states(m, 30)
    V[29] = 1e160
    with pytest.raises(ldr.InputError, match="row 29: overflow"):
        inverse_dynamics_soa(m, Q, V, A)


@pytest.mark.parametrize("shapes, arg", [(((5, 6), (5, 7), (5, 7)), "q"),
                                         (((5, 7), (4, 7), (5, 7)), "v"),
                                         (((5, 7), (5, 7), (5,)), "a")])
def test_wrong_shapes_are_named(shapes, arg):
    m = model("arm7")
    with pytest.raises(ldr.InputError, match=rf"batched {arg} must have shape"):
        inverse_dynamics_soa(m, *[np.zeros(s) for s in shapes])
    with pytest.raises(ldr.InputError, match="batched q must be a numeric array"):
        inverse_dynamics_soa(m, [["x"] * 7], np.zeros((1, 7)), np.zeros((1, 7)))


def _mimic_model():
    b = ldr.ModelBuilder("mimic")
    b.add_link("base")
    for name, parent in (("j1", "base"), ("j2", "l_j1")):
        b.add_link("l_" + name, mass=1.0, com=(0.1, 0, 0), inertia=np.eye(3) * 0.01)
        b.add_joint(name, ldr.Revolute((0, 0, 1)), parent, "l_" + name,
                    mimic=("j1", 2.0, 0.0) if name == "j2" else None)
    return b.build()


@pytest.mark.parametrize("make, says", [
    (lambda: zoo(), "joint 'ball' is spherical"),     # its free root joint is served
    (lambda: zoo(floating=False, mimic=False), "joint 'ball' is spherical"),
    (_mimic_model, "joint 'j2' is a mimic joint"),
    (lambda: general_twin()[1], "is general"),
    (lambda: ldr.load_urdf(bundled("loops/four_bar.urdf")), "closed kinematic loops"),
])
def test_unsupported_models_are_refused(make, says):
    m = make()
    assert says in soa_unsupported(m)
    Q, V, A = states(m, 3)
    with pytest.raises(ldr.InputError, match="use ldr.inverse_dynamics"):
        inverse_dynamics_soa(m, Q, V, A)
    with pytest.raises(ldr.InputError, match=says.replace("(", r"\(")):
        soa_plan(m)
    assert soa_plan(m, strict=False) is None


def test_supported_models_say_so():
    for name in ROBOTS:
        assert soa_unsupported(model(name)) is None
        topo, geo = soa_plan(model(name), strict=False)
        np.testing.assert_array_equal(geo, soa_plan(model(name))[1])


def test_empty_batch():
    m = model("arm7")
    assert inverse_dynamics_soa(m, np.zeros((0, m.nq)), np.zeros((0, m.nv)),
                                np.zeros((0, m.nv))).shape == (0, m.nv)


def test_concurrent_callers_get_bit_identical_results():
    """Four Python threads (a multi-threaded executor) share one model and its plan."""
    from concurrent.futures import ThreadPoolExecutor
    m = model("xarm7")
    plan = soa_plan(m)
    batches = [states(m, 700 + 50 * k, seed=k) for k in range(4)]
    alone = [inverse_dynamics_soa(m, *s, plan=plan) for s in batches]
    with ThreadPoolExecutor(4) as ex:
        for _ in range(3):
            together = list(ex.map(lambda s: inverse_dynamics_soa(m, *s, plan=plan), batches))
            for x, y in zip(alone, together):
                np.testing.assert_array_equal(x, y)


def test_a_non_rigid_inertia_is_refused():
    """The kernel reads Ibar, m c and m from the 6x6 inertia: one of another form is named."""
    m = model("ur5")
    n = m.mi.shape[0]
    topo, geo = np.zeros((n, KS.NT), dtype=np.int64), np.zeros((n, KS.NG))
    assert KS.build_plan(m.mi, m.mc, m.mI, topo, geo) == 0
    for r, c in ((3, 4), (4, 4), (0, 4)):
        mI = m.mI.copy()
        mI[3, r, c] += 1e-6
        assert KS.build_plan(m.mi, m.mc, mI, topo, geo) == 4 * 3 + KS.INERTIA


def test_the_plan_is_built_once_per_model_and_shared():
    """The plan is derived from the frozen model once (Model.derived), read-only, the same
    object from every thread; a rebuilt or unpickled model makes its own."""
    import pickle
    from concurrent.futures import ThreadPoolExecutor
    m = ldr.load_urdf("arm7")
    plan = soa_plan(m)
    assert all(not x.flags.writeable for x in plan)
    with ThreadPoolExecutor(4) as ex:
        assert all(p is plan for p in ex.map(lambda _: soa_plan(m), range(16)))
    Q, V, A = states(m, 40)
    np.testing.assert_array_equal(ldr.inverse_dynamics(m, Q, V, A),
                                  inverse_dynamics_soa(m, Q, V, A, plan))
    assert soa_plan(m) is plan
    other = m.with_gravity([0.0, 0.0, -1.62])
    assert soa_plan(other) is not plan
    np.testing.assert_array_equal(soa_plan(other)[0], plan[0])
    assert not np.array_equal(soa_plan(other)[1], plan[1])      # gravity lives in geo
    back = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(soa_plan(back)[1], plan[1])
    calls = []
    assert m.derived("probe", lambda mm: calls.append(mm) or 1) == 1
    assert m.derived("probe", lambda mm: calls.append(mm) or 2) == 1 and calls == [m]
    assert m.derived_items.probe == 1 and m.derived_items.soa_plan is m.derived("soa_plan", None)
    with pytest.raises(AttributeError):
        m.derived_items.probe = 2                # made by model.derived only
    with pytest.raises(AttributeError):
        m.derived_items.not_made_yet
    assert not hasattr(back.derived_items, "probe")     # a pickled model derives its own
