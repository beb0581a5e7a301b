"""Per-joint T_{parent,i}(q), S_i(q) and Sdot_i for the built-in joint kinds (compiled).

Reads the model constants ``mc`` and writes the data: dv[i, WR/WP] (T = T_origin * T_joint(q)),
dm[i, MS] (S_i), dm[i, MSD] (Sdot_i) and dv[i, SDV] (Sdot_i qd_i). GENERAL joints are skipped: Python fills their rows afterwards.
"""
import numpy as np

from .layout import (P0, R0, AX, AX2, MULT, OFF, WR, WP, SDV, MS, MSD, K, QI, VI, NV, MIMIC,
                     OK, NONFINITE, BAD_QUATERNION)
from . import joints as J
from .jit import JIT, njit
from .lie import quat_to_rot, so3_exp


@njit(inline="always", **JIT)
def unit_quat(q, k):
    """Read the quaternion q[k:k+4]; returns (x, y, z, w, ok). Norm must be 1 within 1e-6."""
    x, y, z, w = q[k], q[k + 1], q[k + 2], q[k + 3]
    n = np.sqrt(x * x + y * y + z * z + w * w)
    if not abs(n - 1.0) < 1e-6:
        return x, y, z, w, False
    return x / n, y / n, z / n, w / n, True


@njit(inline="always", **JIT)
def unit_row(kind, k_):
    """The row of S's one nonzero entry (0-2 angular, 3-5 linear) of a revolute or prismatic
    joint whose unit axis (constants ``k_``) is exactly +-e_k; -1 for any other axis."""
    return _unit_axis(kind, k_[AX], k_[AX + 1], k_[AX + 2])


@njit(inline="always", **JIT)
def unit_row_at(kind, mc, i):
    """``unit_row`` of row i of the model constants ``mc``, read in place."""
    return _unit_axis(kind, mc[i, AX], mc[i, AX + 1], mc[i, AX + 2])


@njit(inline="always", **JIT)
def _unit_axis(kind, x, y, z):
    a0, a1, a2 = abs(x), abs(y), abs(z)
    k = -1
    if a0 == 1.0 and a1 == 0.0 and a2 == 0.0:
        k = 0
    elif a1 == 1.0 and a0 == 0.0 and a2 == 0.0:
        k = 1
    elif a2 == 1.0 and a0 == 0.0 and a1 == 0.0:
        k = 2
    if k < 0 or not (kind == J.REVOLUTE or kind == J.PRISMATIC):
        return -1
    return k + 3 if kind == J.PRISMATIC else k


@njit(inline="always", **JIT)
def _principal_axis(mc, dv, dm, i, u, x):
    """A revolute (u = 0-2) or prismatic (u = 3-5) joint about +-e_k, k = u mod 3: T = T_origin
    exp(x S), S = +-e_u, Sdot = 0. No Rodrigues and no 3x3 product: the rotation about e_k
    mixes two columns of the origin's rotation (Pinocchio's JointModelRX/RY/RZ, Carpentier et
    al. 2019). Indexes the arrays in place: a view per row costs numba a reference count."""
    k = u % 3
    sg = mc[i, AX + k]                      # +1 or -1
    for r in range(6):
        dm[i, MS, r, 0] = 0.0
        dm[i, MSD, r, 0] = 0.0
        dv[i, SDV + r] = 0.0
    dm[i, MS, u, 0] = mc[i, MULT] * sg
    if u < 3:
        a, b = (k + 1) % 3, (k + 2) % 3     # exp(t [e_k]): e_a -> cos e_a + sin e_b
        cs, sn = np.cos(x), sg * np.sin(x)
        for r in range(3):
            ra, rb = mc[i, R0 + 3 * r + a], mc[i, R0 + 3 * r + b]
            dv[i, WR + 3 * r + a] = cs * ra + sn * rb
            dv[i, WR + 3 * r + b] = cs * rb - sn * ra
            dv[i, WR + 3 * r + k] = mc[i, R0 + 3 * r + k]
            dv[i, WP + r] = mc[i, P0 + r]
    else:
        t = sg * x
        for r in range(3):
            for cc in range(3):
                dv[i, WR + 3 * r + cc] = mc[i, R0 + 3 * r + cc]
            dv[i, WP + r] = mc[i, P0 + r] + mc[i, R0 + 3 * r + k] * t


@njit(**JIT)
def joint_kinematics(mi, mc, dv, dm, q, v):
    """Fill T, S, Sdot of every built-in joint. Returns a status code (layout.OK, ...)."""
    for k in range(q.shape[0]):
        if not np.isfinite(q[k]):
            return NONFINITE
    for k in range(v.shape[0]):
        if not np.isfinite(v[k]):
            return NONFINITE
    nj = mi.shape[0] - 1
    Rj = dv[0, WR:WR + 9]     # row 0 (the universe) has no joint: scratch
    for i in range(1, nj + 1):
        st = joint_row(mi, mc, dv, dm, q, v, i, Rj)
        if st != OK:
            return st
    return OK


