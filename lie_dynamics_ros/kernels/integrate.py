"""Compiled Lie group integration: whole fixed steps of ``simulate`` (stages, exponentials,
update) in one call, over the SO(3)/SE(3) twins of ``kernels/lie.py``.

Kernel se(3) rows are angular first (Kim 2012); ``TS2Space`` passes its (angular, linear)
copies straight in (``integrators/spaces.py``).

The multibody steps integrate q' = q . v, v' = a(q, v) on Q x R^nv (``integrators/simulate.py``
explains the right action and why dexp^-1 is taken at -sigma). Free joints carry the public
(linear, angular) velocity order of ``v`` (docs/conventions.md): the kernels read the two
3-blocks by offset, so no permutation is needed here. Accelerations come from the articulated
body algorithm or hybrid dynamics (Kim 2012, Tables 3 and 4) on the caller's Data, with the
model's armature on M's diagonal (``kernels/dynamics.py``). A revolute/prismatic tree, on a
free root or not, without prescribed joints passes its packed plan P
(``algorithms/tree_plan.py``) and takes the tree ABA of ``kernels/tree_aba.py`` instead; other
models pass an empty (0, tree.NP) P.

The cache key covers the kernel files imported (kernels/jit.py), so edits of the kernels
called from here (kernels/dynamics.py, tree_aba.py, joint_kinematics.py, spatial.py)
recompile this file.
"""
import numpy as np

from . import joints as J
from .dynamics import aba, hybrid
from .tree_aba import aba_passes
from .jit import JIT, njit
from .views import scratch, unref
from .layout import K, QI, VI, NQ, MIMIC, OK
from .lie import (cross, left_jacobian_apply, quat_exp, quat_multiply, quat_to_rot, se3_exp,
                  se3_dexp_inv, so3_dexp_inv_apply)

#: method codes of ``step`` / ``rollout``
SEMI_IMPLICIT, RKMK, CF4 = 0, 1, 2


# ----------------------------------------------------------------------------- rows of se(3)
@njit(**JIT)
def se3_dexp_inv_rows(U, V, out):
    """``se3_dexp_inv`` on every row of (n, 6) arrays."""
    for r in range(U.shape[0]):
        se3_dexp_inv(U[r], V[r], out[r])


@njit(**JIT)
def ts2_exp_act(X, Y, out):
    """The SE(3) adjoint action on TS^2, row by row (Celledoni et al. 2021, §5.1):
    (q, w) -> (A q, A w + a x A q) with (A, a) = exp(X[r]); X, Y, out (n, 6)."""
    R = np.empty(9)
    p = np.empty(3)
    for r in range(X.shape[0]):
        se3_exp(X[r], R, p)
        y = Y[r]
        o = out[r]
        for k in range(3):
            o[k] = R[3 * k] * y[0] + R[3 * k + 1] * y[1] + R[3 * k + 2] * y[2]
            o[3 + k] = R[3 * k] * y[3] + R[3 * k + 1] * y[4] + R[3 * k + 2] * y[5]
        c0, c1, c2 = cross(p[0], p[1], p[2], o[0], o[1], o[2])
        o[3] += c0
        o[4] += c1
        o[5] += c2


