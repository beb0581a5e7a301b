"""Batched mass matrix on the structure-of-arrays CRBA (``kernels/soa_crba.py``).

``mass_matrix_soa(model, Q)`` serves the models of the SoA RNEA (``batch_soa.soa_unsupported``
says why another is refused) and returns (N, nv, nv), equal to ``mass_matrix`` on the same rows
to round-off. ``ldr.mass_matrix`` takes it from ``batch_soa.MIN_STATES`` states. A row with a
non-finite q is named, one whose free-joint quaternion is not of unit norm, and one whose M
overflows float64 too.
"""
import numpy as np

from ..errors import InputError
from ..kernels import soa_crba as KC
from . import batch
from .batch_soa import quaternion_check, soa_plan, soa_unsupported
from ._inputs import rows


def mass_matrix_soa(model, q, plan=None):
    """M (N, nv, nv) for the configurations (N, nq): CRBA, full and symmetric, the armature on
    the diagonal. ``plan``: ``batch_soa.soa_plan(model)``, to reuse across calls."""
    if plan is None:
        plan = soa_plan(model, strict=False)
        if plan is None:
            raise InputError(f"mass_matrix_soa: {soa_unsupported(model)}; use ldr.mass_matrix")
    topo, geo = plan
    if topo.shape[0] != model.mi.shape[0]:
        raise InputError("plan was made for another model: use soa_plan(model)")
    Q = rows(q, model.nq, "q", model=model)
    N = Q.shape[0]
    M = np.empty((N, model.nv, model.nv))
    status = np.zeros(N, dtype=np.int64)
    batch.soa_blocks(KC.crba_soa, N, topo, geo, Q, M, status)
    if status.any():
        r = int(np.flatnonzero(status)[0])
        if not np.all(np.isfinite(Q[r])):
            raise InputError(f"row {r}: non-finite values (NaN or Inf) in q")
        quaternion_check(model, r, Q[r])
        raise InputError(f"row {r}: overflow: the input is finite but M is not "
                         "(positions too large for float64)")
    return M
