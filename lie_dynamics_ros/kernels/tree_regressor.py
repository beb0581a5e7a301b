"""The inverse-dynamics regressor on the packed tree plan (kernels/tree.py): Y(q, v, a) with
Y theta = M(q) a + C(q, v) v + g(q) (armature not included), theta the 10 inertial parameters
of every body in its model (URDF) frame, as ``algorithms/regressor.py`` orders them.

Body j's wrench F_j = I_j A_j + V_j x* (I_j V_j) (Kim 2012, eq. 42) is linear in its
parameters (Atkeson, An & Hollerbach 1986), and the backward pass of Kim's Table 2 gives
tau_i = S_i^T X*_{i<-j} F_j for every ancestor i of j, j included. So block (i, j) of Y is
s_ij^T K_j with s_ij = Ad_{T_{i,j}^-1} S_i, the ancestor's joint column seen in body j's
frame, propagated down the subtree of i one transform at a time. With V = (w, v),
A = (al, f) (angular, linear) and b = f + w x v, F = (Ibar al + w x Ibar w + h x b,
m b - h x al + w x (w x h)) in the parameters (m, h = m c, Ibar about the origin), so the
row of s = (s_w, s_v) is:

    m: s_v . b        h: b x s_w + s_v x al + (s_v . w) w - |w|^2 s_v
    Ibar: s_w^T Ibar al + (s_w x w)^T Ibar w   (symmetric: the off-diagonals twice)

The forward pass (twists, accelerations with gravity as the base's, a free root, the status
rules) is ``tree_rnea``'s (``_start``, ``_motion``). The plan's body frames are turned by C_j
(``soa.build_plan``); the parameters are in the model's frames, so w, al, b and s are turned
back by C_j (``soa.axis_frames``, stored in P's columns GCR) before the products above: the
torque s . F does not depend on the frame.

Entries (status codes of ``layout``): ``regressor(P, q, v, a, Y)`` fills Y (nv, >= 10 nb)'s
first 10 nb columns; ``regressor_rows(P, Q, V, A, Y, status)`` does it for every sample k,
Y (N, nv, >= 10 nb), and sets status[k]. A non-finite input gives NONFINITE, finite inputs
with a non-finite row entry OVERFLOW (each block's entries summed times 0), a free joint's
quaternion 1e-6 or more off unit norm BAD_QUATERNION, a wrong length BAD_SIZE. Scratch on the
stack, views without reference counts (kernels/views.py); one thread, GIL kept (the caller,
``identification/regressors.py``, keeps it on one core). Compiled with
``fastmath={'contract'}`` as the other tree kernels (FMA; nothing else relaxed): the tests
hold Y to 1e-12 of the general kernel.
"""
from numba import types

from .jit import njit
from .layout import OK, NONFINITE, BAD_QUATERNION, OVERFLOW, BAD_SIZE
from .soa import TP, TK, TQ, TV, GR, GP, GX, REVOLUTE, FREE
from .tree import TOPO, NP, MAX_BODIES
from .tree_rnea import _JIT, NS, SR, _finite, _motion, _start
from .views import bare, stack_matrix

#: first column of C_j (row-major, 9) in the regressor's plan; its width
GCR = NP
NPR = NP + 9

# scratch columns past tree_rnea's (its _motion fills those): per body, in the model frame
RW = NS         # w (3)
RL = NS + 3     # al (3)
RB = NS + 6     # b = f + w x v (3)
RN = NS + 9     # |w|^2
RS = NS + 10    # s_ij of the current ancestor i, plan frame (6: angular, linear)
RM = NS + 16    # i while the body is in the subtree of ancestor i
NSR = NS + 17

_scratch = stack_matrix(MAX_BODIES, NSR)


