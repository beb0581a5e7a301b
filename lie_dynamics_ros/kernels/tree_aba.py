"""Forward dynamics of one state on the packed tree plan (kernels/tree.py): the articulated-body
algorithm (Featherstone 2008, Table 7.1; Kim 2012, Table 3) specialized to joints that rotate
about or slide along z, with gravity as the base acceleration and the armature added to D_i.

The scalar twin of ``kernels/soa_aba.py`` (same passes, same formulas, one state, no lanes):

- pass 1, root to leaves: V_i, eta_i = ad(V_i) S_i qd_i (4 non-zero numbers), the bias wrench
  B^_i = -ad*_{V_i} I_i V_i, and I^_i := I_i;
- pass 2, leaves to root: U_i = I^_i S_i (a column of I^_i), D_i = S_i^T U_i + armature,
  u_i = tau_i - S_i^T B^_i; the parent gets Ad*_{T^-1} beta_i and Ad_{T^-1}^T Pi_i Ad_{T^-1};
- pass 3, root to leaves: A'_i = Ad_{T^-1} A_p + eta_i, qdd_i = (u_i - U_i^T A'_i) / D_i,
  A_i = A'_i + S_i qdd_i.

A free root row (``soa.FREE``, parent the world: a floating base) is not turned: its
q = (p, quaternion xyzw), v = (v_lin, w) in its frame, V = S v (S the swap of the two
3-blocks) and eta = 0 (V_p = 0). Only the quaternion's rotation enters, through the gravity
acceleration in the body frame A' = (0, Rq^T R0^T (-g)). In pass 2, once its children have
added their terms, A = I^^-1 (S tau - B^) (Featherstone 2008, ch. 9: the floating base's
a_0 = -I_0^A^-1 p_0^A) by an LDL^T of the 6x6 (``soa_aba.ldl6``, a pivot <= 1e-14 of the
largest diagonal entry singular, as ``spatial.invert_spd``); pass 3 gives qdd = S^T (A - A').

Work rows live on the stack (``views.stack_matrix``): no allocation, no shared state. Status:
``BAD_SIZE`` for lengths that do not match the plan or strides that are not a C-contiguous
array's (``views.c_strides``, as kernels/tree_rnea.py),
``NONFINITE`` when an input holds NaN/Inf (``x * 0`` summed over the inputs),
``BAD_QUATERNION`` when a free root's quaternion norm is 1e-6 or more off 1 (the general
kernel's ``joint_kinematics.unit_quat`` rule; within it the quaternion is normalized),
``SINGULAR`` when a D_i is not > 1e-300 or the free root's I^ has a singular pivot,
``OVERFLOW`` when finite inputs give a non-finite qdd; the public function then reruns the
general kernel, which names the argument or the joint.

Compiled with ``fastmath={'contract'}`` (FMA only, as kernels/soa.py states); nothing else of
IEEE arithmetic is relaxed, so NaN and Inf reach the status.
"""
from numba import types

from .jit import JIT, njit
from .joint_kinematics import unit_quat
from .lie import quat_rotate_T
from .layout import OK, NONFINITE, BAD_QUATERNION, SINGULAR, OVERFLOW, BAD_SIZE
from .soa import (GR, GP, GI, GC, GM, GA, GX, TP, TK, TQ, TV, REVOLUTE, FREE, joint_sincos,
                  rigid_bias)
from .soa_aba import inertia_to_parent, force_to_parent, ldl6
from .tree import TOPO, NP, MAX_BODIES
from .views import c_strides, stack_matrix

_JIT = dict(JIT, fastmath={"contract"})

# columns of a body's work row
XV = 0      # twist V (angular, linear) in pass 1, acceleration A in pass 3 (6)
XE = 6      # eta: its angular x, y and linear x, y (its z parts are zero) (4); a free root:
            # the linear A' = Rq^T R0^T (-g) (3)
