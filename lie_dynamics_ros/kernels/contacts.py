"""Compiled contact and impulse dynamics: one kernel call per ``contact_dynamics`` /
``impulse_dynamics`` (algorithms/contacts.py), Kim 2012 eqs. 67-69 on the closures of
``model/contacts.py``.

The ABA gives qdd_r and the articulated inertias; the constraint rows come from the chains of
the constrained bodies only (``constraints.chain_terms``); M^-1 A^T from Kim's simplified ABA
runs (``constraints.articulated_columns``); then a Cholesky solve of A M^-1 A^T. A set whose
A M^-1 A^T is numerically singular (redundant contacts) returns RANK_DEFICIENT and the caller
takes the rank-revealing path of algorithms/constrained.py.

The entries ``forward_entry`` and ``impulse_entry`` take the Data buffer (kernels/plan.py) and
two work buffers (``work_sizes``: the contact set's tables and scratch, float64 and int64), so
that numba dispatches nine arguments instead of forty.
"""
import numpy as np

from .constraints import articulated_columns, bias_accelerations, chain_terms
from .dynamics import aba, world_poses
from .joint_kinematics import joint_kinematics
from .jit import JIT, njit
from .layout import BAD_SIZE, H_FAIL, H_NB, H_NQ, H_NV, H_PRESC, H_TAU, OK
from .plan import unpack
from .views import bare, c_view

#: status: A M^-1 A^T has a pivot below PIVOT_RTOL times its largest diagonal entry
RANK_DEFICIENT = 100
PIVOT_RTOL = 1e-12


@njit(**JIT)
def constraint_rows(mi, dv, dm, v, rows, Xoff, Toff, point, Psel, owner, with_bias, ab, Jrel,
                    brel, Tab, A, bias):
    """A (nc, nv) and, with ``with_bias``, Adot v (nc,): row r picks ``Psel[r]`` of closure
    ``owner[r]``'s relative terms. Needs the joint kinematics, twists and eta in dv."""
    world_poses(mi, dv)
    if with_bias:
        bias_accelerations(mi, dv, ab)
    chain_terms(mi, dv, dm, v, rows, Xoff, Toff, point, with_bias, ab, Jrel, brel, Tab)
    nv = A.shape[1]
    for r in range(A.shape[0]):
        l = owner[r]
        for c in range(nv):
            s = 0.0
            for k in range(6):
                s += Psel[r, k] * Jrel[l, k, c]
            A[r, c] = s
        if with_bias:
            s = 0.0
            for k in range(6):
                s += Psel[r, k] * brel[l, k]
            bias[r] = s


