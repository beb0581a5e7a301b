"""Each compiled twin of ``kernels/lie.py`` against its ``lie.so3``/``lie.se3`` original on
random inputs, at angles around the series switch (0.5), near 0 and near pi. Kernel 6-vectors
are in Kim's order; ``conventions`` converts, as at every kernel boundary."""
import numpy as np
import pytest

from lie_dynamics_ros import conventions as C
from lie_dynamics_ros.kernels import lie as KL
from lie_dynamics_ros.lie import se3, so3

ANGLES = [0.0, 1e-9, 1e-4, 0.3, 0.4999999, 0.5000001, 1.0, np.pi / 2, 2.5, np.pi - 1e-9, np.pi]


def _vectors(seed, n=3):
    r = np.random.default_rng(seed)
    out = []
    for a in ANGLES:
        for _ in range(n):
            u = r.normal(size=3)
            out.append(u / np.linalg.norm(u) * a)
    return out


def _pose(r, w):
    return se3.make(so3.exp(w), r.normal(size=3))


def test_the_series_tables_are_lie_so3s():
    """The kernels build their Taylor tables themselves (they import no other package folder):
    the same numbers as lie.so3's, bit for bit, switched at the same angle."""
    ours = (KL._S1, KL._G1, KL._G2, KL._D2, KL._D2T)
    for a, b in zip(ours, so3.series_coefficients()):
        assert a.shape == b.shape and np.array_equal(a, b)
    assert KL._SMALL == so3.SMALL_ANGLE


def test_the_angles_straddle_the_series_switch():
    """Both branches (Taylor series below SMALL_ANGLE, closed forms above) are exercised, on
    both sides within 1e-6 of the switch."""
    assert any(so3.SMALL_ANGLE - 1e-6 < a < so3.SMALL_ANGLE for a in ANGLES)
    assert any(so3.SMALL_ANGLE < a < so3.SMALL_ANGLE + 1e-6 for a in ANGLES)


@pytest.mark.parametrize("seed", range(3))
def test_so3_twins(seed):
    r = np.random.default_rng(100 + seed)
    R = np.empty(9)
    for w in _vectors(seed):
        t = np.linalg.norm(w)
        assert np.allclose(KL.exp_coeffs(t), so3.exp_coeffs(t), rtol=1e-14, atol=1e-16)
        assert np.allclose(KL.inv_coeffs(t), so3.inv_coeffs(t), rtol=1e-13, atol=1e-16)
        KL.so3_exp(*w, R)
        assert np.allclose(R.reshape(3, 3), so3.exp(w), atol=1e-15)
        x = r.normal(size=3)
        assert np.allclose(KL.left_jacobian_apply(*w, *x), so3.left_jacobian(w) @ x, atol=1e-14)
        assert np.allclose(KL.so3_dexp_inv_apply(*w, *x), so3.dexp_inv(w) @ x, atol=1e-13)
        assert np.allclose(KL.cross(*w, *x), so3.cross(w, x), atol=1e-15)


@pytest.mark.parametrize("seed", range(3))
def test_quaternion_twins(seed):
    r = np.random.default_rng(200 + seed)
    R = np.empty(9)
    for w in _vectors(seed):
        q = so3.quat_exp(w)
        assert np.allclose(KL.quat_exp(*w), q, atol=1e-15)
        KL.quat_to_rot(*q, R)
        assert np.allclose(R.reshape(3, 3), so3.quat_to_rot(q), atol=1e-15)
        a = so3.quat_exp(r.normal(size=3))
        assert np.allclose(KL.quat_multiply(*a, *q), so3.quat_multiply(a, q), atol=1e-15)
        u = r.normal(size=3)
        assert np.allclose(KL.quat_rotate_T(*q, *u), so3.quat_to_rot(q).T @ u, atol=1e-14)


@pytest.mark.parametrize("seed", range(3))
def test_se3_twins(seed):
    r = np.random.default_rng(300 + seed)
    R, p, out = np.empty(9), np.empty(3), np.empty(6)
    for w in _vectors(seed):
        xi = np.r_[r.normal(size=3), w]                      # public (v, w)
        xk = C.to_internal(xi)                               # kernel (w, v)
        KL.se3_exp(xk, R, p)
        T = se3.exp(xi)
        assert np.allclose(R.reshape(3, 3), T[:3, :3], atol=1e-15)
        assert np.allclose(p, T[:3, 3], atol=1e-14)
        V = r.normal(size=6)
        KL.se3_dexp_inv(xk, C.to_internal(V), out)
        assert np.allclose(C.to_public(out), se3.dexp_inv(xi) @ V, atol=1e-12)
        for s in (1.0, -0.5):
            acc = np.full(6, 0.25)
            KL.se3_ad_add(xk, C.to_internal(V), acc, s)
            assert np.allclose(C.to_public(acc - 0.25), s * se3.bracket(xi, V), atol=1e-14)
            acc = np.full(6, 0.25)
            KL.se3_ad_star_add(xk, C.to_internal(V), acc, s)
            assert np.allclose(C.to_public(acc - 0.25), s * se3.ad_star(xi) @ V, atol=1e-14)
        T = _pose(r, w)
        Rk, pk = T[:3, :3].ravel().copy(), T[:3, 3].copy()
        KL.se3_Ad(Rk, pk, C.to_internal(V), out)
        assert np.allclose(C.to_public(out), se3.Ad(T) @ V, atol=1e-13)
        KL.se3_Ad_inv(Rk, pk, C.to_internal(V), out)
        assert np.allclose(C.to_public(out), se3.Ad_inv(T) @ V, atol=1e-13)
        acc = np.full(6, 0.25)
        KL.se3_Ad_inv_T_add(Rk, pk, C.to_internal(V), acc, 2.0)
        assert np.allclose(C.to_public(acc - 0.25), 2.0 * se3.Ad_inv(T).T @ V, atol=1e-13)


def test_conventions_matrix_helpers_conjugate_operators():
    """matrix_to_internal(A) acts on kernel vectors as A on public ones; the two helpers undo
    each other, also on stacks."""
    r = np.random.default_rng(5)
    A, x = r.normal(size=(6, 6)), r.normal(size=6)
    assert np.allclose(C.matrix_to_internal(A) @ C.to_internal(x), C.to_internal(A @ x))
    S = r.normal(size=(4, 6, 6))
    assert np.array_equal(C.matrix_to_public(C.matrix_to_internal(S)), S)
    J = r.normal(size=(6, 3))
    assert np.array_equal(C.rows_to_public(J), C.to_public(J.T).T)
    assert np.array_equal(C.rows_to_internal(C.rows_to_public(J)), J)
