"""Joint damping and Coulomb friction in simulation (integrators/passive.py): implicit damping
keeps the 1 ms step on xarm7 (URDF damping, M^-1 D up to ~1.5e4 1/s) stable and convergent;
Coulomb friction sticks without creep, never injects energy, and a torque above it breaks
the stick. simulate, rollout, make_stepper and the Simulator apply them, with a switch."""
import itertools
from types import SimpleNamespace

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms.dynamics import gravity_torques, mass_matrix
from lie_dynamics_ros.errors import InputError
from lie_dynamics_ros.integrators.passive import box_qp, passive_torques
from lie_dynamics_ros.integrators.simulate import make_stepper, rollout, simulate
from lie_dynamics_ros.integrators.simulator import Simulator
from lie_dynamics_ros.ros.schemas.simulator import PARAMS
from lie_dynamics_ros.runtime.simulation import SimulationRuntime

from oracle import erd

XARM7 = erd("xarm_description/urdf/xarm7.urdf")
Q0 = np.array([0.3, -0.5, 0.2, 0.8, -0.4, 0.6, 0.1])
Z = np.zeros(7)


@pytest.fixture(scope="module")
def xarm():
    return ldr.load_urdf(XARM7)


@pytest.fixture(scope="module")
def damped(xarm):
    """xarm7 with its URDF damping only."""
    return xarm.with_joint_dynamics(friction=np.zeros(7))


def energy(model, res):
    return np.array([ldr.kinetic_energy(model, q, v) + ldr.potential_energy(model, q)
                     for q, v in zip(res.q, res.v)])


def test_xarm7_damping_is_stiff_for_explicit_steps(damped):
    # the premise: the largest eigenvalue of M^-1 D is far above RK4's stability bound
    # (|h lambda| <= 2.78) at 1 ms
    lam = np.linalg.eigvals(np.linalg.solve(mass_matrix(damped, Q0),
                                            np.diag(damped.joint_damping))).real.max()
    assert lam * 1e-3 > 2.785


@pytest.mark.parametrize("method", ["rkmk4", "semi_implicit"])
def test_damping_at_1ms_is_stable_and_converges_to_the_fine_step(damped, method):
    fine = simulate(damped, Q0, Z, 1.0, 5e-5, "rkmk4").q[-1]
    err = []
    for h in (1e-3, 5e-4, 2.5e-4):
        r = simulate(damped, Q0, Z, 1.0, h, method)
        assert np.all(np.isfinite(r.q)) and np.all(np.isfinite(r.v))
        err.append(np.abs(r.q[-1] - fine).max())
    # first order in the passive terms: halving h about halves the error
    assert err[0] < 2e-3
    for coarse, finer in zip(err, err[1:]):
        assert 1.5 < coarse / finer < 2.7, err


def test_without_damping_and_friction_the_compiled_run_is_unchanged(xarm):
    rigid = xarm.with_joint_dynamics(damping=np.zeros(7), friction=np.zeros(7))
    a = simulate(rigid, Q0, Z, 0.05, 1e-3, "rkmk4")
    b = simulate(xarm, Q0, Z, 0.05, 1e-3, "rkmk4", joint_friction=False)
    assert a.compiled and b.compiled
    np.testing.assert_array_equal(a.q, b.q)
    c = simulate(xarm, Q0, Z, 0.05, 1e-3, "rkmk4")
    assert np.abs(c.q[-1] - a.q[-1]).max() > 1e-4       # the switch does something


def stuck_model(xarm, margin=1.5):
    """xarm7 whose friction exceeds the gravity torque at Q0 on every joint."""
    return xarm.with_joint_dynamics(friction=margin * np.abs(gravity_torques(xarm, Q0)) + 0.5)


@pytest.mark.parametrize("method", ["semi_implicit", "rkmk4", "cf4", "heun"])
def test_a_joint_whose_torque_is_below_its_friction_does_not_creep(xarm, method):
    r = simulate(stuck_model(xarm), Q0, Z, 1.0, 1e-3, method)
    assert np.abs(r.q - Q0).max() <= 1e-6


