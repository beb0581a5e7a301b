"""SE(3) / se(3) in the public order: twist xi = (v, w) (linear, angular), wrench F = (f, m)
(force, torque), as ROS Twist/Wrench and Pinocchio. The same order as ``ldr.body_jacobian``.

Kim (2012) writes these operators angular first; each one below is his matrix with its two
3-blocks of rows and of columns swapped (the compiled kernels keep his order:
``lie_dynamics_ros/conventions.py``). T = (R, p) as a 4x4 matrix is the pose of frame {b} in
frame {a} (Kim writes T_ab: {a} -> {b}). Ad* := Ad^T and ad* := ad^T (Kim 2012, eqs. 8, 29).
dexp is right-trivialised: d/dt exp(u) = hat(dexp_u u') exp(u),  dexp_u = sum_k ad_u^k/(k+1)!.

This module is the package's public SE(3) algebra (functions on 4x4 arrays and 6-vectors, one
implementation; docs/api.md "SE(3) algebra" maps each to Pinocchio). Every function checks its
arguments: shape, finite entries, and for a pose T an orthonormal rotation block with det +1 and
a last row (0, 0, 0, 1), each to ``POSE_TOL``; a failure is an ``InputError`` naming the argument.

The group operations, actions, Ad, ad and the Jacobians of exp and log run as one compiled
call each (``kernels/se3_public.py``), which also does the checks; a failed check re-runs them
here to raise the error. The ``*_unchecked`` twins below are the numpy reference of those
formulas (``test/test_se3_compiled.py`` compares both paths) and what the per-step callers
inside the package use on float arrays they already hold.
"""
import math
import threading

import numpy as np

from . import so3
from .so3 import ROTATION_TOL as POSE_TOL, _check_rotation, _mat, _rotation, _vec as _shaped
from .so3 import _log as _so3_log
from ..errors import InputError
from ..kernels import se3_public as K

# POSE_TOL (= so3.ROTATION_TOL): tolerance of |R^T R - I|_max and |last row - (0, 0, 0, 1)|_max

_empty = np.empty          # one attribute lookup less per call (~50 ns of a ~500 ns call)


class _Ready:
    """Which entries of ``kernels.se3_public.SIGNATURES`` are compiled and closed (one
    attribute per entry)."""
    exp = log = inv = compose = act_point = act6 = Ad = ad = False
    dexp = dexp_inv = log_jacobian = False


_ready = _Ready()


_open_lock = threading.Lock()


def _open(name):
    """Compile (or load from numba's cache) the entry ``name`` for its one signature, then close
    it to other argument types: a call with any other type is a TypeError, which the fronts
    answer by converting the argument. Once per entry (numba refuses to compile a closed one)."""
    with _open_lock:
        if not getattr(_ready, name):
            fn, sig = K.SIGNATURES[name]
            fn.compile(sig)
            fn.disable_compile()
            setattr(_ready, name, True)


def _pose_arg(T, name="T"):
    """T as a writable C-contiguous float64 array (shape checked; the rest in the kernel)."""
    return np.array(_mat(T, (4, 4), name), order="C")


def _vec_arg(x, n, name):
    return np.array(_shaped(x, n, name), order="C")


def _vec(x, n, name):
    a = _shaped(x, n, name)
    if not math.isfinite(a.sum()):     # NaN or Inf anywhere (or an overflowing sum)
        raise InputError(f"{name} must be finite, got {a.tolist()}")
    return a


def hat(xi):
    """xi = (v, w) -> [[ [w], v ], [0, 0]] (4x4, Kim eq 5)."""
    return hat_unchecked(_vec(xi, 6, "xi"))


def hat_unchecked(xi):
    """``hat`` of a float (6,) array, not checked."""
    X = np.zeros((4, 4))
    X[:3, :3], X[:3, 3] = so3.hat(xi[3:]), xi[:3]
    return X


