"""Linearity in the inertial parameters: the Slotine-Li regressor, dM/dt, and a second
skew-symmetric Coriolis factorization (Park, Bobrow & Ploen 1995; Ploen 1999).

Parameters
----------
``inertial_parameters(model)`` stacks 10 numbers per moving body, bodies in
``model.body_names`` order (one body per kernel joint, mimic joints included; links welded
through fixed joints are merged into their body), each block in Pinocchio's order::

    (m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz)

with c the centre of mass in the body frame and I the rotational inertia about the **body frame
origin** (not the COM), all in the body frame (= the URDF child link frame of the joint).

Which C
-------
Everything here uses the Christoffel-consistent C of ``ldr.coriolis_matrix`` (Echeandia &
Wensing's skew factor B_i(I, V), see ``kernels/dynamics.py``):
``C(q, v) = sum_i J_i^T (I_i Jd_i + B_i(I_i, V_i) J_i)``. Hence dM/dt = C + C^T, C(q, x) y is
symmetric in (x, y), and it equals Pinocchio's ``computeCoriolisMatrix``. The regressor is

    Y(q, v, v_r, a_r) theta = M(q) a_r + C(q, v) v_r + g(q)   (- armature * a_r, see below).

The columns are the rigid-body ones (Pinocchio's ``computeJointTorqueRegressor``); a model's
armature is not in theta: ``Y theta + armature * a_r`` is the full torque.

``coriolis_matrix_ploen`` is Ploen's (1999) factorization (Proposition 1 and eq. 37,
the matrix rebuilt from eq. 33): the same sum with B_i replaced by C̄_i(w_i), which depends
only on the body's angular velocity. It also satisfies C v + g = RNEA(q, v, 0) and
dM/dt = C + C^T, but it is NOT the Christoffel C: the two differ by a skew matrix D(q, v)
with D v = 0 (tested).

Recursions (Kim's angular-first order inside): forward pass V_i = X_i V_p + S_i v_i,
W_i = J_i v_r = X_i W_p + S_i v_r,i and
Wd_i = J_i a_r + Jd_i v_r + X_i0 Vd_0 = X_i Wd_p - ad(S_i v_i) X_i W_p + Sdot_i v_r,i + S_i a_r,i
with gravity as the base acceleration Vd_0 = (0, -g). Body wrench
F_i = I_i Wd_i + B_i(I_i, V_i) W_i = I_i (Wd_i + 1/2 [V_i, W_i]) - 1/2 ad*_{V_i}(I_i W_i)
- 1/2 ad*_{W_i}(I_i V_i), linear in the 10 parameters (a 6x10 map K_i per body); backward pass
tau_j += S_j^T X_..^T K_i up the chain. A mimic joint shares its master's column (its S_i is
scaled by the multiplier), so its torque accumulates on the master.
"""
import numpy as np

from ..errors import InputError
from ..kernels import dynamics as KD
from ..kernels.joint_kinematics import joint_kinematics
from ..kernels.layout import P, VI, NV, G, WR, WP, V, MS, MSD, OK, NONFINITE
from ..kernels.jit import JIT, njit
from ..kernels.lie import se3_Ad_inv, se3_Ad_inv_T_add, se3_ad_add, se3_ad_star_add
from ..kernels.spatial import mat_vec
from ..lie import se3
from ._inputs import vec, check, prepare, data_for

N_PARAMS = 10
PARAMETER_NAMES = ("m", "mc_x", "mc_y", "mc_z", "I_xx", "I_xy", "I_yy", "I_xz", "I_yz", "I_zz")


# ---------------------------------------------------------------------------------------------
# compiled kernels


