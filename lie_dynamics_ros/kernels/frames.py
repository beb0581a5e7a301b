"""Compiled frame kinematics: one pass over the tree, then cheap reads of any frame.

The pass stores, per body row i, its world pose oT_i, its body twist V_i and acceleration Vd_i
(frame i, the base at rest, no gravity; Kim 2012, eqs. 37 and 41, Table 2) and the world
columns of its joint's motion subspace, Ad_{oT_i} S_i (Kim eq. 7); their time derivatives
Ad_{oT_i} (ad_{V_i} S_i + Sdot_i) (Kim Lemma 1, eqs. 26-27) are formed by the reads, along the
frame's chain only (the pass keeps Ad_{oT_i} Sdot_i where S moves), as Pinocchio's
computeJointJacobians and computeJointJacobiansTimeVariation (Carpentier et al. 2019). A
frame's world Jacobian is the sum of its ancestors' columns; the other references follow from
the frame's pose. The pass writes the world poses into the Data too (dv's OR/OP).

Kernel order (angular, linear) inside; the reads write their rows through the permutation
that ``conventions.py`` defines, which the frame table carries.

Frame table ``tab`` (nf + 1, 16), built once per model and Data (algorithms/frames.py): row f
< nf is frame f's body row and its pose in that body, T[:3, :4] row-major; the last row holds
the public row order (conventions.PUBLIC_ROWS). Writable arrays only: numba dispatches a
read-only array argument several times slower.

The public calls use the entries at the end (``ENTRIES``): each dispatches with few arrays
(numba's dispatch costs about 0.045 us per array argument), the table and the one-shots'
scratch pass packed in one array ``mem`` (``MEM_HEAD`` floats: nf, nb; the table; the scratch),
and the frame, the quantity and the reference packed in one integer ``code``.
"""
import numpy as np
from numba import types
from numba.extending import overload

from .layout import (P, K as KIND, VI, NV, WR, WP, SDV, OR, OP, MS, MSD, H_NQ, H_NV, H_NB,
                     H_ZERO, OK, NONFINITE, BAD_SIZE)
from . import joints as J
from .jit import JIT, njit
from .lie import se3_Ad, se3_Ad_inv, se3_ad_add
from .joint_kinematics import joint_kinematics, joint_row
from .spatial import mat_vec
from .plan import unpack
from .views import bare, c_view, scratch

# columns of a pass's per-body array (nb, NK): pose, twist, acceleration, world columns, the
# world form of Sdot's columns (only where KF is 1: a joint whose S moves), and the topology
# (parent, first DOF, DOF count, as floats) for the reads
KR, KP, KV, KA, KS, KSD, KT, KF = 0, 9, 12, 18, 24, 60, 96, 99
NK = 100
# what a read returns
PLACEMENT, JACOBIAN, JACOBIAN_DOT, VELOCITY, ACCELERATION, CLASSICAL = range(6)
# references (Pinocchio's LOCAL, WORLD, LOCAL_WORLD_ALIGNED)
LOCAL, WORLD, LOCAL_WORLD_ALIGNED = range(3)


@njit(inline="always", **JIT)
def _universe(kin):
    for c in range(KS):         # pose, twist, acceleration (its columns are never read)
        kin[0, c] = 0.0
    kin[0, KR] = kin[0, KR + 4] = kin[0, KR + 8] = 1.0
    kin[0, KT], kin[0, KT + 2] = -1.0, 0.0


