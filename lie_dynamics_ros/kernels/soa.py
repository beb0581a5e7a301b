"""Batched inverse dynamics laid out as a structure of arrays: one RNEA (Kim 2012, Table 2)
runs on a block of ``B`` states at once, every temporary an array whose last index is the
state, so that each multiply-add of the recursion is one vector instruction over the block.

Models: a tree of revolute and prismatic joints without mimics, possibly under a free joint
whose parent is the world, a floating base (``algorithms/batch_soa.py`` decides and packs).
Each body frame is turned so that its joint axis is z (a constant rotation C_i with
C_i e_z = axis): the joint transform is then a rotation about z (cosine, sine) or a
translation along z, and S_i a unit column. The constant part of T_{p,i} and the
body's inertia are expressed in the turned frames once per model; tau_i = S_i^T F_i does not
depend on the frame. A free root body is not turned (C = 1): its q = (p, quaternion xyzw) and
v = (v_lin, w) are read straight from Q, V, A (``free_lanes``), the parent being the world.

Plan arrays (``build_plan``): ``topo`` (nb + 1, NT) int64 and ``geo`` (nb + 1, NG) float64,
row 0 the world (gravity in ``geo[0, GX:GX + 3]``), rows in topological order.

Vectorization: every state loop reads the heap scratch ``W`` and writes a small array on the
stack (``_stack_array``), then copies it back; LLVM then needs no alias checks and turns each
loop into zmm instructions (``benchmarks/bench_soa.py`` prints their count). Compiled with
``fastmath={'contract'}``: a multiply and an add may fuse into an FMA (one rounding instead
of two, ~1e-16 relative; the tests hold the result to 1e-12 of the unfused kernels); nothing
else of IEEE arithmetic is relaxed, so NaN and Inf propagate to tau and a row's status is
``x * 0`` summed over its inputs and torques (NaN exactly when one of them is not finite).
"""
import math

import numpy as np

from .jit import njit
from .lie import quat_rotate_T
from .views import stack_matrix

from . import joints as J
from . import layout as L

#: states per block: two AVX-512 registers of float64 per operation (8 and 32 measured alike)
B = 16

# topo columns
TP = 0      # parent row
TK = 1      # 1 revolute, 2 prismatic, 3 free (parent row 0 only)
TQ = 2      # index in q
TV = 3      # index in v (and tau)
NT = 4
# geo columns
GR = 0      # constant rotation R = C_p^T R0 C_i, row-major (9)
GP = 9      # constant translation p = C_p^T p0 (3)
GI = 12     # rotational inertia about the frame origin: xx, yy, zz, xy, xz, yz (6)
GC = 18     # mass times centre of mass (3)
GM = 21     # mass
GA = 22     # armature of the joint's DOF
NG = 23
GX = 0      # row 0: gravity in the world frame (3)

REVOLUTE = 1
PRISMATIC = 2
FREE = 3

#: beyond this |q| the polynomial sine and cosine hand over to libm (Cody-Waite reduction with
#: a three-part pi/2 stays within an ulp or two far below it)
BIG_ANGLE = 1.0e5

# work rows of the per-call scratch W[(nb + 1), NW, B]
WV = 0      # twist (angular, linear) (6)
WA = 6      # acceleration (6)
WF = 12     # wrench (moment, force) (6)
WC = 18     # cos q
WS = 19     # sin q
WQ = 20     # q
WD = 21     # qd
WDD = 22    # qdd
WT = 23     # tau
NW = 24

_JIT = dict(cache=True, nogil=True, fastmath={"contract"}, error_model="numpy")


def _stack_array(rows):
    """A (rows, B) stack array (``views.stack_matrix``). A loop that loads from the heap
    scratch and stores here has no possible overlap, so LLVM vectorizes it across the states
    without runtime alias checks (which it gives up on beyond a few)."""
    return stack_matrix(rows, B)


_stack18 = _stack_array(18)
_stack6 = _stack_array(6)
_stack3 = _stack_array(3)
_stack20 = _stack_array(20)

