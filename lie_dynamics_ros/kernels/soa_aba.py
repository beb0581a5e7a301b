"""Batched forward dynamics laid out as a structure of arrays: the articulated-body algorithm
(Featherstone 1983; Kim 2012, Table 3) on a block of ``kernels.soa.B`` states at once, every
temporary an array whose last index is the state.

Same models, plan (``topo``, ``geo``) and turned frames as the SoA RNEA of ``kernels/soa.py``
(joint axis z, S_i a unit column: e_2 for a revolute joint, e_5 for a prismatic one, in the
angular-first order), whose block loader, joint angles and motion transform it reuses. The
math is the per-state ``kernels/dynamics.aba``'s: armature added to D_i, gravity as the base
acceleration (0, -g), no external wrench.

- pass 1, root to leaves: V_i, eta_i = ad(V_i) S_i qd_i, B^_i = -ad*_{V_i} I_i V_i;
- pass 2, leaves to root, I^_i = I_i + the children's terms: U_i = I^_i S_i,
  D_i = S_i^T U_i + armature, u_i = tau_i - S_i^T B^_i,
  beta_i = B^_i + I^_i eta_i + U_i (u_i - U_i^T eta_i) / D_i, Pi_i = I^_i - U_i U_i^T / D_i;
  the parent gets I^_p += Ad_{T^-1}^T Pi_i Ad_{T^-1} and B^_p += Ad*_{T^-1} beta_i;
- pass 3, root to leaves: A'_i = Ad_{T^-1} A_p + eta_i, qdd_i = (u_i - U_i^T A'_i) / D_i,
  A_i = A'_i + S_i qdd_i (u_i and this order of pass 3 as in Featherstone 2008, §7.3).

A free root body (S a permutation, V_p = 0, so eta = 0) passes nothing on in pass 2; in
pass 3, Kim's qdd = D^-1 (u - U^T A') with S D^-1 S^T = I^^-1 gives A = I^^-1 (S tau - B^)
(Featherstone 2008, ch. 9, the floating base's a_0 = -I_0^A^-1 p_0^A), solved per lane by an
LDL^T factorization of the SPD 6x6; qdd = S^T (A - A').

The congruence of pass 2 uses T_{p,i} = X Tj(q) composed per state (R = R0 Rz(q), or
p = p0 + q R0 e_z), then the block form of Ad_{T^-1}^T Pi Ad_{T^-1} with Pi = [[A, B], [B^T, C]]:
rotate each block by R, then C'' = C', B'' = B' + [p] C', A'' = A' + [p] B'^T - B'' [p].

Compiled with ``fastmath={'contract'}`` only (FMA contraction, as ``kernels/soa.py`` states):
no other IEEE relaxation, so NaN and Inf reach qdd, and a D_i <= 1e-300 gives 1/D_i = NaN, so
that the row's status says 1 and the caller reruns that row through the single-state path,
which names the joint. The cache key covers the kernel files imported (kernels/jit.py), so edits of soa.py recompile
this file.
"""
import numpy as np

from .jit import njit
from . import soa as KS
from .soa import (B, TP, TK, TQ, TV, GR, GP, GI, GC, GM, GA, GX, REVOLUTE, FREE, WC, WS, WQ,
                  WD, _joint_angles, _load_block, _inverse_transform, _stack_array, free_lanes,
                  rigid_bias)

# work rows of the scratch W[(nb + 1), NW, B]; rows WC..WD (cos, sin, q, qd) as in soa.py
WB = 0          # B^ (bias wrench, children added in pass 2) (6)
WE = 6          # eta (6)
WA = 12         # twist V in pass 1, then acceleration A in pass 3 (6)
WTAU = KS.WDD   # tau (soa's loader puts its third input there)
WQDD = KS.WT    # qdd
WI = 24         # articulated inertia: A (xx yy zz xy xz yz), B (row-major), C (as A) (21)
WU = 45         # U = I^ S (6)
WDI = 51        # 1 / D
WUF = 52        # u = tau - S^T B^
NW = 53
# a free root row uses rows WC..WC+5 for tau, then qdd (v's order), WU..WU+2 for the gravity
# acceleration in its frame (``soa.free_lanes``); it has no U, D or u
WFT = WC
WFG = WU

_JIT = dict(cache=True, nogil=True, fastmath={"contract"}, error_model="numpy")

_stack35 = _stack_array(35)
_stack18 = _stack_array(18)
_stack7 = _stack_array(7)
_stack20 = _stack_array(20)
_stack12 = _stack_array(12)


