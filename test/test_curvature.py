"""The curvature tensor of Park, Bobrow & Ploen (1995) eq. (66) on the kinetic-energy metric.

Checked: the analytic second derivatives of M against central differences of the compiled dM/dq;
R against eq. (66) evaluated with central differences of ``ldr.christoffel_symbols``; the
Riemann symmetries and the first Bianchi identity; the 2R arm's scalar curvature in closed form;
a point mass on a sphere (K = 1 / (m L^2)); the sectional curvature's dependence on the plane
only; bad input.
"""
import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.lie import se3, so3
from models import URDF_DIR, bundled, _inertial

H = 1e-5


def coordinate_zoo(seed=0):
    """Revolute, prismatic, planar, universal and a mimic joint: every kind whose q is a
    coordinate, with random placements and inertias."""
    rng = np.random.default_rng(seed)
    b = ldr.ModelBuilder("coordinate_zoo")
    b.add_link("base")
    specs = [("rev", ldr.Revolute(rng.normal(size=3)), "base", None),
             ("pri", ldr.Prismatic(rng.normal(size=3)), "l_rev", None),
             ("uni", ldr.Universal(rng.normal(size=3), rng.normal(size=3)), "l_pri", None),
             ("pla", ldr.Planar(rng.normal(size=3)), "base", None),
             ("rev2", ldr.Revolute((0, 0, 1)), "l_pla", None),
             ("mim", ldr.Revolute(rng.normal(size=3)), "l_rev2", ("rev", -0.7, 0.2))]
    for name, joint, parent, mimic in specs:
        b.add_link("l_" + name, **_inertial(rng))
        b.add_joint(name, joint, parent, "l_" + name, mimic=mimic,
                    origin=se3.make(so3.exp(rng.normal(size=3)), rng.normal(size=3) * 0.3))
    return b.build()


ROBOTS = {"planar_2r": lambda: bundled("planar_2r.urdf"), "arm7": lambda: bundled("arm7.urdf"),
          "arm7_armature": lambda: bundled("arm7.urdf").with_joint_dynamics(armature=0.2),
          "coordinate_zoo": coordinate_zoo}


def point_mass_on_sphere(m=2.0, L=0.5):
    """A bob of mass m (no rotational inertia) at distance L from two intersecting axes:
    q = (azimuth, polar angle), M = m L^2 diag(sin^2 theta, 1), a round sphere of radius
    L sqrt(m), Gauss curvature 1 / (m L^2)."""
    b = ldr.ModelBuilder("sphere")
    b.add_link("base")
    b.add_link("gimbal")
    b.add_link("bob", mass=m, com=(0, 0, -L), inertia=np.zeros((3, 3)))
    b.add_joint("phi", ldr.Revolute((0, 0, 1)), "base", "gimbal")
    b.add_joint("theta", ldr.Revolute((1, 0, 0)), "gimbal", "bob")
    return b.build()


def rel(x, ref):
    return np.linalg.norm(x - ref) / max(1e-300, np.linalg.norm(ref))


def states(model, k=2):
    return [ldr.random_configuration(model, rng=s) for s in range(k)]


@pytest.mark.parametrize("rid", sorted(ROBOTS))
def test_second_derivatives_of_M_against_central_differences(rid):
    model = ROBOTS[rid]()
    for q in states(model):
        dd = ldr.mass_matrix_second_derivatives(model, q)
        fd = np.stack([(ldr.mass_matrix_configuration_derivatives(model, q + H * e)
                        - ldr.mass_matrix_configuration_derivatives(model, q - H * e)) / (2 * H)
                       for e in np.eye(model.nv)], axis=3)
        assert rel(dd, fd) < 1e-8
        np.testing.assert_allclose(dd, dd.transpose(1, 0, 2, 3), atol=1e-13 * np.abs(dd).max())
        np.testing.assert_allclose(dd, dd.transpose(0, 1, 3, 2), atol=1e-13 * np.abs(dd).max())


