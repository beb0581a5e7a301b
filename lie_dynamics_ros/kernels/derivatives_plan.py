"""The compiled entries of the single-state ID/FD derivatives, on the Data's packed buffer as
those of kernels/plan.py: the model and the work memory travel in ``buf``, so a call dispatches
with the buffer, the inputs and the output only, and the kernels run on views without
reference counts (kernels/views.py).

A model whose joints all have a constant S (kernels/derivatives.constant_subspaces) calls
the world-frame kernels directly: compiled together with the general path they ran slower
(the arm7 ID' entry 2.44 us against 2.08 us; a smaller function that LLVM optimizes better).

They live apart from kernels/plan.py so that the ID/FD entries compile apart from the
derivatives (the cache key covers the kernel files imported, kernels/jit.py). Each entry
checks the lengths against the buffer's header and the strides of its arrays (status
BAD_SIZE; the public calls reach the single-state entries through numba's raw entry point, as
kernels/plan.py's) and is compiled for ``SIGNATURES`` alone (C-contiguous float64): through
the dispatcher any other argument is a ``TypeError``.
"""
import numpy as np
from numba import types

from .layout import H_NQ, H_NV, H_FAIL, H_ACC, H_WORK, BAD_SIZE, fd_work_size, fd_index_size
from .derivatives import (rnea_derivatives, aba_derivatives, world_rnea_derivatives,
                          world_aba_derivatives, constant_subspaces)
from .jit import JIT, njit
from .plan import unpack
from .views import bare, c_strides, c_view


@njit(inline="always", **JIT)
def _sizes_ok(h, ok, q, v, x, out):
    nv = h[H_NV]
    return (ok and q.shape[0] == h[H_NQ] and v.shape[0] == nv and x.shape[0] == nv
            and out.shape[0] == 3 and out.shape[1] == nv and out.shape[2] == nv
            and c_strides(q) and c_strides(v) and c_strides(x) and c_strides(out))


@njit(inline="always", **JIT)
def _work(buf, h, nb, nv):
    """The FD derivatives' float and index work in ``buf``'s work region (layout.H_WORK; the
    ID derivatives use their first world_work_size and nv + nb words): no allocation."""
    nw = fd_work_size(nb, nv)
    return (c_view(buf[h[H_WORK]:], (nw,)),
            c_view(buf[h[H_WORK] + nw:].view(np.int64), (fd_index_size(nb, nv),)))


@njit(**JIT)
def inverse_dynamics_derivatives(buf, q, v, a, out):
    """dtau/dq, dtau/dv, M (kernels/derivatives.rnea_derivatives, world-frame form) into
    out[0], out[1], out[2] on the Data buffer ``buf``; returns a status code."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    if not _sizes_ok(h, ok, q, v, a, out):
        return BAD_SIZE
    nv = h[H_NV]
    out2 = c_view(out, (3, nv, nv))
    if not constant_subspaces(mi):
        return rnea_derivatives(mi, mc, mI, dv, dm, bare(q), bare(v), bare(a), out2[0],
                                out2[1], out2[2], True, False, True)
    work, index = _work(buf, h, mi.shape[0], nv)
    return world_rnea_derivatives(mi, mc, mI, dv, dm, bare(q), bare(v), bare(a), out2[0],
                                  out2[1], out2[2], True, False, work, index)


@njit(**JIT)
def forward_dynamics_derivatives(buf, q, v, tau, out):
    """da/dq, da/dv, M^-1 (kernels/derivatives.aba_derivatives) into out[0], out[1], out[2] on
    the Data buffer ``buf``; returns a status code."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    if not _sizes_ok(h, ok, q, v, tau, out):
        return BAD_SIZE
    nv = h[H_NV]
    failed = c_view(buf[h[H_FAIL]:].view(np.int64), (1,))
    out2 = c_view(out, (3, nv, nv))
    acc = c_view(buf[h[H_ACC]:], (nv,))
    if not constant_subspaces(mi):
        return aba_derivatives(mi, mc, mI, dv, dm, bare(q), bare(v), bare(tau), acc, out2[0],
                               out2[1], out2[2], failed, True, False)
    work, index = _work(buf, h, mi.shape[0], nv)
    return world_aba_derivatives(mi, mc, mI, dv, dm, bare(q), bare(v), bare(tau), acc,
                                 out2[0], out2[1], out2[2], failed, True, False, work, index)


@njit(**JIT)
def inverse_dynamics_derivatives_rows(buf, Q, V, A, out, status, lo, hi):
    """Rows lo..hi of a batch: the entry above for Q[r], V[r], A[r] into out[0..2, r] (out
    (3, N, nv, nv)), each row's status in ``status[r]``; the work memory is made once for the
    rows (``buf``: this thread's Data). Returns BAD_SIZE on a header or shape mismatch."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    nv, nb = h[H_NV], mi.shape[0]
    if not (ok and Q.shape[1] == h[H_NQ] and V.shape[1] == nv and A.shape[1] == nv
            and out.shape[0] == 3 and out.shape[2] == nv and out.shape[3] == nv):
        return BAD_SIZE
    world = constant_subspaces(mi)
    work, index = _work(buf, h, nb, nv)
    # the caller's arrays as views without reference counts (kernels/views.py), so that the
    # row views below are not counted (counted, they took 40 % of talos_reduced's ID' rows)
    Q, V, A, out = bare(Q), bare(V), bare(A), bare(out)
    for r in range(lo, hi):
        if world:
            status[r] = world_rnea_derivatives(mi, mc, mI, dv, dm, Q[r], V[r], A[r], out[0, r],
                                               out[1, r], out[2, r], True, False, work, index)
        else:
            status[r] = rnea_derivatives(mi, mc, mI, dv, dm, Q[r], V[r], A[r], out[0, r],
                                         out[1, r], out[2, r], True, False, True)
    return 0


@njit(**JIT)
def forward_dynamics_derivatives_rows(buf, Q, V, T, out, status, lo, hi):
    """Rows lo..hi of a batch, as ``inverse_dynamics_derivatives_rows`` for the FD entry."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    nv, nb = h[H_NV], mi.shape[0]
    if not (ok and Q.shape[1] == h[H_NQ] and V.shape[1] == nv and T.shape[1] == nv
            and out.shape[0] == 3 and out.shape[2] == nv and out.shape[3] == nv):
        return BAD_SIZE
    failed = c_view(buf[h[H_FAIL]:].view(np.int64), (1,))
    acc = c_view(buf[h[H_ACC]:], (nv,))
    world = constant_subspaces(mi)
    work, index = _work(buf, h, nb, nv)
    Q, V, T, out = bare(Q), bare(V), bare(T), bare(out)
    for r in range(lo, hi):
        if world:
            status[r] = world_aba_derivatives(mi, mc, mI, dv, dm, Q[r], V[r], T[r], acc,
                                              out[0, r], out[1, r], out[2, r], failed, True,
                                              False, work, index)
        else:
            status[r] = aba_derivatives(mi, mc, mI, dv, dm, Q[r], V[r], T[r], acc, out[0, r],
                                        out[1, r], out[2, r], failed, True, False)
    return 0


_VEC = types.Array(types.float64, 1, "C")
_MATS = types.Array(types.float64, 3, "C")
#: the one signature each entry is compiled for, by entry name
SIGNATURES = {
    "inverse_dynamics_derivatives": (inverse_dynamics_derivatives, (_VEC,) * 4 + (_MATS,)),
    "forward_dynamics_derivatives": (forward_dynamics_derivatives, (_VEC,) * 4 + (_MATS,)),
}
