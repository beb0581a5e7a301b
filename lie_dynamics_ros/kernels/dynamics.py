"""Compiled recursions of Kim (2012) §2: RNEA (Table 2), ABA (Table 3), hybrid (Table 4), CRBA.

Each kernel takes the model arrays (mi, mc, mI) and the data arrays (dv, dm) of layout.py, runs
the joint kinematics when ``kin`` is true (false when Python has filled GENERAL joints itself),
and returns a status code.
"""
import numpy as np

from .layout import (P, K, VI, NV, G, ARM, WR, WP, SDV, V, A, F, ETA, BH, BETA, OR, OP, QDD, TMP,
                     TMP2, FEXT, MS, MIH, MU, MPSI, MPI, MSD, MD, MTMP, OK, NONFINITE, SINGULAR,
                     BAD_MASK, OVERFLOW)
from .jit import JIT, njit
from .lie import se3_Ad_inv, se3_Ad_inv_T_add, se3_ad_add, se3_ad_star_add
from .spatial import (mat_vec, matT_vec, symmetric_congruence_add, rigid_congruence_add,
                      invert_spd)
from .joint_kinematics import joint_kinematics, unit_row


@njit(inline="always", **JIT)
def _finite(x):
    for k in range(x.shape[0]):
        if not np.isfinite(x[k]):
            return False
    return True


@njit(**JIT)
def _velocities(mi, mc, mI, dv, dm, v, with_eta):
    """V_i = Ad_{T^-1} V_p + S_i qd_i (Kim 37); eta_i = ad(V_i) S_i qd_i + Sdot_i qd_i."""
    nj = mi.shape[0] - 1
    for k in range(6):
        dv[0, V + k] = 0.0
    for i in range(1, nj + 1):
        c = dv[i]
        vi, nv = mi[i, VI], mi[i, NV]
        Vi = c[V:V + 6]
        se3_Ad_inv(c[WR:WR + 9], c[WP:WP + 3], dv[mi[i, P], V:V + 6], Vi)
        Sq = c[TMP:TMP + 6]
        mat_vec(dm[i, MS], v[vi:vi + nv], Sq, nv, False)
        for k in range(6):
            Vi[k] += Sq[k]
        if with_eta:
            eta = c[ETA:ETA + 6]
            for k in range(6):
                eta[k] = c[SDV + k]
            se3_ad_add(Vi, Sq, eta, 1.0)


@njit(inline="always", **JIT)
def copy6(src, dst):
    """dst = src (6x6): explicit loops, which numba compiles to plain moves (a slice
    assignment goes through its general broadcasting copy)."""
    for r in range(6):
        for cc in range(6):
            dst[r, cc] = src[r, cc]


@njit(inline="always", **JIT)
def _gravity_base(mc, dv):
    """Vd_0 = (0, -g): gravity as a fictitious base acceleration (Kim 2012, Table 2)."""
    for k in range(3):
        dv[0, A + k] = 0.0
        dv[0, A + 3 + k] = -mc[0, G + k]


@njit(inline="always", **JIT)
def add_armature_torques(mi, mc, a, tau):
    """tau += armature * a: a rotor whose kinetic energy is its own spin alone (Spong 1987,
    assumption A2) adds its reflected inertia to M's diagonal only (Pinocchio's armature)."""
    for i in range(1, mi.shape[0]):
        vi = mi[i, VI]
        for k in range(mi[i, NV]):
            tau[vi + k] += mc[i, ARM + k] * a[vi + k]


@njit(inline="always", **JIT)
def add_armature_diagonal(mi, mc, M):
    """M += diag(armature) (zero on a mimic row, so each DOF gets its own once)."""
    for i in range(1, mi.shape[0]):
        vi = mi[i, VI]
        for k in range(mi[i, NV]):
            M[vi + k, vi + k] += mc[i, ARM + k]


