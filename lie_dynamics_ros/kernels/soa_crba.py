"""Batched mass matrix laid out as a structure of arrays: the composite-rigid-body algorithm
(Walker & Orin 1982; Featherstone 2008, §6.2) on a block of ``kernels.soa.B`` states at once,
the state index innermost, for the models and plan of ``kernels/soa.py``.

- composite inertias, leaves to root: Ic_i = I_i, Ic_p += Ad_{T^-1}^T Ic_i Ad_{T^-1}, kept as
  the 10 numbers of a rigid body's inertia (a composite of rigid bodies is one): Ibar about
  the frame origin, h = m c, m. With T = (R, t), h_R = R h and g = h_R + m t / 2, the parent
  gets Ibar' = R Ibar R^T - (t g^T + g t^T) + 2 (t . g) 1, h' = h_R + m t, m' = m (the
  parallel-axis theorem: Ibar_o = Ibar_c - m [c][c]);
- columns: F = Ic_i S_i (column 2 or 5 of Ic_i in the turned frame), M_ii = S_i^T F +
  armature_i; then F is carried to each ancestor j's parent frame by Ad*_{T^-1}
  (``soa_aba.force_to_parent``) and M_ji = M_ij = S_j^T F.

A free root body (S a permutation, v = (v_lin, w) in its own frame) has its composite
inertia's 6x6 as its block of M, permuted: [[m 1, [h]^T], [h], Ibar]], and S^T F = (f, n) as
its six rows of each descendant's column; its q does not enter M (every body is in the root
frame), but a non-finite q or a quaternion off unit norm marks the row, as the per-state
path refuses it.

As the per-state ``kernels/dynamics.crba``: full and symmetric, the armature on the diagonal.
Compiled with ``fastmath={'contract'}`` only; a row's status is 1 when q or a diagonal entry is
not finite. The cache key covers the kernel files imported (kernels/jit.py), so edits of soa.py and
soa_aba.py recompile this file.
"""
import numpy as np

from .jit import njit
from .soa import (B, TP, TK, TQ, TV, GR, GP, GI, GC, GM, GA, REVOLUTE, FREE, WQ, _joint_angles,
                  _stack_array)
from .soa_aba import NW, WI, rot_sym, force_to_parent, joint_frame

_JIT = dict(cache=True, nogil=True, fastmath={"contract"}, error_model="numpy")

_stack10 = _stack_array(10)
_stack6 = _stack_array(6)

# composite inertia rows of W, from WI: Ibar (xx yy zz xy xz yz), h = m c (3), m
NC = 10


@njit(**_JIT)
def _load_q(Q, topo, W, chk, b0, nl):
    """This block's q into W (lanes past the batch get zeros); chk[b] = 0 or NaN."""
    nb = topo.shape[0] - 1
    for b in range(B):
        chk[b] = 0.0
    for i in range(1, nb + 1):
        jq = topo[i, TQ]
        if topo[i, TK] == FREE:     # only checked (``joint_kinematics.unit_quat``'s rule)
            for b in range(nl):
                r = b0 + b
                x, y, z, w = Q[r, jq + 3], Q[r, jq + 4], Q[r, jq + 5], Q[r, jq + 6]
                n = np.sqrt(x * x + y * y + z * z + w * w)
                c = Q[r, jq] * 0.0 + Q[r, jq + 1] * 0.0 + Q[r, jq + 2] * 0.0
                chk[b] += c if abs(n - 1.0) < 1e-6 else np.nan
            continue
        for b in range(nl):
            x = Q[b0 + b, jq]
            W[i, WQ, b] = x
            chk[b] += x * 0.0
        for b in range(nl, B):
            W[i, WQ, b] = 0.0


