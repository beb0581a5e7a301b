"""Numerics at the edges of a model: each case gives a correct result or a clear error, never a
silent NaN. "Correct" is checked by identities that hold at any scale: RNEA(q, v, ABA(q, v, tau))
= tau (Featherstone 2008, §7.3), C v + g = RNEA(q, v, 0), and 1/2 v^T M v = the kinetic energy,
with tolerances relative to the size of the terms.
"""
import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.lie import se3
from models import bundled


def _box(mass, size=0.1):
    return dict(mass=mass, com=(0.0, 0.0, 0.5 * size), inertia=np.eye(3) * mass * size ** 2 / 6)


def _chain(masses, axes=None, length=0.3, inertias=None):
    """base -j1-> l1 -j2-> l2 ... : revolute joints about y (or ``axes``), links ``length`` apart."""
    b = ldr.ModelBuilder("chain")
    b.add_link("base")
    for k, m in enumerate(masses, start=1):
        kw = _box(m, length) if inertias is None else dict(mass=m, com=(0, 0, length / 2),
                                                          inertia=np.eye(3) * inertias[k - 1])
        b.add_link(f"l{k}", **kw)
        b.add_joint(f"j{k}", ldr.Revolute((0, 1, 0) if axes is None else axes[k - 1]),
                    "base" if k == 1 else f"l{k - 1}", f"l{k}",
                    origin=se3.make(np.eye(3), (0, 0, length if k > 1 else 0.0)))
    return b.build()


def _assert_inverse_of_forward(model, q, v, tau, rtol=1e-9):
    """ABA then RNEA gives tau back, relative to the largest term of the equation."""
    a = ldr.forward_dynamics(model, q, v, tau)
    assert np.all(np.isfinite(a))
    back = ldr.inverse_dynamics(model, q, v, a)
    M = ldr.mass_matrix(model, q)
    scale = max(np.abs(tau).max(), np.abs(M @ a).max(),
                np.abs(ldr.nonlinear_effects(model, q, v)).max())
    np.testing.assert_allclose(back, tau, rtol=0, atol=rtol * scale)
    return a


