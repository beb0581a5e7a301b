"""The derivatives of inverse and forward dynamics for one state on the packed tree plan
(kernels/tree.py): (dtau/dq, dtau/dv, M) and (da/dq, da/dv, M^-1) as
``kernels/derivatives.world_rnea_derivatives`` and ``world_aba_derivatives`` give them,
specialized to joints that rotate about or slide along their frame's z axis and a free root.

The algorithm is the world-frame form of Kim's (2012) Table 5 that ``world_composites`` and
``world_directions`` evaluate, which is the RNEA derivative algorithm of Carpentier & Mansard
(2018, Algorithm 1): with spatial twists v_i, accelerations a_i (a_0 = -gravity), joint
columns s_t, the subtree sums Ic_j of the inertias, Xi_j of I_i ad_{v_i} + ad_{v_i}^T I_i +
Ybar(I_i v_i) and F_j of the body wrenches, and for a DOF s of body K with parent p:
c = [s, v_p], x = [a_p, s] - [v_p, c], e = [v_p, s] + [v_K, s],

    t in the subtree of K (body j):  dtau_t/dq_s = (Ic_j s_t).x + (Xi_j^T s_t).c,
                                     dtau_t/dqd_s = (Ic_j s_t).e - (Xi_j^T s_t).s,
    t an ancestor of K:              dtau_t/dq_s = s_t.(Ic_K x + Xi_K c - ad*_s F_K),
                                     dtau_t/dqd_s = s_t.(Ic_K e - Xi_K s),

and M[t, s] = (Ic_j s_t).s_s (the CRBA) plus the armature on the diagonal. Each expression is
a pairing of motions and forces built from brackets and inertias, so any one frame held fixed
at the instant serves: every root subtree uses its root body's frame (as kernels/tree_crba.py
does), which keeps the lever arms at the robot's size and makes a free root's six columns
the unit vectors of (v_lin, w); gravity enters as a_0 = (0, -R^T g), R the root's rotation.
Per body, the composites are 28 numbers: Ibar about the frame's origin (6), h = m c (3), m,
and of Xi the symmetric Sy (6) and h_v = Ic v (6), since its g block equals -h_v's linear
part (Xi x = (Sy w + hw x w, 2 hv x w), Xi^T x = (Sy w - hw x w - 2 hv x u, 0) for x = (w, u));
then the subtree wrench F (6). A single-DOF joint has [v_K, s] = [v_p, s], so c = -d,
e = 2 d, x = [a_p, s] + [v_p, d] with d = [v_p, s].

Entries ``inverse_dynamics_derivatives(P, q, v, a, out)``: out (3, nv, nv) = (dtau/dq in the
tangent space, dtau/dv, M), and ``forward_dynamics_derivatives(P, q, v, tau, out)``: (da/dq,
da/dv, M^-1) at a = FD(q, v, tau), from the same passes at a = 0, the tree-sparse L^T D L of M
and the passes moved to a (its docstring). Statuses as kernels/tree_rnea.py: BAD_SIZE for
lengths that do not match the plan (and more than ``MAX_DOFS`` DOFs) or strides that are
not a C-contiguous array's, NONFINITE for a NaN or
Inf in an input, BAD_QUATERNION for a free joint's quaternion 1e-6 or more off unit norm,
OVERFLOW for finite inputs and a non-finite result (every input and every output entry is
summed as x * 0), and SINGULAR for an M without positive pivots (the general path names the
joint).
Scratch on the stack, ``fastmath={'contract'}`` only and the GIL kept, as the other tree
kernels (kernels/jit.py says why).
"""
from numba import types

from .jit import njit
from .joint_kinematics import unit_quat
from .lie import quat_rotate_T
from .layout import OK, NONFINITE, BAD_QUATERNION, OVERFLOW, BAD_SIZE, SINGULAR
from .soa import (TP, TK, TQ, TV, GR, GP, GI, GC, GM, GA, GX, REVOLUTE, PRISMATIC, FREE,
                  joint_sincos)
from .tree import TOPO, NP, MAX_BODIES
from .views import bare, c_strides, stack_matrix

_JIT = dict(cache=True, nogil=False, fastmath={"contract"}, error_model="numpy")

#: DOFs whose scratch fits the stack (one free root and MAX_BODIES - 2 single-DOF joints)
MAX_DOFS = MAX_BODIES + 4

# body scratch columns, in the frame of the body's root: rotation (row-major), position,
# twist and acceleration (angular, linear), then the composites summed over the subtree:
# Ibar (xx yy zz xy xz yz), h, m, Sy (xx yy zz xy xz yz), Ic v (angular, linear), F
WR, WT, WV, WA = 0, 9, 12, 18
WI, WH, WM, WS, WHW, WF = 24, 30, 33, 34, 40, 46
NK = 28                 # composite numbers from WI
WE = 52                 # one past the last DOF of the subtree
WB = 53                 # the last body row of the subtree
WC, WN = 54, 55         # cos, sin of a revolute joint
WDA, WG = 56, 62        # forward dynamics: the change of acceleration, of the subtree's G
NW = 68
# DOF scratch columns: s, x, the angular part of c, e, Ic s, the angular part of Xi^T s, then
# the two vectors of the ancestors' entries; the body of the DOF, its parent DOF (-1: none)
DS, DX, DCW, DE, DP, DQ, DY, DZ, DB, DL = 0, 6, 12, 15, 21, 27, 30, 36, 42, 43
ND = 44