@njit(inline="always", **JIT)
def _pass_row(mi, dv, dm, v, a, kin, order, i, Sq, x):
    """Row i of the pass, its parent's done: world pose (into dv too), with ``order`` >= 0 the
    world columns, >= 1 the twist and the columns' rates, 2 the acceleration."""
    # indexed in place, no row views: this part runs for every body of every pass
    p = mi[i, P]
    vi, nv = mi[i, VI], mi[i, NV]
    for r in range(3):
        b0, b1, b2 = kin[p, KR + 3 * r], kin[p, KR + 3 * r + 1], kin[p, KR + 3 * r + 2]
        for cc in range(3):
            x_ = b0 * dv[i, WR + cc] + b1 * dv[i, WR + 3 + cc] + b2 * dv[i, WR + 6 + cc]
            kin[i, KR + 3 * r + cc] = x_
            dv[i, OR + 3 * r + cc] = x_
        x_ = kin[p, KP + r] + b0 * dv[i, WP] + b1 * dv[i, WP + 1] + b2 * dv[i, WP + 2]
        kin[i, KP + r] = x_
        dv[i, OP + r] = x_
    kin[i, KT], kin[i, KT + 1], kin[i, KT + 2] = p, vi, nv
    if order < 0:                       # poses only (placements)
        return
    o0, o1, o2 = kin[i, KP], kin[i, KP + 1], kin[i, KP + 2]
    for j in range(nv):                 # Ad_{oT_i} S_j (Kim eq. 7)
        base = KS + 6 * j
        for r in range(3):
            kin[i, base + r] = (kin[i, KR + 3 * r] * dm[i, MS, 0, j]
                                + kin[i, KR + 3 * r + 1] * dm[i, MS, 1, j]
                                + kin[i, KR + 3 * r + 2] * dm[i, MS, 2, j])
        w0, w1, w2 = kin[i, base], kin[i, base + 1], kin[i, base + 2]
        for r in range(3):
            kin[i, base + 3 + r] = (kin[i, KR + 3 * r] * dm[i, MS, 3, j]
                                    + kin[i, KR + 3 * r + 1] * dm[i, MS, 4, j]
                                    + kin[i, KR + 3 * r + 2] * dm[i, MS, 5, j])
        kin[i, base + 3] += o1 * w2 - o2 * w1
        kin[i, base + 4] += o2 * w0 - o0 * w2
        kin[i, base + 5] += o0 * w1 - o1 * w0
    if order < 1:
        return
    c, k = dv[i], kin[i]
    pr = kin[p]
    R, o = k[KR:KR + 9], k[KP:KP + 3]
    S = dm[i, MS]
    Vi = k[KV:KV + 6]
    se3_Ad_inv(c[WR:WR + 9], c[WP:WP + 3], pr[KV:KV + 6], Vi)
    mat_vec(S, v[vi:vi + nv], Sq, nv, False)
    for r in range(6):
        Vi[r] += Sq[r]
    # the columns' rates Ad(ad_Vi S_j + Sdot_j) = ad_{Ad Vi}(Ad S_j) + Ad Sdot_j (Kim Lemma 1):
    # the reads form the first term, only along the frame's chain; the pass keeps Ad Sdot_j
    # of the joints whose S moves (planar, universal, General)
    kind = mi[i, KIND]
    k[KF] = 0.0 if (kind == J.REVOLUTE or kind == J.PRISMATIC or kind == J.FREE
                    or kind == J.SPHERICAL) else 1.0
    if k[KF] != 0.0:
        for j in range(nv):
            for r in range(6):
                x[r] = dm[i, MSD, r, j]
            se3_Ad(R, o, x, k[KSD + 6 * j:KSD + 6 * j + 6])
    if order >= 2:
        Ai = k[KA:KA + 6]
        se3_Ad_inv(c[WR:WR + 9], c[WP:WP + 3], pr[KA:KA + 6], Ai)
        mat_vec(S, a[vi:vi + nv], Ai, nv, True)
        for r in range(6):
            Ai[r] += c[SDV + r]
        se3_ad_add(Vi, Sq, Ai, 1.0)


@njit(**JIT)
def _pass(mi, dv, dm, v, a, kin, order):
    """Every row of ``kin`` from the joint transforms, S and Sdot in ``dv``/``dm``."""
    _universe(kin)
    w = scratch(12)
    Sq, x = w[0:6], w[6:12]
    for i in range(1, mi.shape[0]):
        _pass_row(mi, dv, dm, v, a, kin, order, i, Sq, x)