# ---------------------------------------------------------------------------- massless links
def test_massless_leaf_link_gives_exact_torques_and_a_clear_forward_dynamics_error():
    heavy, leaf = _chain([1.0, 2.0]), _chain([1.0, 2.0, 0.0])
    q, v = np.array([0.3, -0.7, 1.1]), np.array([0.5, -1.0, 2.0])
    a = np.array([0.1, 0.2, 0.3])
    tau = ldr.inverse_dynamics(leaf, q, v, a)
    # a body without mass needs no torque and changes nothing upstream
    assert tau[2] == 0.0
    np.testing.assert_allclose(tau[:2], ldr.inverse_dynamics(heavy, q[:2], v[:2], a[:2]),
                               rtol=1e-13, atol=1e-13)
    M = ldr.mass_matrix(leaf, q)
    assert np.all(M[2] == 0.0) and np.all(M[:, 2] == 0.0)
    # the leaf's acceleration is undefined: a clear error naming the joint, not NaN
    with pytest.raises(ldr.InputError, match="singular articulated inertia: joint 'j3'"):
        ldr.forward_dynamics(leaf, q, v, tau)
    # prescribing it (hybrid dynamics) makes the problem well posed again
    a_all, tau_all = ldr.hybrid_dynamics(leaf, q, v, a, tau, np.array([False, False, True]))
    np.testing.assert_allclose(a_all, a, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(tau_all, tau, rtol=1e-10, atol=1e-10)


def test_massless_link_between_coaxial_joints_is_a_clear_error():
    """j1 and j2 turn about the same line and l1 has no mass: M has rank 1 at every q."""
    b = ldr.ModelBuilder("coaxial")
    b.add_link("base")
    b.add_link("l1")
    b.add_link("l2", **_box(1.0))
    b.add_joint("j1", ldr.Revolute((0, 0, 1)), "base", "l1")
    b.add_joint("j2", ldr.Revolute((0, 0, 1)), "l1", "l2")
    m = b.build()
    q, v = np.array([0.2, 0.4]), np.zeros(2)
    assert np.linalg.matrix_rank(ldr.mass_matrix(m, q)) == 1
    with pytest.raises(ldr.InputError, match="singular articulated inertia: joint 'j1'"):
        ldr.forward_dynamics(m, q, v, np.ones(2))


def test_massless_tool_frame_behind_a_fixed_joint_is_harmless():
    b = ldr.ModelBuilder("tool")
    b.add_link("base")
    b.add_link("l1", **_box(1.0))
    b.add_link("tcp")
    b.add_joint("j1", ldr.Revolute((0, 1, 0)), "base", "l1")
    b.add_joint("tcp_joint", ldr.Fixed(), "l1", "tcp", origin=se3.make(np.eye(3), (0, 0, 0.2)))
    m = b.build()
    _assert_inverse_of_forward(m, np.array([0.4]), np.array([1.0]), np.array([0.3]))


# ---------------------------------------------------------------------------- tiny and huge
@pytest.mark.parametrize("leaf_mass", [1e-3, 1e-9, 1e-30, 1e-100, 1e-250])
def test_tiny_inertias_give_the_correct_accelerations(leaf_mass):
    """Mass ratios of 1e250 in one chain: ABA stays backward stable."""
    m = _chain([2.0, 1.0, leaf_mass])
    q, v, tau = np.array([0.3, -0.2, 0.5]), np.array([0.1, 0.2, -0.3]), np.array([1.0, 0.5, 0.0])
    tau[2] = 1e-3 * leaf_mass                          # a torque the leaf can take
    a = _assert_inverse_of_forward(m, q, v, tau)
    # the leaf's own equation, to its own scale: I a_leaf ~ tau_leaf, not drowned by the arm
    assert abs(a[2]) < 1e6


@pytest.mark.parametrize("leaf_mass, leaf_inertia", [(1e-300, 1e-300), (5e-324, 0.0)])
def test_vanishing_inertia_is_a_result_or_a_clear_error(leaf_mass, leaf_inertia):
    """Below ~1e-300 kg m^2 ABA calls a joint's articulated inertia zero (an absolute
    threshold): either a finite answer that satisfies RNEA, or the singular-inertia error."""
    m = _chain([1.0, leaf_mass], inertias=[1e-2, leaf_inertia])
    q, v, tau = np.array([0.3, 0.2]), np.array([0.1, -0.2]), np.array([0.5, 0.0])
    try:
        a = ldr.forward_dynamics(m, q, v, tau)
    except ldr.InputError as e:
        assert "singular" in str(e)
    else:
        assert np.all(np.isfinite(a))
        back = ldr.inverse_dynamics(m, q, v, a)
        np.testing.assert_allclose(back, tau, rtol=0, atol=1e-12)


def test_huge_inertias_at_the_bounds_give_the_correct_accelerations():
    """1e6 kg and 1e6 kg m^2 (the bounds of load_urdf) next to a 1 kg link."""
    m = _chain([1e6, 1.0, 1e6], inertias=[1e6, 1e-2, 1e6])
    q, v = np.array([0.3, -0.2, 0.5]), np.array([0.1, 0.2, -0.3])
    _assert_inverse_of_forward(m, q, v, np.array([1e7, 1.0, -1e6]))


def test_values_beyond_the_bounds_are_refused_not_computed():
    b = ldr.ModelBuilder("x")
    with pytest.raises(ldr.URDFError, match="1e\\+06"):
        b.add_link("too_heavy", mass=1e7)


# ---------------------------------------------------------------------------- quaternions
def _quat_slices(model):
    out = []
    for name, kind, qi in zip(model.joint_names, model.joint_kinds, model.joint_q_index):
        if kind == "free":
            out.append(slice(qi + 3, qi + 7))
        elif kind == "spherical":
            out.append(slice(qi, qi + 4))
    return out


def _all_dynamics(model, q, v):
    z = np.zeros(model.nv)
    return np.concatenate([ldr.inverse_dynamics(model, q, v, z), ldr.mass_matrix(model, q).ravel(),
                           ldr.forward_dynamics(model, q, v, z)])


def test_nearly_unit_quaternions_are_normalized(floating):
    q, v = ldr.random_configuration(floating, 3), np.linspace(-1, 1, floating.nv)
    quats = _quat_slices(floating)
    assert len(quats) == 2                     # the free base and the ball joint
    ref = _all_dynamics(floating, q, v)
    for s in quats:
        q2 = q.copy()
        q2[s] *= 1 + 5e-7                      # within the documented tolerance 1e-6
        np.testing.assert_allclose(_all_dynamics(floating, q2, v), ref, rtol=1e-9, atol=1e-9)


def test_opposite_quaternions_give_the_same_dynamics(floating):
    """q and -q are the same rotation (the double cover of SO(3))."""
    q, v = ldr.random_configuration(floating, 4), np.linspace(-1, 1, floating.nv)
    ref = _all_dynamics(floating, q, v)
    for s in _quat_slices(floating):
        q2 = q.copy()
        q2[s] *= -1
        np.testing.assert_allclose(_all_dynamics(floating, q2, v), ref, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("bad", [1.01, 0.99, 0.0, 1e300])
def test_non_unit_quaternions_are_refused(floating, bad):
    q, z = ldr.random_configuration(floating, 5), np.zeros(floating.nv)
    for s in _quat_slices(floating):
        q2 = q.copy()
        q2[s] = q2[s] * bad if bad else 0.0
        with pytest.raises(ldr.InputError, match="quaternion"):
            ldr.inverse_dynamics(floating, q2, z, z)
        with pytest.raises(ldr.InputError, match="quaternion"):
            ldr.forward_dynamics(floating, q2, z, z)


def test_integrate_keeps_quaternions_unit_at_high_rates(floating):
    q = ldr.random_configuration(floating, 6)
    for _ in range(100):
        q = ldr.integrate(floating, q, np.full(floating.nv, 50.0), 0.01)
    for s in _quat_slices(floating):
        assert abs(np.linalg.norm(q[s]) - 1.0) < 1e-12


# ---------------------------------------------------------------------------- limits, singularities
def test_joints_exactly_at_and_just_beyond_their_limits(arm):
    """Limits are not a discontinuity of the dynamics: at, inside and outside, the same smooth
    function (the simulator or the controller enforces limits, not the dynamics)."""
    lo, hi = arm.lower_limits, arm.upper_limits
    assert np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))
    v, tau = np.full(arm.nv, 0.5), np.linspace(-2, 2, arm.nv)
    for edge in (lo, hi):
        at = _assert_inverse_of_forward(arm, edge.copy(), v, tau)
        for eps in (-1e-9, 1e-9):
            near = ldr.forward_dynamics(arm, edge + eps, v, tau)
            np.testing.assert_allclose(near, at, rtol=1e-6, atol=1e-6)


