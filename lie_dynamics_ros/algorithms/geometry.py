"""Geometry of the configuration space (Park, Bobrow & Ploen 1995, §4): the mass matrix as a
pulled-back metric, its derivatives and the Christoffel symbols.

* ``mass_matrix_configuration_derivatives(model, q)`` -> dM (nv, nv, nv), dM[:, :, k] =
  dM/dq_k (tangent space, as every q-derivative here); compiled: column j of dM/dq_k is the
  Kim Table 5 derivative of tau(q, 0, e_j) - tau(q, 0, 0).
* ``christoffel_symbols(model, q)`` -> Gamma (nv, nv, nv), Park eq. (52):
  Gamma[i, j, k] = 1/2 (dm_kj/dq_i + dm_ki/dq_j - dm_ij/dq_k), so that
  tau_k = sum_j m_kj qdd_j + sum_ij Gamma[i, j, k] qd_i qd_j + phi_k (Park eq. 29) when q are
  coordinates (revolute, prismatic, planar joints). On a free or ball joint q lives on a group
  and the tangent-space derivatives do not commute; Gamma is then the symbol of the
  left-trivialized metric and the identity with C needs the structure constants too.
* ``mass_matrix_park`` and ``mass_matrix_configuration_derivatives_park``: pure-numpy
  references in Park's form M = S^T G^T J G S (Park eqs. 47-51; S = diag(S_i), J = diag(J_i)
  the body inertias, G lower block-triangular with block (j, i) = Ad_{T_ij^-1} for i an
  ancestor of j) and its
  derivative, dG/dq_k block (j, i) = -Ad_{T_Kj^-1} ad_{S_k} Ad_{T_iK^-1} for i above K <= j
  (the body-frame form of Park's Proposition 1, eq. 53). Joints with a constant S only.
"""
import numpy as np

from ..errors import InputError
from ..kernels import derivatives as KD
from ..lie import se3
from ..kernels import joints as J
from ._inputs import vec, check, prepare, data_for
from .derivatives import _supported
from .kinematics import forward_kinematics


def mass_matrix_configuration_derivatives(model, q, data=None):
    """dM (nv, nv, nv) with dM[:, :, k] = dM/dq_k, q-derivatives in the tangent space."""
    _supported(model)
    q = vec(q, model.nq, "q", model=model)
    d = data_for(model, data)
    n = model.nv
    dM = np.empty((n, n, n))
    st = KD.mass_matrix_configuration_derivatives(model.mi, model.mc, model.mI, d.dv, d.dm, q,
                                                  dM, prepare(model, d, q, d.zero_v))
    check(model, st, d, q=q)
    return dM


def christoffel_symbols(model, q, data=None):
    """Gamma (nv, nv, nv) of Park eq. (52): Gamma[i, j, k] = Gamma_ijk."""
    dM = mass_matrix_configuration_derivatives(model, q, data)
    # dm_kj/dq_i = dM[k, j, i], dm_ki/dq_j = dM[k, i, j], dm_ij/dq_k = dM[i, j, k]
    return 0.5 * (dM.transpose(2, 1, 0) + dM.transpose(1, 2, 0) - dM)


# ------------------------------------------------------------------ Park's closed form (numpy)
def _park_terms(model, q):
    """(S (6nb, nv), G (6nb, 6nb), Jd (6nb, 6nb), world poses, parents, axes) in the seeds'
    order, from the public forward kinematics and the joints' constant S; 6-vectors in the
    public (linear, angular) order of ``lie.se3``."""
    q = vec(q, model.nq, "q", model=model)
    nb = model.njoints
    poses = forward_kinematics(model, q)
    T0 = [np.eye(4)] + [poses[name] for name in model.body_names]
    parent = model.parents.tolist()
    S = np.zeros((6 * nb, model.nv))
    for j in model.joints:
        kind = j.joint.kind
        if kind == J.REVOLUTE or kind == J.PRISMATIC:
            ax = np.asarray(j.joint.axis, dtype=float)
            ax = ax / np.linalg.norm(ax)
            col = np.r_[0, 0, 0, ax] if kind == J.REVOLUTE else np.r_[ax, 0, 0, 0]
            mult = j.mimic[1] if j.mimic else 1.0
            S[6 * (j.row - 1):6 * j.row, j.v_index] += mult * col
        elif kind == J.FREE:
            S[6 * (j.row - 1):6 * j.row, j.v_index:j.v_index + 6] = np.eye(6)
        elif kind == J.SPHERICAL:
            S[6 * (j.row - 1) + 3:6 * j.row, j.v_index:j.v_index + 3] = np.eye(3)
        else:
            raise InputError(f"joint {j.name!r}: the Park reference handles constant-S joints")
    G = np.zeros((6 * nb, 6 * nb))
    for jb in range(1, nb + 1):
        i = jb
        while i > 0:
            Tij = np.linalg.inv(T0[i]) @ T0[jb]
            G[6 * (jb - 1):6 * jb, 6 * (i - 1):6 * i] = se3.Ad(np.linalg.inv(Tij))
            i = parent[i]
    Jd = np.zeros((6 * nb, 6 * nb))
    for i in range(nb):
        Jd[6 * i:6 * i + 6, 6 * i:6 * i + 6] = model.inertias[i]
    return S, G, Jd, T0, parent


def mass_matrix_park(model, q):
    """M = S^T G^T J G S (Park, Bobrow & Ploen 1995, eqs. 47-51) + diag(armature), a numpy
    reference."""
    S, G, Jd, _, _ = _park_terms(model, q)
    return S.T @ G.T @ Jd @ G @ S + np.diag(model.armature)


def mass_matrix_configuration_derivatives_park(model, q):
    """dM/dq_k = S^T (dG^T J G + G^T J dG) S with Park's Proposition 1 for dG (numpy)."""
    S, G, Jd, T0, parent = _park_terms(model, q)
    nb, n = model.njoints, model.nv
    body_of = np.empty(n, dtype=int)
    for j in model.joints:
        if j.mimic is None:
            body_of[j.v_index:j.v_index + j.nv] = j.row
    if model.has_mimic:
        raise InputError("the Park reference does not handle mimic joints")
    dM = np.empty((n, n, n))
    for k in range(n):
        K = body_of[k]
        Sk = S[6 * (K - 1):6 * K, k]
        dG = np.zeros_like(G)
        for jb in range(1, nb + 1):
            # is K on the path root..jb?
            chain, i = [], jb
            while i > 0:
                chain.append(i)
                i = parent[i]
            if K not in chain:
                continue
            i = parent[K]
            while i > 0:
                TiK = np.linalg.inv(T0[i]) @ T0[K]
                TKj = np.linalg.inv(T0[K]) @ T0[jb]
                dG[6 * (jb - 1):6 * jb, 6 * (i - 1):6 * i] = (
                    -se3.Ad(np.linalg.inv(TKj)) @ se3.ad(Sk) @ se3.Ad(np.linalg.inv(TiK)))
                i = parent[i]
            # i = K itself and the joint's own columns: T_KK = 1 does not depend on q
        A = dG.T @ Jd @ G
        dM[:, :, k] = S.T @ (A + A.T) @ S
    return dM