def test_a_stuck_joint_stays_while_another_slips_and_a_torque_above_friction_breaks_it(xarm):
    model = stuck_model(xarm)
    F = model.joint_friction
    g = gravity_torques(model, Q0)
    tau = np.zeros(7)
    tau[0] = F[0] + 2.0                                     # joint1 (vertical) breaks loose
    r = simulate(model, Q0, Z, 1.0, 1e-3, "rkmk4", tau=tau)
    assert r.q[-1, 0] - Q0[0] > 0.05
    assert np.abs(r.q[:, 1:] - Q0[1:]).max() <= 1e-6       # the others stay
    # joint7: just below its friction it holds, just above it moves
    for factor, moves in ((0.9, False), (1.1, True)):
        tau = np.zeros(7)
        tau[6] = g[6] + factor * F[6]
        r = simulate(model, Q0, Z, 0.5, 1e-3, "rkmk4", tau=tau)
        assert (abs(r.q[-1, 6] - Q0[6]) > 1e-3) == moves
        assert np.abs(r.q[:, :6] - Q0[:6]).max() <= 1e-6


def test_a_regularized_sign_creeps_where_the_friction_solve_sticks(xarm):
    # the reason for the velocity-level solve: -F tanh(v / eps) cannot hold the arm at rest
    model = stuck_model(xarm, margin=1.2)
    F, eps = model.joint_friction, 1e-3
    free = xarm.with_joint_dynamics(damping=np.zeros(7), friction=np.zeros(7))
    r = simulate(free, Q0, Z, 1.0, 1e-4, "rkmk4", tau=lambda t, q, v: -F * np.tanh(v / eps))
    assert np.abs(r.q[-1] - Q0).max() > 1e-4
    s = simulate(model.with_joint_dynamics(damping=np.zeros(7)), Q0, Z, 1.0, 1e-3, "rkmk4")
    assert np.abs(s.q - Q0).max() <= 1e-6


@pytest.mark.parametrize("method", ["semi_implicit", "rkmk4"])
def test_no_step_injects_energy(xarm, method):
    # passive arm with its URDF damping and friction, falling, swinging, coming to rest
    r = simulate(xarm, Q0, Z, 3.0, 1e-3, method)
    E = energy(xarm, r)
    assert E[-1] < E[0] - 5.0
    assert np.diff(E).max() <= 1e-9 * abs(E).max()
    # strong friction: slips, then sticks for good
    strong = stuck_model(xarm, margin=3.0)
    r = simulate(strong, Q0, 0.5 * np.ones(7), 1.0, 1e-3, method)
    E = energy(strong, r)
    assert np.diff(E).max() <= 1e-9 * abs(E).max()
    assert np.abs(r.v[-1]).max() < 1e-12                  # at rest, exactly


def test_the_friction_box_problem_is_solved_exactly():
    rng = np.random.default_rng(3)
    for _ in range(30):
        n = 4
        L = rng.normal(size=(n, n))
        A = L @ L.T + 0.1 * np.eye(n)
        b = rng.normal(size=n)
        r = np.abs(rng.normal(size=n)) * rng.integers(0, 2, size=n)
        x = box_qp(A, b, r)
        # optimality: A x - b + r sign(x) = 0 on the slipping entries, |b - A x| <= r on the
        # stuck ones
        g = b - A @ x
        slip = x != 0
        np.testing.assert_allclose(g[slip], r[slip] * np.sign(x[slip]), atol=1e-10)
        assert np.all(np.abs(g[~slip]) <= r[~slip] + 1e-10)
        # and the best of every stick/slip pattern (brute force)
        obj = lambda y: 0.5 * y @ A @ y - b @ y + r @ np.abs(y)      # noqa: E731
        best = np.inf
        for pat in itertools.product((-1, 0, 1), repeat=n):
            s = np.array(pat)
            P = np.flatnonzero(s)
            y = np.zeros(n)
            if P.size:
                y[P] = np.linalg.solve(A[np.ix_(P, P)], b[P] - r[P] * s[P])
            best = min(best, obj(y))
        assert obj(x) <= best + 1e-12


