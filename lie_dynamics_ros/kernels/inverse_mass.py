"""Compiled M^-1 by the articulated-body recursion on unit torques (Carpentier 2018,
"Analytical inverse of the joint space inertia matrix"; Pinocchio's computeMinverse), in the
world frame, where an articulated inertia adds to its parent's with no transform.

Work memory: the Data's per-body matrices (world articulated inertia in MIH, world motion
subspace in MPI, U in MU, D in MD, D^-1 in MPSI, U D^-1 in MTMP), dv[i, TMP] (the last row of
body i's subtree) and a (nj + 1, 6, nv) array ``F`` of the caller's.
"""
import numpy as np

from .layout import (P, VI, NV, ARM, TMP, MIH, MU, MPSI, MPI, MD, MTMP, OK, SINGULAR,
                     OVERFLOW)
from .jit import JIT, njit
from .spatial import invert_spd
from .centroidal import poses, world_motion, world_inertia

NOT_DFS = 100   # rows are not a depth-first order with contiguous DOFs: no M^-1 recursion


@njit(inline="always", **JIT)
def _subtree_ends(mi, dv):
    """dv[i, TMP] = the last row of body i's subtree, False unless every subtree is a run of
    rows whose DOFs follow each other from the body's own (a depth-first order)."""
    nj = mi.shape[0] - 1
    off = 0
    for i in range(1, nj + 1):
        if mi[i, VI] != off:
            return False
        off += mi[i, NV]
        dv[i, TMP] = i
    for i in range(nj, 0, -1):
        p = mi[i, P]
        if p > 0 and dv[i, TMP] > dv[p, TMP]:
            dv[p, TMP] = dv[i, TMP]
    for i in range(1, nj + 1):                  # rows i + 1 .. end descend from i
        end = int(dv[i, TMP])
        for j in range(i + 1, end + 1):
            if mi[j, P] < i:
                return False
    return True


@njit(**JIT)
def mass_matrix_inverse(mi, mc, mI, dv, dm, q, zero_v, Minv, F, failed, kin):
    """M^-1 (armature included) by the articulated-body algorithm run on the nv unit torques at
    once (Carpentier 2018, Algorithm 1): a backward pass gives each joint's row on its own
    subtree's columns, a forward pass subtracts what the parent's acceleration takes, on the
    columns from the joint's first DOF on; the lower triangle is the upper's mirror. ``F``
    holds the subtree forces F_i (backward), then the accelerations a_i (forward; F_i is no
    longer read by then). Status NOT_DFS when the rows are not a depth-first order."""
    st = poses(mi, mc, dv, dm, q, zero_v, kin)
    if st != OK:
        return st
    if not _subtree_ends(mi, dv):
        return NOT_DFS
    nj = mi.shape[0] - 1
    n = Minv.shape[0]
    for i in range(1, nj + 1):
        _world_spatial_inertia(dv, mI, i, dm[i, MIH])
        Sw = dm[i, MPI]
        for k in range(mi[i, NV]):
            world_motion(mi, mc, dv, dm, i, k, dm[i, MTMP, 0])
            for r in range(6):
                Sw[r, k] = dm[i, MTMP, 0, r]
        vi = mi[i, VI]
        hi = _dof_end(mi, dv, i)
        for r in range(6):
            Fr = F[i, r]
            for c in range(vi, hi):
                Fr[c] = 0.0
    for i in range(nj, 0, -1):
        vi, nv, p = mi[i, VI], mi[i, NV], mi[i, P]
        hi = _dof_end(mi, dv, i)
        Ia, Sw, U, D = dm[i, MIH], dm[i, MPI], dm[i, MU], dm[i, MD]
        Dinv, UD = dm[i, MPSI], dm[i, MTMP]
        if nv == 1:
            if not _one_dof_articulation(Ia, Sw, U, UD, Dinv, mc[i, ARM]):
                failed[0] = i
                return SINGULAR
            if p > 0:                           # both row steps in one pass over c
                _backward_one_dof(Minv[vi], F[p], F[i], U, Sw, Dinv[0, 0], vi, hi, n)
                _subtract_articulated(Ia, U, UD, 1, dm[p, MIH])
            else:
                _backward_rows(Minv, F, U, Sw, Dinv, i, vi, nv, p, hi, n)
            continue
        for k in range(nv):                     # U = Ia S, D = S^T U + armature
            for r in range(6):
                acc = 0.0
                for c in range(6):
                    acc += Ia[r, c] * Sw[c, k]
                U[r, k] = acc
        for k in range(nv):
            for l in range(nv):
                acc = 0.0
                for r in range(6):
                    acc += Sw[r, k] * U[r, l]
                D[k, l] = acc
            D[k, k] += mc[i, ARM + k]
        if not invert_spd(D, nv, Dinv):
            failed[0] = i
            return SINGULAR
        for r in range(6):
            for k in range(nv):
                acc = 0.0
                for l in range(nv):
                    acc += U[r, l] * Dinv[l, k]
                UD[r, k] = acc
        _backward_rows(Minv, F, U, Sw, Dinv, i, vi, nv, p, hi, n)
        if p > 0:
            _subtract_articulated(Ia, U, UD, nv, dm[p, MIH])
    for i in range(1, nj + 1):
        vi, nv, p = mi[i, VI], mi[i, NV], mi[i, P]
        Sw, UD = dm[i, MPI], dm[i, MTMP]
        parent = p > 0
        children = _dof_end(mi, dv, i) > vi + nv
        if nv == 1 and parent:                  # one DOF: both steps in one pass over c
            _forward_one_dof(Minv[vi], F[p], F[i], UD, Sw, vi, n, children)
            continue
        if parent:                              # qdd_i -= D^-1 U^T a_p
            for k in range(nv):
                row = Minv[vi + k]
                for r in range(6):
                    s = UD[r, k]
                    Fpr = F[p, r]
                    for c in range(vi, n):
                        row[c] -= s * Fpr[c]
        if children:                            # a_i = a_p + S qdd_i, read by the children
            for r in range(6):
                Fr = F[i, r]
                if parent:
                    Fpr = F[p, r]
                    for c in range(vi + nv, n):
                        Fr[c] = Fpr[c]
                else:
                    for c in range(vi + nv, n):
                        Fr[c] = 0.0
                for k in range(nv):
                    s = Sw[r, k]
                    row = Minv[vi + k]
                    for c in range(vi + nv, n):
                        Fr[c] += s * row[c]
    for r in range(n):
        for c in range(r):
            Minv[r, c] = Minv[c, r]
        if not np.isfinite(Minv[r, r]):
            return OVERFLOW
    return OK


