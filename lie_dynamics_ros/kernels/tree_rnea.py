"""Single-state inverse dynamics on the packed tree plan (kernels/tree.py): the recursive
Newton-Euler algorithm of Kim (2012), Table 2, with gravity as the base's acceleration and the
armature term, as ``kernels/dynamics.rnea`` computes it without external wrenches.

It is the one-state twin of ``kernels/soa.py``'s RNEA (same formulas, scalars instead of lanes):
each body frame is turned so that its joint axis is z, so T_{p,i} = X_i Tj(q_i) with X_i
constant and Tj a rotation about z (cos, sin) or a translation along z, S_i a unit column
(Featherstone 2008, Table 4.1) and the inertia 10 numbers. Per body, the forward pass is two
inverse transforms by T_{p,i} (twist, acceleration; a revolute joint's rotation R Rz(q) is
composed first, apart from the recursion's chain of dependent operations), the joint's terms
and the rigid-body wrench F_i = I A_i + V_i x* (I V_i) (Kim 2012, eq. 42); the backward pass is
tau_i = S_i^T F_i + armature qdd_i and one transform of F_i to the parent. Along a chain
(parent i - 1) the parent's values pass in registers, not through the scratch.

A free root joint (a floating base; ``tree_plan(model)``) has q = (p,
quaternion xyzw) and v = (v_lin, w) in its body's frame, as kernels/soa.py's ``free_lanes``
reads them: with the world as parent, V = S v and A = Ad_{T^-1} (0, -g) + S a, i.e. gravity
turned into the body frame by (R Rq)^T plus (a_ang, a_lin) (Kim 2012, eqs. 37-38; ad(V) S v =
ad(V) V = 0), and its six torques are S^T F = (force, moment).

Entries (each returns a status of ``layout``): ``inverse_dynamics(P, q, v, a, tau)``,
``nonlinear(P, q, v, tau)`` (a = 0) and ``gravity(P, q, tau)`` (v = a = 0): one inlined body,
the zero terms removed at compile time. Inputs of the wrong length, or with strides that are
not a C-contiguous array's (``views.c_strides``: the public calls reach the entries through
numba's raw entry point, which does not check the layout), give BAD_SIZE before any read; a
non-finite input gives NONFINITE and finite inputs with a non-finite result OVERFLOW, as the
general kernels do (each input's x * 0 and each torque's are summed: NaN exactly when
one is not finite, as not every input reaches a torque; the inputs are scanned only then),
and BAD_QUATERNION for a free joint's finite quaternion whose norm is
1e-6 or more off 1 (the general kernel's rule; it normalizes the others). Scratch lives on
the stack (no allocation, no shared state), and the arguments are read through views without
reference counts (kernels/views.py: 10 atomic counts fewer per call, 30 ns).

Compiled with ``fastmath={'contract'}`` as the SoA kernels: a multiply and an add may fuse into
one FMA (one rounding instead of two; 10% faster here); nothing else of IEEE arithmetic is
relaxed. The tests hold the result to 1e-12 of the general kernel. The entries keep the GIL
(``nogil=False``): releasing and retaking it cost 0.05 us per call (arm7, a quarter of the
0.2 us body), while the Python caller holds it for longer than the body anyway.
"""
from numba import types

from .jit import JIT, njit
from .joint_kinematics import unit_quat
from .lie import quat_rotate_T
from .layout import OK, NONFINITE, BAD_QUATERNION, OVERFLOW, BAD_SIZE
from .soa import (TP, TK, TQ, TV, GR, GP, GI, GC, GM, GA, GX, REVOLUTE, FREE, joint_sincos,
                  rigid_bias)
from .tree import TOPO, NP, MAX_BODIES
from .views import bare, c_strides, stack_matrix

_JIT = dict(JIT, fastmath={"contract"}, nogil=False)

# columns of the stack scratch, one row per body
SV = 0      # twist (angular, linear) (6)
SA = 6      # acceleration (6)
SF = 12     # wrench (moment, force) (6): the body's own, then its subtree's
SC = 18     # cos q_i
SS = 19     # sin q_i
SR = 20     # R Rz(q_i) of a revolute joint, row-major (9)
NS = 29