def curvature_from_christoffel_differences(model, q):
    """Eq. (66) term by term, with dGamma/dq by central differences of christoffel_symbols."""
    G = ldr.christoffel_symbols(model, q)
    dG = np.stack([(ldr.christoffel_symbols(model, q + H * e)
                    - ldr.christoffel_symbols(model, q - H * e)) / (2 * H)
                   for e in np.eye(model.nv)], axis=3)          # dG[i, j, k, x] = dGamma_ijk/dq_x
    G_up = np.einsum("kh,ijh->ijk", np.linalg.inv(ldr.mass_matrix(model, q)), G)
    n = model.nv
    R = np.empty((n,) * 4)
    for i in range(n):
        for j in range(n):
            for k in range(n):
                for l in range(n):
                    R[i, j, k, l] = (dG[j, l, i, k] - dG[j, k, i, l]
                                     + sum(G[i, l, r] * G_up[j, k, r] - G[i, k, r] * G_up[j, l, r]
                                           for r in range(n)))
    return R


@pytest.mark.parametrize("rid", sorted(ROBOTS))
def test_curvature_against_differences_of_the_christoffel_symbols(rid):
    model = ROBOTS[rid]()
    for q in states(model):
        R = ldr.curvature_tensor(model, q)
        assert R.shape == (model.nv,) * 4
        assert np.abs(R).max() > 1e-3                           # not flat: the check can fail
        assert rel(R, curvature_from_christoffel_differences(model, q)) < 1e-7


@pytest.mark.parametrize("rid", sorted(ROBOTS))
def test_riemann_symmetries_and_first_bianchi_identity(rid):
    model = ROBOTS[rid]()
    for q in states(model, 3):
        R = ldr.curvature_tensor(model, q)
        tol = 1e-12 * np.abs(R).max()
        np.testing.assert_allclose(R, -np.einsum("jikl->ijkl", R), rtol=0, atol=tol)
        np.testing.assert_allclose(R, -np.einsum("ijlk->ijkl", R), rtol=0, atol=tol)
        np.testing.assert_allclose(R, np.einsum("klij->ijkl", R), rtol=0, atol=tol)
        bianchi = R + np.einsum("iklj->ijkl", R) + np.einsum("iljk->ijkl", R)
        np.testing.assert_allclose(bianchi, 0.0, rtol=0, atol=tol)


def test_planar_2r_scalar_curvature_in_closed_form():
    """M = [[al + 2 be c, de + be c], [de + be c, de]] with c = cos q2 (urdf/planar_2r.urdf):
    al = I1 + I2 + m1 lc1^2 + m2 (l1^2 + lc2^2), be = m2 l1 lc2, de = I2 + m2 lc2^2.
    Only m11, m12 depend on q2: d2 m11 = -2 be s, d2 m12 = -be s. Eq. (52):
    Gamma_121 = Gamma_211 = -be s, Gamma_112 = be s, Gamma_221 = -be s, the others 0.
    Eq. (66) for (i, j, k, l) = (1, 2, 1, 2): dGamma_221/dq1 = 0, -dGamma_211/dq2 = be c, and
    sum_r (Gamma_12r Gamma_21^r - Gamma_11r Gamma_22^r) = be^2 s^2 (m^11 + m^21)
    = -be^3 s^2 c / D with D = det M = al de - de^2 - be^2 c^2. So
    R_1212 = be c (D - be^2 s^2) / D = be c (al de - de^2 - be^2) / D and the scalar curvature
    2 R_1212 / D = 2 be c (al de - de^2 - be^2) / D^2: positive for |q2| < pi/2 (the arm
    folded less than a right angle), zero at q2 = +-pi/2, negative beyond."""
    model = bundled("planar_2r.urdf")
    I1, I2, m1, m2, l1, lc1, lc2 = 1 / 6, 1 / 48, 2.0, 1.0, 1.0, 0.5, 0.25
    al, be, de = I1 + I2 + m1 * lc1 ** 2 + m2 * (l1 ** 2 + lc2 ** 2), m2 * l1 * lc2, I2 + m2 * lc2 ** 2
    for q1, q2 in [(0.0, 0.0), (0.7, 0.4), (-2.0, 1.3), (1.0, np.pi / 2), (0.3, 2.8)]:
        c = np.cos(q2)
        D = al * de - de ** 2 - be ** 2 * c ** 2
        expected = 2 * be * c * (al * de - de ** 2 - be ** 2) / D ** 2
        got = ldr.scalar_curvature(model, [q1, q2])
        assert got == pytest.approx(expected, rel=1e-10, abs=1e-12)
        R = ldr.curvature_tensor(model, [q1, q2])
        assert R[0, 1, 0, 1] == pytest.approx(be * c * (al * de - de ** 2 - be ** 2) / D,
                                               rel=1e-10, abs=1e-12)
        # in 2-D every plane is the tangent plane: K = scalar / 2 whatever u, w
        u, w = np.array([1.0, 0.3]), np.array([-0.2, 0.9])
        assert ldr.sectional_curvature(model, [q1, q2], u, w) == pytest.approx(
            expected / 2, rel=1e-10, abs=1e-12)


