"""Cross-checks between the algorithms (no oracle needed): Kim Tables 2-4, CRBA, Coriolis."""
import numpy as np
import pytest

import lie_dynamics_ros as ldr
from models import BUNDLED, bundled, zoo, general_twin, random_state

MODELS = {**{f"{n}": (lambda n=n: bundled(n)) for n in BUNDLED},
          "zoo": lambda: zoo(0), "zoo_fixed": lambda: zoo(1, floating=False),
          "general": lambda: general_twin()[1]}


@pytest.fixture(params=sorted(MODELS), scope="module")
def model(request):
    return MODELS[request.param]()


def close(a, b, tol=1e-9):
    a, b = np.asarray(a), np.asarray(b)
    assert np.linalg.norm(a - b) <= tol * max(1.0, np.linalg.norm(b)), (a, b)


@pytest.mark.parametrize("seed", range(3))
def test_aba_inverts_rnea(model, seed):
    q, v, a = random_state(model, seed)
    tau = ldr.inverse_dynamics(model, q, v, a)
    close(ldr.forward_dynamics(model, q, v, tau), a, 1e-8)


@pytest.mark.parametrize("seed", range(3))
def test_hybrid_reduces_to_aba_and_rnea_and_mixes(model, seed):
    q, v, a = random_state(model, seed)
    tau = ldr.inverse_dynamics(model, q, v, a)
    nv = model.nv
    a1, t1 = ldr.hybrid_dynamics(model, q, v, a, np.full(nv, np.nan), np.ones(nv, bool))
    close(t1, tau)
    close(a1, a)
    a2, t2 = ldr.hybrid_dynamics(model, q, v, np.full(nv, np.nan), tau, np.zeros(nv, bool))
    close(a2, a, 1e-8)
    close(t2, tau)
    # a mixed split: every other joint prescribed; the answer is the same physical state
    mask = np.zeros(nv, bool)
    for k, (vi, n) in enumerate(zip(model.joint_v_index, model.joint_nv)):
        mask[vi:vi + n] = k % 2 == 0
    a3, t3 = ldr.hybrid_dynamics(model, q, v, np.where(mask, a, 0), np.where(mask, 0, tau), mask)
    close(a3, a, 1e-8)
    close(t3, tau, 1e-8)


def test_mass_matrix_is_spd_and_matches_rnea_columns(model):
    q, v, _ = random_state(model, 4)
    M = ldr.mass_matrix(model, q)
    close(M, M.T, 1e-12)
    assert np.linalg.eigvalsh(M).min() > 0
    g = ldr.gravity_torques(model, q)
    cols = [ldr.inverse_dynamics(model, q, np.zeros(model.nv), e) - g for e in np.eye(model.nv)]
    close(M, np.array(cols).T)


def test_coriolis_reproduces_nonlinear_effects(model):
    for seed in range(3):
        q, v, _ = random_state(model, seed)
        C = ldr.coriolis_matrix(model, q, v)
        close(C @ v + ldr.gravity_torques(model, q), ldr.nonlinear_effects(model, q, v))
        close(ldr.nonlinear_effects(model, q, v), ldr.inverse_dynamics(model, q, v, 0 * v))


def test_mass_matrix_time_derivative_is_c_plus_ct(model):
    """dM/dt along q(t) = q (+) v t, by central differences on the manifold."""
    q, v, _ = random_state(model, 7)
    h = 1e-6
    Mp = ldr.mass_matrix(model, ldr.integrate(model, q, v, h))
    Mm = ldr.mass_matrix(model, ldr.integrate(model, q, v, -h))
    C = ldr.coriolis_matrix(model, q, v)
    close((Mp - Mm) / (2 * h), C + C.T, 1e-6)
    # the Christoffel property, x -> C(q, x) y symmetric in (x, y), needs v = dq/dt: it does not
    # hold for the quasi-velocities of ball and free joints (body angular velocity)
    if {"spherical", "free"} & set(model.joint_kinds):
        return
    w = np.random.default_rng(1).normal(size=model.nv)
    close(ldr.coriolis_matrix(model, q, v) @ w, ldr.coriolis_matrix(model, q, w) @ v)