@njit(inline="always", **_JIT)
def _regressor(P, q, v, a, Y, W):
    """The body of the entries: Y (nv, >= 10 nb) on scratch W (MAX_BODIES, NSR)."""
    nb = P.shape[0] - 1
    if nb < 1 or nb >= MAX_BODIES or P.shape[1] != NPR:
        return BAD_SIZE
    nv = int(P[0, TOPO + TV])
    if (q.shape[0] != int(P[0, TOPO + TQ]) or v.shape[0] != nv or a.shape[0] != nv
            or Y.shape[0] != nv or Y.shape[1] < 10 * nb):
        return BAD_SIZE
    _start(P, q, W)
    pw0 = pw1 = pw2 = pv0 = pv1 = pv2 = pe0 = pe1 = pe2 = 0.0
    pf0, pf1, pf2 = -P[0, GX], -P[0, GX + 1], -P[0, GX + 2]
    bad = 0.0
    unit = True
    for j in range(1, nb + 1):
        (w0, w1, w2, v0, v1, v2, e0, e1, e2, f0, f1, f2, chk, ok) = _motion(
            P, q, v, a, W, j, pw0, pw1, pw2, pv0, pv1, pv2, pe0, pe1, pe2, pf0, pf1, pf2,
            True, True)
        bad += chk
        unit &= ok
        pw0, pw1, pw2, pv0, pv1, pv2 = w0, w1, w2, v0, v1, v2
        pe0, pe1, pe2, pf0, pf1, pf2 = e0, e1, e2, f0, f1, f2
        b0, b1, b2 = f0 + (w1 * v2 - w2 * v1), f1 + (w2 * v0 - w0 * v2), f2 + (w0 * v1 - w1 * v0)
        g = P[j]
        Wj = W[j]
        for r in range(3):
            c0, c1, c2 = g[GCR + 3 * r], g[GCR + 3 * r + 1], g[GCR + 3 * r + 2]
            Wj[RW + r] = c0 * w0 + c1 * w1 + c2 * w2
            Wj[RL + r] = c0 * e0 + c1 * e1 + c2 * e2
            Wj[RB + r] = c0 * b0 + c1 * b1 + c2 * b2
        Wj[RN] = w0 * w0 + w1 * w1 + w2 * w2
        Wj[RM] = 0.0
    for i in range(1, nb + 1):
        g = P[i]
        jv = int(g[TOPO + TV])
        kind = g[TOPO + TK]
        for d in range(6 if kind == FREE else 1):
            Yr = Y[jv + d]
            for c in range(10 * (i - 1)):
                Yr[c] = 0.0
            # S_i's column d in body i's plan frame: e_z about or along z, or a free joint's
            # (v_lin, w) component
            sw0 = sw1 = sw2 = sv0 = sv1 = sv2 = 0.0
            if kind == REVOLUTE:
                sw2 = 1.0
            elif kind == FREE:
                if d == 0:
                    sv0 = 1.0
                elif d == 1:
                    sv1 = 1.0
                elif d == 2:
                    sv2 = 1.0
                elif d == 3:
                    sw0 = 1.0
                elif d == 4:
                    sw1 = 1.0
                else:
                    sw2 = 1.0
            else:
                sv2 = 1.0
            W[i, RM] = i
            for j in range(i, nb + 1):
                gj = P[j]
                Wj = W[j]
                c0 = 10 * (j - 1)
                if j > i:
                    p = int(gj[TOPO + TP])
                    if p < i or W[p, RM] != i:       # not below i: no torque on i's joint
                        for c in range(c0, c0 + 10):
                            Yr[c] = 0.0
                        continue
                    Wj[RM] = i
                    if p != j - 1:                   # else s_ip is in registers
                        Wp = W[p]
                        sw0, sw1, sw2 = Wp[RS], Wp[RS + 1], Wp[RS + 2]
                        sv0, sv1, sv2 = Wp[RS + 3], Wp[RS + 4], Wp[RS + 5]
                    # s_ij = Ad_{T_{p,j}^-1} s_ip (Kim 2012, eq. 37): R^T s_w, R^T (s_v +
                    # s_w x p), then a prismatic joint's translation q e_z
                    rs = Wj if gj[TOPO + TK] == REVOLUTE else gj
                    o = SR if gj[TOPO + TK] == REVOLUTE else GR
                    r00, r01, r02 = rs[o], rs[o + 1], rs[o + 2]
                    r10, r11, r12 = rs[o + 3], rs[o + 4], rs[o + 5]
                    r20, r21, r22 = rs[o + 6], rs[o + 7], rs[o + 8]
                    px, py, pz = gj[GP], gj[GP + 1], gj[GP + 2]
                    u0 = sv0 + (sw1 * pz - sw2 * py)
                    u1 = sv1 + (sw2 * px - sw0 * pz)
                    u2 = sv2 + (sw0 * py - sw1 * px)
                    sw0, sw1, sw2 = (r00 * sw0 + r10 * sw1 + r20 * sw2,
                                     r01 * sw0 + r11 * sw1 + r21 * sw2,
                                     r02 * sw0 + r12 * sw1 + r22 * sw2)
                    sv0, sv1, sv2 = (r00 * u0 + r10 * u1 + r20 * u2,
                                     r01 * u0 + r11 * u1 + r21 * u2,
                                     r02 * u0 + r12 * u1 + r22 * u2)
                    if gj[TOPO + TK] != REVOLUTE:
                        x = q[int(gj[TOPO + TQ])]
                        sv0, sv1 = sv0 + x * sw1, sv1 - x * sw0
                Wj[RS], Wj[RS + 1], Wj[RS + 2] = sw0, sw1, sw2
                Wj[RS + 3], Wj[RS + 4], Wj[RS + 5] = sv0, sv1, sv2
                # s in the model frame of body j: C_j s
                c00, c01, c02 = gj[GCR], gj[GCR + 1], gj[GCR + 2]
                c10, c11, c12 = gj[GCR + 3], gj[GCR + 4], gj[GCR + 5]
                c20, c21, c22 = gj[GCR + 6], gj[GCR + 7], gj[GCR + 8]
                t0 = c00 * sw0 + c01 * sw1 + c02 * sw2
                t1 = c10 * sw0 + c11 * sw1 + c12 * sw2
                t2 = c20 * sw0 + c21 * sw1 + c22 * sw2
                n0 = c00 * sv0 + c01 * sv1 + c02 * sv2
                n1 = c10 * sv0 + c11 * sv1 + c12 * sv2
                n2 = c20 * sv0 + c21 * sv1 + c22 * sv2
                w0, w1, w2 = Wj[RW], Wj[RW + 1], Wj[RW + 2]
                l0, l1, l2 = Wj[RL], Wj[RL + 1], Wj[RL + 2]
                b0, b1, b2 = Wj[RB], Wj[RB + 1], Wj[RB + 2]
                nw = n0 * w0 + n1 * w1 + n2 * w2
                ww = Wj[RN]
                y0 = n0 * b0 + n1 * b1 + n2 * b2
                y1 = (b1 * t2 - b2 * t1) + (n1 * l2 - n2 * l1) + nw * w0 - ww * n0
                y2 = (b2 * t0 - b0 * t2) + (n2 * l0 - n0 * l2) + nw * w1 - ww * n1
                y3 = (b0 * t1 - b1 * t0) + (n0 * l1 - n1 * l0) + nw * w2 - ww * n2
                k0, k1, k2 = t1 * w2 - t2 * w1, t2 * w0 - t0 * w2, t0 * w1 - t1 * w0
                y4 = t0 * l0 + k0 * w0
                y5 = (t0 * l1 + t1 * l0) + (k0 * w1 + k1 * w0)
                y6 = t1 * l1 + k1 * w1
                y7 = (t0 * l2 + t2 * l0) + (k0 * w2 + k2 * w0)
                y8 = (t1 * l2 + t2 * l1) + (k1 * w2 + k2 * w1)
                y9 = t2 * l2 + k2 * w2
                Yr[c0], Yr[c0 + 1], Yr[c0 + 2], Yr[c0 + 3], Yr[c0 + 4] = y0, y1, y2, y3, y4
                Yr[c0 + 5], Yr[c0 + 6], Yr[c0 + 7], Yr[c0 + 8], Yr[c0 + 9] = y5, y6, y7, y8, y9
                bad += (((y0 + y1) + (y2 + y3)) + ((y4 + y5) + (y6 + y7)) + (y8 + y9)) * 0.0
    if bad == 0.0 and unit:
        return OK
    if not _finite(q) or not _finite(v) or not _finite(a):
        return NONFINITE
    return OVERFLOW if unit else BAD_QUATERNION