@njit(inline="always", **_JIT)
def rot_sym(r00, r01, r02, r10, r11, r12, r20, r21, r22, sxx, syy, szz, sxy, sxz, syz):
    """R S R^T of a symmetric S, as (xx, yy, zz, xy, xz, yz)."""
    t00 = r00 * sxx + r01 * sxy + r02 * sxz
    t01 = r00 * sxy + r01 * syy + r02 * syz
    t02 = r00 * sxz + r01 * syz + r02 * szz
    t10 = r10 * sxx + r11 * sxy + r12 * sxz
    t11 = r10 * sxy + r11 * syy + r12 * syz
    t12 = r10 * sxz + r11 * syz + r12 * szz
    t20 = r20 * sxx + r21 * sxy + r22 * sxz
    t21 = r20 * sxy + r21 * syy + r22 * syz
    t22 = r20 * sxz + r21 * syz + r22 * szz
    return (t00 * r00 + t01 * r01 + t02 * r02, t10 * r10 + t11 * r11 + t12 * r12,
            t20 * r20 + t21 * r21 + t22 * r22, t00 * r10 + t01 * r11 + t02 * r12,
            t00 * r20 + t01 * r21 + t02 * r22, t10 * r20 + t11 * r21 + t12 * r22)


@njit(inline="always", **_JIT)
def _rot_gen(r00, r01, r02, r10, r11, r12, r20, r21, r22,
             b00, b01, b02, b10, b11, b12, b20, b21, b22):
    """R M R^T of a general 3x3 M, row-major."""
    t00 = r00 * b00 + r01 * b10 + r02 * b20
    t01 = r00 * b01 + r01 * b11 + r02 * b21
    t02 = r00 * b02 + r01 * b12 + r02 * b22
    t10 = r10 * b00 + r11 * b10 + r12 * b20
    t11 = r10 * b01 + r11 * b11 + r12 * b21
    t12 = r10 * b02 + r11 * b12 + r12 * b22
    t20 = r20 * b00 + r21 * b10 + r22 * b20
    t21 = r20 * b01 + r21 * b11 + r22 * b21
    t22 = r20 * b02 + r21 * b12 + r22 * b22
    return (t00 * r00 + t01 * r01 + t02 * r02, t00 * r10 + t01 * r11 + t02 * r12,
            t00 * r20 + t01 * r21 + t02 * r22, t10 * r00 + t11 * r01 + t12 * r02,
            t10 * r10 + t11 * r11 + t12 * r12, t10 * r20 + t11 * r21 + t12 * r22,
            t20 * r00 + t21 * r01 + t22 * r02, t20 * r10 + t21 * r11 + t22 * r12,
            t20 * r20 + t21 * r21 + t22 * r22)


@njit(inline="always", **_JIT)
def joint_frame(W, i, b, r00, r01, r10, r11, r20, r21, r02, r12, r22, px, py, pz, rev):
    """T_{p,i} = (R0, p0) Tj(q) of state b as one (R, p): columns 0 and 1 of R (column 2 is
    R0's) and p; R = R0 Rz(q) for a revolute joint, p = p0 + q R0 e_z for a prismatic one."""
    if rev:
        c, s = W[i, WC, b], W[i, WS, b]
        return (c * r00 + s * r01, c * r01 - s * r00, c * r10 + s * r11, c * r11 - s * r10,
                c * r20 + s * r21, c * r21 - s * r20, px, py, pz)
    d = W[i, WQ, b]
    return r00, r01, r10, r11, r20, r21, px + d * r02, py + d * r12, pz + d * r22


@njit(inline="always", **_JIT)
def force_to_parent(r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz,
                    n0, n1, n2, f0, f1, f2):
    """Ad*_{T^-1} (n, f) = (R n + p x R f, R f) for T = (R, p)."""
    h0 = r00 * f0 + r01 * f1 + r02 * f2
    h1 = r10 * f0 + r11 * f1 + r12 * f2
    h2 = r20 * f0 + r21 * f1 + r22 * f2
    return (r00 * n0 + r01 * n1 + r02 * n2 + (py * h2 - pz * h1),
            r10 * n0 + r11 * n1 + r12 * n2 + (pz * h0 - px * h2),
            r20 * n0 + r21 * n1 + r22 * n2 + (px * h1 - py * h0), h0, h1, h2)


