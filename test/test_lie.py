"""Tests for lie_dynamics_ros.lie (so3, se3): twists xi = (v, w) linear first, wrenches (f, m),
the order of the public API (docs/conventions.md)."""
import math

import numpy as np
import pytest

from lie_dynamics_ros.lie import se3, so3

TOL = 1e-10
ANGLES = [0.0, 1e-9, 1e-4, 0.3, 0.4999999, 0.5000001, 1.0, np.pi / 2, 2.5,
          np.pi - 1e-4, np.pi - 1e-9, np.pi]


def rng(seed=0):
    return np.random.default_rng(seed)


def unit(r):
    u = r.normal(size=3)
    return u / np.linalg.norm(u)


def rand_T(r):
    return se3.make(so3.exp(unit(r) * r.uniform(0, np.pi)), r.normal(size=3))


def brute_series(adm, f, n=60):
    """sum_k f(k) adm^k."""
    out, P = np.zeros_like(adm), np.eye(len(adm))
    for k in range(n):
        out, P = out + f(k) * P, P @ adm
    return out


def fact(k):
    return float(math.factorial(k))


# ------------------------------------------------------------------ so3
def test_hat_vee_and_shape_errors():
    w = rng().normal(size=3)
    assert np.allclose(so3.hat(w) @ [1., 2., 3.], np.cross(w, [1., 2., 3.]))
    assert np.allclose(so3.vee(so3.hat(w)), w)
    xi = rng(1).normal(size=6)
    assert np.allclose(se3.vee(se3.hat(xi)), xi)
    for f, bad in [(so3.exp, [1, 2]), (so3.log, np.eye(4)), (se3.exp, np.zeros(3)),
                   (se3.Ad, np.eye(3)), (so3.quat_to_rot, [0, 0, 1]),
                   (se3.parameters_to_inertia, np.zeros(9))]:
        with pytest.raises(ValueError):
            f(bad)
    with pytest.raises(ValueError):
        so3.dexp_inv(w, order=-1)


@pytest.mark.parametrize("angle", ANGLES)
def test_so3_exp_log_roundtrip(angle):
    r = rng(int(angle * 1e3) % 97)
    for _ in range(5):
        w = unit(r) * angle
        R = so3.exp(w)
        assert np.allclose(R.T @ R, np.eye(3), atol=TOL) and np.isclose(np.linalg.det(R), 1.0)
        w2 = so3.log(R)
        assert np.all(np.isfinite(w2))
        if angle == np.pi:  # +-w are both valid logs of a half turn
            assert min(np.linalg.norm(w2 - w), np.linalg.norm(w2 + w)) < TOL
        else:
            assert np.linalg.norm(w2 - w) < TOL
        assert np.allclose(so3.exp(w2), R, atol=TOL)


def test_so3_log_exact_half_turns_and_identity():
    assert np.array_equal(so3.log(np.eye(3)), np.zeros(3))
    assert np.array_equal(so3.exp(np.zeros(3)), np.eye(3))
    for R in [np.diag([1., -1., -1.]), np.diag([-1., 1., -1.]), np.diag([-1., -1., 1.])]:
        w = so3.log(R)
        assert np.isclose(np.linalg.norm(w), np.pi) and np.allclose(so3.exp(w), R, atol=TOL)
    n = np.array([1., 1., 0.]) / np.sqrt(2)
    R = 2 * np.outer(n, n) - np.eye(3)         # half turn about (1, 1, 0)
    assert np.allclose(so3.exp(so3.log(R)), R, atol=TOL)


def test_so3_jacobians():
    r = rng(2)
    for t in [0.0, 1e-7, 0.3, 0.5, 2.0, 3.1]:
        w = unit(r) * t
        Jl, Jr = so3.left_jacobian(w), so3.right_jacobian(w)
        assert np.allclose(Jr, Jl.T, atol=TOL)
        assert np.allclose(Jl @ so3.left_jacobian_inv(w), np.eye(3), atol=TOL)
        assert np.allclose(Jr @ so3.right_jacobian_inv(w), np.eye(3), atol=TOL)
        assert np.allclose(Jl, brute_series(so3.hat(w), lambda k: 1 / fact(k + 1)), atol=TOL)
        # right Jacobian: exp(w + dw) ~ exp(w) exp(J_r dw)
        dw, h = r.normal(size=3), 1e-6
        D = (so3.exp(w + h * dw) - so3.exp(w - h * dw)) / (2 * h)
        assert np.allclose(so3.exp(w).T @ D, so3.hat(Jr @ dw), atol=1e-8)


