"""The Slotine-Li regressor, dM/dt, inertial parameters and the two skew Coriolis factorizations.

Robots: example-robot-data panda (a mimic finger), ur5, solo12 (floating base), the bundled arm7
(fixed and floating), and the builder's zoo (every joint kind, a mimic with offset, a floating
base) -- many random states each.

Oracles:
- identities that need no Pinocchio: C v + g = RNEA(q, v, 0), dM/dt - 2C skew, dM/dt against
  central finite differences of M along ldr.integrate, Y theta = M a_r + C v_r + g with M, C, g
  from the independent CRBA / Coriolis / RNEA kernels;
- Pinocchio (test oracle only): the polarization of computeJointTorqueRegressor,
  Y_SL = Y(q, 0, a_r) + 1/4 [Y(q, v + v_r, 0) - Y(q, v - v_r, 0)], for fixed bases (exact:
  C(q, x) y is symmetric in (x, y) for the Christoffel C when v = dq/dt); for a floating base,
  whose v is a body twist (a quasi-velocity), C(q, x) y is NOT symmetric, the polarization
  gives the symmetrized C, which we check against 1/2 [Y(q, v, v_r, a_r) + Y(q, v_r, v, a_r)],
  and the full regressor is checked column by column against Pinocchio's CRBA, Coriolis matrix
  and gravity of unit-parameter inertias. Joints and bodies are matched by name.
"""
import os

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms import regressor as R
from lie_dynamics_ros.conventions import matrix_to_internal, to_internal
from lie_dynamics_ros.lie import se3

from models import bundled, general_twin, zoo

import pinocchio as pin  # noqa: E402  (a test dependency: make test installs it)
from oracle import Oracle, erd  # noqa: E402

N_STATES = 25
TOL_PIN = 1e-8

ERD = {
    "panda": ("panda_description/urdf/panda.urdf", False),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False),
    "solo12": ("solo_description/robots/solo12.urdf", True),
}


def _load(name):
    if name in ERD:
        path, fb = ERD[name]
        return ldr.load_urdf(erd(path), floating_base=fb)
    if name == "arm7":
        return bundled("arm7.urdf")
    if name == "arm7_floating":
        return bundled("arm7.urdf", floating_base=True)
    if name == "zoo":
        return zoo(3)
    raise KeyError(name)


ROBOTS = ["panda", "ur5", "solo12", "arm7", "arm7_floating", "zoo"]
_CACHE = {}


def model_of(name):
    if name not in _CACHE:
        _CACHE[name] = _load(name)
    return _CACHE[name]