@njit(inline="always", **JIT)
def _world_spatial_inertia(dv, mI, i, Ia):
    """Ia (6x6) = body i's inertia about the world origin, in Kim's eq. 22 blocks
    [[I_O, [h]], [[h]^T, m 1]] (centroidal.world_inertia gives I_O, h and m)."""
    world_inertia(dv, mI, i, Ia)
    h0, h1, h2, m = Ia[3, 0], Ia[3, 1], Ia[3, 2], Ia[3, 3]
    Ia[0, 3], Ia[0, 4], Ia[0, 5] = 0.0, -h2, h1
    Ia[1, 3], Ia[1, 4], Ia[1, 5] = h2, 0.0, -h0
    Ia[2, 3], Ia[2, 4], Ia[2, 5] = -h1, h0, 0.0
    for r in range(3):
        for c in range(3):
            Ia[3 + r, c] = Ia[c, 3 + r]
            Ia[3 + r, 3 + c] = m if r == c else 0.0


@njit(inline="always", **JIT)
def _dof_end(mi, dv, i):
    """One past the last DOF of body i's subtree (after _subtree_ends)."""
    end = int(dv[i, TMP])
    return mi[end, VI] + mi[end, NV]


@njit(inline="always", **JIT)
def _forward_one_dof(row, Fp, Fi, UD, Sw, vi, n, children):
    """The forward step of a one-DOF joint below another body, column by column:
    row -= (U D^-1)^T a_p, then (with children) a_i = a_p + S row."""
    u0, u1, u2, u3, u4, u5 = UD[0, 0], UD[1, 0], UD[2, 0], UD[3, 0], UD[4, 0], UD[5, 0]
    s0, s1, s2, s3, s4, s5 = Sw[0, 0], Sw[1, 0], Sw[2, 0], Sw[3, 0], Sw[4, 0], Sw[5, 0]
    for c in range(vi, n):
        a0, a1, a2, a3, a4, a5 = Fp[0, c], Fp[1, c], Fp[2, c], Fp[3, c], Fp[4, c], Fp[5, c]
        x = row[c] - (u0 * a0 + u1 * a1 + u2 * a2 + u3 * a3 + u4 * a4 + u5 * a5)
        row[c] = x
        if children and c > vi:
            Fi[0, c] = a0 + s0 * x
            Fi[1, c] = a1 + s1 * x
            Fi[2, c] = a2 + s2 * x
            Fi[3, c] = a3 + s3 * x
            Fi[4, c] = a4 + s4 * x
            Fi[5, c] = a5 + s5 * x


