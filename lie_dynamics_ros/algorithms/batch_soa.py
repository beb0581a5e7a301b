"""Batched inverse dynamics on the structure-of-arrays kernel (``kernels/soa.py``).

``inverse_dynamics_soa(model, Q, V, A)`` evaluates N states of a model whose joints are all
revolute or prismatic (no mimic, no closed loop, no Python-defined joint) and returns (N, nv),
equal to ``inverse_dynamics`` on the same rows to round-off. ``soa_unsupported(model)`` says
why another model is refused (None when it is served); callers then use the batched path of
``algorithms/batch.py``.

The blocks of ``kernels.soa.B`` states are cut into one chunk per core and run on the batch
pool's threads (the kernel releases the GIL). Each block copies its rows of Q, V, A into the
kernel's state-innermost scratch and its torques back, so the inputs are read in place once.
"""
import numpy as np

from ..errors import InputError
from ..kernels import joints as J
from ..kernels import layout as L
from ..kernels import soa as KS
from . import batch

_KINDS = {J.REVOLUTE: KS.REVOLUTE, J.PRISMATIC: KS.PRISMATIC}


def soa_unsupported(model):
    """None when ``inverse_dynamics_soa`` serves ``model``, else the reason (a sentence)."""
    if model.loops:
        return "the model has closed kinematic loops"
    mi = model.mi
    for i in range(1, mi.shape[0]):
        name = model.body_joint_names[i]
        if mi[i, L.MIMIC]:
            return f"joint {name!r} is a mimic joint"
        if int(mi[i, L.K]) not in _KINDS:
            return (f"joint {name!r} is {J.NAMES.get(int(mi[i, L.K]), 'of another kind')} "
                    "(only revolute and prismatic joints)")
        if not _rigid_inertia(model.mI[i]):
            return f"the inertia of body {model.body_names[i - 1]!r} is not a rigid body's"
    return None


def _rigid_inertia(I6):
    """The 6x6 (angular, linear) inertia has the form [[Ibar, m[c]], [m[c]^T, m 1]]."""
    m = I6[3, 3]
    mc = np.array([I6[2, 4], I6[0, 5], I6[1, 3]])
    want = np.zeros((6, 6))
    want[:3, :3] = I6[:3, :3]
    want[:3, 3:] = _skew(mc)
    want[3:, :3] = _skew(mc).T
    want[3:, 3:] = m * np.eye(3)
    return np.allclose(I6, want, rtol=0.0, atol=1e-12 * max(1.0, np.abs(I6).max()))


def _skew(x):
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def _turn_to_z(axis):
    """A rotation C with C e_z = axis (unit): the identity or a permutation on principal axes."""
    a = np.asarray(axis, dtype=float)
    k = int(np.argmin(np.abs(a)))
    e = np.zeros(3)
    e[k] = 1.0
    c1 = np.cross(e, a)     # on a principal axis, C is a signed permutation (exact)
    c1 /= np.linalg.norm(c1)
    c2 = np.cross(a, c1)
    return np.column_stack((c1, c2, a))


def soa_plan(model):
    """(topo, geo) of ``kernels/soa.py`` for ``model``; InputError when it is not served."""
    why = soa_unsupported(model)
    if why is not None:
        raise InputError(f"inverse_dynamics_soa: {why}; use ldr.inverse_dynamics")
    mi, mc, mI = model.mi, model.mc, model.mI
    n = mi.shape[0]
    topo = np.zeros((n, KS.NT), dtype=np.int64)
    geo = np.zeros((n, KS.NG))
    geo[0, KS.GX:KS.GX + 3] = mc[0, L.G:L.G + 3]
    C = [np.eye(3)]
    for i in range(1, n):
        p = int(mi[i, L.P])
        topo[i] = (p, _KINDS[int(mi[i, L.K])], mi[i, L.QI], mi[i, L.VI])
        Ci = _turn_to_z(mc[i, L.AX:L.AX + 3])
        C.append(Ci)
        R0 = mc[i, L.R0:L.R0 + 9].reshape(3, 3)
        geo[i, KS.GR:KS.GR + 9] = (C[p].T @ R0 @ Ci).ravel()
        geo[i, KS.GP:KS.GP + 3] = C[p].T @ mc[i, L.P0:L.P0 + 3]
        Ib = Ci.T @ mI[i, :3, :3] @ Ci
        geo[i, KS.GI:KS.GI + 6] = (Ib[0, 0], Ib[1, 1], Ib[2, 2], Ib[0, 1], Ib[0, 2], Ib[1, 2])
        geo[i, KS.GC:KS.GC + 3] = Ci.T @ np.array([mI[i, 2, 4], mI[i, 0, 5], mI[i, 1, 3]])
        geo[i, KS.GM] = mI[i, 3, 3]
        geo[i, KS.GA] = mc[i, L.ARM]
    return topo, geo


def _rows(x, n, name, N=None):
    if not (x.__class__ is np.ndarray and x.dtype == np.float64 and x.flags.c_contiguous):
        try:
            x = np.ascontiguousarray(x, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"batched {name} must be a numeric array of shape (N, {n})") from None
    if x.ndim != 2 or x.shape[1] != n or (N is not None and x.shape[0] != N):
        want = f"({'N' if N is None else N}, {n})"
        raise InputError(f"batched {name} must have shape {want}, got {x.shape}")
    return x


def inverse_dynamics_soa(model, q, v, a, plan=None):
    """tau (N, nv) for the states (N, nq), (N, nv), (N, nv): RNEA (Kim 2012, Table 2) with
    gravity and the armature, f_ext none. ``plan``: ``soa_plan(model)``, to reuse across calls.

    A row with NaN or Inf raises InputError naming the argument and the row; a finite row
    whose torques overflow float64 too."""
    topo, geo = soa_plan(model) if plan is None else plan
    Q = _rows(q, model.nq, "q")
    N = Q.shape[0]
    V = _rows(v, model.nv, "v", N)
    A = _rows(a, model.nv, "a", N)
    tau = np.empty((N, model.nv))
    status = np.zeros(N, dtype=np.int64)
    nblk = -(-N // KS.B)
    chunks = 1 if N * model.nv < batch.MIN_PARALLEL_WORK else min(batch.WORKERS, nblk)
    bounds = np.linspace(0, nblk, chunks + 1).astype(int)
    futures = [batch.executor().submit(KS.rnea_soa, topo, geo, Q, V, A, tau, status, lo, hi)
               for lo, hi in zip(bounds[1:-1], bounds[2:])]
    KS.rnea_soa(topo, geo, Q, V, A, tau, status, bounds[0], bounds[1])
    for f in futures:
        f.result()
    if status.any():
        r = int(np.flatnonzero(status)[0])
        bad = [k for k, x in (("q", Q), ("v", V), ("a", A)) if not np.all(np.isfinite(x[r]))]
        if bad:
            raise InputError(f"row {r}: non-finite values (NaN or Inf) in {', '.join(bad)}")
        raise InputError(f"row {r}: overflow: the inputs are finite but the result is not "
                         "(velocities or positions too large for float64)")
    return tau