# ----------------------------------------------------------------------------- configurations
@njit(**JIT)
def integrate_q(mi, q, dq, s, out):
    """out = q (+) s dq (``ldr.integrate(model, q, dq, s)``): T exp(s xi) on SE(3) for free
    joints (xi = (v_lin, w) in the body frame), R exp(s w) on SO(3) for ball joints, q + s dq
    else. Mimic rows are skipped (they own no coordinates)."""
    R = scratch(9)          # on the stack: a step calls this several times
    for i in range(1, mi.shape[0]):
        if mi[i, MIMIC]:
            continue
        kind, qi, vi = mi[i, K], mi[i, QI], mi[i, VI]
        if kind == J.FREE:
            l0, l1, l2 = dq[vi] * s, dq[vi + 1] * s, dq[vi + 2] * s
            w0, w1, w2 = dq[vi + 3] * s, dq[vi + 4] * s, dq[vi + 5] * s
            x, y, z, w = q[qi + 3], q[qi + 4], q[qi + 5], q[qi + 6]
            n = np.sqrt(x * x + y * y + z * z + w * w)
            quat_to_rot(x / n, y / n, z / n, w / n, R)
            j0, j1, j2 = left_jacobian_apply(w0, w1, w2, l0, l1, l2)
            for k in range(3):
                out[qi + k] = q[qi + k] + (R[3 * k] * j0 + R[3 * k + 1] * j1 + R[3 * k + 2] * j2)
            ex, ey, ez, ew = quat_exp(w0, w1, w2)
            (out[qi + 3], out[qi + 4], out[qi + 5],
             out[qi + 6]) = quat_multiply(q[qi + 3], q[qi + 4], q[qi + 5], q[qi + 6],
                                          ex, ey, ez, ew)
        elif kind == J.SPHERICAL:
            ex, ey, ez, ew = quat_exp(dq[vi] * s, dq[vi + 1] * s, dq[vi + 2] * s)
            out[qi], out[qi + 1], out[qi + 2], out[qi + 3] = quat_multiply(
                q[qi], q[qi + 1], q[qi + 2], q[qi + 3], ex, ey, ez, ew)
        else:
            for k in range(mi[i, NQ]):
                out[qi + k] = q[qi + k] + dq[vi + k] * s


@njit(**JIT)
def _dexp_inv_right(mi, u, x, out, nv):
    """out = dexp^-1 of the opposite algebra at u applied to x, on (dq, dv) vectors of length
    2 nv: dexp_{-u}^-1 on the SE(3)/SO(3) blocks of dq (the right action), identity elsewhere."""
    for k in range(2 * nv):
        out[k] = x[k]
    U, X, Y = scratch(6), scratch(6), scratch(6)
    for i in range(1, mi.shape[0]):
        if mi[i, MIMIC]:
            continue
        kind, vi = mi[i, K], mi[i, VI]
        if kind == J.FREE:      # v's (lin, ang) block -> the kernel's (ang, lin)
            for k in range(3):
                U[k], U[3 + k] = -u[vi + 3 + k], -u[vi + k]
                X[k], X[3 + k] = x[vi + 3 + k], x[vi + k]
            se3_dexp_inv(U, X, Y)
            for k in range(3):
                out[vi + k], out[vi + 3 + k] = Y[3 + k], Y[k]
        elif kind == J.SPHERICAL:
            out[vi], out[vi + 1], out[vi + 2] = so3_dexp_inv_apply(
                -u[vi], -u[vi + 1], -u[vi + 2], x[vi], x[vi + 1], x[vi + 2])


# ----------------------------------------------------------------------------- steps
# work rows of ``wk`` (shape (WK_ROWS + stages, max(nq, 2 nv))), see ``work_array``
_QS, _VS, _U, _A, _TAU, _Q1, _T1, _K0 = 0, 1, 2, 3, 4, 5, 6, 7
WK_ROWS = 7


@njit(**JIT)
def _accel(mi, mc, mI, dv, dm, P, q, v, tau, a_pres, mask, presc, failed, wk):
    """wk[_A] = a(q, v): ABA, or hybrid dynamics when mask has a True entry (mask[0] of an
    empty mask means none). A non-empty tree plan P (kernels/tree.py) runs the tree ABA; when
    it fails, the general ABA reruns so that the status and ``failed`` are its own."""
    nv = v.shape[0]
    a = wk[_A, :nv]
    if mask.shape[0] == 0:
        if P.shape[0] > 0 and aba_passes(P, q, v, tau, a) == OK:
            return OK
        return aba(mi, mc, mI, dv, dm, q, v, tau, presc, a, wk[_TAU, :nv], failed, True, False)
    return hybrid(mi, mc, mI, dv, dm, q, v, a_pres, tau, mask, presc, a, wk[_TAU, :nv], failed,
                  True, False)


@njit(**JIT)
def _f(mi, mc, mI, dv, dm, P, q, v, tau, a_pres, mask, presc, failed, wk, Kr):
    """Kr = f(q, v) = (v, a(q, v)) (2 nv)."""
    nv = v.shape[0]
    st = _accel(mi, mc, mI, dv, dm, P, q, v, tau, a_pres, mask, presc, failed, wk)
    for k in range(nv):
        Kr[k] = v[k]
        Kr[nv + k] = wk[_A, k]
    return st


