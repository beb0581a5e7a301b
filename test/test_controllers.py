"""Library controllers (no ROS): gains validation, the control laws, the physical-consistency
projection, and closed loops on the bundled arm with a 2 kg payload its model does not contain.

Closed loop: plant = urdf/arm7.urdf + 2 kg box welded to the flange (merged into the last body),
controller model = urdf/arm7.urdf; 1 kHz, semi-implicit Euler (as the simulator node), effort
limits enforced, torques held over each step. Reference: the demo's sum of sines on every joint
(lie_dynamics_ros.ros.adaptive_demo.excitation); the arm starts at rest at the ready pose, so the
first second holds the transient to v_d(0) plus the payload sag.
"""
import dataclasses

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms.regressor import inertial_parameters, regressor
from lie_dynamics_ros.control import (AdaptiveGains, AdaptiveSlotineLiController,
                                      ComputedTorqueController, PDGains, PDGravityController,
                                      SlotineLiController, SlotineLiGains,
                                      is_physically_consistent, parameters_from_pseudo_inertia,
                                      project_physical, pseudo_inertia,
                                      smallest_pseudo_inertia_eigenvalues)
from lie_dynamics_ros.ros import adaptive_demo as demo

from models import bundled, zoo

DT = 1e-3
KD = demo.KD
GAMMA = demo.GAMMA


@pytest.fixture(scope="module")
def arm():
    plant = ldr.load_urdf(demo.payload_urdf())
    nominal = bundled("arm7.urdf")
    return plant, nominal, inertial_parameters(plant)


def simulate(plant, ctrl, T, theta_true=None, start_on_reference=False, each=None):
    """Closed loop; returns (per-second tracking RMS, V per step or None, steps clamped)."""
    q, v, _ = demo.excitation(0.0)
    q = q.copy()
    v = v.copy() if start_on_reference else np.zeros(plant.nv)
    lim = plant.effort_limits
    n = int(round(T / DT))
    sq = np.zeros(n)
    V = np.zeros(n) if theta_true is not None else None
    clamped = 0
    for k in range(n):
        t = k * DT
        qd, vd, ad = demo.excitation(t)
        if V is not None:
            V[k] = ctrl.lyapunov(q, v, qd, vd, theta_true)
        tau = ctrl.step(t, q, v, qd, vd, ad, DT)
        if each is not None:
            each(ctrl)
        e = q - qd
        sq[k] = e @ e
        tc = np.clip(tau, -lim, lim)
        clamped += bool(np.any(tc != tau))
        a = ldr.forward_dynamics(plant, q, v, tc)
        v = v + DT * a
        q = ldr.integrate(plant, q, v, DT)
    per = int(round(1 / DT))
    rms = np.sqrt(sq[: n - n % per].reshape(-1, per).mean(axis=1))
    return rms, V, clamped


# ---------------------------------------------------------------------------------------------
# gains


@pytest.mark.parametrize("cls, kw", [
    (PDGains, dict(K_P=-1.0)), (PDGains, dict(K_D=np.nan)), (PDGains, dict(K_P=[1, 2, np.inf])),
    (SlotineLiGains, dict(Lambda=-0.1)), (SlotineLiGains, dict(K_D=[1.0, -2.0])),
    (SlotineLiGains, dict(K_D=[[1.0, 2.0], [0.0, 1.0]])),          # not symmetric
    (SlotineLiGains, dict(Lambda=[[1.0, 2.0], [2.0, 1.0]])),       # indefinite
    (AdaptiveGains, dict(Gamma=0.0)), (AdaptiveGains, dict(Gamma=[1.0, -1.0])),
    (AdaptiveGains, dict(Gamma=float("inf"))), (AdaptiveGains, dict(K_D="fast")),
    (AdaptiveGains, dict(Gamma=np.zeros((2, 2, 2)))),
])
def test_bad_gains_raise_value_error(cls, kw):
    with pytest.raises(ValueError):
        cls(**kw)