# sine and cosine on [-pi/4, pi/4]: the minimax polynomials of Sun Microsystems' fdlibm
# (k_sin.c, k_cos.c, 1993), with its three-part pi/2 for the argument reduction (e_rem_pio2.c)
_S1, _S2, _S3 = -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04
_S4, _S5, _S6 = 2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10
_C1, _C2, _C3 = 4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05
_C4, _C5, _C6 = -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11
_INVPIO2 = 6.36619772367581382433e-01
_PIO2_1, _PIO2_2 = 1.57079632673412561417e+00, 6.07710050630396597660e-11
_PIO2_3 = 2.02226624871116645580e-21


@njit(inline="always", **_JIT)
def _sincos(x):
    """(sin x, cos x) without a branch (vectorizable); |x| <= BIG_ANGLE."""
    n = np.rint(x * _INVPIO2)
    r = ((x - n * _PIO2_1) - n * _PIO2_2) - n * _PIO2_3
    z = r * r
    s = r + r * z * (_S1 + z * (_S2 + z * (_S3 + z * (_S4 + z * (_S5 + z * _S6)))))
    cr = z * z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * (_C5 + z * _C6)))))
    hz = 0.5 * z
    w = 1.0 - hz
    c = w + (((1.0 - w) - hz) + cr)
    k = np.int64(n) & 3
    sn = c if (k & 1) == 1 else s
    cs = s if (k & 1) == 1 else c
    sn = -sn if (k & 2) == 2 else sn
    cs = -cs if ((k + 1) & 2) == 2 else cs
    return sn, cs


@njit(inline="always", **_JIT)
def joint_sincos(x):
    """(sin x, cos x) of one joint angle: ``_sincos`` within BIG_ANGLE, libm beyond its
    argument reduction (and for NaN)."""
    if abs(x) <= BIG_ANGLE:
        return _sincos(x)
    return math.sin(x), math.cos(x)


@njit(**_JIT)
def _load_block(Q, V, A, topo, W, chk, b0, nl):
    """This block's q, qd, qdd into W (lanes past the batch get zeros); chk[b] = 0 or NaN."""
    nb = topo.shape[0] - 1
    for b in range(B):
        chk[b] = 0.0
    for i in range(1, nb + 1):
        if topo[i, TK] == FREE:     # read by _free_motion
            continue
        jq, jv = topo[i, TQ], topo[i, TV]
        for b in range(nl):
            r = b0 + b
            x, xd, xdd = Q[r, jq], V[r, jv], A[r, jv]
            W[i, WQ, b], W[i, WD, b], W[i, WDD, b] = x, xd, xdd
            chk[b] += x * 0.0 + xd * 0.0 + xdd * 0.0
        for b in range(nl, B):
            W[i, WQ, b] = W[i, WD, b] = W[i, WDD, b] = 0.0


@njit(**_JIT)
def _joint_angles(topo, W):
    """cos q and sin q of every revolute joint, all lanes."""
    nb = topo.shape[0] - 1
    O = _stack3()
    for i in range(1, nb + 1):
        if topo[i, TK] != REVOLUTE:
            continue
        big = False
        for b in range(B):
            x = W[i, WQ, b]
            s, c = _sincos(x)
            O[0, b], O[1, b] = c, s
            big |= not abs(x) <= BIG_ANGLE
        for b in range(B):
            W[i, WC, b], W[i, WS, b] = O[0, b], O[1, b]
        if big:
            for b in range(B):
                x = W[i, WQ, b]
                if abs(x) > BIG_ANGLE:      # NaN stays NaN from the polynomial
                    W[i, WS, b], W[i, WC, b] = math.sin(x), math.cos(x)


@njit(inline="always", **_JIT)
def _inverse_transform(W, p, o, b, r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz):
    """Ad_{X^-1} of the parent's twist or acceleration (rows o..o+5) for the constant part
    X = (R, p) of T_{p,i} = X Tj(q) (Kim 2012, eq. 37); the joint's Tj is applied after."""
    w0, w1, w2 = W[p, o, b], W[p, o + 1, b], W[p, o + 2, b]
    u0 = W[p, o + 3, b] + (w1 * pz - w2 * py)
    u1 = W[p, o + 4, b] + (w2 * px - w0 * pz)
    u2 = W[p, o + 5, b] + (w0 * py - w1 * px)
    return (r00 * w0 + r10 * w1 + r20 * w2, r01 * w0 + r11 * w1 + r21 * w2,
            r02 * w0 + r12 * w1 + r22 * w2, r00 * u0 + r10 * u1 + r20 * u2,
            r01 * u0 + r11 * u1 + r21 * u2, r02 * u0 + r12 * u1 + r22 * u2)


