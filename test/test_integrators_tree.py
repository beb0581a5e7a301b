"""The compiled integrators (``kernels/integrate.py``) on the tree ABA of ``kernels/tree_aba.py``.

A revolute/prismatic tree (on a free root too: a floating base) without prescribed joints passes
its packed plan to the steps, which then take the tree ABA at every stage; other models (and
hybrid steps) pass an empty plan and keep the general ABA. The tree path must give the general path's trajectories (to 1e-12 of
their size over 500 steps: another summation order and FMA contraction per stage) through
``simulate``, ``make_stepper`` and ``rollout``, must really run (a plan with another gravity
changes the motion as that gravity does), and must leave a failing stage to the general ABA so
that the status and the failing joint are exactly those of the general path.
"""
import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms.tree_plan import tree_plan
from lie_dynamics_ros.integrators import simulate as S
from lie_dynamics_ros.integrators.tableaus import RK4
from lie_dynamics_ros.kernels import integrate as KI
from lie_dynamics_ros.kernels import layout as L
from lie_dynamics_ros.kernels import soa as KS
from lie_dynamics_ros.kernels import tree as KT
from models import zoo
from oracle import bundled, erd

TOL = 1e-12
STEPS, DT = 500, 1e-3
#: the methods with a compiled step (``simulate``'s module docstring)
COMPILED = ["semi_implicit", "euler", "lie_euler", "rk3", "rkmk3", "rkmk4", "rkmk5", "cf4"]
PATHS = {"ur10": erd("ur_description/urdf/ur10_robot.urdf"),
         "ur5": erd("ur_description/urdf/ur5_robot.urdf"), "arm7": bundled("arm7.urdf")}
GO2 = erd("go2_description/urdf/go2.urdf")
_MODELS = {}


def model(name):
    if name not in _MODELS:
        _MODELS[name] = (ldr.load_urdf(GO2, floating_base=True) if name == "go2" else
                         ldr.load_urdf(PATHS[name]))
    return _MODELS[name]


def start(m, seed=0):
    """A random configuration, a brisk velocity and torques that are not zero."""
    rng = np.random.default_rng(seed)
    return (ldr.random_configuration(m, rng), rng.uniform(-2, 2, m.nv),
            rng.uniform(-3, 3, m.nv))


@pytest.fixture
def general(monkeypatch):
    """Runs ``fn`` with the steps on the general ABA (no model gets a plan)."""
    def run(fn):
        with monkeypatch.context() as mp:
            mp.setattr(S, "tree_plan", lambda m: None)
            return fn()
    return run


def assert_close(ours, ref, tol=TOL):
    err = np.abs(ours - ref).max() / max(np.abs(ref).max(), 1.0)
    assert err <= tol, f"relative deviation {err:.2e}"


@pytest.mark.parametrize("method", COMPILED)
@pytest.mark.parametrize("name", list(PATHS))
def test_simulate_equals_the_general_path(name, method, general):
    m = model(name)
    assert tree_plan(m) is not None
    q0, v0, tau = start(m)

    def run():
        return S.simulate(m, q0, v0, STEPS * DT, DT, method, tau=tau)
    a, b = run(), general(run)
    assert a.compiled and b.compiled and a.q.shape == (STEPS + 1, m.nq)
    assert_close(a.q, b.q)
    assert_close(a.v, b.v)