def vee(X):
    """Inverse of hat."""
    X = _mat(X, (4, 4), "X")
    return np.concatenate([X[:3, 3], so3.vee(X[:3, :3])])


def make(R, p):
    """4x4 homogeneous matrix from R (3x3) and p (3,)."""
    return _pose(_rotation(R, "R"), _vec(p, 3, "p"))


def make_unchecked(R, p):
    """``make`` of a float 3x3 rotation and (3,) array, not checked."""
    return _pose(R, p)


def _pose(R, p):
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    return T


def _Rp(T, name="T"):
    """(R, p) of a pose, checked: finite, R orthonormal with det +1, last row (0, 0, 0, 1)."""
    T = _pose_checked(T, name)
    return T[:3, :3], T[:3, 3]


def _pose_checked(T, name="T"):
    """T as a float 4x4 array, checked as ``_Rp`` says."""
    T = _mat(T, (4, 4), name)
    rows = T.tolist()
    r3 = rows[3]
    if not math.isfinite(rows[0][3] + rows[1][3] + rows[2][3] + sum(r3)):
        raise InputError(f"{name} must be finite, got {rows}")
    _check_rotation(rows, name)
    if abs(r3[0]) + abs(r3[1]) + abs(r3[2]) + abs(r3[3] - 1.0) > POSE_TOL:
        raise InputError(f"{name}: the last row must be (0, 0, 0, 1), got {r3}")
    return T


def exp(xi):
    """exp(hat(xi)) = (exp(w), J_l(w) v) (closed form, series near 0)."""
    if not _ready.exp:
        _open("exp")
    out = _empty((4, 4))
    try:
        bad = K.exp(xi, out)
    except TypeError:          # not a C-contiguous float64 vector: converted, shape checked
        bad = K.exp(_vec_arg(xi, 6, "xi"), out)
    if bad:                    # the failed check again, here, raises its InputError
        return exp_unchecked(_vec(xi, 6, "xi"))
    return out


def exp_unchecked(xi):
    """``exp`` of a float (6,) array, not checked."""
    return _pose(so3.exp(xi[3:]), so3.left_jacobian(xi[3:]) @ xi[:3])


def log(T):
    """xi = (v, w) with exp(xi) = T, |w| <= pi: w = so3.log(R), v = J_l(w)^-1 p."""
    if not _ready.log:
        _open("log")
    out = _empty(6)
    try:
        bad = K.log(T, out)
    except TypeError:
        bad = K.log(_pose_arg(T), out)
    if bad:
        return log_unchecked(_pose_checked(T))
    return out


def log_unchecked(T):
    """``log`` of a float 4x4 pose, not checked."""
    w = _so3_log(T[:3, :3])
    return np.concatenate([so3.left_jacobian_inv(w) @ T[:3, 3], w])


def inv(T):
    """T^-1 = (R^T, -R^T p) (Kim eq 4)."""
    if not _ready.inv:
        _open("inv")
    out = _empty((4, 4))
    try:
        bad = K.inv(T, out)
    except TypeError:
        bad = K.inv(_pose_arg(T), out)
    if bad:
        return inv_unchecked(_pose_checked(T))
    return out


def inv_unchecked(T):
    """``inv`` of a float 4x4 pose, not checked."""
    R, p = T[:3, :3], T[:3, 3]
    return _pose(R.T, -R.T @ p)


def compose(*Ts):
    """T1 @ T2 @ ... (identity for no argument)."""
    if not _ready.compose:
        _open("compose")
    if len(Ts) == 2:
        A, B = Ts
        out = _empty((4, 4))
        try:
            bad = K.compose(A, B, out, 1)
        except TypeError:
            bad = K.compose(_pose_arg(A, "T1"), _pose_arg(B, "T2"), out, 1)
        if bad:
            return compose_unchecked(_pose_checked(A, "T1"), _pose_checked(B, "T2"))
        return out
    out = np.eye(4)
    for k, T in enumerate(Ts):
        out = compose_unchecked(out, _pose_checked(T, f"T{k + 1}"))
    return out