_bodies = stack_matrix(MAX_BODIES, NW)
_dofs = stack_matrix(MAX_DOFS, ND)
_mass = stack_matrix(MAX_DOFS, MAX_DOFS)       # M and its L^T D L factors (forward dynamics)
_acc = stack_matrix(2, MAX_DOFS)


@njit(inline="always", **_JIT)
def _get6(x, k):
    return x[k], x[k + 1], x[k + 2], x[k + 3], x[k + 4], x[k + 5]


@njit(inline="always", **_JIT)
def _set6(x, k, a0, a1, a2, a3, a4, a5):
    x[k], x[k + 1], x[k + 2], x[k + 3], x[k + 4], x[k + 5] = a0, a1, a2, a3, a4, a5


@njit(inline="always", **_JIT)
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(inline="always", **_JIT)
def _bracket(w0, w1, w2, u0, u1, u2, x, k):
    """[V, x[k:k+6]] = (w x xw, w x xu + u x xw) for V = (w, u)."""
    a0, a1, a2, b0, b1, b2 = _get6(x, k)
    r0, r1, r2 = _cross(w0, w1, w2, a0, a1, a2)
    s0, s1, s2 = _cross(w0, w1, w2, b0, b1, b2)
    t0, t1, t2 = _cross(u0, u1, u2, a0, a1, a2)
    return r0, r1, r2, s0 + t0, s1 + t1, s2 + t2


@njit(inline="always", **_JIT)
def _dof(D, t, body, V, vp, ap, single):
    """Row t of the DOF scratch, whose column s is already in D[t, DS:DS + 6]: x, c's angular
    part and e for the parent's twist vp and acceleration ap (rows of the body scratch) and
    the body's twist V (a row too; read for a free joint's columns only)."""
    Dt = D[t]
    Dt[DB] = body
    pw0, pw1, pw2, pu0, pu1, pu2 = _get6(vp, WV)
    d0, d1, d2, d3, d4, d5 = _bracket(pw0, pw1, pw2, pu0, pu1, pu2, Dt, DS)        # [v_p, s]
    x0, x1, x2, x3, x4, x5 = _bracket(ap[WA], ap[WA + 1], ap[WA + 2], ap[WA + 3], ap[WA + 4],
                                      ap[WA + 5], Dt, DS)                       # [a_p, s]
    Dt[DCW], Dt[DCW + 1], Dt[DCW + 2] = -d0, -d1, -d2
    if single:          # [v_K, s] = [v_p, s]: e = 2 d, x = [a_p, s] + [v_p, d]
        Dt[DE], Dt[DE + 1], Dt[DE + 2] = 2.0 * d0, 2.0 * d1, 2.0 * d2
        Dt[DE + 3], Dt[DE + 4], Dt[DE + 5] = 2.0 * d3, 2.0 * d4, 2.0 * d5
        e0, e1, e2 = _cross(pw0, pw1, pw2, d0, d1, d2)
        f0, f1, f2 = _cross(pw0, pw1, pw2, d3, d4, d5)
        g0, g1, g2 = _cross(pu0, pu1, pu2, d0, d1, d2)
        x0, x1, x2 = x0 + e0, x1 + e1, x2 + e2
        x3, x4, x5 = x3 + f0 + g0, x4 + f1 + g1, x5 + f2 + g2
    else:               # a free root: v_p = 0, so c = 0, x = [a_p, s], e = [v_K, s]
        e0, e1, e2, e3, e4, e5 = _bracket(V[WV], V[WV + 1], V[WV + 2], V[WV + 3], V[WV + 4],
                                          V[WV + 5], Dt, DS)
        _set6(Dt, DE, e0, e1, e2, e3, e4, e5)
    _set6(Dt, DX, x0, x1, x2, x3, x4, x5)


@njit(inline="always", **_JIT)
def _ic(C, w0, w1, w2, u0, u1, u2):
    """Ic x for x = (w, u) and the composite row C: (Ibar w + h x u, m u - h x w)."""
    i00, i11, i22, i01, i02, i12 = _get6(C, WI)
    h0, h1, h2, m = C[WH], C[WH + 1], C[WH + 2], C[WM]
    a0, a1, a2 = _cross(h0, h1, h2, u0, u1, u2)
    b0, b1, b2 = _cross(h0, h1, h2, w0, w1, w2)
    return (i00 * w0 + i01 * w1 + i02 * w2 + a0, i01 * w0 + i11 * w1 + i12 * w2 + a1,
            i02 * w0 + i12 * w1 + i22 * w2 + a2, m * u0 - b0, m * u1 - b1, m * u2 - b2)


@njit(inline="always", **_JIT)
def _sy(C, w0, w1, w2):
    """Sy w for the composite row C (Sy symmetric)."""
    s00, s11, s22, s01, s02, s12 = _get6(C, WS)
    return (s00 * w0 + s01 * w1 + s02 * w2, s01 * w0 + s11 * w1 + s12 * w2,
            s02 * w0 + s12 * w1 + s22 * w2)


@njit(inline="always", **_JIT)
def _sy_hw(C, w0, w1, w2):
    """Sy w + hw x w (the angular part of Xi (w, .), its linear part being 2 hv x w)."""
    a0, a1, a2 = _sy(C, w0, w1, w2)
    c0, c1, c2 = _cross(C[WHW], C[WHW + 1], C[WHW + 2], w0, w1, w2)
    return a0 + c0, a1 + c1, a2 + c2


