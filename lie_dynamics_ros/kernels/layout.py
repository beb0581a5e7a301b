"""Layout of the packed arrays that the compiled kernels share, generated from one field list.

A model is three read-only arrays, a Data (one per thread or worker) two work arrays plus a few
named buffers (``model/data.py``). Every kernel takes ``(mi, mc, mI, dv, dm, ...)``:

* ``mi``  int64   (nj + 1, NI)        model: topology and joint kind (``TOPOLOGY``);
* ``mc``  float64 (nj + 1, NMC)       model: per-body constants (``CONSTANTS``);
* ``mI``  float64 (nj + 1, 6, 6)      model: spatial inertia of each body about its frame origin;
* ``dv``  float64 (nj + 1, NDV)       data: per-body 3-, 6- and 9-vectors (``VECTORS``);
* ``dm``  float64 (nj + 1, NDM, 6, 6) data: per-body 6x6 matrices (``MATRICES``).

Row 0 is the universe; rows are in topological order (``mi[i, P] < i``). Everything is in the
Kim's angular-first order (docs/conventions.md). The column offsets below (``P``, ``WR``, ...)
are module constants generated from the field lists, so numba folds them at compile time; Python
code reads the arrays through ``Data``'s named views instead.
"""
from numba.extending import register_jitable

# (kernel name, Data view name, width, meaning)
TOPOLOGY = (
    ("P", "parent", 1, "parent row (0 = universe, -1 for row 0)"),
    ("K", "kind", 1, "joint kind (kernels/joints.py)"),
    ("QI", "q_index", 1, "first index in q (of the master joint for a mimic joint)"),
    ("VI", "v_index", 1, "first index in v (of the master joint for a mimic joint)"),
    ("NQ", "nq", 1, "size of the joint's q"),
    ("NV", "nv", 1, "size of the joint's v"),
    ("MIMIC", "mimic", 1, "1 if q_i = mult * q[QI] + offset"),
)

CONSTANTS = (
    ("R0", "origin_rotation", 9, "rotation of the joint origin in the parent frame, row-major"),
    ("P0", "origin_translation", 3, "translation of the joint origin in the parent frame"),
    ("AX", "axis", 3, "joint axis (revolute, prismatic, universal 1st, planar normal)"),
    ("AX2", "axis2", 3, "universal 2nd axis, planar in-plane axis e1"),
    ("MULT", "mimic_multiplier", 1, "mimic multiplier (1 otherwise)"),
    ("OFF", "mimic_offset", 1, "mimic offset (0 otherwise)"),
    ("ARM", "armature", 6, "armature of the row's DOF, added to M's diagonal (0 on a mimic row)"),
)
G = 0   # row 0 of mc (the universe has no joint): gravity in the world frame (3)

VECTORS = (
    ("WR", "joint_rotation", 9, "rotation of T_{parent,i}(q), row-major"),
    ("WP", "joint_translation", 3, "translation of T_{parent,i}(q)"),
    ("SDV", "sdot_v", 6, "Sdot_i qd_i"),
    ("V", "twist", 6, "body twist V_i = T_i^-1 dT_i/dt, in frame i"),
    ("A", "acceleration", 6, "body acceleration Vd_i (component-wise derivative of V_i)"),
    ("F", "wrench", 6, "joint wrench F_i transmitted from the parent to body i"),
    ("ETA", "eta", 6, "ad(V_i) S_i qd_i + Sdot_i qd_i (velocity-product acceleration)"),
    ("BH", "bias_wrench", 6, "articulated bias wrench B^_i (Kim Table 3)"),
    ("BETA", "beta", 6, "beta_i = B^_i + I^_i eta_i + U_i Psi_i r_i (Kim Table 3)"),
    ("OR", "world_rotation", 9, "rotation of body i in the world, row-major"),
    ("OP", "world_translation", 3, "position of body i's origin in the world"),
    ("QDD", "prescribed_acceleration", 6, "S_i qdd_i of a prescribed joint (hybrid dynamics)"),
    ("TMP", "scratch", 6, "scratch 6-vector of the kernels (meaningless between calls)"),
    ("TMP2", "scratch2", 6, "second scratch 6-vector"),
    ("FEXT", "external_wrench", 6, "external wrench on body i, in frame i"),
)

MATRICES = (
    ("MS", "motion_subspace", "S_i (6 x nv_i, left columns): V_i = X V_p + S_i qd_i"),
    ("MSD", "motion_subspace_dot", "Sdot_i (6 x nv_i)"),
    ("MIH", "articulated_inertia", "I^_i (ABA) or the composite inertia (CRBA)"),
    ("MU", "U", "U_i = I^_i S_i (6 x nv_i)"),
    ("MPSI", "Psi", "Psi_i = D_i^-1 (nv_i x nv_i, top-left)"),
    ("MPI", "Pi", "Pi_i = I^_i - U_i Psi_i U_i^T (Kim Table 3)"),
    ("MD", "D", "D_i = S_i^T I^_i S_i + armature (nv_i x nv_i, top-left)"),
    ("MTMP", "scratch_matrix", "6x6 scratch of the kernels (meaningless between calls)"),
)


def _offsets(fields):
    out, n = {}, 0
    for name, _, width, _ in fields:
        out[name] = n
        n += width
    return out, n