XB = 10     # bias wrench B^, then B^ plus the children's terms (6)
XI = 16     # articulated inertia: A (xx yy zz xy xz yz), B (row-major), C (as A) (21)
XU = 37     # U = I^ S (6); a free root: its A = I^^-1 (S tau - B^)
XD = 43     # 1 / D
XF = 44     # u = tau - S^T B^
XC = 45     # cos q (revolute) or q (prismatic)
XS = 46     # sin q
NX = 47

_work = stack_matrix(MAX_BODIES, NX)


@njit(inline="always", **_JIT)
def _joint_frame(P, W, i, rev):
    """T_{p,i} = (R0, p0) Tj(q) as (R row-major, p): R = R0 Rz(q) for a revolute joint,
    p = p0 + q R0 e_z for a prismatic one."""
    r00, r01, r02 = P[i, GR], P[i, GR + 1], P[i, GR + 2]
    r10, r11, r12 = P[i, GR + 3], P[i, GR + 4], P[i, GR + 5]
    r20, r21, r22 = P[i, GR + 6], P[i, GR + 7], P[i, GR + 8]
    px, py, pz = P[i, GP], P[i, GP + 1], P[i, GP + 2]
    if rev:
        c, s = W[i, XC], W[i, XS]
        return ((c * r00 + s * r01, c * r01 - s * r00, r02, c * r10 + s * r11,
                 c * r11 - s * r10, r12, c * r20 + s * r21, c * r21 - s * r20, r22),
                (px, py, pz))
    d = W[i, XC]
    return ((r00, r01, r02, r10, r11, r12, r20, r21, r22),
            (px + d * r02, py + d * r12, pz + d * r22))


@njit(inline="always", **_JIT)
def _from_parent(R, t, w0, w1, w2, u0, u1, u2):
    """Ad_{T^-1} (w, u) = (R^T w, R^T (u + w x t)) for T = (R, t) (Kim 2012, eq. 37)."""
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = R
    tx, ty, tz = t
    u0 += w1 * tz - w2 * ty
    u1 += w2 * tx - w0 * tz
    u2 += w0 * ty - w1 * tx
    return (r00 * w0 + r10 * w1 + r20 * w2, r01 * w0 + r11 * w1 + r21 * w2,
            r02 * w0 + r12 * w1 + r22 * w2, r00 * u0 + r10 * u1 + r20 * u2,
            r01 * u0 + r11 * u1 + r21 * u2, r02 * u0 + r12 * u1 + r22 * u2)


@njit(inline="always", **_JIT)
def _body_terms(P, W, i, w0, w1, w2, v0, v1, v2):
    """V_i = (w, v), B^_i = -ad*_V I_i V and I^_i := I_i into the work row of body i."""
    W[i, XV], W[i, XV + 1], W[i, XV + 2] = w0, w1, w2
    W[i, XV + 3], W[i, XV + 4], W[i, XV + 5] = v0, v1, v2
    ixx, iyy, izz = P[i, GI], P[i, GI + 1], P[i, GI + 2]
    ixy, ixz, iyz = P[i, GI + 3], P[i, GI + 4], P[i, GI + 5]
    cx, cy, cz, m = P[i, GC], P[i, GC + 1], P[i, GC + 2], P[i, GM]
    (W[i, XB], W[i, XB + 1], W[i, XB + 2], W[i, XB + 3], W[i, XB + 4],
     W[i, XB + 5]) = rigid_bias(w0, w1, w2, v0, v1, v2, ixx, iyy, izz, ixy, ixz, iyz, cx, cy, cz, m)
    # I^ := I = [[Ibar, m[c]], [m[c]^T, m 1]]
    W[i, XI], W[i, XI + 1], W[i, XI + 2] = ixx, iyy, izz
    W[i, XI + 3], W[i, XI + 4], W[i, XI + 5] = ixy, ixz, iyz
    W[i, XI + 6], W[i, XI + 7], W[i, XI + 8] = 0.0, -cz, cy
    W[i, XI + 9], W[i, XI + 10], W[i, XI + 11] = cz, 0.0, -cx
    W[i, XI + 12], W[i, XI + 13], W[i, XI + 14] = -cy, cx, 0.0
    W[i, XI + 15], W[i, XI + 16], W[i, XI + 17] = m, m, m
    W[i, XI + 18], W[i, XI + 19], W[i, XI + 20] = 0.0, 0.0, 0.0