@njit(inline="always", **_JIT)
def inertia_to_parent(R, t, I):
    """Ad_{T^-1}^T [[A, B], [B^T, C]] Ad_{T^-1} for T = (R, t), R row-major (9), I the 21
    numbers of the WI rows (tuples: a call takes at most 30 arguments before Python packs
    them, which numba cannot inline): rotate each block by R, then C'' = C',
    B'' = B' + [t] C', A'' = A' + [t] B'^T - B'' [t]."""
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = R
    tx, ty, tz = t
    (axx, ayy, azz, axy, axz, ayz, b00, b01, b02, b10, b11, b12, b20, b21, b22,
     cxx, cyy, czz, cxy, cxz, cyz) = I
    axx, ayy, azz, axy, axz, ayz = rot_sym(r00, r01, r02, r10, r11, r12, r20, r21, r22,
                                            axx, ayy, azz, axy, axz, ayz)
    cxx, cyy, czz, cxy, cxz, cyz = rot_sym(r00, r01, r02, r10, r11, r12, r20, r21, r22,
                                            cxx, cyy, czz, cxy, cxz, cyz)
    b00, b01, b02, b10, b11, b12, b20, b21, b22 = _rot_gen(
        r00, r01, r02, r10, r11, r12, r20, r21, r22,
        b00, b01, b02, b10, b11, b12, b20, b21, b22)
    # [p] B'^T (upper triangle), before B changes
    k00 = -tz * b01 + ty * b02
    k11 = tz * b10 - tx * b12
    k22 = -ty * b20 + tx * b21
    k01 = -tz * b11 + ty * b12
    k02 = -tz * b21 + ty * b22
    k12 = tz * b20 - tx * b22
    b00, b01, b02 = b00 - tz * cxy + ty * cxz, b01 - tz * cyy + ty * cyz, \
        b02 - tz * cyz + ty * czz
    b10, b11, b12 = b10 + tz * cxx - tx * cxz, b11 + tz * cxy - tx * cyz, \
        b12 + tz * cxz - tx * czz
    b20, b21, b22 = b20 - ty * cxx + tx * cxy, b21 - ty * cxy + tx * cyy, \
        b22 - ty * cxz + tx * cyz
    # B'' [p]: (i, 0) = B''_i1 pz - B''_i2 py, (i, 1) = B''_i2 px - B''_i0 pz,
    # (i, 2) = B''_i0 py - B''_i1 px
    return (axx + k00 - (b01 * tz - b02 * ty), ayy + k11 - (b12 * tx - b10 * tz),
            azz + k22 - (b20 * ty - b21 * tx), axy + k01 - (b02 * tx - b00 * tz),
            axz + k02 - (b00 * ty - b01 * tx), ayz + k12 - (b10 * ty - b11 * tx),
            b00, b01, b02, b10, b11, b12, b20, b21, b22, cxx, cyy, czz, cxy, cxz, cyz)


@njit(**_JIT)
def _velocities(topo, geo, W):
    """Pass 1: V_i (rows WA), eta_i, B^_i = -ad*_V I V."""
    nb = topo.shape[0] - 1
    O = _stack18()
    for b in range(B):
        for k in range(6):
            W[0, WA + k, b] = 0.0
    for i in range(1, nb + 1):
        p = topo[i, TP]
        r00, r01, r02 = geo[i, GR], geo[i, GR + 1], geo[i, GR + 2]
        r10, r11, r12 = geo[i, GR + 3], geo[i, GR + 4], geo[i, GR + 5]
        r20, r21, r22 = geo[i, GR + 6], geo[i, GR + 7], geo[i, GR + 8]
        px, py, pz = geo[i, GP], geo[i, GP + 1], geo[i, GP + 2]
        ixx, iyy, izz = geo[i, GI], geo[i, GI + 1], geo[i, GI + 2]
        ixy, ixz, iyz = geo[i, GI + 3], geo[i, GI + 4], geo[i, GI + 5]
        cx, cy, cz, m = geo[i, GC], geo[i, GC + 1], geo[i, GC + 2], geo[i, GM]
        if topo[i, TK] == REVOLUTE:
            _velocity_lanes(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz,
                            ixx, iyy, izz, ixy, ixz, iyz, cx, cy, cz, m, True)
        elif topo[i, TK] == FREE:
            _free_velocity_lanes(W, O, i, ixx, iyy, izz, ixy, ixz, iyz, cx, cy, cz, m)
        else:
            _velocity_lanes(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz,
                            ixx, iyy, izz, ixy, ixz, iyz, cx, cy, cz, m, False)
        for k in range(6):
            for b in range(B):
                W[i, WA + k, b] = O[k, b]
        for k in range(12):     # eta, B^ (rows WE.., WB..)
            for b in range(B):
                W[i, WB + k, b] = O[6 + k, b]


@njit(inline="always", **_JIT)
def inertia_tuple(geo, i):
    """I_i = [[Ibar, m[c]], [m[c]^T, m 1]] as the 21 numbers of the WI rows (A, B, C blocks)."""
    cx, cy, cz, m = geo[i, GC], geo[i, GC + 1], geo[i, GC + 2], geo[i, GM]
    return (geo[i, GI], geo[i, GI + 1], geo[i, GI + 2], geo[i, GI + 3], geo[i, GI + 4],
            geo[i, GI + 5], 0.0, -cz, cy, cz, 0.0, -cx, -cy, cx, 0.0, m, m, m, 0.0, 0.0, 0.0)


@njit(inline="always", **_JIT)
def body_inertia(geo, i, W, I):
    """The WI rows of body i := I_i, every state; ``I`` is a scratch (21,). Only a leaf needs
    it: a parent's rows are first written as I_p + its first child's term (``first``
    passes), which saves broadcasting 21 rows per body."""
    t = inertia_tuple(geo, i)
    for k in range(21):
        I[k] = t[k]
    for k in range(21):
        x = I[k]
        for b in range(B):
            W[i, WI + k, b] = x


