"""Compiled frame kinematics: one pass over the tree, then cheap reads of any frame.

The pass stores, per body row i, its world pose oT_i, its body twist V_i and acceleration Vd_i
(frame i, the base at rest, no gravity) and the world columns of its joint's motion subspace,
Ad_{oT_i} S_i, with their time derivatives Ad_{oT_i} (ad_{V_i} S_i + Sdot_i) (Murray, Li &
Sastry 1994, eq. 3.54, the spatial Jacobian; its rate as Pinocchio's
computeJointJacobiansTimeVariation, Carpentier et al. 2019). A frame's world Jacobian is the
sum of its ancestors' columns; the other references follow from the frame's pose.

Kernel order (angular, linear) inside; the reads write their rows through ``perm``, the
permutation that ``conventions.py`` defines.
"""
import numpy as np
from numba import njit

from .layout import P, VI, NV, WR, WP, SDV, OR, OP, MS, MSD, H_NQ, H_NV, H_NB, H_ZERO, OK, \
    NONFINITE, BAD_SIZE
from .jit import JIT
from .lie import se3_Ad, se3_Ad_inv, se3_ad_add
from .joint_kinematics import joint_kinematics
from .dynamics import world_poses
from .spatial import mat_vec
from .plan import unpack
from .views import bare, c_view

# columns of a pass's per-body array (nb, NK)
KR, KP, KV, KA, KS, KSD = 0, 9, 12, 18, 24, 60
NK = 96
# what a read returns
PLACEMENT, JACOBIAN, JACOBIAN_DOT, VELOCITY, ACCELERATION, CLASSICAL = range(6)
# references (Pinocchio's LOCAL, WORLD, LOCAL_WORLD_ALIGNED)
LOCAL, WORLD, LOCAL_WORLD_ALIGNED = range(3)


@njit(**JIT)
def _pass(mi, dv, dm, v, a, kin, order):
    """Fill ``kin`` from the joint transforms, S and Sdot in ``dv``/``dm``: poses and world
    columns always, twists and column rates with ``order`` >= 1, accelerations with 2."""
    world_poses(mi, dv)
    nj = mi.shape[0] - 1
    kin[0, :] = 0.0
    kin[0, KR] = kin[0, KR + 4] = kin[0, KR + 8] = 1.0
    Sq = np.empty(6)
    x = np.empty(6)
    for i in range(1, nj + 1):
        c, k = dv[i], kin[i]
        p = mi[i, P]
        vi, nv = mi[i, VI], mi[i, NV]
        for r in range(9):
            k[KR + r] = c[OR + r]
        for r in range(3):
            k[KP + r] = c[OP + r]
        R, o = c[OR:OR + 9], c[OP:OP + 3]
        S = dm[i, MS]
        for j in range(nv):
            se3_Ad(R, o, S[:, j], k[KS + 6 * j:KS + 6 * j + 6])
        if order >= 1:
            Vi = k[KV:KV + 6]
            se3_Ad_inv(c[WR:WR + 9], c[WP:WP + 3], kin[p, KV:KV + 6], Vi)
            mat_vec(S, v[vi:vi + nv], Sq, nv, False)
            for r in range(6):
                Vi[r] += Sq[r]
            for j in range(nv):
                for r in range(6):
                    x[r] = dm[i, MSD, r, j]
                se3_ad_add(Vi, S[:, j], x, 1.0)
                se3_Ad(R, o, x, k[KSD + 6 * j:KSD + 6 * j + 6])
            if order >= 2:
                Ai = k[KA:KA + 6]
                se3_Ad_inv(c[WR:WR + 9], c[WP:WP + 3], kin[p, KA:KA + 6], Ai)
                mat_vec(S, a[vi:vi + nv], Ai, nv, True)
                for r in range(6):
                    Ai[r] += c[SDV + r]
                se3_ad_add(Vi, Sq, Ai, 1.0)