@njit(inline="always", **_JIT)
def _free_velocity(P, W, q, v, i):
    """Pass 1 on a free root row: V = S v, and A' = Rq^T R0^T (-g) into the XE columns (Rq the
    rotation of the normalized quaternion, ``lie.quat_to_rot``). Returns (sum(x * 0) over its
    q and v, whether the quaternion's norm is within 1e-6 of 1)."""
    jq, jv = int(P[i, TOPO + TQ]), int(P[i, TOPO + TV])
    chk = 0.0
    for k in range(7):
        chk += q[jq + k] * 0.0
    for k in range(6):
        chk += v[jv + k] * 0.0
    x, y, z, w, unit = unit_quat(q, jq + 3)
    g0, g1, g2 = -P[0, GX], -P[0, GX + 1], -P[0, GX + 2]
    u0 = P[i, GR] * g0 + P[i, GR + 3] * g1 + P[i, GR + 6] * g2
    u1 = P[i, GR + 1] * g0 + P[i, GR + 4] * g1 + P[i, GR + 7] * g2
    u2 = P[i, GR + 2] * g0 + P[i, GR + 5] * g1 + P[i, GR + 8] * g2
    W[i, XE], W[i, XE + 1], W[i, XE + 2] = quat_rotate_T(x, y, z, w, u0, u1, u2)
    _body_terms(P, W, i, v[jv + 3], v[jv + 4], v[jv + 5], v[jv], v[jv + 1], v[jv + 2])
    return chk, unit


@njit(inline="always", **_JIT)
def _velocities(P, W, q, v, nb):
    """Pass 1; returns (sum(x * 0) over q and v (0 or NaN), whether every free root's
    quaternion is a unit one)."""
    chk = 0.0
    unit = True
    for k in range(6):
        W[0, XV + k] = 0.0
    for i in range(1, nb + 1):
        if P[i, TOPO + TK] == FREE:
            c, u = _free_velocity(P, W, q, v, i)
            chk += c
            unit &= u
            continue
        p = int(P[i, TOPO + TP])
        rev = P[i, TOPO + TK] == REVOLUTE
        x, qd = q[int(P[i, TOPO + TQ])], v[int(P[i, TOPO + TV])]
        chk += x * 0.0 + qd * 0.0
        if rev:
            s, c = joint_sincos(x)
            W[i, XC], W[i, XS] = c, s
        else:
            W[i, XC] = x
        R, t = _joint_frame(P, W, i, rev)
        w0, w1, w2, v0, v1, v2 = _from_parent(R, t, W[p, XV], W[p, XV + 1], W[p, XV + 2],
                                              W[p, XV + 3], W[p, XV + 4], W[p, XV + 5])
        if rev:     # V += e_z qd (angular); eta = ad(V) S qd
            w2 += qd
            W[i, XE], W[i, XE + 1], W[i, XE + 2], W[i, XE + 3] = \
                qd * w1, -qd * w0, qd * v1, -qd * v0
        else:
            v2 += qd
            W[i, XE], W[i, XE + 1], W[i, XE + 2], W[i, XE + 3] = 0.0, 0.0, qd * w1, -qd * w0
        _body_terms(P, W, i, w0, w1, w2, v0, v1, v2)
    return chk, unit


