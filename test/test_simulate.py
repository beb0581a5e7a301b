"""``simulate``: forward and hybrid dynamics integrated on the configuration group."""
import os
import sys

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import lie_dynamics_ros as ldr
from lie_dynamics_ros.integrators.simulate import (SIMULATE_ADAPTIVE_METHODS, SIMULATE_METHODS,
                                                   configuration_rate, normalize_configuration,
                                                   simulate)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# a floating box with two 2-link legs (revolute) and a prismatic tail: free joint + 1-DOF joints
FLOATING_URDF = """<robot name="walker">
  <link name="base"><inertial><origin xyz="0.02 -0.01 0.03" rpy="0.1 0.2 0.3"/><mass value="3"/>
    <inertia ixx="0.05" ixy="0.001" ixz="0" iyy="0.06" iyz="0.002" izz="0.04"/></inertial></link>
  <link name="thigh_l"><inertial><origin xyz="0 0 -0.1"/><mass value="0.5"/>
    <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.0005"/></inertial></link>
  <link name="shank_l"><inertial><origin xyz="0 0.01 -0.1"/><mass value="0.3"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.0003"/></inertial></link>
  <link name="thigh_r"><inertial><origin xyz="0 0 -0.1"/><mass value="0.5"/>
    <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.0005"/></inertial></link>
  <link name="tail"><inertial><origin xyz="-0.05 0 0"/><mass value="0.2"/>
    <inertia ixx="0.0002" ixy="0" ixz="0" iyy="0.0003" iyz="0" izz="0.0003"/></inertial></link>
  <joint name="hip_l" type="revolute"><parent link="base"/><child link="thigh_l"/>
    <origin xyz="0.1 0.1 -0.05" rpy="0.3 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="20" velocity="10"/></joint>
  <joint name="knee_l" type="revolute"><parent link="thigh_l"/><child link="shank_l"/>
    <origin xyz="0 0 -0.2"/><axis xyz="0.6 0.8 0"/>
    <limit lower="-3" upper="3" effort="20" velocity="10"/></joint>
  <joint name="hip_r" type="continuous"><parent link="base"/><child link="thigh_r"/>
    <origin xyz="0.1 -0.1 -0.05" rpy="0 0.2 0.1"/><axis xyz="1 0 0"/></joint>
  <joint name="tail" type="prismatic"><parent link="base"/><child link="tail"/>
    <origin xyz="-0.2 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="20" velocity="10"/></joint>
</robot>"""


@pytest.fixture(scope="module")
def walker():
    return ldr.load_urdf(FLOATING_URDF, floating_base=True)


def _ball_model():
    """Floating base + ball joint + revolute + prismatic, from the builder (SO(3) blocks)."""
    b = ldr.ModelBuilder("ballbot")
    box = dict(mass=1.2, com=np.array([0.05, -0.02, 0.01]), inertia=np.diag([0.02, 0.03, 0.025]))
    b.add_link("base", **box)
    b.add_link("arm", mass=0.7, com=np.array([0.0, 0.0, -0.15]),
               inertia=np.diag([0.01, 0.012, 0.004]))
    b.add_link("hand", mass=0.3, com=np.array([0.02, 0.0, -0.05]),
               inertia=np.diag([0.002, 0.003, 0.001]))
    T = np.eye(4)
    T[:3, 3] = [0.1, 0.05, -0.1]
    b.add_joint("shoulder", ldr.Spherical(), "base", "arm", origin=T)
    T2 = np.eye(4)
    T2[:3, 3] = [0.0, 0.0, -0.3]
    b.add_joint("elbow", ldr.Revolute((0.0, 1.0, 0.0)), "arm", "hand", origin=T2)
    b.add_joint("root_joint", ldr.Free(), None, "base")
    return b.build()


def _state(model, seed=3, scale=0.7):
    rng = np.random.default_rng(seed)
    return ldr.random_configuration(model, rng), scale * rng.normal(size=model.nv)


def _reference(model, q0, v0, T, tau):
    """Strict DOP853 on the quaternion coordinates (q' from configuration_rate)."""
    def F(t, y):
        q, v = y[:model.nq], y[model.nq:]
        qn = normalize_configuration(model, q)
        return np.r_[configuration_rate(model, q, v), ldr.forward_dynamics(model, qn, v,
                                                                            tau(t, qn, v))]
    sol = solve_ivp(F, (0, T), np.r_[q0, v0], method="DOP853", rtol=1e-12, atol=1e-12)
    return sol.y[:model.nq, -1], sol.y[model.nq:, -1]


