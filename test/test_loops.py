"""Closed kinematic loops (Kim 2012, section 3): identities of the constrained algorithms on the
bundled mechanisms (urdf/loops/)."""
import os
import warnings

import numpy as np
import pytest
from scipy.linalg import null_space

import lie_dynamics_ros as ldr

HERE = os.path.dirname(os.path.abspath(__file__))
MECH = os.path.join(HERE, "..", "urdf", "loops")
NAMES = ["four_bar", "slider_crank", "five_bar", "parallelogram", "delta"]


def load(name):
    return ldr.load_urdf(os.path.join(MECH, f"{name}.urdf"))


def consistent_state(model, rng, spread=0.3):
    """A random assembled q and a velocity in the null space of A."""
    q = ldr.assemble(model, spread * rng.standard_normal(model.nq) * 0.2)
    N = null_space(ldr.constraint_jacobian(model, q))
    return q, N @ rng.standard_normal(N.shape[1])


@pytest.mark.parametrize("name", NAMES)
def test_acceleration_constraint_holds(name):
    """A qdd + Adot v = 0 for the constrained forward dynamics at random consistent states, and
    Adot v equals the time derivative of A(q(t)) v along q(t) = q (+) v t."""
    m = load(name)
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, v = consistent_state(m, rng)
        tau = rng.standard_normal(m.nv)
        a, lam = ldr.constrained_forward_dynamics(m, q, v, tau)
        A, b = ldr.constraint_jacobian(m, q), ldr.constraint_bias(m, q, v)
        assert np.max(np.abs(A @ v)) < 1e-12
        assert np.max(np.abs(A @ a + b)) < 1e-10
        # Kim (54): M a + nle = tau + A^T lam
        M, h = ldr.mass_matrix(m, q), ldr.nonlinear_effects(m, q, v)
        assert np.max(np.abs(M @ a + h - tau - A.T @ lam)) < 1e-9
        eps = 1e-5
        d = (ldr.constraint_jacobian(m, ldr.integrate(m, q, v, eps)) @ v
             - ldr.constraint_jacobian(m, ldr.integrate(m, q, v, -eps)) @ v) / (2 * eps)
        assert np.max(np.abs(d - b)) < 1e-7 * (1 + np.max(np.abs(b)))


def test_residual_derivative_matches_jacobian_when_assembled():
    m = load("delta")
    rng = np.random.default_rng(2)
    q, v = consistent_state(m, rng)
    dq = rng.standard_normal(m.nv)
    eps = 1e-6
    d = (ldr.constraint_residual(m, ldr.integrate(m, q, dq, eps))
         - ldr.constraint_residual(m, ldr.integrate(m, q, dq, -eps))) / (2 * eps)
    assert np.allclose(d, ldr.constraint_jacobian(m, q) @ dq, atol=1e-8)


def test_planar_four_bar_rank_deficient_without_nan_or_warning():
    m = load("four_bar")
    assert (m.nc, m.nv) == (5, 3)
    rng = np.random.default_rng(3)
    q, v = consistent_state(m, rng)
    A = ldr.constraint_jacobian(m, q)
    assert np.linalg.matrix_rank(A, tol=1e-9) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a, lam = ldr.constrained_forward_dynamics(m, q, v, np.zeros(3))
        tau, lam2 = ldr.constrained_inverse_dynamics(m, q, v, a, ["crank_joint"])
    assert np.all(np.isfinite(a)) and np.all(np.isfinite(lam)) and np.all(np.isfinite(tau))
    assert np.max(np.abs(tau)) < 1e-9          # passive motion needs no torque
    # the out-of-plane components of the minimum-norm multiplier vanish (force y, torques)
    assert np.max(np.abs(lam[[1, 3, 4]])) < 1e-9


def test_assembly_converges_from_005_rad_in_a_few_iterations():
    m = load("delta")
    rng = np.random.default_rng(4)
    guess = 0.05 * rng.standard_normal(m.nq)
    q, info = ldr.assemble(m, guess, info=True)
    assert info["residual"] <= 1e-12 and info["iterations"] <= 6
    assert np.max(np.abs(ldr.constraint_residual(m, q))) <= 1e-12
    # locked joints stay where they are
    q2 = ldr.assemble(m, guess, locked=["shoulder_1", "shoulder_2", "shoulder_3"])
    for n in ("shoulder_1", "shoulder_2", "shoulder_3"):
        i = m.joint_q_index[m.joint_names.index(n)]
        assert q2[i] == guess[i]


