"""Batched forward dynamics on the structure-of-arrays ABA (``kernels/soa_aba.py``).

``forward_dynamics_soa(model, Q, V, TAU)`` serves the models of the SoA RNEA
(``batch_soa.soa_unsupported`` says why another is refused) and returns (N, nv), equal to
``forward_dynamics`` on the same rows to round-off. ``ldr.forward_dynamics`` takes it from
``batch_soa.MIN_STATES`` states. Blocks are cut into one chunk per core on the batch pool, as
for the RNEA. A row the kernel flags (non-finite input or result, a singular articulated
inertia) is rerun alone through the per-state ABA kernel, whose status names the argument or
the joint.
"""
import numpy as np

from ..errors import InputError
from ..kernels import dynamics as K
from ..kernels import layout as L
from ..kernels import soa_aba as KA
from . import batch
from ._inputs import check, rows
from .batch_soa import soa_plan, soa_unsupported


def forward_dynamics_soa(model, q, v, tau, plan=None):
    """qdd (N, nv) for the states (N, nq), (N, nv), (N, nv): ABA (Kim 2012, Table 3) with
    gravity and the armature, f_ext none. ``plan``: ``batch_soa.soa_plan(model)``, to reuse.

    A row with NaN or Inf raises InputError naming the argument and the row; a singular
    articulated inertia names the row and the joint; a finite row whose result overflows
    float64 names the row."""
    if plan is None:
        plan = soa_plan(model, strict=False)
        if plan is None:
            raise InputError(f"forward_dynamics_soa: {soa_unsupported(model)}; "
                             "use ldr.forward_dynamics")
    topo, geo = plan
    if topo.shape[0] != model.mi.shape[0]:
        raise InputError("plan was made for another model: use soa_plan(model)")
    Q = rows(q, model.nq, "q", model=model)
    N = Q.shape[0]
    V = rows(v, model.nv, "v", N)
    T = rows(tau, model.nv, "tau", N)
    acc = np.empty((N, model.nv))
    status = np.zeros(N, dtype=np.int64)
    batch.soa_blocks(KA.aba_soa, N, topo, geo, Q, V, T, acc, status)
    if status.any():
        _raise_for_row(model, int(np.flatnonzero(status)[0]), Q, V, T)
    return acc


def _raise_for_row(model, r, Q, V, T):
    """The per-state kernel on row r gives the error (the SoA-served models are trees)."""
    d = model.default_data()
    st = K.aba(model.mi, model.mc, model.mI, d.dv, d.dm, Q[r], V[r], T[r], d.prescribed_body,
               np.empty(model.nv), d.tau_out, d.failed_row, True, False)
    try:
        check(model, st if st else L.OVERFLOW, d, q=Q[r], v=V[r], tau=T[r])
    except InputError as e:
        raise InputError(f"row {r}: {e}") from None