_scratch = stack_matrix(MAX_BODIES, NS)


@njit(inline="always", **_JIT)
def _finite(x):
    """No NaN or Inf in the vector x."""
    s = 0.0
    for k in range(x.shape[0]):
        s += x[k] * 0.0
    return s == 0.0


@njit(inline="always", **_JIT)
def _start(P, q, W):
    """Row 0 of the scratch W (the base: V = 0, A = (0, -g)) and cos q_i, sin q_i of every
    revolute joint (columns SC, SS)."""
    nb = P.shape[0] - 1
    for k in range(6):
        W[0, SV + k] = 0.0
        W[0, SA + k] = 0.0
    for k in range(3):
        W[0, SA + 3 + k] = -P[0, GX + k]
    # cos and sin first: independent of each other, they overlap instead of lengthening the
    # recursion's chain of dependent operations
    for i in range(1, nb + 1):
        if P[i, TOPO + TK] == REVOLUTE:
            x = q[int(P[i, TOPO + TQ])]
            s, c = joint_sincos(x)
            W[i, SC], W[i, SS] = c, s


@njit(inline="always", **_JIT)
def _motion(P, q, v, a, W, i, pw0, pw1, pw2, pv0, pv1, pv2, pe0, pe1, pe2, pf0, pf1, pf2,
            use_v, use_a):
    """Body i's twist V_i = (w, v) and acceleration A_i = (e, f) (gravity included), stored
    in W[i] (SA; SV when ``use_v``; SR: R Rz(q_i) of a revolute joint), from its parent's,
    passed in registers (p*) and read from W when the parent is not row i - 1. Returns
    (w, v, e, f, chk, ok): chk NaN for a non-finite input read here, ok False for a free
    joint's quaternion off unit norm (``_free_joint``)."""
    g = P[i]
    p = int(g[TOPO + TP])
    jq, jv = int(g[TOPO + TQ]), int(g[TOPO + TV])
    rev = g[TOPO + TK] == REVOLUTE
    free = g[TOPO + TK] == FREE
    acc = use_v or use_a
    ok = True
    r00, r01, r02, r10, r11, r12 = g[GR], g[GR + 1], g[GR + 2], g[GR + 3], g[GR + 4], g[GR + 5]
    r20, r21, r22 = g[GR + 6], g[GR + 7], g[GR + 8]
    px, py, pz = g[GP], g[GP + 1], g[GP + 2]
    Wi = W[i]
    if rev:     # T_{p,i} = (R Rz(q), p): one rotation (off the chain of dependent operations)
        c, s = Wi[SC], Wi[SS]
        r00, r01 = c * r00 + s * r01, c * r01 - s * r00
        r10, r11 = c * r10 + s * r11, c * r11 - s * r10
        r20, r21 = c * r20 + s * r21, c * r21 - s * r20
        Wi[SR], Wi[SR + 1], Wi[SR + 2], Wi[SR + 3], Wi[SR + 4] = r00, r01, r02, r10, r11
        Wi[SR + 5], Wi[SR + 6], Wi[SR + 7], Wi[SR + 8] = r12, r20, r21, r22
    x = q[jq]
    qd = v[jv] if use_v else 0.0
    qdd = a[jv] if use_a else 0.0
    # every input into the status: some reach no torque (a prismatic leaf's qd or, with
    # v = a = 0, its q, on a root)
    chk = (x + qd + qdd) * 0.0
    if p != i - 1:
        Wp = W[p]
        pf0, pf1, pf2 = Wp[SA + 3], Wp[SA + 4], Wp[SA + 5]
        if acc:
            pe0, pe1, pe2 = Wp[SA], Wp[SA + 1], Wp[SA + 2]
        if use_v:
            pw0, pw1, pw2, pv0, pv1, pv2 = (Wp[SV], Wp[SV + 1], Wp[SV + 2], Wp[SV + 3],
                                            Wp[SV + 4], Wp[SV + 5])
    # Ad_{X^-1} of the parent's twist and acceleration (Kim 2012, eq. 37): R^T w,
    # R^T (v + w x p)
    e0 = e1 = e2 = 0.0
    u0, u1, u2 = pf0, pf1, pf2
    if acc:
        e0, e1, e2 = pe0, pe1, pe2
        u0 += e1 * pz - e2 * py
        u1 += e2 * px - e0 * pz
        u2 += e0 * py - e1 * px
        e0, e1, e2 = (r00 * e0 + r10 * e1 + r20 * e2, r01 * e0 + r11 * e1 + r21 * e2,
                      r02 * e0 + r12 * e1 + r22 * e2)
    f0, f1, f2 = (r00 * u0 + r10 * u1 + r20 * u2, r01 * u0 + r11 * u1 + r21 * u2,
                  r02 * u0 + r12 * u1 + r22 * u2)
    w0 = w1 = w2 = v0 = v1 = v2 = 0.0
    if use_v:
        w0, w1, w2 = pw0, pw1, pw2
        u0 = pv0 + (w1 * pz - w2 * py)
        u1 = pv1 + (w2 * px - w0 * pz)
        u2 = pv2 + (w0 * py - w1 * px)
        w0, w1, w2 = (r00 * w0 + r10 * w1 + r20 * w2, r01 * w0 + r11 * w1 + r21 * w2,
                      r02 * w0 + r12 * w1 + r22 * w2)
        v0, v1, v2 = (r00 * u0 + r10 * u1 + r20 * u2, r01 * u0 + r11 * u1 + r21 * u2,
                      r02 * u0 + r12 * u1 + r22 * u2)
    # then Tj^-1, and V_i += S qd, A_i += S qdd + ad(V_i) S qd (Kim 2012, eqs. 37-38)
    if rev:
        if use_v:
            w2 += qd
            e0 += qd * w1
            e1 -= qd * w0
            f0 += qd * v1
            f1 -= qd * v0
        if use_a:
            e2 += qdd
    elif free:
        # a root: the transform above left V = 0 and A = (0, R^T (-g)); then Tj^-1 = Rq^T
        # and V = S v, A += S a (ad(V) S v = ad(V) V = 0)
        f0, f1, f2, ok, fchk = _free_joint(q, jq, f0, f1, f2)
        chk += fchk
        if use_a:
            e0, e1, e2 = a[jv + 3], a[jv + 4], a[jv + 5]
            f0, f1, f2 = f0 + a[jv], f1 + a[jv + 1], f2 + a[jv + 2]
            chk += (e0 + e1 + e2 + a[jv + 1] + a[jv + 2]) * 0.0
        if use_v:
            w0, w1, w2 = v[jv + 3], v[jv + 4], v[jv + 5]
            v0, v1, v2 = v[jv], v[jv + 1], v[jv + 2]
            chk += (w0 + w1 + w2 + v1 + v2) * 0.0
    else:
        if acc:
            f0, f1 = f0 + x * e1, f1 - x * e0
        if use_v:
            v0, v1 = v0 + x * w1, v1 - x * w0
            v2 += qd
            f0 += qd * w1
            f1 -= qd * w0
        if use_a:
            f2 += qdd
    Wi[SA], Wi[SA + 1], Wi[SA + 2], Wi[SA + 3], Wi[SA + 4], Wi[SA + 5] = e0, e1, e2, f0, f1, f2
    if use_v:
        Wi[SV], Wi[SV + 1], Wi[SV + 2], Wi[SV + 3], Wi[SV + 4], Wi[SV + 5] = \
            w0, w1, w2, v0, v1, v2
    return w0, w1, w2, v0, v1, v2, e0, e1, e2, f0, f1, f2, chk, ok


