"""Compiled bodies of the public SE(3) algebra (``lie.se3``), in its (linear, angular) order,
each with the argument checks of its Python front: a kernel returns 0, or k > 0 when its k-th
argument fails them (the front then raises the documented ``InputError``).

A pose T is a C-contiguous float64 4x4 array; it passes when finite, with an orthonormal
rotation block of det +1 and a last row (0, 0, 0, 1), to ``POSE_TOL`` (= ``so3.ROTATION_TOL``),
computed as ``lie.so3._check_rotation`` computes it so that both agree on every input. The
formulas are ``lie.se3``'s (its ``*_unchecked`` twins, the reference that
``test/test_se3_compiled.py`` compares with): Kim (2012, eqs. 4-8, 27) with the 3-blocks
swapped, dexp and its inverse in the closed form of Celledoni et al. (2021, §2.3).
"""
from math import factorial

import numpy as np

from .jit import JIT, njit
from .lie import cross, exp_coeffs, inv_coeffs, left_jacobian_apply, so3_exp

POSE_TOL = 1e-6       # so3.ROTATION_TOL
_SMALL = 0.5          # so3.SMALL_ANGLE
_NT = 8
# Taylor coefficients (in t^2) of g1'(t)/t and g2'(t)/t, g1 = (1-cos t)/t^2, g2 = (t-sin t)/t^3
_G1T = np.array([2 * k * (-1) ** k / factorial(2 * k + 2) for k in range(1, _NT)])
_G2T = np.array([2 * k * (-1) ** k / factorial(2 * k + 3) for k in range(1, _NT)])

VEC = "float64[::1]"         # a C-contiguous vector (3 or 6) and matrix (4x4 or 6x6)
MAT = "float64[:, ::1]"


@njit(inline="always", **JIT)
def _horner(c, x):
    acc = 0.0
    for k in range(c.shape[0] - 1, -1, -1):
        acc = acc * x + c[k]
    return acc


@njit(**JIT)
def _exp_coeffs_d(t):
    """(g1'(t)/t, g2'(t)/t) = ``so3.exp_coeffs_d``."""
    if t < _SMALL:
        x = t * t
        return _horner(_G1T, x), _horner(_G2T, x)
    s, c = np.sin(t), np.cos(t)
    return (t * s - 2.0 + 2.0 * c) / t ** 4, (3.0 * s - 2.0 * t - t * c) / t ** 5


@njit(**JIT)
def pose_ok(T):
    """The checks of ``se3._pose_checked``, in its order of operations."""
    if T.shape[0] != 4 or T.shape[1] != 4:
        return False
    r3 = ((0.0 + T[3, 0]) + T[3, 1]) + T[3, 2] + T[3, 3]
    if not np.isfinite(T[0, 3] + T[1, 3] + T[2, 3] + r3):
        return False
    a, b, c, d, e, f, g, h, i = (T[0, 0], T[0, 1], T[0, 2], T[1, 0], T[1, 1], T[1, 2],
                                 T[2, 0], T[2, 1], T[2, 2])
    if not np.isfinite(a + b + c + d + e + f + g + h + i):
        return False
    err = max(abs(a * a + d * d + g * g - 1.0), abs(b * b + e * e + h * h - 1.0),
              abs(c * c + f * f + i * i - 1.0), abs(a * b + d * e + g * h),
              abs(a * c + d * f + g * i), abs(b * c + e * f + h * i))
    if not err <= POSE_TOL:
        return False
    if (d * h - g * e) * c + (g * b - a * h) * f + (a * e - d * b) * i < 0.0:
        return False
    return not (abs(T[3, 0]) + abs(T[3, 1]) + abs(T[3, 2]) + abs(T[3, 3] - 1.0) > POSE_TOL)


@njit(**JIT)
def vec_ok(x, n):
    """Length n and a finite sum (``se3._vec``; numpy sums fewer than 8 numbers in order)."""
    if x.shape[0] != n:
        return False
    s = 0.0
    for k in range(n):
        s += x[k]
    return np.isfinite(s)


@njit(inline="always", **JIT)
def _write_pose(R, p, out):
    for r in range(3):
        out[r, 0], out[r, 1], out[r, 2], out[r, 3] = R[3 * r], R[3 * r + 1], R[3 * r + 2], p[r]
    out[3, 0], out[3, 1], out[3, 2], out[3, 3] = 0.0, 0.0, 0.0, 1.0


