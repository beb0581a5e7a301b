"""Compiled part of the closed-loop algorithms (Kim 2012, section 3).

``closure_terms`` turns the body poses, Jacobians J_i and their rates Jd_i of one kinematics
run into each closure's relative-twist Jacobian and relative-acceleration bias (Kim's order).

``articulated_columns`` is Kim's "simplified" articulated-body run (after eq. 67, and the
hybrid version of eqs. 74-80): the bias terms b are dropped (no velocity, no gravity), the
torques are the columns of B, and the articulated inertias I^, U = I^ S and Psi = (S^T I^ S)^-1
of the ABA/hybrid call that just ran on the same Data at the same q are reused. Each column
costs one O(n) backward and one O(n) forward sweep, with no 6x6 products: M^-1 A^T (or, with
prescribed joints, M_vv^-1 A_v^T and M_uv M_vv^-1 A_v^T) without forming M or M^-1.
"""
import numpy as np

from .layout import P, VI, NV, WR, WP, OR, OP, MS, MIH, MU, MPSI, OK
from .jit import JIT, njit
from .lie import se3_Ad_inv, se3_Ad_inv_T_add


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
                se3_Ad_inv_T_add(dv[i, WR:WR + 9], dv[i, WP:WP + 3], beta, bh[p], 1.0)
        for i in range(1, nj + 1):                 # forward: accelerations from rest
            vi, nv = mi[i, VI], mi[i, NV]
            S = dm[i, MS]
            se3_Ad_inv(dv[i, WR:WR + 9], dv[i, WP:WP + 3], acc[mi[i, P]], acc[i])
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


@njit(**JIT)
def closure_terms(dv, Jb, Jd, v, rows, Xoff, Toff, with_bias, Jrel, brel, Tab):
    """Per closure l between F_a = body rows[l, 0] * Toff[l, 0] and F_b = body rows[l, 1] *
    Toff[l, 1] (Kim's order; dv holds world poses, Jb/Jd the body Jacobians and their rates):

    Jrel[l] = J_b - Ad_{T_ba} J_a (relative twist of F_b w.r.t. F_a, in F_b), Tab[l] = T_a^-1 T_b,
    and when ``with_bias``: brel[l] = Jd_b v - Ad_{T_ba} Jd_a v + ad(Jrel v) (J_b v), the
    relative acceleration at zero joint acceleration. Xoff[l, s] = Ad_{Toff[l, s]^-1}.
    """
    nl = rows.shape[0]
    nv = Jb.shape[2]
    T = np.empty((2, 4, 4))
    Ja = np.empty((6, nv))
    Jbb = np.empty((6, nv))
    da = np.zeros(6)
    db = np.zeros(6)
    X = np.zeros((6, 6))
    for l in range(nl):
        for s in range(2):
            r = rows[l, s]
            W = np.eye(4)
            for i in range(3):
                for j in range(3):
                    W[i, j] = dv[r, OR + 3 * i + j]
                W[i, 3] = dv[r, OP + i]
            T[s] = W @ Toff[l, s]
        Ja[:, :] = Xoff[l, 0] @ Jb[rows[l, 0]]
        Jbb[:, :] = Xoff[l, 1] @ Jb[rows[l, 1]]
        # T_ba = T_b^-1 T_a and T_ab = its inverse
        Rb, pb = np.ascontiguousarray(T[1, :3, :3]), T[1, :3, 3].copy()
        Ra, pa = np.ascontiguousarray(T[0, :3, :3]), T[0, :3, 3].copy()
        R = Rb.T @ Ra
        p = Rb.T @ (pa - pb)
        Tab[l, :3, :3] = R.T
        Tab[l, :3, 3] = -(R.T @ p)
        Tab[l, 3, :3] = 0.0
        Tab[l, 3, 3] = 1.0
        # Ad_{T_ba} in Kim's order: [[R, 0], [p^ R, R]]
        for i in range(3):
            for j in range(3):
                X[i, j] = R[i, j]
                X[3 + i, 3 + j] = R[i, j]
                X[i, 3 + j] = 0.0
        X[3, :3] = p[1] * R[2] - p[2] * R[1]
        X[4, :3] = p[2] * R[0] - p[0] * R[2]
        X[5, :3] = p[0] * R[1] - p[1] * R[0]
        Jrel[l] = Jbb - X @ Ja
        if with_bias:
            da[:] = Xoff[l, 0] @ (Jd[rows[l, 0]] @ v)
            db[:] = Xoff[l, 1] @ (Jd[rows[l, 1]] @ v)
            Vb = Jbb @ v
            Vr = Jrel[l] @ v
            b = db - X @ da
            w, u = Vr[:3], Vr[3:]
            b[:3] += np.cross(w, Vb[:3])
            b[3:] += np.cross(w, Vb[3:]) + np.cross(u, Vb[:3])
            brel[l] = b
    return OK
