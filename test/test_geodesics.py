"""Geodesics of the kinetic-energy metric (Park, Bobrow & Ploen 1995, §6): minimum-energy motions.

Checked on the 2R arm and the 7-DOF arm: end points, the equation M qdd + C qd = 0 (the
solver's residual and an independent forward simulation from the found initial velocity),
constant kinetic energy, an action no larger than the straight line's and stationary and minimal
under perturbations; on a point mass on a sphere: great circles, and the conjugate point past
half a turn; bad input and a solver that runs out of nodes raise.
"""
import os
import sys

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from models import bundled
from test_curvature import point_mass_on_sphere

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from examples import geodesics as example  # noqa: E402

CASES = {
    "planar_2r": ("planar_2r.urdf", [0.0, 0.3], [1.5, 2.0], 1.0),
    "arm7": ("arm7.urdf", [0.0, -0.3, 0.2, -2.0, 0.1, 1.6, 0.4],
             [0.8, 0.2, -0.4, -1.2, 0.9, 2.2, -0.6], 1.5),
}


def line(model, q0, q1, T, t):
    s = (t / T)[:, None]
    return q0 + s * (q1 - q0), np.repeat(((q1 - q0) / T)[None], len(t), axis=0)


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    urdf, q0, q1, T = CASES[request.param]
    model = bundled(urdf)
    q0, q1 = np.array(q0), np.array(q1)
    return model, q0, q1, T, ldr.geodesic(model, q0, q1, T)


def test_end_points_equation_and_energy(case):
    model, q0, q1, T, g = case
    assert g.t.shape == (101,) and g.q.shape == g.v.shape == g.a.shape == (101, model.nv)
    assert g.t[0] == 0.0 and g.t[-1] == pytest.approx(T)
    assert g.endpoint_error <= 1e-9
    np.testing.assert_allclose(g.q[[0, -1]], [q0, q1], rtol=0, atol=1e-9)
    assert g.collocation_residual <= 1e-6
    m0 = model.with_gravity((0, 0, 0))
    # a is the dynamics at (q, v); the torque left over is small against the inertial torques
    np.testing.assert_allclose(g.a, ldr.forward_dynamics(m0, g.q, g.v, np.zeros_like(g.v)))
    inertial = np.abs(np.einsum("nij,nj->ni", ldr.mass_matrix(model, g.q), g.a)).max()
    assert g.residual <= 1e-4 * inertial
    assert g.energy_drift <= 1e-6
    ke = [ldr.kinetic_energy(model, q, v) for q, v in zip(g.q, g.v)]
    np.testing.assert_allclose(g.energy, ke, rtol=1e-12)
    assert g.action == pytest.approx(2 * g.energy.mean() * T, rel=1e-6)


def test_a_free_motion_from_the_initial_velocity_reaches_the_goal(case):
    """Independent of the collocation: RKMK4 from (q0, v(0)) with no torque and no gravity."""
    model, q0, q1, T, g = case
    sim = ldr.simulate(model.with_gravity((0, 0, 0)), q0, g.v[0], T, T / 2000, method="rkmk4")
    assert np.abs(sim.q[-1] - q1).max() <= 1e-4 * np.abs(q1 - q0).max()
    assert sim.t[-1] == pytest.approx(T)


def test_action_below_the_line_and_minimal_under_perturbations(case):
    model, q0, q1, T, g = case
    ql, vl = line(model, q0, q1, T, g.t)
    A_line = ldr.path_action(model, g.t, ql, vl)
    assert g.action < A_line
    assert g.action == pytest.approx(ldr.path_action(model, g.t, g.q, g.v), rel=1e-12)
    rng = np.random.default_rng(0)
    s = np.sin(np.pi * g.t / T)[:, None]
    ds = (np.pi / T) * np.cos(np.pi * g.t / T)[:, None]
    for _ in range(3):
        w = rng.normal(size=model.nv)
        w *= 0.05 / np.abs(w).max()
        A = {e: ldr.path_action(model, g.t, g.q + e * s * w, g.v + e * ds * w)
             for e in (-1.0, 1.0, -0.1, 0.1)}
        assert min(A.values()) > g.action
        # stationary: the first variation vanishes, the change is second order in e
        d1, d01 = A[1.0] - g.action, A[0.1] - g.action
        assert abs(A[0.1] - A[-0.1]) <= 1e-3 * abs(A[1.0] - A[-1.0]) + 1e-6 * g.action
        assert d01 == pytest.approx(d1 / 100, rel=0.1)


