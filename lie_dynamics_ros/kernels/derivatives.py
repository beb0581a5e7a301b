"""Compiled analytic derivatives of the dynamics: Kim (2012) §4, Table 5, and a tree-sparse
factorization of M for the forward-dynamics derivatives (Kim Table 6 at p = tau_k gives the
columns of M^-1; at p = q_k, qd_k it equals -M^-1 dtau/dp, which is what is computed here).

Table 5 is run once per scalar direction p, with the per-body inputs of Kim eq. (92):

* p = q_k (tangent space):  dh_i = S_i[:, c] (Kim eqs. 89-90) for every body moved by DOF k
  (its own joint and the joints that mimic it), dS_i = dS_i/dq_k, dSdot_i = dSdot_i/dq_k;
* p = qd_k:                 dqd_i = e_c, dSdot_i = dSdot_i/dqd_k;
* p = a joint-origin parameter of body j: dh_j = T_{p,j}^-1 dT_{p,j}/dp, nothing else.

dI = 0 and dF_ext = 0 (external wrenches are constant in their body frames). A direction only
touches the subtree of its source bodies (forward) and their ancestors (backward), so a full
Jacobian costs O(n d) body updates (d = depth): O(n^2) at worst. When every joint has a
constant S (revolute, prismatic, free, ball; no mimic), ``world_directions`` evaluates the same
table for all directions at once in the world frame (subtree sums become composite matrices),
which is several times cheaper. Seeds' order (angular, linear) throughout. Kim's tables print
Ad*_{T_{i,k}} in places; the children's wrenches travel with Ad*_{T^-1_{i,k}}, whose
derivative is Kim eq. (88): d Ad*_{T^-1}/dp = -Ad*_{T^-1} ad*_{dh}.

The cache key covers the kernel files imported (kernels/jit.py), so edits of the kernels
called from here (kernels/dynamics.py, joint_kinematics.py, spatial.py) recompile this file.
"""
import numpy as np

from .layout import (P, K, VI, NV, MIMIC, R0, P0, AX, AX2, G, WR, WP, V, A, F, ETA, OR, OP,
                     MS, MSD, FEXT, OK, NONFINITE, SINGULAR, OVERFLOW, C_IO, C_H, C_M, C_SY,
                     C_G, C_HW, C_HV, NC, world_work_size, fd_work_size, fd_index_size)
from .jit import JIT, njit
from .lie import se3_Ad, se3_Ad_inv, se3_Ad_inv_T_add, se3_ad_add, se3_ad_star_add
from .spatial import mat_vec
from .dynamics import rnea, crba, world_poses, add_armature_diagonal
from .joint_kinematics import joint_kinematics
from .views import bare, c_view
from . import joints as J

DIR_Q = 0
DIR_V = 1
DIR_P = 2


@njit(inline="always", **JIT)
def _cross_into(a0, a1, a2, b0, b1, b2, out, r, col, s):
    """out[r:r+3, col] += s * (a x b)."""
    out[r, col] += s * (a1 * b2 - a2 * b1)
    out[r + 1, col] += s * (a2 * b0 - a0 * b2)
    out[r + 2, col] += s * (a0 * b1 - a1 * b0)


@njit(**JIT)
def joint_partials(kind, c, typ, ax, ax2, S, v, vi, dS, dSd):
    """dS = dS_i/dq_c (typ DIR_Q) and dSd = dSdot_i/dq_c or dSdot_i/dqd_c (DIR_V), 6 x nv.

    Only planar (S depends on theta) and universal (S depends on q2) joints have any: for them
    dS_c/dq_k = -ad(S_k) S_c and Sdot = sum_k dS/dq_k qd_k. Returns False when both are zero.
    """
    if kind == J.PLANAR:
        if c != 2:
            return False
        n0, n1, n2 = ax[0], ax[1], ax[2]
        thd = v[vi + 2]
        for col in range(2):
            u0, u1, u2 = S[3, col], S[4, col], S[5, col]
            w0, w1, w2 = n1 * u2 - n2 * u1, n2 * u0 - n0 * u2, n0 * u1 - n1 * u0   # n x u
            for r in range(6):
                dS[r, col] = 0.0
                dSd[r, col] = 0.0
            if typ == DIR_Q:
                dS[3, col], dS[4, col], dS[5, col] = -w0, -w1, -w2
                _cross_into(n0, n1, n2, w0, w1, w2, dSd, 3, col, thd)
            else:
                dSd[3, col], dSd[4, col], dSd[5, col] = -w0, -w1, -w2
        for r in range(6):
            dS[r, 2] = 0.0
            dSd[r, 2] = 0.0
        return True
    if kind == J.UNIVERSAL:
        if c != 1:
            return False
        b0, b1, b2 = ax2[0], ax2[1], ax2[2]
        u0, u1, u2 = S[0, 0], S[1, 0], S[2, 0]
        w0, w1, w2 = b1 * u2 - b2 * u1, b2 * u0 - b0 * u2, b0 * u1 - b1 * u0      # a2 x u
        for r in range(6):
            for col in range(2):
                dS[r, col] = 0.0
                dSd[r, col] = 0.0
        if typ == DIR_Q:
            dS[0, 0], dS[1, 0], dS[2, 0] = -w0, -w1, -w2
            _cross_into(b0, b1, b2, w0, w1, w2, dSd, 0, 0, v[vi + 1])
        else:
            dSd[0, 0], dSd[1, 0], dSd[2, 0] = -w0, -w1, -w2
        return True
    return False


@njit(**JIT)
def prepare_bodies(mi, mc, mI, dv, dm, v, a, XV, XA, Sq, IV):
    """Per body, after RNEA: XV = Ad_{T^-1} V_p, XA = Ad_{T^-1} Vd_p, Sq = S qd, IV = I V."""
    nj = mi.shape[0] - 1
    Sa = np.empty(6)
    for i in range(1, nj + 1):
        c = dv[i]
        vi, nv = mi[i, VI], mi[i, NV]
        mat_vec(dm[i, MS], v[vi:vi + nv], Sq[i], nv, False)
        mat_vec(dm[i, MS], a[vi:vi + nv], Sa, nv, False)
        for r in range(6):
            XV[i, r] = c[V + r] - Sq[i, r]
            XA[i, r] = c[A + r] - c[ETA + r] - Sa[r]
        mat_vec(mI[i], c[V:V + 6], IV[i], 6, False)


