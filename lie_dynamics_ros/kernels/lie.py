"""Compiled twins of ``lie.so3``/``lie.se3``: the same formulas and the same Taylor coefficients
below the same angle (``so3.SMALL_ANGLE``), for the kernels. ``test/test_lie_kernels.py``
checks each one against its original on random inputs, small angles included.

Kernel order (private): twists (angular, linear), wrenches (moment, force), as Kim (2012);
``lie`` and the public API use (linear, angular), and ``conventions.py`` converts. Rotations
are row-major 9-vectors ``R`` and translations 3-vectors ``p``; T = (R, p) is the pose of a
child frame in its parent, so ``se3_Ad_inv`` maps parent twists to the child (Kim eq. 37) and
its transpose maps child wrenches to the parent (Kim eq. 42).
"""
from math import comb, factorial, gcd

import numpy as np

from .jit import JIT, njit

# Kernels import no other package folder, so the series below are built here the way
# ``lie.so3`` builds them; test_lie_kernels checks both tables are equal bit for bit.
_SMALL = 0.5    # so3.SMALL_ANGLE
_NT = 8


def _bernoulli(n):
    """Bernoulli numbers B_0..B_n (B_1 = -1/2) as exact (numerator, denominator) int pairs."""
    B = [(1, 1)]
    for m in range(1, n + 1):
        num, den = 0, 1
        for j in range(m):
            p, q = comb(m + 1, j) * B[j][0], B[j][1]
            num, den = num * q + p * den, den * q
        num, den = -num, den * (m + 1)
        g = gcd(num, den)
        B.append((num // g, den // g))
    return B


_BN = _bernoulli(2 * _NT + 2)
_S1 = np.array([(-1) ** k / factorial(2 * k + 1) for k in range(_NT)])     # sin t / t
_G1 = np.array([(-1) ** k / factorial(2 * k + 2) for k in range(_NT)])     # (1 - cos t) / t^2
_G2 = np.array([(-1) ** k / factorial(2 * k + 3) for k in range(_NT)])     # (t - sin t) / t^3
_D2 = np.array([(-1) ** (n + 1) * _BN[2 * n][0] / (_BN[2 * n][1] * factorial(2 * n))
                for n in range(1, _NT + 1)])                      # (1 - (t/2)cot(t/2)) / t^2
_D2T = np.array([2 * k * _D2[k] for k in range(1, _NT)])          # its derivative / t


@njit(inline="always", **JIT)
def _poly(c, x):
    acc = 0.0
    for k in range(c.shape[0] - 1, -1, -1):
        acc = acc * x + c[k]
    return acc


@njit(inline="always", **JIT)
def cross(a0, a1, a2, b0, b1, b2):
    """a x b for 3-vectors given by components (``so3.cross``)."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


# ----------------------------------------------------------------------------- SO(3)
@njit(**JIT)
def exp_coeffs(t):
    """(sin t/t, (1-cos t)/t^2, (t-sin t)/t^3) = ``so3.exp_coeffs``."""
    if t < _SMALL:
        x = t * t
        return _poly(_S1, x), _poly(_G1, x), _poly(_G2, x)
    s = np.sin(t)
    h = np.sin(0.5 * t)
    return s / t, 2.0 * h * h / (t * t), (t - s) / (t * t * t)


@njit(**JIT)
def inv_coeffs(t):
    """(g2, g2'(t)/t) of dexp^-1 = ``so3.inv_coeffs`` (singular at 2 pi)."""
    if t < _SMALL:
        x = t * t
        return _poly(_D2, x), _poly(_D2T, x)
    h = 0.5 * t
    s = np.sin(h)
    cot = np.cos(h) / s
    return (1.0 - h * cot) / (t * t), (-2.0 / t ** 3 + cot / (2.0 * t * t)
                                       + 1.0 / (4.0 * t * s * s)) / t


@njit(inline="always", **JIT)
def so3_exp(w0, w1, w2, R):
    """R (row-major 9) = exp([w]) = I + A [w] + B [w]^2 (Rodrigues) = ``so3.exp``."""
    A, B, _ = exp_coeffs(np.sqrt(w0 * w0 + w1 * w1 + w2 * w2))
    R[0] = 1.0 - B * (w1 * w1 + w2 * w2)
    R[1] = -A * w2 + B * w0 * w1
    R[2] = A * w1 + B * w0 * w2
    R[3] = A * w2 + B * w0 * w1
    R[4] = 1.0 - B * (w0 * w0 + w2 * w2)
    R[5] = -A * w0 + B * w1 * w2
    R[6] = -A * w1 + B * w0 * w2
    R[7] = A * w0 + B * w1 * w2
    R[8] = 1.0 - B * (w0 * w0 + w1 * w1)


@njit(inline="always", **JIT)
def left_jacobian_apply(w0, w1, w2, x0, x1, x2):
    """J_l(w) x = x + B w x x + C w x (w x x) (``so3.left_jacobian(w) @ x``)."""
    _, B, C = exp_coeffs(np.sqrt(w0 * w0 + w1 * w1 + w2 * w2))
    c0, c1, c2 = cross(w0, w1, w2, x0, x1, x2)
    d0, d1, d2 = cross(w0, w1, w2, c0, c1, c2)
    return x0 + B * c0 + C * d0, x1 + B * c1 + C * d1, x2 + B * c2 + C * d2


@njit(inline="always", **JIT)
def so3_dexp_inv_apply(u0, u1, u2, x0, x1, x2):
    """dexp_u^-1 x = x - u x x / 2 + g2 u x (u x x) (``so3.dexp_inv(u) @ x``)."""
    g2, _ = inv_coeffs(np.sqrt(u0 * u0 + u1 * u1 + u2 * u2))
    c0, c1, c2 = cross(u0, u1, u2, x0, x1, x2)
    d0, d1, d2 = cross(u0, u1, u2, c0, c1, c2)
    return x0 - 0.5 * c0 + g2 * d0, x1 - 0.5 * c1 + g2 * d1, x2 - 0.5 * c2 + g2 * d2


# ----------------------------------------------------------------------------- quaternions
@njit(inline="always", **JIT)
def quat_to_rot(x, y, z, w, R):
    """R (row-major 9) of the unit quaternion (x, y, z, w) = ``so3.quat_to_rot``."""
    R[0] = 1.0 - 2.0 * (y * y + z * z)
    R[1] = 2.0 * (x * y - z * w)
    R[2] = 2.0 * (x * z + y * w)
    R[3] = 2.0 * (x * y + z * w)
    R[4] = 1.0 - 2.0 * (x * x + z * z)
    R[5] = 2.0 * (y * z - x * w)
    R[6] = 2.0 * (x * z - y * w)
    R[7] = 2.0 * (y * z + x * w)
    R[8] = 1.0 - 2.0 * (x * x + y * y)


@njit(inline="always", **JIT)
def quat_rotate_T(x, y, z, w, u0, u1, u2):
    """R^T u for R = ``quat_to_rot(x, y, z, w)`` without forming R: a vector of the world
    (gravity) in the frame of a free joint's body."""
    return ((1.0 - 2.0 * (y * y + z * z)) * u0 + 2.0 * (x * y + z * w) * u1
            + 2.0 * (x * z - y * w) * u2,
            2.0 * (x * y - z * w) * u0 + (1.0 - 2.0 * (x * x + z * z)) * u1
            + 2.0 * (y * z + x * w) * u2,
            2.0 * (x * z + y * w) * u0 + 2.0 * (y * z - x * w) * u1
            + (1.0 - 2.0 * (x * x + y * y)) * u2)


@njit(inline="always", **JIT)
def quat_exp(w0, w1, w2):
    """Unit quaternion (x, y, z, w) of exp(w) = ``so3.quat_exp``."""
    t = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    k = 0.5 * _poly(_S1, 0.25 * t * t) if t < _SMALL else np.sin(0.5 * t) / t
    return k * w0, k * w1, k * w2, np.cos(0.5 * t)


@njit(inline="always", **JIT)
def quat_multiply(ax, ay, az, aw, bx, by, bz, bw):
    """Hamilton product a*b in (x, y, z, w) = ``so3.quat_multiply``."""
    cx, cy, cz = cross(ax, ay, az, bx, by, bz)
    return (aw * bx + bw * ax + cx, aw * by + bw * ay + cy, aw * bz + bw * az + cz,
            aw * bw - (ax * bx + ay * by + az * bz))


# ----------------------------------------------------------------------------- SE(3), Kim's order
@njit(inline="always", **JIT)
def se3_exp(xi, R, p):
    """(R, p) = exp(xi), xi = (w, v): R = exp([w]), p = J_l(w) v (``se3.exp``)."""
    so3_exp(xi[0], xi[1], xi[2], R)
    p[0], p[1], p[2] = left_jacobian_apply(xi[0], xi[1], xi[2], xi[3], xi[4], xi[5])


@njit(inline="always", **JIT)
def se3_Ad(R, p, x, out):
    """out = Ad_T x = (R w, R v + p x R w) for T = (R, p) (``se3.Ad``, Kim eq. 7)."""
    w0 = R[0] * x[0] + R[1] * x[1] + R[2] * x[2]
    w1 = R[3] * x[0] + R[4] * x[1] + R[5] * x[2]
    w2 = R[6] * x[0] + R[7] * x[1] + R[8] * x[2]
    out[0], out[1], out[2] = w0, w1, w2
    out[3] = R[0] * x[3] + R[1] * x[4] + R[2] * x[5] + p[1] * w2 - p[2] * w1
    out[4] = R[3] * x[3] + R[4] * x[4] + R[5] * x[5] + p[2] * w0 - p[0] * w2
    out[5] = R[6] * x[3] + R[7] * x[4] + R[8] * x[5] + p[0] * w1 - p[1] * w0


@njit(inline="always", **JIT)
def se3_Ad_inv(R, p, x, out):
    """out = Ad_{T^-1} x = (R^T w, R^T (v + w x p)) (``se3.Ad_inv``). ``out`` must not alias x."""
    w0, w1, w2 = x[0], x[1], x[2]
    u0 = x[3] + w1 * p[2] - w2 * p[1]
    u1 = x[4] + w2 * p[0] - w0 * p[2]
    u2 = x[5] + w0 * p[1] - w1 * p[0]
    out[0] = R[0] * w0 + R[3] * w1 + R[6] * w2
    out[1] = R[1] * w0 + R[4] * w1 + R[7] * w2
    out[2] = R[2] * w0 + R[5] * w1 + R[8] * w2
    out[3] = R[0] * u0 + R[3] * u1 + R[6] * u2
    out[4] = R[1] * u0 + R[4] * u1 + R[7] * u2
    out[5] = R[2] * u0 + R[5] * u1 + R[8] * u2


@njit(inline="always", **JIT)
def se3_Ad_inv_T_add(R, p, f, out, s):
    """out += s * Ad_{T^-1}^T f = s * (R m + p x (R f), R f) (``se3.Ad_inv(T).T``, Kim eq. 42)."""
    m0 = R[0] * f[0] + R[1] * f[1] + R[2] * f[2]
    m1 = R[3] * f[0] + R[4] * f[1] + R[5] * f[2]
    m2 = R[6] * f[0] + R[7] * f[1] + R[8] * f[2]
    g0 = R[0] * f[3] + R[1] * f[4] + R[2] * f[5]
    g1 = R[3] * f[3] + R[4] * f[4] + R[5] * f[5]
    g2 = R[6] * f[3] + R[7] * f[4] + R[8] * f[5]
    out[0] += s * (m0 + p[1] * g2 - p[2] * g1)
    out[1] += s * (m1 + p[2] * g0 - p[0] * g2)
    out[2] += s * (m2 + p[0] * g1 - p[1] * g0)
    out[3] += s * g0
    out[4] += s * g1
    out[5] += s * g2


@njit(inline="always", **JIT)
def se3_ad_add(V, x, out, s):
    """out += s * ad_V x = s * (w x x1, v x x1 + w x x2) (``se3.ad``, Kim eq. 27)."""
    w0, w1, w2, v0, v1, v2 = V[0], V[1], V[2], V[3], V[4], V[5]
    a0, a1, a2, b0, b1, b2 = x[0], x[1], x[2], x[3], x[4], x[5]
    out[0] += s * (w1 * a2 - w2 * a1)
    out[1] += s * (w2 * a0 - w0 * a2)
    out[2] += s * (w0 * a1 - w1 * a0)
    out[3] += s * (v1 * a2 - v2 * a1 + w1 * b2 - w2 * b1)
    out[4] += s * (v2 * a0 - v0 * a2 + w2 * b0 - w0 * b2)
    out[5] += s * (v0 * a1 - v1 * a0 + w0 * b1 - w1 * b0)


@njit(inline="always", **JIT)
def se3_ad_star_add(V, y, out, s):
    """out += s * ad*_V y, ad*_V = ad_V^T: (-w x m - v x f, -w x f) (``se3.ad_star``, Kim
    eq. 29)."""
    w0, w1, w2, v0, v1, v2 = V[0], V[1], V[2], V[3], V[4], V[5]
    m0, m1, m2, f0, f1, f2 = y[0], y[1], y[2], y[3], y[4], y[5]
    out[0] -= s * (w1 * m2 - w2 * m1 + v1 * f2 - v2 * f1)
    out[1] -= s * (w2 * m0 - w0 * m2 + v2 * f0 - v0 * f2)
    out[2] -= s * (w0 * m1 - w1 * m0 + v0 * f1 - v1 * f0)
    out[3] -= s * (w1 * f2 - w2 * f1)
    out[4] -= s * (w2 * f0 - w0 * f2)
    out[5] -= s * (w0 * f1 - w1 * f0)


@njit(**JIT)
def se3_dexp_inv(U, V, out):
    """out = dexp_U^-1 V, U = (w, v) (``se3.dexp_inv(U) @ V``): the closed form of Celledoni et
    al. (2021, §2.3) with g1 = -1/2, g1~ = 0."""
    A0, A1, A2, a0, a1, a2 = U[0], U[1], U[2], U[3], U[4], U[5]
    B0, B1, B2, b0, b1, b2 = V[0], V[1], V[2], V[3], V[4], V[5]
    g2, g2t = inv_coeffs(np.sqrt(A0 * A0 + A1 * A1 + A2 * A2))
    rho = A0 * a0 + A1 * a1 + A2 * a2
    AB0, AB1, AB2 = cross(A0, A1, A2, B0, B1, B2)
    AAB0, AAB1, AAB2 = cross(A0, A1, A2, AB0, AB1, AB2)
    aB0, aB1, aB2 = cross(a0, a1, a2, B0, B1, B2)
    Ab0, Ab1, Ab2 = cross(A0, A1, A2, b0, b1, b2)
    t10, t11, t12 = cross(a0, a1, a2, AB0, AB1, AB2)
    t20, t21, t22 = cross(A0, A1, A2, aB0, aB1, aB2)
    t30, t31, t32 = cross(A0, A1, A2, Ab0, Ab1, Ab2)
    out[0] = B0 - 0.5 * AB0 + g2 * AAB0
    out[1] = B1 - 0.5 * AB1 + g2 * AAB1
    out[2] = B2 - 0.5 * AB2 + g2 * AAB2
    rg = rho * g2t
    out[3] = b0 - 0.5 * (aB0 + Ab0) + rg * AAB0 + g2 * (t10 + t20 + t30)
    out[4] = b1 - 0.5 * (aB1 + Ab1) + rg * AAB1 + g2 * (t11 + t21 + t31)
    out[5] = b2 - 0.5 * (aB2 + Ab2) + rg * AAB2 + g2 * (t12 + t22 + t32)