def test_gains_are_frozen_and_sized_by_the_controller():
    g = AdaptiveGains(Lambda=[1, 2, 3, 4, 5, 6, 7], K_D=5.0, Gamma=2.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.K_D = 1.0
    with pytest.raises(ValueError):
        g.Lambda[0] = 3.0               # read-only array
    model = bundled("arm7.urdf")
    AdaptiveSlotineLiController(model, g, payload_only=True)
    with pytest.raises(ValueError):
        SlotineLiController(model, SlotineLiGains(Lambda=[1.0, 2.0]))
    with pytest.raises(ValueError):
        AdaptiveSlotineLiController(model, AdaptiveGains(Gamma=np.ones(11)), payload_only=True)
    with pytest.raises(ValueError):
        AdaptiveSlotineLiController(model, g, adapt_body="no_such_link")
    with pytest.raises(TypeError):
        ComputedTorqueController(model, SlotineLiGains())
    # every accepted Gamma shape: scalar, per kind (10), per parameter, matrix
    for G in (3.0, GAMMA, np.arange(1, 71.0), np.eye(70) * 2.0):
        c = AdaptiveSlotineLiController(model, AdaptiveGains(Gamma=G))
        assert c.theta_hat.shape == (70,)


# ---------------------------------------------------------------------------------------------
# the laws


def test_control_laws_match_their_formulas():
    model = bundled("arm7.urdf")
    rng = np.random.default_rng(0)
    q, qd = ldr.random_configuration(model, rng), ldr.random_configuration(model, rng)
    v, vd, ad = rng.normal(size=(3, 7))
    M, C, g = (ldr.mass_matrix(model, q), ldr.coriolis_matrix(model, q, v),
               ldr.gravity_torques(model, q))
    lam, kd, kp = np.arange(1.0, 8.0), np.full(7, 3.0), np.full(7, 50.0)
    e, edot = q - qd, v - vd
    vr, ar = vd - lam * e, ad - lam * edot
    s = v - vr
    tau_sl = M @ ar + C @ vr + g - kd * s
    sl = SlotineLiController(model, SlotineLiGains(lam, kd))
    assert np.allclose(sl.step(0.0, q, v, qd, vd, ad), tau_sl, atol=1e-10)
    ad_ctrl = AdaptiveSlotineLiController(model, AdaptiveGains(lam, kd, 1.0))
    assert np.allclose(ad_ctrl.step(0.0, q, v, qd, vd, ad, 0.0), tau_sl, atol=1e-10)
    assert np.allclose(ad_ctrl.state.s, s)
    ct = ComputedTorqueController(model, PDGains(kp, kd))
    assert np.allclose(ct.step(0.0, q, v, qd, vd, ad), M @ (ad - kd * edot - kp * e) + C @ v + g,
                       atol=1e-9)
    pd = PDGravityController(model, PDGains(kp, kd))
    assert np.allclose(pd.step(0.0, q, v, qd, vd, ad), g - kp * e - kd * edot, atol=1e-10)
    # matrix gains act as matrices
    L = np.diag(lam)
    sl2 = SlotineLiController(model, SlotineLiGains(L, np.diag(kd)))
    assert np.allclose(sl2.step(0.0, q, v, qd, vd, ad), tau_sl, atol=1e-10)
    # the adaptation law: theta_hat moves by -dt Gamma Y_a^T s
    c = AdaptiveSlotineLiController(model, AdaptiveGains(lam, kd, 0.5), payload_only=True,
                                    projection=False)
    th0 = c.theta_hat
    c.step(0.0, q, v, qd, vd, ad, 1e-3)
    Y = regressor(model, q, v, vr, ar)[:, c.adapted]
    assert np.allclose(c.theta_hat - th0, -1e-3 * 0.5 * Y.T @ s, atol=1e-14)
    c.reset()
    assert np.array_equal(c.theta_hat, th0) and c.state.steps == 0


def test_computed_torque_and_pd_gravity_on_exact_models():
    model = bundled("double_pendulum.urdf")
    ct = ComputedTorqueController(model, PDGains(100.0, 20.0))
    pd = PDGravityController(model, PDGains(60.0, 15.0))
    for ctrl, tol in ((ct, 1e-3), (pd, 1e-3)):
        q, v = np.array([0.3, -0.2]), np.zeros(2)
        qd = np.array([1.0, 0.5])
        for k in range(6000):
            tau = ctrl.step(k * DT, q, v, qd, np.zeros(2), np.zeros(2), DT)
            v = v + DT * ldr.forward_dynamics(model, q, v, tau)
            q = q + DT * v
        assert np.abs(q - qd).max() < tol, (type(ctrl).__name__, q - qd)


def test_floating_base_controller_is_finite():
    model = zoo(1, floating=True, mimic=True)
    rng = np.random.default_rng(1)
    q, qd = ldr.random_configuration(model, rng), ldr.random_configuration(model, rng)
    v, vd, ad = rng.normal(size=(3, model.nv))
    c = AdaptiveSlotineLiController(model, AdaptiveGains(2.0, 1.0, 0.1))
    tau = c.step(0.0, q, v, qd, vd, ad, 1e-3)
    assert tau.shape == (model.nv,) and np.all(np.isfinite(tau))
    assert np.allclose(c.state.e, ldr.difference(model, qd, q))


# ---------------------------------------------------------------------------------------------
# physical consistency


def test_pseudo_inertia_round_trip_and_consistency():
    model = bundled("arm7.urdf")
    theta = inertial_parameters(model)
    for b in range(7):
        th = theta[10 * b:10 * b + 10]
        assert np.allclose(parameters_from_pseudo_inertia(pseudo_inertia(th)), th)
    assert is_physically_consistent(theta)
    bad = theta.copy()
    bad[0] = -1.0                                    # negative mass
    assert not is_physically_consistent(bad)
    # triangle inequality broken at the COM (principal moments 1, 1, 3), positive definite
    from lie_dynamics_ros.lie import se3
    tri = se3.inertia_to_parameters(se3.spatial_inertia(1.0, np.zeros(3), np.diag([1, 1, 3.0])))
    assert np.all(np.linalg.eigvalsh(np.diag([1, 1, 3.0])) > 0)
    assert not is_physically_consistent(tri)


def _kkt_multiplier(x, p, Gd):
    """Z (4x4 symmetric) with G (p - x) = L*(Z), L*(Z)_k = <Z, pseudo_inertia(e_k)>: the
    multiplier of the LMI constraint. p is the projection iff Z >= 0 and <Z, P(p) - eps> = 0."""
    E = [pseudo_inertia(np.eye(10)[k]) for k in range(10)]
    basis = []
    for i in range(4):
        for j in range(i, 4):
            S = np.zeros((4, 4))
            S[i, j] = S[j, i] = 1.0
            basis.append(S)
    A = np.array([[np.sum(S * Ek) for S in basis] for Ek in E])
    z = np.linalg.solve(A, Gd * (p - x))
    return sum(c * S for c, S in zip(z, basis))


def test_exact_projection_satisfies_kkt_and_halfspace_projection_is_fejer_monotone():
    rng = np.random.default_rng(2)
    base = inertial_parameters(bundled("arm7.urdf"))[60:70]
    for trial in range(6):
        x = base + rng.normal(size=10) * np.r_[1.0, 0.2, 0.2, 0.2, np.full(6, 0.05)]
        x[0] = -abs(x[0])                            # surely infeasible
        Gd = rng.uniform(0.2, 5.0, 10)
        p, acted = project_physical(x, metric=Gd)
        assert acted and smallest_pseudo_inertia_eigenvalues(p).min() >= 1e-9 * 0.999
        Z = _kkt_multiplier(x, p, Gd)
        zs = np.abs(Z).max()
        assert np.linalg.eigvalsh(Z).min() >= -1e-6 * zs          # dual feasible
        assert abs(np.sum(Z * (pseudo_inertia(p) - 1e-9 * np.eye(4)))) <= 1e-6 * zs  # compl.
        h, acted_h = project_physical(x, metric=Gd, method="halfspace")
        assert acted_h and smallest_pseudo_inertia_eigenvalues(h).min() >= 1e-9 * 0.999
        for _ in range(50):                          # never farther from a feasible point
            y = project_physical(base + rng.normal(size=10) * 0.3, metric=Gd)[0]
            for z in (p, h):
                assert np.sum(Gd * (z - y) ** 2) <= np.sum(Gd * (x - y) ** 2) * (1 + 1e-12)
    same, acted = project_physical(base)
    assert not acted and np.array_equal(same, base)
    # a full (non-diagonal) metric and several bodies
    A = rng.normal(size=(20, 20))
    G = A @ A.T + 20 * np.eye(20)
    x = np.r_[base, base] + rng.normal(size=20)
    for method in ("exact", "halfspace"):
        p, acted = project_physical(x, metric=G, method=method)
        assert acted and smallest_pseudo_inertia_eigenvalues(p).min() > 0
    with pytest.raises(ValueError):
        project_physical(np.r_[base, np.nan])
    with pytest.raises(ValueError):
        project_physical(np.zeros(9))


# ---------------------------------------------------------------------------------------------
# closed loops with an unknown 2 kg payload


def test_adaptive_payload_tracking_converges_and_V_does_not_increase(arm, capsys):
    plant, nominal, theta_true = arm
    ctrl = AdaptiveSlotineLiController(nominal, AdaptiveGains(demo.LAMBDA, KD, GAMMA),
                                       payload_only=True)
    rms, V, clamped = simulate(plant, ctrl, 10.0, theta_true)
    fixed = SlotineLiController(nominal, SlotineLiGains(demo.LAMBDA, KD))
    rms_fixed, _, _ = simulate(plant, fixed, 10.0)
    dV = np.diff(V)
    ratio, ratio_fixed = rms[-1] / rms[0], rms_fixed[-1] / rms_fixed[0]
    est = ctrl.theta_hat - ctrl.theta_nominal[ctrl.adapted]
    with capsys.disabled():
        print("\n[library closed loop, 10 s] tracking RMS per second: adaptive %s"
              "\n  no adaptation %s\n  ratio last/first: adaptive %.3f, no adaptation %.3f"
              "\n  V: %.4g -> %.4g, largest step increase %.2e (V0 %.3g), clamped steps %d"
              "\n  payload mass estimate %.3f kg (true %.1f), projection acted in %d steps"
              % (np.array2string(rms, precision=4), np.array2string(rms_fixed, precision=4),
                 ratio, ratio_fixed, V[0], V[-1], dV.max(), V[0], clamped, est[0],
                 demo.PAYLOAD_MASS, ctrl.state.projections))
    assert ratio <= 0.1
    assert ratio_fixed > 0.5          # the steady error that adaptation removes
    assert rms[-1] < 0.1 * rms_fixed[-1]
    # V is non-increasing up to the integration error of a 1 ms step
    assert dV.max() <= 1e-6 * V[0]
    assert V[-1] < 0.05 * V[0]
    assert abs(est[0] - demo.PAYLOAD_MASS) < 0.1 * demo.PAYLOAD_MASS
    assert is_physically_consistent(ctrl.theta_hat)


def test_projection_keeps_estimates_physical_with_a_large_gamma(arm, capsys):
    """Gamma 10x the demo's: the plain law drives the estimate out of the physical set (negative
    pseudo-inertia eigenvalues), the projected one stays in it at every step and still tracks."""
    plant, nominal, theta_true = arm
    lows = {}
    results = {}
    for proj in (True, False):
        ctrl = AdaptiveSlotineLiController(nominal, AdaptiveGains(demo.LAMBDA, KD, 10 * GAMMA),
                                           payload_only=True, projection=proj)
        low = []
        rms, V, _ = simulate(plant, ctrl, 3.0, theta_true, start_on_reference=True,
                             each=lambda c: low.append(
                                 smallest_pseudo_inertia_eigenvalues(c.theta_hat)[0]))
        lows[proj], results[proj] = np.array(low), (rms, V, ctrl.state.projections)
    with capsys.disabled():
        print("\n[large Gamma] smallest pseudo-inertia eigenvalue over the run: projected %.3g, "
              "plain %.3g; projection acted in %d steps; RMS last s projected %.2e, plain %.2e"
              % (lows[True].min(), lows[False].min(), results[True][2], results[True][0][-1],
                 results[False][0][-1]))
    assert lows[True].min() >= 0.999e-9
    assert lows[False].min() < -1e-3
    assert results[True][0][-1] < 0.01
    V = results[True][1]          # Euler with a 10x gain: small increases, integration error
    dV = np.diff(V)
    assert dV[dV > 0].sum() <= 0.01 * V[0] and V[-1] < 0.2 * V[0]


def test_all_body_adaptation_runs_and_mass_matrix_of_true_parameters(arm):
    plant, nominal, theta_true = arm
    ctrl = AdaptiveSlotineLiController(nominal, AdaptiveGains(demo.LAMBDA, KD, 0.1 * GAMMA))
    assert ctrl.adapted.size == 70
    rng = np.random.default_rng(3)
    q, s = ldr.random_configuration(plant, rng), rng.normal(size=7)
    assert np.allclose(ctrl._mass_times(q, s, theta_true), ldr.mass_matrix(plant, q) @ s)
    rms, V, _ = simulate(plant, ctrl, 2.0, theta_true)
    assert np.all(np.isfinite(rms)) and np.diff(V).max() <= 1e-6 * V[0]
    assert is_physically_consistent(ctrl.theta_hat)