def compose_unchecked(A, B):
    """A @ B of two float 4x4 poses, not checked."""
    return A @ B


def interpolate(T0, T1, s):
    """T0 exp(s log(T0^-1 T1)): the constant-twist path from T0 (s = 0) to T1 (s = 1)."""
    s = float(_vec([s], 1, "s")[0])
    _Rp(T0, "T0")
    _Rp(T1, "T1")
    return np.asarray(T0, float) @ exp(s * log(inv(T0) @ T1))


# --------------------------------------------------------------------------- group actions
def act_point(T, x):
    """T x = R x + p: a point given in frame {b} -> the same point in {a} (T: pose of {b} in
    {a})."""
    if not _ready.act_point:
        _open("act_point")
    out = _empty(3)
    try:
        bad = K.act_point(T, x, 0, out)
    except TypeError:
        bad = K.act_point(_pose_arg(T), _vec_arg(x, 3, "x"), 0, out)
    if bad:
        return act_point_unchecked(_pose_checked(T), _vec(x, 3, "x"))
    return out


def act_point_unchecked(T, x):
    """``act_point`` of a float 4x4 pose and a float (3,) array, not checked."""
    R, p = T[:3, :3], T[:3, 3]
    return R @ x + p


def act_inv_point(T, x):
    """T^-1 x = R^T (x - p): a point in {a} -> in {b}."""
    if not _ready.act_point:
        _open("act_point")
    out = _empty(3)
    try:
        bad = K.act_point(T, x, 1, out)
    except TypeError:
        bad = K.act_point(_pose_arg(T), _vec_arg(x, 3, "x"), 1, out)
    if bad:
        return act_inv_point_unchecked(_pose_checked(T), _vec(x, 3, "x"))
    return out


def act_inv_point_unchecked(T, x):
    """``act_inv_point`` of a float 4x4 pose and a float (3,) array, not checked."""
    R, p = T[:3, :3], T[:3, 3]
    return R.T @ (x - p)


def act_twist(T, xi):
    """Ad_T xi = (R v + p x R w, R w): a twist in {b} -> in {a}."""
    if not _ready.act6:
        _open("act6")
    out = _empty(6)
    try:
        bad = K.act6(T, xi, 0, out)
    except TypeError:
        bad = K.act6(_pose_arg(T), _vec_arg(xi, 6, "xi"), 0, out)
    if bad:
        return act_twist_unchecked(_pose_checked(T), _vec(xi, 6, "xi"))
    return out


def act_twist_unchecked(T, xi):
    """``act_twist`` of a float 4x4 pose and a float (6,) array, not checked."""
    R, p = T[:3, :3], T[:3, 3]
    w = R @ xi[3:]
    return np.concatenate([R @ xi[:3] + so3.cross(p, w), w])


def act_inv_twist(T, xi):
    """Ad_{T^-1} xi = (R^T (v - p x w), R^T w): a twist in {a} -> in {b}."""
    if not _ready.act6:
        _open("act6")
    out = _empty(6)
    try:
        bad = K.act6(T, xi, 1, out)
    except TypeError:
        bad = K.act6(_pose_arg(T), _vec_arg(xi, 6, "xi"), 1, out)
    if bad:
        return act_inv_twist_unchecked(_pose_checked(T), _vec(xi, 6, "xi"))
    return out


def act_inv_twist_unchecked(T, xi):
    """``act_inv_twist`` of a float 4x4 pose and a float (6,) array, not checked."""
    R, p = T[:3, :3], T[:3, 3]
    return np.concatenate([R.T @ (xi[:3] - so3.cross(p, xi[3:])), R.T @ xi[3:]])


def act_wrench(T, F):
    """Ad_{T^-1}^T F = (R f, R m + p x R f): a wrench in {b} -> in {a} (the same power with
    act_twist)."""
    if not _ready.act6:
        _open("act6")
    out = _empty(6)
    try:
        bad = K.act6(T, F, 2, out)
    except TypeError:
        bad = K.act6(_pose_arg(T), _vec_arg(F, 6, "F"), 2, out)
    if bad:
        return act_wrench_unchecked(_pose_checked(T), _vec(F, 6, "F"))
    return out