@njit(inline="always", **_JIT)
def _free_velocity_lanes(W, O, i, ixx, iyy, izz, ixy, ixz, iyz, cx, cy, cz, m):
    """Pass 1 on a free root body: V (already in rows WA, ``_load_free``), B^, eta = 0."""
    for b in range(B):
        w0, w1, w2 = W[i, WA, b], W[i, WA + 1, b], W[i, WA + 2, b]
        v0, v1, v2 = W[i, WA + 3, b], W[i, WA + 4, b], W[i, WA + 5, b]
        O[0, b], O[1, b], O[2, b], O[3, b], O[4, b], O[5, b] = w0, w1, w2, v0, v1, v2
        O[6, b], O[7, b], O[8, b], O[9, b], O[10, b], O[11, b] = rigid_bias(
            w0, w1, w2, v0, v1, v2, ixx, iyy, izz, ixy, ixz, iyz, cx, cy, cz, m)
        for k in range(12, 18):
            O[k, b] = 0.0


@njit(inline="always", **_JIT)
def _velocity_lanes(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz,
                    ixx, iyy, izz, ixy, ixz, iyz, cx, cy, cz, m, rev):
    """V_i into O rows 0..5, B^_i rows 6..11, eta_i rows 12..17 (``rev`` a constant at each
    call site, so that each joint kind compiles to its own loop)."""
    for b in range(B):
        qd = W[i, WD, b]
        w0, w1, w2, v0, v1, v2 = _inverse_transform(
            W, p, WA, b, r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz)
        if rev:     # Rz(q)^T, + e_z qd; eta = ad(V) S qd
            c, s = W[i, WC, b], W[i, WS, b]
            w0, w1 = c * w0 + s * w1, c * w1 - s * w0
            v0, v1 = c * v0 + s * v1, c * v1 - s * v0
            w2 += qd
            h0, h1, h3, h4 = qd * w1, -qd * w0, qd * v1, -qd * v0
        else:       # v + w x (q e_z), + e_z qd
            d = W[i, WQ, b]
            v0, v1 = v0 + d * w1, v1 - d * w0
            v2 += qd
            h0, h1, h3, h4 = 0.0, 0.0, qd * w1, -qd * w0
        O[0, b], O[1, b], O[2, b], O[3, b], O[4, b], O[5, b] = w0, w1, w2, v0, v1, v2
        O[6, b], O[7, b], O[8, b], O[9, b], O[10, b], O[11, b] = rigid_bias(
            w0, w1, w2, v0, v1, v2, ixx, iyy, izz, ixy, ixz, iyz, cx, cy, cz, m)
        O[12, b], O[13, b], O[14, b] = h0, h1, 0.0
        O[15, b], O[16, b], O[17, b] = h3, h4, 0.0


