"""The mass matrix of one state on the packed plan of kernels/tree.py: the composite-rigid-body
algorithm (Walker & Orin 1982; Featherstone 2008, §6.2) specialized to joints that rotate
about or slide along their frame's z axis, its scratch on the stack.

The composites are summed in one frame per root subtree, as Pinocchio's CRBA sums them in the
world frame (Carpentier et al. 2019): a forward pass takes each body's pose, its joint's
column S_i and its inertia (the 10 numbers of a rigid body: Ibar about the origin, h = m c, m)
to the frame of the subtree's root body, so that a composite is a plain sum, children first,
and M_ij = S_i^T Ic_j S_j for i an ancestor of j (or j) needs no force carried from frame to
frame. The root's frame rather than the world keeps the lever arms at the robot's size: the
entries lose the digits of (extent of the subtree)^2 m / M_ij, as Pinocchio's do (M to ~1e-15
of its largest entry on the arms of the tests); a subtree whose composite overflows gives
OVERFLOW and the caller the general kernel.

A free root joint (a floating base; ``tree_plan(model)``) has v = (v_lin, w)
in its body's frame, which is its subtree's common frame, so S of the root is the permutation
from (angular, linear): its 6x6 block of M is the subtree's composite inertia permuted,
[[m 1, [h]^T], [[h], Ibar]], and its six rows of a descendant's column are S^T F = (f, n), F
as the descendant's column already has it in that frame (as kernels/soa_crba.py's batches).
Its q does not enter M; it is only checked, as the general kernel checks it.

M is full and symmetric (each off-diagonal entry computed once and mirrored) with the
armature on its diagonal, as ``kernels/dynamics.crba`` gives it. Compiled with
``fastmath={'contract'}`` only (FMA, as kernels/soa.py), holding the GIL. Status: BAD_SIZE
for lengths that do not match the plan or strides that are not a C-contiguous array's
(``views.c_strides``, as kernels/tree_rnea.py), NONFINITE for a NaN or Inf in q (summed as
``q * 0``), BAD_QUATERNION for a free joint's quaternion whose norm is 1e-6 or more off 1
(``joint_kinematics.unit_quat``'s rule), OVERFLOW for a finite q and a non-finite diagonal.
"""
import math

from numba import types

from .jit import njit
from .joint_kinematics import unit_quat
from .layout import BAD_SIZE, BAD_QUATERNION, NONFINITE, OVERFLOW, OK
from .soa import TP, TK, TQ, TV, GR, GP, GI, GC, GM, GA, REVOLUTE, FREE, BIG_ANGLE, _sincos
from .soa_crba import _rigid_to_parent
from .tree import TOPO, NP, MAX_BODIES
from .views import bare, c_strides, stack_matrix

# the GIL is kept: releasing and taking it back costs 0.03-0.05 us, a sixth of the whole
# kernel on a 7-DOF arm (batches have kernels of their own that release it)
_JIT = dict(cache=True, nogil=False, fastmath={"contract"}, error_model="numpy")

# scratch, one column per body row (the world's and those past the last body are padding),
# all in the frame of the subtree's root body: the body's rotation (row-major) and position,
# its own inertia (Ibar xx yy zz xy xz yz, h, m), S_i (angular, linear) and the row of the
# free root whose subtree holds the body (the root's own row for itself), or 0. Bodies run
# along rows, so that the inertia transform of all bodies is one loop over contiguous lanes
# (vector registers). Rows of 72 doubles, not 64: rows of 512 bytes put every 8th row 4 KiB
# away, where a load can wait for a store to the other (4K aliasing); 72 measured 0.03 us
# faster per call on a 7-DOF arm
CR, CT, CI, CS, CFR = 0, 9, 12, 22, 28
NC = 29
NL = MAX_BODIES + 8
_scratch = stack_matrix(NC, NL)
# each body's inertia in its subtree's frame, then its composite (Ibar, h, m as CI)
_composite = stack_matrix(10, NL)
# each row's q, then its sine and cosine: contiguous, so that one loop computes them all in
# vector registers
_angles = stack_matrix(1, MAX_BODIES)
_trig = stack_matrix(2, MAX_BODIES)
LANES = 8       # the vector loops (sines, inertias) run over whole AVX-512 registers


