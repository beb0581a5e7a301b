"""Compiled centroidal quantities, in the world frame: centre of mass (with its velocity and
acceleration), its Jacobian, the centroidal momentum h_G and the centroidal momentum matrix
A_G with its time derivative (Orin, Goswami & Lee 2013, h_G = A_G qd), from inertias summed in
the world frame, where a child's inertia adds to its parent's with no transform (as
Pinocchio's ccrba and dccrba, Carpentier et al. 2019).

A world-frame rigid inertia is kept compact, as Kim's eq. 22 blocks: I_O (3x3, about the world
origin), h = m c (3) and m, in rows 0-3 of a 6x6 scratch (I_O in [0:3, 0:3], h in [3, 0:3], m
in [3, 3]); row 0 of the scratch holds the sums over the root subtrees. Applied to a world
motion (w, v): moment n = I_O w + h x v, force f = m v + w x h.

Work memory: the Data's per-body matrices are scratch here (world inertia in MIH, its rate in
MPI, the world motion subspace in MU), as are dv's TMP/TMP2. Inside, 6-vectors are in Kim's
order (angular, linear); 6-row outputs are written through ``perm`` (conventions.PUBLIC_ROWS),
the permutation to the public order.
"""
import numpy as np

from .layout import (P, K, VI, NV, WR, WP, SDV, V, A, OR, OP, TMP, TMP2, MS, MSD, MIH, MU, MPI,
                     OK, NONFINITE, SINGULAR, OVERFLOW)
from .jit import JIT, njit
from .lie import se3_Ad, se3_Ad_inv, se3_ad_add
from .joint_kinematics import joint_kinematics, unit_row_at
from .dynamics import world_poses


@njit(**JIT)
def poses(mi, mc, dv, dm, q, v, kin):
    """Joint kinematics (unless Python filled General joints) and every body's world pose."""
    if kin:
        st = joint_kinematics(mi, mc, dv, dm, q, v)
        if st != OK:
            return st
    world_poses(mi, dv)
    return OK


@njit(inline="always", **JIT)
def _joint_motion(mi, mc, dm, i, x, out):
    """out = S_i x_i (6, frame i); a principal axis (joint_kinematics.unit_row) is one entry."""
    vi, nv = mi[i, VI], mi[i, NV]
    u = unit_row_at(mi[i, K], mc, i) if nv == 1 else -1
    if u >= 0:
        for r in range(6):
            out[r] = 0.0
        out[u] = dm[i, MS, u, 0] * x[vi]
    else:
        for r in range(6):
            acc = 0.0
            for k in range(nv):
                acc += dm[i, MS, r, k] * x[vi + k]
            out[r] = acc


@njit(**JIT)
def body_motion(mi, mc, dv, dm, v, a, with_acc):
    """Body twists V_i = Ad_{T^-1} V_p + S_i qd_i and, with ``with_acc``, accelerations
    Vd_i = Ad_{T^-1} Vd_p + S_i qdd_i + Sdot_i qd_i + ad(V_i) S_i qd_i (Kim eqs. 37-38), the
    base at rest (no gravity). S_i qd_i is left in dv[i, TMP]."""
    nj = mi.shape[0] - 1
    for k in range(6):
        dv[0, V + k] = 0.0
        dv[0, A + k] = 0.0
    for i in range(1, nj + 1):
        p = mi[i, P]
        Vi = dv[i, V:V + 6]
        Sq = dv[i, TMP:TMP + 6]
        se3_Ad_inv(dv[i, WR:WR + 9], dv[i, WP:WP + 3], dv[p, V:V + 6], Vi)
        _joint_motion(mi, mc, dm, i, v, Sq)
        for k in range(6):
            Vi[k] += Sq[k]
        if with_acc:
            Ai = dv[i, A:A + 6]
            Sa = dv[i, TMP2:TMP2 + 6]
            se3_Ad_inv(dv[i, WR:WR + 9], dv[i, WP:WP + 3], dv[p, A:A + 6], Ai)
            _joint_motion(mi, mc, dm, i, a, Sa)
            for k in range(6):
                Ai[k] += Sa[k] + dv[i, SDV + k]
            se3_ad_add(Vi, Sq, Ai, 1.0)