def states(model, n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        q = ldr.random_configuration(model, rng)
        v, vr, ar = rng.normal(size=(3, model.nv))
        yield q, v, vr, ar


def scale(*arrays):
    return max(1.0, *(np.abs(a).max() for a in arrays))


# ---------------------------------------------------------------------------------------------
# skew property and C v


@pytest.mark.parametrize("name", ROBOTS)
def test_skew_property_and_coriolis_times_v(name):
    model = model_of(name)
    worst = dict(cv=0.0, skew=0.0, mdot=0.0, sMs=0.0, ploen_cv=0.0, ploen_skew=0.0)
    for q, v, s, _ in states(model, N_STATES, 1):
        C = ldr.coriolis_matrix(model, q, v)
        Cp = R.coriolis_matrix_ploen(model, q, v)
        Md = R.mass_matrix_time_derivative(model, q, v)
        b = ldr.inverse_dynamics(model, q, v, np.zeros(model.nv))
        g = ldr.gravity_torques(model, q)
        sc = scale(C, Md, b)
        N = Md - 2 * C
        Np = Md - 2 * Cp
        worst["cv"] = max(worst["cv"], np.abs(C @ v + g - b).max() / sc)
        worst["skew"] = max(worst["skew"], np.abs(N + N.T).max() / sc)
        worst["mdot"] = max(worst["mdot"], np.abs(Md - C - C.T).max() / sc)
        worst["sMs"] = max(worst["sMs"], abs(s @ N @ s) / (sc * (s @ s)))
        worst["ploen_cv"] = max(worst["ploen_cv"], np.abs(Cp @ v + g - b).max() / sc)
        worst["ploen_skew"] = max(worst["ploen_skew"], np.abs(Np + Np.T).max() / sc)
    assert max(worst.values()) < 1e-12, worst


@pytest.mark.parametrize("name", ROBOTS)
def test_mass_matrix_time_derivative_matches_finite_differences(name):
    """Independent of C: d/dt M(q(t)) along q(t) = integrate(q, v t), central differences."""
    model = model_of(name)
    h = 1e-6
    for q, v, _, _ in states(model, 5, 2):
        Md = R.mass_matrix_time_derivative(model, q, v)
        Mp = ldr.mass_matrix(model, ldr.integrate(model, q, v, h))
        Mm = ldr.mass_matrix(model, ldr.integrate(model, q, v, -h))
        fd = (Mp - Mm) / (2 * h)
        assert np.abs(Md - fd).max() < 1e-6 * scale(Md), (name, np.abs(Md - fd).max())
        assert np.allclose(Md, Md.T, atol=1e-14)


# ---------------------------------------------------------------------------------------------
# the regressor: identity, O(n) twin, Pinocchio


@pytest.mark.parametrize("name", ROBOTS)
def test_regressor_times_parameters_is_slotine_li_torque(name):
    model = model_of(name)
    theta = R.inertial_parameters(model)
    assert theta.shape == (10 * len(model.body_names),)
    for q, v, vr, ar in states(model, N_STATES, 3):
        Y = R.regressor(model, q, v, vr, ar)
        assert Y.shape == (model.nv, theta.size)
        ref = (ldr.mass_matrix(model, q) @ ar + ldr.coriolis_matrix(model, q, v) @ vr
               + ldr.gravity_torques(model, q))
        sc = scale(ref)
        assert np.abs(Y @ theta - ref).max() < 1e-11 * sc
        assert np.abs(R.slotine_li_torques(model, q, v, vr, ar) - ref).max() < 1e-11 * sc
        # v_r = v, a_r = a: the inverse-dynamics regressor
        tau = ldr.inverse_dynamics(model, q, v, ar)
        assert np.abs(R.regressor(model, q, v, v, ar) @ theta - tau).max() < 1e-11 * scale(tau)


def test_regressor_without_gravity_and_general_joints():
    model = bundled("arm7.urdf").with_gravity((0.0, 0.0, 0.0))
    q, v, vr, ar = next(states(model, 1, 4))
    theta = R.inertial_parameters(model)
    ref = ldr.mass_matrix(model, q) @ ar + ldr.coriolis_matrix(model, q, v) @ vr
    assert np.allclose(R.regressor(model, q, v, vr, ar) @ theta, ref, atol=1e-12, rtol=0)
    builtin, general = general_twin(5)
    for q, v, vr, ar in states(builtin, 3, 5):
        Yb = R.regressor(builtin, q, v, vr, ar)
        Yg = R.regressor(general, q, v, vr, ar)
        assert np.allclose(Yb, Yg, atol=1e-12, rtol=0)


def test_mimic_joint_equals_the_extended_model_mapped_back():
    """zoo's 'mim' joint mimics 'rev' (q = -0.7 q_rev + 0.2): the regressor equals that of the
    extended model (mim an independent joint) with v_ext = T v, a_ext = T a_r, mapped back as
    T^T Y_ext -- the mimic body's torque accumulates on rev's column."""
    ours = zoo(3, floating=False, mimic=True)
    ext = zoo(3, floating=False, mimic=False)
    mult, off = -0.7, 0.2
    assert ours.body_names == ext.body_names
    T = np.zeros((ext.nv, ours.nv))
    for k, name in enumerate(ext.joint_names):
        iv = ext.joint_v_index[k]
        if name == "mim":
            T[iv, ours.joint_v_index[ours.joint_names.index("rev")]] = mult
        else:
            jo = ours.joint_names.index(name)
            for d in range(ext.joint_nv[k]):
                T[iv + d, ours.joint_v_index[jo] + d] = 1.0

    def q_ext(q):
        out = np.zeros(ext.nq)
        for k, name in enumerate(ext.joint_names):
            iq, nq = ext.joint_q_index[k], ext.joint_nq[k]
            if name == "mim":
                out[iq] = mult * q[ours.joint_q_index[ours.joint_names.index("rev")]] + off
            else:
                jo = ours.joint_names.index(name)
                out[iq:iq + nq] = q[ours.joint_q_index[jo]:ours.joint_q_index[jo] + nq]
        return out
    for q, v, vr, ar in states(ours, 5, 6):
        Y = R.regressor(ours, q, v, vr, ar)
        Ye = R.regressor(ext, q_ext(q), T @ v, T @ vr, T @ ar)
        assert np.abs(Y - T.T @ Ye).max() < 1e-12 * scale(Y)


def _oracle(name):
    path, fb = ERD[name] if name in ERD else (os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "urdf", "arm7.urdf"),
        name == "arm7_floating")
    path = erd(path) if name in ERD else path
    model = model_of(name)
    # mimic=False: Pinocchio's extended model (the mimic finger as its own joint; the map
    # puts the mimic relation back); computeJointTorqueRegressor needs no mimic support then
    orc = Oracle(model, path, fb, mimic=False)
    names = [j.name for j in model.joints]
    cols = np.empty(10 * model.njoints, dtype=int)     # our column -> Pinocchio column
    assert orc.pm.njoints - 1 == model.njoints
    for i in range(1, orc.pm.njoints):
        b = names.index(orc.pm.names[i])
        cols[10 * b:10 * b + 10] = np.arange(10 * (i - 1), 10 * i)
    return model, orc, cols