@njit(inline="always", **_JIT)
def _body(Wi, g):
    """The body's composites in its root's frame from the plan row g, its pose (R, p) and its
    twist and acceleration in Wi: Ibar' = R Ibar R^T - [Rh][p] - [p][Rh] - m [p]^2,
    h' = R h + m p; Sy = A + A^T + u h'^T + h' u^T - 2 (h'.u) 1 with A = Ibar' [w];
    Ic v; the wrench F = Ic a + v x* Ic v (Kim 2012, eq. 42)."""
    r00, r01, r02, r10, r11, r12 = _get6(Wi, WR)
    r20, r21, r22 = Wi[WR + 6], Wi[WR + 7], Wi[WR + 8]
    p0, p1, p2 = Wi[WT], Wi[WT + 1], Wi[WT + 2]
    j00, j11, j22, j01, j02, j12 = _get6(g, GI)
    c0, c1, c2, m = g[GC], g[GC + 1], g[GC + 2], g[GM]
    # B = R Ibar, then R Ibar R^T (upper triangle)
    b00 = r00 * j00 + r01 * j01 + r02 * j02
    b01 = r00 * j01 + r01 * j11 + r02 * j12
    b02 = r00 * j02 + r01 * j12 + r02 * j22
    b10 = r10 * j00 + r11 * j01 + r12 * j02
    b11 = r10 * j01 + r11 * j11 + r12 * j12
    b12 = r10 * j02 + r11 * j12 + r12 * j22
    b20 = r20 * j00 + r21 * j01 + r22 * j02
    b21 = r20 * j01 + r21 * j11 + r22 * j12
    b22 = r20 * j02 + r21 * j12 + r22 * j22
    k00 = b00 * r00 + b01 * r01 + b02 * r02
    k11 = b10 * r10 + b11 * r11 + b12 * r12
    k22 = b20 * r20 + b21 * r21 + b22 * r22
    k01 = b00 * r10 + b01 * r11 + b02 * r12
    k02 = b00 * r20 + b01 * r21 + b02 * r22
    k12 = b10 * r20 + b11 * r21 + b12 * r22
    # Rh, then the parallel axes
    t0 = r00 * c0 + r01 * c1 + r02 * c2
    t1 = r10 * c0 + r11 * c1 + r12 * c2
    t2 = r20 * c0 + r21 * c1 + r22 * c2
    mp0, mp1, mp2 = m * p0, m * p1, m * p2
    dg = 2.0 * (t0 * p0 + t1 * p1 + t2 * p2) + (mp0 * p0 + mp1 * p1 + mp2 * p2)
    k00 += dg - 2.0 * p0 * t0 - mp0 * p0
    k11 += dg - 2.0 * p1 * t1 - mp1 * p1
    k22 += dg - 2.0 * p2 * t2 - mp2 * p2
    k01 -= p1 * t0 + t1 * p0 + mp0 * p1
    k02 -= p2 * t0 + t2 * p0 + mp0 * p2
    k12 -= p2 * t1 + t2 * p1 + mp1 * p2
    h0, h1, h2 = t0 + mp0, t1 + mp1, t2 + mp2
    w0, w1, w2, u0, u1, u2 = _get6(Wi, WV)
    # A = Ibar' [w]: row r is Ibar'[r, :] x w
    a00 = k01 * w2 - k02 * w1
    a11 = k12 * w0 - k01 * w2
    a22 = k02 * w1 - k12 * w0
    a01 = k02 * w0 - k00 * w2
    a10 = k11 * w2 - k12 * w1
    a02 = k00 * w1 - k01 * w0
    a20 = k12 * w2 - k22 * w1
    a12 = k01 * w1 - k11 * w0
    a21 = k22 * w0 - k02 * w2
    hu = h0 * u0 + h1 * u1 + h2 * u2
    Wi[WS] = 2.0 * (a00 + u0 * h0 - hu)
    Wi[WS + 1] = 2.0 * (a11 + u1 * h1 - hu)
    Wi[WS + 2] = 2.0 * (a22 + u2 * h2 - hu)
    Wi[WS + 3] = a01 + a10 + u0 * h1 + h0 * u1
    Wi[WS + 4] = a02 + a20 + u0 * h2 + h0 * u2
    Wi[WS + 5] = a12 + a21 + u1 * h2 + h1 * u2
    _set6(Wi, WI, k00, k11, k22, k01, k02, k12)
    Wi[WH], Wi[WH + 1], Wi[WH + 2], Wi[WM] = h0, h1, h2, m
    n0, n1, n2, l0, l1, l2 = _ic(Wi, w0, w1, w2, u0, u1, u2)
    _set6(Wi, WHW, n0, n1, n2, l0, l1, l2)
    f0, f1, f2, f3, f4, f5 = _ic(Wi, Wi[WA], Wi[WA + 1], Wi[WA + 2], Wi[WA + 3], Wi[WA + 4],
                                 Wi[WA + 5])
    x0, x1, x2 = _cross(w0, w1, w2, n0, n1, n2)
    y0, y1, y2 = _cross(u0, u1, u2, l0, l1, l2)
    z0, z1, z2 = _cross(w0, w1, w2, l0, l1, l2)
    Wi[WF], Wi[WF + 1], Wi[WF + 2] = f0 + x0 + y0, f1 + x1 + y1, f2 + x2 + y2
    Wi[WF + 3], Wi[WF + 4], Wi[WF + 5] = f3 + z0, f4 + z1, f5 + z2


