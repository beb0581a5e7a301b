"""Compiled 6x6 linear algebra of the recursions, in the kernels' order (angular, linear):
small matrix-vector products, the inertia congruences X^T I X and an SPD inverse.

``R`` is a row-major 9-vector and ``p`` a 3-vector: the pose T = (R, p) of a child frame in its
parent; X = Ad_{T^-1} (``kernels/lie.py``) maps parent twists to the child frame (Kim eq. 37).
"""
import numpy as np

from .jit import JIT, njit
from .lie import se3_Ad_inv, se3_Ad_inv_T_add


@njit(inline="always", **JIT)
def mat_vec(A, x, out, n, add):
    """out (6) (+)= A[:, :n] @ x[:n]."""
    for r in range(6):
        acc = 0.0
        for c in range(n):
            acc += A[r, c] * x[c]
        if add:
            out[r] += acc
        else:
            out[r] = acc


@njit(inline="always", **JIT)
def matT_vec(A, x, out, n, add):
    """out (n) (+)= A[:, :n]^T @ x (6)."""
    for c in range(n):
        acc = 0.0
        for r in range(6):
            acc += A[r, c] * x[r]
        if add:
            out[c] += acc
        else:
            out[c] = acc


@njit(**JIT)
def congruence_add(R, p, I, out, col, tmp):
    """out += X^T I X with X = Ad_{T^-1}: a child inertia seen from the parent (Kim eq. 21).

    ``col`` and ``tmp`` are 6-vector scratch buffers.
    """
    for k in range(6):
        for r in range(6):
            col[r] = 0.0
        col[k] = 1.0
        se3_Ad_inv(R, p, col, tmp)                 # tmp = X e_k
        for r in range(6):
            acc = 0.0
            for c in range(6):
                acc += I[r, c] * tmp[c]
            col[r] = acc                       # col = I X e_k
        for r in range(6):
            tmp[r] = 0.0
        se3_Ad_inv_T_add(R, p, col, tmp, 1.0)      # tmp = X^T I X e_k
        for r in range(6):
            out[r, k] += tmp[r]


@njit(**JIT)
def invert_spd(A, n, out):
    """out[:n, :n] = inverse of the SPD block A[:n, :n] (Gauss-Jordan). False if singular."""
    if n == 1:
        if not A[0, 0] > 1e-300:
            return False
        out[0, 0] = 1.0 / A[0, 0]
        return True
    w = np.empty((n, 2 * n))
    scale = 0.0
    for r in range(n):
        for c in range(n):
            w[r, c] = A[r, c]
            w[r, n + c] = 1.0 if r == c else 0.0
        scale = max(scale, abs(A[r, r]))
    for c in range(n):
        piv = c
        for r in range(c + 1, n):
            if abs(w[r, c]) > abs(w[piv, c]):
                piv = r
        if not abs(w[piv, c]) > 1e-14 * scale:
            return False
        if piv != c:
            for k in range(2 * n):
                w[c, k], w[piv, k] = w[piv, k], w[c, k]
        d = 1.0 / w[c, c]
        for k in range(2 * n):
            w[c, k] *= d
        for r in range(n):
            if r != c and w[r, c] != 0.0:
                f = w[r, c]
                for k in range(2 * n):
                    w[r, k] -= f * w[c, k]
    for r in range(n):
        for c in range(n):
            out[r, c] = w[r, n + c]
    return True