@njit(inline="always", **_JIT)
def _free_root(P, W, tau, i):
    """Pass 2 on a free root row, its children's terms in: A = I^^-1 (S tau - B^) into the XU
    columns (tau in v's order: force, then moment). Returns False for a singular pivot."""
    jv = int(P[i, TOPO + TV])
    axx, ayy, azz = W[i, XI], W[i, XI + 1], W[i, XI + 2]
    axy, axz, ayz = W[i, XI + 3], W[i, XI + 4], W[i, XI + 5]
    b00, b01, b02 = W[i, XI + 6], W[i, XI + 7], W[i, XI + 8]
    b10, b11, b12 = W[i, XI + 9], W[i, XI + 10], W[i, XI + 11]
    b20, b21, b22 = W[i, XI + 12], W[i, XI + 13], W[i, XI + 14]
    cxx, cyy, czz = W[i, XI + 15], W[i, XI + 16], W[i, XI + 17]
    cxy, cxz, cyz = W[i, XI + 18], W[i, XI + 19], W[i, XI + 20]
    s = 1e-14 * max(axx, ayy, azz, cxx, cyy, czz)
    # I^ = [[A, B], [B^T, C]]: rows 3-5 of its lower triangle are B^T's rows, then C's
    x0, x1, x2, x3, x4, x5 = ldl6(
        axx, axy, ayy, axz, ayz, azz, b00, b10, b20, cxx, b01, b11, b21, cxy, cyy,
        b02, b12, b22, cxz, cyz, czz,
        tau[jv + 3] - W[i, XB], tau[jv + 4] - W[i, XB + 1], tau[jv + 5] - W[i, XB + 2],
        tau[jv] - W[i, XB + 3], tau[jv + 1] - W[i, XB + 4], tau[jv + 2] - W[i, XB + 5], s)
    W[i, XU], W[i, XU + 1], W[i, XU + 2] = x0, x1, x2
    W[i, XU + 3], W[i, XU + 4], W[i, XU + 5] = x3, x4, x5
    return x0 * 0.0 + x1 * 0.0 + x2 * 0.0 + x3 * 0.0 + x4 * 0.0 + x5 * 0.0 == 0.0