@njit(**JIT)
def origin_twist(mc, dv, j, comp, dh):
    """dh = T^-1 dT/dp for a parameter of body j's joint origin T_o (T = T_o T_joint(q)):
    comp 0-2: the origin translation along the parent-body axis x, y, z: dh = (0, R^T e);
    comp 3-5: a right-trivialized rotation T_o exp([e]): dh = Ad_{T_joint^-1} (e, 0)."""
    c = dv[j]
    o = mc[j]
    for r in range(6):
        dh[r] = 0.0
    if comp < 3:
        for r in range(3):
            dh[3 + r] = c[WR + 3 * comp + r]            # row comp of R = column of R^T
        return
    e = comp - 3
    Rj = np.empty(9)     # T_joint = T_o^-1 T: R_j = R0^T R, p_j = R0^T (p - p0)
    pj = np.empty(3)
    for r in range(3):
        for cc in range(3):
            Rj[3 * r + cc] = (o[R0 + r] * c[WR + cc] + o[R0 + 3 + r] * c[WR + 3 + cc]
                              + o[R0 + 6 + r] * c[WR + 6 + cc])
        pj[r] = 0.0
        for cc in range(3):
            pj[r] += o[R0 + 3 * cc + r] * (c[WP + cc] - o[P0 + cc])
    x = np.zeros(6)
    x[e] = 1.0
    se3_Ad_inv(Rj, pj, x, dh)


@njit(**JIT)
def direction(mi, mc, mI, dv, dm, v, a, typ, k, pj, lo, hi, XV, XA, Sq, IV, dV, dVd, dF, dh,
              act, tch, src, dS, dSd, tmp, tmp2, out, col):
    """One run of Kim's Table 5 for the scalar p given by (typ, k, pj); writes dtau/dp into
    out[:, col]. typ DIR_Q / DIR_V: p = q_k / qd_k; DIR_P: p = origin parameter k of body pj.

    Only bodies lo..hi are visited; every source of p must be among them. When lo > 1, lo is
    the only source and lo..hi its subtree (rows are depth-first): the wrench then goes up the
    chain of lo's ancestors, which only transport it (Kim Table 5 with dV = dVd = 0 there).
    """
    for r in range(out.shape[0]):
        out[r, col] = 0.0
    for i in range(lo, hi + 1):
        act[i] = False
        tch[i] = False
        src[i] = False
        p = mi[i, P]
        pa = p >= lo and act[p]
        vi, nv = mi[i, VI], mi[i, NV]
        if typ == DIR_P:
            s = i == pj
        else:
            s = vi <= k < vi + nv
        if not (pa or s):
            continue
        act[i] = True
        c = dv[i]
        S = dm[i, MS]
        dVi = dV[i]
        dVdi = dVd[i]
        if pa:
            se3_Ad_inv(c[WR:WR + 9], c[WP:WP + 3], dV[p], dVi)
            se3_Ad_inv(c[WR:WR + 9], c[WP:WP + 3], dVd[p], dVdi)
        else:
            for r in range(6):
                dVi[r] = 0.0
                dVdi[r] = 0.0
        if s:
            cc = k - vi
            partial = False
            if typ != DIR_P:
                partial = joint_partials(mi[i, K], cc, typ, mc[i, AX:AX + 3],
                                         mc[i, AX2:AX2 + 3], S, v, vi, dS, dSd)
            if typ == DIR_V:
                for r in range(6):
                    dVi[r] += S[r, cc]
                    dVdi[r] += dm[i, MSD, r, cc]
                se3_ad_add(c[V:V + 6], S[:, cc], dVdi, 1.0)
                if partial:
                    mat_vec(dSd, v[vi:vi + nv], dVdi, nv, True)
            else:
                src[i] = True
                h = dh[i]
                if typ == DIR_Q:
                    for r in range(6):
                        h[r] = S[r, cc]
                else:
                    origin_twist(mc, dv, i, k, h)
                se3_ad_add(h, XV[i], dVi, -1.0)
                se3_ad_add(h, XA[i], dVdi, -1.0)
                if partial:
                    mat_vec(dS, v[vi:vi + nv], tmp, nv, False)     # dS qd
                    for r in range(6):
                        dVi[r] += tmp[r]
                    se3_ad_add(c[V:V + 6], tmp, dVdi, 1.0)
                    mat_vec(dS, a[vi:vi + nv], dVdi, nv, True)
                    mat_vec(dSd, v[vi:vi + nv], dVdi, nv, True)
        se3_ad_add(dVi, Sq[i], dVdi, 1.0)
    # backward: dF_i = I dVd - ad*_{dV} I V - ad*_V I dV + sum_k X_k^T (dF_k - ad*_{dh_k} F_k)
    for i in range(hi, lo - 1, -1):
        c = dv[i]
        dFi = dF[i]
        if act[i]:
            if not tch[i]:
                for r in range(6):
                    dFi[r] = 0.0
                tch[i] = True
            I = mI[i]
            mat_vec(I, dVd[i], dFi, 6, True)
            se3_ad_star_add(dV[i], IV[i], dFi, -1.0)
            mat_vec(I, dV[i], tmp, 6, False)
            se3_ad_star_add(c[V:V + 6], tmp, dFi, -1.0)
        vi, nv = mi[i, VI], mi[i, NV]
        S = dm[i, MS]
        if tch[i]:
            for cc in range(nv):
                acc = 0.0
                for r in range(6):
                    acc += S[r, cc] * dFi[r]
                out[vi + cc, col] += acc
        if src[i] and typ == DIR_Q:
            # the dS^T F term of dtau (planar / universal joints only)
            if joint_partials(mi[i, K], k - vi, typ, mc[i, AX:AX + 3], mc[i, AX2:AX2 + 3], S, v, vi,
                              dS, dSd):
                for cc in range(nv):
                    acc = 0.0
                    for r in range(6):
                        acc += dS[r, cc] * c[F + r]
                    out[vi + cc, col] += acc
        p = mi[i, P]
        if p > 0 and (tch[i] or src[i]):
            for r in range(6):
                tmp2[r] = dFi[r] if tch[i] else 0.0
            if src[i]:
                se3_ad_star_add(dh[i], c[F:F + 6], tmp2, -1.0)
            if p >= lo:
                if not tch[p]:
                    for r in range(6):
                        dF[p, r] = 0.0
                    tch[p] = True
                se3_Ad_inv_T_add(c[WR:WR + 9], c[WP:WP + 3], tmp2, dF[p], 1.0)
            else:
                _up_the_chain(mi, dv, dm, i, tmp2, tmp, out, col)