@njit(**JIT)
def rnea(mi, mc, mI, dv, dm, q, v, a, tau, kin, use_fext):
    """Inverse dynamics, Kim Table 2: tau = M a + C v + g - sum J^T f_ext (M with the
    armature on its diagonal)."""
    if kin:
        st = joint_kinematics(mi, mc, dv, dm, q, v)
        if st != OK:
            return st
    if not _finite(a):
        return NONFINITE
    nj = mi.shape[0] - 1
    _velocities(mi, mc, mI, dv, dm, v, True)
    _gravity_base(mc, dv)
    for i in range(1, nj + 1):
        c = dv[i]
        vi, nv = mi[i, VI], mi[i, NV]
        Ai = c[A:A + 6]
        se3_Ad_inv(c[WR:WR + 9], c[WP:WP + 3], dv[mi[i, P], A:A + 6], Ai)
        mat_vec(dm[i, MS], a[vi:vi + nv], Ai, nv, True)
        for k in range(6):
            Ai[k] += c[ETA + k]
        # F_i = I Vd - ad*_V (I V) - F_ext  (Kim 42, children added below)
        Fi = c[F:F + 6]
        mat_vec(mI[i], Ai, Fi, 6, False)
        IV = c[TMP:TMP + 6]
        mat_vec(mI[i], c[V:V + 6], IV, 6, False)
        se3_ad_star_add(c[V:V + 6], IV, Fi, -1.0)
        if use_fext:
            for k in range(6):
                Fi[k] -= c[FEXT + k]
    backward_wrenches(mi, dv, dm, dv[:, F:F + 6], tau)
    add_armature_torques(mi, mc, a, tau)
    return OK if _finite(tau) else OVERFLOW


@njit(**JIT)
def backward_wrenches(mi, dv, dm, Fs, tau):
    """tau_i = S_i^T F_i, children first, each F_i added to its parent's as Ad*_{T^-1} F_i
    (the backward pass of Kim Table 2). ``Fs[i]`` holds body i's own wrench on entry."""
    for k in range(tau.shape[0]):
        tau[k] = 0.0
    for i in range(mi.shape[0] - 1, 0, -1):
        vi, nv = mi[i, VI], mi[i, NV]
        matT_vec(dm[i, MS], Fs[i], tau[vi:vi + nv], nv, True)
        p = mi[i, P]
        if p > 0:
            se3_Ad_inv_T_add(dv[i, WR:WR + 9], dv[i, WP:WP + 3], Fs[i], Fs[p], 1.0)


@njit(inline="always", **JIT)
def _wrench_to_parent(dv, j, f):
    """f <- Ad*_{T^-1} f = (R m + p x (R f), R f) with T = (R, p) of body j in its parent
    (Kim eq. 42), in place, R and p read from dv[j] without row views."""
    m0 = dv[j, WR] * f[0] + dv[j, WR + 1] * f[1] + dv[j, WR + 2] * f[2]
    m1 = dv[j, WR + 3] * f[0] + dv[j, WR + 4] * f[1] + dv[j, WR + 5] * f[2]
    m2 = dv[j, WR + 6] * f[0] + dv[j, WR + 7] * f[1] + dv[j, WR + 8] * f[2]
    g0 = dv[j, WR] * f[3] + dv[j, WR + 1] * f[4] + dv[j, WR + 2] * f[5]
    g1 = dv[j, WR + 3] * f[3] + dv[j, WR + 4] * f[4] + dv[j, WR + 5] * f[5]
    g2 = dv[j, WR + 6] * f[3] + dv[j, WR + 7] * f[4] + dv[j, WR + 8] * f[5]
    p0, p1, p2 = dv[j, WP], dv[j, WP + 1], dv[j, WP + 2]
    f[0] = m0 + p1 * g2 - p2 * g1
    f[1] = m1 + p2 * g0 - p0 * g2
    f[2] = m2 + p0 * g1 - p1 * g0
    f[3] = g0
    f[4] = g1
    f[5] = g2


@njit(inline="always", **JIT)
def _one_dof_columns(mi, mc, dv, dm, i, vi, S, Ic, f, tmp, M):
    """Column vi of M (and its mirror row) for a one-DOF joint i: f = Ic_i s_i carried to each
    ancestor j, M[j, i] = S_j^T f. A principal-axis s_i makes f a column of Ic_i and a
    principal-axis S_j makes S_j^T f one entry of f (kernels/joint_kinematics.unit_row)."""
    u = unit_row(mi[i, K], mc[i])
    if u >= 0:
        su = S[u, 0]
        for r in range(6):
            f[r] = Ic[r, u] * su
    else:
        mat_vec(Ic, S[:, 0], f, 6, False)
    j = i
    while j > 0:
        vj, nvj = mi[j, VI], mi[j, NV]
        Sj = dm[j, MS]
        uj = unit_row(mi[j, K], mc[j]) if nvj == 1 else -1
        for l in range(nvj):
            if uj >= 0:
                acc = Sj[uj, 0] * f[uj]
            else:
                acc = 0.0
                for r in range(6):
                    acc += Sj[r, l] * f[r]
            M[vj + l, vi] += acc
            if j != i:
                M[vi, vj + l] += acc
        pj = mi[j, P]
        if pj > 0:                              # f <- Ad*_{T^-1} f, into the parent frame
            _wrench_to_parent(dv, j, f)
        j = pj