@njit(**_JIT)
def inverse_dynamics_derivatives(P, q, v, a, out):
    """out[0] = dtau/dq (tangent space), out[1] = dtau/dv, out[2] = M at (q, v, a) of the
    model packed in P; returns a status code (module docstring)."""
    nb = P.shape[0] - 1
    if nb < 1 or nb >= MAX_BODIES or P.shape[1] != NP:
        return BAD_SIZE
    nv = int(P[0, TOPO + TV])
    if (q.shape[0] != int(P[0, TOPO + TQ]) or v.shape[0] != nv or a.shape[0] != nv
            or nv > MAX_DOFS or out.shape[0] != 3 or out.shape[1] != nv or out.shape[2] != nv
            or not (c_strides(P) and c_strides(q) and c_strides(v) and c_strides(a)
                    and c_strides(out))):
        return BAD_SIZE
    # views without reference counts (kernels/views.py): the caller holds the arrays
    P, q, v, a, out = bare(P), bare(q), bare(v), bare(a), bare(out)
    W = _bodies()
    D = _dofs()
    bad, unit = _forward(P, q, v, a, W, D, nb, True)
    _subtree_sums(P, W, nb)
    _dof_inertias(P, W, D, nb)
    _dof_wrenches(P, W, D, nb)
    M = out[2]
    bad += _fill(P, W, D, out[0], out[1], M, nv, True)
    for i in range(1, nb + 1):
        if P[i, TOPO + TK] != FREE:
            jv = int(P[i, TOPO + TV])
            M[jv, jv] += P[i, GA]
    if bad == 0.0 and unit:
        return OK
    if not (_finite(q) and _finite(v) and _finite(a)):
        return NONFINITE
    return OVERFLOW if unit else BAD_QUATERNION


@njit(**_JIT)
def forward_dynamics_derivatives(P, q, v, tau, out):
    """out[0] = da/dq (tangent space), out[1] = da/dv, out[2] = M^-1 at a = FD(q, v, tau) of
    the model packed in P; returns a status code (SINGULAR for a mass matrix without a
    positive pivot; the others as ``inverse_dynamics_derivatives``).

    As ``kernels/derivatives.world_aba_derivatives`` (Carpentier & Mansard 2018 obtain the
    ABA derivatives the same way): the passes at a = 0 give M (the composites' CRBA) and
    b = tau(q, v, 0); a = M^-1 (tau - b) by the tree-sparse L^T D L factorization
    (Featherstone 2008, §6.5); the RNEA is moved to that a (it is linear in a); then
    da/dq = -M^-1 dtau/dq, da/dv = -M^-1 dtau/dv, da/dtau = M^-1."""
    nb = P.shape[0] - 1
    if nb < 1 or nb >= MAX_BODIES or P.shape[1] != NP:
        return BAD_SIZE
    nv = int(P[0, TOPO + TV])
    if (q.shape[0] != int(P[0, TOPO + TQ]) or v.shape[0] != nv or tau.shape[0] != nv
            or nv > MAX_DOFS or out.shape[0] != 3 or out.shape[1] != nv or out.shape[2] != nv
            or not (c_strides(P) and c_strides(q) and c_strides(v) and c_strides(tau)
                    and c_strides(out))):
        return BAD_SIZE
    P, q, v, tau, out = bare(P), bare(q), bare(v), bare(tau), bare(out)
    W = _bodies()
    D = _dofs()
    H = _mass()
    A = _acc()
    acc = A[0]
    bad, unit = _forward(P, q, v, v, W, D, nb, False)
    _subtree_sums(P, W, nb)
    _dof_inertias(P, W, D, nb)
    for t in range(nv):
        bad += tau[t] * 0.0
    if bad != 0.0 or not unit:
        if not (_finite(q) and _finite(v) and _finite(tau)):
            return NONFINITE
        return OVERFLOW if unit else BAD_QUATERNION
    _mass_and_bias(P, W, D, H, tau, acc, nb, nv)
    if _ltdl(H, D, nv) >= 0:
        return SINGULAR
    _ltdl_solve(H, D, acc, nv)
    _add_accelerations(P, W, D, acc, nb)
    _dof_wrenches(P, W, D, nb)
    dq, dv, Minv = out[0], out[1], out[2]
    bad = _fill(P, W, D, dq, dv, Minv, nv, False)
    _solves(H, W, D, dq, dv, Minv, nv)
    # -M^-1 dtau, and every entry into the status, by columns (no chain of dependent sums)
    ck = A[1]
    for c in range(nv):
        ck[c] = 0.0
    for r in range(nv):
        for c in range(nv):
            x, y = -dq[r, c], -dv[r, c]
            dq[r, c] = x
            dv[r, c] = y
            ck[c] += (x + y + Minv[r, c]) * 0.0
    for c in range(nv):
        bad += ck[c]
    return OK if bad == 0.0 else OVERFLOW