@pytest.mark.parametrize("method", ["semi_implicit", "rkmk4", "cf4"])
@pytest.mark.parametrize("name", list(PATHS))
def test_make_stepper_and_rollout_equal_the_general_path(name, method, general):
    m = model(name)
    q0, v0, tau = start(m, seed=1)

    def steps():
        step = S.make_stepper(m, method)
        q, v = q0, v0
        for _ in range(STEPS):
            q, v = step(q, v, DT, tau)
        return q, v
    (qa, va), (qb, vb) = steps(), general(steps)
    assert_close(qa, qb)
    assert_close(va, vb)
    rng = np.random.default_rng(2)
    Q0 = np.array([ldr.random_configuration(m, rng) for _ in range(3)])
    V0 = rng.uniform(-2, 2, (3, m.nv))
    TAU = rng.uniform(-3, 3, (3, m.nv))

    def roll():
        return S.rollout(m, Q0, V0, STEPS * DT, DT, method, tau=TAU)
    ra, rb = roll(), general(roll)
    assert ra.compiled and rb.compiled
    assert_close(ra.q, rb.q)
    assert_close(ra.v, rb.v)
    # the stepper's steps are the rollout's (same kernel, same plan)
    q, v = Q0[1], V0[1]
    step = S.make_stepper(m, method)
    for _ in range(STEPS):
        q, v = step(q, v, DT, TAU[1])
    np.testing.assert_array_equal(q, ra.q[1, -1])
    np.testing.assert_array_equal(v, ra.v[1, -1])


@pytest.mark.parametrize("method", ["semi_implicit", "rkmk4", "cf4"])
@pytest.mark.parametrize("name", ["ur10", "go2"])
def test_the_plan_is_what_the_steps_run(name, method, general, monkeypatch):
    """A plan holding zero gravity gives the motion of the model without gravity (on the general
    path): the steps read the plan, not the model arrays."""
    m = model(name)
    q0, v0, tau = start(m, seed=3)
    P = tree_plan(m).copy()
    P[0, KS.GX:KS.GX + 3] = 0.0
    P.flags.writeable = False
    weightless = m.with_gravity(np.zeros(3))
    ref = general(lambda: S.simulate(weightless, q0, v0, 0.1, DT, method, tau=tau))
    with monkeypatch.context() as mp:
        mp.setattr(S, "tree_plan", lambda model: P)
        res = S.simulate(m, q0, v0, 0.1, DT, method, tau=tau)
    assert_close(res.q, ref.q)
    assert_close(res.v, ref.v)
    heavy = S.simulate(m, q0, v0, 0.1, DT, method, tau=tau)
    assert np.abs(heavy.q - res.q).max() > 1e-3        # gravity does move the arm


def test_hybrid_steps_keep_the_general_kernel():
    """Prescribed joints: the compiled hybrid step equals the Python path's hybrid dynamics."""
    m = model("ur10")
    q0, v0, tau = start(m, seed=4)
    mask = np.zeros(m.nv, dtype=bool)
    mask[[1, 4]] = True
    a_p = np.linspace(-1, 1, m.nv)
    a = S.simulate(m, q0, v0, 0.1, 0.01, tau=tau, prescribed=mask, a_prescribed=a_p)
    b = S.simulate(m, q0, v0, 0.1, 0.01, tau=tau, prescribed=mask,
                   a_prescribed=lambda t, q, v: a_p)
    assert a.compiled and not b.compiled
    assert_close(a.q, b.q)
    assert_close(a.v, b.v)


# ----------------------------------------------------------------------------- failing stages
def _chain(end_mass, end_inertia, com):
    """A two-joint arm whose end body has no inertia about its joint axis: D = 0 there."""
    b = ldr.ModelBuilder("singular")
    b.add_link("base")
    b.add_link("upper", mass=1.0, com=(0.3, 0, 0), inertia=np.eye(3) * 0.01)
    b.add_link("end", mass=end_mass, com=com, inertia=end_inertia)
    b.add_joint("shoulder", ldr.Revolute((0, 1, 0)), "base", "upper")
    b.add_joint("spin", ldr.Revolute((0, 0, 1)), "upper", "end")
    return b.build()


SINGULAR = [pytest.param(_chain(0.0, np.zeros((3, 3)), (0, 0, 0)), id="massless_end"),
            pytest.param(_chain(1.0, np.zeros((3, 3)), (0, 0, 0.2)), id="point_mass_on_the_axis")]