def _err(model, res, qr, vr):
    return (np.linalg.norm(ldr.difference(model, qr, res.q[-1]))
            + np.linalg.norm(res.v[-1] - vr))


def _tau_fn(nv):
    return lambda t, q, v: -0.3 * v + 0.5 * np.sin(4.0 * t) * np.ones(nv)


_S = (80, 160, 320)        # h = T/80 .. T/320: asymptotic range (checked), errors >> 1e-10
ORDERS = [("euler", 1, _S), ("semi_implicit", 1, _S), ("heun", 2, _S), ("rkmk3", 3, _S),
          ("cf3", 3, _S), ("rkmk4", 4, _S), ("rkmk4_2c", 4, _S), ("cf4", 4, _S)]


@pytest.fixture(scope="module")
def walker_ref(walker):
    q0, v0 = _state(walker)
    T = 0.5
    tau = _tau_fn(walker.nv)
    return q0, v0, T, tau, _reference(walker, q0, v0, T, tau)


@pytest.mark.parametrize("method,order,steps", ORDERS, ids=[o[0] for o in ORDERS])
def test_simulate_orders_floating_base(walker, walker_ref, method, order, steps):
    """Each method has its order on a floating-base URDF (free joint on SE(3))."""
    q0, v0, T, tau, (qr, vr) = walker_ref
    errs = [_err(walker, simulate(walker, q0, v0, T, T / n, method=method, tau=tau), qr, vr)
            for n in steps]
    assert min(errs) > 1e-10
    s = np.polyfit(np.log([T / n for n in steps]), np.log(errs), 1)[0]
    assert abs(s - order) <= 0.3, (method, s, errs)


@pytest.mark.parametrize("method", ["rkmk4", "cf4", "rkmk4_trunc"])
def test_simulate_order_ball_joint(method):
    """Order 4 with a ball joint on SO(3) and a free joint (the dexp^-1 blocks are right)."""
    model = _ball_model()
    q0, v0 = _state(model, seed=5, scale=0.5)
    T = 0.3
    tau = _tau_fn(model.nv)
    qr, vr = _reference(model, q0, v0, T, tau)
    steps = (32, 64, 128)
    errs = [_err(model, simulate(model, q0, v0, T, T / n, method=method, tau=tau), qr, vr)
            for n in steps]
    assert min(errs) > 1e-10
    s = np.polyfit(np.log([T / n for n in steps]), np.log(errs), 1)[0]
    assert abs(s - 4) <= 0.3, (s, errs)


def test_simulate_stays_on_manifold(walker):
    """Unit quaternions without renormalisation: 1000 steps of four fixed-step methods."""
    q0, v0 = _state(walker, seed=7, scale=2.0)
    for method in ("semi_implicit", "rkmk4", "cf4", "euler"):
        res = simulate(walker, q0, v0, 2.0, 2e-3, method=method)
        norms = np.linalg.norm(res.q[:, 3:7], axis=1)
        assert np.abs(norms - 1.0).max() < 1e-13, (method, np.abs(norms - 1.0).max())
        assert res.q.shape == (1001, walker.nq) and res.v.shape == (1001, walker.nv)
        assert res.t[0] == 0.0 and res.t[-1] == pytest.approx(2.0)


def test_simulate_energy_rkmk4(walker):
    """No torque: total energy is conserved to O(h^4) (1e-3 s steps over 1 s)."""
    q0, v0 = _state(walker, seed=11)
    res = simulate(walker, q0, v0, 1.0, 1e-3, method="rkmk4")
    E = np.array([ldr.kinetic_energy(walker, q, v) + ldr.potential_energy(walker, q)
                  for q, v in zip(res.q[::50], res.v[::50])])
    assert np.ptp(E) < 1e-8 * max(1.0, abs(E[0])), np.ptp(E)


@pytest.mark.parametrize("method", SIMULATE_ADAPTIVE_METHODS)
def test_simulate_adaptive(walker, walker_ref, method):
    """Adaptive methods: error follows rtol/atol, variable grid ending at the duration."""
    q0, v0, T, tau, (qr, vr) = walker_ref
    errs = []
    for tol in (1e-5, 1e-8):
        res = simulate(walker, q0, v0, T, method=method, tau=tau, rtol=tol, atol=tol)
        assert res.t[-1] == pytest.approx(T)
        assert np.all(np.diff(res.t) > 0)
        errs.append(_err(walker, res, qr, vr))
        assert errs[-1] < 1e3 * tol, (method, tol, errs[-1])
    assert errs[1] < 0.05 * errs[0]