@njit(**JIT)
def _finite(x):
    for k in range(x.shape[0]):
        if not np.isfinite(x[k]):
            return False
    return True


@njit(**JIT)
def kinematics(buf, q, v, a, kin, order, with_joints):
    """The pass on the Data buffer ``buf`` into ``kin`` (nb, NK); ``with_joints`` False when
    Python filled the joint rows (General joints). Returns a status code."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    nv = h[H_NV]
    if not ok or q.shape[0] != h[H_NQ] or v.shape[0] != nv or a.shape[0] != nv \
            or kin.shape[0] != h[H_NB] or kin.shape[1] != NK:
        return BAD_SIZE
    qb, vb, ab = bare(q), bare(v), bare(a)
    if with_joints:
        st = joint_kinematics(mi, mc, dv, dm, qb, vb)
        if st != OK:
            return st
    if order >= 2 and not _finite(ab):
        return NONFINITE
    _pass(mi, dv, dm, vb, ab, bare(kin), order)
    return OK


@njit(inline="always", **JIT)
def _frame_pose(kin, row, T, R, o):
    """World pose (R, o) of the frame at T (4x4) on body ``row``."""
    B = kin[row]
    for r in range(3):
        for c in range(3):
            R[3 * r + c] = B[KR + 3 * r] * T[0, c] + B[KR + 3 * r + 1] * T[1, c] \
                + B[KR + 3 * r + 2] * T[2, c]
        o[r] = B[KP + r] + B[KR + 3 * r] * T[0, 3] + B[KR + 3 * r + 1] * T[1, 3] \
            + B[KR + 3 * r + 2] * T[2, 3]


@njit(inline="always", **JIT)
def _to_reference(R, o, ref, x, out):
    """A world motion vector x (angular, linear at the world origin) in ``ref`` at the frame
    (R, o): LOCAL Ad_{oT_f^-1} x, WORLD x, LOCAL_WORLD_ALIGNED (w, v + w x o)."""
    if ref == LOCAL:
        se3_Ad_inv(R, o, x, out)
    else:
        for r in range(6):
            out[r] = x[r]
        if ref == LOCAL_WORLD_ALIGNED:
            out[3] += x[1] * o[2] - x[2] * o[1]
            out[4] += x[2] * o[0] - x[0] * o[2]
            out[5] += x[0] * o[1] - x[1] * o[0]


@njit(inline="always", **JIT)
def _rate_to_reference(R, o, ref, Vw, x, dx, out):
    """d/dt of x's ``ref`` form, given x, its rate dx (world) and the frame's world twist Vw:
    LOCAL Ad_{oT_f^-1} (dx - ad_Vw x); WORLD dx; LOCAL_WORLD_ALIGNED
    (dw, dv + dw x o + w x do/dt) with do/dt = v_w + w_w x o."""
    if ref == LOCAL:
        y = np.empty(6)
        for r in range(6):
            y[r] = dx[r]
        se3_ad_add(Vw, x, y, -1.0)
        se3_Ad_inv(R, o, y, out)
    else:
        _to_reference(R, o, ref, dx, out)
        if ref == LOCAL_WORLD_ALIGNED:
            d0 = Vw[3] + Vw[1] * o[2] - Vw[2] * o[1]
            d1 = Vw[4] + Vw[2] * o[0] - Vw[0] * o[2]
            d2 = Vw[5] + Vw[0] * o[1] - Vw[1] * o[0]
            out[3] += x[1] * d2 - x[2] * d1
            out[4] += x[2] * d0 - x[0] * d2
            out[5] += x[0] * d1 - x[1] * d0


@njit(**JIT)
def _read(kin, mi, row, T, what, ref, perm, res):
    """One quantity of the frame at T on body ``row`` into ``res``: (4, 4) for PLACEMENT,
    (6, nv) for the Jacobians, (6, 1) for a twist or an acceleration; rows through ``perm``."""
    R, o = np.empty(9), np.empty(3)
    _frame_pose(kin, row, T, R, o)
    if what == PLACEMENT:
        for r in range(3):
            for c in range(3):
                res[r, c] = R[3 * r + c]
            res[r, 3] = o[r]
            res[3, r] = 0.0
        res[3, 3] = 1.0
        return OK
    Vw, y = np.empty(6), np.empty(6)
    B = kin[row]
    Bw = B[KR:KR + 9]
    if what != JACOBIAN:
        se3_Ad(Bw, B[KP:KP + 3], B[KV:KV + 6], Vw)
    if what == JACOBIAN or what == JACOBIAN_DOT:
        res[:, :] = 0.0
        j = row
        while j > 0:
            Kj = kin[j]
            for k in range(mi[j, NV]):
                col = mi[j, VI] + k
                x = Kj[KS + 6 * k:KS + 6 * k + 6]
                if what == JACOBIAN:
                    _to_reference(R, o, ref, x, y)
                else:
                    _rate_to_reference(R, o, ref, Vw, x, Kj[KSD + 6 * k:KSD + 6 * k + 6], y)
                for r in range(6):
                    res[r, col] += y[perm[r]]
            j = mi[j, P]
        return OK
    x = np.empty(6)
    if what == VELOCITY:
        _to_reference(R, o, ref, Vw, y)
    else:
        se3_Ad(Bw, B[KP:KP + 3], B[KA:KA + 6], x)
        _to_reference(R, o, ref, x, y)
        if what == CLASSICAL:         # + w x v of the frame's twist in the same reference
            _to_reference(R, o, ref, Vw, x)
            y[3] += x[1] * x[5] - x[2] * x[4]
            y[4] += x[2] * x[3] - x[0] * x[5]
            y[5] += x[0] * x[4] - x[1] * x[3]
    for r in range(6):
        res[r, 0] = y[perm[r]]
    return OK


@njit(**JIT)
def frame_read(kin, mi, row, T, what, ref, perm, res):
    """``_read`` on a pass's array; checks the row and the output's shape (BAD_SIZE)."""
    nb = kin.shape[0]
    if kin.shape[1] != NK or mi.shape[0] != nb or row < 0 or row >= nb:
        return BAD_SIZE
    if (what == PLACEMENT and (res.shape[0] != 4 or res.shape[1] != 4)) or \
            (what != PLACEMENT and res.shape[0] != 6):
        return BAD_SIZE
    return _read(kin, mi, row, T, what, ref, perm, res)


@njit(**JIT)
def frame_quantity(buf, q, v, a, kin, row, T, what, ref, perm, res, order, with_joints):
    """The pass (to ``order``) and one read, in one call (the one-shot functions)."""
    st = kinematics(buf, q, v, a, kin, order, with_joints)
    if st != OK:
        return st
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    return frame_read(kin, mi, row, T, what, ref, perm, res)


@njit(**JIT)
def placements(kin, rows, T, out):
    """World poses out[f] (4x4) of the frames (rows[f], T[f]) from a pass's array."""
    n = rows.shape[0]
    if T.shape[0] != n or out.shape[0] != n:
        return BAD_SIZE
    R, o = np.empty(9), np.empty(3)
    for f in range(n):
        if rows[f] < 0 or rows[f] >= kin.shape[0]:
            return BAD_SIZE
        _frame_pose(kin, rows[f], T[f], R, o)
        for r in range(3):
            for c in range(3):
                out[f, r, c] = R[3 * r + c]
            out[f, r, 3] = o[r]
            out[f, 3, r] = 0.0
        out[f, 3, 3] = 1.0
    return OK


@njit(**JIT)
def all_placements(buf, q, kin, rows, T, out, with_joints):
    """The order-0 pass and ``placements`` in one call (forward kinematics)."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    if not ok:
        return BAD_SIZE
    zero = c_view(buf[h[H_ZERO]:], (h[H_NV],))
    st = kinematics(buf, q, zero, zero, kin, 0, with_joints)
    if st != OK:
        return st
    return placements(kin, rows, T, out)
