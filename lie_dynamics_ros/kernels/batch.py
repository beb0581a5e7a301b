"""Row loops of the dynamics kernels: one compiled call evaluates the states lo..hi-1 on one
Data (one worker thread). Each row gets its own status code, so a bad row is found by index.
The rows run the per-state kernels as they are (armature and principal-axis joints included).
numba's cache does not follow calls into other modules: when kernels/dynamics.py or what it
calls changes, edit this file too, so that its cached rows are compiled again with it."""
from numba import njit

from .dynamics import rnea, aba, crba, hybrid
from .jit import JIT


@njit(**JIT)
def rnea_rows(mi, mc, mI, dv, dm, Q, V, A, TAU, status, lo, hi):
    for r in range(lo, hi):
        status[r] = rnea(mi, mc, mI, dv, dm, Q[r], V[r], A[r], TAU[r], True, False)


@njit(**JIT)
def aba_rows(mi, mc, mI, dv, dm, Q, V, TAU, presc, ACC, tau_out, failed, status, lo, hi):
    for r in range(lo, hi):
        status[r] = aba(mi, mc, mI, dv, dm, Q[r], V[r], TAU[r], presc, ACC[r], tau_out, failed,
                        True, False)


@njit(**JIT)
def crba_rows(mi, mc, mI, dv, dm, Q, zero_v, M, status, lo, hi):
    for r in range(lo, hi):
        status[r] = crba(mi, mc, mI, dv, dm, Q[r], zero_v, M[r], True)


@njit(**JIT)
def hybrid_rows(mi, mc, mI, dv, dm, Q, V, A, TAU, mask, presc, A_OUT, TAU_OUT, failed, status,
                lo, hi):
    for r in range(lo, hi):
        status[r] = hybrid(mi, mc, mI, dv, dm, Q[r], V[r], A[r], TAU[r], mask, presc, A_OUT[r],
                           TAU_OUT[r], failed, True, False)
