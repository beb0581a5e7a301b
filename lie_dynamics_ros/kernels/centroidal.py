"""Compiled centroidal quantities and the inverse mass matrix, in the world frame.

Centre of mass, its Jacobian, the centroidal momentum matrix A_G and its time derivative
(Orin, Goswami & Lee 2013, h_G = A_G qd), from composite inertias summed in the world frame,
where a child's inertia adds to its parent's with no transform (as Pinocchio's ccrba and
dccrba, Carpentier et al. 2019), and M^-1 by the articulated-body recursion on unit torques
(Carpentier 2018, "Analytical inverse of the joint space inertia matrix").

Work memory: the Data's per-body matrices are reused as scratch here (world-frame composite or
articulated inertia in MIH, its derivative or the world motion subspace in MPI, U in MU, D in
MD, D^-1 in MPSI, U D^-1 in MTMP). Everything, outputs included, is in Kim's order (angular,
linear); conventions.py turns A_G and h_G to the public order.
"""
import numpy as np

from .layout import (P, VI, NV, ARM, WR, WP, SDV, V, A, OR, OP, MS, MSD, MIH, MU, MPSI, MPI, MD,
                     MTMP, OK, NONFINITE, SINGULAR, OVERFLOW)
from .jit import JIT, njit
from .lie import se3_Ad, se3_Ad_inv, se3_ad_add
from .spatial import mat_vec, rigid_congruence_add, invert_spd
from .joint_kinematics import joint_kinematics
from .dynamics import world_poses

NOT_DFS = 100   # rows are not a depth-first order with contiguous DOFs: no M^-1 recursion


@njit(**JIT)
def _poses(mi, mc, dv, dm, q, v, kin):
    """Joint kinematics (unless Python filled General joints) and every body's world pose."""
    if kin:
        st = joint_kinematics(mi, mc, dv, dm, q, v)
        if st != OK:
            return st
    world_poses(mi, dv)
    return OK


@njit(**JIT)
def _twists(mi, dv, dm, v, a, with_acc):
    """Body twists V_i = Ad_{T^-1} V_p + S_i qd_i and, with ``with_acc``, accelerations
    Vd_i = Ad_{T^-1} Vd_p + S_i qdd_i + ad(V_i) S_i qd_i + Sdot_i qd_i, the base
    at rest (no gravity)."""
    nj = mi.shape[0] - 1
    Sq = np.empty(6)
    for k in range(6):
        dv[0, V + k] = 0.0
        dv[0, A + k] = 0.0
    for i in range(1, nj + 1):
        c = dv[i]
        vi, nv = mi[i, VI], mi[i, NV]
        Vi = c[V:V + 6]
        se3_Ad_inv(c[WR:WR + 9], c[WP:WP + 3], dv[mi[i, P], V:V + 6], Vi)
        mat_vec(dm[i, MS], v[vi:vi + nv], Sq, nv, False)
        for k in range(6):
            Vi[k] += Sq[k]
        if with_acc:
            Ai = c[A:A + 6]
            se3_Ad_inv(c[WR:WR + 9], c[WP:WP + 3], dv[mi[i, P], A:A + 6], Ai)
            mat_vec(dm[i, MS], a[vi:vi + nv], Ai, nv, True)
            for k in range(6):
                Ai[k] += c[SDV + k]
            se3_ad_add(Vi, Sq, Ai, 1.0)


@njit(inline="always", **JIT)
def _cross_add(a0, a1, a2, b, out, s):
    """out[0:3] += s * (a x b)."""
    out[0] += s * (a1 * b[2] - a2 * b[1])
    out[1] += s * (a2 * b[0] - a0 * b[2])
    out[2] += s * (a0 * b[1] - a1 * b[0])


