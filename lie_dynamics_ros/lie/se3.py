"""SE(3) / se(3) in the public order: twist xi = (v, w) (linear, angular), wrench F = (f, m)
(force, torque), as ROS Twist/Wrench and Pinocchio. The same order as ``ldr.body_jacobian``.

Kim (2012) writes these operators angular first; each one below is his matrix with its two
3-blocks of rows and of columns swapped (the compiled kernels keep his order:
``lie_dynamics_ros/conventions.py``). T = (R, p) as a 4x4 matrix is the pose of frame {b} in
frame {a} (Kim writes T_ab: {a} -> {b}). Ad* := Ad^T and ad* := ad^T (Kim 2012, eqs. 8, 29).
dexp is right-trivialised: d/dt exp(u) = hat(dexp_u u') exp(u),  dexp_u = sum_k ad_u^k/(k+1)!.
"""
import numpy as np

from . import so3
from .so3 import _mat, _vec


def hat(xi):
    """xi = (v, w) -> [[ [w], v ], [0, 0]] (4x4, Kim eq 5)."""
    xi = _vec(xi, 6, "xi")
    X = np.zeros((4, 4))
    X[:3, :3], X[:3, 3] = so3.hat(xi[3:]), xi[:3]
    return X


def vee(X):
    """Inverse of hat."""
    X = _mat(X, (4, 4), "X")
    return np.concatenate([X[:3, 3], so3.vee(X[:3, :3])])


def make(R, p):
    """4x4 homogeneous matrix from R (3x3) and p (3,)."""
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = _mat(R, (3, 3), "R"), _vec(p, 3, "p")
    return T


def _Rp(T):
    T = _mat(T, (4, 4), "T")
    return T[:3, :3], T[:3, 3]


def exp(xi):
    """exp(hat(xi)) = (exp(w), J_l(w) v) (closed form, series near 0)."""
    xi = _vec(xi, 6, "xi")
    return make(so3.exp(xi[3:]), so3.left_jacobian(xi[3:]) @ xi[:3])


def log(T):
    """xi = (v, w) with exp(xi) = T, |w| <= pi: w = so3.log(R), v = J_l(w)^-1 p."""
    R, p = _Rp(T)
    w = so3.log(R)
    return np.concatenate([so3.left_jacobian_inv(w) @ p, w])


def inv(T):
    """T^-1 = (R^T, -R^T p) (Kim eq 4)."""
    R, p = _Rp(T)
    return make(R.T, -R.T @ p)


def compose(*Ts):
    """T1 @ T2 @ ... (identity for no argument)."""
    out = np.eye(4)
    for T in Ts:
        out = out @ _mat(T, (4, 4), "T")
    return out


def Ad(T):
    """Ad_T = [[R, [p]R], [0, R]] (Kim eq 7, blocks swapped); hat(Ad_T xi) = T hat(xi) T^-1."""
    R, p = _Rp(T)
    A = np.zeros((6, 6))
    A[:3, :3] = A[3:, 3:] = R
    A[:3, 3:] = so3.hat(p) @ R
    return A


def Ad_inv(T):
    """Ad_{T^-1} = [[R^T, -R^T[p]], [0, R^T]] without inverting T."""
    R, p = _Rp(T)
    A = np.zeros((6, 6))
    A[:3, :3] = A[3:, 3:] = R.T
    A[:3, 3:] = -R.T @ so3.hat(p)
    return A


def Ad_star(T):
    """Ad*_T := Ad_T^T (Kim eq 8); wrench transform F_b = Ad*_{T_ab} F_a (Kim eq 13)."""
    return Ad(T).T


def ad(xi):
    """ad_xi = [[[w], [v]], [0, [w]]] (Kim eq 27, Park eq 6, blocks swapped)."""
    xi = _vec(xi, 6, "xi")
    A = np.zeros((6, 6))
    A[:3, :3] = A[3:, 3:] = so3.hat(xi[3:])
    A[:3, 3:] = so3.hat(xi[:3])
    return A


def ad_star(xi):
    """ad*_xi := ad_xi^T = [[-[w], 0], [-[v], -[w]]] (Kim eq 29, blocks swapped)."""
    return ad(xi).T


def bracket(x, y):
    """[x, y] = ad_x y = (w1 x v2 - w2 x v1, w1 x w2)."""
    x, y = _vec(x, 6, "x"), _vec(y, 6, "y")
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
    xi = _vec(xi, 6, "xi")
    t = np.linalg.norm(xi[3:])
    _, g1, g2 = so3.exp_coeffs(t)
    return _phi_ad(xi, g1, g2, *so3.exp_coeffs_d(t))


def dexp_inv(xi, order=None):
    """dexp_xi^-1; order=None: exact (Celledoni et al. 2021, §2.3; singular at |w| = 2 pi);
    int k: sum_{j<=k} B_j/j! ad^j."""
    xi = _vec(xi, 6, "xi")
    if order is not None:
        return so3.series(ad(xi), order)
    g2, g2t = so3.inv_coeffs(np.linalg.norm(xi[3:]))
    return _phi_ad(xi, -0.5, g2, 0.0, g2t)


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
