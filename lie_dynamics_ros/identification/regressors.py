"""The identification regressor and its base parameters.

Rows: one per sample and DOF (sample-major). Columns: the 10 standard parameters of every body
(``ldr.regressor(model, q, v, v, a)``, ``ldr.parameter_names``), then per 1-DOF joint a viscous
damping column (v), a Coulomb column (sign v) and, on request, an armature column (a): the
torque is linear in all of them (Atkeson, An & Hollerbach 1986; Gautier & Khalil 1990).

Base parameters: a regressor has structurally dependent columns (a body whose motion never
shows a parameter, bodies whose parameters only appear summed). QR with column pivoting of the
column-normalized regressor of random states (Gautier 1991) keeps the columns with
|R_kk| > BASE_RTOL |R_00| (joint terms weighted by JOINT_TERM_WEIGHT, so that a body
parameter is kept before an equivalent joint term); each base parameter is its column plus a
fixed combination of the dropped ones, beta = theta_B + K theta_D with K = R_11^{-1} R_12.
"""
import numpy as np

from ..algorithms._inputs import compile_entry, data_for, tree_ready
from ..algorithms.configuration import random_configuration
from ..algorithms.regressor import N_PARAMS, parameter_names, regressor, regressor_rows
from ..algorithms.tree_plan import regressor_plan
from ..errors import InputError
from ..kernels import tree_regressor as KR

#: relative pivot below which a column of the normalized regressor counts as dependent
BASE_RTOL = 1e-8
#: a column whose norm is below this fraction of the largest is round-off, not a parameter
ZERO_COLUMN = 1e-10
#: weight of the joint terms (friction, armature) in the pivoting: where a joint term and a
#: body parameter are alternatives (a joint's armature and its body's inertia about the axis)
#: the body parameter is kept, whatever round-off says
JOINT_TERM_WEIGHT = 0.5


def joint_terms(model):
    """[(joint name, v index)] of the joints that get friction/armature columns: the actuated
    1-DOF joints (a URDF ``<dynamics>`` on a multi-DOF joint has no single axis)."""
    return [(n, vi) for n, vi, nv in zip(model.joint_names, model.joint_v_index, model.joint_nv)
            if nv == 1]


def column_names(model, friction, armature):
    names = list(parameter_names(model))
    for n, _ in joint_terms(model):
        if friction:
            names += [f"{n}/damping", f"{n}/coulomb"]
        if armature:
            names.append(f"{n}/armature")
    return names


def stacked_regressor(model, q, v, a, friction, armature, data=None):
    """(N nv, 10 nbodies + extra) regressor of the N samples (rows sample-major), columns
    ``column_names``; ``data`` the calling thread's work buffer (else its own).

    The rigid-body columns of all samples are one compiled call (``_rigid_columns``); models
    with Python-defined joints take a loop over ``ldr.regressor``."""
    N, nv = v.shape
    nr = N_PARAMS * model.njoints
    terms = joint_terms(model)
    per = 2 * bool(friction) + bool(armature)
    W = np.empty((N, nv, nr + per * len(terms)))
    W[:, :, nr:] = 0.0                   # the rigid-body columns are all written below
    if model.has_general:
        data = model.create_data() if data is None else data
        for k in range(N):
            W[k, :, :nr] = regressor(model, q[k], v[k], v[k], a[k], data=data)
    else:
        _rigid_columns(model, q, v, a, W, data)
    c = nr
    for _, vi in terms:
        if friction:
            W[:, vi, c], W[:, vi, c + 1] = v[:, vi], np.sign(v[:, vi])
            c += 2
        if armature:
            W[:, vi, c] = a[:, vi]
            c += 1
    return W.reshape(N * nv, -1)


def _rigid_columns(model, q, v, a, W, data):
    """W[k, :, :10 nj] for every sample, one compiled call on this thread: the tree kernel
    (kernels/tree_regressor.py) on the models ``regressor_plan`` serves, else the general
    ``regressor_rows`` on this thread's Data; a failed sample raises through ``ldr.regressor``.

    Not split over the batch pool: the chunked reduction runs LAPACK's QR between stackings,
    and OpenBLAS's threads, still spinning after it, and the pool's then share the cores
    (measured on arm7: the reduction 2-7x slower with the pool, the stacking alone 1.5x
    faster)."""
    Q = np.ascontiguousarray(q, dtype=np.float64)      # the compiled call reads raw memory
    V = np.ascontiguousarray(v, dtype=np.float64)
    A = np.ascontiguousarray(a, dtype=np.float64)
    N = Q.shape[0]
    status = np.zeros(N, dtype=np.int64)
    P = regressor_plan(model)
    if P is not None:
        if data is not None:
            data_for(model, data)                   # a Data of another model still raises
        compile_entry("regressor_rows", KR.SIGNATURES, tree_ready)
        KR.regressor_rows(P, Q, V, A, W, status)
    else:
        d = model.default_data() if data is None else data_for(model, data)
        regressor_rows(model.mi, model.mc, model.mI, d.dv, d.dm, Q, V, A, W, d.W, d.Wd, status,
                       0, N)
    if status.any():
        k = int(np.flatnonzero(status)[0])
        try:
            regressor(model, Q[k], V[k], V[k], A[k])     # raises the error naming the cause
        except InputError as e:
            raise InputError(f"sample {k}: {e}") from None
        raise InputError(f"sample {k}: the regressor failed (status {int(status[k])})")


def base_columns(model, friction, armature, samples=None, seed=0):
    """(independent column indices B, dependent ones D, K) for beta = theta_B + K theta_D,
    found on random states (structural, independent of any data)."""
    from scipy.linalg import qr, solve_triangular   # here: the package import stays light
    rng = np.random.default_rng(seed)
    ncols = len(column_names(model, friction, armature))
    n = samples or max(20, 3 * ncols // max(model.nv, 1))
    q = np.array([random_configuration(model, rng=rng) for _ in range(n)])
    v, a = rng.standard_normal((2, n, model.nv))
    W = stacked_regressor(model, q, v, a, friction, armature)
    norms = np.linalg.norm(W, axis=0)
    # a column of round-off (a parameter no torque shows) normalized would look independent
    live = norms > ZERO_COLUMN * norms.max()
    joint_term = np.arange(ncols) >= N_PARAMS * model.njoints
    scale = norms / np.where(joint_term, JOINT_TERM_WEIGHT, 1.0)
    Wn = W[:, live] / scale[live]
    _, R, piv = qr(Wn, mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    r = int(np.sum(d > BASE_RTOL * d[0]))
    cols = np.flatnonzero(live)
    B, D = cols[piv[:r]], np.concatenate([cols[piv[r:]], np.flatnonzero(~live)])
    # K in the original (unscaled) units: W_D = W_B K
    K = np.zeros((r, D.size))
    dep = cols[piv[r:]]
    if r and dep.size:
        K[:, :dep.size] = (solve_triangular(R[:r, :r], R[:r, r:]) * scale[dep]
                           / scale[B][:, None])
    order = np.argsort(B)
    return B[order], D, K[order]
