"""Armature (reflected rotor inertia) is inertia: ``model.armature`` sits on M's diagonal in every
algorithm, as Pinocchio's ``model.armature`` does (Featherstone 2008, RBDA §9.2).

Oracle: Pinocchio with the same armature on the same joints (set by joint name), on the bundled
arm, a floating-base quadruped (solo12) and an arm with mimic fingers (panda). Identities on the
test zoo (every joint kind, multi-DOF joints, with and without a mimic joint) and on the bundled
four-bar loop.
"""
import os

import numpy as np
import pytest

import pinocchio as pin

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms.geometry import mass_matrix_park
from models import general_twin, zoo
from oracle import Oracle, bundled, erd, rel_err

TOL = 1e-9

ROBOTS = [("arm7", lambda: bundled("arm7.urdf"), False),
          ("solo12", lambda: erd("solo_description/robots/solo12.urdf"), True),
          ("panda", lambda: erd("panda_description/urdf/panda.urdf"), False)]
_CACHE = {}


def _armature(model, seed=0):
    """A distinct armature on every DOF (free-flyer DOFs included), 0.05..0.5 kg m^2."""
    return np.random.default_rng(seed).uniform(0.05, 0.5, model.nv)


def _setup(rid):
    """(model without armature, model with it, Pinocchio oracle with the same armature)."""
    if rid not in _CACHE:
        getter, fb = next((g, f) for r, g, f in ROBOTS if r == rid)
        path = getter()
        m0 = ldr.load_urdf(path, floating_base=fb)
        m = m0.with_joint_dynamics(armature=_armature(m0))
        oracle = Oracle(m, path, fb)
        pm = oracle.pm
        for name, vi, nv in zip(m.joint_names, m.joint_v_index, m.joint_nv):
            j = pm.joints[pm.getJointId(name)]
            assert j.nv == nv, name
            pm.armature[j.idx_v:j.idx_v + nv] = m.armature[vi:vi + nv]
        _CACHE[rid] = (m0, m, oracle)
    return _CACHE[rid]


def _states(model, n=3, seed=1):
    rng = np.random.default_rng(seed)
    return [(np.asarray(ldr.random_configuration(model, rng)), rng.uniform(-1, 1, model.nv),
             rng.uniform(-2, 2, model.nv)) for _ in range(n)]


def _check(what, ours, ref):
    err = rel_err(ours, ref)
    assert err <= TOL, f"{what}: relative deviation {err:.2e}"


@pytest.mark.parametrize("rid", [r for r, _, _ in ROBOTS])
def test_rnea_aba_crba_kinetic_energy_equal_pinocchio_with_armature(rid):
    m0, m, oracle = _setup(rid)
    assert m.armature.min() > 0 and not m0.armature.any()
    if rid == "panda":
        assert m.has_mimic
    for q, v, a in _states(m):
        tau = ldr.inverse_dynamics(m, q, v, a)
        _check(f"{rid} rnea", tau, oracle.rnea(q, v, a))
        M = ldr.mass_matrix(m, q)
        _check(f"{rid} crba", M, oracle.crba(q))
        _check(f"{rid} aba", ldr.forward_dynamics(m, q, v, tau), oracle.aba(q, v, tau))
        # Pinocchio's computeKineticEnergy counts the armature (1/2 v^T M v with a mimic model)
        _check(f"{rid} kinetic energy", ldr.kinetic_energy(m, q, v), oracle.kinetic(q, v))
        # the armature is exactly the difference on M's diagonal, nowhere else
        np.testing.assert_allclose(M - ldr.mass_matrix(m0, q), np.diag(m.armature),
                                   rtol=0, atol=1e-12)
        if not m.has_mimic:     # the numpy reference of Park et al. (1995)
            _check(f"{rid} Park's M", mass_matrix_park(m, q), M)
        # gravity, velocity terms and dM/dq do not see it
        if rid == "arm7":
            _check("dM/dq unchanged", ldr.mass_matrix_configuration_derivatives(m, q),
                   ldr.mass_matrix_configuration_derivatives(m0, q))
        np.testing.assert_allclose(ldr.nonlinear_effects(m, q, v),
                                   ldr.nonlinear_effects(m0, q, v), rtol=0, atol=1e-12)