def _kernel_step(m, P, method, q, v, tau):
    """(status, failed row) of one ``KI.step`` on a fresh Data of m with the plan P."""
    d = m.create_data()
    ta, tb = ((np.ascontiguousarray(RK4.a), np.ascontiguousarray(RK4.b)) if method == KI.RKMK
              else (np.zeros((0, 0)), np.zeros(0)))
    wk = np.zeros((KI.WK_ROWS + 7, max(m.nq, 2 * m.nv, 1)))
    d.failed_row[:] = -1
    st = KI.step(m.mi, m.mc, m.mI, d.dv, d.dm, P, method, ta, tb, q, v, DT, tau,
                 np.zeros(m.nv), np.zeros(0, dtype=np.bool_), d.prescribed_body, d.failed_row,
                 wk, np.empty(m.nq), np.empty(m.nv))
    return st, int(d.failed_row[0])


def _no_plan():
    P = np.zeros((0, KT.NP))
    P.flags.writeable = False
    return P


@pytest.mark.parametrize("method", [KI.SEMI_IMPLICIT, KI.RKMK, KI.CF4])
@pytest.mark.parametrize("m", SINGULAR)
def test_a_singular_stage_gives_the_general_status_and_joint(m, method):
    P = tree_plan(m)
    assert P is not None
    q, v, tau = np.array([0.3, -0.2]), np.array([0.5, 1.0]), np.array([0.1, 0.0])
    tree_st, tree_row = _kernel_step(m, P, method, q, v, tau)
    gen_st, gen_row = _kernel_step(m, _no_plan(), method, q, v, tau)
    assert tree_st == gen_st == L.SINGULAR
    assert tree_row == gen_row and m.body_joint_names[tree_row] == "spin"


@pytest.mark.parametrize("bad", ["q", "v", "tau"])
def test_a_non_finite_stage_gives_the_general_status(bad):
    m = model("arm7")
    state = dict(zip(("q", "v", "tau"), start(m, seed=5)))
    state[bad] = state[bad].copy()
    state[bad][2] = np.nan
    for method in (KI.SEMI_IMPLICIT, KI.RKMK, KI.CF4):
        tree_st, _ = _kernel_step(m, tree_plan(m), method, *state.values())
        gen_st, _ = _kernel_step(m, _no_plan(), method, *state.values())
        assert tree_st == gen_st != L.OK


@pytest.mark.parametrize("method", ["semi_implicit", "rkmk4", "cf4"])
@pytest.mark.parametrize("m", SINGULAR)
def test_simulate_names_the_singular_joint(m, method):
    q, v = np.array([0.3, -0.2]), np.array([0.5, 1.0])
    with pytest.raises(ldr.InputError, match="singular articulated inertia: joint 'spin'"):
        S.simulate(m, q, v, 0.01, DT, method)
    with pytest.raises(ldr.InputError, match="singular articulated inertia: joint 'spin'"):
        S.make_stepper(m, method)(q, v, DT)
    with pytest.raises(ldr.InputError,
                       match="row 0: .*singular articulated inertia: joint 'spin'"):
        S.rollout(m, np.tile(q, (2, 1)), np.tile(v, (2, 1)), 0.01, DT, method)


# ----------------------------------------------------------------------------- floating base
@pytest.mark.parametrize("method", ["semi_implicit", "rkmk4", "cf4"])
def test_a_floating_base_takes_the_tree_aba(method, general):
    """go2 (free base, 12 joints): served (a free root); 500 steps equal the general
    path's and the Python path's (callable torques). Torques and speeds are 0.3 of ``start``'s:
    under +-3 N m the light legs spin up to 500 rad/s and this chaotic motion grows a
    difference of round-off from 1e-17 at step 100 to 1e-12 by step 500."""
    m = model("go2")
    assert tree_plan(m) is not None
    q0, v0, tau = start(m, seed=6)
    v0, tau = 0.3 * v0, 0.3 * tau

    def run():
        return S.simulate(m, q0, v0, STEPS * DT, DT, method, tau=tau)
    a, b = run(), general(run)
    assert a.compiled and b.compiled and np.all(np.isfinite(a.q))
    assert_close(a.q, b.q)
    assert_close(a.v, b.v)
    c = S.simulate(m, q0, v0, 0.1, DT, method, tau=lambda t, q, v: tau)
    assert not c.compiled
    assert_close(a.q[:101], c.q)
    assert_close(a.v[:101], c.v)
    rng = np.random.default_rng(8)
    Q0 = np.array([ldr.random_configuration(m, rng) for _ in range(3)])
    V0, TAU = rng.uniform(-0.6, 0.6, (3, m.nv)), rng.uniform(-1, 1, (3, m.nv))

    def roll():
        return S.rollout(m, Q0, V0, STEPS * DT, DT, method, tau=TAU)
    ra, rb = roll(), general(roll)
    assert_close(ra.q, rb.q)
    assert_close(ra.v, rb.v)