@njit(inline="always", **JIT)
def _up_the_chain(mi, dv, dm, i, W, tmp, out, col):
    """dtau_m += S_m^T W_m for the ancestors m of body i, W_p = Ad*_{T^-1} W_i (no dh there)."""
    while True:
        p = mi[i, P]
        if p == 0:
            return
        for r in range(6):
            tmp[r] = 0.0
        se3_Ad_inv_T_add(dv[i, WR:WR + 9], dv[i, WP:WP + 3], W, tmp, 1.0)
        for r in range(6):
            W[r] = tmp[r]
        vi, nv = mi[p, VI], mi[p, NV]
        for cc in range(nv):
            acc = 0.0
            for r in range(6):
                acc += dm[p, MS, r, cc] * W[r]
            out[vi + cc, col] += acc
        i = p


@njit(**JIT)
def _direction_work(mi, mc, mI, dv, dm, v, a):
    """The work arrays of Table 5's directional sweeps (one set per call), with the per-body
    quantities of ``prepare_bodies`` and the subtree ranges of ``body_ranges`` filled in."""
    nj = mi.shape[0] - 1
    XV, XA, Sq, IV = (np.empty((nj + 1, 6)), np.empty((nj + 1, 6)), np.empty((nj + 1, 6)),
                      np.empty((nj + 1, 6)))
    dV, dVd, dF, dh = (np.empty((nj + 1, 6)), np.empty((nj + 1, 6)), np.empty((nj + 1, 6)),
                       np.empty((nj + 1, 6)))
    act = np.zeros(nj + 1, dtype=np.bool_)
    tch = np.zeros(nj + 1, dtype=np.bool_)
    src = np.zeros(nj + 1, dtype=np.bool_)
    prepare_bodies(mi, mc, mI, dv, dm, v, a, XV, XA, Sq, IV)
    owner = np.empty(v.shape[0], dtype=np.int64)
    end = np.empty(nj + 1, dtype=np.int64)
    generic = body_ranges(mi, owner, end)
    return (XV, XA, Sq, IV, dV, dVd, dF, dh, act, tch, src, np.zeros((6, 6)), np.zeros((6, 6)),
            np.empty(6), np.empty(6), owner, end, generic)


@njit(**JIT)
def _state_directions(mi, mc, mI, dv, dm, v, a, dq, dtv, with_v):
    """dtau/dq (and dtau/dqd) by Table 5, after an RNEA at (q, v, a) filled dv."""
    nj = mi.shape[0] - 1
    n = v.shape[0]
    (XV, XA, Sq, IV, dV, dVd, dF, dh, act, tch, src, dS, dSd, tmp, tmp2, owner, end,
     generic) = _direction_work(mi, mc, mI, dv, dm, v, a)
    for typ in range(2):
        if typ == DIR_V and not with_v:
            break
        out = dq if typ == DIR_Q else dtv
        for k in range(n):
            lo, hi = (1, nj) if generic else (owner[k], end[owner[k]])
            direction(mi, mc, mI, dv, dm, v, a, typ, k, 0, lo, hi, XV, XA, Sq, IV, dV, dVd, dF,
                      dh, act, tch, src, dS, dSd, tmp, tmp2, out, k)


@njit(**JIT)
def body_ranges(mi, owner, end):
    """owner[k]: the body of DOF k; end[i]: the last row of body i's subtree (rows are
    depth-first, so a subtree is the range i..end[i]). True when the model has mimic joints
    (a DOF then moves several bodies: directions visit every row)."""
    nj = mi.shape[0] - 1
    generic = False
    for i in range(nj + 1):
        end[i] = i
    for i in range(nj, 0, -1):
        p = mi[i, P]
        if end[i] > end[p]:
            end[p] = end[i]
        if mi[i, MIMIC] == 1:
            generic = True
        else:
            for c in range(mi[i, NV]):
                owner[mi[i, VI] + c] = i
    return generic


@njit(**JIT)
def rnea_derivatives(mi, mc, mI, dv, dm, q, v, a, dq, dtv, M, kin, use_fext, fast):
    """dtau/dq (tangent space), dtau/dqd and M = dtau/dqdd at (q, v, a); returns a status."""
    nb, n = mi.shape[0], v.shape[0]
    ws = np.empty(world_work_size(nb, n))
    if fast and constant_subspaces(mi):
        return world_rnea_derivatives(mi, mc, mI, dv, dm, q, v, a, dq, dtv, M, kin, use_fext,
                                      ws, np.empty(n + nb, dtype=np.int64))
    st = rnea(mi, mc, mI, dv, dm, q, v, a, ws[ws.shape[0] - n:], kin, use_fext)
    if st != OK:
        return st
    _state_directions(mi, mc, mI, dv, dm, v, a, dq, dtv, True)
    return crba(mi, mc, mI, dv, dm, q, v, M, False)