@njit(inline="always", **_JIT)
def _rnea(P, q, v, a, tau, use_v, use_a):
    """The body of the three entries; ``use_v`` / ``use_a`` are constants at each call site
    (False: v or a is zero and not read)."""
    nb = P.shape[0] - 1
    if nb < 1 or nb >= MAX_BODIES or P.shape[1] != NP:
        return BAD_SIZE
    nv = int(P[0, TOPO + TV])
    if (q.shape[0] != int(P[0, TOPO + TQ]) or tau.shape[0] != nv
            or (use_v and v.shape[0] != nv) or (use_a and a.shape[0] != nv)
            or not (c_strides(P) and c_strides(q) and c_strides(v) and c_strides(a)
                    and c_strides(tau))):
        return BAD_SIZE
    W = _scratch()
    _start(P, q, W)
    # the parent's twist and acceleration: in registers along a chain (parent i - 1)
    pw0 = pw1 = pw2 = pv0 = pv1 = pv2 = pe0 = pe1 = pe2 = 0.0
    pf0, pf1, pf2 = -P[0, GX], -P[0, GX + 1], -P[0, GX + 2]
    bad = 0.0
    unit = True         # every free joint's quaternion of unit norm
    # with v = a = 0 every body's acceleration is gravity alone, (0, R^T (-g)): no angular part
    acc = use_v or use_a
    for i in range(1, nb + 1):
        (w0, w1, w2, v0, v1, v2, e0, e1, e2, f0, f1, f2, chk, ok) = _motion(
            P, q, v, a, W, i, pw0, pw1, pw2, pv0, pv1, pv2, pe0, pe1, pe2, pf0, pf1, pf2,
            use_v, use_a)
        bad += chk
        unit &= ok
        pw0, pw1, pw2, pv0, pv1, pv2 = w0, w1, w2, v0, v1, v2
        pe0, pe1, pe2, pf0, pf1, pf2 = e0, e1, e2, f0, f1, f2
        g = P[i]
        Wi = W[i]
        # I x = (Ibar x_w + mc x x_v, m x_v - mc x x_w); F = I A + (w x h_a + v x h_l, w x h_l)
        ixx, iyy, izz, ixy, ixz, iyz = g[GI], g[GI + 1], g[GI + 2], g[GI + 3], g[GI + 4], g[GI + 5]
        cx, cy, cz, m = g[GC], g[GC + 1], g[GC + 2], g[GM]
        n0, n1, n2 = cy * f2 - cz * f1, cz * f0 - cx * f2, cx * f1 - cy * f0
        l0, l1, l2 = m * f0, m * f1, m * f2
        if acc:
            n0 += ixx * e0 + ixy * e1 + ixz * e2
            n1 += ixy * e0 + iyy * e1 + iyz * e2
            n2 += ixz * e0 + iyz * e1 + izz * e2
            l0 -= cy * e2 - cz * e1
            l1 -= cz * e0 - cx * e2
            l2 -= cx * e1 - cy * e0
        if use_v:
            b0, b1, b2, b3, b4, b5 = rigid_bias(w0, w1, w2, v0, v1, v2, ixx, iyy, izz, ixy, ixz,
                                                iyz, cx, cy, cz, m)
            n0, n1, n2, l0, l1, l2 = n0 + b0, n1 + b1, n2 + b2, l0 + b3, l1 + b4, l2 + b5
        Wi[SF], Wi[SF + 1], Wi[SF + 2], Wi[SF + 3], Wi[SF + 4], Wi[SF + 5] = n0, n1, n2, l0, l1, l2
    # children first: tau_i = S_i^T F_i + armature qdd_i, F_p += Ad*_{T^-1} F_i (a root body
    # adds into row 0, which nobody reads); along a chain the sum stays in registers (k)
    to = -1
    k0 = k1 = k2 = k3 = k4 = k5 = 0.0
    for i in range(nb, 0, -1):
        g = P[i]
        Wi = W[i]
        p = int(g[TOPO + TP])
        jv = int(g[TOPO + TV])
        n0, n1, n2 = Wi[SF], Wi[SF + 1], Wi[SF + 2]
        f0, f1, f2 = Wi[SF + 3], Wi[SF + 4], Wi[SF + 5]
        if to == i:
            n0, n1, n2, f0, f1, f2 = n0 + k0, n1 + k1, n2 + k2, f0 + k3, f1 + k4, f2 + k5
        if g[TOPO + TK] == FREE:            # S^T F = (f, n); the world takes no wrench
            tau[jv], tau[jv + 1], tau[jv + 2] = f0, f1, f2
            tau[jv + 3], tau[jv + 4], tau[jv + 5] = n0, n1, n2
            bad += (f0 + f1 + f2 + n0 + n1 + n2) * 0.0
            to = -1
            continue
        if g[TOPO + TK] == REVOLUTE:        # tau = S^T F; R Rz(q) below
            t = n2
            r00, r01, r02, r10, r11, r12 = (Wi[SR], Wi[SR + 1], Wi[SR + 2], Wi[SR + 3],
                                            Wi[SR + 4], Wi[SR + 5])
            r20, r21, r22 = Wi[SR + 6], Wi[SR + 7], Wi[SR + 8]
        else:                               # or n + (q e_z) x f, then R
            t = f2
            d = q[int(g[TOPO + TQ])]
            n0, n1 = n0 - d * f1, n1 + d * f0
            r00, r01, r02 = g[GR], g[GR + 1], g[GR + 2]
            r10, r11, r12 = g[GR + 3], g[GR + 4], g[GR + 5]
            r20, r21, r22 = g[GR + 6], g[GR + 7], g[GR + 8]
        if use_a:
            t += g[GA] * a[jv]
        tau[jv] = t
        bad += t * 0.0
        # then the rotation and the translation: f' = R f, n' = R n + p x f'
        px, py, pz = g[GP], g[GP + 1], g[GP + 2]
        g0 = r00 * f0 + r01 * f1 + r02 * f2
        g1 = r10 * f0 + r11 * f1 + r12 * f2
        g2 = r20 * f0 + r21 * f1 + r22 * f2
        k0 = r00 * n0 + r01 * n1 + r02 * n2 + (py * g2 - pz * g1)
        k1 = r10 * n0 + r11 * n1 + r12 * n2 + (pz * g0 - px * g2)
        k2 = r20 * n0 + r21 * n1 + r22 * n2 + (px * g1 - py * g0)
        k3, k4, k5 = g0, g1, g2
        if p == i - 1:
            to = p
        else:
            to = -1
            Wp = W[p]
            Wp[SF] += k0
            Wp[SF + 1] += k1
            Wp[SF + 2] += k2
            Wp[SF + 3] += k3
            Wp[SF + 4] += k4
            Wp[SF + 5] += k5
    if bad == 0.0 and unit:
        return OK
    if not _finite(q) or (use_v and not _finite(v)) or (use_a and not _finite(a)):
        return NONFINITE
    return OVERFLOW if unit else BAD_QUATERNION


