"""SO(3) / so(3): hat, exp, log, Jacobians, dexp, quaternions (x, y, z, w), URDF roll-pitch-yaw.

Rotation vectors w are 3-vectors; the 6-vector order of ``se3`` (linear, angular) does not
arise here.

dexp is right-trivialised (Celledoni et al. 2021, §2.2, eq. 7):
d/dt exp(u) = [dexp_u(u')] exp(u),  dexp_u = sum_k ad_u^k / (k+1)!,  so dexp = left Jacobian.
Closed forms switch to Taylor series for angles below ``_SMALL`` (where they cancel digits).
"""
import math
from fractions import Fraction
from math import comb, factorial

import numpy as np

from ..errors import InputError

_SMALL = 0.5   # below this angle the closed-form coefficients use their Taylor series
_NT = 8        # Taylor terms (in z^2); truncation error ~ _SMALL^16 / (2*8)!, negligible


def _vec(x, n, name):
    a = np.asarray(x, dtype=float)
    if a.shape != (n,):
        raise InputError(f"{name} must have shape ({n},), got {a.shape}")
    return a


def _mat(X, shape, name):
    a = np.asarray(X, dtype=float)
    if a.shape != shape:
        raise InputError(f"{name} must have shape {shape}, got {a.shape}")
    return a


#: tolerance of the rotation check: |R^T R - I|_max (as the URDF origins of model/builder.py)
ROTATION_TOL = 1e-6


def _rotation(R, name):
    """R as a 3x3 array, checked: finite, orthonormal to ROTATION_TOL, det +1."""
    R = _mat(R, (3, 3), name)
    _check_rotation(R.tolist(), name)
    return R


def _check_rotation(rows, name):
    """The check of ``_rotation`` on the 3 rows of R as Python floats (numpy costs ~8 us here,
    this ~2 us)."""
    (a, b, c), (d, e, f), (g, h, i) = rows[0][:3], rows[1][:3], rows[2][:3]
    if not math.isfinite(a + b + c + d + e + f + g + h + i):
        raise InputError(f"{name} must be finite, got {[r[:3] for r in rows[:3]]}")
    err = max(abs(a * a + d * d + g * g - 1.0), abs(b * b + e * e + h * h - 1.0),
              abs(c * c + f * f + i * i - 1.0), abs(a * b + d * e + g * h),
              abs(a * c + d * f + g * i), abs(b * c + e * f + h * i))      # |R^T R - I|_max
    if not err <= ROTATION_TOL:
        raise InputError(f"{name}: the rotation is not orthonormal "
                         f"(|R^T R - I| = {err:.3g}, tolerance {ROTATION_TOL:g})")
    if (d * h - g * e) * c + (g * b - a * h) * f + (a * e - d * b) * i < 0.0:
        raise InputError(f"{name}: the rotation is a reflection (det -1), not a rotation")


def bernoulli(n):
    """Bernoulli numbers B_0..B_n (B_1 = -1/2) as Fractions."""
    B = [Fraction(1)]
    for m in range(1, n + 1):
        B.append(-sum(comb(m + 1, j) * B[j] for j in range(m)) / (m + 1))
    return B


_BN = bernoulli(2 * _NT + 2)
# Taylor coefficients in x = z^2 of the scalar functions used below
_S1 = [(-1) ** k / factorial(2 * k + 1) for k in range(_NT)]          # sin z / z
_G1 = [(-1) ** k / factorial(2 * k + 2) for k in range(_NT)]          # (1 - cos z) / z^2
_G2 = [(-1) ** k / factorial(2 * k + 3) for k in range(_NT)]          # (z - sin z) / z^3
_D2 = [float((-1) ** (n + 1) * _BN[2 * n] / factorial(2 * n))         # (1 - z/2 cot z/2) / z^2
       for n in range(1, _NT + 1)]


def _dz(c):
    """Coefficients of g'(z)/z from those of g (both in x = z^2)."""
    return [2 * k * c[k] for k in range(1, len(c))]


_G1T, _G2T, _D2T = _dz(_G1), _dz(_G2), _dz(_D2)

#: the angle below which ``exp_coeffs``/``inv_coeffs`` use their series (the compiled twins too)
SMALL_ANGLE = _SMALL


def series_coefficients():
    """Taylor coefficients (in t^2) of sin t/t, (1-cos t)/t^2, (t-sin t)/t^3,
    (1-(t/2)cot(t/2))/t^2 and of the last one's derivative / t: the compiled twins use the same
    numbers (``kernels/lie.py``)."""
    return tuple(np.array(c) for c in (_S1, _G1, _G2, _D2, _D2T))