@njit(inline="always", **_JIT)
def _articulate(P, W, tau, nb):
    """Pass 2, children first; returns the first row whose D is not > 1e-300 (or a free root
    whose I^ is singular), else 0."""
    for i in range(nb, 0, -1):
        if P[i, TOPO + TK] == FREE:     # a root: the world takes nothing
            if not _free_root(P, W, tau, i):
                return i
            continue
        p = int(P[i, TOPO + TP])
        rev = P[i, TOPO + TK] == REVOLUTE
        axx, ayy, azz = W[i, XI], W[i, XI + 1], W[i, XI + 2]
        axy, axz, ayz = W[i, XI + 3], W[i, XI + 4], W[i, XI + 5]
        b00, b01, b02 = W[i, XI + 6], W[i, XI + 7], W[i, XI + 8]
        b10, b11, b12 = W[i, XI + 9], W[i, XI + 10], W[i, XI + 11]
        b20, b21, b22 = W[i, XI + 12], W[i, XI + 13], W[i, XI + 14]
        cxx, cyy, czz = W[i, XI + 15], W[i, XI + 16], W[i, XI + 17]
        cxy, cxz, cyz = W[i, XI + 18], W[i, XI + 19], W[i, XI + 20]
        n0, n1, n2 = W[i, XB], W[i, XB + 1], W[i, XB + 2]
        f0, f1, f2 = W[i, XB + 3], W[i, XB + 4], W[i, XB + 5]
        t = tau[int(P[i, TOPO + TV])]
        if rev:     # U = column 2 of I^
            u0, u1, u2, u3, u4, u5 = axz, ayz, azz, b20, b21, b22
            d = azz + P[i, GA]
            uf = t - n2
        else:       # column 5
            u0, u1, u2, u3, u4, u5 = b02, b12, b22, cxz, cyz, czz
            d = czz + P[i, GA]
            uf = t - f2
        if not d > 1e-300:
            return i
        di = 1.0 / d
        W[i, XU], W[i, XU + 1], W[i, XU + 2] = u0, u1, u2
        W[i, XU + 3], W[i, XU + 4], W[i, XU + 5] = u3, u4, u5
        W[i, XD], W[i, XF] = di, uf
        if p == 0:
            continue
        if rev:
            e0, e1, e3, e4 = W[i, XE], W[i, XE + 1], W[i, XE + 2], W[i, XE + 3]
            # beta = B^ + I^ eta + U x,  x = (u - U^T eta) / D  (eta_2 = eta_5 = 0)
            x = (uf - (u0 * e0 + u1 * e1 + u3 * e3 + u4 * e4)) * di
            n0 += axx * e0 + axy * e1 + b00 * e3 + b01 * e4 + u0 * x
            n1 += axy * e0 + ayy * e1 + b10 * e3 + b11 * e4 + u1 * x
            n2 += axz * e0 + ayz * e1 + b20 * e3 + b21 * e4 + u2 * x
            f0 += b00 * e0 + b10 * e1 + cxx * e3 + cxy * e4 + u3 * x
            f1 += b01 * e0 + b11 * e1 + cxy * e3 + cyy * e4 + u4 * x
            f2 += b02 * e0 + b12 * e1 + cxz * e3 + cyz * e4 + u5 * x
        else:
            e3, e4 = W[i, XE + 2], W[i, XE + 3]
            x = (uf - (u3 * e3 + u4 * e4)) * di
            n0 += b00 * e3 + b01 * e4 + u0 * x
            n1 += b10 * e3 + b11 * e4 + u1 * x
            n2 += b20 * e3 + b21 * e4 + u2 * x
            f0 += cxx * e3 + cxy * e4 + u3 * x
            f1 += cxy * e3 + cyy * e4 + u4 * x
            f2 += cxz * e3 + cyz * e4 + u5 * x
        # Pi = I^ - U U^T / D
        g0, g1, g2, g3, g4, g5 = u0 * di, u1 * di, u2 * di, u3 * di, u4 * di, u5 * di
        axx, ayy, azz = axx - g0 * u0, ayy - g1 * u1, azz - g2 * u2
        axy, axz, ayz = axy - g0 * u1, axz - g0 * u2, ayz - g1 * u2
        b00, b01, b02 = b00 - g0 * u3, b01 - g0 * u4, b02 - g0 * u5
        b10, b11, b12 = b10 - g1 * u3, b11 - g1 * u4, b12 - g1 * u5
        b20, b21, b22 = b20 - g2 * u3, b21 - g2 * u4, b22 - g2 * u5
        cxx, cyy, czz = cxx - g3 * u3, cyy - g4 * u4, czz - g5 * u5
        cxy, cxz, cyz = cxy - g3 * u4, cxz - g3 * u5, cyz - g4 * u5
        R, tt = _joint_frame(P, W, i, rev)
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = R
        n0, n1, n2, h0, h1, h2 = force_to_parent(r00, r01, r02, r10, r11, r12, r20, r21, r22,
                                                 tt[0], tt[1], tt[2], n0, n1, n2, f0, f1, f2)
        W[p, XB] += n0
        W[p, XB + 1] += n1
        W[p, XB + 2] += n2
        W[p, XB + 3] += h0
        W[p, XB + 4] += h1
        W[p, XB + 5] += h2
        J = inertia_to_parent(R, tt, (axx, ayy, azz, axy, axz, ayz, b00, b01, b02, b10, b11,
                                      b12, b20, b21, b22, cxx, cyy, czz, cxy, cxz, cyz))
        for k in range(21):
            W[p, XI + k] += J[k]
    return 0