@njit(inline="always", **_JIT)
def _forward(P, q, v, a, W, D, nb, use_a):
    """Each body's pose, twist, acceleration (a = 0 unless ``use_a``) and own composites in
    its root's frame, and each DOF's s, x, c, e and parent DOF; returns (bad, unit): the
    inputs summed as x * 0 and whether every free joint's quaternion has unit norm."""
    for i in range(1, nb + 1):      # independent of the recursion: overlapped
        if P[i, TOPO + TK] == REVOLUTE:
            x = q[int(P[i, TOPO + TQ])]
            s, c = joint_sincos(x)
            W[i, WC], W[i, WN] = c, s
    mg0, mg1, mg2 = -P[0, GX], -P[0, GX + 1], -P[0, GX + 2]
    bad = 0.0
    unit = True
    # row 0 as the parent of a root: zero twist; its acceleration is set per root below
    W0 = W[0]
    for k in range(6):
        W0[WV + k] = 0.0
        W0[WA + k] = 0.0
    for i in range(1, nb + 1):
        g = P[i]
        p = int(g[TOPO + TP])
        kind = g[TOPO + TK]
        jq, jv = int(g[TOPO + TQ]), int(g[TOPO + TV])
        Wi = W[i]
        # the joint transform T_{p,i} = X Tj(q): R_l = X_R Rz(q) or X_R, p_l = X_p (+ q z)
        r00, r01, r02, r10, r11, r12 = _get6(g, GR)
        r20, r21, r22 = g[GR + 6], g[GR + 7], g[GR + 8]
        l0, l1, l2 = g[GP], g[GP + 1], g[GP + 2]
        x = q[jq]
        if kind == REVOLUTE:
            c, s = Wi[WC], Wi[WN]
            r00, r01 = c * r00 + s * r01, c * r01 - s * r00
            r10, r11 = c * r10 + s * r11, c * r11 - s * r10
            r20, r21 = c * r20 + s * r21, c * r21 - s * r20
        elif kind == PRISMATIC:
            l0, l1, l2 = l0 + r02 * x, l1 + r12 * x, l2 + r22 * x
        if kind == FREE:
            qd = qdd = 0.0
            bad += (q[jq] + q[jq + 1] + q[jq + 2] + q[jq + 3] + q[jq + 4] + q[jq + 5]
                    + q[jq + 6]) * 0.0
            for k in range(6):
                bad += (v[jv + k] + (a[jv + k] if use_a else 0.0)) * 0.0
        else:
            qd = v[jv]
            qdd = a[jv] if use_a else 0.0
            bad += (x + qd + qdd) * 0.0
        if p == 0:
            # a root: its own frame, gravity R_l^T (-g) (and Rq^T of a free joint's rotation)
            u0 = r00 * mg0 + r10 * mg1 + r20 * mg2
            u1 = r01 * mg0 + r11 * mg1 + r21 * mg2
            u2 = r02 * mg0 + r12 * mg1 + r22 * mg2
            if kind == FREE:
                qx, qy, qz, qw, ok = unit_quat(q, jq + 3)
                unit &= ok
                u0, u1, u2 = quat_rotate_T(qx, qy, qz, qw, u0, u1, u2)
            W0[WA + 3], W0[WA + 4], W0[WA + 5] = u0, u1, u2
            Wi[WR], Wi[WR + 1], Wi[WR + 2], Wi[WR + 3], Wi[WR + 4] = 1.0, 0.0, 0.0, 0.0, 1.0
            Wi[WR + 5], Wi[WR + 6], Wi[WR + 7], Wi[WR + 8] = 0.0, 0.0, 0.0, 1.0
            Wi[WT], Wi[WT + 1], Wi[WT + 2] = 0.0, 0.0, 0.0
            z0, z1, z2, o0, o1, o2 = 0.0, 0.0, 1.0, 0.0, 0.0, 0.0
        else:
            Wp = W[p]
            R = Wp[WR:WR + 9]
            R0, R1, R2, R3, R4, R5 = _get6(R, 0)
            R6, R7, R8 = R[6], R[7], R[8]
            Wi[WR] = R0 * r00 + R1 * r10 + R2 * r20
            Wi[WR + 1] = R0 * r01 + R1 * r11 + R2 * r21
            z0 = R0 * r02 + R1 * r12 + R2 * r22
            Wi[WR + 3] = R3 * r00 + R4 * r10 + R5 * r20
            Wi[WR + 4] = R3 * r01 + R4 * r11 + R5 * r21
            z1 = R3 * r02 + R4 * r12 + R5 * r22
            Wi[WR + 6] = R6 * r00 + R7 * r10 + R8 * r20
            Wi[WR + 7] = R6 * r01 + R7 * r11 + R8 * r21
            z2 = R6 * r02 + R7 * r12 + R8 * r22
            Wi[WR + 2], Wi[WR + 5], Wi[WR + 8] = z0, z1, z2
            o0 = Wp[WT] + R0 * l0 + R1 * l1 + R2 * l2
            o1 = Wp[WT + 1] + R3 * l0 + R4 * l1 + R5 * l2
            o2 = Wp[WT + 2] + R6 * l0 + R7 * l1 + R8 * l2
            Wi[WT], Wi[WT + 1], Wi[WT + 2] = o0, o1, o2
        Wp = W[p]
        if kind == FREE:
            # S maps (v_lin, w) to (angular, linear); v_p = 0 and [V, V] = 0
            for k in range(6):
                Wi[WV + k] = v[jv + (k + 3) % 6]
                Wi[WA + k] = Wp[WA + k] + (a[jv + (k + 3) % 6] if use_a else 0.0)
            for k in range(6):
                Dt = D[jv + k]
                for r in range(6):
                    Dt[DS + r] = 0.0
                Dt[DS + (k + 3) % 6] = 1.0
                _dof(D, jv + k, i, Wi, Wp, Wp, False)
                D[jv + k, DL] = jv + k - 1 if k > 0 else -1
            Wi[WE] = jv + 6
        else:
            # s = (z, p x z) or (0, z); V = V_p + s qd, A = A_p + s qdd + qd [V_p, s]
            Dt = D[jv]
            if kind == REVOLUTE:
                s0, s1, s2 = z0, z1, z2
                s3, s4, s5 = _cross(o0, o1, o2, z0, z1, z2)
            else:
                s0, s1, s2, s3, s4, s5 = 0.0, 0.0, 0.0, z0, z1, z2
            _set6(Dt, DS, s0, s1, s2, s3, s4, s5)
            _dof(D, jv, i, Wi, Wp, Wp, True)
            Dt[DL] = Wp[WE] - 1 if p > 0 else -1
            h = 0.5 * qd
            for k in range(6):
                Wi[WV + k] = Wp[WV + k] + Dt[DS + k] * qd
                Wi[WA + k] = Wp[WA + k] + Dt[DS + k] * qdd + Dt[DE + k] * h
            Wi[WE] = jv + 1
        Wi[WB] = i
        _body(Wi, g)
    return bad, unit