def _poly(c, x):
    """sum_k c[k] x^k by Horner on Python floats (np.polyval costs ~15 us on scalars)."""
    x = float(x)
    acc = 0.0
    for ck in reversed(c):
        acc = acc * x + ck
    return acc


def exp_coeffs(t):
    """(sin t/t, (1-cos t)/t^2, (t-sin t)/t^3), series for small t."""
    if t < _SMALL:
        x = t * t
        return _poly(_S1, x), _poly(_G1, x), _poly(_G2, x)
    s = np.sin(t)
    return s / t, 2.0 * np.sin(0.5 * t) ** 2 / (t * t), (t - s) / t ** 3


def exp_coeffs_d(t):
    """(g1'(t)/t, g2'(t)/t) for g1 = (1-cos t)/t^2, g2 = (t-sin t)/t^3 (Celledoni 2021, §2.3)."""
    if t < _SMALL:
        x = t * t
        return _poly(_G1T, x), _poly(_G2T, x)
    s, c = np.sin(t), np.cos(t)
    return (t * s - 2.0 + 2.0 * c) / t ** 4, (3.0 * s - 2.0 * t - t * c) / t ** 5


def inv_coeffs(t):
    """(g2, g2'(t)/t) for g2 = (1 - (t/2)cot(t/2))/t^2 (dexp^-1, Celledoni 2021, §2.3), singular
    at 2*pi."""
    if t < _SMALL:
        x = t * t
        return _poly(_D2, x), _poly(_D2T, x)
    h = 0.5 * t
    cot, s = np.cos(h) / np.sin(h), np.sin(h)
    g2 = (1.0 - h * cot) / (t * t)
    return g2, (-2.0 / t ** 3 + cot / (2.0 * t * t) + 1.0 / (4.0 * t * s * s)) / t


def series(adm, order):
    """Truncated Bernoulli series sum_{k<=order} B_k/k! adm^k (coeffs 1, -1/2, 1/12, 0, -1/720...)."""
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or order < 0:
        raise InputError(f"order must be None or a non-negative int, got {order!r}")
    B = bernoulli(int(order))
    out, P = np.zeros_like(adm), np.eye(adm.shape[0])
    for k in range(int(order) + 1):
        out += float(B[k] / factorial(k)) * P
        P = P @ adm
    return out


# --------------------------------------------------------------------------- algebra / group
def hat(w):
    """[w]: 3-vector -> 3x3 skew matrix (Kim eq 5)."""
    w = _vec(w, 3, "w")
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def cross(a, b):
    """a x b for 3-vectors (several times faster than np.cross on tiny arrays)."""
    a0, a1, a2 = a
    b0, b1, b2 = b
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


def vee(W):
    """Inverse of hat (uses the skew part of W)."""
    W = _mat(W, (3, 3), "W")
    return 0.5 * np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]])


def exp(w):
    """Rodrigues: exp([w]) = I + sin t/t [w] + (1-cos t)/t^2 [w]^2."""
    w = _vec(w, 3, "w")
    A, B, _ = exp_coeffs(np.linalg.norm(w))
    W = hat(w)
    return np.eye(3) + A * W + B * (W @ W)


def log(R):
    """Rotation vector w in [0, pi] with exp(w) = R; symmetric-part method for angles > pi/2."""
    return _log(_rotation(R, "R"))


def _log(R):
    """so3.log of a checked rotation."""
    s_vec = vee(R)                       # sin(t) n
    s, c = np.linalg.norm(s_vec), 0.5 * (np.trace(R) - 1.0)
    t = np.arctan2(s, c)
    if c > 0.0:
        return s_vec * (t / s if s > 0.0 else 1.0)
    c = max(c, -1.0)
    B = 0.5 * (R + R.T) - c * np.eye(3)  # (1 - cos t) n n^T
    k = int(np.argmax(np.diag(B)))
    n = B[:, k] / np.linalg.norm(B[:, k])
    if n @ s_vec < 0.0:
        n = -n
    return t * n


def left_jacobian(w):
    """J_l(w) = sum [w]^k/(k+1)! = dexp_w (right-trivialised)."""
    w = _vec(w, 3, "w")
    _, B, C = exp_coeffs(np.linalg.norm(w))
    W = hat(w)
    return np.eye(3) + B * W + C * (W @ W)


def left_jacobian_inv(w):
    """J_l(w)^-1 = I - [w]/2 + (1 - (t/2)cot(t/2))/t^2 [w]^2 (singular at t = 2 pi)."""
    w = _vec(w, 3, "w")
    D, _ = inv_coeffs(np.linalg.norm(w))
    W = hat(w)
    return np.eye(3) - 0.5 * W + D * (W @ W)