@njit(**_JIT)
def mass_matrix(P, q, M):
    """M(q) (nv, nv) of the model packed in P; returns a status code (module docstring)."""
    nb = P.shape[0] - 1
    if nb < 1 or nb >= MAX_BODIES or P.shape[1] < NP:
        return BAD_SIZE
    nv = int(P[0, TOPO + TV])
    if (q.shape[0] != int(P[0, TOPO + TQ]) or M.shape[0] != nv or M.shape[1] != nv
            or not (c_strides(P) and c_strides(q) and c_strides(M))):
        return BAD_SIZE
    # views without reference counts (kernels/views.py): the caller holds the arrays
    return _crba(bare(P), bare(q), bare(M), nb, nv)


@njit(inline="always", **_JIT)
def _crba(P, q, M, nb, nv):
    """The recursion on checked arguments."""
    W = _scratch()
    O = _composite()
    # the joints' sines and cosines first, all rows (a prismatic or free row's are not read):
    # independent of each other and of the poses, they fill vector registers. Whole vectors
    # (the padding columns' angle 0): a 7-DOF arm's seven in one, not seven scalar ones
    X = _angles()
    T = _trig()
    nl = (nb + LANES) // LANES * LANES
    X[0, 0] = 0.0
    for i in range(nb + 1, nl):
        X[0, i] = 0.0
    for i in range(1, nb + 1):
        X[0, i] = q[int(P[i, TOPO + TQ])]
    big = False
    for i in range(nl):
        x = X[0, i]
        s, c = _sincos(x)
        T[0, i], T[1, i] = s, c
        big |= not abs(x) <= BIG_ANGLE
    if big:             # the polynomial's reduction is exact only below
        for i in range(1, nb + 1):
            x = X[0, i]
            if not abs(x) <= BIG_ANGLE:
                T[0, i], T[1, i] = math.sin(x), math.cos(x)
    # the inertia loop's padding columns (the world's, those past the last body): finite
    # numbers, whose results are not read
    for k in range(CS):
        W[k, 0] = 0.0
    for i in range(nb + 1, nl):
        for k in range(CS):
            W[k, i] = 0.0
    chk = 0.0
    unit = True         # every free joint's quaternion of unit norm
    chain = True        # every body the child of the one before
    # the parent's pose: in registers along a chain (parent i - 1), not through the scratch
    b00 = b01 = b02 = b10 = b11 = b12 = b20 = b21 = b22 = bx = by = bz = 0.0
    for i in range(1, nb + 1):
        p = int(P[i, TOPO + TP])
        chain &= p == i - 1
        x = X[0, i]
        chk += x * 0.0
        rev = P[i, TOPO + TK] == REVOLUTE
        W[CI, i], W[CI + 1, i], W[CI + 2, i] = P[i, GI], P[i, GI + 1], P[i, GI + 2]
        W[CI + 3, i], W[CI + 4, i], W[CI + 5, i] = P[i, GI + 3], P[i, GI + 4], P[i, GI + 5]
        W[CI + 6, i], W[CI + 7, i], W[CI + 8, i] = P[i, GC], P[i, GC + 1], P[i, GC + 2]
        W[CI + 9, i] = P[i, GM]
        if p == 0:
            # a root body's own frame is its subtree's common frame (M does not depend on it,
            # and Ibar about a far world origin would cancel digits)
            e = 1.0 if rev else 0.0
            W[0, i], W[1, i], W[2, i], W[3, i], W[4, i] = 1.0, 0.0, 0.0, 0.0, 1.0
            W[5, i], W[6, i], W[7, i], W[8, i] = 0.0, 0.0, 0.0, 1.0
            W[CT, i], W[CT + 1, i], W[CT + 2, i] = 0.0, 0.0, 0.0
            W[CS, i], W[CS + 1, i], W[CS + 2, i] = 0.0, 0.0, e
            W[CS + 3, i], W[CS + 4, i], W[CS + 5, i] = 0.0, 0.0, 1.0 - e
            W[CFR, i] = 0.0
            b00, b01, b02, b10, b11, b12 = 1.0, 0.0, 0.0, 0.0, 1.0, 0.0
            b20, b21, b22, bx, by, bz = 0.0, 0.0, 1.0, 0.0, 0.0, 0.0
            if P[i, TOPO + TK] == FREE:
                W[CFR, i] = i
                jq = int(P[i, TOPO + TQ])
                chk += (q[jq + 1] + q[jq + 2]) * 0.0
                unit &= unit_quat(q, jq + 3)[4]
            continue
        # R = R_p R0 Rz(x) and t = t_p + R_p p0 (+ x R e_z): R0 Rz(x) first, off the chain of
        # dependent operations from body to body
        r00, r01, r02 = P[i, GR], P[i, GR + 1], P[i, GR + 2]
        r10, r11, r12 = P[i, GR + 3], P[i, GR + 4], P[i, GR + 5]
        r20, r21, r22 = P[i, GR + 6], P[i, GR + 7], P[i, GR + 8]
        px, py, pz = P[i, GP], P[i, GP + 1], P[i, GP + 2]
        # selects, not branches (a prismatic joint's c = 1, s = 0 leave R0 as it is)
        s = T[0, i] if rev else 0.0
        c = T[1, i] if rev else 1.0
        r00, r01 = c * r00 + s * r01, c * r01 - s * r00
        r10, r11 = c * r10 + s * r11, c * r11 - s * r10
        r20, r21 = c * r20 + s * r21, c * r21 - s * r20
        if p != i - 1:
            b00, b01, b02 = W[0, p], W[1, p], W[2, p]
            b10, b11, b12 = W[3, p], W[4, p], W[5, p]
            b20, b21, b22 = W[6, p], W[7, p], W[8, p]
            bx, by, bz = W[CT, p], W[CT + 1, p], W[CT + 2, p]
        a00 = b00 * r00 + b01 * r10 + b02 * r20
        a01 = b00 * r01 + b01 * r11 + b02 * r21
        a02 = b00 * r02 + b01 * r12 + b02 * r22
        a10 = b10 * r00 + b11 * r10 + b12 * r20
        a11 = b10 * r01 + b11 * r11 + b12 * r21
        a12 = b10 * r02 + b11 * r12 + b12 * r22
        a20 = b20 * r00 + b21 * r10 + b22 * r20
        a21 = b20 * r01 + b21 * r11 + b22 * r21
        a22 = b20 * r02 + b21 * r12 + b22 * r22
        tx = bx + b00 * px + b01 * py + b02 * pz
        ty = by + b10 * px + b11 * py + b12 * pz
        tz = bz + b20 * px + b21 * py + b22 * pz
        # revolute: S_i = (a, t x a) with a = R e_z; prismatic: t += x a, S_i = (0, a)
        xp = 0.0 if rev else x
        tx, ty, tz = tx + xp * a02, ty + xp * a12, tz + xp * a22
        e = 1.0 if rev else 0.0
        W[CS, i], W[CS + 1, i], W[CS + 2, i] = e * a02, e * a12, e * a22
        W[CS + 3, i] = ty * a22 - tz * a12 if rev else a02
        W[CS + 4, i] = tz * a02 - tx * a22 if rev else a12
        W[CS + 5, i] = tx * a12 - ty * a02 if rev else a22
        W[0, i], W[1, i], W[2, i], W[3, i], W[4, i], W[5, i] = a00, a01, a02, a10, a11, a12
        W[6, i], W[7, i], W[8, i] = a20, a21, a22
        W[CT, i], W[CT + 1, i], W[CT + 2, i] = tx, ty, tz
        W[CFR, i] = W[CFR, p]
        b00, b01, b02, b10, b11, b12 = a00, a01, a02, a10, a11, a12
        b20, b21, b22, bx, by, bz = a20, a21, a22, tx, ty, tz
    # every body's inertia in its subtree's frame (a root's: R = 1, t = 0, unchanged), all
    # columns at once
    for i in range(nl):
        (O[0, i], O[1, i], O[2, i], O[3, i], O[4, i], O[5, i], O[6, i], O[7, i], O[8, i],
         O[9, i]) = _rigid_to_parent(
            W[0, i], W[1, i], W[2, i], W[3, i], W[4, i], W[5, i], W[6, i], W[7, i], W[8, i],
            W[CT, i], W[CT + 1, i], W[CT + 2, i],
            W[CI, i], W[CI + 1, i], W[CI + 2, i], W[CI + 3, i], W[CI + 4, i], W[CI + 5, i],
            W[CI + 6, i], W[CI + 7, i], W[CI + 8, i], W[CI + 9, i])
    if not chain:       # pairs of bodies on different branches: M_ij = 0
        for r in range(nv):
            for c in range(nv):
                M[r, c] = 0.0
    # children first: Ic_j is complete (its children have added theirs), then goes to the
    # parent's; in one frame a composite is a sum. The child j + 1's goes to its parent j in
    # registers, not through the scratch (in the same order of sums)
    cxx = cyy = czz = cxy = cxz = cyz = chx = chy = chz = cm = 0.0
    for j in range(nb, 0, -1):
        ixx, iyy, izz = O[0, j] + cxx, O[1, j] + cyy, O[2, j] + czz
        ixy, ixz, iyz = O[3, j] + cxy, O[4, j] + cxz, O[5, j] + cyz
        hx, hy, hz, m = O[6, j] + chx, O[7, j] + chy, O[8, j] + chz, O[9, j] + cm
        p = int(P[j, TOPO + TP])
        if p == j - 1:
            cxx, cyy, czz, cxy, cxz, cyz = ixx, iyy, izz, ixy, ixz, iyz
            chx, chy, chz, cm = hx, hy, hz, m
        else:
            cxx = cyy = czz = cxy = cxz = cyz = chx = chy = chz = cm = 0.0
            if p > 0:
                O[0, p] += ixx
                O[1, p] += iyy
                O[2, p] += izz
                O[3, p] += ixy
                O[4, p] += ixz
                O[5, p] += iyz
                O[6, p] += hx
                O[7, p] += hy
                O[8, p] += hz
                O[9, p] += m
        if P[j, TOPO + TK] == FREE:     # its block; its parent is the world
            _free_block(M, int(P[j, TOPO + TV]), ixx, iyy, izz, ixy, ixz, iyz, hx, hy, hz, m)
            chk += (m + ixx + iyy + izz) * 0.0
            continue
        e0, e1, e2 = W[CS, j], W[CS + 1, j], W[CS + 2, j]
        l0, l1, l2 = W[CS + 3, j], W[CS + 4, j], W[CS + 5, j]
        # F = Ic S_j: (Ibar e + h x l, m l - h x e)
        n0 = ixx * e0 + ixy * e1 + ixz * e2 + (hy * l2 - hz * l1)
        n1 = ixy * e0 + iyy * e1 + iyz * e2 + (hz * l0 - hx * l2)
        n2 = ixz * e0 + iyz * e1 + izz * e2 + (hx * l1 - hy * l0)
        f0 = m * l0 - (hy * e2 - hz * e1)
        f1 = m * l1 - (hz * e0 - hx * e2)
        f2 = m * l2 - (hx * e1 - hy * e0)
        vj = int(P[j, TOPO + TV])
        d = e0 * n0 + e1 * n1 + e2 * n2 + l0 * f0 + l1 * f1 + l2 * f2 + P[j, GA]
        M[vj, vj] = d
        chk += d * 0.0
        top = int(W[CFR, j])    # the walk stops below a free root, which takes (f, n)
        if chain:       # the ancestors are p, p - 1, ...: no parent read on the way
            for i in range(p, top, -1):
                x = (W[CS, i] * n0 + W[CS + 1, i] * n1 + W[CS + 2, i] * n2 + W[CS + 3, i] * f0
                     + W[CS + 4, i] * f1 + W[CS + 5, i] * f2)
                vi = int(P[i, TOPO + TV])
                M[vi, vj] = x
                M[vj, vi] = x
        else:
            i = p
            while i > top:
                x = (W[CS, i] * n0 + W[CS + 1, i] * n1 + W[CS + 2, i] * n2 + W[CS + 3, i] * f0
                     + W[CS + 4, i] * f1 + W[CS + 5, i] * f2)
                vi = int(P[i, TOPO + TV])
                M[vi, vj] = x
                M[vj, vi] = x
                i = int(P[i, TOPO + TP])
        if top > 0:
            vi = int(P[top, TOPO + TV])
            M[vi, vj], M[vi + 1, vj], M[vi + 2, vj] = f0, f1, f2
            M[vi + 3, vj], M[vi + 4, vj], M[vi + 5, vj] = n0, n1, n2
            M[vj, vi], M[vj, vi + 1], M[vj, vi + 2] = f0, f1, f2
            M[vj, vi + 3], M[vj, vi + 4], M[vj, vi + 5] = n0, n1, n2
    if chk == 0.0 and unit:
        return OK
    for k in range(q.shape[0]):
        if not math.isfinite(q[k]):
            return NONFINITE
    return OVERFLOW if unit else BAD_QUATERNION