@njit(inline="always", **_JIT)
def _motion(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz, rev):
    """V_i and A_i of every state into O rows 0..11. ``rev`` is a constant at each call site,
    so LLVM compiles one loop per joint kind, without the other kind's terms."""
    for b in range(B):
        qd, qdd = W[i, WD, b], W[i, WDD, b]
        w0, w1, w2, v0, v1, v2 = _inverse_transform(
            W, p, WV, b, r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz)
        e0, e1, e2, f0, f1, f2 = _inverse_transform(
            W, p, WA, b, r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz)
        # then Tj^-1: Rz(q)^T on both parts, or v + w x (q e_z); then (Kim 37-38)
        # V_i += S qd, A_i += S qdd + ad(V_i) S qd
        if rev:
            c, s = W[i, WC, b], W[i, WS, b]
            w0, w1 = c * w0 + s * w1, c * w1 - s * w0
            v0, v1 = c * v0 + s * v1, c * v1 - s * v0
            e0, e1 = c * e0 + s * e1, c * e1 - s * e0
            f0, f1 = c * f0 + s * f1, c * f1 - s * f0
            w2 += qd
            e0 += qd * w1
            e1 -= qd * w0
            e2 += qdd
            f0 += qd * v1
            f1 -= qd * v0
        else:
            d = W[i, WQ, b]
            v0, v1 = v0 + d * w1, v1 - d * w0
            f0, f1 = f0 + d * e1, f1 - d * e0
            v2 += qd
            f0 += qd * w1
            f1 -= qd * w0
            f2 += qdd
        O[0, b], O[1, b], O[2, b], O[3, b], O[4, b], O[5, b] = w0, w1, w2, v0, v1, v2
        O[6, b], O[7, b], O[8, b], O[9, b], O[10, b], O[11, b] = e0, e1, e2, f0, f1, f2


@njit(inline="always", **_JIT)
def rigid_apply(ixx, iyy, izz, ixy, ixz, iyz, cx, cy, cz, m, w0, w1, w2, v0, v1, v2):
    """I x for a rigid body's inertia in its 10 numbers (Ibar about the frame origin, mc, m)
    and x = (w, v): (Ibar w + mc x v, m v - mc x w), angular first."""
    return (ixx * w0 + ixy * w1 + ixz * w2 + (cy * v2 - cz * v1),
            ixy * w0 + iyy * w1 + iyz * w2 + (cz * v0 - cx * v2),
            ixz * w0 + iyz * w1 + izz * w2 + (cx * v1 - cy * v0),
            m * v0 - (cy * w2 - cz * w1),
            m * v1 - (cz * w0 - cx * w2),
            m * v2 - (cx * w1 - cy * w0))


@njit(inline="always", **_JIT)
def rigid_bias(w0, w1, w2, v0, v1, v2, ixx, iyy, izz, ixy, ixz, iyz, cx, cy, cz, m):
    """B^ = -ad*_V I V of V = (w, v) (Kim 2012, eq. 42): with I V = (ha, hl)
    (``rigid_apply``), B^ = (w x ha + v x hl, w x hl)."""
    ha0, ha1, ha2, hl0, hl1, hl2 = rigid_apply(ixx, iyy, izz, ixy, ixz, iyz, cx, cy, cz, m,
                                               w0, w1, w2, v0, v1, v2)
    return ((w1 * ha2 - w2 * ha1) + (v1 * hl2 - v2 * hl1),
            (w2 * ha0 - w0 * ha2) + (v2 * hl0 - v0 * hl2),
            (w0 * ha1 - w1 * ha0) + (v0 * hl1 - v1 * hl0),
            w1 * hl2 - w2 * hl1, w2 * hl0 - w0 * hl2, w0 * hl1 - w1 * hl0)