@njit(inline="always", **JIT)
def _rotate(dv, i, x0, x1, x2):
    """R_i x (R_i: body i's world rotation)."""
    return (dv[i, OR] * x0 + dv[i, OR + 1] * x1 + dv[i, OR + 2] * x2,
            dv[i, OR + 3] * x0 + dv[i, OR + 4] * x1 + dv[i, OR + 5] * x2,
            dv[i, OR + 6] * x0 + dv[i, OR + 7] * x1 + dv[i, OR + 8] * x2)


@njit(**JIT)
def center_of_mass(mi, mc, mI, dv, dm, q, v, a, out, kin):
    """out[0] = c and, by out's rows, out[1] = dc/dt, out[2] = d2c/dt2, in the world; the
    acceleration is kinematic (gravity is not an acceleration of the bodies here). Per body,
    in its frame: m u = m v + w x h and its rate m vd + wd x h + w x (m u), rotated to the world."""
    order = out.shape[0] - 1
    st = poses(mi, mc, dv, dm, q, v, kin)
    if st != OK:
        return st
    if order > 1:
        for k in range(a.shape[0]):
            if not np.isfinite(a[k]):
                return NONFINITE
    if order > 0:
        body_motion(mi, mc, dv, dm, v, a, order > 1)
    nj = mi.shape[0] - 1
    for r in range(order + 1):
        for k in range(3):
            out[r, k] = 0.0
    mass = 0.0
    for i in range(1, nj + 1):
        m = mI[i, 5, 5]
        h0, h1, h2 = mI[i, 2, 4], mI[i, 0, 5], mI[i, 1, 3]      # m c_i in frame i (Kim eq. 22)
        mass += m
        x0, x1, x2 = _rotate(dv, i, h0, h1, h2)
        out[0, 0] += m * dv[i, OP] + x0
        out[0, 1] += m * dv[i, OP + 1] + x1
        out[0, 2] += m * dv[i, OP + 2] + x2
        if order > 0:
            w0, w1, w2 = dv[i, V], dv[i, V + 1], dv[i, V + 2]
            b0 = m * dv[i, V + 3] + w1 * h2 - w2 * h1
            b1 = m * dv[i, V + 4] + w2 * h0 - w0 * h2
            b2 = m * dv[i, V + 5] + w0 * h1 - w1 * h0
            x0, x1, x2 = _rotate(dv, i, b0, b1, b2)
            out[1, 0] += x0
            out[1, 1] += x1
            out[1, 2] += x2
            if order > 1:
                e0, e1, e2 = dv[i, A], dv[i, A + 1], dv[i, A + 2]
                x0, x1, x2 = _rotate(
                    dv, i,
                    m * dv[i, A + 3] + e1 * h2 - e2 * h1 + w1 * b2 - w2 * b1,
                    m * dv[i, A + 4] + e2 * h0 - e0 * h2 + w2 * b0 - w0 * b2,
                    m * dv[i, A + 5] + e0 * h1 - e1 * h0 + w0 * b1 - w1 * b0)
                out[2, 0] += x0
                out[2, 1] += x1
                out[2, 2] += x2
    if not mass > 0.0:
        return SINGULAR
    for r in range(order + 1):
        for k in range(3):
            out[r, k] /= mass
            if not np.isfinite(out[r, k]):
                return OVERFLOW
    return OK


@njit(inline="always", **JIT)
def world_motion(mi, mc, dv, dm, i, k, out):
    """out = Ad_{T_i} S_i[:, k]: column k of joint i's motion subspace in the world frame. A
    principal axis s e_u is s times a column of R_i: (s R e_u, p x s R e_u) for a revolute
    joint, (0, s R e_u) for a prismatic one."""
    u = unit_row_at(mi[i, K], mc, i) if mi[i, NV] == 1 else -1
    if u < 0:
        se3_Ad(dv[i, OR:OR + 9], dv[i, OP:OP + 3], dm[i, MS, :, k], out)
        return
    s = dm[i, MS, u, 0]
    c = u % 3
    x0, x1, x2 = s * dv[i, OR + c], s * dv[i, OR + 3 + c], s * dv[i, OR + 6 + c]
    if u < 3:
        p0, p1, p2 = dv[i, OP], dv[i, OP + 1], dv[i, OP + 2]
        out[0], out[1], out[2] = x0, x1, x2
        out[3], out[4], out[5] = p1 * x2 - p2 * x1, p2 * x0 - p0 * x2, p0 * x1 - p1 * x0
    else:
        out[0] = out[1] = out[2] = 0.0
        out[3], out[4], out[5] = x0, x1, x2