def _pin_polarized(model, orc, cols, q, v, vr, ar):
    pm, pd, mp = orc.pm, orc.pd, orc.map
    qp = mp.q_to_pin(q)
    z = np.zeros(model.nv)

    def Yp(vv, aa):
        return np.array(pin.computeJointTorqueRegressor(pm, pd, qp, mp.v_to_pin(vv, q),
                                                        mp.a_to_pin(aa, q, vv)))
    Y = Yp(z, ar) + 0.25 * (Yp(v + vr, z) - Yp(v - vr, z))
    return mp.T(q).T @ Y[:, cols]


@pytest.mark.parametrize("name", ["panda", "ur5", "arm7"])
def test_regressor_matches_pinocchio_polarization_fixed_base(name, capsys):
    model, orc, cols = _oracle(name)
    worst = 0.0
    for q, v, vr, ar in states(model, N_STATES, 7):
        ref = _pin_polarized(model, orc, cols, q, v, vr, ar)
        Y = R.regressor(model, q, v, vr, ar)
        worst = max(worst, np.abs(Y - ref).max() / scale(ref))
    with capsys.disabled():
        print("\n[regressor vs Pinocchio polarization] %s: max rel. deviation %.2e"
              % (name, worst))
    assert worst < TOL_PIN


@pytest.mark.parametrize("name", ["solo12", "arm7_floating"])
def test_floating_base_symmetric_part_matches_polarization(name):
    """With body-twist velocities C(q, x) y != C(q, y) x; the polarization is the symmetric
    part, 1/2 [Y(q, v, v_r, a_r) + Y(q, v_r, v, a_r)]."""
    model, orc, cols = _oracle(name)
    asym = 0.0
    for q, v, vr, ar in states(model, 10, 8):
        ref = _pin_polarized(model, orc, cols, q, v, vr, ar)
        sym = 0.5 * (R.regressor(model, q, v, vr, ar) + R.regressor(model, q, vr, v, ar))
        assert np.abs(sym - ref).max() < TOL_PIN * scale(ref)
        C1, C2 = ldr.coriolis_matrix(model, q, v), ldr.coriolis_matrix(model, q, vr)
        asym = max(asym, np.abs(C1 @ vr - C2 @ v).max())
    assert asym > 1e-3     # the antisymmetric part is real: polarization alone is not Y_SL