@njit(**JIT)
def _chain_pass(mi, mc, dv, dm, q, v, a, kin, order, row, with_joints):
    """The pass on the rows from the root to ``row`` only, joint kinematics included (what one
    frame's quantities read; Pinocchio's computeFrameJacobian visits the same support)."""
    _universe(kin)
    n = 0
    j = row
    while j > 0:
        n += 1
        j = mi[j, P]
    chain = scratch(64) if n <= 64 else np.empty(n)      # body rows, leaf first
    j = row
    for m in range(n):
        chain[m] = j
        j = mi[j, P]
    w = scratch(21)
    Sq, x, Rj = w[0:6], w[6:12], w[12:21]
    for m in range(n - 1, -1, -1):
        i = int(chain[m])
        if with_joints:
            st = joint_row(mi, mc, dv, dm, q, v, i, Rj)
            if st != OK:
                return st
        _pass_row(mi, dv, dm, v, a, kin, order, i, Sq, x)
    return OK


@njit(**JIT)
def _finite(x):
    for k in range(x.shape[0]):
        if not np.isfinite(x[k]):
            return False
    return True


@njit(**JIT)
def kinematics(buf, q, v, a, kin, order, with_joints):
    """The pass on the Data buffer ``buf`` into ``kin`` (nb, NK), ``order`` -1: poses, 0: and
    the world columns, 1: and twists and the columns' rates, 2: and accelerations;
    ``with_joints`` False when Python filled the joint rows (General joints). Returns a
    status code."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    return _kinematics_on(h, ok, mi, mc, dv, dm, q, v, a, kin, order, with_joints)


@njit(inline="always", **JIT)
def _kinematics_on(h, ok, mi, mc, dv, dm, q, v, a, kin, order, with_joints):
    """``kinematics`` on the views ``unpack`` gave (the entries unpack ``buf`` once)."""
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
    kin[0, KT + 1] = nv         # the universe row holds the Jacobians' width
    return OK


@njit(inline="always", **JIT)
def _frame_pose(kin, tab, f, R, o):
    """World pose (R, o) of frame ``f`` of the table; returns its body row."""
    row = int(tab[f, 0])
    B = kin[row]
    T = tab[f]
    for r in range(3):
        b0, b1, b2 = B[KR + 3 * r], B[KR + 3 * r + 1], B[KR + 3 * r + 2]
        for c in range(3):
            R[3 * r + c] = b0 * T[1 + c] + b1 * T[5 + c] + b2 * T[9 + c]
        o[r] = B[KP + r] + b0 * T[4] + b1 * T[8] + b2 * T[12]
    return row


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
def _rate_to_reference(R, o, ref, Vw, x, dx, y, out):
    """d/dt of x's ``ref`` form, given x, its rate dx (world) and the frame's world twist Vw:
    LOCAL Ad_{oT_f^-1} (dx - ad_Vw x); WORLD dx; LOCAL_WORLD_ALIGNED
    (dw, dv + dw x o + w x do/dt) with do/dt = v_w + w_w x o. ``y`` is scratch (6)."""
    if ref == LOCAL:
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
def _read(kin, tab, f, what, ref, res):
    """One quantity of frame ``f`` into ``res``: (4, 4) for PLACEMENT, (6, nv) for the
    Jacobians, (6, 1) for a twist or an acceleration, in the public row order."""
    w = scratch(48)         # R (9), o (3), Vw (6), x (6), y (6), z (6), Vj (6), dx (6)
    R, o, Vw, x, y, z = w[0:9], w[9:12], w[12:18], w[18:24], w[24:30], w[30:36]
    Vj, dx = w[36:42], w[42:48]
    row = _frame_pose(kin, tab, f, R, o)
    if what == PLACEMENT:
        for r in range(3):
            for c in range(3):
                res[r, c] = R[3 * r + c]
            res[r, 3] = o[r]
            res[3, r] = 0.0
        res[3, 3] = 1.0
        return OK
    perm = tab[tab.shape[0] - 1]
    p0, p1, p2, p3, p4, p5 = int(perm[0]), int(perm[1]), int(perm[2]), int(perm[3]), \
        int(perm[4]), int(perm[5])
    B = kin[row]
    if what != JACOBIAN:
        se3_Ad(B[KR:KR + 9], B[KP:KP + 3], B[KV:KV + 6], Vw)
    if what == JACOBIAN or what == JACOBIAN_DOT:
        res[:, :] = 0.0
        j = row
        while j > 0:
            Kj = kin[j]
            vi = int(Kj[KT + 1])
            if what == JACOBIAN_DOT:        # body j's world twist, for its columns' rates
                se3_Ad(Kj[KR:KR + 9], Kj[KP:KP + 3], Kj[KV:KV + 6], Vj)
            for k in range(int(Kj[KT + 2])):
                col = vi + k
                xs = Kj[KS + 6 * k:KS + 6 * k + 6]
                if what == JACOBIAN:
                    _to_reference(R, o, ref, xs, y)
                else:               # the column's rate ad_{Vj} xs (+ Ad Sdot, see _pass_row)
                    for r in range(6):
                        dx[r] = Kj[KSD + 6 * k + r] if Kj[KF] != 0.0 else 0.0
                    se3_ad_add(Vj, xs, dx, 1.0)
                    _rate_to_reference(R, o, ref, Vw, xs, dx, z, y)
                res[0, col] += y[p0]
                res[1, col] += y[p1]
                res[2, col] += y[p2]
                res[3, col] += y[p3]
                res[4, col] += y[p4]
                res[5, col] += y[p5]
            j = int(Kj[KT])
        return OK
    if what == VELOCITY:
        _to_reference(R, o, ref, Vw, y)
    else:
        se3_Ad(B[KR:KR + 9], B[KP:KP + 3], B[KA:KA + 6], x)
        _to_reference(R, o, ref, x, y)
        if what == CLASSICAL:         # + w x v of the frame's twist in the same reference
            _to_reference(R, o, ref, Vw, x)
            y[3] += x[1] * x[5] - x[2] * x[4]
            y[4] += x[2] * x[3] - x[0] * x[5]
            y[5] += x[0] * x[4] - x[1] * x[3]
    res[0, 0], res[1, 0], res[2, 0] = y[p0], y[p1], y[p2]
    res[3, 0], res[4, 0], res[5, 0] = y[p3], y[p4], y[p5]
    return OK


@njit(inline="always", **JIT)
def _read_checked(kin, tab, f, what, ref, res):
    """``_read`` after checking the frame index, its row and the output's shape (BAD_SIZE)."""
    if kin.shape[1] != NK or tab.shape[1] != 16 or f < 0 or f >= tab.shape[0] - 1:
        return BAD_SIZE
    row = tab[f, 0]
    if not (row >= 0 and row < kin.shape[0]):
        return BAD_SIZE
    if (what == PLACEMENT and (res.shape[0] != 4 or res.shape[1] != 4)) or \
            (what != PLACEMENT and res.shape[0] != 6):
        return BAD_SIZE
    if (what == JACOBIAN or what == JACOBIAN_DOT) and res.shape[1] != kin[0, KT + 1]:
        return BAD_SIZE
    return _read(kin, tab, f, what, ref, res)