def test_the_base_quaternion_stays_unit():
    """The steps move the quaternion by products with exponentials (no renormalization, as on
    the general path): after 5000 brisk rkmk4 steps its norm is 1 to round-off, far inside the
    1e-6 that the ABA accepts (and normalizes)."""
    m = model("go2")
    q0, v0, tau = start(m, seed=9)
    v0[3:6] = (3.0, -2.0, 4.0)      # the base spins
    res = S.simulate(m, q0, v0, 5.0, DT, "rkmk4", tau=tau)
    assert res.q.shape[0] == 5001
    assert np.abs(np.linalg.norm(res.q[:, 3:7], axis=1) - 1.0).max() <= 1e-12


@pytest.mark.parametrize("scale", [1.01, np.nan])
def test_a_bad_base_quaternion_gives_the_general_status(scale):
    m = model("go2")
    q, v, tau = start(m, seed=5)
    q[3:7] *= scale
    want = L.BAD_QUATERNION if scale == scale else L.NONFINITE
    for method in (KI.SEMI_IMPLICIT, KI.RKMK, KI.CF4):
        tree_st, _ = _kernel_step(m, tree_plan(m), method, q, v, tau)
        gen_st, _ = _kernel_step(m, _no_plan(), method, q, v, tau)
        assert tree_st == gen_st == want


@pytest.mark.parametrize("method", [KI.SEMI_IMPLICIT, KI.RKMK, KI.CF4])
def test_a_singular_base_gives_the_general_status_and_joint(method):
    """arm7 on a free joint (a massless base link): the root's I^ is singular."""
    m = ldr.load_urdf("arm7", floating_base=True)
    P = tree_plan(m)
    assert P is not None
    q, v, tau = start(m, seed=2)
    tree_st, tree_row = _kernel_step(m, P, method, q, v, tau)
    gen_st, gen_row = _kernel_step(m, _no_plan(), method, q, v, tau)
    assert tree_st == gen_st == L.SINGULAR
    assert tree_row == gen_row and m.body_joint_names[tree_row] == "root_joint"
    with pytest.raises(ldr.InputError, match="singular articulated inertia: joint 'root_joint'"):
        S.simulate(m, q, v, 0.01, DT, "rkmk4")


# ----------------------------------------------------------------------------- other models
def test_served_and_unserved_models_share_one_compiled_variant():
    """The empty plan is read-only as tree_plan's: a node's warm-up on one model covers the
    other (no second compilation of the steps). A ball joint is not served."""
    ball = zoo(floating=True, mimic=False)
    assert tree_plan(ball) is None
    arm = model("arm7")
    for m in (arm, ball):
        q0 = ldr.random_configuration(m, np.random.default_rng(7))
        S.make_stepper(m, "rkmk4")(q0, np.zeros(m.nv), DT, np.zeros(m.nv))
        S.rollout(m, np.tile(q0, (2, 1)), np.zeros((2, m.nv)), 2 * DT, DT, tau=np.zeros(m.nv))
        if m is arm:
            variants = len(KI.step.signatures), len(KI.rollout_rows.signatures)
    assert (len(KI.step.signatures), len(KI.rollout_rows.signatures)) == variants