@njit(inline="always", **_JIT)
def _articulate_lanes(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz,
                      arm, Ip, rev, up):
    """Pass 2 on body i, every state: U, 1/D, u into O rows 0..7; with ``up`` > 0, the
    parent's B^_p + Ad*_{T^-1} beta_i into rows 8..13 and I^_p + Ad_{T^-1}^T Pi_i Ad_{T^-1}
    into rows 14..34, I^_p read from W (``up`` 2) or, for the parent's first child, the
    parent's own inertia ``Ip`` (``up`` 1). ``rev`` and ``up`` are constants at each call
    site."""
    for b in range(B):
        axx, ayy, azz = W[i, WI, b], W[i, WI + 1, b], W[i, WI + 2, b]
        axy, axz, ayz = W[i, WI + 3, b], W[i, WI + 4, b], W[i, WI + 5, b]
        b00, b01, b02 = W[i, WI + 6, b], W[i, WI + 7, b], W[i, WI + 8, b]
        b10, b11, b12 = W[i, WI + 9, b], W[i, WI + 10, b], W[i, WI + 11, b]
        b20, b21, b22 = W[i, WI + 12, b], W[i, WI + 13, b], W[i, WI + 14, b]
        cxx, cyy, czz = W[i, WI + 15, b], W[i, WI + 16, b], W[i, WI + 17, b]
        cxy, cxz, cyz = W[i, WI + 18, b], W[i, WI + 19, b], W[i, WI + 20, b]
        n0, n1, n2 = W[i, WB, b], W[i, WB + 1, b], W[i, WB + 2, b]
        f0, f1, f2 = W[i, WB + 3, b], W[i, WB + 4, b], W[i, WB + 5, b]
        e0, e1, e2 = W[i, WE, b], W[i, WE + 1, b], W[i, WE + 2, b]
        e3, e4, e5 = W[i, WE + 3, b], W[i, WE + 4, b], W[i, WE + 5, b]
        tau = W[i, WTAU, b]
        if rev:     # U = column 2 of I^
            u0, u1, u2, u3, u4, u5 = axz, ayz, azz, b20, b21, b22
            d = azz + arm
            uf = tau - n2
        else:       # column 5
            u0, u1, u2, u3, u4, u5 = b02, b12, b22, cxz, cyz, czz
            d = czz + arm
            uf = tau - f2
        di = 1.0 / d if d > 1e-300 else np.nan
        O[0, b], O[1, b], O[2, b], O[3, b], O[4, b], O[5, b] = u0, u1, u2, u3, u4, u5
        O[6, b], O[7, b] = di, uf
        if up > 0:
            # beta = B^ + I^ eta + U x,  x = (u - U^T eta) / D
            x = (uf - (u0 * e0 + u1 * e1 + u2 * e2 + u3 * e3 + u4 * e4 + u5 * e5)) * di
            n0 += axx * e0 + axy * e1 + axz * e2 + b00 * e3 + b01 * e4 + b02 * e5 + u0 * x
            n1 += axy * e0 + ayy * e1 + ayz * e2 + b10 * e3 + b11 * e4 + b12 * e5 + u1 * x
            n2 += axz * e0 + ayz * e1 + azz * e2 + b20 * e3 + b21 * e4 + b22 * e5 + u2 * x
            f0 += b00 * e0 + b10 * e1 + b20 * e2 + cxx * e3 + cxy * e4 + cxz * e5 + u3 * x
            f1 += b01 * e0 + b11 * e1 + b21 * e2 + cxy * e3 + cyy * e4 + cyz * e5 + u4 * x
            f2 += b02 * e0 + b12 * e1 + b22 * e2 + cxz * e3 + cyz * e4 + czz * e5 + u5 * x
            # Pi = I^ - U U^T / D
            g0, g1, g2, g3, g4, g5 = u0 * di, u1 * di, u2 * di, u3 * di, u4 * di, u5 * di
            axx, ayy, azz = axx - g0 * u0, ayy - g1 * u1, azz - g2 * u2
            axy, axz, ayz = axy - g0 * u1, axz - g0 * u2, ayz - g1 * u2
            b00, b01, b02 = b00 - g0 * u3, b01 - g0 * u4, b02 - g0 * u5
            b10, b11, b12 = b10 - g1 * u3, b11 - g1 * u4, b12 - g1 * u5
            b20, b21, b22 = b20 - g2 * u3, b21 - g2 * u4, b22 - g2 * u5
            cxx, cyy, czz = cxx - g3 * u3, cyy - g4 * u4, czz - g5 * u5
            cxy, cxz, cyz = cxy - g3 * u4, cxz - g3 * u5, cyz - g4 * u5
            q00, q01, q10, q11, q20, q21, tx, ty, tz = joint_frame(
                W, i, b, r00, r01, r10, r11, r20, r21, r02, r12, r22, px, py, pz, rev)
            n0, n1, n2, h0, h1, h2 = force_to_parent(q00, q01, r02, q10, q11, r12, q20, q21,
                                                     r22, tx, ty, tz, n0, n1, n2, f0, f1, f2)
            O[8, b] = W[p, WB, b] + n0
            O[9, b] = W[p, WB + 1, b] + n1
            O[10, b] = W[p, WB + 2, b] + n2
            O[11, b] = W[p, WB + 3, b] + h0
            O[12, b] = W[p, WB + 4, b] + h1
            O[13, b] = W[p, WB + 5, b] + h2
            (axx, ayy, azz, axy, axz, ayz, b00, b01, b02, b10, b11, b12, b20, b21, b22,
             cxx, cyy, czz, cxy, cxz, cyz) = inertia_to_parent(
                (q00, q01, r02, q10, q11, r12, q20, q21, r22), (tx, ty, tz),
                (axx, ayy, azz, axy, axz, ayz, b00, b01, b02, b10, b11, b12, b20, b21, b22,
                 cxx, cyy, czz, cxy, cxz, cyz))
            P = Ip if up == 1 else (
                W[p, WI, b], W[p, WI + 1, b], W[p, WI + 2, b], W[p, WI + 3, b], W[p, WI + 4, b],
                W[p, WI + 5, b], W[p, WI + 6, b], W[p, WI + 7, b], W[p, WI + 8, b],
                W[p, WI + 9, b], W[p, WI + 10, b], W[p, WI + 11, b], W[p, WI + 12, b],
                W[p, WI + 13, b], W[p, WI + 14, b], W[p, WI + 15, b], W[p, WI + 16, b],
                W[p, WI + 17, b], W[p, WI + 18, b], W[p, WI + 19, b], W[p, WI + 20, b])
            O[14, b] = P[0] + axx
            O[15, b] = P[1] + ayy
            O[16, b] = P[2] + azz
            O[17, b] = P[3] + axy
            O[18, b] = P[4] + axz
            O[19, b] = P[5] + ayz
            O[20, b] = P[6] + b00
            O[21, b] = P[7] + b01
            O[22, b] = P[8] + b02
            O[23, b] = P[9] + b10
            O[24, b] = P[10] + b11
            O[25, b] = P[11] + b12
            O[26, b] = P[12] + b20
            O[27, b] = P[13] + b21
            O[28, b] = P[14] + b22
            O[29, b] = P[15] + cxx
            O[30, b] = P[16] + cyy
            O[31, b] = P[17] + czz
            O[32, b] = P[18] + cxy
            O[33, b] = P[19] + cxz
            O[34, b] = P[20] + cyz