_topo, NI = _offsets(TOPOLOGY)
_const, NMC = _offsets(CONSTANTS)
_vec, NDV = _offsets(VECTORS)
_mat = {name: k for k, (name, _, _) in enumerate(MATRICES)}
NDM = len(MATRICES)

# column offsets by kernel name, derived from the lists above
P = _topo["P"]; K = _topo["K"]; QI = _topo["QI"]; VI = _topo["VI"]          # noqa: E702
NQ = _topo["NQ"]; NV = _topo["NV"]; MIMIC = _topo["MIMIC"]                    # noqa: E702
R0 = _const["R0"]; P0 = _const["P0"]; AX = _const["AX"]; AX2 = _const["AX2"]  # noqa: E702
MULT = _const["MULT"]; OFF = _const["OFF"]; ARM = _const["ARM"]              # noqa: E702
WR = _vec["WR"]; WP = _vec["WP"]; SDV = _vec["SDV"]; V = _vec["V"]            # noqa: E702
A = _vec["A"]; F = _vec["F"]; ETA = _vec["ETA"]; BH = _vec["BH"]              # noqa: E702
BETA = _vec["BETA"]; OR = _vec["OR"]; OP = _vec["OP"]; QDD = _vec["QDD"]      # noqa: E702
TMP = _vec["TMP"]; TMP2 = _vec["TMP2"]; FEXT = _vec["FEXT"]                   # noqa: E702
MS = _mat["MS"]; MSD = _mat["MSD"]; MIH = _mat["MIH"]; MU = _mat["MU"]        # noqa: E702
MPSI = _mat["MPSI"]; MPI = _mat["MPI"]; MD = _mat["MD"]; MTMP = _mat["MTMP"]  # noqa: E702

# One Data's work memory is a single float64 buffer (``data.buf``), so that a public call
# passes one array for the model and the work: a header of int64 offsets, then the model's
# arrays (copied in: a Data belongs to one model at a time) and the Data's. The dispatch cost of
# numba grows with each array argument, and the named arrays above are views into this buffer.
PLAN = ("NB", "NQ", "NVT", "O_MI", "O_FAIL", "O_PRESC", "O_MC", "O_MI6", "O_DV", "O_DM",
        "O_TAU", "O_ZERO", "O_ACC", "O_WORK")
NH = len(PLAN)     # header words (int64)
(H_NB, H_NQ, H_NV, H_MI, H_FAIL, H_PRESC, H_MC, H_MI6, H_DV, H_DM, H_TAU, H_ZERO,
 H_ACC, H_WORK) = range(NH)

# a body's composite in the world-frame derivatives (kernels/derivatives.py):
# Ic = [[Io, [h]], [[h]^T, m 1]] (10 numbers) and Xi = [[Sy + [hw], [g] + [hv]], [-[g] + [hv], 0]]
# (Sy symmetric; Hc = (hw, hv) = Ic v), so a subtree sum adds 31 numbers, not two 6x6 matrices
C_IO, C_H, C_M, C_SY, C_G, C_HW, C_HV, NC = 0, 9, 12, 13, 22, 25, 28, 32


# The work memory of the derivatives' entries (kernels/derivatives_plan.py): plain functions
# that the kernels compile in and that Data calls to size its buffer (register_jitable).
@register_jitable
def world_work_size(nb, n):
    """Length of the float work buffer of the world-frame ID derivatives (``world_composites``
    and ``world_directions``, plus n for RNEA's torques): per body 3 vectors and a composite,
    per DOF 3 vectors, 5 more."""
    return nb * (18 + NC) + n * 18 + 30 + n


@register_jitable
def fd_work_size(nb, n):
    """Floats of the FD derivatives' work: the ID derivatives', M's factor, a zero vector and
    two 6-vectors per body."""
    return world_work_size(nb, n) + n * n + n + 12 * nb


@register_jitable
def fd_index_size(nb, n):
    """int64 words of the FD derivatives' index work (the ID derivatives use the first n + nb)."""
    return 2 * n + nb


@register_jitable
def work_words(nb, n):
    """Length of a Data buffer's work region (H_WORK): the floats, then the ints."""
    return fd_work_size(nb, n) + fd_index_size(nb, n)


def plan_offsets(nb, nv):
    """(offsets of the regions of a Data buffer, in float64 words, by header index; total size)
    for nb bodies (universe included) and nv DOFs."""
    sizes = ((H_MI, nb * NI), (H_FAIL, 1), (H_PRESC, (nb + 7) // 8), (H_MC, nb * NMC),
             (H_MI6, nb * 36), (H_DV, nb * NDV), (H_DM, nb * NDM * 36), (H_TAU, nv),
             (H_ZERO, nv), (H_ACC, nv), (H_WORK, work_words(nb, nv)))
    out, n = {}, NH
    for h, size in sizes:
        out[h] = n
        n += size
    return out, n


# kernel status codes
OK = 0
NONFINITE = 1
BAD_QUATERNION = 2
SINGULAR = 3       # the failing body row goes to data.failed_row
BAD_MASK = 4       # a multi-DOF joint partly prescribed
BAD_SIZE = 5       # an input of the wrong length
OVERFLOW = 6       # finite inputs, non-finite result (float64 overflow)