@njit(**JIT)
def world_rnea_derivatives(mi, mc, mI, dv, dm, q, v, a, dq, dtv, M, kin, use_fext, ws, iw):
    """rnea_derivatives in the world frame alone (constant S): the joint kinematics, then the
    RNEA, the composites and M in one pass over the bodies (``world_composites``), then
    Table 5 (``world_directions``). The statuses of ``rnea``: NONFINITE, OVERFLOW."""
    if kin:
        st = joint_kinematics(mi, mc, dv, dm, q, v)
        if st != OK:
            return st
    for k in range(a.shape[0]):
        if not np.isfinite(a[k]):
            return NONFINITE
    world_composites(mi, mc, mI, dv, dm, M, ws, iw, v, a, use_fext, True)
    w = bare(ws)
    nb = mi.shape[0]
    for k in range(6, 6 * nb):                 # the subtree wrenches (RNEA's tau is S^T F)
        if not np.isfinite(w[12 * nb + k]):
            return OVERFLOW
    world_directions(mi, mc, mI, dv, dm, dq, dtv, ws, iw, True)
    return OK


@njit(**JIT)
def rnea_derivatives_packed(mi, mc, mI, dv, dm, q, v, a, out, kin, use_fext, fast):
    """rnea_derivatives into out[0], out[1], out[2] (one argument: cheaper to call)."""
    return rnea_derivatives(mi, mc, mI, dv, dm, q, v, a, out[0], out[1], out[2], kin, use_fext,
                            fast)


@njit(**JIT)
def parameter_derivatives(mi, mc, mI, dv, dm, q, v, a, rows, out, kin):
    """dtau/dp for the 6 origin parameters of each body in ``rows`` -> out (nv, 6 len(rows))."""
    nj = mi.shape[0] - 1
    tau = np.empty(v.shape[0])
    st = rnea(mi, mc, mI, dv, dm, q, v, a, tau, kin, False)
    if st != OK:
        return st
    (XV, XA, Sq, IV, dV, dVd, dF, dh, act, tch, src, dS, dSd, tmp, tmp2, owner, end,
     generic) = _direction_work(mi, mc, mI, dv, dm, v, a)
    for b in range(rows.shape[0]):
        j = rows[b]
        for comp in range(6):
            direction(mi, mc, mI, dv, dm, v, a, DIR_P, comp, j, 1 if generic else j,
                      nj if generic else end[j], XV, XA, Sq, IV, dV, dVd, dF, dh, act, tch, src,
                      dS, dSd, tmp, tmp2, out, 6 * b + comp)
    return OK


@njit(**JIT)
def mass_matrix_configuration_derivatives(mi, mc, mI, dv, dm, q, dM, kin):
    """dM[:, j, k] = dM/dq_k e_j = dtau/dq_k (q, 0, e_j) - dtau/dq_k (q, 0, 0) (gravity cancels)."""
    n = dM.shape[0]
    zero = np.zeros(n)
    a = np.zeros(n)
    g = np.empty((n, n))
    dq = np.empty((n, n))
    dtv = np.empty((n, n))
    M = np.empty((n, n))
    st = rnea_derivatives(mi, mc, mI, dv, dm, q, zero, zero, g, dtv, M, kin, False, True)
    if st != OK:
        return st
    for j in range(n):
        a[j] = 1.0
        rnea_derivatives(mi, mc, mI, dv, dm, q, zero, a, dq, dtv, M, False, False, True)
        for r in range(n):
            for k in range(n):
                dM[r, j, k] = dq[r, k] - g[r, k]
        a[j] = 0.0
    return OK


# ------------------------------------------------------------------------------- M^-1 solves
@njit(**JIT)
def dof_parents(mi, lam):
    """Featherstone's expanded parent array: the DOF before k on its path to the root (-1)."""
    nj = mi.shape[0] - 1
    for i in range(1, nj + 1):
        vi, nv = mi[i, VI], mi[i, NV]
        p = mi[i, P]
        lam[vi] = mi[p, VI] + mi[p, NV] - 1 if p > 0 else -1
        for c in range(1, nv):
            lam[vi + c] = vi + c - 1


@njit(**JIT)
def ltdl(H, lam):
    """In place H = L^T D L with the tree sparsity of lam (Featherstone, RBDA Table 6.3).
    Returns -1, or the DOF whose pivot vanished (M singular)."""
    n = H.shape[0]
    scale = 0.0
    for k in range(n):
        scale = max(scale, abs(H[k, k]))
    for k in range(n - 1, -1, -1):
        if not H[k, k] > 1e-14 * scale:
            return k
        i = lam[k]
        while i >= 0:
            f = H[k, i] / H[k, k]
            j = i
            while j >= 0:
                H[i, j] -= f * H[k, j]
                j = lam[j]
            H[k, i] = f
            i = lam[i]
    return -1


@njit(inline="always", **JIT)
def ltdl_solve(H, lam, x):
    """x <- (L^T D L)^-1 x (RBDA Table 6.4): L^-T, D^-1, then L^-1."""
    n = H.shape[0]
    for i in range(n - 1, -1, -1):
        j = lam[i]
        while j >= 0:
            x[j] -= H[i, j] * x[i]
            j = lam[j]
    for i in range(n):
        x[i] /= H[i, i]
    for i in range(n):
        j = lam[i]
        while j >= 0:
            x[i] -= H[i, j] * x[j]
            j = lam[j]


@njit(**JIT)
def ltdl_solve_many(H, lam, X):
    """X <- (L^T D L)^-1 X for all columns of X at once (row operations, contiguous rows)."""
    n, m = X.shape
    for i in range(n - 1, -1, -1):
        j = lam[i]
        while j >= 0:
            f = H[i, j]
            for c in range(m):
                X[j, c] -= f * X[i, c]
            j = lam[j]
    for i in range(n):
        f = 1.0 / H[i, i]
        for c in range(m):
            X[i, c] *= f
    for i in range(n):
        j = lam[i]
        while j >= 0:
            f = H[i, j]
            for c in range(m):
                X[i, c] -= f * X[j, c]
            j = lam[j]