@pytest.mark.parametrize("rid", ["arm7", "solo12"])
def test_derivatives_equal_pinocchio_with_armature(rid):
    """computeRNEADerivatives and computeABADerivatives with the armature set (Pinocchio's
    derivatives take no mimic joints)."""
    _, m, oracle = _setup(rid)
    for q, v, a in _states(m):
        qp, vp, ap = oracle._qva(q, v, a)
        T = oracle.map.T(q)
        dq, dv, M = ldr.inverse_dynamics_derivatives(m, q, v, a)
        ref = pin.computeRNEADerivatives(oracle.pm, oracle.pd, qp, vp, ap)
        Mp = oracle._crba_pin(qp)
        for name, x, y in (("dtau_dq", dq, ref[0]), ("dtau_dv", dv, ref[1]), ("M", M, Mp)):
            _check(f"{rid} {name}", x, T.T @ np.asarray(y) @ T)
        tau = ldr.inverse_dynamics(m, q, v, a)
        ours = ldr.forward_dynamics_derivatives(m, q, v, tau)
        ref = pin.computeABADerivatives(oracle.pm, oracle.pd, qp, vp, T @ tau)
        for name, x, y in zip(("da_dq", "da_dv", "Minv"), ours, ref):
            _check(f"{rid} {name}", x, T.T @ np.asarray(y) @ T)
        # the batched kernels agree with the per-state ones
        Qs, Vs, As = (np.stack([x] * 2) for x in (q, v, a))
        _check(f"{rid} batched dtau", ldr.inverse_dynamics_derivatives(m, Qs, Vs, As)[2][1], M)
        _check(f"{rid} batched Minv",
               ldr.forward_dynamics_derivatives(m, Qs, Vs, np.stack([tau] * 2))[2][1], ours[2])


@pytest.mark.parametrize("mimic", [False, True])
def test_identities_with_armature_on_every_joint_kind(mimic):
    """ABA(RNEA(a)) = a, M's columns from RNEA, hybrid = forward and inverse, kinetic energy,
    dM/dt = C + C^T, batched = per state; on ball, universal, planar and free joints (multi-DOF
    D blocks of the articulated-body pass) and a mimic joint (armature on the primary's DOF)."""
    m0 = zoo(seed=3, floating=True, mimic=mimic)
    m = m0.with_joint_dynamics(armature=_armature(m0, seed=4))
    Q, V, A = [], [], []
    for q, v, a in _states(m, seed=6):
        Q.append(q), V.append(v), A.append(a)
        tau = ldr.inverse_dynamics(m, q, v, a)
        _check("ABA(RNEA(a))", ldr.forward_dynamics(m, q, v, tau), a)
        M = ldr.mass_matrix(m, q)
        g = ldr.gravity_torques(m, q)
        cols = np.stack([ldr.inverse_dynamics(m, q, np.zeros(m.nv), e) - g
                         for e in np.eye(m.nv)], axis=1)
        _check("M = RNEA columns", M, cols)
        np.testing.assert_allclose(M - ldr.mass_matrix(m0, q), np.diag(m.armature), atol=1e-12)
        _check("tau = M a + h", tau, M @ a + ldr.nonlinear_effects(m, q, v))
        assert abs(ldr.kinetic_energy(m, q, v) - 0.5 * v @ M @ v) <= 1e-10 * (1 + v @ M @ v)
        C = ldr.coriolis_matrix(m, q, v)
        _check("C unchanged", C, ldr.coriolis_matrix(m0, q, v))
        _check("dM/dt = C + C^T", ldr.mass_matrix_time_derivative(m, q, v), C + C.T)
        # hybrid: prescribe every other joint
        mask = np.zeros(m.nv, dtype=bool)
        for k, (vi, nv) in enumerate(zip(m.joint_v_index, m.joint_nv)):
            mask[vi:vi + nv] = k % 2 == 0
        a_in = np.where(mask, a, 0.0)
        tau_in = np.where(mask, 0.0, tau)
        a_full, tau_full = ldr.hybrid_dynamics(m, q, v, a_in, tau_in, mask)
        _check("hybrid a", a_full, a)
        _check("hybrid tau", tau_full, tau)
        dq, dv, Md = ldr.inverse_dynamics_derivatives(m, q, v, a)
        _check("dtau/da = M", Md, M)
        _, _, Minv = ldr.forward_dynamics_derivatives(m, q, v, tau)
        _check("da/dtau = M^-1", Minv @ M, np.eye(m.nv))
        # the hybrid derivatives' dy/dx of the all-prescribed case is M
        _check("hybrid dtau/da", ldr.hybrid_dynamics_derivatives(
            m, q, v, a, tau, np.ones(m.nv, dtype=bool))[2], M)
    Q, V, A = np.stack(Q), np.stack(V), np.stack(A)
    TAU = ldr.inverse_dynamics(m, Q, V, A)
    for r in range(len(Q)):
        _check("batched rnea", TAU[r], ldr.inverse_dynamics(m, Q[r], V[r], A[r]))
    _check("batched aba", ldr.forward_dynamics(m, Q, V, TAU), A)
    _check("batched crba", ldr.mass_matrix(m, Q)[0], ldr.mass_matrix(m, Q[0]))
    mask = np.zeros(m.nv, dtype=bool)
    mask[m.joint_v_index[0]:m.joint_v_index[0] + m.joint_nv[0]] = True
    a_b, tau_b = ldr.hybrid_dynamics(m, Q, V, np.where(mask, A, 0.0), np.where(mask, 0.0, TAU),
                                     mask)
    _check("batched hybrid a", a_b, A)
    _check("batched hybrid tau", tau_b, TAU)