def test_assembly_reports_unreachable():
    m = load("four_bar")
    q = np.zeros(3)
    q[m.joint_names.index("rocker_joint")] = 2.5      # beyond the rocker's range
    with pytest.raises(ldr.InputError, match="not reachable.*coupler_rocker"):
        ldr.assemble(m, q, locked=["rocker_joint"])


@pytest.mark.parametrize("name,actuated", [("five_bar", ["joint1", "joint5"]),
                                           ("five_bar", ["joint1", "joint5", "joint2"]),
                                           ("delta", ["shoulder_1", "shoulder_2", "shoulder_3"]),
                                           ("four_bar", ["crank_joint"]),
                                           ("slider_crank", ["slider_joint"])])
def test_inverse_then_forward_returns_the_motion(name, actuated):
    m = load(name)
    rng = np.random.default_rng(5)
    q, v = consistent_state(m, rng)
    a0, _ = ldr.constrained_forward_dynamics(m, q, v, rng.standard_normal(m.nv))  # consistent
    tau, lam = ldr.constrained_inverse_dynamics(m, q, v, a0, actuated)
    act = np.zeros(m.nv, dtype=bool)
    for n in actuated:
        act[m.joint_v_index[m.joint_names.index(n)]] = True
    assert np.all(tau[~act] == 0.0)
    a, lam_f = ldr.constrained_forward_dynamics(m, q, v, tau)
    assert np.max(np.abs(a - a0)) < 1e-8 * (1 + np.max(np.abs(a0)))
    A = ldr.constraint_jacobian(m, q)
    M, h = ldr.mass_matrix(m, q), ldr.nonlinear_effects(m, q, v)
    assert np.max(np.abs(M @ a0 + h - tau - A.T @ lam)) < 1e-8


def test_five_bar_unique_and_redundant_actuation():
    """Kim's five-bar, m = 3: two actuators give the unique torque (58), three give the
    minimum-norm one (62)-(64): no other admissible torque is smaller."""
    m = load("five_bar")
    rng = np.random.default_rng(6)
    q, v = consistent_state(m, rng)
    a, _ = ldr.constrained_forward_dynamics(m, q, v, rng.standard_normal(m.nv))
    A = ldr.constraint_jacobian(m, q)
    assert np.linalg.matrix_rank(A, tol=1e-9) == 3
    tau2, _ = ldr.constrained_inverse_dynamics(m, q, v, a, ["joint1", "joint5"])
    tau3, _ = ldr.constrained_inverse_dynamics(m, q, v, a, ["joint1", "joint5", "joint2"])
    # every torque that produces the motion with these three actuators: tau3 + A^T mu with
    # mu in the null space of the passive columns (keeps the passive torques at zero)
    cols = [m.joint_v_index[m.joint_names.index(n)] for n in ("joint1", "joint5", "joint2")]
    passive = [i for i in range(m.nv) if i not in cols]
    U = np.linalg.svd(A)[0][:, :3]
    Ab = U.T @ A
    N = null_space(Ab[:, passive].T)
    assert N.shape[1] == 1
    family = Ab.T @ N
    for s in np.linspace(-5, 5, 11):
        other = tau3 + family[:, 0] * s
        assert np.max(np.abs(other[passive])) < 1e-9
        assert np.linalg.norm(other) >= np.linalg.norm(tau3) - 1e-12
    assert np.linalg.norm(tau3) <= np.linalg.norm(tau2) + 1e-12
    with pytest.raises(ldr.InputError, match="under-actuated"):
        ldr.constrained_inverse_dynamics(m, q, v, a, ["joint1"])


@pytest.mark.parametrize("name,prescribed_joints", [("five_bar", ["joint1", "joint5"]),
                                                    ("five_bar", ["joint2"]),
                                                    ("delta", ["shoulder_1", "shoulder_2"]),
                                                    ("five_bar", ["joint1", "joint2", "joint3",
                                                                  "joint4", "joint5"])])