@njit(**JIT)
def aba_derivatives(mi, mc, mI, dv, dm, q, v, tau, a_out, da_dq, da_dv, Minv, failed, kin,
                    use_fext):
    """a = M^-1 (tau - b), then da/dq = -M^-1 dtau/dq|_a, da/dv = -M^-1 dtau/dv|_a and M^-1
    (Kim Table 6 with p = q_k, qd_k, tau_k), through the tree-sparse L^T D L factorization of
    M (Featherstone, RBDA §6.5): O(n d) per column, never an inverse. With constant joint
    subspaces M comes from the world-frame composites that the derivatives reuse, so no CRBA
    runs (Carpentier & Mansard 2018 obtain the ABA derivatives the same way, as -M^-1 times
    the RNEA derivatives, with M^-1 from a factorization)."""
    n = v.shape[0]
    nb = mi.shape[0]
    nw = world_work_size(nb, n)
    return _aba_derivatives(mi, mc, mI, dv, dm, q, v, tau, a_out, da_dq, da_dv, Minv, failed,
                            kin, use_fext, np.empty(fd_work_size(nb, n)),
                            np.empty(fd_index_size(nb, n), dtype=np.int64))


@njit(inline="always", **JIT)
def _aba_work(mi, v, tau, ws):
    """(status, b, H, zero) in ``ws``: RNEA's torques, M's factor, a zero vector."""
    n = v.shape[0]
    nw = world_work_size(mi.shape[0], n)
    w = bare(ws)
    b = w[nw - n:nw]                            # RNEA's torques (the slot world_work_size keeps)
    H = c_view(w[nw:], (n, n))
    zero = w[nw + n * n:nw + n * n + n]
    st = OK
    for k in range(n):
        zero[k] = 0.0
        if not np.isfinite(tau[k]):
            st = NONFINITE
    return st, b, H, zero


@njit(inline="always", **JIT)
def _factor_and_solve(mi, H, lam, tau, b, a_out, failed):
    """H = L^T D L in place, a_out = H^-1 (tau - b); SINGULAR names the body in ``failed``."""
    dof_parents(mi, lam)
    k = ltdl(H, lam)
    if k >= 0:                      # name the body whose joint has no inertia to move
        for i in range(1, mi.shape[0]):
            if mi[i, MIMIC] == 0 and mi[i, VI] <= k < mi[i, VI] + mi[i, NV]:
                failed[0] = i
        return SINGULAR
    for k in range(tau.shape[0]):
        a_out[k] = tau[k] - b[k]
    ltdl_solve(H, lam, a_out)
    return OK


@njit(inline="always", **JIT)
def _minus_solves(H, lam, da_dq, da_dv, Minv):
    """da_dq, da_dv <- -M^-1 da_dq, -M^-1 da_dv; Minv <- M^-1 (M = L^T D L in H)."""
    n = H.shape[0]
    for r in range(n):
        for c in range(n):
            da_dq[r, c] = -da_dq[r, c]
            da_dv[r, c] = -da_dv[r, c]
            Minv[r, c] = 0.0
        Minv[r, r] = 1.0
    ltdl_solve_many(H, lam, da_dq)
    ltdl_solve_many(H, lam, da_dv)
    ltdl_solve_many(H, lam, Minv)


@njit(**JIT)
def _aba_derivatives(mi, mc, mI, dv, dm, q, v, tau, a_out, da_dq, da_dv, Minv, failed, kin,
                     use_fext, ws, iw):
    """aba_derivatives on the work memory ``ws`` (layout.fd_work_size floats) and ``iw``
    (layout.fd_index_size ints), which the caller holds for the call."""
    if constant_subspaces(mi):
        return world_aba_derivatives(mi, mc, mI, dv, dm, q, v, tau, a_out, da_dq, da_dv, Minv,
                                     failed, kin, use_fext, ws, iw)
    n = v.shape[0]
    st, b, H, zero = _aba_work(mi, v, tau, ws)
    if st != OK:
        return st
    st = rnea(mi, mc, mI, dv, dm, q, v, zero, b, kin, use_fext)
    if st != OK:
        return st
    crba(mi, mc, mI, dv, dm, q, zero, H, False)
    lam = bare(iw)[n + mi.shape[0]:]
    st = _factor_and_solve(mi, H, lam, tau, b, a_out, failed)
    if st != OK:
        return st
    Mt = np.empty((n, n))
    st = rnea_derivatives(mi, mc, mI, dv, dm, q, v, a_out, da_dq, da_dv, Mt, False, use_fext,
                          True)
    if st != OK:
        return st
    _minus_solves(H, lam, da_dq, da_dv, Minv)
    return OK


@njit(**JIT)
def world_aba_derivatives(mi, mc, mI, dv, dm, q, v, tau, a_out, da_dq, da_dv, Minv, failed, kin,
                          use_fext, ws, iw):
    """``_aba_derivatives`` for constant joint subspaces, in the world frame alone: the RNEA at
    a = 0 and M from ``world_composites`` (no CRBA), a = M^-1 (tau - b), the RNEA moved to a
    by ``_world_add_accelerations``, Table 5 from ``world_directions``. ``ws``: 12 nb floats
    more than ``_aba_derivatives``'s."""
    n = v.shape[0]
    nb = mi.shape[0]
    st, b, H, zero = _aba_work(mi, v, tau, ws)
    if st != OK:
        return st
    if kin:
        st = joint_kinematics(mi, mc, dv, dm, q, v)
        if st != OK:
            return st
    world_composites(mi, mc, mI, dv, dm, H, ws, iw, v, zero, use_fext, True)
    vw, aw, Fw, Cc, sw, P1, P2, tmp = _world_views(ws, nb, n)
    for i in range(1, nb):
        for k in range(6):
            if not np.isfinite(Fw[i, k]):
                return OVERFLOW
        for t in range(mi[i, VI], mi[i, VI] + mi[i, NV]):
            b[t] = _dot6(sw[t], Fw[i])          # tau at a = 0: s_t . F_j
    lam = bare(iw)[n + nb:]
    st = _factor_and_solve(mi, H, lam, tau, b, a_out, failed)
    if st != OK:
        return st
    _world_add_accelerations(mi, a_out, ws, n)
    world_directions(mi, mc, mI, dv, dm, da_dq, da_dv, ws, iw, True)
    _minus_solves(H, lam, da_dq, da_dv, Minv)
    return OK