@njit(**JIT)
def com_jacobian(mi, mc, mI, dv, dm, q, zero_v, J, kin):
    """J (3 x nv): dc/dt = J v. Column of a joint's world motion (w, v):
    (m_sub v + w x h_sub) / m, with m_sub and h_sub = m_sub c_sub its subtree's mass and first
    moment (dv[i, TMP:TMP + 4] here; row 0 sums the whole tree)."""
    st = poses(mi, mc, dv, dm, q, zero_v, kin)
    if st != OK:
        return st
    nj = mi.shape[0] - 1
    for r in range(4):
        dv[0, TMP + r] = 0.0
    for i in range(1, nj + 1):
        m = mI[i, 5, 5]
        x0, x1, x2 = _rotate(dv, i, mI[i, 2, 4], mI[i, 0, 5], mI[i, 1, 3])
        dv[i, TMP] = m
        dv[i, TMP + 1] = m * dv[i, OP] + x0
        dv[i, TMP + 2] = m * dv[i, OP + 1] + x1
        dv[i, TMP + 3] = m * dv[i, OP + 2] + x2
    for i in range(nj, 0, -1):
        p = mi[i, P]
        for r in range(4):
            dv[p, TMP + r] += dv[i, TMP + r]
    mass = dv[0, TMP]
    if not mass > 0.0:
        return SINGULAR
    n = J.shape[1]
    for r in range(3):
        for k in range(n):
            J[r, k] = 0.0
    Sw = dv[0, TMP2:TMP2 + 6]
    s = 1.0 / mass
    for i in range(1, nj + 1):
        vi = mi[i, VI]
        ms, g0, g1, g2 = dv[i, TMP], dv[i, TMP + 1], dv[i, TMP + 2], dv[i, TMP + 3]
        for k in range(mi[i, NV]):
            world_motion(mi, mc, dv, dm, i, k, Sw)
            J[0, vi + k] += s * (ms * Sw[3] + Sw[1] * g2 - Sw[2] * g1)
            J[1, vi + k] += s * (ms * Sw[4] + Sw[2] * g0 - Sw[0] * g2)
            J[2, vi + k] += s * (ms * Sw[5] + Sw[0] * g1 - Sw[1] * g0)
    for r in range(3):
        for k in range(n):
            if not np.isfinite(J[r, k]):
                return OVERFLOW
    return OK