@njit(**_JIT)
def _articulate(topo, geo, W):
    """Pass 2, children first (a root body has nothing to pass on). ``touched[i]``: a child
    of body i has written its I^ rows (else body i is a leaf, and they get I_i here)."""
    nb = topo.shape[0] - 1
    O = _stack35()
    I = np.empty(21)
    touched = np.zeros(nb + 1, dtype=np.bool_)
    for i in range(nb, 0, -1):
        p = topo[i, TP]
        r00, r01, r02 = geo[i, GR], geo[i, GR + 1], geo[i, GR + 2]
        r10, r11, r12 = geo[i, GR + 3], geo[i, GR + 4], geo[i, GR + 5]
        r20, r21, r22 = geo[i, GR + 6], geo[i, GR + 7], geo[i, GR + 8]
        px, py, pz = geo[i, GP], geo[i, GP + 1], geo[i, GP + 2]
        arm = geo[i, GA]
        rev = topo[i, TK] == REVOLUTE
        if not touched[i]:
            body_inertia(geo, i, W, I)
        if topo[i, TK] == FREE:     # solved in pass 3; the world takes nothing
            continue
        Ip = inertia_tuple(geo, p)      # row 0: unused numbers
        if p == 0:
            if rev:
                _articulate_lanes(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22,
                                  px, py, pz, arm, Ip, True, 0)
            else:
                _articulate_lanes(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22,
                                  px, py, pz, arm, Ip, False, 0)
        else:
            if touched[p]:
                if rev:
                    _articulate_lanes(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21,
                                      r22, px, py, pz, arm, Ip, True, 2)
                else:
                    _articulate_lanes(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21,
                                      r22, px, py, pz, arm, Ip, False, 2)
            elif rev:
                _articulate_lanes(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22,
                                  px, py, pz, arm, Ip, True, 1)
            else:
                _articulate_lanes(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22,
                                  px, py, pz, arm, Ip, False, 1)
            touched[p] = True
            for k in range(6):
                for b in range(B):
                    W[p, WB + k, b] = O[8 + k, b]
            for k in range(21):
                for b in range(B):
                    W[p, WI + k, b] = O[14 + k, b]
        for k in range(8):          # U, 1/D, u
            for b in range(B):
                W[i, WU + k, b] = O[k, b]


@njit(inline="always", **_JIT)
def _acceleration_lanes(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz,
                        rev):
    """Pass 3 on body i: A_i into O rows 0..5, qdd_i into row 6."""
    for b in range(B):
        e0, e1, e2, f0, f1, f2 = _inverse_transform(
            W, p, WA, b, r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz)
        if rev:
            c, s = W[i, WC, b], W[i, WS, b]
            e0, e1 = c * e0 + s * e1, c * e1 - s * e0
            f0, f1 = c * f0 + s * f1, c * f1 - s * f0
        else:
            d = W[i, WQ, b]
            f0, f1 = f0 + d * e1, f1 - d * e0
        e0 += W[i, WE, b]
        e1 += W[i, WE + 1, b]
        e2 += W[i, WE + 2, b]
        f0 += W[i, WE + 3, b]
        f1 += W[i, WE + 4, b]
        f2 += W[i, WE + 5, b]
        ua = (W[i, WU, b] * e0 + W[i, WU + 1, b] * e1 + W[i, WU + 2, b] * e2
              + W[i, WU + 3, b] * f0 + W[i, WU + 4, b] * f1 + W[i, WU + 5, b] * f2)
        qdd = (W[i, WUF, b] - ua) * W[i, WDI, b]
        if rev:
            e2 += qdd
        else:
            f2 += qdd
        O[0, b], O[1, b], O[2, b], O[3, b], O[4, b], O[5, b] = e0, e1, e2, f0, f1, f2
        O[6, b] = qdd