@njit(inline="always", **_JIT)
def free_lanes(Q, X, Y, geo, Z, i, jq, jv, chk, b0, nl):
    """The inputs of the free root body of row i for this block, into the stack array Z
    (20 rows): X (v) into rows 0-5 and Y (a, or tau) into rows 6-11, both turned from the
    public (linear, angular) to the kernels' (angular, linear) order (S is that permutation);
    rows 12-14 the gravity acceleration in the body frame, Rq^T R^T (-g) for T = X Tj(q) with
    X = (R, p) constant; rows 16-19 the quaternion. The position does not enter the dynamics.
    chk[b] turns NaN for a non-finite input, or a quaternion whose norm is 1e-6 or more off 1,
    which the per-state ``joint_kinematics.unit_quat`` refuses (it normalizes the others)."""
    for b in range(nl):
        r = b0 + b
        c = Q[r, jq] * 0.0 + Q[r, jq + 1] * 0.0 + Q[r, jq + 2] * 0.0
        for k in range(4):
            Z[16 + k, b] = Q[r, jq + 3 + k]
            c += Z[16 + k, b] * 0.0
        for k in range(3):
            Z[k, b], Z[3 + k, b] = X[r, jv + 3 + k], X[r, jv + k]
            Z[6 + k, b], Z[9 + k, b] = Y[r, jv + 3 + k], Y[r, jv + k]
        for k in range(12):
            c += Z[k, b] * 0.0
        chk[b] += c
    for b in range(nl, B):
        for k in range(20):
            Z[k, b] = 0.0
        Z[19, b] = 1.0
    g0, g1, g2 = -geo[0, GX], -geo[0, GX + 1], -geo[0, GX + 2]
    u0 = geo[i, GR] * g0 + geo[i, GR + 3] * g1 + geo[i, GR + 6] * g2
    u1 = geo[i, GR + 1] * g0 + geo[i, GR + 4] * g1 + geo[i, GR + 7] * g2
    u2 = geo[i, GR + 2] * g0 + geo[i, GR + 5] * g1 + geo[i, GR + 8] * g2
    for b in range(B):
        x, y, z, w = Z[16, b], Z[17, b], Z[18, b], Z[19, b]
        n = np.sqrt(x * x + y * y + z * z + w * w)
        Z[15, b] = 0.0 if abs(n - 1.0) < 1e-6 else np.nan
        Z[12, b], Z[13, b], Z[14, b] = quat_rotate_T(x / n, y / n, z / n, w / n, u0, u1, u2)
    for b in range(nl):
        chk[b] += Z[15, b]


@njit(inline="always", **_JIT)
def _free_motion(Q, V, A, geo, O, i, jq, jv, chk, b0, nl):
    """V_i and A_i of a free root body into O rows 0..11: V = S v, A = Ad_{T^-1} (0, -g) + S a
    (Kim 2012, eqs. 37-38 with the world as parent: V_p = 0, and ad(V) S v = ad(V) V = 0)."""
    Z = _stack20()
    free_lanes(Q, V, A, geo, Z, i, jq, jv, chk, b0, nl)
    for b in range(B):
        for k in range(9):
            O[k, b] = Z[k, b]
        for k in range(3):
            O[9 + k, b] = Z[9 + k, b] + Z[12 + k, b]