def test_simulate_tau_array_equals_callable(walker):
    """An array tau runs compiled, a callable in Python: the same steps to round-off."""
    q0, v0 = _state(walker)
    tau = np.linspace(-1, 1, walker.nv)
    a = simulate(walker, q0, v0, 0.1, 0.01, tau=tau)
    b = simulate(walker, q0, v0, 0.1, 0.01, tau=lambda t, q, v: tau)
    assert a.compiled and not b.compiled
    assert np.allclose(a.q, b.q, atol=1e-14, rtol=0) and np.allclose(a.v, b.v, atol=1e-13, rtol=0)


def test_simulate_hybrid_prescribed_joints_follow_trajectory(walker):
    """Prescribed joints follow q0 + v0 t + a t^2/2 exactly (RKMK4 integrates it exactly);
    the free joints obey forward dynamics: with the prescribed accelerations equal to what
    forward dynamics gives, hybrid and forward simulations coincide."""
    q0, v0 = _state(walker, seed=2)
    mask = np.zeros(walker.nv, dtype=bool)
    mask[[6, 7, 9]] = True                  # hip_l, knee_l, tail
    a_p = np.zeros(walker.nv)
    a_p[[6, 7, 9]] = [1.0, -2.0, 0.5]
    T = 0.4
    res = simulate(walker, q0, v0, T, 0.01, prescribed=mask, a_prescribed=a_p)
    qi = [walker.joint_q_index[walker.joint_names.index(n)] for n in ("hip_l", "knee_l", "tail")]
    expect = q0[qi] + v0[[6, 7, 9]] * T + 0.5 * a_p[[6, 7, 9]] * T ** 2
    assert np.allclose(res.q[-1, qi], expect, atol=1e-12)
    assert np.allclose(res.v[-1, [6, 7, 9]], v0[[6, 7, 9]] + a_p[[6, 7, 9]] * T, atol=1e-12)
    # consistency with forward dynamics when a_prescribed = ABA's accelerations
    tau = np.linspace(-1, 1, walker.nv)

    def a_fd(t, q, v):
        return ldr.forward_dynamics(walker, q, v, tau)
    h = simulate(walker, q0, v0, 0.2, 0.01, tau=tau, prescribed=mask, a_prescribed=a_fd)
    f = simulate(walker, q0, v0, 0.2, 0.01, tau=tau)
    assert np.allclose(h.q, f.q, atol=1e-10) and np.allclose(h.v, f.v, atol=1e-9)


def test_simulate_semi_implicit_cost_and_callback(walker):
    """semi_implicit uses one ABA per step; a callback returning True stops the run."""
    q0, v0 = _state(walker)
    res = simulate(walker, q0, v0, 0.1, 0.001, method="semi_implicit")
    assert res.nfev == 100
    seen = []
    res = simulate(walker, q0, v0, 1.0, 0.01, callback=lambda t, q, v: seen.append(t) or t >= 0.05)
    assert res.t[-1] == pytest.approx(0.05) and len(res.t) == 6