@njit(inline="always", **_JIT)
def ldl6(m00, m10, m11, m20, m21, m22, m30, m31, m32, m33, m40, m41, m42, m43, m44,
         m50, m51, m52, m53, m54, m55, x0, x1, x2, x3, x4, x5, s):
    """x := M^-1 x for the SPD 6x6 M (lower triangle by rows) by M = L D L^T (Crout, unrolled,
    so that a loop over states calling it vectorizes). A pivot d_j <= ``s`` gives NaN (the
    caller passes 1e-14 of M's largest diagonal entry: the per-state ``spatial.invert_spd``'s
    rule)."""
    d0 = m00
    i0 = 1.0 / d0 if d0 > s else np.nan
    l10 = m10 * i0
    l20 = m20 * i0
    l30 = m30 * i0
    l40 = m40 * i0
    l50 = m50 * i0
    t0 = l10 * d0
    d1 = m11 - l10 * t0
    i1 = 1.0 / d1 if d1 > s else np.nan
    l21 = (m21 - l20 * t0) * i1
    l31 = (m31 - l30 * t0) * i1
    l41 = (m41 - l40 * t0) * i1
    l51 = (m51 - l50 * t0) * i1
    t0 = l20 * d0
    t1 = l21 * d1
    d2 = m22 - l20 * t0 - l21 * t1
    i2 = 1.0 / d2 if d2 > s else np.nan
    l32 = (m32 - l30 * t0 - l31 * t1) * i2
    l42 = (m42 - l40 * t0 - l41 * t1) * i2
    l52 = (m52 - l50 * t0 - l51 * t1) * i2
    t0 = l30 * d0
    t1 = l31 * d1
    t2 = l32 * d2
    d3 = m33 - l30 * t0 - l31 * t1 - l32 * t2
    i3 = 1.0 / d3 if d3 > s else np.nan
    l43 = (m43 - l40 * t0 - l41 * t1 - l42 * t2) * i3
    l53 = (m53 - l50 * t0 - l51 * t1 - l52 * t2) * i3
    t0 = l40 * d0
    t1 = l41 * d1
    t2 = l42 * d2
    t3 = l43 * d3
    d4 = m44 - l40 * t0 - l41 * t1 - l42 * t2 - l43 * t3
    i4 = 1.0 / d4 if d4 > s else np.nan
    l54 = (m54 - l50 * t0 - l51 * t1 - l52 * t2 - l53 * t3) * i4
    t0 = l50 * d0
    t1 = l51 * d1
    t2 = l52 * d2
    t3 = l53 * d3
    t4 = l54 * d4
    d5 = m55 - l50 * t0 - l51 * t1 - l52 * t2 - l53 * t3 - l54 * t4
    i5 = 1.0 / d5 if d5 > s else np.nan
    x1 = x1 - l10 * x0
    x2 = x2 - l20 * x0 - l21 * x1
    x3 = x3 - l30 * x0 - l31 * x1 - l32 * x2
    x4 = x4 - l40 * x0 - l41 * x1 - l42 * x2 - l43 * x3
    x5 = x5 - l50 * x0 - l51 * x1 - l52 * x2 - l53 * x3 - l54 * x4
    x0 *= i0
    x1 *= i1
    x2 *= i2
    x3 *= i3
    x4 *= i4
    x5 *= i5
    x4 = x4 - l54 * x5
    x3 = x3 - l43 * x4 - l53 * x5
    x2 = x2 - l32 * x3 - l42 * x4 - l52 * x5
    x1 = x1 - l21 * x2 - l31 * x3 - l41 * x4 - l51 * x5
    x0 = x0 - l10 * x1 - l20 * x2 - l30 * x3 - l40 * x4 - l50 * x5
    return x0, x1, x2, x3, x4, x5


@njit(inline="always", **_JIT)
def _free_acceleration(W, O, i):
    """Pass 3 on a free root body, every state: A = I^^-1 (S tau - B^) (``ldl6``), then
    qdd = S^T (A - (0, g_b)) into rows WFT (through the stack array O, 12 rows: see
    ``soa._stack_array``). A singular I^ gives NaN, which the caller's status reports (the
    per-state rerun names the joint)."""
    for b in range(B):
        axx, ayy, azz = W[i, WI, b], W[i, WI + 1, b], W[i, WI + 2, b]
        axy, axz, ayz = W[i, WI + 3, b], W[i, WI + 4, b], W[i, WI + 5, b]
        b00, b01, b02 = W[i, WI + 6, b], W[i, WI + 7, b], W[i, WI + 8, b]
        b10, b11, b12 = W[i, WI + 9, b], W[i, WI + 10, b], W[i, WI + 11, b]
        b20, b21, b22 = W[i, WI + 12, b], W[i, WI + 13, b], W[i, WI + 14, b]
        cxx, cyy, czz = W[i, WI + 15, b], W[i, WI + 16, b], W[i, WI + 17, b]
        cxy, cxz, cyz = W[i, WI + 18, b], W[i, WI + 19, b], W[i, WI + 20, b]
        s = 1e-14 * max(axx, ayy, azz, cxx, cyy, czz)
        # S tau - B^ (tau in v's order: force, then moment)
        x0 = W[i, WFT + 3, b] - W[i, WB, b]
        x1 = W[i, WFT + 4, b] - W[i, WB + 1, b]
        x2 = W[i, WFT + 5, b] - W[i, WB + 2, b]
        x3 = W[i, WFT, b] - W[i, WB + 3, b]
        x4 = W[i, WFT + 1, b] - W[i, WB + 4, b]
        x5 = W[i, WFT + 2, b] - W[i, WB + 5, b]
        # I^ = [[A, B], [B^T, C]]: rows 3-5 of its lower triangle are B^T's rows, then C's
        x0, x1, x2, x3, x4, x5 = ldl6(
            axx, axy, ayy, axz, ayz, azz, b00, b10, b20, cxx, b01, b11, b21, cxy, cyy,
            b02, b12, b22, cxz, cyz, czz, x0, x1, x2, x3, x4, x5, s)
        O[0, b], O[1, b], O[2, b], O[3, b], O[4, b], O[5, b] = x0, x1, x2, x3, x4, x5
        O[6, b] = x3 - W[i, WFG, b]
        O[7, b] = x4 - W[i, WFG + 1, b]
        O[8, b] = x5 - W[i, WFG + 2, b]
        O[9, b], O[10, b], O[11, b] = x0, x1, x2
    for k in range(6):
        for b in range(B):
            W[i, WA + k, b] = O[k, b]
            W[i, WFT + k, b] = O[6 + k, b]