def test_regressor_keeps_rigid_body_columns_and_armature_adds_its_torque():
    """Y theta + armature * a = inverse dynamics (Y as Pinocchio's computeJointTorqueRegressor,
    which has no armature columns); slotine_li_torques includes the armature."""
    m0, m, oracle = _setup("arm7")
    theta = ldr.inertial_parameters(m)
    for q, v, a in _states(m):
        Y = ldr.regressor(m, q, v, v, a)
        _check("Y unchanged", Y, ldr.regressor(m0, q, v, v, a))
        qp, vp, ap = oracle._qva(q, v, a)
        Yp = np.asarray(pin.computeJointTorqueRegressor(oracle.pm, oracle.pd, qp, vp, ap))
        _check("Y = Pinocchio's", Y, Yp)
        tau = ldr.inverse_dynamics(m, q, v, a)
        _check("Y theta + armature a", Y @ theta + m.armature * a, tau)
        vr, ar = v[::-1].copy(), a[::-1].copy()
        _check("slotine-li", ldr.slotine_li_torques(m, q, v, vr, ar),
               ldr.regressor(m, q, v, vr, ar) @ theta + m.armature * ar)


def test_four_bar_with_armature_forward_and_inverse_agree():
    """Closed loop (bundled four-bar): the constrained forward dynamics satisfy Kim (54) with
    M's armature, and the constrained inverse dynamics give back the torque that produced them."""
    from scipy.linalg import null_space
    m0 = ldr.load_urdf(os.path.join(os.path.dirname(bundled("arm7.urdf")), "loops",
                                    "four_bar.urdf"))
    m = m0.with_joint_dynamics(armature=[0.3, 0.1, 0.2])
    rng = np.random.default_rng(8)
    q = ldr.assemble(m, 0.06 * rng.standard_normal(m.nq))
    v = null_space(ldr.constraint_jacobian(m, q)) @ rng.standard_normal(1)
    actuated = ["crank_joint"]
    tau = np.zeros(m.nv)
    tau[m.joint_v_index[m.joint_names.index("crank_joint")]] = 1.5
    a, lam = ldr.constrained_forward_dynamics(m, q, v, tau)
    a0, _ = ldr.constrained_forward_dynamics(m0, q, v, tau)
    assert np.max(np.abs(a - a0)) > 1e-3          # the armature changes the motion
    A = ldr.constraint_jacobian(m, q)
    M, h = ldr.mass_matrix(m, q), ldr.nonlinear_effects(m, q, v)
    assert np.max(np.abs(M @ a + h - tau - A.T @ lam)) < 1e-9
    assert np.max(np.abs(A @ a + ldr.constraint_bias(m, q, v))) < 1e-9
    tau_id, _ = ldr.constrained_inverse_dynamics(m, q, v, a, actuated)
    _check("four-bar ID(FD(tau))", tau_id, tau)
    # hybrid: the crank follows a, the passive joints take zero torque -> the crank's torque
    mask = np.zeros(m.nv, dtype=bool)
    mask[m.joint_v_index[m.joint_names.index("crank_joint")]] = True
    a_full, tau_full, _ = ldr.constrained_hybrid_dynamics(m, q, v, np.where(mask, a, 0.0),
                                                          np.where(mask, 0.0, tau), mask)
    _check("four-bar hybrid a", a_full, a)
    _check("four-bar hybrid tau", tau_full, tau)


def test_simulation_conserves_energy_with_the_armature():
    """A passive arm with armature: the compiled simulation (ABA with the armature) conserves
    kinetic (armature included) plus potential energy, the batched rollout runs the same
    steps, and the motion differs from the arm without armature."""
    m0, m, _ = _setup("arm7")
    q0, v0, _ = _states(m, n=1, seed=9)[0]
    res = ldr.simulate(m, q0, v0, 0.3, 1e-3, method="rkmk4")
    res0 = ldr.simulate(m0, q0, v0, 0.3, 1e-3, method="rkmk4")
    assert res.compiled
    e = [ldr.kinetic_energy(m, q, v) + ldr.potential_energy(m, q) for q, v in zip(res.q, res.v)]
    assert np.ptp(e) < 1e-7 * (1 + abs(e[0])), np.ptp(e)
    assert np.max(np.abs(res.v[-1] - res0.v[-1])) > 1e-2
    roll = ldr.rollout(m, np.stack([q0] * 2), np.stack([v0] * 2), 0.3, 1e-3, method="rkmk4")
    np.testing.assert_allclose(roll.q[1], res.q, rtol=0, atol=1e-12)


def test_general_joints_carry_the_armature_like_builtin_ones():
    """Joints given as Python callables (ldr.General, filled outside the kernels) get the same
    armature terms as their built-in twins."""
    builtin, general = (x.with_joint_dynamics(armature=[0.2, 0.05, 0.1, 0.3])
                        for x in general_twin(seed=2))
    for q, v, a in _states(builtin, seed=10):
        tau = ldr.inverse_dynamics(builtin, q, v, a)
        _check("general rnea", ldr.inverse_dynamics(general, q, v, a), tau)
        _check("general crba", ldr.mass_matrix(general, q), ldr.mass_matrix(builtin, q))
        _check("general aba", ldr.forward_dynamics(general, q, v, tau), a)
