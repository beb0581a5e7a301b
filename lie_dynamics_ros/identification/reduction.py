"""The identification data reduced to what the solve needs: per joint j the triangular factor
R_j of its augmented rows [W_j | y_j] (W_j the regressor rows of DOF j, y_j its torques).

For any parameters x, ||W_j x - y_j||^2 = ||R_j [x; -1]||^2 (Q_j orthonormal), so every
quantity of the solve (the OLS fit, each joint's residual, the 1 / sigma_j weighted problem,
its QR with pivoting, the report) follows from the nv factors of (p + 1) x (p + 1) numbers,
whatever the number of samples. Factors of two sets of samples merge by the QR of the two
stacked (QR row updating, Golub & Van Loan 2013, sec. 6.5; the tall-skinny QR of Demmel,
Grigori, Hoemmen & Langou 2012), never forming W^T W (whose condition number is the square
of W's). Memory is one chunk's regressor, not the whole data's.
"""
from dataclasses import dataclass

import numpy as np

from ..algorithms.joint_friction import friction_torques
from .regressors import column_names, stacked_regressor
from .samples import check_samples

#: samples per regressor chunk of the in-memory path (a 7-DOF arm: ~1 MB of regressor)
CHUNK_SAMPLES = 2000


@dataclass(frozen=True)
class Reduction:
    """``factors`` (nv, p + 1, p + 1): each DOF's upper-triangular factor of [W_j | y_j];
    ``n_samples``; ``peak`` (nv,): each DOF's largest |tau|; the column set (friction,
    armature) it was built for."""
    factors: np.ndarray
    n_samples: int
    peak: np.ndarray
    friction: bool
    armature: bool

    def stacked(self, weights=None):
        """(W, y) with nv (p + 1) rows and ||W x - y||^2 = sum_j w_j^2 ||W_j x - y_j||^2."""
        F = self.factors if weights is None else self.factors * np.asarray(weights)[:, None,
                                                                                     None]
        S = F.reshape(-1, F.shape[2])
        return S[:, :-1], S[:, -1]

    def joint_residuals(self, x):
        """(nv,) sums over the samples of (W_j x - y_j)^2."""
        return np.sum((self.factors @ np.append(x, -1.0)) ** 2, axis=1)

    def merge(self, other):
        if (self.friction, self.armature) != (other.friction, other.armature):
            raise ValueError("reductions of different column sets")
        return Reduction(triangular(np.concatenate([self.factors, other.factors], axis=1)),
                         self.n_samples + other.n_samples, np.maximum(self.peak, other.peak),
                         self.friction, self.armature)


def triangular(M):
    """Per leading index, the (n, n) R of the QR of M[k] (m_k x n), zero-padded when m < n.
    Rows are signed so that R's diagonal is >= 0: the factor does not depend on the order
    of the rows it reduces (up to round-off)."""
    n = M.shape[-1]
    if M.shape[-2] == 0:
        return np.zeros(M.shape[:-2] + (n, n))
    R = np.linalg.qr(M, mode="r")
    if R.shape[-2] < n:
        R = np.concatenate([R, np.zeros(R.shape[:-2] + (n - R.shape[-2], n))], axis=-2)
    s = np.where(np.diagonal(R, axis1=-2, axis2=-1) < 0, -1.0, 1.0)
    return R * s[..., :, None]


def joint_factors(X):
    """(nv, p + 1, p + 1) factors of the augmented rows X (N, nv, p + 1). A joint's rows are
    zero in the columns of the bodies outside its subtree: its QR runs on the others only
    (on a 7-DOF chain a third of the work), the factor put back in their places (still
    triangular, the same R^T R)."""
    nv, n = X.shape[1], X.shape[2]
    F = np.zeros((nv, n, n))
    for j in range(nv):
        Xj = X[:, j, :]
        cols = np.flatnonzero(np.any(Xj != 0.0, axis=0))
        F[j][np.ix_(cols, cols)] = triangular(Xj[:, cols])
    return F


def augmented_rows(model, q, v, a, tau, friction, armature):
    """(N, nv, p + 1): per sample and DOF its regressor row and its torque, the torque less
    the terms not identified (the model's armature, damping and friction stay)."""
    N, nv = v.shape
    W = stacked_regressor(model, q, v, a, friction, armature).reshape(N, nv, -1)
    y = tau
    if not armature and model.armature.any():
        y = y - model.armature * a
    if not friction:
        y = y - friction_torques(model, v)
    return np.concatenate([W, y[:, :, None]], axis=2)


def reduce_block(model, q, v, a, tau, friction, armature):
    """The Reduction of one block of checked samples."""
    if len(v) == 0:
        p1 = len(column_names(model, friction, armature)) + 1
        return Reduction(np.zeros((model.nv, p1, p1)), 0, np.zeros(model.nv), bool(friction),
                         bool(armature))
    X = augmented_rows(model, q, v, a, tau, friction, armature)
    return Reduction(joint_factors(X), int(v.shape[0]),
                     np.abs(tau).max(axis=0), bool(friction), bool(armature))


def reduce_samples(model, q, v, a, tau, friction, armature, chunk=CHUNK_SAMPLES):
    """The Reduction of checked in-memory arrays, ``chunk`` samples at a time."""
    red = None
    for lo in range(0, max(len(v), 1), chunk):
        s = slice(lo, lo + chunk)
        r = reduce_block(model, q[s], v[s], a[s], tau[s], friction, armature)
        red = r if red is None else red.merge(r)
    return red


def reduce_chunks(model, chunks, friction, armature):
    """The Reduction of an iterable of (q, v, a, tau) chunks (each checked, errors naming the
    global sample): the data never need to be in memory at once."""
    red, offset = None, 0
    for q, v, a, tau in chunks:
        q, v, a, tau = check_samples(model, q, v, a, tau, offset,
                                     f" in the chunk from sample {offset}")
        r = reduce_samples(model, q, v, a, tau, friction, armature)
        red = r if red is None else red.merge(r)
        offset += len(v)
    if red is None:
        red = reduce_block(model, *(np.zeros((0, n)) for n in (model.nq,) + (model.nv,) * 3),
                           friction, armature)
    return red
