"""The identification data reduced to what the solve needs: per joint j the triangular factor
R_j of its augmented rows [W_j | y_j] (W_j the regressor rows of DOF j, y_j its torques).

For any parameters x, ||W_j x - y_j||^2 = ||R_j [x; -1]||^2 (Q_j orthonormal), so every
quantity of the solve (the OLS fit, each joint's residual, the 1 / sigma_j weighted problem,
its QR with pivoting, the report) follows from the nv factors of (p + 1) x (p + 1) numbers,
whatever the number of samples. Factors of two sets of samples merge by the QR of the two
stacked (QR row updating, Golub & Van Loan 2013, sec. 6.5; the tall-skinny QR of Demmel,
Grigori, Hoemmen & Langou 2012), never forming W^T W (whose condition number is the square
of W's). Memory is one chunk's regressor, not the whole data's.

A joint at rest has no row: Coulomb friction is set-valued at zero velocity (any torque
within +-F_c holds a stuck joint), so a row (k, j) of a DOF whose Coulomb friction is
identified or modelled, with |v_kj| < ``rest_speed``, carries an unknown term that the model
sign(v) cannot give. Those rows are dropped (zeroed, which leaves R_j unchanged) and counted.
"""
from dataclasses import dataclass

import numpy as np

from ..algorithms.joint_friction import friction_torques
from .regressors import column_names, joint_terms, stacked_regressor
from .samples import check_samples

#: samples per regressor chunk of the in-memory path (a 7-DOF arm: ~1 MB of regressor)
CHUNK_SAMPLES = 2000
#: rad/s (m/s): a DOF with Coulomb friction slower than this is at rest, its row dropped;
#: about 1 deg/s, above a 20 Hz-filtered encoder's velocity noise, below any excitation's
#: speed except at its reversals
REST_SPEED = 0.02


@dataclass(frozen=True)
class Reduction:
    """``factors`` (nv, p + 1, p + 1): each DOF's upper-triangular factor of [W_j | y_j];
    ``n_samples``; ``peak`` (nv,): each DOF's largest |tau|; the column set (friction,
    armature) it was built for; ``n_rows`` (nv,): each DOF's rows kept (``n_samples`` less
    those at rest)."""
    factors: np.ndarray
    n_samples: int
    peak: np.ndarray
    friction: bool
    armature: bool
    n_rows: np.ndarray

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
                         self.friction, self.armature, self.n_rows + other.n_rows)


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


def at_rest(model, v, friction, rest_speed):
    """(N, nv) bool: the rows dropped, DOFs with Coulomb friction (identified, or the
    model's) moving slower than ``rest_speed``."""
    coulomb = np.zeros(model.nv, dtype=bool)
    if friction:
        coulomb[[vi for _, vi in joint_terms(model)]] = True
    coulomb |= model.joint_friction > 0
    return coulomb & (np.abs(v) < rest_speed)


def augmented_rows(model, q, v, a, tau, friction, armature, rest_speed=REST_SPEED):
    """(N, nv, p + 1): per sample and DOF its regressor row and its torque, the torque less
    the terms not identified (the model's armature, damping and friction stay); the rows at
    rest are zero."""
    N, nv = v.shape
    W = stacked_regressor(model, q, v, a, friction, armature).reshape(N, nv, -1)
    y = tau
    if not armature and model.armature.any():
        y = y - model.armature * a
    if not friction:
        y = y - friction_torques(model, v)
    X = np.concatenate([W, y[:, :, None]], axis=2)
    X[at_rest(model, v, friction, rest_speed)] = 0.0
    return X


def empty_reduction(model, friction, armature):
    p1 = len(column_names(model, friction, armature)) + 1
    return Reduction(np.zeros((model.nv, p1, p1)), 0, np.zeros(model.nv), bool(friction),
                     bool(armature), np.zeros(model.nv, dtype=np.int64))


def reduce_block(model, q, v, a, tau, friction, armature, rest_speed=REST_SPEED):
    """The Reduction of one block of checked samples."""
    if len(v) == 0:
        return empty_reduction(model, friction, armature)
    X = augmented_rows(model, q, v, a, tau, friction, armature, rest_speed)
    rows = len(v) - at_rest(model, v, friction, rest_speed).sum(axis=0)
    return Reduction(joint_factors(X), int(v.shape[0]), np.abs(tau).max(axis=0),
                     bool(friction), bool(armature), rows.astype(np.int64))


def reduce_samples(model, q, v, a, tau, friction, armature, chunk=CHUNK_SAMPLES,
                   rest_speed=REST_SPEED):
    """The Reduction of checked in-memory arrays, ``chunk`` samples at a time."""
    red = None
    for lo in range(0, max(len(v), 1), chunk):
        s = slice(lo, lo + chunk)
        r = reduce_block(model, q[s], v[s], a[s], tau[s], friction, armature, rest_speed)
        red = r if red is None else red.merge(r)
    return red


def reduce_chunks(model, chunks, friction, armature, rest_speed=REST_SPEED):
    """The Reduction of an iterable of (q, v, a, tau) chunks (each checked, errors naming the
    global sample): the data never need to be in memory at once."""
    red, offset = None, 0
    for q, v, a, tau in chunks:
        q, v, a, tau = check_samples(model, q, v, a, tau, offset,
                                     f" in the chunk from sample {offset}")
        r = reduce_samples(model, q, v, a, tau, friction, armature, rest_speed=rest_speed)
        red = r if red is None else red.merge(r)
        offset += len(v)
    return red if red is not None else empty_reduction(model, friction, armature)