@njit(inline="always", **_JIT)
def _rigid_to_parent(r00, r01, r02, r10, r11, r12, r20, r21, r22, tx, ty, tz,
                     ixx, iyy, izz, ixy, ixz, iyz, hx, hy, hz, m):
    """The 10 numbers of Ad_{T^-1}^T I Ad_{T^-1} for a rigid body's (Ibar, h, m)."""
    jxx, jyy, jzz, jxy, jxz, jyz = rot_sym(r00, r01, r02, r10, r11, r12, r20, r21, r22,
                                            ixx, iyy, izz, ixy, ixz, iyz)
    ux = r00 * hx + r01 * hy + r02 * hz
    uy = r10 * hx + r11 * hy + r12 * hz
    uz = r20 * hx + r21 * hy + r22 * hz
    hm = 0.5 * m
    gx, gy, gz = ux + hm * tx, uy + hm * ty, uz + hm * tz
    d = 2.0 * (tx * gx + ty * gy + tz * gz)
    return (jxx - 2.0 * tx * gx + d, jyy - 2.0 * ty * gy + d, jzz - 2.0 * tz * gz + d,
            jxy - (tx * gy + gx * ty), jxz - (tx * gz + gx * tz), jyz - (ty * gz + gy * tz),
            ux + m * tx, uy + m * ty, uz + m * tz, m)


@njit(inline="always", **_JIT)
def _rigid_tuple(geo, i):
    """Body i's own (Ibar, h, m)."""
    return (geo[i, GI], geo[i, GI + 1], geo[i, GI + 2], geo[i, GI + 3], geo[i, GI + 4],
            geo[i, GI + 5], geo[i, GC], geo[i, GC + 1], geo[i, GC + 2], geo[i, GM])


@njit(inline="always", **_JIT)
def _composite_lanes(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz, Ip,
                     rev, first):
    """Ic_p + Ad_{T^-1}^T Ic_i Ad_{T^-1} into O rows 0..9, every state; Ic_p read from W, or
    for the parent's first child the parent's own inertia ``Ip`` (``rev`` and ``first``
    constants at each call site)."""
    for b in range(B):
        q00, q01, q10, q11, q20, q21, tx, ty, tz = joint_frame(
            W, i, b, r00, r01, r10, r11, r20, r21, r02, r12, r22, px, py, pz, rev)
        x0, x1, x2, x3, x4, x5, x6, x7, x8, x9 = _rigid_to_parent(
            q00, q01, r02, q10, q11, r12, q20, q21, r22, tx, ty, tz,
            W[i, WI, b], W[i, WI + 1, b], W[i, WI + 2, b], W[i, WI + 3, b], W[i, WI + 4, b],
            W[i, WI + 5, b], W[i, WI + 6, b], W[i, WI + 7, b], W[i, WI + 8, b],
            W[i, WI + 9, b])
        P = Ip if first else (
            W[p, WI, b], W[p, WI + 1, b], W[p, WI + 2, b], W[p, WI + 3, b], W[p, WI + 4, b],
            W[p, WI + 5, b], W[p, WI + 6, b], W[p, WI + 7, b], W[p, WI + 8, b],
            W[p, WI + 9, b])
        # one store per row: a loop over the tuple would index it at run time (not vectorized)
        O[0, b], O[1, b], O[2, b] = P[0] + x0, P[1] + x1, P[2] + x2
        O[3, b], O[4, b], O[5, b] = P[3] + x3, P[4] + x4, P[5] + x5
        O[6, b], O[7, b], O[8, b] = P[6] + x6, P[7] + x7, P[8] + x8
        O[9, b] = P[9] + x9