@njit(inline="always", **JIT)
def _apply_basis(k, x, out):
    """out = I(e_k) x: the spatial inertia of the k-th unit parameter applied to x = (w, v)."""
    w0, w1, w2, v0, v1, v2 = x[0], x[1], x[2], x[3], x[4], x[5]
    for r in range(6):
        out[r] = 0.0
    if k == 0:                       # m: (0, m v)
        out[3], out[4], out[5] = v0, v1, v2
    elif k <= 3:                     # h = m c = e_{k-1}: (h x v, w x h)
        h0 = 1.0 if k == 1 else 0.0
        h1 = 1.0 if k == 2 else 0.0
        h2 = 1.0 if k == 3 else 0.0
        out[0] = h1 * v2 - h2 * v1
        out[1] = h2 * v0 - h0 * v2
        out[2] = h0 * v1 - h1 * v0
        out[3] = w1 * h2 - w2 * h1
        out[4] = w2 * h0 - w0 * h2
        out[5] = w0 * h1 - w1 * h0
    elif k == 4:                     # I_xx
        out[0] = w0
    elif k == 5:                     # I_xy
        out[0], out[1] = w1, w0
    elif k == 6:                     # I_yy
        out[1] = w1
    elif k == 7:                     # I_xz
        out[0], out[2] = w2, w0
    elif k == 8:                     # I_yz
        out[1], out[2] = w2, w1
    else:                            # I_zz
        out[2] = w2


@njit(**JIT)
def _reference_pass(mi, mc, mI, dv, dm, v, vr, ar, W, Wd):
    """W_i = J_i v_r and Wd_i = J_i a_r + Jd_i v_r + X_i0 (0, -g) for every body (needs the
    joint kinematics and the twists V_i in fv)."""
    nj = mi.shape[0] - 1
    Sq = np.empty(6)
    XW = np.empty(6)
    for k in range(6):
        W[0, k] = 0.0
        Wd[0, k] = 0.0
    for k in range(3):
        Wd[0, 3 + k] = -mc[0, G + k]
    for i in range(1, nj + 1):
        c = dv[i]
        p = mi[i, P]
        vi, nv = mi[i, VI], mi[i, NV]
        mat_vec(dm[i, MS], v[vi:vi + nv], Sq, nv, False)
        se3_Ad_inv(c[WR:WR + 9], c[WP:WP + 3], W[p], XW)
        for k in range(6):
            W[i, k] = XW[k]
        mat_vec(dm[i, MS], vr[vi:vi + nv], W[i], nv, True)
        se3_Ad_inv(c[WR:WR + 9], c[WP:WP + 3], Wd[p], Wd[i])
        se3_ad_add(Sq, XW, Wd[i], -1.0)
        mat_vec(dm[i, MSD], vr[vi:vi + nv], Wd[i], nv, True)
        mat_vec(dm[i, MS], ar[vi:vi + nv], Wd[i], nv, True)


@njit(**JIT)
def _body_wrench_map(Vb, Wb, Wdb, K):
    """K (6 x 10): F = K theta = I(theta) (Wd + 1/2 [V, W]) - 1/2 ad*_V(I W) - 1/2 ad*_W(I V)."""
    acc = np.empty(6)
    for k in range(6):
        acc[k] = Wdb[k]
    se3_ad_add(Vb, Wb, acc, 0.5)
    col = np.empty(6)
    y = np.empty(6)
    for k in range(10):
        _apply_basis(k, acc, col)
        _apply_basis(k, Wb, y)
        se3_ad_star_add(Vb, y, col, -0.5)
        _apply_basis(k, Vb, y)
        se3_ad_star_add(Wb, y, col, -0.5)
        for r in range(6):
            K[r, k] = col[r]


@njit(**JIT)
def _reference_kinematics(mi, mc, mI, dv, dm, q, v, vr, ar, W, Wd, kin):
    """Joint kinematics, body twists V_i, and the reference twists W_i = J_i v_r and their
    rates J_i a_r + Jd_i v_r (gravity included)."""
    if kin:
        st = joint_kinematics(mi, mc, dv, dm, q, v)
        if st != OK:
            return st
    for k in range(vr.shape[0]):
        if not (np.isfinite(vr[k]) and np.isfinite(ar[k])):
            return NONFINITE
    KD._velocities(mi, mc, mI, dv, dm, v, False)
    _reference_pass(mi, mc, mI, dv, dm, v, vr, ar, W, Wd)
    return OK


