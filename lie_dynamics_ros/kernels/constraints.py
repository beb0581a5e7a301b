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

from .layout import P, VI, NV, WR, WP, OR, OP, ETA, MS, MIH, MU, MPSI, OK
from .jit import JIT, njit
from .lie import se3_Ad_inv, se3_Ad_inv_T_add


@njit(**JIT)
def articulated_columns(mi, dv, dm, presc, B, Y, Tu, bh, acc, rr, active):
    """For every column c of B (nv, k): Y[:, c] the accelerations of the joints that are not
    prescribed (``presc`` per body, as left by the preceding aba/hybrid kernel) and Tu[:, c] the
    torques of the prescribed ones, when B[:, c] drives the free joints from rest without
    gravity and the prescribed joints have zero acceleration. Other entries are set to 0.
    ``active`` (nj + 1,) int64: the forward sweep computes the bodies with a nonzero entry only
    (a set closed under parents, e.g. the constrained bodies' chains); the others' rows are 0.

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
            idle = True                            # nothing to pass on (a body off B's chains)
            for r in range(6):
                beta[r] = bh[i, r]
                idle = idle and beta[r] == 0.0
            if not presc[i]:
                S, U, Psi = dm[i, MS], dm[i, MU], dm[i, MPSI]
                for k in range(nv):                # r_i = tau_i - S^T B^_i
                    s = B[vi + k, c]
                    for r in range(6):
                        s -= S[r, k] * bh[i, r]
                    rr[i, k] = s
                    idle = idle and s == 0.0
                if idle:
                    continue
                for k in range(nv):                # beta = B^_i + U Psi r_i
                    s = 0.0
                    for l in range(nv):
                        s += Psi[k, l] * rr[i, l]
                    t[k] = s
                for r in range(6):
                    for k in range(nv):
                        beta[r] += U[r, k] * t[k]
            p = mi[i, P]
            if p > 0 and not idle:
                se3_Ad_inv_T_add(dv[i, WR:WR + 9], dv[i, WP:WP + 3], beta, bh[p], 1.0)
        for i in range(1, nj + 1):                 # forward: accelerations from rest
            vi, nv = mi[i, VI], mi[i, NV]
            if not active[i]:
                for k in range(nv):
                    Y[vi + k, c] = 0.0
                    Tu[vi + k, c] = 0.0
                continue
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
def closure_terms(dv, Jb, Jd, v, rows, Xoff, Toff, point, with_bias, Jrel, brel, Tab):
    """Per closure l between F_a = body rows[l, 0] * Toff[l, 0] and F_b = body rows[l, 1] *
    Toff[l, 1] (Kim's order; dv holds world poses, Jb/Jd the body Jacobians and their rates):

    Jrel[l] = J_b - Ad_{T_ba} J_a (relative twist of F_b w.r.t. F_a, in F_b), Tab[l] = T_a^-1 T_b,
    and when ``with_bias``: brel[l] = Jd_b v - Ad_{T_ba} Jd_a v + ad(Jrel v) (J_b v), the
    relative acceleration at zero joint acceleration. Xoff[l, s] = Ad_{Toff[l, s]^-1}.
    ``point[l]`` = 1 adds w x u of the relative twist (w, u) to the linear rows: the classical
    acceleration of F_b's origin, the derivative of its world velocity (for F_a in the world,
    a point contact; Featherstone 2008, ch. 2: classical vs spatial acceleration) instead of the
    derivative of the body twist.
    """
    nv = Jb.shape[2]
    J = np.empty((2, 6, nv))
    d = np.zeros((2, 6))
    sc6, sc4 = np.empty((9, 6)), np.empty((3, 4, 4))
    for l in range(rows.shape[0]):
        for s in range(2):
            J[s] = Xoff[l, s] @ Jb[rows[l, s]]
            if with_bias:
                d[s] = Xoff[l, s] @ (Jd[rows[l, s]] @ v)
        _relative_terms(l, dv, v, rows, Toff, point, with_bias, J, d, Jrel, brel, Tab, sc6, sc4)
    return OK


@njit(**JIT)
def _relative_terms(l, dv, v, rows, Toff, point, with_bias, J, d, Jrel, brel, Tab, sc6, sc4):
    """Closure l's Jrel, brel, Tab from its sides' Jacobians J[s] and biases d[s] (in F_a, F_b).
    Written out in scalars on the scratch sc6 (9, 6) and sc4 (3, 4, 4): this runs per closure
    on every contact-dynamics call, where allocations would cost more than the arithmetic."""
    for s in range(2):                             # world pose of F_s = body pose * Toff
        r = rows[l, s]
        for i in range(3):
            for j in range(3):
                sc4[s, i, j] = (dv[r, OR + 3 * i] * Toff[l, s, 0, j]
                                + dv[r, OR + 3 * i + 1] * Toff[l, s, 1, j]
                                + dv[r, OR + 3 * i + 2] * Toff[l, s, 2, j])
            sc4[s, i, 3] = (dv[r, OP + i] + dv[r, OR + 3 * i] * Toff[l, s, 0, 3]
                            + dv[r, OR + 3 * i + 1] * Toff[l, s, 1, 3]
                            + dv[r, OR + 3 * i + 2] * Toff[l, s, 2, 3])
    # T_ba = T_b^-1 T_a: R = Rb^T Ra, p = Rb^T (pa - pb) in sc4[2]; T_ab = its inverse
    Ta, Tb, Tba = sc4[0], sc4[1], sc4[2]
    for i in range(3):
        for j in range(3):
            Tba[i, j] = Tb[0, i] * Ta[0, j] + Tb[1, i] * Ta[1, j] + Tb[2, i] * Ta[2, j]
        Tba[i, 3] = (Tb[0, i] * (Ta[0, 3] - Tb[0, 3]) + Tb[1, i] * (Ta[1, 3] - Tb[1, 3])
                     + Tb[2, i] * (Ta[2, 3] - Tb[2, 3]))
    for i in range(3):
        for j in range(3):
            Tab[l, i, j] = Tba[j, i]
        Tab[l, i, 3] = -(Tba[0, i] * Tba[0, 3] + Tba[1, i] * Tba[1, 3] + Tba[2, i] * Tba[2, 3])
        Tab[l, 3, i] = 0.0
    Tab[l, 3, 3] = 1.0
    # Ad_{T_ba} in Kim's order: [[R, 0], [p^ R, R]]
    X = sc6[:6]
    p0, p1, p2 = Tba[0, 3], Tba[1, 3], Tba[2, 3]
    for j in range(3):
        for i in range(3):
            X[i, j] = Tba[i, j]
            X[3 + i, 3 + j] = Tba[i, j]
            X[i, 3 + j] = 0.0
        X[3, j] = p1 * Tba[2, j] - p2 * Tba[1, j]
        X[4, j] = p2 * Tba[0, j] - p0 * Tba[2, j]
        X[5, j] = p0 * Tba[1, j] - p1 * Tba[0, j]
    nv = J.shape[2]
    anchored = rows[l, 0] == 0                     # F_a in the world: J_a = 0, bias 0
    for c in range(nv):
        for i in range(6):
            t = J[1, i, c]
            if not anchored:
                for k in range(6):
                    t -= X[i, k] * J[0, k, c]
            Jrel[l, i, c] = t
    if with_bias:
        Vb, Vr, b = sc6[6], sc6[7], sc6[8]
        for i in range(6):
            sb = 0.0
            sr = 0.0
            for c in range(nv):
                sb += J[1, i, c] * v[c]
                sr += Jrel[l, i, c] * v[c]
            Vb[i], Vr[i] = sb, sr
        for i in range(6):
            t = d[1, i]
            if not anchored:
                for k in range(6):
                    t -= X[i, k] * d[0, k]
            b[i] = t
        w0, w1, w2, u0, u1, u2 = Vr[0], Vr[1], Vr[2], Vr[3], Vr[4], Vr[5]
        b[0] += w1 * Vb[2] - w2 * Vb[1]            # ad(Vr) Vb = (w x wb, w x ub + u x wb)
        b[1] += w2 * Vb[0] - w0 * Vb[2]
        b[2] += w0 * Vb[1] - w1 * Vb[0]
        b[3] += w1 * Vb[5] - w2 * Vb[4] + u1 * Vb[2] - u2 * Vb[1]
        b[4] += w2 * Vb[3] - w0 * Vb[5] + u2 * Vb[0] - u0 * Vb[2]
        b[5] += w0 * Vb[4] - w1 * Vb[3] + u0 * Vb[1] - u1 * Vb[0]
        if point[l]:
            b[3] += w1 * u2 - w2 * u1
            b[4] += w2 * u0 - w0 * u2
            b[5] += w0 * u1 - w1 * u0
        for i in range(6):
            brel[l, i] = b[i]


@njit(**JIT)
def bias_accelerations(mi, dv, ab):
    """ab[i] = Vd_i at zero joint acceleration and no gravity (X ab_p + eta_i): J_i-dot v,
    from the twists and eta that an ABA or RNEA run left in dv."""
    for k in range(6):
        ab[0, k] = 0.0
    for i in range(1, mi.shape[0]):
        se3_Ad_inv(dv[i, WR:WR + 9], dv[i, WP:WP + 3], ab[mi[i, P]], ab[i])
        for k in range(6):
            ab[i, k] += dv[i, ETA + k]


@njit(**JIT)
def chain_jacobian(mi, dv, dm, r, X, out, sc):
    """out (6, nv) = X J_r: body r's Jacobian (Kim's order) through its ancestors only,
    column block of joint k = Ad_{T_rk} S_k from the world poses; X a 6x6 applied after;
    sc: (4, 6) scratch."""
    out[:, :] = 0.0
    if r == 0:
        return
    Rr = dv[r, OR:OR + 9]
    pr = dv[r, OP:OP + 3]
    col, w, u, p = sc[0], sc[1, :3], sc[2, :3], sc[3, :3]
    R = sc[1:4, 3:6]
    k = r
    while k > 0:
        Rk, pk = dv[k, OR:OR + 9], dv[k, OP:OP + 3]
        for i in range(3):                         # R = R_r^T R_k, p = R_r^T (p_k - p_r)
            for j in range(3):
                R[i, j] = (Rr[i] * Rk[j] + Rr[3 + i] * Rk[3 + j] + Rr[6 + i] * Rk[6 + j])
            p[i] = (Rr[i] * (pk[0] - pr[0]) + Rr[3 + i] * (pk[1] - pr[1])
                    + Rr[6 + i] * (pk[2] - pr[2]))
        vi, nv = mi[k, VI], mi[k, NV]
        S = dm[k, MS]
        for c in range(nv):
            for i in range(3):
                w[i] = R[i, 0] * S[0, c] + R[i, 1] * S[1, c] + R[i, 2] * S[2, c]
                u[i] = R[i, 0] * S[3, c] + R[i, 1] * S[4, c] + R[i, 2] * S[5, c]
            col[0], col[1], col[2] = w[0], w[1], w[2]
            col[3] = u[0] + p[1] * w[2] - p[2] * w[1]
            col[4] = u[1] + p[2] * w[0] - p[0] * w[2]
            col[5] = u[2] + p[0] * w[1] - p[1] * w[0]
            for i in range(6):
                s = 0.0
                for j in range(6):
                    s += X[i, j] * col[j]
                out[i, vi + c] = s
        k = mi[k, P]


@njit(**JIT)
def chain_terms(mi, dv, dm, v, rows, Xoff, Toff, point, with_bias, ab, Jrel, brel, Tab):
    """``closure_terms`` from the poses, motion subspaces and bias accelerations ``ab`` alone:
    each side's Jacobian along its chain of ancestors, its bias X ab_r; no J_i of every body."""
    nv = v.shape[0]
    J = np.empty((2, 6, nv))
    d = np.zeros((2, 6))
    sc, sc6, sc4 = np.empty((4, 6)), np.empty((9, 6)), np.empty((3, 4, 4))
    for l in range(rows.shape[0]):
        for s in range(2):
            chain_jacobian(mi, dv, dm, rows[l, s], Xoff[l, s], J[s], sc)
            if with_bias:
                for i in range(6):
                    t = 0.0
                    for k in range(6):
                        t += Xoff[l, s, i, k] * ab[rows[l, s], k]
                    d[s, i] = t
        _relative_terms(l, dv, v, rows, Toff, point, with_bias, J, d, Jrel, brel, Tab, sc6, sc4)
    return OK