def test_point_mass_on_a_sphere_has_curvature_one_over_m_L_squared():
    """The sign convention: a round sphere is positively curved."""
    m, L = 2.0, 0.5
    model = point_mass_on_sphere(m, L)
    rng = np.random.default_rng(0)
    for _ in range(3):
        q = np.array([rng.uniform(-3, 3), rng.uniform(0.3, 2.8)])
        assert ldr.scalar_curvature(model, q) == pytest.approx(2 / (m * L ** 2), rel=1e-10)
        u, w = rng.normal(size=2), rng.normal(size=2)
        assert ldr.sectional_curvature(model, q, u, w) == pytest.approx(1 / (m * L ** 2),
                                                                        rel=1e-10)


def test_sectional_curvature_depends_on_the_plane_only():
    model = bundled("arm7.urdf")
    q = ldr.random_configuration(model, rng=5)
    rng = np.random.default_rng(1)
    u, w = rng.normal(size=7), rng.normal(size=7)
    K = ldr.sectional_curvature(model, q, u, w)
    R, M = ldr.curvature_tensor(model, q), ldr.mass_matrix(model, q)
    area = (u @ M @ u) * (w @ M @ w) - (u @ M @ w) ** 2
    assert K == pytest.approx(np.einsum("ijkl,i,j,k,l->", R, u, w, u, w) / area, rel=1e-12)
    for u2, w2 in [(3 * u, -0.5 * w), (w, u), (u + 2 * w, w), (u, w - 0.7 * u)]:
        assert ldr.sectional_curvature(model, q, u2, w2) == pytest.approx(K, rel=1e-9)
    # coordinate planes differ: the arm's curvature is not constant
    Ks = [ldr.sectional_curvature(model, q, e, f) for e, f in
          [(np.eye(7)[0], np.eye(7)[1]), (np.eye(7)[1], np.eye(7)[3]), (np.eye(7)[4], np.eye(7)[5])]]
    assert np.ptp(Ks) > 1e-3 * np.abs(Ks).max()


def test_bad_input_is_refused_with_a_named_culprit():
    arm = bundled("arm7.urdf")
    q = ldr.neutral_configuration(arm)
    with pytest.raises(ldr.InputError, match="q"):
        ldr.curvature_tensor(arm, q[:-1])
    with pytest.raises(ldr.InputError, match="NaN"):
        ldr.curvature_tensor(arm, np.r_[q[:-1], np.nan])
    with pytest.raises(ldr.InputError, match="span a plane"):
        ldr.sectional_curvature(arm, q, np.ones(7), 2 * np.ones(7))
    with pytest.raises(ldr.InputError, match="span a plane"):
        ldr.sectional_curvature(arm, q, np.zeros(7), np.ones(7))
    with pytest.raises(ldr.InputError, match="w"):
        ldr.sectional_curvature(arm, q, np.ones(7), np.ones(6))
    floating = bundled("arm7.urdf", floating_base=True)
    for fn in (ldr.curvature_tensor, ldr.mass_matrix_second_derivatives, ldr.scalar_curvature):
        with pytest.raises(ldr.InputError, match="free joint"):
            fn(floating, ldr.neutral_configuration(floating))
    loops = ldr.load_urdf(f"{URDF_DIR}/loops/four_bar.urdf")
    with pytest.raises(ldr.InputError, match="loop closure"):
        ldr.curvature_tensor(loops, ldr.neutral_configuration(loops))
    with pytest.raises(ldr.InputError, match="loop closure"):
        q = ldr.neutral_configuration(loops)
        ldr.geodesic(loops, q, q + 0.1, 1.0)