@njit(**JIT)
def centroidal_momentum(mi, mc, mI, dv, dm, q, v, h, perm, kin):
    """h_G = (angular momentum about the COM, linear momentum) in world axes, written to
    h[perm[r]]: each body's momentum I_i V_i in its frame (n = I_o w + h x v, f = m v + w x h),
    carried to the world origin, summed, then moved to the COM: n_G = n_O - c x f."""
    st = poses(mi, mc, dv, dm, q, v, kin)
    if st != OK:
        return st
    body_motion(mi, mc, dv, dm, v, v, False)
    nj = mi.shape[0] - 1
    mass = c0 = c1 = c2 = 0.0
    n0 = n1 = n2 = f0 = f1 = f2 = 0.0
    for i in range(1, nj + 1):
        I = mI[i]
        m = I[5, 5]
        h0, h1, h2 = I[2, 4], I[0, 5], I[1, 3]
        w0, w1, w2, u0, u1, u2 = (dv[i, V], dv[i, V + 1], dv[i, V + 2], dv[i, V + 3],
                                  dv[i, V + 4], dv[i, V + 5])
        x0, x1, x2 = _rotate(dv, i, h0, h1, h2)
        p0, p1, p2 = dv[i, OP], dv[i, OP + 1], dv[i, OP + 2]
        mass += m
        c0 += m * p0 + x0
        c1 += m * p1 + x1
        c2 += m * p2 + x2
        g0, g1, g2 = _rotate(dv, i, m * u0 + w1 * h2 - w2 * h1, m * u1 + w2 * h0 - w0 * h2,
                             m * u2 + w0 * h1 - w1 * h0)
        k0, k1, k2 = _rotate(
            dv, i,
            I[0, 0] * w0 + I[0, 1] * w1 + I[0, 2] * w2 + h1 * u2 - h2 * u1,
            I[1, 0] * w0 + I[1, 1] * w1 + I[1, 2] * w2 + h2 * u0 - h0 * u2,
            I[2, 0] * w0 + I[2, 1] * w1 + I[2, 2] * w2 + h0 * u1 - h1 * u0)
        f0 += g0
        f1 += g1
        f2 += g2
        n0 += k0 + p1 * g2 - p2 * g1
        n1 += k1 + p2 * g0 - p0 * g2
        n2 += k2 + p0 * g1 - p1 * g0
    if not mass > 0.0:
        return SINGULAR
    c0, c1, c2 = c0 / mass, c1 / mass, c2 / mass
    out = (n0 - c1 * f2 + c2 * f1, n1 - c2 * f0 + c0 * f2, n2 - c0 * f1 + c1 * f0, f0, f1, f2)
    for r in range(6):
        h[perm[r]] = out[r]
        if not np.isfinite(out[r]):
            return OVERFLOW
    return OK


@njit(inline="always", **JIT)
def world_inertia(dv, mI, i, W):
    """W (compact, see the module docstring) = body i's inertia about the world origin: the
    parallel-axis form of Ad_{T^-1}^T I Ad_{T^-1}, h' = R h + m p,
    I_O = R I_o R^T - [Rh][p] - [p][Rh] - m [p]^2 (Kim eq. 21)."""
    I = mI[i]
    m = I[5, 5]
    r0, r1, r2 = _rotate(dv, i, I[2, 4], I[0, 5], I[1, 3])
    p0, p1, p2 = dv[i, OP], dv[i, OP + 1], dv[i, OP + 2]
    rp = r0 * p0 + r1 * p1 + r2 * p2
    pp = p0 * p0 + p1 * p1 + p2 * p2
    for a in range(3):
        t0 = dv[i, OR + 3 * a] * I[0, 0] + dv[i, OR + 3 * a + 1] * I[1, 0] \
            + dv[i, OR + 3 * a + 2] * I[2, 0]
        t1 = dv[i, OR + 3 * a] * I[0, 1] + dv[i, OR + 3 * a + 1] * I[1, 1] \
            + dv[i, OR + 3 * a + 2] * I[2, 1]
        t2 = dv[i, OR + 3 * a] * I[0, 2] + dv[i, OR + 3 * a + 1] * I[1, 2] \
            + dv[i, OR + 3 * a + 2] * I[2, 2]
        ra = r0 if a == 0 else (r1 if a == 1 else r2)
        pa = p0 if a == 0 else (p1 if a == 1 else p2)
        for b in range(a, 3):
            rb = r0 if b == 0 else (r1 if b == 1 else r2)
            pb = p0 if b == 0 else (p1 if b == 1 else p2)
            x = (t0 * dv[i, OR + 3 * b] + t1 * dv[i, OR + 3 * b + 1] + t2 * dv[i, OR + 3 * b + 2]
                 - pb * ra - rb * pa - m * pa * pb)
            if a == b:
                x += 2.0 * rp + m * pp
            W[a, b] = x
            W[b, a] = x
    W[3, 0], W[3, 1], W[3, 2], W[3, 3] = r0 + m * p0, r1 + m * p1, r2 + m * p2, m


