"""The compiled entries of the public single-state calls: one Data buffer (``data.buf``, laid
out by ``layout.plan_offsets``) carries the model and the work memory, so that ID, FD and M
(and the ID/FD derivatives) dispatch with the buffer, the inputs and the output only.

Each entry checks the input lengths against the buffer's header (status BAD_SIZE) before it
reads them. The dispatchers accept exactly the signatures compiled by ``compile_entries``
(C-contiguous float64 vectors, ``SIGNATURES``;
``algorithms/_inputs.compile_entries``): any other array (int64, strided, 2-D, read-only) or a list is
a ``TypeError`` of numba's dispatch, never a reinterpretation, and the Python caller then takes its
checked path.
"""
import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from .layout import (NH, NI, NMC, NDV, NDM, H_NB, H_NQ, H_NV, H_MI, H_FAIL, H_PRESC, H_MC, H_MI6,
                     H_DV, H_DM, H_TAU, H_ZERO, H_ACC, BAD_SIZE)
from .dynamics import rnea, aba, crba
from .derivatives import rnea_derivatives, aba_derivatives
from .jit import JIT


@intrinsic
def _c_view(typingctx, flat, shape):
    """``flat`` (a C-contiguous array) seen as a C-contiguous array of ``shape`` from its
    first element: ``flat[:prod(shape)].reshape(shape)`` without numba's reshape, which calls
    a C helper (tens of ns, more than the dispatch of an argument), and without a reference
    count: the view and every view the kernels take of it carry no meminfo, so numba's atomic
    increments and decrements on each row view (a third of a kernel's time) vanish. Valid while
    the entry runs: the caller holds ``flat``, and the kernels return status codes only, never a
    view. The caller guarantees prod(shape) <= flat.size (``_unpack`` checks the header)."""
    if not (isinstance(flat, types.Array) and flat.layout == "C"):
        return None
    nd = len(shape)
    ret = types.Array(flat.dtype, nd, "C")

    def codegen(context, builder, sig, args):
        src = make_array(sig.args[0])(context, builder, args[0])
        dims = cgutils.unpack_tuple(builder, args[1], nd)
        strides = [src.itemsize]
        for k in range(nd - 1, 0, -1):
            strides.insert(0, builder.mul(strides[0], dims[k]))
        out = make_array(ret)(context, builder)
        populate_array(out, data=src.data, shape=dims, strides=strides, itemsize=src.itemsize,
                       meminfo=None, parent=src.parent)
        return impl_ret_borrowed(context, builder, ret, out._getvalue())
    return ret(flat, shape), codegen


@njit(inline="always", **JIT)
def _bare(x):
    """The 1-D argument ``x`` without its reference count (see ``_c_view``)."""
    return _c_view(x, (x.shape[0],))