def test_passive_torques_refuse_bad_input(xarm):
    with pytest.raises(InputError, match="step"):
        passive_torques(xarm, Q0, Z, Z, 0.0)
    with pytest.raises(InputError, match="acceleration"):
        passive_torques(xarm, Q0, Z, np.full(7, np.nan), 1e-3)
    with pytest.raises(InputError, match="joint_friction=False"):
        simulate(xarm, Q0, Z, 0.1, method="rkmk45")
    assert simulate(xarm, Q0, Z, 0.01, method="rkmk45", joint_friction=False).t[-1] == 0.01


def test_make_stepper_and_rollout_give_simulate_s_steps(xarm):
    tau = 0.3 * np.ones(7)
    ref = simulate(xarm, Q0, Z, 0.02, 1e-3, "rkmk4", tau=tau)
    step = make_stepper(xarm, "rkmk4")
    q, v = Q0, Z
    for _ in range(20):
        q, v = step(q, v, 1e-3, tau=tau)
    np.testing.assert_allclose(q, ref.q[-1], atol=1e-13)
    np.testing.assert_allclose(v, ref.v[-1], atol=1e-11)
    rig = make_stepper(xarm, "rkmk4", joint_friction=False)(Q0, Z, 1e-3, tau=tau)
    assert np.abs(rig[1] - ref.v[1]).max() > 1e-3
    roll = rollout(xarm, np.array([Q0, Q0]), np.zeros((2, 7)), 0.02, 1e-3, "rkmk4", tau=tau)
    np.testing.assert_allclose(roll.q[1, -1], ref.q[-1], atol=1e-13)


def simulator(model, method="rkmk4", prescribed=None, **kw):
    mask = np.zeros(7, bool) if prescribed is None else prescribed
    return Simulator(model, 1_000_000, make_stepper(model, method, joint_friction=False), mask,
                     Q0, Z, **kw)


def test_the_simulator_steps_as_simulate_does(xarm):
    tau = 0.3 * np.ones(7)
    sim = simulator(xarm)
    for _ in range(50):
        sim.step(tau)
    ref = simulate(xarm, Q0, Z, 0.05, 1e-3, "rkmk4", tau=tau)
    np.testing.assert_allclose(sim.q, ref.q[-1], atol=1e-12)
    np.testing.assert_array_equal(sim.tau, tau)           # published: the command
    # prescribed joint2 held still (hybrid dynamics): as simulate with the same mask
    mask = np.zeros(7, bool)
    mask[1] = True
    sim = simulator(xarm, prescribed=mask)
    for _ in range(50):
        sim.step(tau)
    ref = simulate(xarm, Q0, Z, 0.05, 1e-3, "rkmk4", tau=tau, prescribed=mask, a_prescribed=Z)
    np.testing.assert_allclose(sim.q, ref.q[-1], atol=1e-12)
    # off: the rigid step
    sim = simulator(xarm, joint_friction=False)
    sim.step(tau)
    rigid = simulate(xarm, Q0, Z, 1e-3, 1e-3, "rkmk4", tau=tau, joint_friction=False)
    np.testing.assert_allclose(sim.q, rigid.q[-1], atol=1e-14)


def test_the_simulator_refuses_a_stepper_that_applies_them_already(xarm):
    with pytest.raises(InputError, match="joint_friction=False"):
        Simulator(xarm, 1_000_000, make_stepper(xarm, "rkmk4"), np.zeros(7, bool), Q0, Z)


def test_the_simulator_node_parameter_switches_them(xarm):
    values = {p.name: p.default for p in PARAMS}
    values.update(rate=1000.0, publish_clock=True, start_mode="immediate", integrator="rkmk4",
                  initial_positions=list(Q0))
    states = {}
    for on in (True, False):
        values["apply_joint_friction"] = on
        rt = SimulationRuntime(SimpleNamespace(**values))
        assert rt.set_model(xarm, "urdf_path %s" % XARM7) is None
        for _ in range(1001):
            states[on] = rt.tick()
        assert rt.halted is None
    ref = simulate(xarm, Q0, Z, 1.0, 1e-3, "rkmk4")
    np.testing.assert_allclose(states[True].q, ref.q[-1], atol=1e-9)
    rigid = simulate(xarm, Q0, Z, 1.0, 1e-3, "rkmk4", joint_friction=False)
    np.testing.assert_allclose(states[False].q, rigid.q[-1], atol=1e-9)