def test_bernoulli():
    from fractions import Fraction as F
    assert so3.bernoulli(6) == [1, F(-1, 2), F(1, 6), 0, F(-1, 30), 0, F(1, 42)]


# ------------------------------------------------------------------ quaternions
def test_quaternions():
    r = rng(3)
    assert np.allclose(so3.quat_to_rot([0, 0, 0, 1]), np.eye(3))
    for t in ANGLES:
        w = unit(r) * t
        R = so3.exp(w)
        q = so3.rot_to_quat(R)
        assert q[3] >= 0 and np.isclose(np.linalg.norm(q), 1.0)
        assert np.allclose(so3.quat_to_rot(q), R, atol=TOL)
        qe = so3.quat_exp(w)
        assert min(np.linalg.norm(qe - q), np.linalg.norm(qe + q)) < TOL
        wl = so3.quat_log(q)
        assert np.allclose(so3.exp(wl), R, atol=TOL)
        if t < np.pi:
            assert np.linalg.norm(wl - w) < 1e-9
    for _ in range(20):
        a, b = so3.quat_exp(r.normal(size=3) * 2), so3.quat_exp(r.normal(size=3) * 2)
        ab = so3.quat_multiply(a, b)
        assert np.allclose(so3.quat_to_rot(ab), so3.quat_to_rot(a) @ so3.quat_to_rot(b), atol=TOL)
        assert np.allclose(so3.quat_to_rot(-a), so3.quat_to_rot(a))
        assert np.allclose(so3.quat_to_rot(3.0 * a), so3.quat_to_rot(a))   # normalises
    # exact half turns: robust branch of Shepperd's method
    for R in [np.diag([1., -1., -1.]), np.diag([-1., 1., -1.]), np.diag([-1., -1., 1.])]:
        assert np.allclose(so3.quat_to_rot(so3.rot_to_quat(R)), R, atol=TOL)


# ------------------------------------------------------------------ se3 group
@pytest.mark.parametrize("angle", ANGLES)
def test_se3_exp_log_roundtrip(angle):
    r = rng(int(angle * 1e3) % 89 + 1)
    for _ in range(5):
        xi = np.concatenate([r.normal(size=3), unit(r) * angle])
        T = se3.exp(xi)
        xi2 = se3.log(T)
        assert np.all(np.isfinite(xi2))
        assert np.allclose(se3.exp(xi2), T, atol=TOL)
        if angle < np.pi:
            assert np.linalg.norm(xi2 - xi) < TOL * 10
        # against the matrix exponential series of hat(xi)
        E = brute_series(se3.hat(xi), lambda k: 1 / fact(k), 40)
        assert np.allclose(T, E, atol=TOL)


def test_se3_identity_and_pure_translation():
    assert np.array_equal(se3.log(np.eye(4)), np.zeros(6))
    assert np.array_equal(se3.exp(np.zeros(6)), np.eye(4))
    T = se3.make(np.eye(3), [1., 2., 3.])
    assert np.allclose(se3.log(T), [1, 2, 3, 0, 0, 0])
    assert np.allclose(se3.exp([1, 2, 3, 0, 0, 0]), T)
    Rz = se3.exp([0, 0, 0, 0, 0, np.pi / 2])[:3, :3]        # angular part last
    assert np.allclose(Rz, [[0, -1, 0], [1, 0, 0], [0, 0, 1]])
    for f in (se3.dexp, se3.dexp_inv):
        assert np.allclose(f(np.zeros(6)), np.eye(6))
        assert np.all(np.isfinite(f([1, 2, 3, 0, 0, 0])))


