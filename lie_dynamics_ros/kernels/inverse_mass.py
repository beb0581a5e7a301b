"""Compiled M^-1 by the articulated-body recursion on unit torques (Carpentier 2018,
"Analytical inverse of the joint space inertia matrix"; Pinocchio's computeMinverse), in the
world frame, where an articulated inertia adds to its parent's with no transform.

Work memory: the Data's per-body matrices (world articulated inertia in MIH, world motion
subspace in MPI, U in MU, D in MD, D^-1 in MPSI, U D^-1 in MTMP), dv[i, TMP] (the last row of
body i's subtree) and a (nj + 1, 6, nv) array ``F`` of the caller's.
"""
import numpy as np
from numba import njit

from .layout import (P, VI, NV, ARM, TMP, OR, OP, MIH, MU, MPSI, MPI, MD, MTMP, OK, SINGULAR,
                     OVERFLOW)
from .jit import JIT
from .spatial import rigid_congruence_add, invert_spd
from .centroidal import poses, world_motion

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
        Ia = dm[i, MIH]
        for r in range(6):
            for c in range(6):
                Ia[r, c] = 0.0
        rigid_congruence_add(dv[i, OR:OR + 9], dv[i, OP:OP + 3], mI[i], Ia)
        Sw = dm[i, MPI]
        for k in range(mi[i, NV]):
            world_motion(mi, mc, dv, dm, i, k, dm[i, MTMP, 0])
            for r in range(6):
                Sw[r, k] = dm[i, MTMP, 0, r]
        vi = mi[i, VI]
        hi = _dof_end(mi, dv, i)
        for r in range(6):
            for c in range(vi, hi):
                F[i, r, c] = 0.0
    for i in range(nj, 0, -1):
        vi, nv, p = mi[i, VI], mi[i, NV], mi[i, P]
        hi = _dof_end(mi, dv, i)
        Ia, Sw, U, D = dm[i, MIH], dm[i, MPI], dm[i, MU], dm[i, MD]
        Dinv, UD = dm[i, MPSI], dm[i, MTMP]
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
        for k in range(nv):
            for l in range(nv):
                Minv[vi + k, vi + l] = Dinv[k, l]
            for c in range(hi, n):              # outside the subtree: the forward pass only
                Minv[vi + k, c] = 0.0
        for c in range(vi + nv, hi):            # - D^-1 S^T F on the children's columns
            for k in range(nv):
                acc = 0.0
                for l in range(nv):
                    t = 0.0
                    for r in range(6):
                        t += Sw[r, l] * F[i, r, c]
                    acc -= Dinv[k, l] * t
                Minv[vi + k, c] = acc
        if p > 0:
            for r in range(6):                  # F_p += F_i + U D^-1 u_i (Minv holds D^-1 u_i)
                for c in range(vi, hi):
                    acc = F[i, r, c]
                    for k in range(nv):
                        acc += U[r, k] * Minv[vi + k, c]
                    F[p, r, c] += acc
            Ip = dm[p, MIH]
            for r in range(6):                  # Ia_p += Ia - U D^-1 U^T (symmetric)
                for c in range(r, 6):
                    acc = Ia[r, c]
                    for k in range(nv):
                        acc -= UD[r, k] * U[c, k]
                    Ip[r, c] += acc
                    if c != r:
                        Ip[c, r] += acc
    for i in range(1, nj + 1):
        vi, nv, p = mi[i, VI], mi[i, NV], mi[i, P]
        Sw, UD = dm[i, MPI], dm[i, MTMP]
        if p > 0:                               # qdd_i -= D^-1 U^T a_p
            for c in range(vi, n):
                for k in range(nv):
                    acc = 0.0
                    for r in range(6):
                        acc += UD[r, k] * F[p, r, c]
                    Minv[vi + k, c] -= acc
        if _dof_end(mi, dv, i) > vi + nv:       # a_i = a_p + S qdd_i, read by the children
            for r in range(6):
                for c in range(vi + nv, n):
                    acc = F[p, r, c] if p > 0 else 0.0
                    for k in range(nv):
                        acc += Sw[r, k] * Minv[vi + k, c]
                    F[i, r, c] = acc
    for r in range(n):
        for c in range(r):
            Minv[r, c] = Minv[c, r]
        if not np.isfinite(Minv[r, r]):
            return OVERFLOW
    return OK


@njit(inline="always", **JIT)
def _dof_end(mi, dv, i):
    """One past the last DOF of body i's subtree (after _subtree_ends)."""
    end = int(dv[i, TMP])
    return mi[end, VI] + mi[end, NV]
