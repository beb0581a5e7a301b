"""Park, Bobrow & Ploen (1995): the mass matrix as a metric, its derivatives, the Christoffel
symbols (eq. 52) and the 2R example (eqs. 60-64, with the sign of c_21 corrected: -a qd_1^2).

Checked: M = S^T G^T J G S (eqs. 47-51) equals the CRBA; the compiled dM/dq equals Park's closed
form (Proposition 1) and central differences on the manifold; Gamma_ijk is eq. (52) of dM;
sum_ij Gamma_ijk qd_i qd_j = C qd and dM/dt = C + C^T with ``ldr.coriolis_matrix``.
"""
import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms import geometry as G
from lie_dynamics_ros.lie import se3, so3
from models import bundled, random_state, zoo
from oracle import erd

ROBOTS = {
    "arm7": lambda: bundled("arm7.urdf"),
    "arm7-floating": lambda: bundled("arm7.urdf", floating_base=True),
    "double_pendulum": lambda: bundled("double_pendulum.urdf"),
    "solo12-floating": lambda: ldr.load_urdf(erd("solo_description/robots/solo12.urdf"),
                                             floating_base=True),
    "ur5": lambda: ldr.load_urdf(erd("ur_description/urdf/ur5_robot.urdf")),
}
HOLONOMIC = ("arm7", "double_pendulum", "ur5")     # q are coordinates: no free or ball joint


def rel(x, ref):
    return np.linalg.norm(x - ref) / max(1.0, np.linalg.norm(ref))


def fd_mass_matrix(model, q, h=1e-6):
    return np.stack([(ldr.mass_matrix(model, ldr.integrate(model, q, h * e))
                      - ldr.mass_matrix(model, ldr.integrate(model, q, -h * e))) / (2 * h)
                     for e in np.eye(model.nv)], axis=2)


@pytest.mark.parametrize("rid", sorted(ROBOTS))
def test_park_mass_matrix_and_its_derivative(rid):
    model = ROBOTS[rid]()
    for seed in range(2):
        q, v, _ = random_state(model, seed)
        assert rel(G.mass_matrix_park(model, q), ldr.mass_matrix(model, q)) < 1e-12
        dM = ldr.mass_matrix_configuration_derivatives(model, q)
        assert dM.shape == (model.nv,) * 3
        assert rel(dM, G.mass_matrix_configuration_derivatives_park(model, q)) < 1e-12
        assert rel(dM, fd_mass_matrix(model, q)) < 1e-7
        np.testing.assert_allclose(dM, dM.transpose(1, 0, 2), rtol=0, atol=1e-12 * np.abs(dM).max())
        C = ldr.coriolis_matrix(model, q, v)
        assert rel(dM @ v, C + C.T) < 1e-12             # dM/dt = C + C^T (any joint kinds)


@pytest.mark.parametrize("rid", HOLONOMIC)
def test_christoffel_symbols(rid):
    model = ROBOTS[rid]()
    q, v, _ = random_state(model, 3)
    dM = ldr.mass_matrix_configuration_derivatives(model, q)
    Gam = ldr.christoffel_symbols(model, q)
    n = model.nv
    i, j, k = np.random.default_rng(0).integers(0, n, size=(3, 20))
    for a, b, c in zip(i, j, k):    # eq. (52) entry by entry
        ref = 0.5 * (dM[c, b, a] + dM[c, a, b] - dM[a, b, c])
        assert abs(Gam[a, b, c] - ref) <= 1e-12 * np.abs(dM).max()
    np.testing.assert_allclose(Gam, Gam.transpose(1, 0, 2), rtol=0, atol=1e-12 * np.abs(Gam).max())
    C = ldr.coriolis_matrix(model, q, v)
    assert rel(np.einsum("ijk,i,j->k", Gam, v, v), C @ v) < 1e-12
    g = ldr.gravity_torques(model, q)
    assert rel(np.einsum("ijk,i,j->k", Gam, v, v), ldr.nonlinear_effects(model, q, v) - g) < 1e-12


