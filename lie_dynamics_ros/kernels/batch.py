"""Row loops of the dynamics kernels: one compiled call evaluates the states lo..hi-1 on one
Data (one worker thread). Each row gets its own status code, so a bad row is found by index.
The rows run the per-state kernels as they are (armature and principal-axis joints included).
The cache key covers the kernel files imported (kernels/jit.py), so edits of
kernels/dynamics.py or what it calls recompile these rows."""

from .dynamics import rnea, aba, crba, hybrid
from .jit import JIT, njit
from .views import bare


# each row runs on views without reference counts (kernels/views.py): the caller holds every
# array for the whole call


@njit(**JIT)
def rnea_rows(mi, mc, mI, dv, dm, Q, V, A, TAU, status, lo, hi):
    m0, m1, m2, d0, d1 = bare(mi), bare(mc), bare(mI), bare(dv), bare(dm)
    Qb, Vb, Ab, Tb = bare(Q), bare(V), bare(A), bare(TAU)
    for r in range(lo, hi):
        status[r] = rnea(m0, m1, m2, d0, d1, Qb[r], Vb[r], Ab[r], Tb[r], True, False)


@njit(**JIT)
def aba_rows(mi, mc, mI, dv, dm, Q, V, TAU, presc, ACC, tau_out, failed, status, lo, hi):
    m0, m1, m2, d0, d1 = bare(mi), bare(mc), bare(mI), bare(dv), bare(dm)
    Qb, Vb, Tb, Ab = bare(Q), bare(V), bare(TAU), bare(ACC)
    pb, tb, fb = bare(presc), bare(tau_out), bare(failed)
    for r in range(lo, hi):
        status[r] = aba(m0, m1, m2, d0, d1, Qb[r], Vb[r], Tb[r], pb, Ab[r], tb, fb, True, False)


@njit(**JIT)
def crba_rows(mi, mc, mI, dv, dm, Q, zero_v, M, status, lo, hi):
    m0, m1, m2, d0, d1 = bare(mi), bare(mc), bare(mI), bare(dv), bare(dm)
    Qb, zb, Mb = bare(Q), bare(zero_v), bare(M)
    for r in range(lo, hi):
        status[r] = crba(m0, m1, m2, d0, d1, Qb[r], zb, Mb[r], True)


@njit(**JIT)
def hybrid_rows(mi, mc, mI, dv, dm, Q, V, A, TAU, mask, presc, A_OUT, TAU_OUT, failed, status,
                lo, hi):
    for r in range(lo, hi):
        status[r] = hybrid(mi, mc, mI, dv, dm, Q[r], V[r], A[r], TAU[r], mask, presc, A_OUT[r],
                           TAU_OUT[r], failed, True, False)