@njit(inline="always", **JIT)
def _header_ok(buf, h):
    """The header's offsets are those of layout.plan_offsets and the buffer holds them all."""
    nb, nv = h[H_NB], h[H_NV]
    n = NH
    for k, size in ((H_MI, nb * NI), (H_FAIL, 1), (H_PRESC, (nb + 7) // 8), (H_MC, nb * NMC),
                    (H_MI6, nb * 36), (H_DV, nb * NDV), (H_DM, nb * NDM * 36), (H_TAU, nv),
                    (H_ZERO, nv), (H_ACC, nv)):
        if h[k] != n:
            return False
        n += size
    return nb >= 1 and nv >= 0 and buf.shape[0] >= n


@njit(inline="always", **JIT)
def _unpack(buf):
    """(header, ok, mi, mc, mI, dv, dm): the model and work arrays inside ``buf``; with a header
    that does not describe ``buf`` (ok False) the views are empty."""
    h = buf[:NH].view(np.int64)
    ok = _header_ok(buf, h)
    nb = h[H_NB] if ok else 0
    mi = _c_view(buf[h[H_MI]:].view(np.int64), (nb, NI))
    mc = _c_view(buf[h[H_MC]:], (nb, NMC))
    mI = _c_view(buf[h[H_MI6]:], (nb, 6, 6))
    dv = _c_view(buf[h[H_DV]:], (nb, NDV))
    dm = _c_view(buf[h[H_DM]:], (nb, NDM, 6, 6))
    return h, ok, mi, mc, mI, dv, dm


@njit(**JIT)
def inverse_dynamics(buf, q, v, a, tau):
    """RNEA (kernels/dynamics.rnea) on the Data buffer ``buf``; returns a status code."""
    h, ok, mi, mc, mI, dv, dm = _unpack(buf)
    nv = h[H_NV]
    if not ok or q.shape[0] != h[H_NQ] or v.shape[0] != nv or a.shape[0] != nv \
            or tau.shape[0] != nv:
        return BAD_SIZE
    return rnea(mi, mc, mI, dv, dm, _bare(q), _bare(v), _bare(a), _bare(tau), True, False)


@njit(**JIT)
def forward_dynamics(buf, q, v, tau, acc):
    """ABA (kernels/dynamics.aba) on the Data buffer ``buf``; returns a status code."""
    h, ok, mi, mc, mI, dv, dm = _unpack(buf)
    nv, nb = h[H_NV], h[H_NB]
    if not ok or q.shape[0] != h[H_NQ] or v.shape[0] != nv or tau.shape[0] != nv \
            or acc.shape[0] != nv:
        return BAD_SIZE
    presc = _c_view(buf[h[H_PRESC]:].view(np.bool_), (nb,))
    failed = _c_view(buf[h[H_FAIL]:].view(np.int64), (1,))
    return aba(mi, mc, mI, dv, dm, _bare(q), _bare(v), _bare(tau), presc, _bare(acc),
               _c_view(buf[h[H_TAU]:], (nv,)), failed, True, False)


@njit(**JIT)
def mass_matrix(buf, q, M):
    """CRBA (kernels/dynamics.crba) on the Data buffer ``buf``; returns a status code."""
    h, ok, mi, mc, mI, dv, dm = _unpack(buf)
    nv = h[H_NV]
    if not ok or q.shape[0] != h[H_NQ] or M.shape[0] != nv or M.shape[1] != nv:
        return BAD_SIZE
    return crba(mi, mc, mI, dv, dm, _bare(q), _c_view(buf[h[H_ZERO]:], (nv,)),
                _c_view(M, (nv, nv)), True)


@njit(**JIT)
def inverse_dynamics_derivatives(buf, q, v, a, out):
    """dtau/dq, dtau/dv, M (kernels/derivatives.rnea_derivatives, world-frame form) into
    out[0], out[1], out[2] on the Data buffer ``buf``; returns a status code."""
    h, ok, mi, mc, mI, dv, dm = _unpack(buf)
    nv = h[H_NV]
    if not ok or q.shape[0] != h[H_NQ] or v.shape[0] != nv or a.shape[0] != nv \
            or out.shape[0] != 3 or out.shape[1] != nv or out.shape[2] != nv:
        return BAD_SIZE
    out2 = _c_view(out, (3, nv, nv))
    return rnea_derivatives(mi, mc, mI, dv, dm, _bare(q), _bare(v), _bare(a), out2[0], out2[1],
                            out2[2], True, False, True)


@njit(**JIT)
def forward_dynamics_derivatives(buf, q, v, tau, out):
    """da/dq, da/dv, M^-1 (kernels/derivatives.aba_derivatives) into out[0], out[1], out[2] on
    the Data buffer ``buf``; returns a status code."""
    h, ok, mi, mc, mI, dv, dm = _unpack(buf)
    nv = h[H_NV]
    if not ok or q.shape[0] != h[H_NQ] or v.shape[0] != nv or tau.shape[0] != nv \
            or out.shape[0] != 3 or out.shape[1] != nv or out.shape[2] != nv:
        return BAD_SIZE
    failed = _c_view(buf[h[H_FAIL]:].view(np.int64), (1,))
    out2 = _c_view(out, (3, nv, nv))
    return aba_derivatives(mi, mc, mI, dv, dm, _bare(q), _bare(v), _bare(tau),
                           _c_view(buf[h[H_ACC]:], (nv,)), out2[0], out2[1], out2[2], failed,
                           True, False)


_VEC = types.Array(types.float64, 1, "C")
_MAT = types.Array(types.float64, 2, "C")
_MATS = types.Array(types.float64, 3, "C")
SIGNATURES = ((inverse_dynamics, (_VEC,) * 5), (forward_dynamics, (_VEC,) * 5),
              (mass_matrix, (_VEC, _VEC, _MAT)),
              (inverse_dynamics_derivatives, (_VEC,) * 4 + (_MATS,)),
              (forward_dynamics_derivatives, (_VEC,) * 4 + (_MATS,)))