def test_kinematic_singularity_leaves_the_dynamics_regular(arm):
    """Stretched out (q = 0) the arm's Jacobian loses rank; M(q) stays SPD and ABA exact."""
    q = np.zeros(arm.nv)
    J = ldr.body_jacobian(arm, q, arm.frame_names[-1])
    assert np.linalg.matrix_rank(J, tol=1e-9) < min(6, arm.nv)
    assert np.linalg.eigvalsh(ldr.mass_matrix(arm, q))[0] > 0
    _assert_inverse_of_forward(arm, q, np.full(arm.nv, 0.3), np.linspace(-1, 1, arm.nv))


def test_planar_arm_at_its_elbow_singularity():
    m = bundled("planar_2r.urdf")
    for elbow in (0.0, np.pi):
        q = np.array([0.4, elbow])
        J = ldr.body_jacobian(m, q, m.frame_names[-1])[:3]     # the tip's linear velocity
        assert np.linalg.matrix_rank(J, tol=1e-9) < 2
        _assert_inverse_of_forward(m, q, np.array([1.0, -2.0]), np.array([0.5, -0.5]))


def test_universal_joint_with_parallel_axes_is_refused():
    b = ldr.ModelBuilder("u")
    b.add_link("base")
    b.add_link("l", **_box(1.0))
    with pytest.raises(ldr.URDFError, match="parallel") as err:
        b.add_joint("cardan", ldr.Universal((0, 0, 1), (0, 0, -1)), "base", "l")
    assert err.value.element == "cardan"