@njit(inline="always", **JIT)
def rigid_congruence_add(R, p, I, out):
    """out += X^T I X, X = Ad_{T^-1}, for a rigid-body (or composite) inertia
    I = [[I_o, [h]], [[h]^T, m 1]] (Kim eq. 22, h = m c): the parallel-axis form, ~100 flops
    instead of the general 6x6 congruence. In the parent: h' = R h + m p and
    I_o' = R I_o R^T - [Rh][p] - [p][Rh] - m [p]^2.
    """
    m = I[5, 5]
    h0, h1, h2 = I[2, 4], I[0, 5], I[1, 3]
    r0 = R[0] * h0 + R[1] * h1 + R[2] * h2
    r1 = R[3] * h0 + R[4] * h1 + R[5] * h2
    r2 = R[6] * h0 + R[7] * h1 + R[8] * h2
    p0, p1, p2 = p[0], p[1], p[2]
    rp = r0 * p0 + r1 * p1 + r2 * p2
    pp = p0 * p0 + p1 * p1 + p2 * p2
    rv = (r0, r1, r2)
    pv = (p0, p1, p2)
    for a in range(3):
        for b in range(3):
            acc = 0.0                                    # (R I_o R^T)[a, b]
            for k in range(3):
                t = R[3 * a] * I[0, k] + R[3 * a + 1] * I[1, k] + R[3 * a + 2] * I[2, k]
                acc += t * R[3 * b + k]
            acc -= pv[b] * rv[a] + rv[b] * pv[a]         # -[Rh][p] - [p][Rh] = ...
            acc -= m * pv[a] * pv[b]                     # -m [p]^2 = m (|p|^2 - p p^T)
            if a == b:
                acc += 2.0 * rp + m * pp
            out[a, b] += acc
    g0, g1, g2 = r0 + m * p0, r1 + m * p1, r2 + m * p2  # h'
    out[0, 4] -= g2
    out[0, 5] += g1
    out[1, 3] += g2
    out[1, 5] -= g0
    out[2, 3] -= g1
    out[2, 4] += g0
    out[3, 1] += g2
    out[3, 2] -= g1
    out[4, 0] -= g2
    out[4, 2] += g0
    out[5, 0] += g1
    out[5, 1] -= g0
    out[3, 3] += m
    out[4, 4] += m
    out[5, 5] += m


@njit(**JIT)
def block_congruence_add(R, p, I, out, S1, S2):
    """out += X^T I X, X = Ad_{T^-1}, for any symmetric I = [[A, B], [B^T, C]] (articulated
    inertias). With A', B', C' the blocks rotated by R and P = [p]:
    X^T I X = [[A' - B'P + P B'^T - P C' P, B' + P C'], [(B' + P C')^T, C']].
    ``S1``, ``S2`` are 6x6 scratch: A', B', C', B'' in S1's quadrants, R times an I-block in S2.
    """
    tmp = S2[0:3, 0:3]
    for k in range(3):
        r0, c0 = (0, 0) if k == 0 else ((0, 3) if k == 1 else (3, 3))
        for a in range(3):
            for b in range(3):
                tmp[a, b] = (R[3 * a] * I[r0, c0 + b] + R[3 * a + 1] * I[r0 + 1, c0 + b]
                             + R[3 * a + 2] * I[r0 + 2, c0 + b])
        blk = S1[0:3, 0:3] if k == 0 else (S1[0:3, 3:6] if k == 1 else S1[3:6, 0:3])
        for a in range(3):
            for b in range(3):
                blk[a, b] = tmp[a, 0] * R[3 * b] + tmp[a, 1] * R[3 * b + 1] + tmp[a, 2] * R[3 * b + 2]
    A_, B_, C_, B2 = S1[0:3, 0:3], S1[0:3, 3:6], S1[3:6, 0:3], S1[3:6, 3:6]
    p0, p1, p2 = p[0], p[1], p[2]
    for b in range(3):                             # B'' = B' + P C',  P x = p x x
        B2[0, b] = B_[0, b] + p1 * C_[2, b] - p2 * C_[1, b]
        B2[1, b] = B_[1, b] + p2 * C_[0, b] - p0 * C_[2, b]
        B2[2, b] = B_[2, b] + p0 * C_[1, b] - p1 * C_[0, b]
    for a in range(3):
        # (B'' P)[a, :] = B''[a, :] x p   (a row vector times [p])
        m0, m1, m2 = B2[a, 0], B2[a, 1], B2[a, 2]
        mp0, mp1, mp2 = m1 * p2 - m2 * p1, m2 * p0 - m0 * p2, m0 * p1 - m1 * p0   # (M P)[a, :]
        for b in range(3):
            # (P B'^T)[a, b] = sum_j P[a, j] B'[b, j] = (p x B'[b, :])[a]
            if a == 0:
                pb = p1 * B_[b, 2] - p2 * B_[b, 1]
            elif a == 1:
                pb = p2 * B_[b, 0] - p0 * B_[b, 2]
            else:
                pb = p0 * B_[b, 1] - p1 * B_[b, 0]
            mp = mp0 if b == 0 else (mp1 if b == 1 else mp2)
            out[a, b] += A_[a, b] - mp + pb
            out[a, 3 + b] += B2[a, b]
            out[3 + b, a] += B2[a, b]
            out[3 + a, 3 + b] += C_[a, b]