@njit(inline="always", **_JIT)
def _free_joint(q, jq, u0, u1, u2):
    """A free joint's q = (p, quaternion xyzw) at jq: (Rq^T u, ok, chk), Rq the rotation of
    the normalized quaternion (``lie.quat_to_rot``); ok False for a norm 1e-6 or more off 1
    (``joint_kinematics.unit_quat``'s rule); chk NaN for a NaN or Inf in the joint's seven
    numbers (p does not enter the dynamics, so it is checked here)."""
    chk = (q[jq] + q[jq + 1] + q[jq + 2] + q[jq + 3] + q[jq + 4] + q[jq + 5] + q[jq + 6]) * 0.0
    x, y, z, w, ok = unit_quat(q, jq + 3)
    r0, r1, r2 = quat_rotate_T(x, y, z, w, u0, u1, u2)
    return r0, r1, r2, ok, chk


@njit(**_JIT)
def inverse_dynamics(P, q, v, a, tau):
    """tau = M(q) a + C(q, v) v + g(q) on the plan P; returns a status code."""
    return _rnea(bare(P), bare(q), bare(v), bare(a), bare(tau), True, True)


@njit(**_JIT)
def nonlinear(P, q, v, tau):
    """tau = C(q, v) v + g(q) on the plan P; returns a status code."""
    v = bare(v)
    return _rnea(bare(P), bare(q), v, v, bare(tau), True, False)


@njit(**_JIT)
def gravity(P, q, tau):
    """tau = g(q) on the plan P; returns a status code."""
    q = bare(q)
    return _rnea(bare(P), q, q, q, bare(tau), False, False)


_VEC = types.Array(types.float64, 1, "C")
_MAT = types.Array(types.float64, 2, "C", readonly=True)
#: the one signature each entry is compiled for (``_inputs.compile_entry``)
SIGNATURES = {
    "inverse_dynamics": (inverse_dynamics, (_MAT, _VEC, _VEC, _VEC, _VEC)),
    "nonlinear": (nonlinear, (_MAT, _VEC, _VEC, _VEC)),
    "gravity": (gravity, (_MAT, _VEC, _VEC)),
}