@njit(**_JIT)
def _composite(topo, geo, W):
    """Composite inertias Ic_i in the rows WI..WI+NC, children first. ``touched[i]``: a
    child of body i has written its rows (else body i is a leaf, and they get I_i here)."""
    nb = topo.shape[0] - 1
    O = _stack10()
    touched = np.zeros(nb + 1, dtype=np.bool_)
    for i in range(nb, 0, -1):
        if not touched[i]:
            for k in range(NC):
                x = geo[i, GI + k] if k < 9 else geo[i, GM]     # GC follows GI
                for b in range(B):
                    W[i, WI + k, b] = x
        p = topo[i, TP]
        if p == 0:
            continue
        r00, r01, r02 = geo[i, GR], geo[i, GR + 1], geo[i, GR + 2]
        r10, r11, r12 = geo[i, GR + 3], geo[i, GR + 4], geo[i, GR + 5]
        r20, r21, r22 = geo[i, GR + 6], geo[i, GR + 7], geo[i, GR + 8]
        px, py, pz = geo[i, GP], geo[i, GP + 1], geo[i, GP + 2]
        Ip = _rigid_tuple(geo, p)
        rev = topo[i, TK] == REVOLUTE
        if touched[p]:
            if rev:
                _composite_lanes(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22,
                                 px, py, pz, Ip, True, False)
            else:
                _composite_lanes(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22,
                                 px, py, pz, Ip, False, False)
        elif rev:
            _composite_lanes(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22,
                             px, py, pz, Ip, True, True)
        else:
            _composite_lanes(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22,
                             px, py, pz, Ip, False, True)
        touched[p] = True
        for k in range(NC):
            for b in range(B):
                W[p, WI + k, b] = O[k, b]


@njit(inline="always", **_JIT)
def _carry_lanes(W, F, G, j, r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz, rev):
    """G = Ad*_{T^-1} F from body j's frame to its parent's, every state."""
    for b in range(B):
        q00, q01, q10, q11, q20, q21, tx, ty, tz = joint_frame(
            W, j, b, r00, r01, r10, r11, r20, r21, r02, r12, r22, px, py, pz, rev)
        G[0, b], G[1, b], G[2, b], G[3, b], G[4, b], G[5, b] = force_to_parent(
            q00, q01, r02, q10, q11, r12, q20, q21, r22, tx, ty, tz,
            F[0, b], F[1, b], F[2, b], F[3, b], F[4, b], F[5, b])


@njit(inline="always", **_JIT)
def _free_block(W, MW, i, vi):
    """S^T Ic S of a free root body i, v = (v_lin, w): [[m 1, [h]^T], [[h], Ibar]]."""
    for b in range(B):
        ixx, iyy, izz = W[i, WI, b], W[i, WI + 1, b], W[i, WI + 2, b]
        ixy, ixz, iyz = W[i, WI + 3, b], W[i, WI + 4, b], W[i, WI + 5, b]
        hx, hy, hz, m = W[i, WI + 6, b], W[i, WI + 7, b], W[i, WI + 8, b], W[i, WI + 9, b]
        for r in range(3):
            for c in range(3):
                MW[vi + r, vi + c, b] = m if r == c else 0.0
        # [h] (angular rows, linear columns) and its transpose
        MW[vi + 3, vi, b] = MW[vi, vi + 3, b] = 0.0
        MW[vi + 4, vi + 1, b] = MW[vi + 1, vi + 4, b] = 0.0
        MW[vi + 5, vi + 2, b] = MW[vi + 2, vi + 5, b] = 0.0
        MW[vi + 3, vi + 1, b] = MW[vi + 1, vi + 3, b] = -hz
        MW[vi + 3, vi + 2, b] = MW[vi + 2, vi + 3, b] = hy
        MW[vi + 4, vi, b] = MW[vi, vi + 4, b] = hz
        MW[vi + 4, vi + 2, b] = MW[vi + 2, vi + 4, b] = -hx
        MW[vi + 5, vi, b] = MW[vi, vi + 5, b] = -hy
        MW[vi + 5, vi + 1, b] = MW[vi + 1, vi + 5, b] = hx
        MW[vi + 3, vi + 3, b], MW[vi + 4, vi + 4, b], MW[vi + 5, vi + 5, b] = ixx, iyy, izz
        MW[vi + 3, vi + 4, b] = MW[vi + 4, vi + 3, b] = ixy
        MW[vi + 3, vi + 5, b] = MW[vi + 5, vi + 3, b] = ixz
        MW[vi + 4, vi + 5, b] = MW[vi + 5, vi + 4, b] = iyz