@njit(**_JIT)
def _forward(topo, geo, W, Q, V, A, chk, b0, nl):
    """Twists, accelerations and each body's own wrench F_i = I A_i + V_i x* (I V_i)."""
    nb = topo.shape[0] - 1
    O = _stack18()
    for b in range(B):
        for k in range(6):
            W[0, WV + k, b] = 0.0
        for k in range(3):
            W[0, WA + k, b] = 0.0
            W[0, WA + 3 + k, b] = -geo[0, GX + k]
    for i in range(1, nb + 1):
        p = topo[i, TP]
        r00, r01, r02 = geo[i, GR], geo[i, GR + 1], geo[i, GR + 2]
        r10, r11, r12 = geo[i, GR + 3], geo[i, GR + 4], geo[i, GR + 5]
        r20, r21, r22 = geo[i, GR + 6], geo[i, GR + 7], geo[i, GR + 8]
        px, py, pz = geo[i, GP], geo[i, GP + 1], geo[i, GP + 2]
        if topo[i, TK] == REVOLUTE:
            _motion(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz, True)
        elif topo[i, TK] == FREE:
            _free_motion(Q, V, A, geo, O, i, topo[i, TQ], topo[i, TV], chk, b0, nl)
        else:
            _motion(W, O, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz, False)
        ixx, iyy, izz = geo[i, GI], geo[i, GI + 1], geo[i, GI + 2]
        ixy, ixz, iyz = geo[i, GI + 3], geo[i, GI + 4], geo[i, GI + 5]
        cx, cy, cz, m = geo[i, GC], geo[i, GC + 1], geo[i, GC + 2], geo[i, GM]
        for b in range(B):
            w0, w1, w2, v0, v1, v2 = O[0, b], O[1, b], O[2, b], O[3, b], O[4, b], O[5, b]
            e0, e1, e2, f0, f1, f2 = O[6, b], O[7, b], O[8, b], O[9, b], O[10, b], O[11, b]
            # h = I V and I A
            ha0, ha1, ha2, hl0, hl1, hl2 = rigid_apply(ixx, iyy, izz, ixy, ixz, iyz, cx, cy, cz,
                                                       m, w0, w1, w2, v0, v1, v2)
            fa0, fa1, fa2, fl0, fl1, fl2 = rigid_apply(ixx, iyy, izz, ixy, ixz, iyz, cx, cy, cz,
                                                       m, e0, e1, e2, f0, f1, f2)
            # F = I A + (w x h_a + v x h_l, w x h_l)  (Kim 42: I Vd - ad*_V I V)
            O[12, b] = fa0 + (w1 * ha2 - w2 * ha1) + (v1 * hl2 - v2 * hl1)
            O[13, b] = fa1 + (w2 * ha0 - w0 * ha2) + (v2 * hl0 - v0 * hl2)
            O[14, b] = fa2 + (w0 * ha1 - w1 * ha0) + (v0 * hl1 - v1 * hl0)
            O[15, b] = fl0 + (w1 * hl2 - w2 * hl1)
            O[16, b] = fl1 + (w2 * hl0 - w0 * hl2)
            O[17, b] = fl2 + (w0 * hl1 - w1 * hl0)
        for k in range(18):     # V, A, F are the rows WV.. of W
            for b in range(B):
                W[i, WV + k, b] = O[k, b]


@njit(inline="always", **_JIT)
def _wrench_to_parent(W, O, T, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz,
                      arm, rev):
    """tau_i into T row 0 and F_p + Ad*_{T^-1} F_i into O rows 0..5, every state (``rev`` a
    constant at each call site, as in ``_motion``)."""
    for b in range(B):
        n0, n1, n2 = W[i, WF, b], W[i, WF + 1, b], W[i, WF + 2, b]
        f0, f1, f2 = W[i, WF + 3, b], W[i, WF + 4, b], W[i, WF + 5, b]
        if rev:     # tau = S^T F; then Rz(q) on both parts
            T[0, b] = n2 + arm * W[i, WDD, b]
            c, s = W[i, WC, b], W[i, WS, b]
            n0, n1 = c * n0 - s * n1, s * n0 + c * n1
            f0, f1 = c * f0 - s * f1, s * f0 + c * f1
        else:       # or n + (q e_z) x f
            T[0, b] = f2 + arm * W[i, WDD, b]
            d = W[i, WQ, b]
            n0, n1 = n0 - d * f1, n1 + d * f0
        # then the constant transform: f' = R f, n' = R n + p x f'
        g0 = r00 * f0 + r01 * f1 + r02 * f2
        g1 = r10 * f0 + r11 * f1 + r12 * f2
        g2 = r20 * f0 + r21 * f1 + r22 * f2
        O[0, b] = W[p, WF, b] + r00 * n0 + r01 * n1 + r02 * n2 + (py * g2 - pz * g1)
        O[1, b] = W[p, WF + 1, b] + r10 * n0 + r11 * n1 + r12 * n2 + (pz * g0 - px * g2)
        O[2, b] = W[p, WF + 2, b] + r20 * n0 + r21 * n1 + r22 * n2 + (px * g1 - py * g0)
        O[3, b] = W[p, WF + 3, b] + g0
        O[4, b] = W[p, WF + 4, b] + g1
        O[5, b] = W[p, WF + 5, b] + g2


