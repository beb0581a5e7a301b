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
from ..kernels import tree_regressor as KR
from ..kernels.views import bare
from ..lie import se3
from ._inputs import vec, check, prepare, data_for, compile_entry, tree_ready
from .tree_plan import regressor_plan

N_PARAMS = 10
PARAMETER_NAMES = ("m", "mc_x", "mc_y", "mc_z", "I_xx", "I_xy", "I_yy", "I_xz", "I_yz", "I_zz")


# ---------------------------------------------------------------------------------------------
# compiled kernels


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


#: (a, b) of the rotational-inertia parameters I_xx, I_xy, I_yy, I_xz, I_yz, I_zz: the basis
#: matrix e_a e_b^T + e_b e_a^T (a != b) or e_a e_a^T
_INERTIA_PAIRS = ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))


@njit(**JIT)
def _body_wrench_map(Vb, Wb, Wdb, K, s6):
    """K (6 x 10): F = K theta = I(theta) (Wd + 1/2 [V, W]) - 1/2 ad*_V(I W) - 1/2 ad*_W(I V),
    in closed form per parameter. With V = (w, u), W = (o, s) (angular, linear), the
    acceleration term (al, be) = Wd + 1/2 [V, W], and I(theta) (x, y) = (Ib x + h x y, m y - h x x):
    m: (0, be + (w x s + o x u) / 2); h = e_j: column j of
    (-[be] + (w s^T - s w^T + o u^T - u o^T) / 2,  [al] + (o w^T + w o^T) / 2 - (w.o) 1);
    Ib = basis B: (B al + (w x B o + o x B w) / 2, 0). ``s6``: (>= 1, 6) scratch."""
    acc = s6[0]
    for k in range(6):
        acc[k] = Wdb[k]
    se3_ad_add(Vb, Wb, acc, 0.5)
    w0, w1, w2, u0, u1, u2 = Vb[0], Vb[1], Vb[2], Vb[3], Vb[4], Vb[5]
    o0, o1, o2, s0, s1, s2 = Wb[0], Wb[1], Wb[2], Wb[3], Wb[4], Wb[5]
    a0, a1, a2, b0, b1, b2 = acc[0], acc[1], acc[2], acc[3], acc[4], acc[5]
    # m
    K[0, 0] = K[1, 0] = K[2, 0] = 0.0
    K[3, 0] = b0 + 0.5 * (w1 * s2 - w2 * s1 + o1 * u2 - o2 * u1)
    K[4, 0] = b1 + 0.5 * (w2 * s0 - w0 * s2 + o2 * u0 - o0 * u2)
    K[5, 0] = b2 + 0.5 * (w0 * s1 - w1 * s0 + o0 * u1 - o1 * u0)
    # h = m c: angular rows -[be] + (w s^T - s w^T + o u^T - u o^T) / 2
    w = (w0, w1, w2)
    u = (u0, u1, u2)
    o = (o0, o1, o2)
    sv = (s0, s1, s2)
    al = (a0, a1, a2)
    be = (b0, b1, b2)
    wo = w0 * o0 + w1 * o1 + w2 * o2
    for r in range(3):
        for j in range(3):
            K[r, 1 + j] = 0.5 * (w[r] * sv[j] - sv[r] * w[j] + o[r] * u[j] - u[r] * o[j])
            K[3 + r, 1 + j] = 0.5 * (o[r] * w[j] + w[r] * o[j])
        K[3 + r, 1 + r] -= wo
    K[0, 2] += b2                       # -[be]
    K[0, 3] -= b1
    K[1, 1] -= b2
    K[1, 3] += b0
    K[2, 1] += b1
    K[2, 2] -= b0
    K[3, 2] -= a2                       # [al]
    K[3, 3] += a1
    K[4, 1] += a2
    K[4, 3] -= a0
    K[5, 1] -= a1
    K[5, 2] += a0
    # rotational inertia about the origin
    for k in range(6):
        a, b = _INERTIA_PAIRS[k]
        x0 = x1 = x2 = 0.0              # B al
        y0 = y1 = y2 = 0.0              # B o
        z0 = z1 = z2 = 0.0              # B w
        if a == 0 or b == 0:
            x0 += al[b] if a == 0 else al[a]
            y0 += o[b] if a == 0 else o[a]
            z0 += w[b] if a == 0 else w[a]
        if (a == 1 or b == 1):
            x1 += al[b] if a == 1 else al[a]
            y1 += o[b] if a == 1 else o[a]
            z1 += w[b] if a == 1 else w[a]
        if (a == 2 or b == 2):
            x2 += al[b] if a == 2 else al[a]
            y2 += o[b] if a == 2 else o[a]
            z2 += w[b] if a == 2 else w[a]
        K[0, 4 + k] = x0 + 0.5 * (w1 * y2 - w2 * y1 + o1 * z2 - o2 * z1)
        K[1, 4 + k] = x1 + 0.5 * (w2 * y0 - w0 * y2 + o2 * z0 - o0 * z2)
        K[2, 4 + k] = x2 + 0.5 * (w0 * y1 - w1 * y0 + o0 * z1 - o1 * z0)
        K[3, 4 + k] = K[4, 4 + k] = K[5, 4 + k] = 0.0


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
    nb, nv = mi.shape[0], Y.shape[0]
    JT, cols = np.empty((nb, nv, 6)), np.empty((nb, nv + 1), np.int64)
    return _regressor(mi, mc, mI, dv, dm, q, v, vr, ar, Y, W, Wd, kin, np.empty((6, 10)),
                      np.empty((3, 6)), JT, cols)