@njit(inline="always", **_JIT)
def _accelerations(P, W, acc, nb):
    """Pass 3 from A_0 = (0, -g); qdd into ``acc``; returns sum(qdd * 0)."""
    chk = 0.0
    W[0, XV], W[0, XV + 1], W[0, XV + 2] = 0.0, 0.0, 0.0
    W[0, XV + 3], W[0, XV + 4], W[0, XV + 5] = -P[0, GX], -P[0, GX + 1], -P[0, GX + 2]
    for i in range(1, nb + 1):
        if P[i, TOPO + TK] == FREE:     # A from pass 2; qdd = S^T (A - A')
            jv = int(P[i, TOPO + TV])
            for k in range(3):
                a_ang, a_lin = W[i, XU + k], W[i, XU + 3 + k]
                W[i, XV + k], W[i, XV + 3 + k] = a_ang, a_lin
                x = a_lin - W[i, XE + k]
                acc[jv + k], acc[jv + 3 + k] = x, a_ang
                chk += x * 0.0 + a_ang * 0.0
            continue
        p = int(P[i, TOPO + TP])
        rev = P[i, TOPO + TK] == REVOLUTE
        R, t = _joint_frame(P, W, i, rev)
        e0, e1, e2, f0, f1, f2 = _from_parent(R, t, W[p, XV], W[p, XV + 1], W[p, XV + 2],
                                              W[p, XV + 3], W[p, XV + 4], W[p, XV + 5])
        e0 += W[i, XE]
        e1 += W[i, XE + 1]
        f0 += W[i, XE + 2]
        f1 += W[i, XE + 3]
        ua = (W[i, XU] * e0 + W[i, XU + 1] * e1 + W[i, XU + 2] * e2
              + W[i, XU + 3] * f0 + W[i, XU + 4] * f1 + W[i, XU + 5] * f2)
        qdd = (W[i, XF] - ua) * W[i, XD]
        if rev:
            e2 += qdd
        else:
            f2 += qdd
        W[i, XV], W[i, XV + 1], W[i, XV + 2] = e0, e1, e2
        W[i, XV + 3], W[i, XV + 4], W[i, XV + 5] = f0, f1, f2
        acc[int(P[i, TOPO + TV])] = qdd
        chk += qdd * 0.0
    return chk


@njit(**_JIT)
def forward_dynamics(P, q, v, tau, acc):
    """qdd = FD(q, v, tau) of the model packed in ``P`` into ``acc``; returns a status code
    (module docstring)."""
    nq, nv = P[0, TOPO + TQ], P[0, TOPO + TV]
    if (P.shape[0] > MAX_BODIES or P.shape[1] != NP or q.shape[0] != nq or v.shape[0] != nv
            or tau.shape[0] != nv or acc.shape[0] != nv
            or not (c_strides(P) and c_strides(q) and c_strides(v) and c_strides(tau)
                    and c_strides(acc))):
        return BAD_SIZE
    return _passes(P, q, v, tau, acc)


@njit(**_JIT)
def aba_passes(P, q, v, tau, acc):
    """``forward_dynamics`` without its size checks, for the integrators (kernels/integrate.py):
    the caller guarantees that P is a non-empty plan and the vectors have its nq and nv. A
    call of its own (not inlined there), so that it keeps this module's FMA contraction."""
    return _passes(P, q, v, tau, acc)


@njit(inline="always", **_JIT)
def _passes(P, q, v, tau, acc):
    """The three passes and the status (module docstring)."""
    nb = P.shape[0] - 1
    W = _work()
    chk, unit = _velocities(P, W, q, v, nb)
    for k in range(tau.shape[0]):
        chk += tau[k] * 0.0
    if not unit:
        return NONFINITE if chk != 0.0 else BAD_QUATERNION
    if _articulate(P, W, tau, nb) != 0:
        return NONFINITE if chk != 0.0 else SINGULAR
    if _accelerations(P, W, acc, nb) != 0.0:
        return NONFINITE if chk != 0.0 else OVERFLOW
    return NONFINITE if chk != 0.0 else OK


_VEC = types.Array(types.float64, 1, "C")
#: the one signature the entry is compiled for (``_inputs.compile_entry``); P is read-only
SIGNATURES = {"forward_dynamics": (forward_dynamics,
                                   (types.Array(types.float64, 2, "C", readonly=True),)
                                   + (_VEC,) * 4)}