@njit(**JIT)
def _cholesky_solve(G, x):
    """x <- G^-1 x in place (G overwritten by its factor); False on a small pivot."""
    n = G.shape[0]
    big = 0.0
    for i in range(n):
        big = max(big, G[i, i])
    tol = PIVOT_RTOL * max(big, 1e-300)
    for j in range(n):
        s = G[j, j]
        for k in range(j):
            s -= G[j, k] * G[j, k]
        if not s > tol:
            return False
        G[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            t = G[i, j]
            for k in range(j):
                t -= G[i, k] * G[j, k]
            G[i, j] = t / G[j, j]
    for i in range(n):                          # L y = x
        t = x[i]
        for k in range(i):
            t -= G[i, k] * x[k]
        x[i] = t / G[i, i]
    for i in range(n - 1, -1, -1):              # L^T z = y
        t = x[i]
        for k in range(i + 1, n):
            t -= G[k, i] * x[k]
        x[i] = t / G[i, i]
    return True


@njit(**JIT)
def _to_world_aligned(lwa, Toff, Tab, offsets, ncs, x):
    """Rows of the closures flagged in ``lwa`` from F_b to F_b's origin with world axes."""
    for l in range(lwa.shape[0]):
        if lwa[l]:
            o = offsets[l]
            for h in range(ncs[l] // 3):
                y = np.zeros(3)
                for i in range(3):
                    for j in range(3):
                        Rij = (Toff[l, 0, i, 0] * Tab[l, 0, j] + Toff[l, 0, i, 1] * Tab[l, 1, j]
                               + Toff[l, 0, i, 2] * Tab[l, 2, j])
                        y[i] += Rij * x[o + 3 * h + j]
                x[o + 3 * h:o + 3 * h + 3] = y


@njit(**JIT)
def _columns(mi, dv, dm, presc, A, AT, Y, Tu, bh, acc, rr, active):
    """G = A M^-1 A^T on the articulated inertias of the ABA that just ran: M^-1 A^T on the
    ``active`` bodies only (the chains of the constrained bodies, where A has its columns)."""
    for r in range(A.shape[0]):
        for c in range(A.shape[1]):
            AT[c, r] = A[r, c]
    articulated_columns(mi, dv, dm, presc, AT, Y, Tu, bh, acc, rr, active)
    return A @ Y


@njit(**JIT)
def _add_response(mi, dv, dm, presc, A, Y, lam, bh, acc, rr, active, everywhere, out):
    """out += M^-1 A^T lam on every body: Y lam when ``active`` covered them all, else one more
    simplified ABA run."""
    nv = A.shape[1]
    full = True
    for i in range(1, active.shape[0]):
        full = full and active[i] != 0
    if full:
        for c in range(nv):
            s = 0.0
            for r in range(Y.shape[1]):
                s += Y[c, r] * lam[r]
            out[c] += s
        return
    b = np.zeros((nv, 1))
    for c in range(nv):
        s = 0.0
        for r in range(A.shape[0]):
            s += A[r, c] * lam[r]
        b[c, 0] = s
    y = np.empty((nv, 1))
    tu = np.empty((nv, 1))
    articulated_columns(mi, dv, dm, presc, b, y, tu, bh, acc, rr, everywhere)
    for c in range(nv):
        out[c] += y[c, 0]


@njit(**JIT)
def contact_forward(mi, mc, mI, dv, dm, q, v, tau, presc, failed, use_fext, rows, Xoff, Toff,
                    point, Psel, owner, lwa, offsets, ncs, ab, Jrel, brel, Tab, A, bias, AT, Y,
                    Tu, bh, acc, rr, active, everywhere, a_out, tau_out, lam):
    """(a_out, lam) of ``contact_dynamics`` without Baumgarte terms; status as the kernels."""
    st = aba(mi, mc, mI, dv, dm, q, v, tau, presc, a_out, tau_out, failed, True, use_fext)
    if st != OK:
        return st
    constraint_rows(mi, dv, dm, v, rows, Xoff, Toff, point, Psel, owner, True, ab, Jrel, brel,
                    Tab, A, bias)
    G = _columns(mi, dv, dm, presc, A, AT, Y, Tu, bh, acc, rr, active)
    x = A @ a_out + bias
    if not _cholesky_solve(G, x):
        return RANK_DEFICIENT
    for r in range(x.shape[0]):
        lam[r] = -x[r]
    _add_response(mi, dv, dm, presc, A, Y, lam, bh, acc, rr, active, everywhere, a_out)
    _to_world_aligned(lwa, Toff, Tab, offsets, ncs, lam)
    return OK


@njit(**JIT)
def contact_impulse(mi, mc, mI, dv, dm, q, v, zero, presc, failed, restitution, nk, rows, Xoff,
                    Toff, point, Psel, owner, lwa, offsets, ncs, ab, Jrel, brel, Tab, A, bias,
                    AT, Y, Tu, bh, acc, rr, active, everywhere, a_tmp, tau_tmp, v_out, lam):
    """(v_out, lam) of ``impulse_dynamics``: A v_out = -restitution A v on the first nk rows
    (the contacts), 0 on the others."""
    st = aba(mi, mc, mI, dv, dm, q, v, zero, presc, a_tmp, tau_tmp, failed, True, False)
    if st != OK:
        return st
    constraint_rows(mi, dv, dm, v, rows, Xoff, Toff, point, Psel, owner, False, ab, Jrel, brel,
                    Tab, A, bias)
    G = _columns(mi, dv, dm, presc, A, AT, Y, Tu, bh, acc, rr, active)
    x = A @ v
    for r in range(x.shape[0]):
        x[r] = -x[r] * ((1.0 + restitution) if r < nk else 1.0)
    if not _cholesky_solve(G, x):
        return RANK_DEFICIENT
    for r in range(x.shape[0]):
        lam[r] = x[r]
    v_out[:] = v
    _add_response(mi, dv, dm, presc, A, Y, lam, bh, acc, rr, active, everywhere, v_out)
    _to_world_aligned(lwa, Toff, Tab, offsets, ncs, lam)
    return OK


#: int64 header of the work buffer: number of closures, of rows, of contact rows
I_NL, I_NC, I_NK, NIH = 0, 1, 2, 3


@njit(**JIT)
def work_sizes(nl, nc, nb, nv):
    """(float64 size, int64 size) of the work buffers of ``_unpack_work``."""
    nf = (nl * 72 + nl * 32 + nc * 6 + nb * 6 + nl * 6 * nv + nl * 6 + nl * 16 + nc * nv + nc
          + 3 * nv * nc + 3 * nb * 6 + nv)
    return nf, NIH + 6 * nl + nc + 2 * nb


@njit(inline="always", **JIT)
def _unpack_work(wf, wi, nb, nv):
    nl, nc = wi[I_NL], wi[I_NC]
    o = NIH
    rows = c_view(wi[o:], (nl, 2))
    o += 2 * nl
    point = c_view(wi[o:], (nl,))
    o += nl
    owner = c_view(wi[o:], (nc,))
    o += nc
    lwa = c_view(wi[o:], (nl,))
    o += nl
    offsets = c_view(wi[o:], (nl,))
    o += nl
    ncs = c_view(wi[o:], (nl,))
    o += nl
    active = c_view(wi[o:], (nb,))
    o += nb
    everywhere = c_view(wi[o:], (nb,))
    f = 0
    Xoff = c_view(wf[f:], (nl, 2, 6, 6))
    f += nl * 72
    Toff = c_view(wf[f:], (nl, 2, 4, 4))
    f += nl * 32
    Psel = c_view(wf[f:], (nc, 6))
    f += nc * 6
    ab = c_view(wf[f:], (nb, 6))
    f += nb * 6
    Jrel = c_view(wf[f:], (nl, 6, nv))
    f += nl * 6 * nv
    brel = c_view(wf[f:], (nl, 6))
    f += nl * 6
    Tab = c_view(wf[f:], (nl, 4, 4))
    f += nl * 16
    A = c_view(wf[f:], (nc, nv))
    f += nc * nv
    bias = c_view(wf[f:], (nc,))
    f += nc
    AT = c_view(wf[f:], (nv, nc))
    f += nv * nc
    Y = c_view(wf[f:], (nv, nc))
    f += nv * nc
    Tu = c_view(wf[f:], (nv, nc))
    f += nv * nc
    bh = c_view(wf[f:], (nb, 6))
    f += nb * 6
    acc = c_view(wf[f:], (nb, 6))
    f += nb * 6
    rr = c_view(wf[f:], (nb, 6))
    f += nb * 6
    a_tmp = c_view(wf[f:], (nv,))
    return (rows, point, owner, lwa, offsets, ncs, active, everywhere, Xoff, Toff, Psel, ab,
            Jrel, brel, Tab, A, bias, AT, Y, Tu, bh, acc, rr, a_tmp)


@njit(inline="always", **JIT)
def _sizes_ok(h, wf, wi, nb, nv):
    if wi.shape[0] < NIH:
        return False
    nl, nc = wi[I_NL], wi[I_NC]
    nf, ni = work_sizes(nl, nc, nb, nv)
    return nl >= 0 and nc >= 0 and wf.shape[0] == nf and wi.shape[0] == ni


@njit(**JIT)
def forward_entry(buf, wf, wi, q, v, tau, a, lam, use_fext):
    """``contact_forward`` on the Data buffer and the work buffers; a status code."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    nv, nb = h[H_NV], h[H_NB]
    if not ok or not _sizes_ok(h, wf, wi, nb, nv) or q.shape[0] != h[H_NQ] \
            or v.shape[0] != nv or tau.shape[0] != nv or a.shape[0] != nv \
            or lam.shape[0] != wi[I_NC]:
        return BAD_SIZE
    (rows, point, owner, lwa, offsets, ncs, active, everywhere, Xoff, Toff, Psel, ab, Jrel, brel,
     Tab, A, bias, AT, Y, Tu, bh, acc, rr, a_tmp) = _unpack_work(wf, wi, nb, nv)
    presc = c_view(buf[h[H_PRESC]:].view(np.bool_), (nb,))
    failed = c_view(buf[h[H_FAIL]:].view(np.int64), (1,))
    return contact_forward(mi, mc, mI, dv, dm, bare(q), bare(v), bare(tau), presc, failed,
                           use_fext, rows, Xoff, Toff, point, Psel, owner, lwa, offsets, ncs, ab,
                           Jrel, brel, Tab, A, bias, AT, Y, Tu, bh, acc, rr, active, everywhere,
                           bare(a), c_view(buf[h[H_TAU]:], (nv,)), bare(lam))


@njit(**JIT)
def impulse_entry(buf, wf, wi, q, v, v_out, lam, restitution):
    """``contact_impulse`` on the Data buffer and the work buffers; a status code."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    nv, nb = h[H_NV], h[H_NB]
    if not ok or not _sizes_ok(h, wf, wi, nb, nv) or q.shape[0] != h[H_NQ] \
            or v.shape[0] != nv or v_out.shape[0] != nv or lam.shape[0] != wi[I_NC]:
        return BAD_SIZE
    (rows, point, owner, lwa, offsets, ncs, active, everywhere, Xoff, Toff, Psel, ab, Jrel, brel,
     Tab, A, bias, AT, Y, Tu, bh, acc, rr, a_tmp) = _unpack_work(wf, wi, nb, nv)
    presc = c_view(buf[h[H_PRESC]:].view(np.bool_), (nb,))
    failed = c_view(buf[h[H_FAIL]:].view(np.int64), (1,))
    zero = np.zeros(nv)
    return contact_impulse(mi, mc, mI, dv, dm, bare(q), bare(v), zero, presc, failed,
                           restitution, wi[I_NK], rows, Xoff, Toff, point, Psel, owner, lwa,
                           offsets, ncs, ab, Jrel, brel, Tab, A, bias, AT, Y, Tu, bh, acc, rr,
                           active, everywhere, a_tmp, c_view(buf[h[H_TAU]:], (nv,)), bare(v_out),
                           bare(lam))


@njit(**JIT)
def jacobian_entry(buf, wf, wi, q, J):
    """J (nk, nv): the contact rows of A in each contact's reference frame (``contact_jacobian``)
    on the Data buffer and the work buffers; a status code."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    nv, nb = h[H_NV], h[H_NB]
    if not ok or not _sizes_ok(h, wf, wi, nb, nv) or q.shape[0] != h[H_NQ] \
            or J.shape[1] != nv or J.shape[0] != wi[I_NK]:
        return BAD_SIZE
    (rows, point, owner, lwa, offsets, ncs, active, everywhere, Xoff, Toff, Psel, ab, Jrel, brel,
     Tab, A, bias, AT, Y, Tu, bh, acc, rr, a_tmp) = _unpack_work(wf, wi, nb, nv)
    zero = np.zeros(nv)
    st = joint_kinematics(mi, mc, dv, dm, bare(q), zero)
    if st != OK:
        return st
    constraint_rows(mi, dv, dm, zero, rows, Xoff, Toff, point, Psel, owner, False, ab, Jrel,
                    brel, Tab, A, bias)
    nk = wi[I_NK]
    col = np.empty(A.shape[0])
    for c in range(nv):
        for r in range(A.shape[0]):
            col[r] = A[r, c]
        _to_world_aligned(lwa, Toff, Tab, offsets, ncs, col)
        for r in range(nk):
            J[r, c] = col[r]
    return OK