@njit(inline="always", **JIT)
def _rotate_block(R, I, r0, c0, W, w0, w1, sym):
    """W[w0:w0+3, w1:w1+3] = R I[r0:r0+3, c0:c0+3] R^T (the upper triangle alone if ``sym``)."""
    for a in range(3):
        t0 = R[3 * a] * I[r0, c0] + R[3 * a + 1] * I[r0 + 1, c0] + R[3 * a + 2] * I[r0 + 2, c0]
        t1 = (R[3 * a] * I[r0, c0 + 1] + R[3 * a + 1] * I[r0 + 1, c0 + 1]
              + R[3 * a + 2] * I[r0 + 2, c0 + 1])
        t2 = (R[3 * a] * I[r0, c0 + 2] + R[3 * a + 1] * I[r0 + 1, c0 + 2]
              + R[3 * a + 2] * I[r0 + 2, c0 + 2])
        for b in range(a if sym else 0, 3):
            W[w0 + a, w1 + b] = t0 * R[3 * b] + t1 * R[3 * b + 1] + t2 * R[3 * b + 2]


@njit(inline="always", **JIT)
def symmetric_congruence_add(R, p, I, out, W):
    """out += X^T I X, X = Ad_{T^-1}, for a symmetric I = [[A, B], [B^T, C]] (articulated
    inertias), as ``block_congruence_add`` but with the symmetry used: with A', B', C' the
    blocks rotated by R, P = [p] and B'' = B' + P C',
    X^T I X = [[A' - B'' P + P B'^T, B''], [B''^T, C']] (A' and C' upper triangles only).
    ``W`` is 6x6 scratch (A' | B' over C' | B'')."""
    _rotate_block(R, I, 0, 0, W, 0, 0, True)        # A'
    _rotate_block(R, I, 0, 3, W, 0, 3, False)       # B'
    _rotate_block(R, I, 3, 3, W, 3, 0, True)        # C'
    for a in range(3):
        for b in range(a):
            W[a, b] = W[b, a]
            W[3 + a, b] = W[3 + b, a]
    p0, p1, p2 = p[0], p[1], p[2]
    for b in range(3):                               # B'' = B' + P C'
        W[3, 3 + b] = W[0, 3 + b] + p1 * W[5, b] - p2 * W[4, b]
        W[4, 3 + b] = W[1, 3 + b] + p2 * W[3, b] - p0 * W[5, b]
        W[5, 3 + b] = W[2, 3 + b] + p0 * W[4, b] - p1 * W[3, b]
    for a in range(3):
        m0, m1, m2 = W[3 + a, 3], W[3 + a, 4], W[3 + a, 5]
        mp0, mp1, mp2 = m1 * p2 - m2 * p1, m2 * p0 - m0 * p2, m0 * p1 - m1 * p0   # (B'' P)[a]
        for b in range(a, 3):
            # (P B'^T)[a, b] = (p x B'[b, :])[a]
            if a == 0:
                pb = p1 * W[b, 5] - p2 * W[b, 4]
            elif a == 1:
                pb = p2 * W[b, 3] - p0 * W[b, 5]
            else:
                pb = p0 * W[b, 4] - p1 * W[b, 3]
            mp = mp0 if b == 0 else (mp1 if b == 1 else mp2)
            x = W[a, b] - mp + pb
            out[a, b] += x
            if b != a:
                out[b, a] += x
        for b in range(3):
            out[a, 3 + b] += W[3 + a, 3 + b]
            out[3 + b, a] += W[3 + a, 3 + b]
            out[3 + a, 3 + b] += W[3 + a, b]
