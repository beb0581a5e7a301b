"""The compiled entries of the public single-state calls: one Data buffer (``data.buf``, laid
out by ``layout.plan_offsets``) carries the model and the work memory, so that ID, FD and M
dispatch with the buffer, the inputs and the output only (the ID/FD derivatives have theirs in
kernels/derivatives_plan.py).

The kernels run on views without reference counts (kernels/views.py) of the buffer and of
the arguments. Each entry checks the input lengths against the buffer's header and the
strides of its arrays (``views.c_strides``; status BAD_SIZE) before it reads them. The public
calls reach the entries through numba's raw entry point (``algorithms/_inputs._Ready``), which
converts float64 ndarrays of the signature's ndim without checking their layout, so the
entries check it; the dispatchers accept exactly the signatures compiled by
``algorithms/_inputs.compile_entry`` (``SIGNATURES``: C-contiguous float64 arrays), and any
other array (int64, strided, 2-D, read-only) or a list is a ``TypeError`` of numba's dispatch,
never a reinterpretation.
"""
import numpy as np
from numba import types

from .layout import (NH, NI, NMC, NDV, NDM, H_NB, H_NQ, H_NV, H_MI, H_FAIL, H_PRESC, H_MC, H_MI6,
                     H_DV, H_DM, H_TAU, H_ZERO, H_ACC, H_WORK, BAD_SIZE, work_words)
from .dynamics import rnea, aba, crba
from .jit import JIT, njit
from .views import bare, c_strides, c_view


@njit(inline="always", **JIT)
def _header_ok(buf, h):
    """The header's offsets are those of layout.plan_offsets and the buffer holds them all."""
    nb, nv = h[H_NB], h[H_NV]
    n = NH
    for k, size in ((H_MI, nb * NI), (H_FAIL, 1), (H_PRESC, (nb + 7) // 8), (H_MC, nb * NMC),
                    (H_MI6, nb * 36), (H_DV, nb * NDV), (H_DM, nb * NDM * 36), (H_TAU, nv),
                    (H_ZERO, nv), (H_ACC, nv), (H_WORK, work_words(nb, nv))):
        if h[k] != n:
            return False
        n += size
    return nb >= 1 and nv >= 0 and buf.shape[0] >= n


@njit(inline="always", **JIT)
def unpack(buf):
    """(header, ok, mi, mc, mI, dv, dm): the model and work arrays inside ``buf``; with a header
    that does not describe ``buf`` (ok False) the views are empty."""
    h = buf[:NH].view(np.int64)
    ok = _header_ok(buf, h)
    nb = h[H_NB] if ok else 0
    mi = c_view(buf[h[H_MI]:].view(np.int64), (nb, NI))
    mc = c_view(buf[h[H_MC]:], (nb, NMC))
    mI = c_view(buf[h[H_MI6]:], (nb, 6, 6))
    dv = c_view(buf[h[H_DV]:], (nb, NDV))
    dm = c_view(buf[h[H_DM]:], (nb, NDM, 6, 6))
    return h, ok, mi, mc, mI, dv, dm


@njit(**JIT)
def inverse_dynamics(buf, q, v, a, tau):
    """RNEA (kernels/dynamics.rnea) on the Data buffer ``buf``; returns a status code."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    nv = h[H_NV]
    if (not ok or q.shape[0] != h[H_NQ] or v.shape[0] != nv or a.shape[0] != nv
            or tau.shape[0] != nv or not (c_strides(buf) and c_strides(q) and c_strides(v)
                                          and c_strides(a) and c_strides(tau))):
        return BAD_SIZE
    return rnea(mi, mc, mI, dv, dm, bare(q), bare(v), bare(a), bare(tau), True, False)


@njit(**JIT)
def forward_dynamics(buf, q, v, tau, acc):
    """ABA (kernels/dynamics.aba) on the Data buffer ``buf``; returns a status code."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    nv, nb = h[H_NV], h[H_NB]
    if (not ok or q.shape[0] != h[H_NQ] or v.shape[0] != nv or tau.shape[0] != nv
            or acc.shape[0] != nv or not (c_strides(buf) and c_strides(q) and c_strides(v)
                                          and c_strides(tau) and c_strides(acc))):
        return BAD_SIZE
    presc = c_view(buf[h[H_PRESC]:].view(np.bool_), (nb,))
    failed = c_view(buf[h[H_FAIL]:].view(np.int64), (1,))
    return aba(mi, mc, mI, dv, dm, bare(q), bare(v), bare(tau), presc, bare(acc),
               c_view(buf[h[H_TAU]:], (nv,)), failed, True, False)


@njit(**JIT)
def mass_matrix(buf, q, M):
    """CRBA (kernels/dynamics.crba) on the Data buffer ``buf``; returns a status code."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    nv = h[H_NV]
    if (not ok or q.shape[0] != h[H_NQ] or M.shape[0] != nv or M.shape[1] != nv
            or not (c_strides(buf) and c_strides(q) and c_strides(M))):
        return BAD_SIZE
    return crba(mi, mc, mI, dv, dm, bare(q), c_view(buf[h[H_ZERO]:], (nv,)),
                c_view(M, (nv, nv)), True)


_VEC = types.Array(types.float64, 1, "C")
_MAT = types.Array(types.float64, 2, "C")
#: the one signature each entry is compiled for, by entry name
SIGNATURES = {
    "inverse_dynamics": (inverse_dynamics, (_VEC,) * 5),
    "forward_dynamics": (forward_dynamics, (_VEC,) * 5),
    "mass_matrix": (mass_matrix, (_VEC, _VEC, _MAT)),
}
