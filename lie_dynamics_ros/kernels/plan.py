"""The compiled entries of the public single-state calls: one Data buffer (``data.buf``, laid
out by ``layout.plan_offsets``) carries the model and the work memory, so that ID, FD and M
dispatch with the buffer, the inputs and the output only.

Each entry checks the input lengths against the buffer's header (status BAD_SIZE) before it
reads them. The dispatchers accept exactly the signatures compiled by ``compile_entries``
(C-contiguous float64 vectors, ``SIGNATURES``;
``algorithms/_inputs.compile_entries``): any other array (int64, strided, 2-D, read-only) or a list is
a ``TypeError`` of numba's dispatch, never a reinterpretation, and the Python caller then takes its
checked path.
"""
import numpy as np
from numba import njit, types

from .layout import (NH, NI, NMC, NDV, NDM, H_NB, H_NQ, H_NV, H_MI, H_FAIL, H_PRESC, H_MC, H_MI6,
                     H_DV, H_DM, H_TAU, H_ZERO, BAD_SIZE)
from .dynamics import rnea, aba, crba
from .jit import JIT


@njit(inline="always", **JIT)
def _unpack(buf):
    h = buf[:NH].view(np.int64)
    nb = h[H_NB]
    mi = buf[h[H_MI]:h[H_MI] + nb * NI].view(np.int64).reshape((nb, NI))
    mc = buf[h[H_MC]:h[H_MC] + nb * NMC].reshape((nb, NMC))
    mI = buf[h[H_MI6]:h[H_MI6] + nb * 36].reshape((nb, 6, 6))
    dv = buf[h[H_DV]:h[H_DV] + nb * NDV].reshape((nb, NDV))
    dm = buf[h[H_DM]:h[H_DM] + nb * NDM * 36].reshape((nb, NDM, 6, 6))
    return h, mi, mc, mI, dv, dm


@njit(**JIT)
def inverse_dynamics(buf, q, v, a, tau):
    """RNEA (kernels/dynamics.rnea) on the Data buffer ``buf``; returns a status code."""
    h, mi, mc, mI, dv, dm = _unpack(buf)
    nv = h[H_NV]
    if q.shape[0] != h[H_NQ] or v.shape[0] != nv or a.shape[0] != nv or tau.shape[0] != nv:
        return BAD_SIZE
    return rnea(mi, mc, mI, dv, dm, q, v, a, tau, True, False)


@njit(**JIT)
def forward_dynamics(buf, q, v, tau, acc):
    """ABA (kernels/dynamics.aba) on the Data buffer ``buf``; returns a status code."""
    h, mi, mc, mI, dv, dm = _unpack(buf)
    nv, nb = h[H_NV], h[H_NB]
    if q.shape[0] != h[H_NQ] or v.shape[0] != nv or tau.shape[0] != nv or acc.shape[0] != nv:
        return BAD_SIZE
    presc = buf[h[H_PRESC]:h[H_PRESC] + (nb + 7) // 8].view(np.bool_)[:nb]
    failed = buf[h[H_FAIL]:h[H_FAIL] + 1].view(np.int64)
    return aba(mi, mc, mI, dv, dm, q, v, tau, presc, acc, buf[h[H_TAU]:h[H_TAU] + nv], failed,
               True, False)


@njit(**JIT)
def mass_matrix(buf, q, M):
    """CRBA (kernels/dynamics.crba) on the Data buffer ``buf``; returns a status code."""
    h, mi, mc, mI, dv, dm = _unpack(buf)
    nv = h[H_NV]
    if q.shape[0] != h[H_NQ] or M.shape[0] != nv or M.shape[1] != nv:
        return BAD_SIZE
    return crba(mi, mc, mI, dv, dm, q, buf[h[H_ZERO]:h[H_ZERO] + nv], M, True)


_VEC = types.Array(types.float64, 1, "C")
_MAT = types.Array(types.float64, 2, "C")
SIGNATURES = ((inverse_dynamics, (_VEC,) * 5), (forward_dynamics, (_VEC,) * 5),
              (mass_matrix, (_VEC, _VEC, _MAT)))