def test_inv_compose_Ad():
    r = rng(4)
    for _ in range(10):
        A, B, C = rand_T(r), rand_T(r), rand_T(r)
        assert np.allclose(se3.compose(A, se3.inv(A)), np.eye(4), atol=TOL)
        assert np.allclose(se3.compose(A, B, C), A @ B @ C)
        assert np.allclose(se3.Ad(A @ B), se3.Ad(A) @ se3.Ad(B), atol=TOL)
        assert np.allclose(se3.Ad_inv(A), se3.Ad(se3.inv(A)), atol=TOL)
        assert np.allclose(se3.Ad_inv(A) @ se3.Ad(A), np.eye(6), atol=TOL)
        assert np.allclose(se3.Ad_star(A), se3.Ad(A).T)
        xi = r.normal(size=6)
        assert np.allclose(se3.hat(se3.Ad(A) @ xi), A @ se3.hat(xi) @ se3.inv(A), atol=TOL)
        assert np.allclose(se3.exp(se3.Ad(A) @ xi), A @ se3.exp(xi) @ se3.inv(A), atol=TOL)
    assert np.array_equal(se3.compose(), np.eye(4))


def test_ad_bracket():
    r = rng(5)
    for _ in range(10):
        x, y, z = r.normal(size=(3, 6))
        X, Y = se3.hat(x), se3.hat(y)
        assert np.allclose(se3.hat(se3.bracket(x, y)), X @ Y - Y @ X, atol=TOL)
        assert np.allclose(se3.ad_star(x), se3.ad(x).T)
        assert np.allclose(se3.bracket(x, y), -se3.bracket(y, x))
        jac = (se3.bracket(x, se3.bracket(y, z)) + se3.bracket(y, se3.bracket(z, x))
               + se3.bracket(z, se3.bracket(x, y)))
        assert np.linalg.norm(jac) < TOL
        # d/dt Ad_{exp(t x)} = Ad ad_x  at t = 0
        h = 1e-6
        D = (se3.Ad(se3.exp(h * x)) - se3.Ad(se3.exp(-h * x))) / (2 * h)
        assert np.allclose(D, se3.ad(x), atol=1e-8)