@njit(**JIT)
def crba(mi, mc, mI, dv, dm, q, zero_v, M, kin):
    """Mass matrix by composite rigid bodies: M[cj, ci] += S_j^T X^T ... Ic_i S_i.
    ``zero_v`` is an all-zero (nv,) (CRBA needs no velocity)."""
    if kin:
        st = joint_kinematics(mi, mc, dv, dm, q, zero_v)
        if st != OK:
            return st
    nj = mi.shape[0] - 1
    col = dv[0, TMP:TMP + 6]        # row 0 (the universe) has no quantities: scratch
    tmp = dv[0, TMP2:TMP2 + 6]
    Fc = dm[0, MTMP]
    for i in range(1, nj + 1):
        copy6(mI[i], dm[i, MIH])
    for i in range(nj, 0, -1):
        p = mi[i, P]
        if p > 0:   # composite inertias are rigid-body inertias: the cheap parallel-axis form
            rigid_congruence_add(dv[i, WR:WR + 9], dv[i, WP:WP + 3], dm[i, MIH], dm[p, MIH])
    for r in range(M.shape[0]):
        for cc in range(M.shape[1]):
            M[r, cc] = 0.0
    for i in range(1, nj + 1):
        vi, nv = mi[i, VI], mi[i, NV]
        S = dm[i, MS]
        Ic = dm[i, MIH]
        if nv == 1:
            _one_dof_columns(mi, mc, dv, dm, i, vi, S, Ic, col, tmp, M)
            continue
        for k in range(nv):                     # Fc = Ic S_i
            for r in range(6):
                acc = 0.0
                for cc in range(6):
                    acc += Ic[r, cc] * S[cc, k]
                Fc[r, k] = acc
        j = i
        while j > 0:
            vj, nvj = mi[j, VI], mi[j, NV]
            Sj = dm[j, MS]
            for k in range(nv):
                for l in range(nvj):
                    acc = 0.0
                    for r in range(6):
                        acc += Sj[r, l] * Fc[r, k]
                    M[vj + l, vi + k] += acc
                    if j != i:
                        M[vi + k, vj + l] += acc
            pj = mi[j, P]
            if pj > 0:                          # Fc <- Ad*_{T^-1} Fc, into the parent frame
                for k in range(nv):
                    for r in range(6):
                        col[r] = Fc[r, k]
                        tmp[r] = 0.0
                    se3_Ad_inv_T_add(dv[j, WR:WR + 9], dv[j, WP:WP + 3], col, tmp, 1.0)
                    for r in range(6):
                        Fc[r, k] = tmp[r]
            j = pj
    add_armature_diagonal(mi, mc, M)
    for k in range(M.shape[0]):
        if not np.isfinite(M[k, k]):
            return OVERFLOW
    return OK


@njit(inline="always", **JIT)
def _one_dof_articulation(Ih, S, U, D, Psi, Pi, beta, tau_i, arm, u):
    """The articulation step of Kim Table 3 for a one-DOF joint: U = I^ s, D = s^T U + armature,
    beta += U (tau_i - s^T beta) / D, Pi = I^ - U U^T / D. With ``u`` >= 0, s = S[u] e_u
    (kernels/joint_kinematics.unit_row): U is a column of I^ and no 6x6 product is needed (the
    same numbers, as the general sums only add zero products). False if D is not positive."""
    if u >= 0:
        su = S[u, 0]
        for r in range(6):
            U[r, 0] = Ih[r, u] * su
        d = su * U[u, 0]
        r_ = tau_i - su * beta[u]
    else:
        for r in range(6):
            acc = 0.0
            for cc in range(6):
                acc += Ih[r, cc] * S[cc, 0]
            U[r, 0] = acc
        d = 0.0
        r_ = tau_i
        for r in range(6):
            d += S[r, 0] * U[r, 0]
            r_ -= S[r, 0] * beta[r]
    d += arm
    D[0, 0] = d
    if not d > 1e-300:
        return False
    psi = 1.0 / d
    Psi[0, 0] = psi
    x = psi * r_
    for r in range(6):
        beta[r] += U[r, 0] * x
    for r in range(6):
        ur = U[r, 0] * psi
        for cc in range(6):
            Pi[r, cc] = Ih[r, cc] - ur * U[cc, 0]
    return True