@njit(**JIT)
def _world_add_accelerations(mi, a, ws, n):
    """The world RNEA of ``world_composites`` at a = 0 moved to a (it is linear in a): a_i +=
    da_i = da_p + sum_t s_t a_t and F_j += sum over j's subtree of I_i da_i = Ic_j da_j +
    sum over the children c of G_c, with G_c = sum over c's subtree of the DOFs t of a_t P1_t
    (P1_t = Ic s_t of the body of t), so no single body's inertia is needed."""
    nb = mi.shape[0]
    vw, aw, Fw, Cc, sw, P1, P2, tmp = _world_views(ws, nb, n)
    o = world_work_size(nb, n) + n * n + n
    w = bare(ws)
    da = c_view(w[o:], (nb, 6))
    G = c_view(w[o + 6 * nb:], (nb, 6))
    for k in range(6):
        da[0, k] = 0.0
    for i in range(1, nb):
        p = mi[i, P]
        for k in range(6):
            x = da[p, k]
            g = 0.0
            for t in range(mi[i, VI], mi[i, VI] + mi[i, NV]):
                x += sw[t, k] * a[t]
                g += P1[t, k] * a[t]
            da[i, k] = x
            aw[i, k] += x
            G[i, k] = g
    for i in range(nb - 1, 0, -1):
        _ic_mul(Cc[i], da[i], Fw[i], 1.0, True)
        p = mi[i, P]
        if p > 0:
            for k in range(6):
                Fw[p, k] += G[i, k]              # the children's G, before the parent's own
                G[p, k] += G[i, k]


# --------------------------------------------------------------- world-frame fast path
@njit(inline="always", **JIT)
def _dot6(x, y):
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3] + x[4] * y[4] + x[5] * y[5]


@njit(**JIT)
def constant_subspaces(mi):
    """True when every joint has a constant S and no Sdot (revolute, prismatic, free, ball) and
    none is a mimic joint: the case of the world-frame form below."""
    for i in range(1, mi.shape[0]):
        k = mi[i, K]
        if mi[i, MIMIC] == 1 or not (k == J.REVOLUTE or k == J.PRISMATIC or k == J.FREE
                                     or k == J.SPHERICAL):
            return False
    return True




@njit(inline="always", **JIT)
def _ic_mul(C, x, out, s, add):
    """out (+)= s * Ic x = s * (Io w + h x u, m u - h x w) for x = (w, u)."""
    w0, w1, w2, u0, u1, u2 = x[0], x[1], x[2], x[3], x[4], x[5]
    h0, h1, h2, m = C[C_H], C[C_H + 1], C[C_H + 2], C[C_M]
    t0 = C[C_IO] * w0 + C[C_IO + 1] * w1 + C[C_IO + 2] * w2 + h1 * u2 - h2 * u1
    t1 = C[C_IO + 3] * w0 + C[C_IO + 4] * w1 + C[C_IO + 5] * w2 + h2 * u0 - h0 * u2
    t2 = C[C_IO + 6] * w0 + C[C_IO + 7] * w1 + C[C_IO + 8] * w2 + h0 * u1 - h1 * u0
    t3 = m * u0 - (h1 * w2 - h2 * w1)
    t4 = m * u1 - (h2 * w0 - h0 * w2)
    t5 = m * u2 - (h0 * w1 - h1 * w0)
    if add:
        out[0] += s * t0
        out[1] += s * t1
        out[2] += s * t2
        out[3] += s * t3
        out[4] += s * t4
        out[5] += s * t5
    else:
        out[0], out[1], out[2], out[3], out[4], out[5] = t0, t1, t2, t3, t4, t5


@njit(inline="always", **JIT)
def _xi_mul(C, x, out, s, transpose):
    """out += s * Xi x = s * (Sy w + hw x w + (g + hv) x u, (hv - g) x w), or s * Xi^T x =
    s * (Sy w - hw x w + (g - hv) x u, -(hv + g) x w)."""
    w0, w1, w2, u0, u1, u2 = x[0], x[1], x[2], x[3], x[4], x[5]
    sg = -1.0 if transpose else 1.0
    m0, m1, m2 = sg * C[C_HW], sg * C[C_HW + 1], sg * C[C_HW + 2]
    v0, v1, v2 = sg * C[C_HV], sg * C[C_HV + 1], sg * C[C_HV + 2]
    g0, g1, g2 = C[C_G], C[C_G + 1], C[C_G + 2]
    a0, a1, a2 = v0 + g0, v1 + g1, v2 + g2
    b0, b1, b2 = v0 - g0, v1 - g1, v2 - g2
    out[0] += s * (C[C_SY] * w0 + C[C_SY + 1] * w1 + C[C_SY + 2] * w2 + m1 * w2 - m2 * w1
                   + a1 * u2 - a2 * u1)
    out[1] += s * (C[C_SY + 3] * w0 + C[C_SY + 4] * w1 + C[C_SY + 5] * w2 + m2 * w0 - m0 * w2
                   + a2 * u0 - a0 * u2)
    out[2] += s * (C[C_SY + 6] * w0 + C[C_SY + 7] * w1 + C[C_SY + 8] * w2 + m0 * w1 - m1 * w0
                   + a0 * u1 - a1 * u0)
    out[3] += s * (b1 * w2 - b2 * w1)
    out[4] += s * (b2 * w0 - b0 * w2)
    out[5] += s * (b0 * w1 - b1 * w0)