def test_mass_matrix_configuration_derivatives_every_joint_kind():
    """Planar, universal, ball, prismatic and mimic joints: against central differences."""
    model = zoo(0, floating=True, mimic=True)
    q, v, _ = random_state(model, 4)
    dM = ldr.mass_matrix_configuration_derivatives(model, q)
    assert rel(dM, fd_mass_matrix(model, q)) < 1e-7
    C = ldr.coriolis_matrix(model, q, v)
    assert rel(dM @ v, C + C.T) < 1e-12


# --------------------------------------------------------------------------- the 2R example
def _two_link(seed=0):
    rng = np.random.default_rng(seed)
    b = ldr.ModelBuilder("park_2r")
    b.add_link("base")
    origins, axes = [], []
    for k in range(2):
        b.add_link("l%d" % k, mass=rng.uniform(0.5, 2), com=rng.normal(size=3) * 0.2,
                   inertia=np.diag(rng.uniform(0.01, 0.05, 3)))
        origins.append(se3.make(so3.exp(rng.normal(size=3) * 0.5), rng.normal(size=3) * 0.4))
        axes.append(rng.normal(size=3))
        axes[-1] /= np.linalg.norm(axes[-1])
        b.add_joint("j%d" % k, ldr.Revolute(axes[-1]), "base" if k == 0 else "l0", "l%d" % k,
                    origin=origins[-1])
    return b.build().with_gravity((0.0, 0.0, 0.0)), origins, axes


def test_park_two_link_example():
    """Park eqs. (60)-(64) in the spatial product-of-exponentials form (eqs. 30-44):
    f_i = e^{A_1 x_1} ... e^{A_i x_i} M_i, D_i = Ad_{M_i}^-T J_i Ad_{M_i}^-1, <x, y>_i = x^T D_i y.
    """
    model, (o1, o2), (s1, s2) = _two_link()
    M1, M2 = o1, o1 @ o2                                   # absolute zero-configuration poses
    A1 = se3.Ad(M1) @ np.r_[0, 0, 0, s1]                  # revolute screws (v, w) = (0, s)
    A2 = se3.Ad(M2) @ np.r_[0, 0, 0, s2]
    D = [np.linalg.inv(se3.Ad(Mi)).T @ Ii @ np.linalg.inv(se3.Ad(Mi))
         for Mi, Ii in zip((M1, M2), model.inertias)]
    ip = lambda x, y, k: x @ D[k] @ y                       # noqa: E731
    rng = np.random.default_rng(1)
    for _ in range(3):
        x, xd = rng.uniform(-np.pi, np.pi, 2), rng.normal(size=2)
        Ad22 = se3.Ad(se3.exp(-A2 * x[1]))                  # Ad_2^2(H) = e^{-A_2 x_2} H e^{A_2 x_2}
        M = np.array([[ip(A1, A1, 0) + ip(Ad22 @ A1, Ad22 @ A1, 1), ip(Ad22 @ A1, A2, 1)],
                      [ip(Ad22 @ A1, A2, 1), ip(A2, A2, 1)]])                     # eq. (60)
        assert rel(M, ldr.mass_matrix(model, x)) < 1e-12
        br = se3.ad(A1) @ A2                                # [A_1, A_2]
        a, b = ip(Ad22 @ br, Ad22 @ A1, 1), ip(Ad22 @ br, A2, 1)
        C = np.array([[a * xd[1], a * xd[0] + b * xd[1]],
                      [-a * xd[0], 0.0]])                   # c_21 = -a xd_1^2 (the fixed sign)
        Gam = ldr.christoffel_symbols(model, x)
        quad = np.einsum("ijk,i,j->k", Gam, xd, xd)
        assert rel(quad, C @ xd) < 1e-12
        assert rel(ldr.nonlinear_effects(model, x, xd), C @ xd) < 1e-12
        np.testing.assert_allclose([Gam[0, 0, 1], Gam[0, 1, 0], Gam[1, 1, 0]], [-a, a, b],
                                   rtol=1e-10, atol=1e-14)
        # the sign printed in the paper (c_21 = +a xd_1^2) gives the opposite second torque
        assert abs(a * xd[0] ** 2) > 1e-6 and np.isclose(quad[1], -a * xd[0] ** 2, rtol=1e-10)