def test_hybrid_matches_forward_and_inverse(name, prescribed_joints):
    m = load(name)
    rng = np.random.default_rng(7)
    q, v = consistent_state(m, rng)
    tau_true = rng.standard_normal(m.nv)
    mask = np.zeros(m.nv, dtype=bool)
    for n in prescribed_joints:
        mask[m.joint_v_index[m.joint_names.index(n)]] = True
    tau_true[mask] = 0.0
    a_true, _ = ldr.constrained_forward_dynamics(m, q, v, tau_true)
    a_in = np.where(mask, a_true, 0.0)
    tau_in = np.where(mask, 0.0, tau_true)
    a_full, tau_full, lam = ldr.constrained_hybrid_dynamics(m, q, v, a_in, tau_in, mask)
    assert np.max(np.abs(a_full - a_true)) < 1e-8
    # the torques found on the prescribed joints reproduce the motion
    a_back, _ = ldr.constrained_forward_dynamics(m, q, v, tau_full)
    assert np.max(np.abs(a_back - a_true)) < 1e-8
    assert np.max(np.abs(tau_full[mask])) < 1e-8 * (1 + np.max(np.abs(tau_true)))
    if mask.all():
        tau_id, _ = ldr.constrained_inverse_dynamics(m, q, v, a_true, prescribed_joints)
        assert np.allclose(tau_full, tau_id, atol=1e-9)


def test_parallelogram_equals_single_pendulum():
    """The coupler only translates: the mechanism is a pendulum with both cranks on one pivot
    and the coupler's mass as a point at the crank tip."""
    m = load("parallelogram")
    par = ldr.ModelBuilder("pendulum")
    par.add_link("ground")
    L, mc, mr = 0.5, 1.5, 0.6
    rod = mr * L * L / 12 * np.diag([1, 1, 0]) + 1e-6 * np.eye(3)
    par.add_link("crank1", mr, (0, 0, -L / 2), rod)
    par.add_link("crank2", mr, (0, 0, -L / 2), rod)
    par.add_link("bob", mc, (0, 0, -L))
    par.add_joint("hinge", ldr.Revolute((0, 1, 0)), "ground", "crank1")
    par.add_joint("weld2", ldr.Fixed(), "crank1", "crank2")
    par.add_joint("weld3", ldr.Fixed(), "crank1", "bob")
    pend = par.build()
    i = m.joint_names.index("crank1_joint")
    rng = np.random.default_rng(8)
    for th, w in zip(rng.uniform(-1.5, 1.5, 5), rng.uniform(-3, 3, 5)):
        q = ldr.assemble(m, np.array([th, -th, th]), locked=["crank1_joint"])
        assert abs(q[i] - th) < 1e-15
        v = null_space(ldr.constraint_jacobian(m, q))[:, 0]
        v *= w / v[i]
        a, _ = ldr.constrained_forward_dynamics(m, q, v, np.zeros(3))
        ap = ldr.forward_dynamics(pend, [th], [w], [0.0])
        assert abs(a[i] - ap[0]) < 1e-9 * (1 + abs(ap[0]))
        e = ldr.kinetic_energy(m, q, v) + ldr.potential_energy(m, q)
        ep = ldr.kinetic_energy(pend, [th], [w]) + ldr.potential_energy(pend, [th])
        assert abs(e - ep) < 1e-9


def test_simulation_keeps_constraints_and_energy():
    """Passive four-bar, 1 kHz: with projection the drift stays at round-off and the energy
    (RK4 error only) is conserved; without it the drift grows."""
    m = load("four_bar")
    q0 = ldr.assemble(m, np.array([0.8, -0.8, 0.3]), locked=["crank_joint"])
    v0 = null_space(ldr.constraint_jacobian(m, q0))[:, 0] * 3.0
    res = ldr.simulate_constrained(m, q0, v0, 0.3, 1e-3, method="rkmk4")
    drift = max(np.max(np.abs(ldr.constraint_residual(m, q))) for q in res.q)
    vdrift = max(np.max(np.abs(ldr.constraint_jacobian(m, q) @ v)) for q, v in zip(res.q, res.v))
    E = [ldr.kinetic_energy(m, q, v) + ldr.potential_energy(m, q) for q, v in zip(res.q, res.v)]
    assert drift <= 1e-12 and vdrift <= 1e-10
    assert np.ptp(E) < 1e-8 * max(1.0, abs(E[0]))
    free = ldr.simulate_constrained(m, q0, v0, 0.3, 1e-3, method="rkmk4", projection=False)
    assert np.max(np.abs(ldr.constraint_residual(m, free.q[-1]))) > drift