@njit(**JIT)
def center_of_mass(mi, mc, mI, dv, dm, q, v, a, out, order, kin):
    """out[0] = c, out[1] = dc/dt (order >= 1), out[2] = d2c/dt2 (order 2), in the world; the
    acceleration is kinematic (gravity is not an acceleration of the bodies here)."""
    st = _poses(mi, mc, dv, dm, q, v, kin)
    if st != OK:
        return st
    for k in range(a.shape[0]):
        if not np.isfinite(a[k]):
            return NONFINITE
    if order > 0:
        _twists(mi, dv, dm, v, a, order > 1)
    nj = mi.shape[0] - 1
    out[:, :] = 0.0
    mass = 0.0
    b = np.empty(3)      # body frame: m u (momentum of the COM point)
    e = np.empty(3)      # and its rate
    for i in range(1, nj + 1):
        I = mI[i]
        m = I[5, 5]
        h0, h1, h2 = I[2, 4], I[0, 5], I[1, 3]      # m c_i in frame i (Kim eq. 22)
        c = dv[i]
        R = c[OR:OR + 9]
        mass += m
        for r in range(3):
            out[0, r] += m * c[OP + r] + R[3 * r] * h0 + R[3 * r + 1] * h1 + R[3 * r + 2] * h2
        if order > 0:
            Vb = c[V:V + 6]
            for r in range(3):          # m (v + w x c)
                b[r] = m * Vb[3 + r]
            _cross_add(Vb[0], Vb[1], Vb[2], (h0, h1, h2), b, 1.0)
            for r in range(3):
                out[1, r] += R[3 * r] * b[0] + R[3 * r + 1] * b[1] + R[3 * r + 2] * b[2]
            if order > 1:               # m (vd + wd x c) + w x m (v + w x c)
                Ab = c[A:A + 6]
                for r in range(3):
                    e[r] = m * Ab[3 + r]
                _cross_add(Ab[0], Ab[1], Ab[2], (h0, h1, h2), e, 1.0)
                _cross_add(Vb[0], Vb[1], Vb[2], b, e, 1.0)
                for r in range(3):
                    out[2, r] += R[3 * r] * e[0] + R[3 * r + 1] * e[1] + R[3 * r + 2] * e[2]
    if not mass > 0.0:
        return SINGULAR
    for r in range(3):
        for k in range(3):
            out[r, k] /= mass
    for r in range(3):
        for k in range(3):
            if not np.isfinite(out[r, k]):
                return OVERFLOW
    return OK


@njit(**JIT)
def _world_motion(dv, dm, i, k, out):
    """out = Ad_{T_i} S_i[:, k]: column k of joint i's motion subspace in the world frame."""
    se3_Ad(dv[i, OR:OR + 9], dv[i, OP:OP + 3], dm[i, MS, :, k], out)


@njit(**JIT)
def com_jacobian(mi, mc, mI, dv, dm, q, zero_v, J, com, kin):
    """J (3 x nv): dc/dt = J v. Column of joint i: (m_sub / m) (v + w x c_sub), with (w, v) the
    joint's world motion and m_sub, c_sub its subtree's mass and centre of mass."""
    st = _poses(mi, mc, dv, dm, q, zero_v, kin)
    if st != OK:
        return st
    nj = mi.shape[0] - 1
    sub = np.zeros((nj + 1, 4))          # subtree mass, subtree m c (world)
    for i in range(1, nj + 1):
        I = mI[i]
        m = I[5, 5]
        h0, h1, h2 = I[2, 4], I[0, 5], I[1, 3]
        R = dv[i, OR:OR + 9]
        sub[i, 0] += m
        for r in range(3):
            sub[i, 1 + r] += (m * dv[i, OP + r] + R[3 * r] * h0 + R[3 * r + 1] * h1
                              + R[3 * r + 2] * h2)
    for i in range(nj, 0, -1):
        for r in range(4):
            sub[mi[i, P], r] += sub[i, r]
    mass = sub[0, 0]
    if not mass > 0.0:
        return SINGULAR
    for r in range(3):
        com[r] = sub[0, 1 + r] / mass
    J[:, :] = 0.0
    Sw = np.empty(6)
    col = np.empty(3)
    for i in range(1, nj + 1):
        vi, nv = mi[i, VI], mi[i, NV]
        s = sub[i]
        for k in range(nv):
            _world_motion(dv, dm, i, k, Sw)
            for r in range(3):
                col[r] = s[0] * Sw[3 + r]
            _cross_add(Sw[0], Sw[1], Sw[2], s[1:4], col, 1.0)
            for r in range(3):
                J[r, vi + k] += col[r] / mass
    for k in range(J.shape[1]):
        for r in range(3):
            if not np.isfinite(J[r, k]):
                return OVERFLOW
    return OK