@njit(**JIT)
def frame_quantity(buf, q, v, a, kin, tab, f, what, ref, res, order, with_joints):
    """The pass (to ``order``) on the frame's chain only, and one read, in one call (the
    one-shot functions)."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    return _quantity_on(h, ok, mi, mc, dv, dm, q, v, a, kin, tab, f, what, ref, res, order,
                        with_joints)


@njit(inline="always", **JIT)
def _quantity_on(h, ok, mi, mc, dv, dm, q, v, a, kin, tab, f, what, ref, res, order,
                 with_joints):
    """``frame_quantity`` on the views ``unpack`` gave."""
    nv = h[H_NV]
    if not ok or q.shape[0] != h[H_NQ] or v.shape[0] != nv or a.shape[0] != nv \
            or kin.shape[0] != h[H_NB] or kin.shape[1] != NK or tab.shape[1] != 16 \
            or f < 0 or f >= tab.shape[0] - 1:
        return BAD_SIZE
    row = int(tab[f, 0])
    if row < 0 or row >= h[H_NB]:
        return BAD_SIZE
    qb, vb, ab = bare(q), bare(v), bare(a)
    if not (_finite(qb) and (order < 1 or _finite(vb)) and (order < 2 or _finite(ab))):
        return NONFINITE
    st = _chain_pass(mi, mc, dv, dm, qb, vb, ab, bare(kin), order, row, with_joints)
    if st != OK:
        return st
    kin[0, KT + 1] = nv
    return _read_checked(bare(kin), bare(tab), f, what, ref, bare(res))


@njit(**JIT)
def placements(kin, tab, out):
    """World poses out[f] (4x4) of every frame of the table from a pass's array."""
    n = tab.shape[0] - 1
    if out.shape[0] != n or kin.shape[1] != NK:
        return BAD_SIZE
    w = scratch(12)
    R, o = w[0:9], w[9:12]
    for f in range(n):
        if not (tab[f, 0] >= 0 and tab[f, 0] < kin.shape[0]):
            return BAD_SIZE
        _frame_pose(kin, tab, f, R, o)
        for r in range(3):
            for c in range(3):
                out[f, r, c] = R[3 * r + c]
            out[f, r, 3] = o[r]
            out[f, 3, r] = 0.0
        out[f, 3, 3] = 1.0
    return OK