@njit(**JIT)
def exp(xi, out):
    """out = exp(xi) = (exp(w), J_l(w) v), xi = (v, w)."""
    if not vec_ok(xi, 6):
        return 1
    R = np.empty(9)
    so3_exp(xi[3], xi[4], xi[5], R)
    p = left_jacobian_apply(xi[3], xi[4], xi[5], xi[0], xi[1], xi[2])
    _write_pose(R, p, out)
    return 0


@njit(inline="always", **JIT)
def _so3_log(T):
    """``so3._log`` of the rotation block of T (checked)."""
    s0, s1, s2 = 0.5 * (T[2, 1] - T[1, 2]), 0.5 * (T[0, 2] - T[2, 0]), 0.5 * (T[1, 0] - T[0, 1])
    s = np.sqrt(s0 * s0 + s1 * s1 + s2 * s2)
    c = 0.5 * (T[0, 0] + T[1, 1] + T[2, 2] - 1.0)
    t = np.arctan2(s, c)
    if c > 0.0:
        k = t / s if s > 0.0 else 1.0
        return s0 * k, s1 * k, s2 * k
    c = max(c, -1.0)
    # B = (R + R^T)/2 - c I = (1 - cos t) n n^T: its largest diagonal entry's column is ~ n
    j = 0
    for m in (1, 2):
        if T[m, m] - c > T[j, j] - c:
            j = m
    n0, n1, n2 = 0.5 * (T[0, j] + T[j, 0]), 0.5 * (T[1, j] + T[j, 1]), 0.5 * (T[2, j] + T[j, 2])
    if j == 0:
        n0 -= c
    elif j == 1:
        n1 -= c
    else:
        n2 -= c
    nn = np.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    k = t / nn if n0 * s0 + n1 * s1 + n2 * s2 >= 0.0 else -t / nn
    return n0 * k, n1 * k, n2 * k


@njit(inline="always", **JIT)
def _log_into(T, out):
    w0, w1, w2 = _so3_log(T)
    g2, _ = inv_coeffs(np.sqrt(w0 * w0 + w1 * w1 + w2 * w2))
    x0, x1, x2 = T[0, 3], T[1, 3], T[2, 3]
    c0, c1, c2 = cross(w0, w1, w2, x0, x1, x2)
    d0, d1, d2 = cross(w0, w1, w2, c0, c1, c2)
    out[0], out[1], out[2] = (x0 - 0.5 * c0 + g2 * d0, x1 - 0.5 * c1 + g2 * d1,
                              x2 - 0.5 * c2 + g2 * d2)
    out[3], out[4], out[5] = w0, w1, w2


@njit(**JIT)
def log(T, out):
    """out = log(T) = (J_l(w)^-1 p, w), |w| <= pi."""
    if not pose_ok(T):
        return 1
    _log_into(T, out)
    return 0


@njit(**JIT)
def inv(T, out):
    """out = T^-1 = (R^T, -R^T p) (Kim eq. 4)."""
    if not pose_ok(T):
        return 1
    for r in range(3):
        out[r, 0], out[r, 1], out[r, 2] = T[0, r], T[1, r], T[2, r]
        out[r, 3] = -(T[0, r] * T[0, 3] + T[1, r] * T[1, 3] + T[2, r] * T[2, 3])
    out[3, 0], out[3, 1], out[3, 2], out[3, 3] = 0.0, 0.0, 0.0, 1.0
    return 0


@njit(**JIT)
def compose(A, B, out, check_a):
    """out = A @ B; A is checked only with ``check_a`` (a running product is not an input)."""
    if check_a and not pose_ok(A):
        return 1
    if not pose_ok(B):
        return 2
    for r in range(4):
        for c in range(4):
            out[r, c] = (A[r, 0] * B[0, c] + A[r, 1] * B[1, c] + A[r, 2] * B[2, c]
                         + A[r, 3] * B[3, c])
    return 0


# ------------------------------------------------------------------------- group actions
@njit(inline="always", **JIT)
def _rx(T, x0, x1, x2):
    """R x."""
    return (T[0, 0] * x0 + T[0, 1] * x1 + T[0, 2] * x2, T[1, 0] * x0 + T[1, 1] * x1 + T[1, 2] * x2,
            T[2, 0] * x0 + T[2, 1] * x1 + T[2, 2] * x2)


@njit(inline="always", **JIT)
def _rtx(T, x0, x1, x2):
    """R^T x."""
    return (T[0, 0] * x0 + T[1, 0] * x1 + T[2, 0] * x2, T[0, 1] * x0 + T[1, 1] * x1 + T[2, 1] * x2,
            T[0, 2] * x0 + T[1, 2] * x1 + T[2, 2] * x2)