@njit(**JIT)
def regressor_kernel(mi, mc, mI, dv, dm, q, v, vr, ar, Y, W, Wd, kin):
    """Y (nv x 10 nj) with Y theta = M a_r + C(q, v) v_r + g (Christoffel C)."""
    st = _reference_kinematics(mi, mc, mI, dv, dm, q, v, vr, ar, W, Wd, kin)
    if st != OK:
        return st
    nj = mi.shape[0] - 1
    Y[:, :] = 0.0
    K = np.empty((6, 10))
    Kp = np.empty((6, 10))
    col = np.empty(6)
    tmp = np.empty(6)
    for i in range(1, nj + 1):
        _body_wrench_map(dv[i, V:V + 6], W[i], Wd[i], K)
        c0 = 10 * (i - 1)
        j = i
        while j > 0:
            vj, nvj = mi[j, VI], mi[j, NV]
            S = dm[j, MS]
            for l in range(nvj):
                for k in range(10):
                    acc = 0.0
                    for r in range(6):
                        acc += S[r, l] * K[r, k]
                    Y[vj + l, c0 + k] += acc
            pj = mi[j, P]
            if pj > 0:                                  # K <- X_j^T K (into the parent frame)
                for k in range(10):
                    for r in range(6):
                        col[r] = K[r, k]
                        tmp[r] = 0.0
                    se3_Ad_inv_T_add(dv[j, WR:WR + 9], dv[j, WP:WP + 3], col, tmp, 1.0)
                    for r in range(6):
                        Kp[r, k] = tmp[r]
                K[:, :] = Kp
            j = pj
    return OK


@njit(**JIT)
def slotine_li_kernel(mi, mc, mI, dv, dm, q, v, vr, ar, tau, W, Wd, Fw, kin):
    """tau = M a_r + C(q, v) v_r + g in O(n) (the model's own inertias and armature)."""
    st = _reference_kinematics(mi, mc, mI, dv, dm, q, v, vr, ar, W, Wd, kin)
    if st != OK:
        return st
    nj = mi.shape[0] - 1
    acc = np.empty(6)
    y = np.empty(6)
    for i in range(1, nj + 1):
        I = mI[i]
        Vb = dv[i, V:V + 6]
        for k in range(6):
            acc[k] = Wd[i, k]
        se3_ad_add(Vb, W[i], acc, 0.5)
        mat_vec(I, acc, Fw[i], 6, False)
        mat_vec(I, W[i], y, 6, False)
        se3_ad_star_add(Vb, y, Fw[i], -0.5)
        mat_vec(I, Vb, y, 6, False)
        se3_ad_star_add(W[i], y, Fw[i], -0.5)
    KD.backward_wrenches(mi, dv, dm, Fw, tau)
    KD.add_armature_torques(mi, mc, ar, tau)
    return OK


@njit(**JIT)
def mass_matrix_time_derivative_kernel(mi, mc, mI, dv, dm, q, v, Jb, Jd, Md, kin):
    """dM/dt = H + H^T with H = sum_i J_i^T I_i Jd_i (J, Jd from the recursive Jacobians)."""
    st = KD.jacobian_kinematics(mi, mc, mI, dv, dm, q, v, Jb, Jd, kin)
    if st != OK:
        return st
    nj = mi.shape[0] - 1
    n = Jb.shape[2]
    Hc = np.empty((6, n))
    zero = np.zeros((6, 6))
    Md[:, :] = 0.0
    for i in range(1, nj + 1):
        KD.add_body_coriolis(mI[i], zero, Jb[i], Jd[i], Hc, Md)
    for a_ in range(n):
        for b_ in range(a_, n):
            s = Md[a_, b_] + Md[b_, a_]
            Md[a_, b_] = s
            Md[b_, a_] = s
    return OK