@njit(**JIT)
def all_placements(buf, q, kin, tab, out, with_joints):
    """The pass for poses only and ``placements`` in one call (forward kinematics)."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    if not ok:
        return BAD_SIZE
    zero = c_view(buf[h[H_ZERO]:], (h[H_NV],))
    st = _kinematics_on(h, ok, mi, mc, dv, dm, q, zero, zero, kin, -1, with_joints)
    if st != OK:
        return st
    return placements(kin, tab, out)


# -- entries of the public calls: few arguments, one compiled signature set each ----------------
MEM_HEAD = 2


def code_of(f, what, ref):
    """The integer ``code`` of the entries: frame ``f``, quantity ``what``, reference ``ref``."""
    return (f << 5) | (what << 2) | ref


@njit(inline="always", **JIT)
def _unpack_mem(mem):
    """(ok, tab, kin scratch) inside ``mem``; empty views when its head does not fit it."""
    nf, nb = int(mem[0]), int(mem[1])
    ok = nf >= 0 and nb >= 1 and mem.shape[0] >= MEM_HEAD + (nf + 1) * 16 + nb * NK
    if not ok:
        nf, nb = -1, 0
    tab = c_view(mem[MEM_HEAD:], (nf + 1, 16))
    kin = c_view(mem[MEM_HEAD + (nf + 1) * 16:], (nb, NK))
    return ok, tab, kin


def _as_matrix(x):
    raise NotImplementedError("compiled only")


@overload(_as_matrix, inline="always")
def _as_matrix_impl(x):
    """A (6,) result seen as (6, 1), a matrix as itself (no reference counts)."""
    if x.ndim == 1:
        return lambda x: c_view(x, (x.shape[0], 1))
    return lambda x: bare(x)


@njit(**JIT)
def pass_q(buf, q, kin):
    """``kinematics`` at rest (order 0)."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    if not ok:
        return BAD_SIZE
    zero = c_view(buf[h[H_ZERO]:], (h[H_NV],))
    return _kinematics_on(h, ok, mi, mc, dv, dm, q, zero, zero, kin, 0, True)