@njit(**_JIT)
def _backward(topo, geo, W, TAU, chk, b0, nl):
    """tau_i = S_i^T F_i + armature qdd_i, children first, F_p += Ad*_{T^-1} F_i (a root
    body adds into row 0, which nobody reads)."""
    nb = topo.shape[0] - 1
    O = _stack6()
    T = _stack3()
    for i in range(nb, 0, -1):
        if topo[i, TK] == FREE:     # tau = S^T F below; the world reads no wrench
            continue
        p = topo[i, TP]
        r00, r01, r02 = geo[i, GR], geo[i, GR + 1], geo[i, GR + 2]
        r10, r11, r12 = geo[i, GR + 3], geo[i, GR + 4], geo[i, GR + 5]
        r20, r21, r22 = geo[i, GR + 6], geo[i, GR + 7], geo[i, GR + 8]
        px, py, pz = geo[i, GP], geo[i, GP + 1], geo[i, GP + 2]
        arm = geo[i, GA]
        if topo[i, TK] == REVOLUTE:
            _wrench_to_parent(W, O, T, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22,
                              px, py, pz, arm, True)
        else:
            _wrench_to_parent(W, O, T, i, p, r00, r01, r02, r10, r11, r12, r20, r21, r22,
                              px, py, pz, arm, False)
        for b in range(B):
            W[i, WT, b] = T[0, b]
        for k in range(6):
            for b in range(B):
                W[p, WF + k, b] = O[k, b]
    for i in range(1, nb + 1):
        jv = topo[i, TV]
        if topo[i, TK] == FREE:     # S^T F = (force, moment)
            for b in range(nl):
                for k in range(3):
                    f, n = W[i, WF + 3 + k, b], W[i, WF + k, b]
                    TAU[b0 + b, jv + k], TAU[b0 + b, jv + 3 + k] = f, n
                    chk[b] += f * 0.0 + n * 0.0
            continue
        for b in range(nl):
            t = W[i, WT, b]
            TAU[b0 + b, jv] = t
            chk[b] += t * 0.0


@njit(**_JIT)
def rnea_soa(topo, geo, Q, V, A, TAU, status, blk_lo, blk_hi):
    """Inverse dynamics of the states in blocks blk_lo..blk_hi-1 (rows b * B ...), each row's
    status 1 when an input or the result is not finite (NaN and Inf propagate to tau)."""
    N = Q.shape[0]
    W = np.zeros((topo.shape[0], NW, B))
    chk = np.zeros(B)
    for blk in range(blk_lo, blk_hi):
        b0 = blk * B
        nl = min(B, N - b0)
        _load_block(Q, V, A, topo, W, chk, b0, nl)
        _joint_angles(topo, W)
        _forward(topo, geo, W, Q, V, A, chk, b0, nl)
        _backward(topo, geo, W, TAU, chk, b0, nl)
        for b in range(nl):
            status[b0 + b] = 0 if chk[b] == 0.0 else 1


#: why build_plan refused a body row (returned as 4 * row + reason)
MIMIC, KIND, INERTIA = 1, 2, 3


@njit(inline="always", **_JIT)
def _refused(mi, mc, mI, i):
    """0 when body row i is served, else MIMIC, KIND (also a free joint below another body or
    with armature, which the plan has no room for) or INERTIA (not [[Ibar, m[c]],
    [m[c]^T, m 1]] to 1e-12 of its largest entry)."""
    if mi[i, L.MIMIC] != 0:
        return MIMIC
    if mi[i, L.K] == J.FREE:
        if mi[i, L.P] != 0:
            return KIND
        for k in range(6):
            if mc[i, L.ARM + k] != 0.0:
                return KIND
    elif mi[i, L.K] != J.REVOLUTE and mi[i, L.K] != J.PRISMATIC:
        return KIND
    m, x, y, z = mI[i, 3, 3], mI[i, 2, 4], mI[i, 0, 5], mI[i, 1, 3]
    big = 1.0
    for r in range(6):
        for c in range(6):
            big = max(big, abs(mI[i, r, c]))
    want = np.zeros((6, 6))
    for r in range(3):
        for c in range(3):
            want[r, c] = mI[i, r, c]
        want[3 + r, 3 + r] = m
    want[0, 4], want[0, 5], want[1, 3], want[1, 5], want[2, 3], want[2, 4] = -z, y, z, -x, -y, x
    for r in range(3):
        for c in range(3):
            want[3 + c, r] = want[r, 3 + c]
    for r in range(6):
        for c in range(6):
            if not abs(mI[i, r, c] - want[r, c]) <= 1e-12 * big:
                return INERTIA
    return 0