def test_baumgarte_option_reduces_drift_without_projection():
    m = load("four_bar")
    q0 = ldr.assemble(m, np.array([0.8, -0.8, 0.3]), locked=["crank_joint"])
    v0 = null_space(ldr.constraint_jacobian(m, q0))[:, 0] * 3.0
    plain = ldr.simulate_constrained(m, q0, v0, 0.2, 4e-3, method="heun", projection=False)
    stab = ldr.simulate_constrained(m, q0, v0, 0.2, 4e-3, method="heun", projection=False,
                                    baumgarte=(20.0, 20.0))
    d = [np.max(np.abs(ldr.constraint_residual(m, r.q[-1]))) for r in (plain, stab)]
    assert d[1] < d[0]


def test_models_without_loops_refuse_constrained_calls():
    m = ldr.load_urdf(os.path.join(MECH, "four_bar_tree.urdf"))
    assert m.nc == 0 and m.loops == ()
    with pytest.raises(ldr.InputError, match="no loop closures"):
        ldr.constraint_residual(m, np.zeros(3))


def test_complete_motion_from_the_actuated_joints():
    """The delta's shoulders determine the rest: the completed motion satisfies the closures,
    and constrained inverse dynamics on it gives torques that forward dynamics turns back into
    the same motion."""
    m = load("delta")
    rng = np.random.default_rng(9)
    q_ref, v_ref = consistent_state(m, rng)
    a_ref, _ = ldr.constrained_forward_dynamics(m, q_ref, v_ref, rng.standard_normal(m.nv))
    act = ["shoulder_1", "shoulder_2", "shoulder_3"]
    cols = [m.joint_v_index[m.joint_names.index(n)] for n in act]
    noise = 0.02 * rng.standard_normal(m.nv)
    noise[cols] = 0.0
    q, v, a = ldr.complete_motion(m, q_ref + noise, np.where(np.isin(np.arange(m.nv), cols), v_ref, 0),
                                  np.where(np.isin(np.arange(m.nv), cols), a_ref, 0), act)
    assert np.max(np.abs(q - q_ref)) < 1e-9 and np.max(np.abs(v - v_ref)) < 1e-9
    assert np.max(np.abs(a - a_ref)) < 1e-8
    with pytest.raises(ldr.InputError, match="do not determine"):
        ldr.complete_motion(m, q_ref, v_ref, a_ref, act[:2])


def test_external_wrench_enters_as_joint_torques():
    """f_ext on a link acts as tau = J^T f (J the body Jacobian of that link) in all three
    constrained algorithms."""
    m = load("delta")
    rng = np.random.default_rng(10)
    q, v = consistent_state(m, rng)
    w = rng.standard_normal(6)
    tau_w = ldr.body_jacobian(m, q, "platform").T @ w
    tau = rng.standard_normal(m.nv)
    a1, l1 = ldr.constrained_forward_dynamics(m, q, v, tau, f_ext={"platform": w})
    a2, l2 = ldr.constrained_forward_dynamics(m, q, v, tau + tau_w)
    assert np.allclose(a1, a2, atol=1e-9) and np.allclose(l1, l2, atol=1e-8)
    act = ["shoulder_1", "shoulder_2", "shoulder_3"]
    t1, _ = ldr.constrained_inverse_dynamics(m, q, v, a1, act, f_ext={"platform": w})
    a3, _ = ldr.constrained_forward_dynamics(m, q, v, t1, f_ext={"platform": w})
    assert np.allclose(a3, a1, atol=1e-8)
    mask = np.zeros(m.nv, dtype=bool)
    mask[[m.joint_v_index[m.joint_names.index(n)] for n in act]] = True
    a4, t4, _ = ldr.constrained_hybrid_dynamics(m, q, v, np.where(mask, a1, 0), np.where(mask, 0, tau),
                                               mask, f_ext={"platform": w})
    assert np.allclose(a4, a1, atol=1e-8)


@pytest.mark.parametrize("bad", ["abc", [1.0, 2.0], [np.nan, 0.0, 0.0]])
def test_bad_state_is_an_input_error(bad):
    m = load("four_bar")
    with pytest.raises(ldr.InputError, match="q must be 3 finite numbers"):
        ldr.constrained_forward_dynamics(m, bad, np.zeros(3), np.zeros(3))
    with pytest.raises(ldr.InputError, match="tau must be 3 finite numbers"):
        ldr.constrained_forward_dynamics(m, np.zeros(3), np.zeros(3), bad)