@njit(**JIT)
def pass_qv(buf, q, v, kin):
    """``kinematics`` with v (order 1)."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    if not ok:
        return BAD_SIZE
    return _kinematics_on(h, ok, mi, mc, dv, dm, q, v, c_view(buf[h[H_ZERO]:], (h[H_NV],)),
                          kin, 1, True)


@njit(**JIT)
def pass_qva(buf, q, v, a, kin):
    """``kinematics`` with v and a (order 2)."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    return _kinematics_on(h, ok, mi, mc, dv, dm, q, v, a, kin, 2, True)


@njit(**JIT)
def read(kin, mem, res, code):
    """One read (``code``) from a pass's array ``kin`` with the table in ``mem``."""
    ok, tab, _ = _unpack_mem(mem)
    if not ok:
        return BAD_SIZE
    return _read_checked(bare(kin), tab, code >> 5, (code >> 2) & 7, code & 3, _as_matrix(res))


@njit(**JIT)
def read_all(kin, mem, out):
    """Every frame's placement from a pass's array ``kin``."""
    ok, tab, _ = _unpack_mem(mem)
    if not ok:
        return BAD_SIZE
    return placements(bare(kin), tab, bare(out))


@njit(inline="always", **JIT)
def _shot(h, ok, mi, mc, dv, dm, q, v, a, mem, res, code, order):
    okm, tab, kin = _unpack_mem(mem)
    if not okm:
        return BAD_SIZE
    what = (code >> 2) & 7
    if what == PLACEMENT:
        order = -1
    return _quantity_on(h, ok, mi, mc, dv, dm, q, v, a, kin, tab, code >> 5, what, code & 3,
                        _as_matrix(res), order, True)


@njit(**JIT)
def shot_q(buf, q, mem, res, code):
    """One-shot quantity of q alone (placement, Jacobian): the frame's chain, then the read."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    if not ok:
        return BAD_SIZE
    zero = c_view(buf[h[H_ZERO]:], (h[H_NV],))
    return _shot(h, ok, mi, mc, dv, dm, q, zero, zero, mem, res, code, 0)


@njit(**JIT)
def shot_qv(buf, q, v, mem, res, code):
    """One-shot quantity of (q, v): twist, J-dot."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    if not ok:
        return BAD_SIZE
    return _shot(h, ok, mi, mc, dv, dm, q, v, c_view(buf[h[H_ZERO]:], (h[H_NV],)), mem, res,
                 code, 1)


@njit(**JIT)
def shot_qva(buf, q, v, a, mem, res, code):
    """One-shot acceleration of (q, v, a)."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    return _shot(h, ok, mi, mc, dv, dm, q, v, a, mem, res, code, 2)


@njit(**JIT)
def placements_q(buf, q, mem, out):
    """The pass for poses only and every frame's placement (forward kinematics)."""
    okm, tab, kin = _unpack_mem(mem)
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    if not (ok and okm):
        return BAD_SIZE
    zero = c_view(buf[h[H_ZERO]:], (h[H_NV],))
    st = _kinematics_on(h, ok, mi, mc, dv, dm, q, zero, zero, kin, -1, True)
    if st != OK:
        return st
    return placements(kin, tab, bare(out))


_V = types.Array(types.float64, 1, "C")
_M = types.Array(types.float64, 2, "C")
_M3 = types.Array(types.float64, 3, "C")
_I = types.int64
#: (entry, its signatures): what algorithms/frames.py compiles, then closes to other types
ENTRIES = ((pass_q, [(_V, _V, _M)]), (pass_qv, [(_V, _V, _V, _M)]),
           (pass_qva, [(_V, _V, _V, _V, _M)]),
           (read, [(_M, _V, _M, _I), (_M, _V, _V, _I)]), (read_all, [(_M, _V, _M3)]),
           (shot_q, [(_V, _V, _V, _M, _I)]),
           (shot_qv, [(_V, _V, _V, _V, _M, _I), (_V, _V, _V, _V, _V, _I)]),
           (shot_qva, [(_V, _V, _V, _V, _V, _V, _I)]),
           (placements_q, [(_V, _V, _V, _M3)]))