@njit(**JIT)
def regressor_rows(mi, mc, mI, dv, dm, Q, V, A, Y, W, Wd, status, lo, hi):
    """The inverse-dynamics regressor of samples lo <= k < hi in one compiled call:
    Y[k, :, :10 nj] = Y(Q[k], V[k], V[k], A[k]) and status[k] its status (``regressor_kernel``;
    the columns past 10 nj are left alone). Row views without reference counts
    (``kernels/views.py``): the caller holds every array for the call."""
    nb, nv = mi.shape[0], V.shape[1]
    m0, m1, m2, d0, d1 = bare(mi), bare(mc), bare(mI), bare(dv), bare(dm)
    Qb, Vb, Ab, Yb, Wb, Wdb = bare(Q), bare(V), bare(A), bare(Y), bare(W), bare(Wd)
    K, s6 = np.empty((6, 10)), np.empty((3, 6))
    JT, cols = np.empty((nb, nv, 6)), np.empty((nb, nv + 1), np.int64)
    for k in range(lo, hi):
        status[k] = _regressor(m0, m1, m2, d0, d1, Qb[k], Vb[k], Vb[k], Ab[k], Yb[k], Wb, Wdb,
                               True, K, s6, bare(JT), bare(cols))


@njit(**JIT)
def _regressor(mi, mc, mI, dv, dm, q, v, vr, ar, Y, W, Wd, kin, K, s6, JT, cols):
    """``regressor_kernel`` on scratch K (6, 10), s6 (3, 6), JT (nb, nv, 6), cols (nb, nv + 1);
    writes Y's first 10 nj columns.

    Body i's block is J_i^T K_i (K_i its wrench map, J_i its body Jacobian): the columns of J_i
    are those of its parent moved into frame i, J_i = X_i J_p + S_i (Kim 2012, eq. 37), kept
    for the DOFs of i's chain only (JT[i, c] = column c; cols[i, 0] counts them, then the DOF
    indices). A mimic joint's S_i adds to its master's column."""
    st = _reference_kinematics(mi, mc, mI, dv, dm, q, v, vr, ar, W, Wd, kin)
    if st != OK:
        return st
    nj = mi.shape[0] - 1
    for r in range(Y.shape[0]):
        for c in range(10 * nj):
            Y[r, c] = 0.0
    for i in range(1, nj + 1):
        p = mi[i, P]
        Ji, ci = JT[i], cols[i]
        n = 0
        if p > 0:
            Jp, cp = JT[p], cols[p]
            R, t = dv[i, WR:WR + 9], dv[i, WP:WP + 3]
            for m in range(cp[0]):
                c = cp[1 + m]
                se3_Ad_inv(R, t, Jp[c], Ji[c])
                ci[1 + m] = c
            n = cp[0]
        vi, nvi = mi[i, VI], mi[i, NV]
        S = dm[i, MS]
        for l in range(nvi):
            c = vi + l
            new = True
            for m in range(n):
                if ci[1 + m] == c:
                    new = False
            if new:
                ci[1 + n] = c
                n += 1
                for r in range(6):
                    Ji[c, r] = S[r, l]
            else:
                for r in range(6):
                    Ji[c, r] += S[r, l]
        ci[0] = n
        _body_wrench_map(dv[i, V:V + 6], W[i], Wd[i], K, s6)
        c0 = 10 * (i - 1)
        for m in range(n):
            c = ci[1 + m]
            Jc = Ji[c]
            for k in range(10):
                acc = 0.0
                for r in range(6):
                    acc += Jc[r] * K[r, k]
                Y[c, c0 + k] = acc
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

    With v_r = v (the inverse-dynamics regressor) on the models ``regressor_plan`` serves,
    the tree kernel of kernels/tree_regressor.py computes it (the same bits as the
    identification's stacking).
    """
    q, v = vec(q, model.nq, "q", model=model), vec(v, model.nv, "v")
    vr, ar = vec(v_r, model.nv, "v_r"), vec(a_r, model.nv, "a_r")
    P = regressor_plan(model)
    # v_r = v by value (the same state, the same bits); the first entries decide cheaply
    if P is not None and (vr is v or (vr[0] == v[0] and (vr == v).all())):
        if data is not None:
            data_for(model, data)
        compile_entry("regressor", KR.SIGNATURES, tree_ready)
        Y = np.empty((model.nv, N_PARAMS * model.njoints))
        check(model, KR.regressor(P, q, v, ar, Y), q=q, v=v, v_r=vr, a_r=ar)
        return Y
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
    q, v = vec(q, model.nq, "q", model=model), vec(v, model.nv, "v")
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
    q, v = vec(q, model.nq, "q", model=model), vec(v, model.nv, "v")
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
    q, v = vec(q, model.nq, "q", model=model), vec(v, model.nv, "v")
    d = data_for(model, data)
    kin = prepare(model, d, q, v) if model.has_general else True
    C = np.empty((model.nv, model.nv))
    check(model, coriolis_ploen_kernel(model.mi, model.mc, model.mI, d.dv, d.dm, q, v, d.Jb,
                                       d.Jd, C, kin), d, q=q, v=v)
    return C