@njit(inline="always", **JIT)
def _world_composite(R, p, I, w, C):
    """Body inertia I moved to the world frame, T = (R, p), as a composite C (C_IO...): the
    parallel-axis form of ``spatial.rigid_congruence_add`` (Io' = R Io R^T - [Rh][p] - [p][Rh]
    - m [p]^2, h' = R h + m p) with R Io R^T from R Io (45 products, not 108), then, for the
    world twist w = (om, u), Xi's parts: Sy = A + A^T + u h^T + h u^T
    - 2 (h.u) 1 with A = Io' [om], g = h' x om - m u (I ad_w + (I ad_w)^T by 3x3 blocks is
    [[Sy, [g]], [-[g], 0]]), and Hc = Ic w."""
    m = I[5, 5]
    h0, h1, h2 = I[2, 4], I[0, 5], I[1, 3]
    r0 = R[0] * h0 + R[1] * h1 + R[2] * h2
    r1 = R[3] * h0 + R[4] * h1 + R[5] * h2
    r2 = R[6] * h0 + R[7] * h1 + R[8] * h2
    p0, p1, p2 = p[0], p[1], p[2]
    rp = r0 * p0 + r1 * p1 + r2 * p2
    pp = p0 * p0 + p1 * p1 + p2 * p2
    rv = (r0, r1, r2)
    pv = (p0, p1, p2)
    for a in range(3):                      # B = R Io in C_SY (scratch until Sy is written)
        for k in range(3):
            C[C_SY + 3 * a + k] = (R[3 * a] * I[0, k] + R[3 * a + 1] * I[1, k]
                                   + R[3 * a + 2] * I[2, k])
    for a in range(3):
        for b in range(a, 3):
            acc = (C[C_SY + 3 * a] * R[3 * b] + C[C_SY + 3 * a + 1] * R[3 * b + 1]
                   + C[C_SY + 3 * a + 2] * R[3 * b + 2])
            acc -= pv[b] * rv[a] + rv[b] * pv[a] + m * pv[a] * pv[b]
            if a == b:
                acc += 2.0 * rp + m * pp
            C[C_IO + 3 * a + b] = acc
            C[C_IO + 3 * b + a] = acc
    H0, H1, H2 = r0 + m * p0, r1 + m * p1, r2 + m * p2
    C[C_H], C[C_H + 1], C[C_H + 2], C[C_M] = H0, H1, H2, m
    w0, w1, w2, u0, u1, u2 = w[0], w[1], w[2], w[3], w[4], w[5]
    hu = H0 * u0 + H1 * u1 + H2 * u2
    hv = (H0, H1, H2)
    uv = (u0, u1, u2)
    for r in range(3):                      # A = Io' [om] in C_SY, row r = Io'[r, :] x om
        a0, a1, a2 = C[C_IO + 3 * r], C[C_IO + 3 * r + 1], C[C_IO + 3 * r + 2]
        C[C_SY + 3 * r] = a1 * w2 - a2 * w1
        C[C_SY + 3 * r + 1] = a2 * w0 - a0 * w2
        C[C_SY + 3 * r + 2] = a0 * w1 - a1 * w0
    for r in range(3):
        for c in range(r, 3):
            t = C[C_SY + 3 * r + c] + C[C_SY + 3 * c + r] + uv[r] * hv[c] + hv[r] * uv[c]
            if r == c:
                t -= 2.0 * hu
            C[C_SY + 3 * r + c] = t
            C[C_SY + 3 * c + r] = t
    C[C_G] = H1 * w2 - H2 * w1 - m * u0
    C[C_G + 1] = H2 * w0 - H0 * w2 - m * u1
    C[C_G + 2] = H0 * w1 - H1 * w0 - m * u2
    _ic_mul(C, w, C[C_HW:C_HW + 6], 1.0, False)


@njit(inline="always", **JIT)
def _world_views(ws, nb, n):
    """The regions of the work buffer of ``world_composites`` / ``world_directions``."""
    w = bare(ws)
    o = (18 + NC) * nb
    return (c_view(w, (nb, 6)), c_view(w[6 * nb:], (nb, 6)), c_view(w[12 * nb:], (nb, 6)),
            c_view(w[18 * nb:], (nb, NC)), c_view(w[o:], (n, 6)),
            c_view(w[o + 6 * n:], (n, 6)), c_view(w[o + 12 * n:], (n, 6)),
            c_view(w[o + 18 * n:], (5, 6)))