def right_jacobian(w):
    """J_r(w) = J_l(-w) = J_l(w)^T."""
    return left_jacobian(-_vec(w, 3, "w"))


def right_jacobian_inv(w):
    """J_r(w)^-1 = J_l(-w)^-1."""
    return left_jacobian_inv(-_vec(w, 3, "w"))


def dexp(w):
    """dexp_w, right-trivialised: d/dt exp(w) = [dexp_w w'] exp(w) (Celledoni eq 7)."""
    return left_jacobian(w)


def dexp_inv(w, order=None):
    """dexp_w^-1; order=None: closed form (Celledoni §2.2); int k: Bernoulli series to ad^k (eq 8)."""
    if order is None:
        return left_jacobian_inv(w)
    return series(hat(w), order)


# --------------------------------------------------------------------------- quaternions (x, y, z, w)
def _quat(q):
    q = _vec(q, 4, "q")
    n = np.linalg.norm(q)
    if not n > 0.0 or not np.isfinite(n):
        raise InputError("quaternion must be finite and non-zero")
    return q / n


def quat_to_rot(q):
    """Rotation matrix of the (normalised) quaternion (x, y, z, w)."""
    x, y, z, w = _quat(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def rot_to_quat(R):
    """Unit quaternion (x, y, z, w), w >= 0, by Shepperd's method (largest of tr, R_ii)."""
    R = _mat(R, (3, 3), "R")
    tr = np.trace(R)
    k = int(np.argmax([R[0, 0], R[1, 1], R[2, 2], tr]))
    if k == 3:
        r = np.sqrt(1.0 + tr)
        q = np.array([(R[2, 1] - R[1, 2]) / (2 * r), (R[0, 2] - R[2, 0]) / (2 * r),
                      (R[1, 0] - R[0, 1]) / (2 * r), 0.5 * r])
    else:
        i, j, m = k, (k + 1) % 3, (k + 2) % 3
        r = np.sqrt(max(1.0 + R[i, i] - R[j, j] - R[m, m], 0.0))
        q = np.empty(4)
        q[i], q[j], q[m] = 0.5 * r, (R[j, i] + R[i, j]) / (2 * r), (R[m, i] + R[i, m]) / (2 * r)
        q[3] = (R[m, j] - R[j, m]) / (2 * r)
    q /= np.linalg.norm(q)
    return -q if q[3] < 0.0 else q


def quat_multiply(a, b):
    """Hamilton product a*b in (x, y, z, w): quat_to_rot(a*b) = quat_to_rot(a) @ quat_to_rot(b)."""
    a, b = _vec(a, 4, "a"), _vec(b, 4, "b")
    va, vb = a[:3], b[:3]
    return np.concatenate([a[3] * vb + b[3] * va + np.cross(va, vb), [a[3] * b[3] - va @ vb]])


def quat_exp(w):
    """Unit quaternion (x, y, z, w) of exp(w)."""
    w = _vec(w, 3, "w")
    t = np.linalg.norm(w)
    k = 0.5 * _poly(_S1, 0.25 * t * t) if t < _SMALL else np.sin(0.5 * t) / t  # sin(t/2)/t
    return np.concatenate([k * w, [np.cos(0.5 * t)]])


def quat_log(q):
    """Rotation vector w (|w| <= pi) with quat_exp(w) = +-q."""
    q = _quat(q)
    if q[3] < 0.0:
        q = -q
    v = q[:3]
    n = np.linalg.norm(v)
    t = 2.0 * np.arctan2(n, q[3])
    return v * (t / n if n > 0.0 else 2.0 / q[3])


# --------------------------------------------------------------------------- roll-pitch-yaw
def from_rpy(rpy):
    """URDF/SDF rpy (fixed axes X, then Y, then Z): R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = rpy
    cr, sr, cp, sp = math.cos(r), math.sin(r), math.cos(p), math.sin(p)
    cy, sy = math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def to_rpy(R):
    """(roll, pitch, yaw) with from_rpy(to_rpy(R)) = R; yaw = 0 at pitch = +-pi/2 (gimbal lock)."""
    p = math.asin(max(-1.0, min(1.0, -R[2, 0])))
    if abs(R[2, 0]) < 1 - 1e-12:
        r, y = math.atan2(R[2, 1], R[2, 2]), math.atan2(R[1, 0], R[0, 0])
    else:
        r, y = math.atan2(-R[1, 2], R[1, 1]), 0.0
    return (r, p, y)
