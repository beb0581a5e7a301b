"""Column layout of the flat arrays that the compiled kernels share.

A model is compiled into three arrays so a kernel call passes few arguments
(numba charges about 0.3 us per array argument):

* ``mi``  int64  (nj + 1, NI):  topology and joint kind, row 0 is the universe;
* ``fv``  float64 (nj + 1, NCOL): per-body 3- and 6-vectors, constants first, then work;
* ``fm``  float64 (nj + 1, NSLOT, 6, 6): per-body 6x6 matrices, slot 0 is the constant inertia.

Rows are in topological order: ``mi[i, P] < i``. Everything is in the seeds' angular-first order.
"""

# mi columns
P = 0          # parent row (0 = universe)
K = 1          # joint kind (model.joints)
QI = 2         # first index in q (of the master joint for a mimic joint)
VI = 3         # first index in v (of the master joint for a mimic joint)
NQ = 4
NV = 5
MIMIC = 6      # 1 if q_i = mult * q[QI] + offset
NI = 7

# fv columns: constants
R0 = 0         # rotation of the joint origin in the parent frame, row-major (9)
P0 = 9         # translation of the joint origin (3)
AX = 12        # joint axis (revolute, prismatic, universal 1st, planar normal) (3)
AX2 = 15       # universal 2nd axis, planar in-plane axis e1 (3)
MULT = 18      # mimic multiplier (1 otherwise)
OFF = 19       # mimic offset (0 otherwise)
G = 0          # row 0 only: gravity in the world frame (3)
# fv columns: work
WR = 20        # rotation of T_{parent,i}(q) (9)
WP = 29        # translation of T_{parent,i}(q) (3)
SDV = 32       # Sdot_i qd_i (6)
V = 38         # body twist V_i (6)
A = 44         # body acceleration Vd_i (component-wise derivative of the body twist) (6)
F = 50         # joint wrench F_i (6)
ETA = 56       # ad(V_i) S_i qd_i + Sdot_i qd_i (6)
BH = 62        # articulated bias wrench B^_i (6)
BETA = 68      # beta_i (6)
OR = 74        # world rotation of body i (9)
OP = 83        # world translation of body i (3)
QDD = 86       # joint acceleration of this body's joint (6)
TMP = 92       # scratch (6)
FEXT = 98      # external wrench on body i, in its frame (6)
NCOL = 104

# fm slots
MI = 0         # spatial inertia I_i about the body frame origin (constant)
MS = 1         # motion subspace S_i (6 x nv_i, left columns)
MIH = 2        # articulated inertia I^_i (ABA) / composite inertia (CRBA)
MU = 3         # U_i = I^_i S_i
MPSI = 4       # Psi_i = (S^T I^ S)^-1 (nv_i x nv_i, top-left)
MPI = 5        # Pi_i
MSD = 6        # Sdot_i (6 x nv_i)
NSLOT = 7

# kernel status codes
OK = 0
NONFINITE = 1
BAD_QUATERNION = 2
SINGULAR = 3
BAD_MASK = 4       # a multi-DOF joint partly prescribed
