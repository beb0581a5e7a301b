"""Physical consistency of a body's 10 inertial parameters, and the geometry of their set.

theta = (m, m c_x, m c_y, m c_z, Ixx, Ixy, Iyy, Ixz, Iyz, Izz) (``ldr.inertial_parameters``,
I about the body origin) is physical iff the 4x4 pseudo-inertia

    P(theta) = [[Sigma, h], [h^T, m]],   Sigma = tr(I)/2 1 - I,   h = m c

is positive semidefinite (Wensing, Kim & Slotine 2017: the pseudo-inertia condition).

* ``log_cholesky_to_parameters``: the log-Cholesky map of Rucker & Wensing (2022),
  P = U U^T with U = e^alpha [[e^d1, s12, s13, t1], [0, e^d2, s23, t2], [0, 0, e^d3, t3],
  [0, 0, 0, 1]]: every phi in R^10 gives a positive definite P, so an unconstrained solver
  never leaves the physical set.
* ``riemannian_residual``: the affine-invariant metric on positive definite matrices,
  d(P, P0)^2 = sum_k log^2 lambda_k(P0^{-1} P) (Lee & Park 2018; Lee, Wensing &
  Park 2020). It is unchanged by P -> A P A^T for any invertible A, so by a change of
  body frame or of length unit (both act on P that way): unlike a Euclidean distance on theta,
  it does not weigh masses against inertias by the units chosen.
"""
import numpy as np

from ..errors import InputError

#: a body counts as physical when min eig(P) >= -PSD_TOL * max |P_ij| (float round-off only)
PSD_TOL = 1e-9


def pseudo_inertia(theta):
    """(10,) body parameters -> 4x4 pseudo-inertia."""
    m, hx, hy, hz, xx, xy, yy, xz, yz, zz = np.asarray(theta, dtype=float)
    I = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    P = np.empty((4, 4))
    P[:3, :3] = 0.5 * np.trace(I) * np.eye(3) - I
    P[:3, 3] = P[3, :3] = (hx, hy, hz)
    P[3, 3] = m
    return P


def pseudo_inertia_to_parameters(P):
    """Inverse of ``pseudo_inertia``: I = tr(Sigma) 1 - Sigma."""
    S = 0.5 * (P[:3, :3] + P[:3, :3].T)
    I = np.trace(S) * np.eye(3) - S
    return np.array([P[3, 3], *P[:3, 3], I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]])


def is_physical(theta, tol=PSD_TOL):
    """True when the body's pseudo-inertia is positive semidefinite (to round-off)."""
    P = pseudo_inertia(theta)
    return bool(np.linalg.eigvalsh(P).min() >= -tol * max(np.abs(P).max(), 1e-300))


def check_physical(theta, body_names):
    """InputError naming the first body of stacked ``theta`` (10 per body) that is not
    physical; the guard before a model or a URDF is made from identified numbers."""
    theta = np.asarray(theta, dtype=float).reshape(-1, 10)
    for name, th in zip(body_names, theta):
        if not is_physical(th):
            lam = np.linalg.eigvalsh(pseudo_inertia(th)).min()
            raise InputError(f"body {name!r}: identified inertial parameters {th} are not "
                             f"physical (pseudo-inertia eigenvalue {lam:.3g} < 0)")


def log_cholesky_to_parameters(phi):
    """(10,) phi = (alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3) -> (10,) physical theta."""
    a, d1, d2, d3, s12, s23, s13, t1, t2, t3 = phi
    U = np.exp(a) * np.array([[np.exp(d1), s12, s13, t1], [0.0, np.exp(d2), s23, t2],
                              [0.0, 0.0, np.exp(d3), t3], [0.0, 0.0, 0.0, 1.0]])
    return pseudo_inertia_to_parameters(U @ U.T)


#: (row, column) of U that each of phi's entries after alpha sets
_U_ENTRY = ((0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3))


def log_cholesky_jacobian(phi):
    """(10, 10) d theta / d phi of ``log_cholesky_to_parameters``, exact: dP = dU U^T + U dU^T
    (a difference quotient loses half the digits, and its error times the data's large rows
    is what a solver sees along the directions only the prior holds)."""
    a, d1, d2, d3, s12, s23, s13, t1, t2, t3 = phi
    U = np.exp(a) * np.array([[np.exp(d1), s12, s13, t1], [0.0, np.exp(d2), s23, t2],
                              [0.0, 0.0, np.exp(d3), t3], [0.0, 0.0, 0.0, 1.0]])
    J = np.empty((10, 10))
    J[:, 0] = pseudo_inertia_to_parameters(2.0 * U @ U.T)
    for k, (r, c) in enumerate(_U_ENTRY, start=1):
        dU = np.zeros((4, 4))
        dU[r, c] = U[r, c] if k <= 3 else np.exp(a)
        dP = dU @ U.T
        J[:, k] = pseudo_inertia_to_parameters(dP + dP.T)
    return J


def parameters_to_log_cholesky(theta, floor=1e-9):
    """phi of a physical theta (a semidefinite P is first lifted to P + eps 1, eps = floor *
    max |P|, since the log-Cholesky map reaches only positive definite P)."""
    P = pseudo_inertia(theta)
    lam_min = np.linalg.eigvalsh(P).min()
    eps = max(floor * max(np.abs(P).max(), 1e-12) - lam_min, 0.0)
    P = P + eps * np.eye(4)
    # U upper triangular with P = U U^T: the Cholesky factor of P with rows/columns reversed
    E = np.eye(4)[::-1]
    U = E @ np.linalg.cholesky(E @ P @ E) @ E
    a = np.log(U[3, 3])
    Un = U / U[3, 3]
    return np.array([a, np.log(Un[0, 0]), np.log(Un[1, 1]), np.log(Un[2, 2]), Un[0, 1],
                     Un[1, 2], Un[0, 2], Un[0, 3], Un[1, 3], Un[2, 3]])


_TRIU = np.triu_indices(4)
_VECH_W = np.where(_TRIU[0] == _TRIU[1], 1.0, np.sqrt(2.0))


def riemannian_residual(P, P0_inv_sqrt):
    """(10,) the upper triangle of log(P0^{-1/2} P P0^{-1/2}), off-diagonals times sqrt 2:
    its squared norm is d(P, P0)^2 = sum_k log^2 lambda_k(P0^{-1} P). The matrix logarithm is
    smooth where the sorted eigenvalues are not (at P = P0 all four are 1), so a
    Gauss-Newton solver sees all 10 directions of the prior."""
    lam, V = np.linalg.eigh(P0_inv_sqrt @ P @ P0_inv_sqrt)
    L = (V * np.log(np.maximum(lam, 1e-300))) @ V.T
    return L[_TRIU] * _VECH_W


def inverse_sqrt(P0, floor=1e-9):
    """P0^{-1/2} of a reference pseudo-inertia (lifted to positive definite as above)."""
    lam, V = np.linalg.eigh(P0)
    lam = np.maximum(lam, floor * max(np.abs(P0).max(), 1e-12))
    return (V / np.sqrt(lam)) @ V.T


def riemannian_distance(theta_a, theta_b):
    """d(P(theta_a), P(theta_b)), affine-invariant (Lee & Park 2018)."""
    return float(np.linalg.norm(riemannian_residual(pseudo_inertia(theta_a),
                                                    inverse_sqrt(pseudo_inertia(theta_b)))))