@njit(**JIT)
def world_composites(mi, mc, mI, dv, dm, M, ws, iw, v, a, use_fext, with_rnea):
    """The part of Table 5's world-frame form that needs q and v only, and M from it.

    With world twists v_i and joint columns s_t = Ad_{T_0i} S_i e_t, the subtree sums
    Ic_j = sum I_i and Xi_j = sum (I_i ad_{v_i} + ad_{v_i}^T I_i + Ybar(I_i v_i)), where
    ad*_x h = Ybar(h) x, and per DOF t (body j) P1_t = Ic_j s_t, P2_t = Xi_j^T s_t. The mass
    matrix is M[t, s] = P1_t . s_s for t in the subtree of s's body (the CRBA in the world
    frame), plus the armature on its diagonal. Needs the joint kinematics and velocities of an
    RNEA (any a). ``ws`` (``world_work_size`` floats) and ``iw`` (n + nb ints at least) are
    work memory that the caller holds for the call, so views without reference counts
    (kernels/views.py) are safe; ``world_directions`` reads them next.

    ``with_rnea``: the RNEA itself runs here, in the world frame (constant S: v_i = v_p + s qd,
    a_i = a_p + s qdd + [v_i, s qd], f_i = I_i a_i - ad*_{v_i} I_i v_i - f_ext, summed over
    subtrees), from the joint kinematics alone; else v_i comes from an RNEA's dv.
    """
    nj = mi.shape[0] - 1
    n = M.shape[0]
    nb = nj + 1
    world_poses(mi, dv)
    vw, aw, Fw, Cc, sw, P1, P2, tmp = _world_views(ws, nb, n)
    ik = bare(iw)
    owner = ik[:n]
    end = ik[n:n + nb]
    body_ranges(mi, owner, end)
    sq = tmp[0]
    for k in range(3):
        vw[0, k] = 0.0
        vw[0, 3 + k] = 0.0
        aw[0, k] = 0.0
        aw[0, 3 + k] = -mc[0, G + k]
    for i in range(1, nj + 1):
        c = dv[i]
        R = c[OR:OR + 9]
        pp = c[OP:OP + 3]
        vi, nv = mi[i, VI], mi[i, NV]
        for t in range(nv):
            se3_Ad(R, pp, dm[i, MS, :, t], sw[vi + t])
        if with_rnea:
            p = mi[i, P]
            for k in range(6):
                acc_v = 0.0
                acc_a = 0.0
                for t in range(nv):
                    acc_v += sw[vi + t, k] * v[vi + t]
                    acc_a += sw[vi + t, k] * a[vi + t]
                sq[k] = acc_v
                vw[i, k] = vw[p, k] + acc_v
                aw[i, k] = aw[p, k] + acc_a
            se3_ad_add(vw[i], sq, aw[i], 1.0)
        else:
            se3_Ad(R, pp, c[V:V + 6], vw[i])
        C = Cc[i]
        _world_composite(R, pp, mI[i], vw[i], C)
        if with_rnea:
            _ic_mul(C, aw[i], Fw[i], 1.0, False)
            se3_ad_star_add(vw[i], C[C_HW:C_HW + 6], Fw[i], -1.0)
            if use_fext:
                se3_Ad_inv_T_add(R, pp, c[FEXT:FEXT + 6], Fw[i], -1.0)
    for i in range(nj, 0, -1):                  # subtree sums (all in the world frame)
        p = mi[i, P]
        if p > 0:
            for r in range(NC - 1):
                Cc[p, r] += Cc[i, r]
            if with_rnea:
                for r in range(6):
                    Fw[p, r] += Fw[i, r]
    for t in range(n):
        j = owner[t]
        _ic_mul(Cc[j], sw[t], P1[t], 1.0, False)
        for r in range(6):
            P2[t, r] = 0.0
        _xi_mul(Cc[j], sw[t], P2[t], 1.0, True)
    for r in range(n):
        for s in range(n):
            M[r, s] = 0.0
    for s in range(n):
        Kb = owner[s]
        for t in range(mi[Kb, VI], mi[end[Kb], VI] + mi[end[Kb], NV]):
            M[t, s] = M[s, t] = _dot6(P1[t], sw[s])
    add_armature_diagonal(mi, mc, M)


@njit(**JIT)
def world_directions(mi, mc, mI, dv, dm, dq, dtv, ws, iw, have_af):
    """Table 5 for every p = q_k and p = qd_k at once, in the world frame (constant S only),
    after ``world_composites`` filled ``ws`` and ``iw`` and an RNEA at (q, v, a) filled dv.

    A q_s perturbation turns the subtree of its joint K rigidly about s, so Kim's recursion
    sums over a subtree into the composites of ``world_composites``. With world accelerations
    a_i (a_0 = (0, -g)), joint wrenches F_j, c = [s, v_p], x = [a_p, s] - [v_p, c],
    e = [v_p, s] + [v_K, s] (p the parent of K):
      j in the subtree of K:  dtau_t/dq_s = (Ic_j s_t).x + (Xi_j^T s_t).c,
                              dtau_t/dqd_s = (Ic_j s_t).e - (Xi_j^T s_t).s;
      j an ancestor of K:     dtau_t/dq_s = s_t.(-ad*_s F_K + Ic_K x + Xi_K c),
                              dtau_t/dqd_s = s_t.(Ic_K e - Xi_K s);
    zero elsewhere. O(n) 6x6 work plus 12 flops per (ancestor, descendant) pair of DOFs.
    ``have_af``: ``world_composites`` ran the RNEA (world a_i and subtree F_j are in ``ws``).
    """
    nj = mi.shape[0] - 1
    n = dq.shape[0]
    nb = nj + 1
    vw, aw, Fw, Cc, sw, P1, P2, tmp = _world_views(ws, nb, n)
    cv, xv, ev, yv, zv = tmp[0], tmp[1], tmp[2], tmp[3], tmp[4]
    ik = bare(iw)
    owner = ik[:n]
    end = ik[n:n + nb]
    for i in range(1, nj + 1):
        if have_af:
            break
        c = dv[i]
        R = c[OR:OR + 9]
        pp = c[OP:OP + 3]
        se3_Ad(R, pp, c[A:A + 6], aw[i])
        for r in range(6):
            Fw[i, r] = 0.0
        se3_Ad_inv_T_add(R, pp, c[F:F + 6], Fw[i], 1.0)
    for r in range(n):
        for s in range(n):
            dq[r, s] = 0.0
            dtv[r, s] = 0.0
    for s in range(n):
        Kb = owner[s]
        p = mi[Kb, P]
        ss = sw[s]
        vp = vw[p]
        for r in range(6):
            cv[r] = 0.0
            xv[r] = 0.0
            ev[r] = 0.0
        se3_ad_add(ss, vp, cv, 1.0)                 # c = [s, v_p]
        se3_ad_add(aw[p], ss, xv, 1.0)              # x = [a_p, s] - [v_p, c]
        se3_ad_add(vp, cv, xv, -1.0)
        se3_ad_add(vp, ss, ev, 1.0)                 # e = [v_p, s] + [v_K, s]
        se3_ad_add(vw[Kb], ss, ev, 1.0)
        for t in range(mi[Kb, VI], mi[end[Kb], VI] + mi[end[Kb], NV]):
            dq[t, s] = _dot6(P1[t], xv) + _dot6(P2[t], cv)
            dtv[t, s] = _dot6(P1[t], ev) - _dot6(P2[t], ss)
        if p == 0:
            continue
        C = Cc[Kb]
        _ic_mul(C, xv, yv, 1.0, False)
        _xi_mul(C, cv, yv, 1.0, False)
        se3_ad_star_add(ss, Fw[Kb], yv, -1.0)
        _ic_mul(C, ev, zv, 1.0, False)
        _xi_mul(C, ss, zv, -1.0, False)
        m = p
        while m > 0:
            for t in range(mi[m, VI], mi[m, VI] + mi[m, NV]):
                dq[t, s] = _dot6(sw[t], yv)
                dtv[t, s] = _dot6(sw[t], zv)
            m = mi[m, P]