@njit(**_JIT)
def regressor(P, q, v, a, Y):
    """Y[:, :10 nb] = Y(q, v, a) on the regressor plan P; returns a status code."""
    return _regressor(bare(P), bare(q), bare(v), bare(a), bare(Y), _scratch())


@njit(**_JIT)
def regressor_rows(P, Q, V, A, Y, status):
    """Y[k, :, :10 nb] = Y(Q[k], V[k], A[k]) and status[k] for every sample k; returns
    BAD_SIZE when the arrays disagree on N, else OK."""
    N = Q.shape[0]
    if V.shape[0] != N or A.shape[0] != N or Y.shape[0] != N or status.shape[0] != N:
        return BAD_SIZE
    Pb, Qb, Vb, Ab, Yb = bare(P), bare(Q), bare(V), bare(A), bare(Y)
    W = _scratch()
    for k in range(N):
        status[k] = _regressor(Pb, Qb[k], Vb[k], Ab[k], Yb[k], W)
    return OK


_IN = types.Array(types.float64, 1, "C", readonly=True)      # a writable array converts
_IN_ROWS = types.Array(types.float64, 2, "C", readonly=True)
#: the one signature each entry is compiled for (``_inputs.compile_entry``)
SIGNATURES = {
    "regressor": (regressor, (_IN_ROWS, _IN, _IN, _IN, types.Array(types.float64, 2, "C"))),
    "regressor_rows": (regressor_rows, (_IN_ROWS, _IN_ROWS, _IN_ROWS, _IN_ROWS,
                                        types.Array(types.float64, 3, "C"),
                                        types.Array(types.int64, 1, "C"))),
}