@njit(**JIT)
def _exp_act(mi, xi, q, v, q_out, v_out):
    """(q, v) -> (q (+) xi_q, v + xi_v)."""
    nv = v.shape[0]
    integrate_q(mi, q, xi, 1.0, q_out)
    for k in range(nv):
        v_out[k] = v[k] + xi[nv + k]


@njit(**JIT)
def step(mi, mc, mI, dv, dm, P, method, ta, tb, q, v, h, tau, a_pres, mask, presc, failed, wk,
         q_out, v_out):
    """``_step`` on views of the arrays without reference counts (kernels/views.py: the caller
    holds the arrays for the whole call)."""
    return _step(unref(mi), unref(mc), unref(mI), unref(dv), unref(dm), unref(P), method,
                 unref(ta), unref(tb), unref(q), unref(v), h, unref(tau), unref(a_pres),
                 unref(mask), unref(presc), unref(failed), unref(wk), unref(q_out), unref(v_out))


@njit(**JIT)
def _step(mi, mc, mI, dv, dm, P, method, ta, tb, q, v, h, tau, a_pres, mask, presc, failed, wk,
          q_out, v_out):
    """One step of ``method`` from (q, v) to (q_out, v_out) (they may alias q, v).

    method: SEMI_IMPLICIT (v+ = v + h a, q+ = q (+) h v+), RKMK (exact dexp^-1 on the Butcher
    tableau ``ta``, ``tb``; Celledoni et al. 2021, §2.2) or CF4 (eq. 9). Returns a status code.
    """
    nq, nv = q.shape[0], v.shape[0]
    n2 = 2 * nv
    qs, vs, u = wk[_QS, :nq], wk[_VS, :nv], wk[_U, :n2]
    if method == SEMI_IMPLICIT:
        st = _accel(mi, mc, mI, dv, dm, P, q, v, tau, a_pres, mask, presc, failed, wk)
        if st != OK:
            return st
        for k in range(nv):
            vs[k] = v[k] + h * wk[_A, k]
        integrate_q(mi, q, vs, h, q_out)
        for k in range(nv):
            v_out[k] = vs[k]
        return OK
    if method == RKMK:
        s = tb.shape[0]
        st = _f(mi, mc, mI, dv, dm, P, q, v, tau, a_pres, mask, presc, failed, wk, wk[_K0, :n2])
        if st != OK:
            return st
        for i in range(1, s):
            for k in range(n2):
                acc = 0.0
                for j in range(i):
                    acc += ta[i, j] * wk[_K0 + j, k]
                u[k] = h * acc
            _exp_act(mi, u, q, v, qs, vs)
            st = _f(mi, mc, mI, dv, dm, P, qs, vs, tau, a_pres, mask, presc, failed, wk,
                    wk[_T1, :n2])
            if st != OK:
                return st
            _dexp_inv_right(mi, u, wk[_T1, :n2], wk[_K0 + i, :n2], nv)
        for k in range(n2):
            acc = 0.0
            for j in range(s):
                acc += tb[j] * wk[_K0 + j, k]
            u[k] = h * acc
        _exp_act(mi, u, q, v, q_out, v_out)
        return OK
    # CF4: Y2 = exp(h F1/2) y; Y3 = exp(h F2/2) y; Y4 = exp(h (F3 - F1/2)) Y2;
    # y1 = exp(h (-F1 + 2 F2 + 2 F3 + 3 F4)/12) exp(h (3 F1 + 2 F2 + 2 F3 - F4)/12) y
    F0, F1, F2, F3 = wk[_K0, :n2], wk[_K0 + 1, :n2], wk[_K0 + 2, :n2], wk[_K0 + 3, :n2]
    q1, v1 = wk[_Q1, :nq], wk[_T1, :nv]
    st = _f(mi, mc, mI, dv, dm, P, q, v, tau, a_pres, mask, presc, failed, wk, F0)
    if st != OK:
        return st
    for k in range(n2):
        u[k] = h * (0.5 * F0[k])
    _exp_act(mi, u, q, v, q1, v1)                                       # Y2
    st = _f(mi, mc, mI, dv, dm, P, q1, v1, tau, a_pres, mask, presc, failed, wk, F1)
    if st != OK:
        return st
    for k in range(n2):
        u[k] = h * (0.5 * F1[k])
    _exp_act(mi, u, q, v, qs, vs)                                       # Y3
    st = _f(mi, mc, mI, dv, dm, P, qs, vs, tau, a_pres, mask, presc, failed, wk, F2)
    if st != OK:
        return st
    for k in range(n2):
        u[k] = h * (-0.5 * F0[k] + F2[k])
    _exp_act(mi, u, q1, v1, qs, vs)                                     # Y4 from Y2
    st = _f(mi, mc, mI, dv, dm, P, qs, vs, tau, a_pres, mask, presc, failed, wk, F3)
    if st != OK:
        return st
    for k in range(n2):
        u[k] = h * (3.0 / 12 * F0[k] + 2.0 / 12 * F1[k] + 2.0 / 12 * F2[k] - 1.0 / 12 * F3[k])
    _exp_act(mi, u, q, v, qs, vs)
    for k in range(n2):
        u[k] = h * (-1.0 / 12 * F0[k] + 2.0 / 12 * F1[k] + 2.0 / 12 * F2[k] + 3.0 / 12 * F3[k])
    _exp_act(mi, u, qs, vs, q_out, v_out)
    return OK