def test_great_circles_and_the_conjugate_point_of_the_sphere():
    model = point_mass_on_sphere()
    eq = np.pi / 2
    g = ldr.geodesic(model, [0.0, eq], [0.8 * np.pi, eq], 1.0)      # along the equator
    np.testing.assert_allclose(g.q[:, 1], eq, atol=1e-9)
    np.testing.assert_allclose(g.q[:, 0], 0.8 * np.pi * g.t, atol=1e-9)
    # off the equator: the bob's path is a great circle (its positions lie in a plane
    # through the centre)
    g = ldr.geodesic(model, [0.0, 1.2], [2.6, 1.6], 1.0)
    p = np.column_stack([np.sin(g.q[:, 0]) * np.sin(g.q[:, 1]),
                         -np.cos(g.q[:, 0]) * np.sin(g.q[:, 1]), -np.cos(g.q[:, 1])])
    normal = np.cross(p[0], p[-1])
    assert np.abs(p @ normal).max() <= 1e-6 * np.linalg.norm(normal)
    # beyond the antipode (half a turn) the great circle is no longer shortest
    for q1 in ([1.2 * np.pi, eq], [1.2 * np.pi, 1.5]):
        with pytest.raises(ldr.GeodesicError, match="conjugate point at t = 0.8"):
            ldr.geodesic(model, [0.0, eq], q1, 1.0)


def test_continuation_reaches_a_goal_the_line_guess_misses():
    """2.5 rad on every joint of the arm in 1 s: from the straight line the Newton iteration
    leaves the finite range; moving the goal part of the way first converges."""
    arm = bundled("arm7.urdf")
    q0 = ldr.neutral_configuration(arm)
    q1 = q0 + 2.5
    with pytest.raises(ldr.GeodesicError, match="diverged|no geodesic"):
        ldr.geodesic(arm, q0, q1, 1.0, continuation=0)
    g = ldr.geodesic(arm, q0, q1, 1.0)
    assert g.endpoint_error <= 1e-9 and g.energy_drift <= 1e-6
    ql, vl = line(arm, q0, q1, 1.0, g.t)
    assert g.action < ldr.path_action(arm, g.t, ql, vl)
    # seeded with its own answer, the solve returns it
    again = ldr.geodesic(arm, q0, q1, 1.0, guess=g, continuation=0)
    np.testing.assert_allclose(again.q, g.q, rtol=0, atol=1e-6)
    with pytest.raises(ldr.InputError, match="guess"):
        ldr.geodesic(arm, q0, q1, 1.0, guess=(g.t, g.q[:, :3], g.v))
    with pytest.raises(ldr.InputError, match="guess must span"):
        ldr.geodesic(arm, q0, q1, 2.0, guess=g)


def test_bad_input_and_no_convergence():
    arm = bundled("arm7.urdf")
    q0 = ldr.neutral_configuration(arm)
    for T in (0.0, -1.0, np.nan, np.inf, [1.0, 2.0]):
        with pytest.raises(ldr.InputError, match="duration"):
            ldr.geodesic(arm, q0, q0 + 0.1, T)
    with pytest.raises(ldr.InputError, match="q1 has a NaN"):
        ldr.geodesic(arm, q0, np.r_[q0[:-1], np.nan], 1.0)
    with pytest.raises(ldr.InputError, match="q0"):
        ldr.geodesic(arm, q0[:-1], q0, 1.0)
    floating = bundled("arm7.urdf", floating_base=True)
    qf = ldr.neutral_configuration(floating)
    with pytest.raises(ldr.InputError, match="free joint"):
        ldr.geodesic(floating, qf, qf, 1.0)
    with pytest.raises(ldr.GeodesicError, match="no geodesic .* within tol"):
        ldr.geodesic(arm, q0, q0 + 2.5, 1.0, max_nodes=30)
    assert issubclass(ldr.GeodesicError, ldr.InputError)


def test_the_example_writes_its_figure(tmp_path):
    """examples/geodesics.py: with gravity compensation the geodesic needs (almost) no torque,
    the line does; the geodesic's energy is flat, the line's is not."""
    numbers, path = example.main(str(tmp_path))
    assert os.path.getsize(path) > 10_000
    assert numbers["action geodesic"] < numbers["action line"]
    assert numbers["energy drift geodesic"] < 1e-6 < 0.01 < numbers["energy drift line"]
    assert numbers["max |tau - g| geodesic (N m)"] < 1e-2 * numbers["max |tau - g| line (N m)"]