@njit(**JIT)
def centroidal_momentum(mi, mc, mI, dv, dm, q, v, h, com, kin):
    """h = (angular momentum about the COM, linear momentum), world axes; com = c."""
    st = _poses(mi, mc, dv, dm, q, v, kin)
    if st != OK:
        return st
    _twists(mi, dv, dm, v, v, False)
    nj = mi.shape[0] - 1
    IV = np.empty(6)
    f = np.empty(3)
    mass = 0.0
    for k in range(6):
        h[k] = 0.0
    for k in range(3):
        com[k] = 0.0
    for i in range(1, nj + 1):
        I = mI[i]
        m = I[5, 5]
        h0, h1, h2 = I[2, 4], I[0, 5], I[1, 3]
        R = dv[i, OR:OR + 9]
        p = dv[i, OP:OP + 3]
        mass += m
        for r in range(3):
            com[r] += m * p[r] + R[3 * r] * h0 + R[3 * r + 1] * h1 + R[3 * r + 2] * h2
        mat_vec(I, dv[i, V:V + 6], IV, 6, False)     # (angular about the origin of i, linear)
        for r in range(3):
            f[r] = R[3 * r] * IV[3] + R[3 * r + 1] * IV[4] + R[3 * r + 2] * IV[5]
            h[3 + r] += f[r]
            h[r] += R[3 * r] * IV[0] + R[3 * r + 1] * IV[1] + R[3 * r + 2] * IV[2]
        _cross_add(p[0], p[1], p[2], f, h[0:3], 1.0)    # about the world origin
    if not mass > 0.0:
        return SINGULAR
    for r in range(3):
        com[r] /= mass
    _cross_add(com[0], com[1], com[2], h[3:6], h[0:3], -1.0)   # n_G = n_O - c x f
    for k in range(6):
        if not np.isfinite(h[k]):
            return OVERFLOW
    return OK


@njit(**JIT)
def _ad_matrix(Vw, ad):
    """ad_V as a 6x6 matrix, V = (w, v): [[w^, 0], [v^, w^]] (Kim eq. 27)."""
    w0, w1, w2, u0, u1, u2 = Vw[0], Vw[1], Vw[2], Vw[3], Vw[4], Vw[5]
    ad[:, :] = 0.0
    for o in (0, 3):
        ad[o + 0, o + 1], ad[o + 0, o + 2] = -w2, w1
        ad[o + 1, o + 0], ad[o + 1, o + 2] = w2, -w0
        ad[o + 2, o + 0], ad[o + 2, o + 1] = -w1, w0
    ad[3, 1], ad[3, 2], ad[4, 0], ad[4, 2], ad[5, 0], ad[5, 1] = -u2, u1, u2, -u0, -u1, u0


@njit(inline="always", **JIT)
def _inertia_rate(I, ad, dI):
    """dI = -(ad_V^T I + I ad_V) by 3x3 blocks: with I = [[A, B], [B^T, m 1]] (Kim eq. 22) and
    ad_V = [[W, 0], [U, W]], dI = -[[X, Y], [Y^T, 0]], X = A W - W A + B U - U B^T,
    Y = B W - W B - m U."""
    m = I[5, 5]
    for r in range(3):
        for c in range(3):
            x = 0.0
            y = -m * ad[3 + r, c]
            for k in range(3):
                x += (I[r, k] * ad[k, c] - ad[r, k] * I[k, c] + I[r, 3 + k] * ad[3 + k, c]
                      - ad[3 + r, k] * I[3 + k, c])
                y += I[r, 3 + k] * ad[k, c] - ad[r, k] * I[k, 3 + c]
            dI[r, c] = -x
            dI[r, 3 + c] = -y
            dI[3 + c, r] = -y
            dI[3 + r, 3 + c] = 0.0