# ------------------------------------------------------------------ dexp
SCALES = [0.0, 1e-9, 1e-4, 0.1, 0.4999999, 0.5000001, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("s", SCALES)
def test_dexp_finite_differences(s):
    r, h = rng(6), 1e-6
    for _ in range(4):
        u, du = r.normal(size=6), r.normal(size=6)
        u[3:] *= s / np.linalg.norm(u[3:])
        D = (se3.exp(u + h * du) - se3.exp(u - h * du)) / (2 * h) @ se3.inv(se3.exp(u))
        assert np.allclose(D, se3.hat(se3.dexp(u) @ du), atol=1e-8)
        w, dw = u[3:], du[3:]
        D3 = (so3.exp(w + h * dw) - so3.exp(w - h * dw)) / (2 * h) @ so3.exp(w).T
        assert np.allclose(D3, so3.hat(so3.dexp(w) @ dw), atol=1e-8)


@pytest.mark.parametrize("s", SCALES)
def test_dexp_inverse_and_series(s):
    r = rng(7)
    for _ in range(4):
        u = r.normal(size=6)
        u[3:] *= s / np.linalg.norm(u[3:])
        assert np.allclose(se3.dexp_inv(u) @ se3.dexp(u), np.eye(6), atol=TOL)
        assert np.allclose(so3.dexp_inv(u[3:]) @ so3.dexp(u[3:]), np.eye(3), atol=TOL)
        # exact dexp against its defining series (converges everywhere)
        assert np.allclose(se3.dexp(u), brute_series(se3.ad(u), lambda k: 1 / fact(k + 1)),
                           atol=TOL)
        if s <= 1.0:  # Bernoulli series converges for |w| < 2 pi; high order close to exact
            assert np.allclose(se3.dexp_inv(u), se3.dexp_inv(u, order=40), atol=TOL)
            assert np.allclose(so3.dexp_inv(u[3:]), so3.dexp_inv(u[3:], order=40), atol=TOL)


@pytest.mark.parametrize("order", [0, 1, 2, 3, 4])
def test_truncated_dexp_inv_order(order):
    r = rng(8 + order)
    u = r.normal(size=6)
    u /= np.linalg.norm(u)
    scales = np.array([0.2, 0.1, 0.05])
    for mod, f in [(se3, lambda x: x), (so3, lambda x: x[3:])]:
        errs = [np.linalg.norm(mod.dexp_inv(f(s * u), order=order) - mod.dexp_inv(f(s * u)))
                for s in scales]
        slope = np.polyfit(np.log(scales), np.log(errs), 1)[0]
        assert slope > order + 1 - 0.2, (mod.__name__, order, slope, errs)
    # first coefficients 1, -1/2, 1/12, 0, -1/720
    A = se3.ad(u)
    assert np.allclose(se3.dexp_inv(u, order=4),
                       np.eye(6) - A / 2 + A @ A / 12 - np.linalg.matrix_power(A, 4) / 720)


# ------------------------------------------------------------------ inertia
def rand_body(r):
    pts, m = r.normal(size=(30, 3)) + r.normal(size=3), r.uniform(0.1, 2.0, size=30)
    return pts, m


def test_spatial_inertia_point_cloud():
    r = rng(9)
    for _ in range(5):
        pts, m = rand_body(r)
        # integral form about the frame origin (Kim eq 19/20)
        I_int = np.zeros((6, 6))
        for p, mi in zip(pts, m):
            P = so3.hat(p)
            I_int += mi * np.block([[np.eye(3), P.T], [P, P.T @ P]])
        M, c = m.sum(), (m[:, None] * pts).sum(0) / m.sum()
        Ic = sum(mi * so3.hat(p - c).T @ so3.hat(p - c) for p, mi in zip(pts, m))
        Rc = so3.exp(r.normal(size=3))                       # COM frame orientation
        I = se3.spatial_inertia(M, c, Rc.T @ Ic @ Rc, Rc)
        assert np.allclose(I, I_int, atol=1e-9)
        assert np.allclose(I, I.T) and np.all(np.linalg.eigvalsh(I) > 0)
        # kinetic energy of the cloud for a body twist V = (v, w): point velocity v + w x p
        V = r.normal(size=6)
        ke = 0.5 * sum(mi * np.sum((V[:3] + np.cross(V[3:], p)) ** 2) for p, mi in zip(pts, m))
        assert np.isclose(0.5 * V @ I @ V, ke)
        pi = se3.inertia_to_parameters(I)
        assert np.isclose(pi[0], M) and np.allclose(pi[1:4], M * c)
        assert np.allclose(se3.parameters_to_inertia(pi), I, atol=1e-12)
        assert np.allclose(se3.inertia_to_parameters(se3.parameters_to_inertia(pi)), pi)


def test_parameters_order():
    pi = np.arange(1.0, 11.0)
    I = se3.parameters_to_inertia(pi)
    assert I[0, 0] == 1 and np.allclose(so3.vee(I[3:, :3]), [2, 3, 4])
    assert np.allclose(I[3:, 3:], [[5, 6, 8], [6, 7, 9], [8, 9, 10]])
    assert np.allclose(se3.inertia_to_parameters(I), pi)


def test_transform_inertia_energy_and_cloud():
    r = rng(10)
    for _ in range(10):
        pts, m = rand_body(r)
        M, c = m.sum(), (m[:, None] * pts).sum(0) / m.sum()
        Ic = sum(mi * so3.hat(p - c).T @ so3.hat(p - c) for p, mi in zip(pts, m))
        I_a = se3.spatial_inertia(M, c, Ic)
        T_ab = rand_T(r)                                     # pose of {b} in {a}
        I_b = se3.transform_inertia(T_ab, I_a)
        V_a = r.normal(size=6)
        V_b = se3.Ad(se3.inv(T_ab)) @ V_a                    # V_b = Ad_{T_ba} V_a
        assert np.isclose(0.5 * V_a @ I_a @ V_a, 0.5 * V_b @ I_b @ V_b)
        # same cloud with points expressed in {b}: p_b = T_ba p_a
        T_ba = se3.inv(T_ab)
        pb = pts @ T_ba[:3, :3].T + T_ba[:3, 3]
        cb = (m[:, None] * pb).sum(0) / M
        Icb = sum(mi * so3.hat(p - cb).T @ so3.hat(p - cb) for p, mi in zip(pb, m))
        assert np.allclose(I_b, se3.spatial_inertia(M, cb, Icb), atol=1e-9)
        # momentum transforms like a wrench: L_b = Ad*_{T_ab} L_a
        assert np.allclose(I_b @ V_b, se3.Ad_star(T_ab) @ (I_a @ V_a), atol=1e-9)