@njit(**_JIT)
def _load_free(Q, V, TAU, topo, geo, W, chk, b0, nl):
    """The free root rows' twist V = S v (rows WA), S tau (rows WFT, v's order kept) and
    gravity acceleration in the body frame (rows WFG), from ``soa.free_lanes``."""
    Z = _stack20()
    for i in range(1, topo.shape[0]):
        if topo[i, TK] != FREE:
            continue
        free_lanes(Q, V, TAU, geo, Z, i, topo[i, TQ], topo[i, TV], chk, b0, nl)
        for b in range(B):
            for k in range(6):
                W[i, WA + k, b] = Z[k, b]
            for k in range(3):      # back to v's order (force, moment) for the pass-3 reads
                W[i, WFT + k, b] = Z[9 + k, b]
                W[i, WFT + 3 + k, b] = Z[6 + k, b]
                W[i, WFG + k, b] = Z[12 + k, b]


@njit(**_JIT)
def _accelerations(topo, geo, W, ACC, chk, b0, nl):
    """Pass 3, root first from A_0 = (0, -g); qdd into ACC rows b0..b0+nl-1."""
    nb = topo.shape[0] - 1
    O = _stack7()
    F = _stack12()
    for b in range(B):
        for k in range(3):
            W[0, WA + k, b] = 0.0
            W[0, WA + 3 + k, b] = -geo[0, GX + k]
    for i in range(1, nb + 1):
        p = topo[i, TP]
        r00, r01, r02 = geo[i, GR], geo[i, GR + 1], geo[i, GR + 2]
        r10, r11, r12 = geo[i, GR + 3], geo[i, GR + 4], geo[i, GR + 5]
        r20, r21, r22 = geo[i, GR + 6], geo[i, GR + 7], geo[i, GR + 8]
        px, py, pz = geo[i, GP], geo[i, GP + 1], geo[i, GP + 2]
        if topo[i, TK] == FREE:
            _free_acceleration(W, F, i)
            continue
        if topo[i, TK] == REVOLUTE:
            _acceleration_lanes(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22,
                                px, py, pz, True)
        else:
            _acceleration_lanes(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22,
                                px, py, pz, False)
        for k in range(6):
            for b in range(B):
                W[i, WA + k, b] = O[k, b]
        for b in range(B):
            W[i, WQDD, b] = O[6, b]
    for i in range(1, nb + 1):
        jv = topo[i, TV]
        if topo[i, TK] == FREE:
            for b in range(nl):
                for k in range(6):
                    x = W[i, WFT + k, b]
                    ACC[b0 + b, jv + k] = x
                    chk[b] += x * 0.0
            continue
        for b in range(nl):
            x = W[i, WQDD, b]
            ACC[b0 + b, jv] = x
            chk[b] += x * 0.0


@njit(**_JIT)
def aba_soa(topo, geo, Q, V, TAU, ACC, status, blk_lo, blk_hi):
    """Forward dynamics of the states in blocks blk_lo..blk_hi-1 (rows b * B ...), each row's
    status 1 when an input or the result is not finite, or a D_i is not positive."""
    N = Q.shape[0]
    W = np.zeros((topo.shape[0], NW, B))
    chk = np.zeros(B)
    for blk in range(blk_lo, blk_hi):
        b0 = blk * B
        nl = min(B, N - b0)
        _load_block(Q, V, TAU, topo, W, chk, b0, nl)
        _load_free(Q, V, TAU, topo, geo, W, chk, b0, nl)
        _joint_angles(topo, W)
        _velocities(topo, geo, W)
        _articulate(topo, geo, W)
        _accelerations(topo, geo, W, ACC, chk, b0, nl)
        for b in range(nl):
            status[b0 + b] = 0 if chk[b] == 0.0 else 1