@njit(**JIT)
def _articulated_backward(mi, mc, mI, dv, dm, tau, presc, failed, use_fext):
    """Backward pass of Kim Tables 3/4: I^_i, B^_i, Pi_i, beta_i (children first)."""
    nj = mi.shape[0] - 1
    col = dv[0, TMP2:TMP2 + 6]
    for i in range(1, nj + 1):
        c = dv[i]
        copy6(mI[i], dm[i, MIH])
        Bh = c[BH:BH + 6]
        IV = c[TMP:TMP + 6]
        mat_vec(mI[i], c[V:V + 6], IV, 6, False)
        for k in range(6):
            Bh[k] = 0.0
        se3_ad_star_add(c[V:V + 6], IV, Bh, -1.0)
        if use_fext:
            for k in range(6):
                Bh[k] -= c[FEXT + k]
    for i in range(nj, 0, -1):
        c = dv[i]
        vi, nv = mi[i, VI], mi[i, NV]
        Ih = dm[i, MIH]
        S = dm[i, MS]
        Pi = dm[i, MPI]
        beta = c[BETA:BETA + 6]
        # beta starts as B^ + I^ eta
        mat_vec(Ih, c[ETA:ETA + 6], beta, 6, False)
        for k in range(6):
            beta[k] += c[BH + k]
        if presc[i]:
            Pi[:, :] = Ih                                   # Table 4, i in u
            mat_vec(Ih, c[QDD:QDD + 6], col, 6, False)      # QDD holds S qdd_i here
            for k in range(6):
                beta[k] += col[k]
        elif nv == 1:
            if not _one_dof_articulation(Ih, S, dm[i, MU], dm[i, MD], dm[i, MPSI], Pi, beta,
                                         tau[vi], mc[i, ARM], unit_row(mi[i, K], mc[i])):
                failed[0] = i
                return SINGULAR
        else:
            U = dm[i, MU]
            Psi = dm[i, MPSI]
            for k in range(nv):
                for r in range(6):
                    acc = 0.0
                    for cc in range(6):
                        acc += Ih[r, cc] * S[cc, k]
                    U[r, k] = acc
            D = dm[i, MD]
            for k in range(nv):
                for l in range(nv):
                    acc = 0.0
                    for r in range(6):
                        acc += S[r, k] * U[r, l]
                    D[k, l] = acc
                D[k, k] += mc[i, ARM + k]               # D = S^T I^ S + armature
            if not invert_spd(D, nv, Psi):
                failed[0] = i
                return SINGULAR
            # r_i = tau_i - S^T (I^ eta + B^) = tau_i - S^T beta (before the update)
            rr = c[TMP:TMP + 6]
            for k in range(nv):
                acc = tau[vi + k]
                for r in range(6):
                    acc -= S[r, k] * beta[r]
                rr[k] = acc
            for k in range(nv):                             # beta += U Psi r
                acc = 0.0
                for l in range(nv):
                    acc += Psi[k, l] * rr[l]
                col[k] = acc
            mat_vec(U, col, beta, nv, True)
            for r in range(6):                              # Pi = I^ - U Psi U^T
                for cc in range(6):
                    acc = Ih[r, cc]
                    for k in range(nv):
                        for l in range(nv):
                            acc -= U[r, k] * Psi[k, l] * U[cc, l]
                    Pi[r, cc] = acc
        p = mi[i, P]
        if p > 0:
            symmetric_congruence_add(c[WR:WR + 9], c[WP:WP + 3], Pi, dm[p, MIH], dm[0, MTMP])
            se3_Ad_inv_T_add(c[WR:WR + 9], c[WP:WP + 3], beta, dv[p, BH:BH + 6], 1.0)
    return OK