@njit(**JIT)
def ploen_body_factor(I, w, Cb):
    """Ploen (1999), Proposition 1 (rebuilt from eqs. 32–33): the skew C̄(w) with
    C̄ V = -ad*_V (I V) for V = (w, v). I about the body origin: [[Ibar, [h]], [[h]^T, m 1]].

    C̄ = [[ [w] Ibar + Ibar [w], [h][w] ], [ -[w][h], m [w] ]].
    """
    W3 = np.zeros((3, 3))
    W3[0, 1], W3[0, 2], W3[1, 2] = -w[2], w[1], -w[0]
    W3[1, 0], W3[2, 0], W3[2, 1] = w[2], -w[1], w[0]
    m = I[5, 5]
    for r in range(3):
        for c in range(3):
            a = 0.0
            b = 0.0
            d = 0.0
            for k in range(3):
                a += W3[r, k] * I[k, c] + I[r, k] * W3[k, c]
                b += I[r, 3 + k] * W3[k, c]           # [h][w]
                d += W3[r, k] * I[k, 3 + c]           # [w][h]
            Cb[r, c] = a
            Cb[r, 3 + c] = b
            Cb[3 + r, c] = -d
            Cb[3 + r, 3 + c] = m * W3[r, c]


@njit(**JIT)
def coriolis_ploen_kernel(mi, mc, mI, dv, dm, q, v, Jb, Jd, C, kin):
    """C = sum_i J_i^T (I_i Jd_i + C̄_i J_i): Ploen (1999), eq. (37), in Jacobian form."""
    st = KD.jacobian_kinematics(mi, mc, mI, dv, dm, q, v, Jb, Jd, kin)
    if st != OK:
        return st
    nj = mi.shape[0] - 1
    n = Jb.shape[2]
    Cb = np.empty((6, 6))
    H = np.empty((6, n))
    C[:, :] = 0.0
    for i in range(1, nj + 1):
        I = mI[i]
        ploen_body_factor(I, dv[i, V:V + 3], Cb)
        KD.add_body_coriolis(I, Cb, Jb[i], Jd[i], H, C)
    return OK


# ---------------------------------------------------------------------------------------------
# public functions


def inertial_parameters(model):
    """theta (10 * len(model.body_names),): per body (m, m c, I about the body origin), in
    Pinocchio's order (m, mc_x, mc_y, mc_z, Ixx, Ixy, Iyy, Ixz, Iyz, Izz), body frame."""
    return np.concatenate([se3.inertia_to_parameters(I) for I in model.inertias]) \
        if model.njoints else np.zeros(0)


def parameters_to_inertias(theta):
    """(10 k,) -> (k, 6, 6) spatial inertias (public order, as ``model.inertias``), the inverse
    of the stacking above."""
    theta = np.asarray(theta, dtype=float).reshape(-1)
    if theta.size % N_PARAMS:
        raise InputError("theta must have 10 numbers per body, got %d" % theta.size)
    return np.array([se3.parameters_to_inertia(theta[k:k + N_PARAMS])
                     for k in range(0, theta.size, N_PARAMS)])


def parameter_names(model):
    """Labels of theta's entries: '<body>/<param>'."""
    return ["%s/%s" % (b, p) for b in model.body_names for p in PARAMETER_NAMES]