@njit(inline="always", **JIT)
def joint_row(mi, mc, dv, dm, q, v, i, Rj):
    """T, S, Sdot of the joint of row i (nothing for a GENERAL joint: Python fills it); ``Rj``
    is 9 floats of scratch. Returns a status code."""
    kind = mi[i, K]
    if kind == J.GENERAL:
        return OK
    qi = mi[i, QI]
    if kind == J.REVOLUTE or kind == J.PRISMATIC:
        u = unit_row_at(kind, mc, i)
        if u >= 0:
            x = q[qi]
            if mi[i, MIMIC] == 1:
                x = mc[i, MULT] * x + mc[i, OFF]
            _principal_axis(mc, dv, dm, i, u, x)
            return OK
    c = dv[i]
    k_ = mc[i]      # the joint's constants (model)
    vi = mi[i, VI]
    S = dm[i, MS]
    Sd = dm[i, MSD]
    nv = mi[i, NV]
    for r in range(6):
        for k in range(nv):
            S[r, k] = 0.0
            Sd[r, k] = 0.0
    pj0 = 0.0
    pj1 = 0.0
    pj2 = 0.0
    mult = k_[MULT]
    a0, a1, a2 = k_[AX], k_[AX + 1], k_[AX + 2]
    if kind == J.REVOLUTE or kind == J.PRISMATIC:
        x = q[qi]
        if mi[i, MIMIC] == 1:
            x = mult * x + k_[OFF]
        if kind == J.REVOLUTE:
            so3_exp(a0 * x, a1 * x, a2 * x, Rj)
            S[0, 0], S[1, 0], S[2, 0] = mult * a0, mult * a1, mult * a2
        else:
            for k in range(9):
                Rj[k] = 0.0
            Rj[0] = Rj[4] = Rj[8] = 1.0
            pj0, pj1, pj2 = a0 * x, a1 * x, a2 * x
            S[3, 0], S[4, 0], S[5, 0] = mult * a0, mult * a1, mult * a2
    elif kind == J.FREE or kind == J.SPHERICAL:
        k0 = qi + 3 if kind == J.FREE else qi
        x, y, z, w, ok = unit_quat(q, k0)
        if not ok:
            return BAD_QUATERNION
        quat_to_rot(x, y, z, w, Rj)
        if kind == J.FREE:
            pj0, pj1, pj2 = q[qi], q[qi + 1], q[qi + 2]
            # v holds (v_lin, w) publicly; S maps it onto the kernels' (w, v) rows
            for k in range(3):
                S[3 + k, k] = 1.0
                S[k, 3 + k] = 1.0
        else:
            for k in range(3):
                S[k, k] = 1.0
    elif kind == J.PLANAR:
        th = q[qi + 2]
        so3_exp(a0 * th, a1 * th, a2 * th, Rj)
        e0, e1, e2 = k_[AX2], k_[AX2 + 1], k_[AX2 + 2]
        f0, f1, f2 = a1 * e2 - a2 * e1, a2 * e0 - a0 * e2, a0 * e1 - a1 * e0
        pj0 = q[qi] * e0 + q[qi + 1] * f0
        pj1 = q[qi] * e1 + q[qi + 1] * f1
        pj2 = q[qi] * e2 + q[qi + 1] * f2
        # columns (0, Rj^T e1), (0, Rj^T e2), (n, 0); Sdot = -thd [n] acting on the first two
        thd = v[vi + 2]
        for col in range(2):
            b0, b1, b2 = (e0, e1, e2) if col == 0 else (f0, f1, f2)
            u0 = Rj[0] * b0 + Rj[3] * b1 + Rj[6] * b2
            u1 = Rj[1] * b0 + Rj[4] * b1 + Rj[7] * b2
            u2 = Rj[2] * b0 + Rj[5] * b1 + Rj[8] * b2
            S[3, col], S[4, col], S[5, col] = u0, u1, u2
            Sd[3, col] = -thd * (a1 * u2 - a2 * u1)
            Sd[4, col] = -thd * (a2 * u0 - a0 * u2)
            Sd[5, col] = -thd * (a0 * u1 - a1 * u0)
        S[0, 2], S[1, 2], S[2, 2] = a0, a1, a2
    elif kind == J.UNIVERSAL:
        b0, b1, b2 = k_[AX2], k_[AX2 + 1], k_[AX2 + 2]
        R1 = np.empty(9)
        R2 = np.empty(9)
        so3_exp(a0 * q[qi], a1 * q[qi], a2 * q[qi], R1)
        so3_exp(b0 * q[qi + 1], b1 * q[qi + 1], b2 * q[qi + 1], R2)
        for r in range(3):
            for cc in range(3):
                Rj[3 * r + cc] = (R1[3 * r] * R2[cc] + R1[3 * r + 1] * R2[3 + cc]
                                  + R1[3 * r + 2] * R2[6 + cc])
        # column 1: R2^T a1; column 2: a2; d/dt(R2^T a1) = -qd2 a2 x (R2^T a1)
        u0 = R2[0] * a0 + R2[3] * a1 + R2[6] * a2
        u1 = R2[1] * a0 + R2[4] * a1 + R2[7] * a2
        u2 = R2[2] * a0 + R2[5] * a1 + R2[8] * a2
        S[0, 0], S[1, 0], S[2, 0] = u0, u1, u2
        S[0, 1], S[1, 1], S[2, 1] = b0, b1, b2
        qd2 = v[vi + 1]
        Sd[0, 0] = -qd2 * (b1 * u2 - b2 * u1)
        Sd[1, 0] = -qd2 * (b2 * u0 - b0 * u2)
        Sd[2, 0] = -qd2 * (b0 * u1 - b1 * u0)
    # T = T_origin * T_joint
    for r in range(3):
        for cc in range(3):
            c[WR + 3 * r + cc] = (k_[R0 + 3 * r] * Rj[cc] + k_[R0 + 3 * r + 1] * Rj[3 + cc]
                                  + k_[R0 + 3 * r + 2] * Rj[6 + cc])
        c[WP + r] = (k_[P0 + r] + k_[R0 + 3 * r] * pj0 + k_[R0 + 3 * r + 1] * pj1
                     + k_[R0 + 3 * r + 2] * pj2)
    for r in range(6):
        acc = 0.0
        for k in range(nv):
            acc += Sd[r, k] * v[vi + k]
        c[SDV + r] = acc
    return OK