@njit(**_JIT)
def _columns(topo, geo, W, MW):
    """MW[r, c, lane] = M_rc: column v_i and its mirror row for each body i."""
    nb = topo.shape[0] - 1
    F = _stack6()
    G = _stack6()
    for i in range(1, nb + 1):
        vi = topo[i, TV]
        if topo[i, TK] == FREE:     # its parent is the world: its block only
            _free_block(W, MW, i, vi)
            continue
        rev = topo[i, TK] == REVOLUTE
        # F = Ic S_i, a column of [[Ibar, [h]], [[h]^T, m 1]]: column 2 (revolute) is
        # (ixz, iyz, izz, -hy, hx, 0), column 5 (prismatic) (hy, -hx, 0, 0, 0, m)
        for b in range(B):
            if rev:
                F[0, b], F[1, b], F[2, b] = W[i, WI + 4, b], W[i, WI + 5, b], W[i, WI + 2, b]
                F[3, b], F[4, b], F[5, b] = -W[i, WI + 7, b], W[i, WI + 6, b], 0.0
            else:
                F[0, b], F[1, b], F[2, b] = W[i, WI + 7, b], -W[i, WI + 6, b], 0.0
                F[3, b], F[4, b], F[5, b] = 0.0, 0.0, W[i, WI + 9, b]
        u = 2 if rev else 5
        arm = geo[i, GA]
        for b in range(B):
            MW[vi, vi, b] = F[u, b] + arm
        j = i
        while topo[j, TP] > 0:
            r00, r01, r02 = geo[j, GR], geo[j, GR + 1], geo[j, GR + 2]
            r10, r11, r12 = geo[j, GR + 3], geo[j, GR + 4], geo[j, GR + 5]
            r20, r21, r22 = geo[j, GR + 6], geo[j, GR + 7], geo[j, GR + 8]
            px, py, pz = geo[j, GP], geo[j, GP + 1], geo[j, GP + 2]
            if topo[j, TK] == REVOLUTE:
                _carry_lanes(W, F, G, j, r00, r01, r02, r10, r11, r12, r20, r21, r22,
                             px, py, pz, True)
            else:
                _carry_lanes(W, F, G, j, r00, r01, r02, r10, r11, r12, r20, r21, r22,
                             px, py, pz, False)
            for k in range(6):
                for b in range(B):
                    F[k, b] = G[k, b]
            j = topo[j, TP]
            vj = topo[j, TV]
            if topo[j, TK] == FREE:     # S^T F = (f, n), the root's six rows
                for k in range(3):
                    for b in range(B):
                        x, y = F[3 + k, b], F[k, b]
                        MW[vj + k, vi, b] = MW[vi, vj + k, b] = x
                        MW[vj + 3 + k, vi, b] = MW[vi, vj + 3 + k, b] = y
                continue
            u = 2 if topo[j, TK] == REVOLUTE else 5
            for b in range(B):
                x = F[u, b]
                MW[vj, vi, b] = x
                MW[vi, vj, b] = x


@njit(**_JIT)
def crba_soa(topo, geo, Q, M, status, blk_lo, blk_hi):
    """M (N, nv, nv) of the states in blocks blk_lo..blk_hi-1, each row's status 1 when q or a
    diagonal entry of M is not finite."""
    N = Q.shape[0]
    nv = M.shape[1]
    W = np.zeros((topo.shape[0], NW, B))
    MW = np.zeros((nv, nv, B))
    chk = np.zeros(B)
    for blk in range(blk_lo, blk_hi):
        b0 = blk * B
        nl = min(B, N - b0)
        _load_q(Q, topo, W, chk, b0, nl)
        _joint_angles(topo, W)
        _composite(topo, geo, W)
        _columns(topo, geo, W, MW)
        for b in range(nl):
            r = b0 + b
            for k in range(nv):
                for c in range(nv):
                    M[r, k, c] = MW[k, c, b]
                chk[b] += MW[k, k, b] * 0.0
            status[r] = 0 if chk[b] == 0.0 else 1
