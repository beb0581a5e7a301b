"""Compiled part of the closed-loop algorithms (Kim 2012, section 3).

``articulated_columns`` is Kim's "simplified" articulated-body run (after eq. 67, and the
hybrid version of eqs. 74-80): the bias terms b are dropped (no velocity, no gravity), the
torques are the columns of B, and the articulated inertias I^, U = I^ S and Psi = (S^T I^ S)^-1
of the ABA/hybrid call that just ran on the same Data at the same q are reused. Each column
costs one O(n) backward and one O(n) forward sweep, with no 6x6 products: M^-1 A^T (or, with
prescribed joints, M_vv^-1 A_v^T and M_uv M_vv^-1 A_v^T) without forming M or M^-1.
"""
from numba import njit

from .layout import P, VI, NV, WR, WP, MS, MIH, MU, MPSI, OK
from .spatial import JIT, ad_inv, ad_inv_T_add


@njit(**JIT)
def articulated_columns(mi, dv, dm, presc, B, Y, Tu, bh, acc, rr):
    """For every column c of B (nv, k): Y[:, c] the accelerations of the joints that are not
    prescribed (``presc`` per body, as left by the preceding aba/hybrid kernel) and Tu[:, c] the
    torques of the prescribed ones, when B[:, c] drives the free joints from rest without
    gravity and the prescribed joints have zero acceleration. Other entries are set to 0.

    bh, acc, rr: (nj + 1, 6) work arrays (bias wrench B^_i, body acceleration, r_i).
    """
    nj = mi.shape[0] - 1
    beta = acc[0].copy()
    t = acc[0].copy()
    for c in range(B.shape[1]):
        for i in range(nj + 1):
            for k in range(6):
                bh[i, k] = 0.0
                acc[i, k] = 0.0
        for i in range(nj, 0, -1):                 # backward: articulated bias wrenches
            vi, nv = mi[i, VI], mi[i, NV]
            for r in range(6):
                beta[r] = bh[i, r]
            if not presc[i]:
                S, U, Psi = dm[i, MS], dm[i, MU], dm[i, MPSI]
                for k in range(nv):                # r_i = tau_i - S^T B^_i
                    s = B[vi + k, c]
                    for r in range(6):
                        s -= S[r, k] * bh[i, r]
                    rr[i, k] = s
                for k in range(nv):                # beta = B^_i + U Psi r_i
                    s = 0.0
                    for l in range(nv):
                        s += Psi[k, l] * rr[i, l]
                    t[k] = s
                for r in range(6):
                    for k in range(nv):
                        beta[r] += U[r, k] * t[k]
            p = mi[i, P]
            if p > 0:
                ad_inv_T_add(dv[i, WR:WR + 9], dv[i, WP:WP + 3], beta, bh[p], 1.0)
        for i in range(1, nj + 1):                 # forward: accelerations from rest
            vi, nv = mi[i, VI], mi[i, NV]
            S = dm[i, MS]
            ad_inv(dv[i, WR:WR + 9], dv[i, WP:WP + 3], acc[mi[i, P]], acc[i])
            if presc[i]:                           # qdd_u = 0: tau_u = S^T (I^ A_i + B^_i)
                Ih = dm[i, MIH]
                for k in range(nv):
                    s = 0.0
                    for r in range(6):
                        f = bh[i, r]
                        for cc in range(6):
                            f += Ih[r, cc] * acc[i, cc]
                        s += S[r, k] * f
                    Tu[vi + k, c] = s
                    Y[vi + k, c] = 0.0
            else:                                  # qdd = Psi (r_i - U^T A_i)
                U, Psi = dm[i, MU], dm[i, MPSI]
                for k in range(nv):
                    s = rr[i, k]
                    for r in range(6):
                        s -= U[r, k] * acc[i, r]
                    t[k] = s
                for k in range(nv):
                    s = 0.0
                    for l in range(nv):
                        s += Psi[k, l] * t[l]
                    Y[vi + k, c] = s
                    Tu[vi + k, c] = 0.0
                    for r in range(6):
                        acc[i, r] += S[r, k] * s
    return OK