@njit(**JIT)
def act_point(T, x, inverse, out):
    """out = R x + p, or R^T (x - p) with ``inverse``."""
    if not pose_ok(T):
        return 1
    if not vec_ok(x, 3):
        return 2
    if inverse:
        out[0], out[1], out[2] = _rtx(T, x[0] - T[0, 3], x[1] - T[1, 3], x[2] - T[2, 3])
    else:
        y0, y1, y2 = _rx(T, x[0], x[1], x[2])
        out[0], out[1], out[2] = y0 + T[0, 3], y1 + T[1, 3], y2 + T[2, 3]
    return 0


@njit(**JIT)
def act6(T, x, kind, out):
    """kind 0: Ad_T xi = (R v + p x R w, R w); 1: Ad_{T^-1} xi = (R^T (v - p x w), R^T w);
    2: Ad_{T^-1}^T F = (R f, R m + p x R f); 3: Ad_T^T F = (R^T f, R^T (m - p x f))."""
    if not pose_ok(T):
        return 1
    if not vec_ok(x, 6):
        return 2
    p0, p1, p2 = T[0, 3], T[1, 3], T[2, 3]
    if kind == 0 or kind == 2:
        a0, a1, a2 = _rx(T, x[0], x[1], x[2])
        b0, b1, b2 = _rx(T, x[3], x[4], x[5])
        if kind == 0:          # a = R v, b = R w
            c0, c1, c2 = cross(p0, p1, p2, b0, b1, b2)
            out[0], out[1], out[2], out[3], out[4], out[5] = a0 + c0, a1 + c1, a2 + c2, b0, b1, b2
        else:                  # a = R f, b = R m
            c0, c1, c2 = cross(p0, p1, p2, a0, a1, a2)
            out[0], out[1], out[2], out[3], out[4], out[5] = a0, a1, a2, b0 + c0, b1 + c1, b2 + c2
    elif kind == 1:
        c0, c1, c2 = cross(p0, p1, p2, x[3], x[4], x[5])
        out[0], out[1], out[2] = _rtx(T, x[0] - c0, x[1] - c1, x[2] - c2)
        out[3], out[4], out[5] = _rtx(T, x[3], x[4], x[5])
    else:
        c0, c1, c2 = cross(p0, p1, p2, x[0], x[1], x[2])
        out[0], out[1], out[2] = _rtx(T, x[0], x[1], x[2])
        out[3], out[4], out[5] = _rtx(T, x[3] - c0, x[4] - c1, x[5] - c2)
    return 0


@njit(**JIT)
def Ad(T, inverse, out):
    """out = Ad_T = [[R, [p]R], [0, R]], or Ad_{T^-1} = [[R^T, -R^T[p]], [0, R^T]]."""
    if not pose_ok(T):
        return 1
    out[3:, :3] = 0.0
    p0, p1, p2 = T[0, 3], T[1, 3], T[2, 3]
    for c in range(3):
        if inverse:      # column c of R^T is row c of R; row c of -R^T [p] is p x (R e_c)
            r0, r1, r2 = T[c, 0], T[c, 1], T[c, 2]
            out[c, 3], out[c, 4], out[c, 5] = cross(p0, p1, p2, T[0, c], T[1, c], T[2, c])
        else:            # column c of [p] R is p x (R e_c)
            r0, r1, r2 = T[0, c], T[1, c], T[2, c]
            out[0, c + 3], out[1, c + 3], out[2, c + 3] = cross(p0, p1, p2, r0, r1, r2)
        out[0, c] = out[3, c + 3] = r0
        out[1, c] = out[4, c + 3] = r1
        out[2, c] = out[5, c + 3] = r2
    return 0


@njit(inline="always", **JIT)
def _hat_into(out, r, c, x0, x1, x2, s):
    """out[r:r+3, c:c+3] = s [x]."""
    out[r, c], out[r, c + 1], out[r, c + 2] = 0.0, -s * x2, s * x1
    out[r + 1, c], out[r + 1, c + 1], out[r + 1, c + 2] = s * x2, 0.0, -s * x0
    out[r + 2, c], out[r + 2, c + 1], out[r + 2, c + 2] = -s * x1, s * x0, 0.0


@njit(**JIT)
def ad(xi, out):
    """out = ad_xi = [[[w], [v]], [0, [w]]] (Kim eq. 27, blocks swapped)."""
    if not vec_ok(xi, 6):
        return 1
    out[3:, :3] = 0.0
    _hat_into(out, 0, 0, xi[3], xi[4], xi[5], 1.0)
    _hat_into(out, 3, 3, xi[3], xi[4], xi[5], 1.0)
    _hat_into(out, 0, 3, xi[0], xi[1], xi[2], 1.0)
    return 0