@njit(inline="always", **JIT)
def _inertia_rate(W, Vw, dW):
    """dW = d/dt of the world inertia W of a body moving with world twist Vw = (w, v):
    -(ad_V^T W + W ad_V) (Kim eq. 27) in compact form, h' = w x h + m v and
    I_O' = [w] I_O - I_O [w] - [h][v] - [v][h]."""
    w0, w1, w2, v0, v1, v2 = Vw[0], Vw[1], Vw[2], Vw[3], Vw[4], Vw[5]
    h0, h1, h2, m = W[3, 0], W[3, 1], W[3, 2], W[3, 3]
    hv = h0 * v0 + h1 * v1 + h2 * v2
    for a in range(3):                     # ([w] I_O)[a, b]
        wa0 = 0.0 if a == 0 else (w2 if a == 1 else -w1)
        wa1 = -w2 if a == 0 else (0.0 if a == 1 else w0)
        wa2 = w1 if a == 0 else (-w0 if a == 1 else 0.0)
        for b in range(3):
            dW[a, b] = wa0 * W[0, b] + wa1 * W[1, b] + wa2 * W[2, b]
    for a in range(3):                     # M + M^T - (v h^T + h v^T) + 2 (h.v) 1
        va = v0 if a == 0 else (v1 if a == 1 else v2)
        ha = h0 if a == 0 else (h1 if a == 1 else h2)
        for b in range(a, 3):
            vb = v0 if b == 0 else (v1 if b == 1 else v2)
            hb = h0 if b == 0 else (h1 if b == 1 else h2)
            x = dW[a, b] + dW[b, a] - va * hb - ha * vb
            if a == b:
                x += 2.0 * hv
            dW[a, b] = x
            dW[b, a] = x
    dW[3, 0] = w1 * h2 - w2 * h1 + m * v0
    dW[3, 1] = w2 * h0 - w0 * h2 + m * v1
    dW[3, 2] = w0 * h1 - w1 * h0 + m * v2
    dW[3, 3] = 0.0


@njit(inline="always", **JIT)
def _add_inertia(src, dst):
    for a in range(4):
        for b in range(3):
            dst[a, b] += src[a, b]
    dst[3, 3] += src[3, 3]


@njit(inline="always", **JIT)
def _apply(W, w0, w1, w2, v0, v1, v2):
    """(n, f) = W (w, v) for a compact inertia W: n = I_O w + h x v, f = m v + w x h."""
    h0, h1, h2, m = W[3, 0], W[3, 1], W[3, 2], W[3, 3]
    return (W[0, 0] * w0 + W[0, 1] * w1 + W[0, 2] * w2 + h1 * v2 - h2 * v1,
            W[1, 0] * w0 + W[1, 1] * w1 + W[1, 2] * w2 + h2 * v0 - h0 * v2,
            W[2, 0] * w0 + W[2, 1] * w1 + W[2, 2] * w2 + h0 * v1 - h1 * v0,
            m * v0 + w1 * h2 - w2 * h1, m * v1 + w2 * h0 - w0 * h2, m * v2 + w0 * h1 - w1 * h0)