@njit(inline="always", **_JIT)
def _free_block(M, v, ixx, iyy, izz, ixy, ixz, iyz, hx, hy, hz, m):
    """S^T Ic S of a free root body at v: [[m 1, [h]^T], [[h], Ibar]] for v = (v_lin, w)."""
    for r in range(3):
        for c in range(3):
            M[v + r, v + c] = m if r == c else 0.0
    M[v + 3, v], M[v + 4, v + 1], M[v + 5, v + 2] = 0.0, 0.0, 0.0
    M[v, v + 3], M[v + 1, v + 4], M[v + 2, v + 5] = 0.0, 0.0, 0.0
    # [h]: angular rows, linear columns; then its transpose
    M[v + 3, v + 1], M[v + 3, v + 2], M[v + 4, v + 2] = -hz, hy, -hx
    M[v + 4, v], M[v + 5, v], M[v + 5, v + 1] = hz, -hy, hx
    M[v + 1, v + 3], M[v + 2, v + 3], M[v + 2, v + 4] = -hz, hy, -hx
    M[v, v + 4], M[v, v + 5], M[v + 1, v + 5] = hz, -hy, hx
    M[v + 3, v + 3], M[v + 4, v + 4], M[v + 5, v + 5] = ixx, iyy, izz
    M[v + 3, v + 4], M[v + 3, v + 5], M[v + 4, v + 5] = ixy, ixz, iyz
    M[v + 4, v + 3], M[v + 5, v + 3], M[v + 5, v + 4] = ixy, ixz, iyz


_VEC = types.Array(types.float64, 1, "C")
_MAT = types.Array(types.float64, 2, "C")
#: the one signature the entry is compiled for (``algorithms/_inputs.compile_entry``): a
#: read-only plan, C-contiguous float64 q and M; any other argument type is numba's TypeError
SIGNATURES = {"mass_matrix": (mass_matrix, (types.Array(types.float64, 2, "C", readonly=True),
                                            _VEC, _MAT))}