def act_wrench_unchecked(T, F):
    """``act_wrench`` of a float 4x4 pose and a float (6,) array, not checked."""
    R, p = T[:3, :3], T[:3, 3]
    f = R @ F[:3]
    return np.concatenate([f, R @ F[3:] + so3.cross(p, f)])


def act_inv_wrench(T, F):
    """Ad_T^T F = (R^T f, R^T (m - p x f)): a wrench in {a} -> in {b}."""
    if not _ready.act6:
        _open("act6")
    out = _empty(6)
    try:
        bad = K.act6(T, F, 3, out)
    except TypeError:
        bad = K.act6(_pose_arg(T), _vec_arg(F, 6, "F"), 3, out)
    if bad:
        return act_inv_wrench_unchecked(_pose_checked(T), _vec(F, 6, "F"))
    return out


def act_inv_wrench_unchecked(T, F):
    """``act_inv_wrench`` of a float 4x4 pose and a float (6,) array, not checked."""
    R, p = T[:3, :3], T[:3, 3]
    return np.concatenate([R.T @ F[:3], R.T @ (F[3:] - so3.cross(p, F[:3]))])


def Ad(T):
    """Ad_T = [[R, [p]R], [0, R]] (Kim eq 7, blocks swapped); hat(Ad_T xi) = T hat(xi) T^-1."""
    if not _ready.Ad:
        _open("Ad")
    out = _empty((6, 6))
    try:
        bad = K.Ad(T, 0, out)
    except TypeError:
        bad = K.Ad(_pose_arg(T), 0, out)
    if bad:
        return Ad_unchecked(_pose_checked(T))
    return out


def Ad_unchecked(T):
    """``Ad`` of a float 4x4 pose, not checked."""
    R, p = T[:3, :3], T[:3, 3]
    A = np.zeros((6, 6))
    A[:3, :3] = A[3:, 3:] = R
    A[:3, 3:] = so3.hat(p) @ R
    return A


def Ad_inv(T):
    """Ad_{T^-1} = [[R^T, -R^T[p]], [0, R^T]] without inverting T."""
    if not _ready.Ad:
        _open("Ad")
    out = _empty((6, 6))
    try:
        bad = K.Ad(T, 1, out)
    except TypeError:
        bad = K.Ad(_pose_arg(T), 1, out)
    if bad:
        return Ad_inv_unchecked(_pose_checked(T))
    return out


def Ad_inv_unchecked(T):
    """``Ad_inv`` of a float 4x4 pose, not checked."""
    R, p = T[:3, :3], T[:3, 3]
    A = np.zeros((6, 6))
    A[:3, :3] = A[3:, 3:] = R.T
    A[:3, 3:] = -R.T @ so3.hat(p)
    return A


def Ad_star(T):
    """Ad*_T := Ad_T^T (Kim eq 8); wrench transform F_b = Ad*_{T_ab} F_a (Kim eq 13)."""
    return Ad(T).T


def Ad_inv_star(T):
    """Ad_{T^-1}^T, the matrix of act_wrench (Pinocchio's ``SE3.dualAction``)."""
    return Ad_inv(T).T


def ad(xi):
    """ad_xi = [[[w], [v]], [0, [w]]] (Kim eq 27, Park eq 6, blocks swapped)."""
    if not _ready.ad:
        _open("ad")
    out = _empty((6, 6))
    try:
        bad = K.ad(xi, out)
    except TypeError:
        bad = K.ad(_vec_arg(xi, 6, "xi"), out)
    if bad:
        return ad_unchecked(_vec(xi, 6, "xi"))
    return out