def test_kinetic_energy_matches_mass_matrix(model):
    q, v, _ = random_state(model, 2)
    assert ldr.kinetic_energy(model, q, v) == pytest.approx(0.5 * v @ ldr.mass_matrix(model, q) @ v,
                                                           rel=1e-12)


def test_gravity_is_gradient_of_potential(model):
    """g(q) = dU/dq: directional derivative along integrate(q, e_k t)."""
    q, _, _ = random_state(model, 3)
    g = ldr.gravity_torques(model, q)
    h = 1e-6
    for k, e in enumerate(np.eye(model.nv)):
        d = (ldr.potential_energy(model, ldr.integrate(model, q, e, h))
             - ldr.potential_energy(model, ldr.integrate(model, q, e, -h))) / (2 * h)
        assert d == pytest.approx(g[k], abs=1e-6 * max(1, abs(g[k])))


def _rk4_step(model, q, v, dt):
    """Classical RK4 on the manifold: stages in the tangent space of q (test helper only)."""
    def f(dq):
        qq, vv = ldr.integrate(model, q, dq[0]), v + dq[1]
        return vv, ldr.forward_dynamics(model, qq, vv, np.zeros(model.nv))
    k1 = f((0 * v, 0 * v))
    k2 = f((k1[0] * dt / 2, k1[1] * dt / 2))
    k3 = f((k2[0] * dt / 2, k2[1] * dt / 2))
    k4 = f((k3[0] * dt, k3[1] * dt))
    dq = (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]) * dt / 6
    return ldr.integrate(model, q, dq), v + (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]) * dt / 6


@pytest.mark.parametrize("name", ["double_pendulum.urdf", "arm7.urdf"])
def test_energy_is_conserved_in_a_passive_run(name):
    model = bundled(name)
    q, v, _ = random_state(model, 5)
    energy = lambda q, v: ldr.kinetic_energy(model, q, v) + ldr.potential_energy(model, q)
    e0 = energy(q, v)
    for _ in range(200):
        q, v = _rk4_step(model, q, v, 1e-3)
    scale = max(1.0, ldr.kinetic_energy(model, q, v))
    assert abs(energy(q, v) - e0) < 1e-7 * scale


def test_general_joints_equal_their_builtin_twins():
    builtin, general = general_twin(3)
    q, v, a = random_state(builtin, 1)
    close(ldr.inverse_dynamics(general, q, v, a), ldr.inverse_dynamics(builtin, q, v, a), 1e-12)
    close(ldr.mass_matrix(general, q), ldr.mass_matrix(builtin, q), 1e-12)
    close(ldr.coriolis_matrix(general, q, v), ldr.coriolis_matrix(builtin, q, v), 1e-12)


def test_mimic_torque_maps_back_to_master():
    """A mimic model equals the unconstrained robot restricted by q_mim = k q_rev + c:
    tau = G^T tau_free(G q + c, G v, G a), M = G^T M_free G."""
    m, free = zoo(2, floating=False), zoo(2, floating=False, mimic=False)
    assert m.nv == free.nv - 1 and "mim" not in m.joint_names
    _, mult, off = m.mimic_joints["mim"]
    q, v, a = random_state(m, 0)
    iq, im = free.joint_names.index("rev"), free.joint_names.index("mim")
    G = np.zeros((free.nv, m.nv))
    for k, name in enumerate(m.joint_names):
        for d in range(m.joint_nv[k]):
            G[free.joint_v_index[free.joint_names.index(name)] + d, m.joint_v_index[k] + d] = 1
    G[free.joint_v_index[im], m.joint_v_index[m.joint_names.index("rev")]] = mult
    # all joints of the zoo without a free base have nq == nv except the ball joint
    qf = ldr.neutral_configuration(free)
    for k, name in enumerate(free.joint_names):
        if name == "mim":
            continue
        j = m.joint_names.index(name)
        qf[free.joint_q_index[k]:free.joint_q_index[k] + free.joint_nq[k]] = \
            q[m.joint_q_index[j]:m.joint_q_index[j] + m.joint_nq[j]]
    qf[free.joint_q_index[im]] = mult * q[m.joint_q_index[m.joint_names.index("rev")]] + off
    close(ldr.inverse_dynamics(m, q, v, a), G.T @ ldr.inverse_dynamics(free, qf, G @ v, G @ a))
    close(ldr.mass_matrix(m, q), G.T @ ldr.mass_matrix(free, qf) @ G)
    tau = ldr.inverse_dynamics(m, q, v, a)
    close(ldr.forward_dynamics(m, q, v, tau), a, 1e-8)
    assert iq != im