@njit(inline="always", **JIT)
def _phi_ad(s, x, g1, g2, g1t, g2t, out):
    """out = phi(ad_{s x}) with phi(0) = 1 from g1, g2, g1~, g2~ (``se3._phi_ad``): diagonal
    blocks I + g1 [w] + g2 [w]^2, upper block g1 [v] + rho (g1~ [w] + g2~ [w]^2)
    + g2 ([v][w] + [w][v]), with (v, w) = s x, rho = w . v."""
    v0, v1, v2, w0, w1, w2 = s * x[0], s * x[1], s * x[2], s * x[3], s * x[4], s * x[5]
    rho = w0 * v0 + w1 * v1 + w2 * v2
    ww = w0 * w0 + w1 * w1 + w2 * w2
    wv = w0 * v0 + w1 * v1 + w2 * v2
    w = (w0, w1, w2)
    v = (v0, v1, v2)
    out[3:, :3] = 0.0
    for r in range(3):
        for c in range(3):
            d = 1.0 if r == c else 0.0
            # [w]^2 = w w^T - |w|^2 I; [v][w] + [w][v] = w v^T + v w^T - 2 (w.v) I
            W2 = w[r] * w[c] - ww * d
            VW = w[r] * v[c] + v[r] * w[c] - 2.0 * wv * d
            Hw = _hat_entry(w0, w1, w2, r, c)
            Hv = _hat_entry(v0, v1, v2, r, c)
            out[r, c] = out[r + 3, c + 3] = d + g1 * Hw + g2 * W2
            out[r, c + 3] = g1 * Hv + rho * (g1t * Hw + g2t * W2) + g2 * VW


@njit(inline="always", **JIT)
def _hat_entry(x0, x1, x2, r, c):
    if r == c:
        return 0.0
    if r == 0:
        return -x2 if c == 1 else x1
    if r == 1:
        return x2 if c == 0 else -x0
    return -x1 if c == 0 else x0


@njit(**JIT)
def dexp(xi, s, out):
    """out = dexp_{s xi} (s = -1: the right Jacobian J_r(xi), Pinocchio's Jexp6)."""
    if not vec_ok(xi, 6):
        return 1
    t = np.sqrt(xi[3] * xi[3] + xi[4] * xi[4] + xi[5] * xi[5])
    _, g1, g2 = exp_coeffs(t)
    g1t, g2t = _exp_coeffs_d(t)
    _phi_ad(s, xi, g1, g2, g1t, g2t, out)
    return 0


@njit(**JIT)
def dexp_inv(xi, s, out):
    """out = dexp_{s xi}^-1 (singular at |w| = 2 pi)."""
    if not vec_ok(xi, 6):
        return 1
    g2, g2t = inv_coeffs(np.sqrt(xi[3] * xi[3] + xi[4] * xi[4] + xi[5] * xi[5]))
    _phi_ad(s, xi, -0.5, g2, 0.0, g2t, out)
    return 0


@njit(**JIT)
def log_jacobian(T, out):
    """out = dexp_{-log T}^-1 = J_r(log T)^-1 (Pinocchio's Jlog6)."""
    if not pose_ok(T):
        return 1
    xi = np.empty(6)
    _log_into(T, xi)
    g2, g2t = inv_coeffs(np.sqrt(xi[3] * xi[3] + xi[4] * xi[4] + xi[5] * xi[5]))
    _phi_ad(-1.0, xi, -0.5, g2, 0.0, g2t, out)
    return 0


#: entry name: (dispatcher, its one signature); the front compiles each on first use and then
#: closes it to other argument types. Flags are int64 (numba dispatches an int faster than a bool)
SIGNATURES = {
    "exp": (exp, f"int64({VEC}, {MAT})"),
    "log": (log, f"int64({MAT}, {VEC})"),
    "inv": (inv, f"int64({MAT}, {MAT})"),
    "compose": (compose, f"int64({MAT}, {MAT}, {MAT}, int64)"),
    "act_point": (act_point, f"int64({MAT}, {VEC}, int64, {VEC})"),
    "act6": (act6, f"int64({MAT}, {VEC}, int64, {VEC})"),
    "Ad": (Ad, f"int64({MAT}, int64, {MAT})"),
    "ad": (ad, f"int64({VEC}, {MAT})"),
    "dexp": (dexp, f"int64({VEC}, float64, {MAT})"),
    "dexp_inv": (dexp_inv, f"int64({VEC}, float64, {MAT})"),
    "log_jacobian": (log_jacobian, f"int64({MAT}, {MAT})"),
}