@njit(inline="always", **_JIT)
def _axis_frame(mi, mc, i, Ci):
    """C_i (3 x 3) of body row i into Ci (``build_plan``'s docstring says which)."""
    a0, a1, a2 = mc[i, L.AX], mc[i, L.AX + 1], mc[i, L.AX + 2]
    if mi[i, L.K] == J.FREE:                           # C_i = 1: c1 = e_x, a = e_z
        c0, c1, c2, a0, a1, a2 = 1.0, 0.0, 0.0, 0.0, 0.0, 1.0
    elif abs(a0) <= abs(a1) and abs(a0) <= abs(a2):    # e_x x a
        c0, c1, c2 = 0.0, -a2, a1
    elif abs(a1) <= abs(a2):                           # e_y x a
        c0, c1, c2 = a2, 0.0, -a0
    else:                                              # e_z x a
        c0, c1, c2 = -a1, a0, 0.0
    nrm = math.sqrt(c0 * c0 + c1 * c1 + c2 * c2)
    c0, c1, c2 = c0 / nrm, c1 / nrm, c2 / nrm
    Ci[0, 0], Ci[1, 0], Ci[2, 0] = c0, c1, c2
    Ci[0, 1], Ci[1, 1], Ci[2, 1] = a1 * c2 - a2 * c1, a2 * c0 - a0 * c2, a0 * c1 - a1 * c0
    Ci[0, 2], Ci[1, 2], Ci[2, 2] = a0, a1, a2


@njit(**_JIT)
def axis_frames(mi, mc, C):
    """C[i] = C_i of ``build_plan`` for every body row of a model it serves (C[0] = 1): the
    turn from a plan body frame to the model's (URDF) body frame."""
    for r in range(3):
        for c in range(3):
            C[0, r, c] = 1.0 if r == c else 0.0
    for i in range(1, mi.shape[0]):
        _axis_frame(mi, mc, i, C[i])


@njit(**_JIT)
def build_plan(mi, mc, mI, topo, geo):
    """Fill (topo, geo) from the model arrays of ``layout.py``; returns 0, or 4 * row + why
    for the first body row that the kernel does not serve (``_refused``).

    C_i turns e_z onto the joint axis a: columns (c1, a x c1, a) with c1 = e_k x a normalized,
    e_k the principal axis least along a, so that a principal axis gives a signed permutation
    (exact); a free root body keeps its frame (C_i = 1)."""
    n = mi.shape[0]
    C = np.zeros((n, 3, 3))
    for k in range(3):
        C[0, k, k] = 1.0
        geo[0, GX + k] = mc[0, L.G + k]
    for i in range(1, n):
        why = _refused(mi, mc, mI, i)
        if why != 0:
            return 4 * i + why
        Ci = C[i]
        _axis_frame(mi, mc, i, Ci)
        p = mi[i, L.P]
        topo[i, TP], topo[i, TQ], topo[i, TV] = p, mi[i, L.QI], mi[i, L.VI]
        topo[i, TK] = (REVOLUTE if mi[i, L.K] == J.REVOLUTE else
                       FREE if mi[i, L.K] == J.FREE else PRISMATIC)
        Cp = C[p]
        for r in range(3):
            for c in range(3):      # R = C_p^T R0 C_i
                acc = 0.0
                for u in range(3):
                    for w in range(3):
                        acc += Cp[u, r] * mc[i, L.R0 + 3 * u + w] * Ci[w, c]
                geo[i, GR + 3 * r + c] = acc
            geo[i, GP + r] = Cp[0, r] * mc[i, L.P0] + Cp[1, r] * mc[i, L.P0 + 1] \
                + Cp[2, r] * mc[i, L.P0 + 2]
            # m c from the skew block m[c] of the (angular, linear) inertia, turned: C_i^T m c
            geo[i, GC + r] = Ci[0, r] * mI[i, 2, 4] + Ci[1, r] * mI[i, 0, 5] \
                + Ci[2, r] * mI[i, 1, 3]
        for k, (r, c) in enumerate(((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))):
            acc = 0.0       # C_i^T Ibar C_i
            for u in range(3):
                for w in range(3):
                    acc += Ci[u, r] * mI[i, u, w] * Ci[w, c]
            geo[i, GI + k] = acc
        geo[i, GM] = mI[i, 3, 3]
        geo[i, GA] = mc[i, L.ARM]       # 0 on a free row (refused otherwise)
    return 0