@njit(inline="always", **_JIT)
def _subtree_sums(P, W, nb):
    """Composites, children first, within each root's frame; the subtree's DOF and body
    ranges."""
    for i in range(nb, 0, -1):
        p = int(P[i, TOPO + TP])
        if p > 0:
            Wi = W[i]
            Wp = W[p]
            for k in range(NK):
                Wp[WI + k] += Wi[WI + k]
            if Wi[WE] > Wp[WE]:
                Wp[WE] = Wi[WE]
            if Wi[WB] > Wp[WB]:
                Wp[WB] = Wi[WB]


@njit(inline="always", **_JIT)
def _dof_inertias(P, W, D, nb):
    """Per DOF after the subtree sums: Ic s, the angular part of Xi^T s (its linear part is 0)
    and, below a root, z = Ic e - Xi s of the ancestors' dtau/dqd entries (no a in them)."""
    for j in range(1, nb + 1):
        C = W[j]
        first = int(P[j, TOPO + TV])
        below = P[j, TOPO + TP] > 0
        for t in range(first, first + 6 if P[j, TOPO + TK] == FREE else first + 1):
            Dt = D[t]
            w0, w1, w2, u0, u1, u2 = _get6(Dt, DS)
            f0, f1, f2, f3, f4, f5 = _ic(C, w0, w1, w2, u0, u1, u2)
            _set6(Dt, DP, f0, f1, f2, f3, f4, f5)
            # Sy w - hw x w - 2 hv x u
            m0, m1, m2 = _sy(C, w0, w1, w2)
            k0, k1, k2 = _cross(C[WHW], C[WHW + 1], C[WHW + 2], w0, w1, w2)
            v0, v1, v2 = _cross(C[WHW + 3], C[WHW + 4], C[WHW + 5], u0, u1, u2)
            Dt[DQ], Dt[DQ + 1] = m0 - k0 - 2.0 * v0, m1 - k1 - 2.0 * v1
            Dt[DQ + 2] = m2 - k2 - 2.0 * v2
            if below:
                z0, z1, z2, z3, z4, z5 = _ic(C, Dt[DE], Dt[DE + 1], Dt[DE + 2], Dt[DE + 3],
                                             Dt[DE + 4], Dt[DE + 5])
                k0, k1, k2 = _sy_hw(C, w0, w1, w2)
                c0, c1, c2 = _cross(C[WHW + 3], C[WHW + 4], C[WHW + 5], w0, w1, w2)
                Dt[DZ], Dt[DZ + 1], Dt[DZ + 2] = z0 - k0, z1 - k1, z2 - k2
                Dt[DZ + 3], Dt[DZ + 4], Dt[DZ + 5] = z3 - 2.0 * c0, z4 - 2.0 * c1, z5 - 2.0 * c2


@njit(inline="always", **_JIT)
def _dof_wrenches(P, W, D, nb):
    """Per DOF below a root: y = Ic x + Xi c - ad*_s F of the ancestors' dtau/dq entries, with
    Xi c = (Sy c_w + hw x c_w, 2 hv x c_w) and -ad*_s F = (s_w x n + s_u x f, s_w x f)."""
    for j in range(1, nb + 1):
        if P[j, TOPO + TP] == 0:
            continue
        C = W[j]
        t = int(P[j, TOPO + TV])        # below a root: one DOF
        Dt = D[t]
        w0, w1, w2, u0, u1, u2 = _get6(Dt, DS)
        y0, y1, y2, y3, y4, y5 = _ic(C, Dt[DX], Dt[DX + 1], Dt[DX + 2], Dt[DX + 3], Dt[DX + 4],
                                     Dt[DX + 5])
        cw0, cw1, cw2 = Dt[DCW], Dt[DCW + 1], Dt[DCW + 2]
        k0, k1, k2 = _sy_hw(C, cw0, cw1, cw2)
        c0, c1, c2 = _cross(C[WHW + 3], C[WHW + 4], C[WHW + 5], cw0, cw1, cw2)
        n0, n1, n2, l0, l1, l2 = _get6(C, WF)
        a0, a1, a2 = _cross(w0, w1, w2, n0, n1, n2)
        b0, b1, b2 = _cross(u0, u1, u2, l0, l1, l2)
        d0, d1, d2 = _cross(w0, w1, w2, l0, l1, l2)
        Dt[DY], Dt[DY + 1], Dt[DY + 2] = y0 + k0 + a0 + b0, y1 + k1 + a1 + b1, y2 + k2 + a2 + b2
        Dt[DY + 3] = y3 + 2.0 * c0 + d0
        Dt[DY + 4] = y4 + 2.0 * c1 + d1
        Dt[DY + 5] = y5 + 2.0 * c2 + d2