def ad_unchecked(xi):
    """``ad`` of a float (6,) array, not checked."""
    A = np.zeros((6, 6))
    A[:3, :3] = A[3:, 3:] = so3.hat(xi[3:])
    A[:3, 3:] = so3.hat(xi[:3])
    return A


def ad_star(xi):
    """ad*_xi := ad_xi^T = [[-[w], 0], [-[v], -[w]]] (Kim eq 29, blocks swapped)."""
    return ad(xi).T


def bracket(x, y):
    """[x, y] = ad_x y = (w1 x v2 - w2 x v1, w1 x w2)."""
    return bracket_unchecked(_vec(x, 6, "x"), _vec(y, 6, "y"))


def bracket_unchecked(x, y):
    """``bracket`` of two float (6,) arrays, not checked."""
    out = np.empty(6)
    out[:3] = so3.cross(x[3:], y[:3]) - so3.cross(y[3:], x[:3])
    out[3:] = so3.cross(x[3:], y[3:])
    return out


def _phi_ad(xi, g1, g2, g1t, g2t):
    """Matrix of phi(ad_xi) with phi(0) = 1 from g1, g2, g1~, g2~ (Celledoni et al. 2021, §2.3)."""
    HA, Ha = so3.hat(xi[3:]), so3.hat(xi[:3])
    rho = xi[3:] @ xi[:3]
    HA2 = HA @ HA
    M = np.zeros((6, 6))
    M[:3, :3] = M[3:, 3:] = np.eye(3) + g1 * HA + g2 * HA2
    M[:3, 3:] = g1 * Ha + rho * (g1t * HA + g2t * HA2) + g2 * (Ha @ HA + HA @ Ha)
    return M


def dexp(xi):
    """dexp_xi = sum ad^k/(k+1)! = [[J_l(w), Q], [0, J_l(w)]] in closed form (series near 0)."""
    return _dexp(xi, 1.0)


def _dexp(xi, s):
    """dexp_{s xi} (s = +-1)."""
    if not _ready.dexp:
        _open("dexp")
    out = _empty((6, 6))
    try:
        bad = K.dexp(xi, s, out)
    except TypeError:
        bad = K.dexp(_vec_arg(xi, 6, "xi"), s, out)
    if bad:
        return dexp_unchecked(s * _vec(xi, 6, "xi"))
    return out


def dexp_unchecked(xi):
    """``dexp`` of a float (6,) array, not checked."""
    t = np.linalg.norm(xi[3:])
    _, g1, g2 = so3.exp_coeffs(t)
    return _phi_ad(xi, g1, g2, *so3.exp_coeffs_d(t))


def dexp_inv(xi, order=None):
    """dexp_xi^-1; order=None: exact (Celledoni et al. 2021, §2.3; singular at |w| = 2 pi);
    int k: sum_{j<=k} B_j/j! ad^j."""
    if order is not None:
        return dexp_inv_unchecked(_vec(xi, 6, "xi"), order)
    return _dexp_inv(xi, 1.0)


def _dexp_inv(xi, s):
    """dexp_{s xi}^-1 (s = +-1)."""
    if not _ready.dexp_inv:
        _open("dexp_inv")
    out = _empty((6, 6))
    try:
        bad = K.dexp_inv(xi, s, out)
    except TypeError:
        bad = K.dexp_inv(_vec_arg(xi, 6, "xi"), s, out)
    if bad:
        return dexp_inv_unchecked(s * _vec(xi, 6, "xi"))
    return out


def dexp_inv_unchecked(xi, order=None):
    """``dexp_inv`` of a float (6,) array, not checked."""
    if order is not None:
        return so3.series(ad_unchecked(xi), order)
    g2, g2t = so3.inv_coeffs(np.linalg.norm(xi[3:]))
    return _phi_ad(xi, -0.5, g2, 0.0, g2t)


# Right and left Jacobians of exp as defined by Sola et al. (2018, §III), on se(3):
# exp(xi + d) = exp(J_l(xi) d) exp(xi) = exp(xi) exp(J_r(xi) d), J_r(xi) = J_l(-xi).
def left_jacobian(xi):
    """J_l(xi) = dexp_xi (right-trivialised): exp(xi + d) ~ exp(J_l d) exp(xi)."""
    return _dexp(xi, 1.0)