@njit(**JIT)
def hybrid(mi, mc, mI, dv, dm, q, v, a, tau, mask, presc, a_out, tau_out, failed, kin, use_fext):
    """Hybrid dynamics, Kim Table 4. mask[k] (per DOF): the acceleration a[k] is given, else the
    torque tau[k]; entries that are not given are never read. ABA (Table 3) is the all-False
    case. Each joint is prescribed as a whole (status BAD_MASK otherwise). ``presc`` (nj + 1,)
    is the data's per-body flag buffer; ``failed[0]`` gets the body row of a SINGULAR status.
    """
    if kin:
        st = joint_kinematics(mi, mc, dv, dm, q, v)
        if st != OK:
            return st
    nj = mi.shape[0] - 1
    presc[0] = False
    for i in range(1, nj + 1):
        vi, nv = mi[i, VI], mi[i, NV]
        given = mask[vi]
        for k in range(vi, vi + nv):
            if mask[k] != given:
                return BAD_MASK
            if not np.isfinite(a[k] if given else tau[k]):
                return NONFINITE
        presc[i] = given
    return _hybrid_passes(mi, mc, mI, dv, dm, v, a, tau, presc, a_out, tau_out, failed, use_fext)


@njit(**JIT)
def aba(mi, mc, mI, dv, dm, q, v, tau, presc, a_out, tau_out, failed, kin, use_fext):
    """Forward dynamics by the articulated-body algorithm (Kim Table 3): hybrid dynamics with
    no joint prescribed."""
    if kin:
        st = joint_kinematics(mi, mc, dv, dm, q, v)
        if st != OK:
            return st
    if not _finite(tau):
        return NONFINITE
    for i in range(presc.shape[0]):
        presc[i] = False
    return _hybrid_passes(mi, mc, mI, dv, dm, v, tau, tau, presc, a_out, tau_out, failed, use_fext)


@njit(**JIT)
def _hybrid_passes(mi, mc, mI, dv, dm, v, a, tau, presc, a_out, tau_out, failed, use_fext):
    """The three passes of Kim Table 4 once the joint kinematics are in ``dv``/``dm``."""
    nj = mi.shape[0] - 1
    _velocities(mi, mc, mI, dv, dm, v, True)
    for i in range(1, nj + 1):
        if presc[i]:
            vi, nv = mi[i, VI], mi[i, NV]
            mat_vec(dm[i, MS], a[vi:vi + nv], dv[i, QDD:QDD + 6], nv, False)
    st = _articulated_backward(mi, mc, mI, dv, dm, tau, presc, failed, use_fext)
    if st != OK:
        return st
    _gravity_base(mc, dv)
    for i in range(1, nj + 1):
        c = dv[i]
        vi, nv = mi[i, VI], mi[i, NV]
        S = dm[i, MS]
        Ai = c[A:A + 6]
        se3_Ad_inv(c[WR:WR + 9], c[WP:WP + 3], dv[mi[i, P], A:A + 6], Ai)
        for k in range(6):
            Ai[k] += c[ETA + k]                              # A_i = X Vd_p + eta_i
        if presc[i]:
            for k in range(nv):
                a_out[vi + k] = a[vi + k]
            mat_vec(S, a[vi:vi + nv], Ai, nv, True)
            Fi = c[F:F + 6]
            mat_vec(dm[i, MIH], Ai, Fi, 6, False)
            for k in range(6):
                Fi[k] += c[BH + k]
            matT_vec(S, Fi, tau_out[vi:vi + nv], nv, False)
            for k in range(nv):
                tau_out[vi + k] += mc[i, ARM + k] * a[vi + k]
        else:
            # qdd = Psi (tau - U^T (X Vd_p + eta) - S^T B^)
            rr = c[TMP:TMP + 6]
            U = dm[i, MU]
            Psi = dm[i, MPSI]
            for k in range(nv):
                acc = tau[vi + k]
                for r in range(6):
                    acc -= U[r, k] * Ai[r] + S[r, k] * c[BH + r]
                rr[k] = acc
            for k in range(nv):
                acc = 0.0
                for l in range(nv):
                    acc += Psi[k, l] * rr[l]
                a_out[vi + k] = acc
                tau_out[vi + k] = tau[vi + k]
            mat_vec(S, a_out[vi:vi + nv], Ai, nv, True)
    return OK if _finite(a_out) and _finite(tau_out) else OVERFLOW