@njit(inline="always", **_JIT)
def _fill(P, W, D, dq, dv, M, nv, with_m):
    """dtau/dq and dtau/dv into dq and dv, every entry (module docstring), and with ``with_m``
    M without the armature; returns their entries summed as x * 0."""
    bad = 0.0
    for s in range(nv):
        Ds = D[s]
        K = int(Ds[DB])
        fK = int(P[K, TOPO + TV])
        LK = int(W[K, WE])
        x0, x1, x2, x3, x4, x5 = _get6(Ds, DX)
        cw0, cw1, cw2 = Ds[DCW], Ds[DCW + 1], Ds[DCW + 2]
        e0, e1, e2, e3, e4, e5 = _get6(Ds, DE)
        s0, s1, s2, s3, s4, s5 = _get6(Ds, DS)
        # the ancestors' rows (and zeros for the other bodies before K)
        for t in range(fK):
            Dt = D[t]
            if W[int(Dt[DB]), WB] >= K:
                t0, t1, t2, t3, t4, t5 = _get6(Dt, DS)
                y = (t0 * Ds[DY] + t1 * Ds[DY + 1] + t2 * Ds[DY + 2] + t3 * Ds[DY + 3]
                     + t4 * Ds[DY + 4] + t5 * Ds[DY + 5])
                z = (t0 * Ds[DZ] + t1 * Ds[DZ + 1] + t2 * Ds[DZ + 2] + t3 * Ds[DZ + 3]
                     + t4 * Ds[DZ + 4] + t5 * Ds[DZ + 5])
                dq[t, s] = y
                dv[t, s] = z
                bad += (y + z) * 0.0
            else:
                dq[t, s] = 0.0
                dv[t, s] = 0.0
                if with_m:
                    M[t, s] = 0.0
        # the subtree's rows: Ic_j s_t and Xi_j^T s_t against x, c, e and s
        for t in range(fK, LK):
            Dt = D[t]
            p0, p1, p2, p3, p4, p5 = _get6(Dt, DP)
            k0, k1, k2 = Dt[DQ], Dt[DQ + 1], Dt[DQ + 2]
            y = (p0 * x0 + p1 * x1 + p2 * x2 + p3 * x3 + p4 * x4 + p5 * x5
                 + (k0 * cw0 + k1 * cw1 + k2 * cw2))
            z = (p0 * e0 + p1 * e1 + p2 * e2 + p3 * e3 + p4 * e4 + p5 * e5
                 - (k0 * s0 + k1 * s1 + k2 * s2))
            dq[t, s] = y
            dv[t, s] = z
            bad += (y + z) * 0.0
            if with_m and t >= s:
                m = p0 * s0 + p1 * s1 + p2 * s2 + p3 * s3 + p4 * s4 + p5 * s5
                M[t, s] = m
                M[s, t] = m
                bad += m * 0.0
        for t in range(LK, nv):
            dq[t, s] = 0.0
            dv[t, s] = 0.0
            if with_m:
                M[t, s] = 0.0
    return bad


@njit(inline="always", **_JIT)
def _mass_and_bias(P, W, D, H, tau, acc, nb, nv):
    """After the passes at a = 0: H = M (lower triangle: the CRBA of the composites, the
    armature on its diagonal) and acc = tau - b, b_t = s_t . F_j the torques at a = 0."""
    for s in range(nv):
        Ds = D[s]
        K = int(Ds[DB])
        s0, s1, s2, s3, s4, s5 = _get6(Ds, DS)
        for t in range(s, int(W[K, WE])):
            Dt = D[t]
            H[t, s] = (Dt[DP] * s0 + Dt[DP + 1] * s1 + Dt[DP + 2] * s2 + Dt[DP + 3] * s3
                       + Dt[DP + 4] * s4 + Dt[DP + 5] * s5)
        C = W[K]
        acc[s] = tau[s] - (s0 * C[WF] + s1 * C[WF + 1] + s2 * C[WF + 2] + s3 * C[WF + 3]
                           + s4 * C[WF + 4] + s5 * C[WF + 5])
    for i in range(1, nb + 1):
        if P[i, TOPO + TK] != FREE:
            jv = int(P[i, TOPO + TV])
            H[jv, jv] += P[i, GA]


@njit(inline="always", **_JIT)
def _ltdl(H, D, n):
    """In place H = L^T D L with the tree sparsity of the parent DOFs in D (Featherstone
    2008, Table 6.3), lower triangle; returns -1, or the DOF whose pivot vanished."""
    scale = 0.0
    for k in range(n):
        scale = max(scale, abs(H[k, k]))
    for k in range(n - 1, -1, -1):
        if not H[k, k] > 1e-14 * scale:
            return k
        i = int(D[k, DL])
        while i >= 0:
            f = H[k, i] / H[k, k]
            j = i
            while j >= 0:
                H[i, j] -= f * H[k, j]
                j = int(D[j, DL])
            H[k, i] = f
            i = int(D[i, DL])
    return -1


@njit(inline="always", **_JIT)
def _ltdl_solve(H, D, x, n):
    """x <- (L^T D L)^-1 x (Featherstone 2008, Table 6.4): L^-T, D^-1, then L^-1."""
    for i in range(n - 1, -1, -1):
        j = int(D[i, DL])
        while j >= 0:
            x[j] -= H[i, j] * x[i]
            j = int(D[j, DL])
    for i in range(n):
        x[i] /= H[i, i]
    for i in range(n):
        j = int(D[i, DL])
        while j >= 0:
            x[i] -= H[i, j] * x[j]
            j = int(D[j, DL])