@njit(**JIT)
def centroidal_map(mi, mc, mI, dv, dm, q, v, Ag, dAg, com, with_dot, kin):
    """A_G (6 x nv, rows (angular, linear) as every kernel output): h_G = A_G v; with
    ``with_dot`` also dA_G/dt.

    Column of DOF k of joint i: Ic_i^w S_i^w (world composite inertia times world motion),
    moved from the world origin to the COM. Its rate: dIc^w S^w + Ic^w dS^w, with
    dI^w = -(ad_V^T I^w + I^w ad_V) per body (V its world twist) and
    dS^w = Ad_T (ad_{V_i} S_i + Sdot_i); moving the moment point to the moving COM adds
    -dc/dt x (the column's force)."""
    st = _poses(mi, mc, dv, dm, q, v, kin)
    if st != OK:
        return st
    nj = mi.shape[0] - 1
    if with_dot:
        _twists(mi, dv, dm, v, v, False)
    ad = dm[0, MTMP]
    Vw = np.empty(6)
    for i in range(1, nj + 1):
        Iw = dm[i, MIH]
        Iw[:, :] = 0.0
        rigid_congruence_add(dv[i, OR:OR + 9], dv[i, OP:OP + 3], mI[i], Iw)
        if with_dot:
            se3_Ad(dv[i, OR:OR + 9], dv[i, OP:OP + 3], dv[i, V:V + 6], Vw)
            _ad_matrix(Vw, ad)
            _inertia_rate(Iw, ad, dm[i, MPI])
    mass = 0.0
    h0 = h1 = h2 = 0.0
    for i in range(nj, 0, -1):
        p = mi[i, P]
        if p > 0:
            for r in range(6):
                for c in range(6):
                    dm[p, MIH, r, c] += dm[i, MIH, r, c]
                    if with_dot:
                        dm[p, MPI, r, c] += dm[i, MPI, r, c]
        else:
            Ic = dm[i, MIH]
            mass += Ic[5, 5]
            h0 += Ic[2, 4]
            h1 += Ic[0, 5]
            h2 += Ic[1, 3]
    if not mass > 0.0:
        return SINGULAR
    com[0], com[1], com[2] = h0 / mass, h1 / mass, h2 / mass
    Ag[:, :] = 0.0
    if with_dot:
        dAg[:, :] = 0.0
    Sw = np.empty(6)
    col = np.empty(6)
    Sd = np.empty(6)
    Sdw = np.empty(6)
    for i in range(1, nj + 1):
        vi, nv = mi[i, VI], mi[i, NV]
        Ic = dm[i, MIH]
        for k in range(nv):
            _world_motion(dv, dm, i, k, Sw)
            mat_vec(Ic, Sw, col, 6, False)
            _add_column(Ag, vi + k, col, com)
            if with_dot:
                for r in range(6):
                    Sd[r] = dm[i, MSD, r, k]
                se3_ad_add(dv[i, V:V + 6], dm[i, MS, :, k], Sd, 1.0)
                se3_Ad(dv[i, OR:OR + 9], dv[i, OP:OP + 3], Sd, Sdw)
                mat_vec(dm[i, MPI], Sw, col, 6, False)
                mat_vec(Ic, Sdw, col, 6, True)
                _add_column(dAg, vi + k, col, com)
    if with_dot:
        cd = np.zeros(3)
        for k in range(Ag.shape[1]):
            for r in range(3):
                cd[r] += Ag[3 + r, k] * v[k] / mass
        for k in range(Ag.shape[1]):
            _cross_add(cd[0], cd[1], cd[2], Ag[3:6, k], dAg[0:3, k], -1.0)
    for k in range(Ag.shape[1]):
        for r in range(6):
            if not np.isfinite(Ag[r, k]) or (with_dot and not np.isfinite(dAg[r, k])):
                return OVERFLOW
    return OK


@njit(inline="always", **JIT)
def _add_column(Ag, j, col, com):
    """Ag[:, j] += (n_O - c x f, f) for col = (n_O, f) about the world origin."""
    for r in range(6):
        Ag[r, j] += col[r]
    _cross_add(com[0], com[1], com[2], col[3:6], Ag[0:3, j], -1.0)


