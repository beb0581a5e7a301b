"""The public SE(3) algebra (``ldr.lie.se3``) against Pinocchio (test oracle only) on random
poses and twists, at small angles, around the series switch and near pi.

Order mapping: Pinocchio's ``Motion.vector`` is (linear, angular) and ``Force.vector`` is
(force, torque), as ours (checked first), so every 6-vector and 6x6 matrix compares as is.
"""
import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.lie import se3, so3

pin = pytest.importorskip("pinocchio")

ANGLES = [0.0, 1e-9, 1e-4, 0.3, 0.4999999, 0.5000001, 1.0, np.pi / 2, 2.5,
          np.pi - 1e-4, np.pi - 1e-7, np.pi - 1e-9]
TOL = 1e-10


def _twists(seed, n=3):
    r = np.random.default_rng(seed)
    out = []
    for a in ANGLES:
        for _ in range(n):
            u = r.normal(size=3)
            out.append(np.concatenate([r.normal(size=3), u / np.linalg.norm(u) * a]))
    return out


def _poses(seed, n=3):
    return [se3.exp(xi) for xi in _twists(seed, n)]


def _err(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max()


def test_pinocchio_motion_and_force_are_linear_first_as_ours():
    x = np.arange(1.0, 7.0)
    assert np.array_equal(pin.Motion(x).linear, x[:3])
    assert np.array_equal(pin.Motion(x).angular, x[3:])
    assert np.array_equal(pin.Force(x).linear, x[:3])
    assert np.array_equal(pin.Force(x).angular, x[3:])


@pytest.mark.parametrize("k", range(len(ANGLES)))
def test_exp_and_log_equal_exp6_and_log6(k):
    for xi in _twists(k)[3 * k:3 * k + 3]:
        T = se3.exp(xi)
        assert _err(T, pin.exp6(xi).homogeneous) < TOL
        # both compared to the twist that made T: each must recover it
        assert _err(se3.log(T), xi) < TOL
        assert _err(pin.log6(pin.SE3(T)).vector, xi) < TOL


def test_log_at_pi_is_a_logarithm():
    """At exactly pi the rotation vector's sign is a choice: exp(log T) = T is what holds."""
    r = np.random.default_rng(5)
    for _ in range(5):
        u = r.normal(size=3)
        T = se3.make(so3.exp(np.pi * u / np.linalg.norm(u)), r.normal(size=3))
        xi = se3.log(T)
        assert abs(np.linalg.norm(xi[3:]) - np.pi) < 1e-12
        assert _err(se3.exp(xi), T) < TOL
        assert _err(pin.exp6(pin.log6(pin.SE3(T))).homogeneous, T) < 1e-8


@pytest.mark.parametrize("k", range(len(ANGLES)))
def test_jacobians_equal_jexp6_and_jlog6(k):
    for xi in _twists(10 + k)[3 * k:3 * k + 3]:
        Jr = se3.right_jacobian(xi)
        assert _err(Jr, pin.Jexp6(xi)) < TOL
        T = se3.exp(xi)
        assert _err(se3.log_jacobian(T), pin.Jlog6(pin.SE3(T))) < TOL
        assert _err(se3.right_jacobian_inv(xi) @ Jr, np.eye(6)) < 1e-9
        assert _err(se3.left_jacobian_inv(xi) @ se3.left_jacobian(xi), np.eye(6)) < 1e-9
        assert _err(se3.left_jacobian(-xi), Jr) < TOL


def test_left_and_right_jacobians_are_the_perturbations_of_exp():
    """exp(xi + d) = exp(J_l d) exp(xi) = exp(xi) exp(J_r d) to first order (central
    differences, step 1e-6: error ~1e-10)."""
    h = 1e-6
    for xi in _twists(20, 1)[2::3]:
        Jl, Jr, E_inv = np.zeros((6, 6)), np.zeros((6, 6)), se3.inv(se3.exp(xi))
        for i in range(6):
            d = np.zeros(6)
            d[i] = h
            P, M = se3.exp(xi + d), se3.exp(xi - d)
            Jl[:, i] = (se3.log(P @ E_inv) - se3.log(M @ E_inv)) / (2 * h)
            Jr[:, i] = (se3.log(E_inv @ P) - se3.log(E_inv @ M)) / (2 * h)
        assert _err(Jl, se3.left_jacobian(xi)) < 1e-7
        assert _err(Jr, se3.right_jacobian(xi)) < 1e-7


def test_actions_equal_pinocchio_se3_act_and_act_inv():
    r = np.random.default_rng(3)
    for T in _poses(30, 1):
        M = pin.SE3(T)
        x, xi, F = r.normal(size=3), r.normal(size=6), r.normal(size=6)
        assert _err(se3.act_point(T, x), M.act(x)) < TOL
        assert _err(se3.act_inv_point(T, x), M.actInv(x)) < TOL
        assert _err(se3.act_twist(T, xi), M.act(pin.Motion(xi)).vector) < TOL
        assert _err(se3.act_inv_twist(T, xi), M.actInv(pin.Motion(xi)).vector) < TOL
        assert _err(se3.act_wrench(T, F), M.act(pin.Force(F)).vector) < TOL
        assert _err(se3.act_inv_wrench(T, F), M.actInv(pin.Force(F)).vector) < TOL
        assert _err(se3.Ad(T), M.action) < TOL
        assert _err(se3.Ad_inv(T), M.actionInverse) < TOL
        assert _err(se3.Ad_inv_star(T), M.dualAction) < TOL
        assert _err(se3.Ad(T) @ xi, se3.act_twist(T, xi)) < TOL
        assert _err(se3.Ad_star(T) @ F, se3.act_inv_wrench(T, F)) < TOL
        # power is frame-independent: <act F, act xi> = <F, xi>
        assert abs(se3.act_wrench(T, F) @ se3.act_twist(T, xi) - F @ xi) < 1e-9


def test_ad_and_ad_star_equal_motion_action_and_minus_dual_action():
    """Pinocchio's Motion.dualAction is the force cross product v x* = -ad^T; our ad_star is
    Kim's ad* := ad^T (Kim 2012, eq. 29)."""
    for xi in _twists(40, 1):
        m = pin.Motion(xi)
        assert _err(se3.ad(xi), m.action) < TOL
        assert _err(se3.ad_star(xi), -m.dualAction) < TOL
        y = np.random.default_rng(1).normal(size=6)
        assert _err(se3.bracket(xi, y), m.cross(pin.Motion(y)).vector) < TOL


def test_compose_inverse_and_interpolate_equal_pinocchio():
    Ts = _poses(50, 1)
    for A, B in zip(Ts, Ts[1:]):
        assert _err(se3.compose(A, B), (pin.SE3(A) * pin.SE3(B)).homogeneous) < TOL
        assert _err(se3.inv(A), pin.SE3(A).inverse().homogeneous) < TOL
        for s in (0.0, 0.3, 1.0):
            ref = pin.SE3.Interpolate(pin.SE3(A), pin.SE3(B), s).homogeneous
            assert _err(se3.interpolate(A, B, s), ref) < TOL


def test_the_algebra_is_ldr_lie_se3():
    """One implementation: the package exports the module itself."""
    assert ldr.lie.se3 is se3


@pytest.mark.parametrize("call, arg", [
    (lambda b: se3.log(b), "T"),
    (lambda b: se3.act_point(b, np.zeros(3)), "T"),
    (lambda b: se3.act_wrench(b, np.zeros(6)), "T"),
    (lambda b: se3.log_jacobian(b), "T"),
    (lambda b: se3.Ad(b), "T"),
    (lambda b: se3.interpolate(np.eye(4), b, 0.5), "T1"),
    (lambda b: so3.log(b[:3, :3]), "R"),
    (lambda b: se3.make(b[:3, :3], np.zeros(3)), "R"),
])
def test_bad_poses_raise_input_errors_naming_the_argument(call, arg):
    scaled = np.eye(4)
    scaled[:3, :3] *= 1.01
    mirror = np.diag([1.0, 1.0, -1.0, 1.0])
    nan = np.eye(4)
    nan[0, 3] = np.nan
    row = np.eye(4)
    row[3, 0] = 0.5
    for bad, words in [(scaled, "orthonormal"), (mirror, "reflection"), (nan, "finite"),
                       (row, "last row"), (np.eye(3), "shape")]:
        if arg == "R" and words in ("finite", "last row", "shape"):
            continue                     # a rotation has no translation and no last row
        with pytest.raises(ldr.InputError, match=words) as e:
            call(bad)
        assert str(e.value).startswith(arg)


@pytest.mark.parametrize("call, arg", [
    (lambda x: se3.exp(x), "xi"), (lambda x: se3.right_jacobian(x), "xi"),
    (lambda x: se3.ad(x), "xi"), (lambda x: se3.act_twist(np.eye(4), x), "xi"),
    (lambda x: se3.act_inv_wrench(np.eye(4), x), "F"),
])
def test_bad_vectors_raise_input_errors_naming_the_argument(call, arg):
    for bad, words in [(np.full(6, np.nan), "finite"), ([0, 0, 0, np.inf, 0, 0], "finite"),
                       (np.zeros(5), "shape"), (np.zeros((6, 1)), "shape")]:
        with pytest.raises(ldr.InputError, match=words) as e:
            call(bad)
        assert str(e.value).startswith(arg)


UNCHECKED = {"hat": "xi", "exp": "xi", "log": "T", "inv": "T", "Ad": "T", "Ad_inv": "T",
             "ad": "xi", "bracket": "xi2", "dexp": "xi", "dexp_inv": "xi"}


@pytest.mark.parametrize("name", sorted(UNCHECKED))
def test_unchecked_twins_give_the_checked_results_and_skip_only_the_checks(name):
    """The per-step callers' twins (``*_unchecked``, the numpy reference) return what the public
    function returns on valid input (its compiled path, to round-off: test_se3_compiled.py),
    and the public one still refuses bad input."""
    rng = np.random.default_rng(3)
    checked, twin = getattr(se3, name), getattr(se3, name + "_unchecked")
    for _ in range(5):
        xi = rng.standard_normal(6)
        args = {"xi": (xi,), "T": (se3.exp(xi),), "xi2": (xi, rng.standard_normal(6))}[
            UNCHECKED[name]]
        np.testing.assert_allclose(checked(*args), twin(*args), rtol=0, atol=1e-13)
    bad = {"xi": (np.full(6, np.nan),), "T": (np.eye(4) * 2.0,),
           "xi2": (np.ones(6), np.full(6, np.inf))}[UNCHECKED[name]]
    with pytest.raises(ldr.InputError):
        checked(*bad)
    np.testing.assert_array_equal(se3.make_unchecked(np.eye(3), np.ones(3)),
                                  se3.make(np.eye(3), np.ones(3)))