@njit(**JIT)
def world_poses(mi, dv):
    """OR/OP of every body: oT_i = oT_p T_{p,i}."""
    nj = mi.shape[0] - 1
    for k in range(9):
        dv[0, OR + k] = 1.0 if k % 4 == 0 else 0.0
    for k in range(3):
        dv[0, OP + k] = 0.0
    for i in range(1, nj + 1):
        c = dv[i]
        pr = dv[mi[i, P]]
        for r in range(3):
            for cc in range(3):
                c[OR + 3 * r + cc] = (pr[OR + 3 * r] * c[WR + cc] + pr[OR + 3 * r + 1] * c[WR + 3 + cc]
                                      + pr[OR + 3 * r + 2] * c[WR + 6 + cc])
            c[OP + r] = (pr[OP + r] + pr[OR + 3 * r] * c[WP] + pr[OR + 3 * r + 1] * c[WP + 1]
                         + pr[OR + 3 * r + 2] * c[WP + 2])


@njit(**JIT)
def jacobians(mi, mc, mI, dv, dm, v, Jb, Jd):
    """Body Jacobians J_i (6 x nv, V_i = J_i v, in frame i) and their time derivatives.

    J_i = X_i J_p + S_i E_i;  Jd_i = X_i Jd_p - ad(S_i qd_i) X_i J_p + Sdot_i E_i.
    """
    nj = mi.shape[0] - 1
    n = Jb.shape[2]
    col = np.empty(6)
    tmp = np.empty(6)
    tmp2 = np.empty(6)
    Sq = np.empty(6)
    Jb[0, :, :] = 0.0
    Jd[0, :, :] = 0.0
    for i in range(1, nj + 1):
        c = dv[i]
        p = mi[i, P]
        vi, nv = mi[i, VI], mi[i, NV]
        mat_vec(dm[i, MS], v[vi:vi + nv], Sq, nv, False)
        for k in range(n):
            for r in range(6):
                col[r] = Jb[p, r, k]
            se3_Ad_inv(c[WR:WR + 9], c[WP:WP + 3], col, tmp)
            for r in range(6):
                Jb[i, r, k] = tmp[r]
                col[r] = 0.0
            se3_ad_add(Sq, tmp, col, -1.0)
            for r in range(6):
                tmp[r] = Jd[p, r, k]
            se3_Ad_inv(c[WR:WR + 9], c[WP:WP + 3], tmp, tmp2)
            for r in range(6):
                Jd[i, r, k] = tmp2[r] + col[r]
        for k in range(nv):
            for r in range(6):
                Jb[i, r, vi + k] += dm[i, MS, r, k]
                Jd[i, r, vi + k] += dm[i, MSD, r, k]
    return OK


@njit(**JIT)
def coriolis(mi, mc, mI, dv, dm, Jb, Jd, C):
    """Christoffel-consistent C = sum_i J_i^T (I_i Jd_i + B_i J_i), B_i skew with B_i V_i = -ad*_{V_i} I_i V_i.

    B = 1/2 (I ad_V - ad_V^T I) - 1/2 Ybar, Ybar = [[[m], [f]], [[f], 0]] with (m, f) = I V
    (the Echeandia-Wensing factorization, in Kim's order). Hence dM/dt = C + C^T.
    """
    nj = mi.shape[0] - 1
    n = Jb.shape[2]
    B = np.empty((6, 6))
    adV = np.empty((6, 6))
    H = np.empty((6, n))
    IV = np.empty(6)
    C[:, :] = 0.0
    for i in range(1, nj + 1):
        I = mI[i]
        Vb = dv[i, V:V + 6]
        w0, w1, w2, u0, u1, u2 = Vb[0], Vb[1], Vb[2], Vb[3], Vb[4], Vb[5]
        adV[:, :] = 0.0
        adV[0, 1], adV[0, 2], adV[1, 0], adV[1, 2], adV[2, 0], adV[2, 1] = -w2, w1, w2, -w0, -w1, w0
        adV[3, 4], adV[3, 5], adV[4, 3], adV[4, 5], adV[5, 3], adV[5, 4] = -w2, w1, w2, -w0, -w1, w0
        adV[3, 1], adV[3, 2], adV[4, 0], adV[4, 2], adV[5, 0], adV[5, 1] = -u2, u1, u2, -u0, -u1, u0
        mat_vec(I, Vb, IV, 6, False)
        for r in range(6):
            for cc in range(6):
                acc = 0.0
                for k in range(6):
                    acc += I[r, k] * adV[k, cc] - adV[k, r] * I[k, cc]
                B[r, cc] = 0.5 * acc
        m0, m1, m2, f0, f1, f2 = IV[0], IV[1], IV[2], IV[3], IV[4], IV[5]
        # -1/2 Ybar
        B[0, 1] += 0.5 * m2
        B[0, 2] -= 0.5 * m1
        B[1, 0] -= 0.5 * m2
        B[1, 2] += 0.5 * m0
        B[2, 0] += 0.5 * m1
        B[2, 1] -= 0.5 * m0
        for (r, s) in ((0, 3), (3, 0)):
            B[r + 0, s + 1] += 0.5 * f2
            B[r + 0, s + 2] -= 0.5 * f1
            B[r + 1, s + 0] -= 0.5 * f2
            B[r + 1, s + 2] += 0.5 * f0
            B[r + 2, s + 0] += 0.5 * f1
            B[r + 2, s + 1] -= 0.5 * f0
        add_body_coriolis(I, B, Jb[i], Jd[i], H, C)
    return OK