@njit(**JIT)
def mass_matrix_inverse(mi, mc, mI, dv, dm, q, zero_v, Minv, F, Acc, failed, kin):
    """M^-1 (armature included) by the articulated-body algorithm run on the nv unit torques at
    once, in the world frame (Carpentier 2018; Pinocchio's computeMinverse): a backward pass
    gives each joint's row on its own subtree's columns, a forward pass subtracts what the
    parent's acceleration takes, on the columns from the joint's first DOF on; the lower
    triangle is the upper's mirror. ``F`` and ``Acc`` (nj + 1, 6, nv) are work memory. Rows must
    be a depth-first order whose subtrees hold contiguous DOFs (status NOT_DFS otherwise)."""
    st = _poses(mi, mc, dv, dm, q, zero_v, kin)
    if st != OK:
        return st
    nj = mi.shape[0] - 1
    n = Minv.shape[0]
    nvsub = np.zeros(nj + 1, dtype=np.int64)
    size = np.ones(nj + 1, dtype=np.int64)
    last = np.arange(nj + 1)
    off = 0
    for i in range(1, nj + 1):
        if mi[i, VI] != off:
            return NOT_DFS
        off += mi[i, NV]
        nvsub[i] += mi[i, NV]
    if off != n:
        return NOT_DFS
    for i in range(nj, 0, -1):
        p = mi[i, P]
        if last[i] - i + 1 != size[i]:
            return NOT_DFS
        if p > 0:
            nvsub[p] += nvsub[i]
            size[p] += size[i]
            last[p] = max(last[p], last[i])
    Minv[:, :] = 0.0
    for i in range(1, nj + 1):
        Ia = dm[i, MIH]
        Ia[:, :] = 0.0
        rigid_congruence_add(dv[i, OR:OR + 9], dv[i, OP:OP + 3], mI[i], Ia)
        for k in range(mi[i, NV]):
            _world_motion(dv, dm, i, k, dm[i, MPI, :, k])
        vi = mi[i, VI]
        F[i, :, vi:vi + nvsub[i]] = 0.0
    for i in range(nj, 0, -1):
        vi, nv, ns, p = mi[i, VI], mi[i, NV], nvsub[i], mi[i, P]
        Ia, Sw, U, D = dm[i, MIH], dm[i, MPI], dm[i, MU], dm[i, MD]
        Dinv, UD = dm[i, MPSI], dm[i, MTMP]
        for k in range(nv):
            mat_vec(Ia, Sw[:, k], U[:, k], 6, False)
        for k in range(nv):
            for l in range(nv):
                acc = 0.0
                for r in range(6):
                    acc += Sw[r, k] * U[r, l]
                D[k, l] = acc
            D[k, k] += mc[i, ARM + k]
        if not invert_spd(D, nv, Dinv):
            failed[0] = i
            return SINGULAR
        for r in range(6):
            for k in range(nv):
                acc = 0.0
                for l in range(nv):
                    acc += U[r, l] * Dinv[l, k]
                UD[r, k] = acc
        for k in range(nv):
            for l in range(nv):
                Minv[vi + k, vi + l] = Dinv[k, l]
        t = np.empty(nv)
        for c in range(vi + nv, vi + ns):       # - D^-1 S^T F on the children's columns
            for k in range(nv):
                acc = 0.0
                for r in range(6):
                    acc += Sw[r, k] * F[i, r, c]
                t[k] = acc
            for k in range(nv):
                acc = 0.0
                for l in range(nv):
                    acc -= Dinv[k, l] * t[l]
                Minv[vi + k, c] = acc
        if p > 0:
            for c in range(vi, vi + ns):        # F_p += F_i + U D^-1 u_i (Minv holds D^-1 u_i)
                for r in range(6):
                    acc = F[i, r, c]
                    for k in range(nv):
                        acc += U[r, k] * Minv[vi + k, c]
                    F[p, r, c] += acc
            Ip = dm[p, MIH]
            for r in range(6):                  # Ia_p += Ia - U D^-1 U^T
                for c in range(6):
                    acc = Ia[r, c]
                    for k in range(nv):
                        acc -= UD[r, k] * U[c, k]
                    Ip[r, c] += acc
    for i in range(1, nj + 1):
        vi, nv, ns, p = mi[i, VI], mi[i, NV], nvsub[i], mi[i, P]
        Sw, UD = dm[i, MPI], dm[i, MTMP]
        if p > 0:                               # qdd_i -= D^-1 U^T a_p
            for c in range(vi, n):
                for k in range(nv):
                    acc = 0.0
                    for r in range(6):
                        acc += UD[r, k] * Acc[p, r, c]
                    Minv[vi + k, c] -= acc
        if ns > nv:                             # a_i = a_p + S qdd_i, read by the children
            for c in range(vi, n):
                for r in range(6):
                    acc = Acc[p, r, c] if p > 0 else 0.0
                    for k in range(nv):
                        acc += Sw[r, k] * Minv[vi + k, c]
                    Acc[i, r, c] = acc
    for r in range(n):
        for c in range(r):
            Minv[r, c] = Minv[c, r]
        if not np.isfinite(Minv[r, r]):
            return OVERFLOW
    return OK