@njit(inline="always", **JIT)
def _backward_rows(Minv, F, U, Sw, Dinv, i, vi, nv, p, hi, n):
    """Row(s) of joint i: D^-1 on its own columns, - D^-1 S^T F_i on its children's, zero
    beyond its subtree; then F_p += F_i + U D^-1 u_i (the rows hold D^-1 u_i)."""
    for k in range(nv):
        row = Minv[vi + k]
        for l in range(nv):
            row[vi + l] = Dinv[k, l]
        for c in range(vi + nv, n):
            row[c] = 0.0
        for r in range(6):
            s = 0.0
            for l in range(nv):
                s -= Dinv[k, l] * Sw[r, l]
            Fr = F[i, r]
            for c in range(vi + nv, hi):
                row[c] += s * Fr[c]
    if p > 0:
        for r in range(6):
            Fpr, Fr = F[p, r], F[i, r]
            for c in range(vi, hi):
                Fpr[c] += Fr[c]
            for k in range(nv):
                s = U[r, k]
                row = Minv[vi + k]
                for c in range(vi, hi):
                    Fpr[c] += s * row[c]


@njit(inline="always", **JIT)
def _backward_one_dof(row, Fp, Fi, U, Sw, dinv, vi, hi, n):
    """``_backward_rows`` of a one-DOF joint below another body, column by column."""
    u0, u1, u2, u3, u4, u5 = U[0, 0], U[1, 0], U[2, 0], U[3, 0], U[4, 0], U[5, 0]
    s0, s1, s2, s3, s4, s5 = Sw[0, 0], Sw[1, 0], Sw[2, 0], Sw[3, 0], Sw[4, 0], Sw[5, 0]
    row[vi] = dinv
    Fp[0, vi] += u0 * dinv
    Fp[1, vi] += u1 * dinv
    Fp[2, vi] += u2 * dinv
    Fp[3, vi] += u3 * dinv
    Fp[4, vi] += u4 * dinv
    Fp[5, vi] += u5 * dinv
    for c in range(vi + 1, hi):
        f0, f1, f2, f3, f4, f5 = Fi[0, c], Fi[1, c], Fi[2, c], Fi[3, c], Fi[4, c], Fi[5, c]
        x = -dinv * (s0 * f0 + s1 * f1 + s2 * f2 + s3 * f3 + s4 * f4 + s5 * f5)
        row[c] = x
        Fp[0, c] += f0 + u0 * x
        Fp[1, c] += f1 + u1 * x
        Fp[2, c] += f2 + u2 * x
        Fp[3, c] += f3 + u3 * x
        Fp[4, c] += f4 + u4 * x
        Fp[5, c] += f5 + u5 * x
    for c in range(hi, n):
        row[c] = 0.0


@njit(inline="always", **JIT)
def _one_dof_articulation(Ia, Sw, U, UD, Dinv, arm):
    """U = Ia s, D = s^T U + armature, D^-1 and U D^-1 of a one-DOF joint; False if D is not
    positive."""
    d = arm
    for r in range(6):
        acc = 0.0
        for c in range(6):
            acc += Ia[r, c] * Sw[c, 0]
        U[r, 0] = acc
        d += Sw[r, 0] * acc
    if not d > 1e-300:
        return False
    dinv = 1.0 / d
    Dinv[0, 0] = dinv
    for r in range(6):
        UD[r, 0] = U[r, 0] * dinv
    return True


@njit(inline="always", **JIT)
def _subtract_articulated(Ia, U, UD, nv, Ip):
    """Ip += Ia - U D^-1 U^T (symmetric): the articulated inertia the parent sees."""
    for r in range(6):
        for c in range(r, 6):
            acc = Ia[r, c]
            for k in range(nv):
                acc -= UD[r, k] * U[c, k]
            Ip[r, c] += acc
            if c != r:
                Ip[c, r] += acc