def left_jacobian_inv(xi):
    """J_l(xi)^-1 = dexp_xi^-1 (singular at |w| = 2 pi)."""
    return _dexp_inv(xi, 1.0)


def right_jacobian(xi):
    """J_r(xi) = dexp_{-xi}: exp(xi + d) ~ exp(xi) exp(J_r d); Pinocchio's ``Jexp6(xi)``."""
    return _dexp(xi, -1.0)


def right_jacobian_inv(xi):
    """J_r(xi)^-1 = dexp_{-xi}^-1."""
    return _dexp_inv(xi, -1.0)


def log_jacobian(T):
    """d log(T exp(d)) / dd at d = 0 = J_r(log T)^-1 = dexp_{-log T}^-1; Pinocchio's
    ``Jlog6(T)``."""
    if not _ready.log_jacobian:
        _open("log_jacobian")
    out = _empty((6, 6))
    try:
        bad = K.log_jacobian(T, out)
    except TypeError:
        bad = K.log_jacobian(_pose_arg(T), out)
    if bad:
        return dexp_inv_unchecked(-log_unchecked(_pose_checked(T)))
    return out


# --------------------------------------------------------------------------- inertia
def spatial_inertia(mass, com, I_com, R_com=None):
    """6x6 inertia about the body origin, acting on (v, w) twists (Kim eq 22, blocks swapped):
    [[m 1, m[p]^T], [m[p], R Ic R^T + m[p]^T[p]]], as Pinocchio's ``Inertia.matrix()``.

    com = p: COM position in the body frame; I_com: 3x3 rotational inertia about the COM in the
    COM frame, whose orientation in the body frame is R_com (identity if None).
    """
    m = float(mass)
    p, Ic = _vec(com, 3, "com"), _mat(I_com, (3, 3), "I_com")
    R = np.eye(3) if R_com is None else _mat(R_com, (3, 3), "R_com")
    P = so3.hat(p)
    I = np.zeros((6, 6))
    I[3:, 3:] = R @ Ic @ R.T + m * P.T @ P
    I[3:, :3], I[:3, 3:], I[:3, :3] = m * P, m * P.T, m * np.eye(3)
    return I


def transform_inertia(T_ab, I_a):
    """Inertia I_a expressed in frame {a} -> the same body's inertia in frame {b} (Kim eq 21).

    T_ab is the pose of {b} in {a}; I_b = Ad*_{T_ab} I_a Ad_{T_ab}, so that the kinetic energy
    0.5 V^T I V is the same with V_a = Ad_{T_ab} V_b.
    """
    A = Ad(T_ab)
    return A.T @ _mat(I_a, (6, 6), "I_a") @ A


def inertia_to_parameters(I):
    """6x6 inertia -> (m, mc_x, mc_y, mc_z, Ixx, Ixy, Iyy, Ixz, Iyz, Izz) (Pinocchio order,
    rotational inertia about the frame origin)."""
    I = _mat(I, (6, 6), "I")
    J = 0.5 * (I[3:, 3:] + I[3:, 3:].T)
    mc = so3.vee(I[3:, :3])
    m = np.trace(I[:3, :3]) / 3.0
    return np.array([m, *mc, J[0, 0], J[0, 1], J[1, 1], J[0, 2], J[1, 2], J[2, 2]])


def parameters_to_inertia(pi):
    """Inverse of inertia_to_parameters."""
    m, cx, cy, cz, xx, xy, yy, xz, yz, zz = _vec(pi, 10, "pi")
    I = np.zeros((6, 6))
    I[3:, 3:] = [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]
    I[3:, :3] = so3.hat([cx, cy, cz])
    I[:3, 3:] = I[3:, :3].T
    I[:3, :3] = m * np.eye(3)
    return I