@njit(inline="always", **_JIT)
def _solves(H, W, D, X, Y, Z, n):
    """X <- M^-1 X, Y <- M^-1 Y and Z <- M^-1 (M = L^T D L in H; Featherstone 2008, Table
    6.4 by rows, the three at once). Z starts as the identity: in the L^-T sweep its row i is
    zero outside the DOFs of i's subtree, and M^-1 is symmetric, so L^-1 runs on the upper
    triangle alone, which is then mirrored."""
    for r in range(n):
        for c in range(n):
            Z[r, c] = 0.0
        Z[r, r] = 1.0
    for i in range(n - 1, -1, -1):
        e = int(W[int(D[i, DB]), WE])
        j = int(D[i, DL])
        while j >= 0:
            f = H[i, j]
            for c in range(n):
                X[j, c] -= f * X[i, c]
                Y[j, c] -= f * Y[i, c]
            for c in range(i, e):
                Z[j, c] -= f * Z[i, c]
            j = int(D[j, DL])
    for i in range(n):
        f = 1.0 / H[i, i]
        for c in range(n):
            X[i, c] *= f
            Y[i, c] *= f
        for c in range(i, int(W[int(D[i, DB]), WE])):
            Z[i, c] *= f
    for i in range(n):
        j = int(D[i, DL])
        while j >= 0:
            f = H[i, j]
            for c in range(n):
                X[i, c] -= f * X[j, c]
                Y[i, c] -= f * Y[j, c]
            for c in range(i, n):
                Z[i, c] -= f * Z[j, c]
            j = int(D[j, DL])
    for r in range(n):
        for c in range(r):
            Z[r, c] = Z[c, r]


@njit(inline="always", **_JIT)
def _add_accelerations(P, W, D, acc, nb):
    """The passes at a = 0 moved to a (all linear in a): per body da_i = da_p + sum_t s_t a_t,
    per DOF x += [da_p, s], and F_j += sum over j's subtree of I_i da_i = Ic_j da_j + sum over
    the children c of G_c, G_c = sum over c's subtree of a_t Ic s_t (so no single body's
    inertia is needed; as ``kernels/derivatives._world_add_accelerations``)."""
    W0 = W[0]
    for k in range(6):
        W0[WDA + k] = 0.0
    for i in range(1, nb + 1):
        p = int(P[i, TOPO + TP])
        Wi, Wp = W[i], W[p]
        d0, d1, d2, d3, d4, d5 = _get6(Wp, WDA)
        g0 = g1 = g2 = g3 = g4 = g5 = 0.0
        first = int(P[i, TOPO + TV])
        for t in range(first, first + 6 if P[i, TOPO + TK] == FREE else first + 1):
            Dt = D[t]
            x0, x1, x2, x3, x4, x5 = _bracket(Wp[WDA], Wp[WDA + 1], Wp[WDA + 2], Wp[WDA + 3],
                                              Wp[WDA + 4], Wp[WDA + 5], Dt, DS)
            Dt[DX] += x0
            Dt[DX + 1] += x1
            Dt[DX + 2] += x2
            Dt[DX + 3] += x3
            Dt[DX + 4] += x4
            Dt[DX + 5] += x5
            at = acc[t]
            d0, d1, d2 = d0 + Dt[DS] * at, d1 + Dt[DS + 1] * at, d2 + Dt[DS + 2] * at
            d3, d4, d5 = d3 + Dt[DS + 3] * at, d4 + Dt[DS + 4] * at, d5 + Dt[DS + 5] * at
            g0, g1, g2 = g0 + Dt[DP] * at, g1 + Dt[DP + 1] * at, g2 + Dt[DP + 2] * at
            g3, g4, g5 = g3 + Dt[DP + 3] * at, g4 + Dt[DP + 4] * at, g5 + Dt[DP + 5] * at
        _set6(Wi, WDA, d0, d1, d2, d3, d4, d5)
        _set6(Wi, WG, g0, g1, g2, g3, g4, g5)
    for i in range(nb, 0, -1):
        Wi = W[i]
        f0, f1, f2, f3, f4, f5 = _ic(Wi, Wi[WDA], Wi[WDA + 1], Wi[WDA + 2], Wi[WDA + 3],
                                     Wi[WDA + 4], Wi[WDA + 5])
        Wi[WF] += f0
        Wi[WF + 1] += f1
        Wi[WF + 2] += f2
        Wi[WF + 3] += f3
        Wi[WF + 4] += f4
        Wi[WF + 5] += f5
        p = int(P[i, TOPO + TP])
        if p > 0:
            Wp = W[p]
            for k in range(6):
                Wp[WF + k] += Wi[WG + k]
                Wp[WG + k] += Wi[WG + k]


@njit(inline="always", **_JIT)
def _finite(x):
    """No NaN or Inf in the vector x."""
    s = 0.0
    for k in range(x.shape[0]):
        s += x[k] * 0.0
    return s == 0.0


_VEC = types.Array(types.float64, 1, "C")
_MAT = types.Array(types.float64, 2, "C", readonly=True)
_OUT = types.Array(types.float64, 3, "C")
#: the one signature each entry is compiled for (``_inputs.compile_entry``)
SIGNATURES = {
    "inverse_dynamics_derivatives": (inverse_dynamics_derivatives,
                                     (_MAT, _VEC, _VEC, _VEC, _OUT)),
    "forward_dynamics_derivatives": (forward_dynamics_derivatives,
                                     (_MAT, _VEC, _VEC, _VEC, _OUT)),
}