@njit(**JIT)
def rollout(mi, mc, mI, dv, dm, P, method, ta, tb, h, tau, a_pres, mask, presc, failed, wk, Q,
            V, done):
    """``_rollout`` on views of the arrays without reference counts (as ``step``)."""
    return _rollout(unref(mi), unref(mc), unref(mI), unref(dv), unref(dm), unref(P), method,
                    unref(ta), unref(tb), h, unref(tau), unref(a_pres), unref(mask),
                    unref(presc), unref(failed), unref(wk), unref(Q), unref(V), unref(done))


@njit(**JIT)
def _rollout(mi, mc, mI, dv, dm, P, method, ta, tb, h, tau, a_pres, mask, presc, failed, wk, Q,
             V, done):
    """Q[k + 1], V[k + 1] = step(Q[k], V[k]) for k = 0 .. len(Q) - 2; Q[0], V[0] hold the initial
    state. Stops at the first failing step: done[0] = the number of steps taken. Returns the
    status of that step (OK if all ran)."""
    done[0] = 0
    for k in range(Q.shape[0] - 1):
        st = _step(mi, mc, mI, dv, dm, P, method, ta, tb, Q[k], V[k], h, tau, a_pres, mask,
                   presc, failed, wk, Q[k + 1], V[k + 1])
        if st != OK:
            return st
        done[0] = k + 1
    return OK


@njit(**JIT)
def rollout_rows(mi, mc, mI, dv, dm, P, method, ta, tb, h, TAU, a_pres, mask, presc, failed, wk,
                 Q, V, status, done, lo, hi):
    """``rollout`` of the trajectories lo .. hi - 1: Q (N, n + 1, nq), V (N, n + 1, nv), TAU
    (N, nv); per-row status and steps taken. Runs on views without reference counts."""
    _rollout_rows(unref(mi), unref(mc), unref(mI), unref(dv), unref(dm), unref(P), method,
                  unref(ta), unref(tb), h, unref(TAU), unref(a_pres), unref(mask), unref(presc),
                  unref(failed), unref(wk), unref(Q), unref(V), status, done, lo, hi)


@njit(**JIT)
def _rollout_rows(mi, mc, mI, dv, dm, P, method, ta, tb, h, TAU, a_pres, mask, presc, failed, wk,
                  Q, V, status, done, lo, hi):
    for r in range(lo, hi):
        status[r] = _rollout(mi, mc, mI, dv, dm, P, method, ta, tb, h, TAU[r], a_pres, mask,
                             presc, failed, wk, Q[r], V[r], done[r:r + 1])