@njit(**JIT)
def add_body_coriolis(I, B, Ji, Jdi, H, C):
    """C += J_i^T (I_i Jd_i + B_i J_i) for one body; ``H`` (6 x nv) is scratch."""
    n = Ji.shape[1]
    for r in range(6):
        for k in range(n):
            acc = 0.0
            for cc in range(6):
                acc += I[r, cc] * Jdi[cc, k] + B[r, cc] * Ji[cc, k]
            H[r, k] = acc
    for a_ in range(n):
        for b_ in range(n):
            acc = 0.0
            for r in range(6):
                acc += Ji[r, a_] * H[r, b_]
            C[a_, b_] += acc


@njit(**JIT)
def energies(mi, mc, mI, dv, dm, out):
    """out[0] = the bodies' kinetic energy 1/2 sum V^T I V (the armature's 1/2 v^T diag(a) v is
    added by the caller, who has v), out[1] = potential energy -sum m g . c (world)."""
    nj = mi.shape[0] - 1
    ke = 0.0
    pe = 0.0
    for i in range(1, nj + 1):
        I = mI[i]
        c = dv[i]
        for r in range(6):
            for cc in range(6):
                ke += 0.5 * c[V + r] * I[r, cc] * c[V + cc]
        m = I[5, 5]
        if m > 0.0:
            # upper-right block of I is m [c]  (Kim eq. 22)
            mc0, mc1, mc2 = I[2, 4], I[0, 5], I[1, 3]
            for r in range(3):
                wc = m * c[OP + r] + c[OR + 3 * r] * mc0 + c[OR + 3 * r + 1] * mc1 + c[OR + 3 * r + 2] * mc2
                pe -= mc[0, G + r] * wc
    out[0] = ke
    out[1] = pe


@njit(**JIT)
def velocity_kinematics(mi, mc, mI, dv, dm, q, v, kin):
    """Joint kinematics, body twists V_i and world poses (for energies, FK, Jacobians)."""
    if kin:
        st = joint_kinematics(mi, mc, dv, dm, q, v)
        if st != OK:
            return st
    _velocities(mi, mc, mI, dv, dm, v, False)
    world_poses(mi, dv)
    return OK


@njit(**JIT)
def jacobian_kinematics(mi, mc, mI, dv, dm, q, v, Jb, Jd, kin):
    """Joint kinematics, body twists, and every body's J_i and Jd_i."""
    if kin:
        st = joint_kinematics(mi, mc, dv, dm, q, v)
        if st != OK:
            return st
    _velocities(mi, mc, mI, dv, dm, v, False)
    jacobians(mi, mc, mI, dv, dm, v, Jb, Jd)
    return OK


@njit(**JIT)
def coriolis_matrix(mi, mc, mI, dv, dm, q, v, Jb, Jd, C, kin):
    """Kinematics, Jacobians and the Christoffel-consistent Coriolis matrix in one call."""
    st = jacobian_kinematics(mi, mc, mI, dv, dm, q, v, Jb, Jd, kin)
    if st != OK:
        return st
    coriolis(mi, mc, mI, dv, dm, Jb, Jd, C)
    return OK