@njit(**JIT)
def centroidal_map(mi, mc, mI, dv, dm, q, v, out, perm, with_dot, kin):
    """A_G (6 x nv) into ``out``, or with ``with_dot`` its time derivative dA_G/dt along v, rows
    through ``perm``: h_G = A_G v.

    Column of DOF k of joint i: Ic_i S_i (world composite inertia times world motion), moved
    from the world origin to the COM (n_G = n_O - c x f). Its rate: dIc S + Ic dS, with
    dI = -(ad_V^T I + I ad_V) per body (V its world twist) and dS = ad_{V_i} S + Ad_T Sdot_i;
    moving the moment point to the moving COM adds -dc/dt x f."""
    st = poses(mi, mc, dv, dm, q, v, kin)
    if st != OK:
        return st
    nj = mi.shape[0] - 1
    for r in range(6):
        dv[0, TMP + r] = 0.0                    # the universe's world twist
    for a in range(4):
        for b in range(4):
            dm[0, MIH, a, b] = 0.0
            dm[0, MPI, a, b] = 0.0
    for i in range(1, nj + 1):
        Sw = dm[i, MU]
        nv = mi[i, NV]
        col = dv[i, TMP2:TMP2 + 6]
        for k in range(nv):
            world_motion(mi, mc, dv, dm, i, k, col)
            for r in range(6):
                Sw[r, k] = col[r]
        world_inertia(dv, mI, i, dm[i, MIH])
        if with_dot:                            # world twist V_i = V_p + S_i^w qd_i
            vi, p = mi[i, VI], mi[i, P]
            for r in range(6):
                acc = dv[p, TMP + r]
                for k in range(nv):
                    acc += Sw[r, k] * v[vi + k]
                dv[i, TMP + r] = acc
            _inertia_rate(dm[i, MIH], dv[i, TMP:TMP + 6], dm[i, MPI])
    for i in range(nj, 0, -1):
        p = mi[i, P]
        _add_inertia(dm[i, MIH], dm[p, MIH])
        if with_dot:
            _add_inertia(dm[i, MPI], dm[p, MPI])
    mass = dm[0, MIH, 3, 3]
    if not mass > 0.0:
        return SINGULAR
    c0, c1, c2 = dm[0, MIH, 3, 0] / mass, dm[0, MIH, 3, 1] / mass, dm[0, MIH, 3, 2] / mass
    # dc/dt = (total dh) / m: the total linear momentum over the mass
    d0, d1, d2 = dm[0, MPI, 3, 0] / mass, dm[0, MPI, 3, 1] / mass, dm[0, MPI, 3, 2] / mass
    n = out.shape[1]
    for r in range(6):
        for k in range(n):
            out[r, k] = 0.0
    r0, r1, r2, r3, r4, r5 = perm[0], perm[1], perm[2], perm[3], perm[4], perm[5]
    dS = dv[0, TMP2:TMP2 + 6]
    for i in range(1, nj + 1):
        vi, nv = mi[i, VI], mi[i, NV]
        Ic, Sw = dm[i, MIH], dm[i, MU]
        for k in range(nv):
            j = vi + k
            w0, w1, w2, u0, u1, u2 = Sw[0, k], Sw[1, k], Sw[2, k], Sw[3, k], Sw[4, k], Sw[5, k]
            n0, n1, n2, f0, f1, f2 = _apply(Ic, w0, w1, w2, u0, u1, u2)
            if not with_dot:
                out[r0, j] += n0 - c1 * f2 + c2 * f1
                out[r1, j] += n1 - c2 * f0 + c0 * f2
                out[r2, j] += n2 - c0 * f1 + c1 * f0
                out[r3, j] += f0
                out[r4, j] += f1
                out[r5, j] += f2
                continue
            for r in range(6):
                dS[r] = 0.0
            if mi[i, NV] > 1 or unit_row_at(mi[i, K], mc, i) < 0:
                se3_Ad(dv[i, OR:OR + 9], dv[i, OP:OP + 3], dm[i, MSD, :, k], dS)
            se3_ad_add(dv[i, TMP:TMP + 6], Sw[:, k], dS, 1.0)
            a0, a1, a2, a3, a4, a5 = _apply(Ic, dS[0], dS[1], dS[2], dS[3], dS[4], dS[5])
            dI = dm[i, MPI]
            e0, e1, e2 = dI[3, 0], dI[3, 1], dI[3, 2]
            g0 = a0 + dI[0, 0] * w0 + dI[0, 1] * w1 + dI[0, 2] * w2 + e1 * u2 - e2 * u1
            g1 = a1 + dI[1, 0] * w0 + dI[1, 1] * w1 + dI[1, 2] * w2 + e2 * u0 - e0 * u2
            g2 = a2 + dI[2, 0] * w0 + dI[2, 1] * w1 + dI[2, 2] * w2 + e0 * u1 - e1 * u0
            b0 = a3 + w1 * e2 - w2 * e1
            b1 = a4 + w2 * e0 - w0 * e2
            b2 = a5 + w0 * e1 - w1 * e0
            out[r0, j] += g0 - c1 * b2 + c2 * b1 - d1 * f2 + d2 * f1
            out[r1, j] += g1 - c2 * b0 + c0 * b2 - d2 * f0 + d0 * f2
            out[r2, j] += g2 - c0 * b1 + c1 * b0 - d0 * f1 + d1 * f0
            out[r3, j] += b0
            out[r4, j] += b1
            out[r5, j] += b2
    for r in range(6):
        for k in range(n):
            if not np.isfinite(out[r, k]):
                return OVERFLOW
    return OK