def test_simulate_fixed_base_matches_classical(walker):
    """On a fixed-base model (all joints in R^n) RKMK4 is classical RK4."""
    model = ldr.load_urdf(FLOATING_URDF)
    q0, v0 = _state(model)
    res = simulate(model, q0, v0, 0.05, 0.01, method="rkmk4")
    y = np.r_[q0, v0]
    h = 0.01

    def F(y):
        q, v = y[:model.nq], y[model.nq:]
        return np.r_[v, ldr.forward_dynamics(model, q, v, np.zeros(model.nv))]
    for _ in range(5):
        k1 = F(y)
        k2 = F(y + h / 2 * k1)
        k3 = F(y + h / 2 * k2)
        k4 = F(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    assert np.allclose(res.q[-1], y[:model.nq], atol=1e-13)


def test_simulate_rejects_bad_input(walker):
    q0, v0 = _state(walker)
    with pytest.raises(ValueError):
        simulate(walker, q0, v0, 1.0, 0.01, method="nope")
    with pytest.raises(ValueError):
        simulate(walker, q0, v0, 1.0, None, method="rkmk4")
    with pytest.raises(ValueError):
        simulate(walker, q0, v0, 1.0, 0.01, method="rkmk4", rtol=1e-6)
    with pytest.raises(ValueError):
        simulate(walker, q0[:-1], v0, 1.0, 0.01)
    with pytest.raises(ValueError):
        simulate(walker, q0, v0, -1.0, 0.01)
    with pytest.raises(ValueError):
        simulate(walker, q0, v0, 1.0, 0.01, tau=np.zeros(3))
    assert set(SIMULATE_ADAPTIVE_METHODS) <= set(SIMULATE_METHODS)


@pytest.mark.parametrize("method", ["semi_implicit", "rkmk4", "cf4", "heun"])
def test_make_stepper_matches_simulate(walker, method):
    """make_stepper (for the simulator node) gives exactly simulate's steps."""
    from lie_dynamics_ros.integrators.simulate import make_stepper
    q0, v0 = _state(walker)
    tau = np.linspace(-1, 1, walker.nv)
    res = simulate(walker, q0, v0, 0.005, 0.001, method=method, tau=tau)
    step = make_stepper(walker, method)
    q, v = q0, v0
    for k in range(5):
        q, v = step(q, v, 0.001, tau, t=0.001 * k)
    assert np.allclose(q, res.q[-1], atol=1e-14, rtol=0) and np.allclose(v, res.v[-1], atol=1e-13)
    # an acceleration callback in place of forward dynamics gives the same step
    q1, v1 = step(q0, v0, 0.001, accel=lambda t, q, v: ldr.forward_dynamics(walker, q, v, tau))
    q2, v2 = step(q0, v0, 0.001, tau)
    assert np.allclose(q1, q2, atol=1e-15, rtol=0) and np.allclose(v1, v2, atol=1e-13, rtol=0)
    with pytest.raises(ValueError):
        make_stepper(walker, "rkmk45")


# ------------------------------------------------------------------ compiled steps
COMPILED = ["semi_implicit", "euler", "rk3", "rkmk3", "rkmk4", "rkmk5", "cf4"]


@pytest.mark.parametrize("method", COMPILED)
def test_compiled_steps_equal_python_steps(walker, method):
    """Free joint (SE(3)), ball joint (SO(3)) and 1-DOF joints: the compiled run and the Python
    run (same method on MultibodySpace) agree to round-off, step by step."""
    for model, seed in ((walker, 4), (_ball_model(), 5)):
        q0, v0 = _state(model, seed=seed, scale=1.5)
        tau = np.linspace(-1, 1, model.nv)
        a = simulate(model, q0, v0, 0.2, 0.01, method=method, tau=tau)
        b = simulate(model, q0, v0, 0.2, 0.01, method=method, tau=lambda t, q, v: tau)
        assert a.compiled and not b.compiled and a.nfev == b.nfev
        assert np.allclose(a.q, b.q, atol=1e-13, rtol=0), np.abs(a.q - b.q).max()
        assert np.allclose(a.v, b.v, atol=1e-12, rtol=0), np.abs(a.v - b.v).max()


@pytest.mark.parametrize("method,order", [("semi_implicit", 1), ("rkmk4", 4), ("cf4", 4)])
def test_compiled_orders(walker, method, order):
    """Convergence order of the compiled path on the floating model (constant torques)."""
    q0, v0 = _state(walker)
    tau = np.linspace(-0.5, 0.5, walker.nv)
    T = 0.5
    qr, vr = _reference(walker, q0, v0, T, lambda t, q, v: tau)
    errs = []
    for n in _S:
        res = simulate(walker, q0, v0, T, T / n, method=method, tau=tau)
        assert res.compiled
        errs.append(_err(walker, res, qr, vr))
    rates = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert np.all(np.abs(rates - order) < 0.3), (errs, rates)


def test_compiled_hybrid_equals_python(walker):
    q0, v0 = _state(walker, seed=2)
    mask = np.zeros(walker.nv, dtype=bool)
    mask[[6, 7, 9]] = True
    a_p = np.linspace(-1, 1, walker.nv)
    tau = np.linspace(1, -1, walker.nv)
    a = simulate(walker, q0, v0, 0.1, 0.01, tau=tau, prescribed=mask, a_prescribed=a_p)
    b = simulate(walker, q0, v0, 0.1, 0.01, tau=tau, prescribed=mask,
                 a_prescribed=lambda t, q, v: a_p)
    assert a.compiled and not b.compiled
    assert np.allclose(a.q, b.q, atol=1e-13, rtol=0) and np.allclose(a.v, b.v, atol=1e-12, rtol=0)


def test_compiled_paths_and_errors(walker):
    """Callables, Python-only methods and mimic models take the Python path; a compiled run that
    meets a bad state raises the Python path's InputError."""
    q0, v0 = _state(walker)
    assert not simulate(walker, q0, v0, 0.02, 0.01, method="heun").compiled
    zero = np.zeros(walker.nv)
    assert not simulate(walker, q0, v0, 0.02, 0.01, tau=lambda t, q, v: zero).compiled
    with pytest.raises(ldr.InputError):       # a zero torque but an infinite one in the mask
        simulate(walker, q0, v0, 0.02, 0.01, tau=np.full(walker.nv, np.inf))
    with pytest.raises(ldr.InputError):       # the free joint's quaternion is not unit
        q_bad = q0.copy()
        q_bad[3:7] *= 1.1
        simulate(walker, q_bad, v0, 0.02, 0.01)
    with pytest.raises(ldr.InputError):
        simulate(walker, q0, v0, 0.02, 0.01, callback=lambda t, q, v: False,
                 tau=np.r_[np.nan, np.zeros(walker.nv - 1)])


# ------------------------------------------------------------------ batched rollouts
@pytest.mark.parametrize("method", ["rkmk4", "cf4", "semi_implicit"])
def test_rollout_equals_per_state(walker, method):
    from lie_dynamics_ros.integrators.simulate import rollout
    rng = np.random.default_rng(7)
    N = 9
    Q0 = np.array([ldr.random_configuration(walker, rng) for _ in range(N)])
    V0 = rng.normal(size=(N, walker.nv))
    TAU = rng.normal(size=(N, walker.nv))
    r = rollout(walker, Q0, V0, 0.05, 0.001, method, tau=TAU)   # 50 steps: runs in parallel
    assert r.compiled and r.q.shape == (N, 51, walker.nq) and r.v.shape == (N, 51, walker.nv)
    for k in range(N):
        s = simulate(walker, Q0[k], V0[k], 0.05, 0.001, method, tau=TAU[k])
        assert np.array_equal(r.q[k], s.q) and np.array_equal(r.v[k], s.v)
        assert np.array_equal(r.t, s.t)
    # the same through simulate, with one torque for all rows
    r2 = simulate(walker, Q0, V0, 0.05, 0.001, method, tau=TAU[0])
    s0 = simulate(walker, Q0[3], V0[3], 0.05, 0.001, method, tau=TAU[0])
    assert np.array_equal(r2.q[3], s0.q)


def test_rollout_python_rows_and_bad_row(walker):
    from lie_dynamics_ros.integrators.simulate import rollout
    rng = np.random.default_rng(8)
    Q0 = np.array([ldr.random_configuration(walker, rng) for _ in range(3)])
    V0 = rng.normal(size=(3, walker.nv))
    a = rollout(walker, Q0, V0, 0.02, 0.01, "heun")
    assert not a.compiled
    assert np.array_equal(a.q[1], simulate(walker, Q0[1], V0[1], 0.02, 0.01, "heun").q)
    Q0[2, 3:7] *= 1.1
    with pytest.raises(ldr.InputError, match="row 2"):
        rollout(walker, Q0, V0, 0.02, 0.01, "rkmk4")
    with pytest.raises(ValueError):
        rollout(walker, Q0, V0[:2], 0.02, 0.01)
    with pytest.raises(ValueError):
        rollout(walker, Q0, V0, 0.02, 0.01, prescribed=np.ones(3, dtype=bool))


def test_simulate_keeps_loop_closures_and_names_divergence():
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    four_bar = ldr.load_urdf(os.path.join(here, "..", "urdf", "loops", "four_bar.urdf"))
    q0 = ldr.assemble(four_bar, np.full(four_bar.nq, 0.3), locked=["crank_joint"])
    res = ldr.simulate(four_bar, q0, np.zeros(four_bar.nv), 0.5, 1e-3)
    assert max(np.abs(ldr.constraint_residual(four_bar, q)).max() for q in res.q) < 1e-9
    # a run that blows up says when, which joint, and what helps; it does not blame the input
    arm = ldr.load_urdf("arm7")
    q, v = ldr.neutral_configuration(arm), np.zeros(arm.nv)
    v[6] = 1e155
    with pytest.raises(ldr.SimulationDiverged, match=r"t = 0\.0.*panda_joint7.*reduce dt"):
        ldr.simulate(arm, q, v, 0.1, 1e-3, method="rkmk4")
