"""Inertias of homogeneous solids against Pinocchio's Inertia.FromSphere/FromCylinder/FromBox
(test oracle only), against a midpoint quadrature of the solid, and through a built model's
``ldr.inertial_parameters``."""
import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.lie import se3

pin = pytest.importorskip("pinocchio")

CASES = [(2.5, 0.3, 0.8, 0.2), (1e-3, 1e-2, 2.0, 0.5), (40.0, 0.05, 0.05, 1.5),
         (0.0, 1.0, 1.0, 1.0)]


@pytest.mark.parametrize("m, a, b, c", CASES)
def test_the_solids_equal_pinocchio(m, a, b, c):
    for ours, ref in [(ldr.sphere_inertia(m, a), pin.Inertia.FromSphere(m, a)),
                      (ldr.cylinder_inertia(m, a, b), pin.Inertia.FromCylinder(m, a, b)),
                      (ldr.box_inertia(m, a, b, c), pin.Inertia.FromBox(m, a, b, c))]:
        assert np.abs(ours - ref.matrix()).max() <= 1e-12 * max(1.0, np.abs(ref.matrix()).max())
        assert np.allclose(se3.inertia_to_parameters(ours), ref.toDynamicParameters(),
                           rtol=0, atol=1e-12)


def _quadrature(inside, half, n=60):
    """Second moments (per unit mass) of the points of a midpoint grid over the box |x_i| <=
    half_i that lie inside the solid."""
    axes = [(np.arange(n) + 0.5) / n * 2 * h - h for h in half]
    P = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 3)
    P = P[inside(P)]
    r2 = (P * P).sum(1)
    return (np.eye(3) * r2.mean() - P.T @ P / len(P))


def test_the_solids_are_their_second_moments():
    """An independent check of the formulas: a midpoint grid of 60^3 cells (error ~1e-3
    relative for the curved solids, round-off for the box)."""
    m, r, h, (x, y, z) = 3.0, 0.4, 1.1, (0.3, 0.7, 1.3)
    sph = _quadrature(lambda P: (P * P).sum(1) <= r * r, (r, r, r))
    cyl = _quadrature(lambda P: (P[:, :2] ** 2).sum(1) <= r * r, (r, r, h / 2))
    box = _quadrature(lambda P: np.ones(len(P), bool), (x / 2, y / 2, z / 2))
    for I, ref, tol in [(ldr.sphere_inertia(m, r), m * sph, 3e-3),
                        (ldr.cylinder_inertia(m, r, h), m * cyl, 3e-3),
                        (ldr.box_inertia(m, x, y, z), m * box, 1e-3)]:
        assert np.abs(I[3:, 3:] - ref).max() <= tol * np.abs(ref).max()
        assert np.array_equal(I[:3, :3], m * np.eye(3)) and not I[:3, 3:].any()


def test_a_builder_link_made_from_them_gives_the_same_parameters():
    shapes = [ldr.sphere_inertia(1.2, 0.1), ldr.cylinder_inertia(0.7, 0.05, 0.4),
              ldr.box_inertia(2.0, 0.1, 0.2, 0.3)]
    b = ldr.ModelBuilder("shapes")
    b.add_link("base")
    parent = "base"
    for k, I in enumerate(shapes):
        b.add_link(f"l{k}", mass=I[0, 0], inertia=I[3:, 3:])
        b.add_joint(f"j{k}", ldr.Revolute((0, 0, 1)), parent, f"l{k}")
        parent = f"l{k}"
    theta = ldr.inertial_parameters(b.build())
    assert np.allclose(theta, np.concatenate([se3.inertia_to_parameters(I) for I in shapes]),
                       rtol=0, atol=1e-15)


@pytest.mark.parametrize("call, name", [
    (lambda: ldr.sphere_inertia(-1.0, 0.1), "mass"),
    (lambda: ldr.sphere_inertia(1.0, np.nan), "radius"),
    (lambda: ldr.cylinder_inertia(1.0, 0.1, np.inf), "length"),
    (lambda: ldr.box_inertia(1.0, 0.1, -0.2, 0.3), "y"),
    (lambda: ldr.box_inertia(1.0, 0.1, "wide", 0.3), "y"),
])
def test_bad_dimensions_raise_input_errors_naming_them(call, name):
    with pytest.raises(ldr.InputError) as e:
        call()
    assert str(e.value).startswith(name)