# ---------------------------------------------------------------------------- high velocities
@pytest.mark.parametrize("speed", [1e2, 1e4, 1e6])
def test_very_high_velocities_give_the_correct_dynamics(arm, speed):
    """Up to 1e6 rad/s (beyond any motor by 1e3) every identity holds to round-off."""
    rng = np.random.default_rng(7)
    q = ldr.random_configuration(arm, rng)
    v = speed * rng.uniform(-1, 1, arm.nv)
    tau = rng.uniform(-10, 10, arm.nv)
    _assert_inverse_of_forward(arm, q, v, tau)
    b = ldr.nonlinear_effects(arm, q, v)
    Cv_g = ldr.coriolis_matrix(arm, q, v) @ v + ldr.gravity_torques(arm, q)
    np.testing.assert_allclose(Cv_g, b, rtol=0, atol=1e-10 * np.abs(b).max())
    M = ldr.mass_matrix(arm, q)
    ke = ldr.kinetic_energy(arm, q, v)
    assert ke == pytest.approx(0.5 * v @ M @ v, rel=1e-10)


def test_high_velocity_on_a_floating_base_with_a_ball_joint(floating):
    rng = np.random.default_rng(8)
    q = ldr.random_configuration(floating, rng)
    v = 1e5 * rng.uniform(-1, 1, floating.nv)
    _assert_inverse_of_forward(floating, q, v, rng.uniform(-1, 1, floating.nv))


@pytest.mark.parametrize("speed", [1e160, 1e300])
def test_overflowing_velocities_are_an_error_not_nan(speed):
    arm = bundled("arm7.urdf")
    q, v, z = ldr.neutral_configuration(arm), np.full(arm.nv, speed), np.zeros(arm.nv)
    for f in (lambda: ldr.inverse_dynamics(arm, q, v, z), lambda: ldr.forward_dynamics(arm, q, v, z),
              lambda: ldr.nonlinear_effects(arm, q, v), lambda: ldr.kinetic_energy(arm, q, v)):
        with pytest.raises(ldr.InputError, match="overflow"):
            f()


def test_absurd_gravity_is_refused():
    with pytest.raises(ldr.InputError, match="gravity"):
        bundled("arm7.urdf").with_gravity((0, 0, -1e308))


def test_singular_mass_matrix_of_a_mimic_model_names_the_joint():
    b = ldr.ModelBuilder("m")
    b.add_link("base")
    b.add_link("l1", mass=1.0, com=(0.1, 0, 0), inertia=np.eye(3) * 1e-2)
    b.add_link("l2")                                   # massless leaf: j2 moves nothing
    b.add_link("l3", mass=1.0, com=(0.1, 0, 0), inertia=np.eye(3) * 1e-2)
    b.add_joint("j1", ldr.Revolute((0, 0, 1)), "base", "l1")
    b.add_joint("j2", ldr.Revolute((0, 0, 1)), "l1", "l2", origin=np.eye(4))
    b.add_joint("m3", ldr.Revolute((0, 1, 0)), "l1", "l3", mimic=("j1", 1.0, 0.0))
    model = b.build()
    z = np.zeros(model.nv)
    with pytest.raises(ldr.InputError, match="j2"):
        ldr.forward_dynamics(model, z, z, z)