def regressor(model, q, v, v_r, a_r, data=None):
    """Slotine-Li regressor Y (nv x 10 nbodies), computed recursively:

        Y(q, v, v_r, a_r) @ inertial_parameters(model) = M(q) a_r + C(q, v) v_r + g(q)

    with the Christoffel-consistent C of ``ldr.coriolis_matrix``. ``regressor(q, v, v, a)`` is
    the inverse-dynamics regressor (Pinocchio's ``computeJointTorqueRegressor``). Gravity is
    ``model.gravity``; ``model.with_gravity((0, 0, 0))`` gives the regressor of M a_r + C v_r.

    Y has the rigid-body columns only (as Pinocchio's): with an armature, M's diagonal
    carries it and ``Y @ theta + model.armature * a_r`` is the full M a_r + C v_r + g
    (and ``inverse_dynamics``). Identification that fits the armature adds those columns.
    """
    q, v = vec(q, model.nq, "q"), vec(v, model.nv, "v")
    vr, ar = vec(v_r, model.nv, "v_r"), vec(a_r, model.nv, "a_r")
    d = data_for(model, data)
    kin = prepare(model, d, q, v) if model.has_general else True
    Y = np.empty((model.nv, N_PARAMS * model.njoints))
    st = regressor_kernel(model.mi, model.mc, model.mI, d.dv, d.dm, q, v, vr, ar, Y, d.W, d.Wd,
                          kin)
    check(model, st, d, q=q, v=v, v_r=vr, a_r=ar)
    return Y


def slotine_li_torques(model, q, v, v_r, a_r, data=None):
    """M(q) a_r + C(q, v) v_r + g(q) in one O(n) recursion (the model's own inertias, M with
    its armature), without forming M, C or Y. Equals ``regressor(...) @
    inertial_parameters(model) + model.armature * a_r``."""
    q, v = vec(q, model.nq, "q"), vec(v, model.nv, "v")
    vr, ar = vec(v_r, model.nv, "v_r"), vec(a_r, model.nv, "a_r")
    d = data_for(model, data)
    kin = prepare(model, d, q, v) if model.has_general else True
    tau = np.empty(model.nv)
    st = slotine_li_kernel(model.mi, model.mc, model.mI, d.dv, d.dm, q, v, vr, ar, tau, d.W,
                           d.Wd, d.Fw, kin)
    check(model, st, d, q=q, v=v, v_r=vr, a_r=ar)
    return tau


def mass_matrix_time_derivative(model, q, v, data=None):
    """dM/dt along the motion (q, v): sum_i (Jd_i^T I_i J_i + J_i^T I_i Jd_i), from the
    recursive body Jacobians J_i and their time derivatives (no finite differences).
    Equals C + C^T for the Christoffel C (and for ``coriolis_matrix_ploen``)."""
    q, v = vec(q, model.nq, "q"), vec(v, model.nv, "v")
    d = data_for(model, data)
    kin = prepare(model, d, q, v) if model.has_general else True
    Md = np.empty((model.nv, model.nv))
    check(model, mass_matrix_time_derivative_kernel(model.mi, model.mc, model.mI, d.dv, d.dm, q,
                                                    v, d.Jb, d.Jd, Md, kin), d, q=q, v=v)
    return Md


def coriolis_matrix_ploen(model, q, v, data=None):
    """Seed 004's skew-symmetric RNE factorization (Ploen, Proposition 2 with the body factor
    C̄_i of Proposition 1): C = sum_i J_i^T (I_i Jd_i + C̄_i(w_i) J_i).

    C v + g = inverse_dynamics(q, v, 0) and dM/dt - 2C is skew, like ``ldr.coriolis_matrix``,
    but C(q, x) y is not symmetric in (x, y): it differs from the Christoffel C by a skew
    D(q, v) with D v = 0. Use ``ldr.coriolis_matrix`` (Christoffel, = Pinocchio) with the
    regressor; this one is kept for the seed and for comparison.
    """
    q, v = vec(q, model.nq, "q"), vec(v, model.nv, "v")
    d = data_for(model, data)
    kin = prepare(model, d, q, v) if model.has_general else True
    C = np.empty((model.nv, model.nv))
    check(model, coriolis_ploen_kernel(model.mi, model.mc, model.mI, d.dv, d.dm, q, v, d.Jb,
                                       d.Jd, C, kin), d, q=q, v=v)
    return C