def test_external_wrench_enters_as_jacobian_transpose(model):
    q, v, a = random_state(model, 6)
    frame = model.body_names[-1]
    w = np.random.default_rng(0).normal(size=6)
    J = ldr.body_jacobian(model, q, frame)
    tau0 = ldr.inverse_dynamics(model, q, v, a)
    close(ldr.inverse_dynamics(model, q, v, a, f_ext={frame: w}), tau0 - J.T @ w)
    F = np.zeros((model.njoints, 6))
    F[-1] = w
    close(ldr.inverse_dynamics(model, q, v, a, f_ext=F), tau0 - J.T @ w)
    close(ldr.forward_dynamics(model, q, v, tau0 - J.T @ w, f_ext={frame: w}), a, 1e-8)


def test_body_jacobian_matches_pose_derivative(model):
    """J v is the body twist of the frame: T^-1 dT/dt by finite differences."""
    from lie_dynamics_ros.lie import se3
    q, v, _ = random_state(model, 8)
    frame = model.frame_names[-1]
    h = 1e-6
    Tp = ldr.frame_pose(model, ldr.integrate(model, q, v, h), frame)
    Tm = ldr.frame_pose(model, ldr.integrate(model, q, v, -h), frame)
    xi = se3.log(se3.inv(Tm) @ Tp) / (2 * h)          # (v, w), the order of body_jacobian
    close(ldr.body_jacobian(model, q, frame) @ v, xi, 1e-6)


def test_difference_takes_the_short_way_round_on_continuous_joints():
    """A continuous joint lives on S^1: readings wrapped by a driver differ by the short angle,
    while a limited revolute joint keeps plain subtraction."""
    cont = bundled("planar_2r.urdf")
    kinds = [cont.joint(n).limits[:2] for n in cont.joint_names]
    q0 = np.array([np.pi - 0.1, 0.2])
    q1 = np.array([-np.pi + 0.1, 0.2 + 2 * np.pi - 0.3])
    d = ldr.difference(cont, q0, q1)
    for k, (lo, hi) in enumerate(kinds):
        plain = q1[k] - q0[k]
        if np.isfinite(lo) or np.isfinite(hi):
            assert d[k] == pytest.approx(plain)
        else:
            assert d[k] == pytest.approx(np.mod(plain + np.pi, 2 * np.pi) - np.pi)
            assert abs(d[k]) <= np.pi
    b = ldr.ModelBuilder("wheel")
    b.add_link("base")
    b.add_link("wheel", mass=1.0, inertia=np.eye(3) * 0.01)
    b.add_joint("spin", ldr.Revolute((0, 0, 1)), "base", "wheel")
    wheel = b.build()
    assert ldr.difference(wheel, [3.0], [-3.0])[0] == pytest.approx(2 * np.pi - 6.0)
    q = ldr.integrate(wheel, np.array([3.0]), ldr.difference(wheel, [3.0], [-3.0]))
    assert np.cos(q[0]) == pytest.approx(np.cos(-3.0)) and np.sin(q[0]) == pytest.approx(np.sin(-3.0))