@pytest.mark.parametrize("name", ["solo12", "arm7_floating", "panda"])
def test_regressor_columns_match_pinocchio_unit_parameters(name, capsys):
    """Column k of Y = M_k a_r + C_k(q, v) v_r + g_k with Pinocchio's CRBA, Coriolis matrix and
    gravity for a model whose only inertia is the k-th unit parameter of one body."""
    model, orc, cols = _oracle(name)
    pm, pd, mp = orc.pm, orc.pd, orc.map
    saved = [pm.inertias[i].copy() for i in range(pm.njoints)]
    worst = 0.0
    try:
        for q, v, vr, ar in states(model, 3, 9):
            qp, T = mp.q_to_pin(q), mp.T(q)
            Y = R.regressor(model, q, v, vr, ar)
            for c_ours in range(Y.shape[1]):
                i, k = int(cols[c_ours] // 10 + 1), int(cols[c_ours] % 10)
                for j in range(pm.njoints):
                    pm.inertias[j] = pin.Inertia.Zero()
                e = np.zeros(10)
                e[k] = 1.0
                pm.inertias[i] = pin.Inertia.FromDynamicParameters(e)
                Mp = np.array(pin.crba(pm, pd, qp))
                Mp = np.triu(Mp) + np.triu(Mp, 1).T
                Cp = np.array(pin.computeCoriolisMatrix(pm, pd, qp, T @ v))
                gp = np.array(pin.computeGeneralizedGravity(pm, pd, qp))
                col = T.T @ (Mp @ (T @ ar) + Cp @ (T @ vr) + gp)
                worst = max(worst, np.abs(col - Y[:, c_ours]).max() / scale(col))
    finally:
        for j in range(pm.njoints):
            pm.inertias[j] = saved[j]
    with capsys.disabled():
        print("\n[regressor columns vs Pinocchio unit parameters] %s: max rel. deviation %.2e"
              % (name, worst))
    assert worst < TOL_PIN


@pytest.mark.parametrize("name", ["panda", "ur5", "solo12", "arm7_floating"])
def test_inertial_parameters_match_pinocchio(name):
    model, orc, cols = _oracle(name)
    pm = orc.pm
    th_pin = np.concatenate([pm.inertias[i].toDynamicParameters() for i in range(1, pm.njoints)])
    assert np.allclose(R.inertial_parameters(model), th_pin[cols], atol=1e-12, rtol=1e-12)
    inertias = R.parameters_to_inertias(R.inertial_parameters(model))
    assert np.allclose(inertias, model.inertias, atol=1e-12)
    names = R.parameter_names(model)
    assert names[:10] == ["%s/%s" % (model.body_names[0], p) for p in R.PARAMETER_NAMES]


# ---------------------------------------------------------------------------------------------
# Ploen's Proposition 1: the body factor, rebuilt from the property it must have


def test_ploen_body_factor_is_skew_and_reproduces_the_bias_wrench():
    rng = np.random.default_rng(10)
    Cb = np.empty((6, 6))
    for _ in range(200):
        A = rng.normal(size=(3, 3))
        I = se3.spatial_inertia(rng.uniform(0.1, 5), rng.normal(size=3), A @ A.T + 0.1 * np.eye(3))
        V = rng.normal(size=6)
        # a kernel: inertia and twist in the kernels' (angular, linear) order
        Ik, Vk = matrix_to_internal(I), to_internal(V)
        R.ploen_body_factor(Ik, Vk[:3], Cb)
        assert np.abs(Cb + Cb.T).max() < 1e-14 * scale(Cb)
        assert np.allclose(Cb @ Vk, to_internal(-se3.ad_star(V) @ I @ V), atol=1e-12 * scale(I, V))


@pytest.mark.parametrize("name", ["arm7", "ur5", "solo12"])
def test_ploen_factorization_differs_from_christoffel_by_a_skew_null_term(name):
    """Both satisfy dM/dt = C + C^T and C v = C_christoffel v, so D = C_ploen - C is skew with
    D v = 0; D is not zero (the Ploen C is not symmetric in (x, y))."""
    model = model_of(name)
    largest = 0.0
    for q, v, _, _ in states(model, 5, 11):
        D = R.coriolis_matrix_ploen(model, q, v) - ldr.coriolis_matrix(model, q, v)
        sc = scale(ldr.coriolis_matrix(model, q, v))
        assert np.abs(D + D.T).max() < 1e-12 * sc
        assert np.abs(D @ v).max() < 1e-12 * sc
        largest = max(largest, np.abs(D).max())
    assert largest > 1e-6


# ---------------------------------------------------------------------------------------------
# input checking


def test_bad_inputs_raise_input_error():
    model = bundled("arm7.urdf")
    z = np.zeros(7)
    with pytest.raises(ldr.InputError):
        R.regressor(model, z, z, np.r_[z[:6], np.nan], z)
    with pytest.raises(ldr.InputError):
        R.regressor(model, z, z, z, np.zeros(6))
    with pytest.raises(ldr.InputError):
        R.mass_matrix_time_derivative(model, z, np.r_[z[:6], np.inf])
    with pytest.raises(ldr.InputError):
        R.slotine_li_torques(model, np.zeros(3), z, z, z)
    with pytest.raises(ldr.InputError):
        R.parameters_to_inertias(np.zeros(11))


@pytest.mark.parametrize("name", ["panda", "solo12", "zoo", "zoo_mimic", "general"])
def test_stacked_regressor_is_the_per_sample_regressor(name):
    """The identification's stacking (one compiled call per core over the samples,
    ``regressor_rows``) equals ldr.regressor(q, v, v, a) of each sample, rows sample-major, on a
    mimic finger (panda), a floating base, every joint kind, a mimic with offset, and Python-
    defined joints (the per-sample path); enough samples to split over the pool."""
    from lie_dynamics_ros.identification.regressors import stacked_regressor
    model = {"zoo_mimic": lambda: zoo(3, floating=False, mimic=True),
             "general": lambda: general_twin(5)[1]}.get(name, lambda: model_of(name))()
    rng = np.random.default_rng(11)
    N = 600 // model.nv + 3
    q = np.array([ldr.random_configuration(model, rng) for _ in range(N)])
    v, a = rng.normal(size=(2, N, model.nv))
    W = stacked_regressor(model, q, v, a, True, True)
    nr = 10 * model.njoints
    ref = np.concatenate([R.regressor(model, q[k], v[k], v[k], a[k]) for k in range(N)])
    scale = np.abs(ref).max()
    assert np.abs(W[:, :nr] - ref).max() <= 1e-13 * scale
    if not model.has_general:
        np.testing.assert_array_equal(W[:, :nr], ref)          # the same kernel arithmetic
    assert W.shape == (N * model.nv, nr + 3 * sum(n == 1 for n in model.joint_nv))


def test_stacked_regressor_names_a_bad_sample():
    from lie_dynamics_ros.identification.regressors import stacked_regressor
    model = model_of("arm7")
    rng = np.random.default_rng(2)
    q = np.array([ldr.random_configuration(model, rng) for _ in range(200)])
    v, a = rng.normal(size=(2, 200, model.nv))
    v[137, 3] = np.nan
    with pytest.raises(ldr.InputError, match="sample 137: .*v"):
        stacked_regressor(model, q, v, a, True, False)
