"""Curvature of the configuration space with the kinetic-energy metric (Park, Bobrow & Ploen
1995, §6, eq. 66).

* ``mass_matrix_second_derivatives(model, q)`` -> ddM (nv, nv, nv, nv),
  ddM[i, j, k, l] = d^2 m_ij / dq_k dq_l, analytic: M = sum_b J_b^T I_b J_b with J_b the body
  Jacobian of body b in its own frame, and for DOFs j before k on the path to b
  dJ_b,j / dq_k = [J_b,j, J_b,k] (the body-frame form of Park's Proposition 1, eq. 53);
  once more for the second derivative (Proposition 2, eq. 54, with its two cases in the right
  order: the nested bracket goes to the later DOF).
* ``curvature_tensor(model, q)`` -> R (nv, nv, nv, nv), R[i, j, k, l] = R_ijkl of eq. (66):
  R_ijkl = dGamma_jli/dq_k - dGamma_jki/dq_l + sum_r (Gamma_ilr Gamma_jk^r - Gamma_ikr Gamma_jl^r)
  with Gamma_ijk of eq. (52) and Gamma_ij^k = sum_h m^kh Gamma_ijh. This is
  R_ijkl = <R(d_k, d_l) d_j, d_i> with R(X, Y) = nabla_X nabla_Y - nabla_Y nabla_X - nabla_[X,Y]:
  R_ijkl = -R_jikl = -R_ijlk = R_klij.
* ``sectional_curvature(model, q, u, w)`` = R(u, w, u, w) / (|u|^2 |w|^2 - <u, w>^2) in the
  metric M, i.e. sum R_ijkl u_i w_j u_k w_l over that area; > 0 on a round sphere.
* ``scalar_curvature(model, q)`` = sum m^ik m^jl R_ijkl (twice the Gauss curvature in 2-D).

q must be coordinates: revolute, prismatic, planar and universal joints (a planar joint is a
product of exponentials in (x, y, theta), a universal one in (q1, q2)), mimic joints included.
Free and ball joints (q on a group, derivatives in the tangent space do not commute) and
General joints (dS/dq unknown) raise InputError naming the joint.
"""
import numpy as np

from ..errors import InputError
from ..kernels import joints as J
from ..lie import se3, so3
from ..model.joint_types import joint_axes
from ._inputs import vec
from .geometry import christoffel_symbols
from .kinematics import forward_kinematics
from .dynamics import mass_matrix

COORDINATE_KINDS = (J.REVOLUTE, J.PRISMATIC, J.PLANAR, J.UNIVERSAL)

# se(3) structure constants in the public (linear, angular) order: [x, y]_a = C[a, b, c] x_b y_c
_C = np.zeros((6, 6, 6))
for _b in range(6):
    for _c in range(6):
        _x, _y = np.eye(6)[_b], np.eye(6)[_c]
        _C[:3, _b, _c] = np.cross(_x[3:], _y[:3]) - np.cross(_y[3:], _x[:3])
        _C[3:, _b, _c] = np.cross(_x[3:], _y[3:])


def require_coordinates(model, what):
    """InputError naming the first joint whose q is not a coordinate (free, ball, General),
    or the loop closures (the tree's metric is not the closed chain's)."""
    if model.nc:
        raise InputError(f"{what} is for open trees: the model has {len(model.loops)} loop "
                         "closure(s), whose constraint manifold has another metric")
    for j in model.joints:
        if j.joint.kind not in COORDINATE_KINDS:
            raise InputError(
                f"joint {j.name!r} is a {J.NAMES[j.joint.kind]} joint: {what} needs q to be "
                "coordinates (revolute, prismatic, planar or universal joints)")


def finite_vector(x, n, name):
    """x as a finite (n,) float array, else InputError naming it."""
    x = vec(x, n, name)
    if not np.all(np.isfinite(x)):
        raise InputError(f"{name} has a NaN or Inf element (index {int(np.argmin(np.isfinite(x)))})")
    return x


def _joint_screws(joint, q):
    """(6, nv) columns of S(q) in the child frame, public (linear, angular) order."""
    kind = joint.kind
    a, a2 = joint_axes(joint, "")
    if kind == J.REVOLUTE:
        return np.r_[0, 0, 0, a].reshape(6, 1)
    if kind == J.PRISMATIC:
        return np.r_[a, 0, 0, 0].reshape(6, 1)
    if kind == J.PLANAR:                       # T = trans(x e1 + y f) rot(n theta)
        R = so3.exp(a * q[2])
        f = np.cross(a, a2)
        return np.column_stack([np.r_[R.T @ a2, 0, 0, 0], np.r_[R.T @ f, 0, 0, 0],
                                np.r_[0, 0, 0, a]])
    R2 = so3.exp(a2 * q[1])                    # universal: T = rot(a1 q1) rot(a2 q2)
    return np.column_stack([np.r_[0, 0, 0, R2.T @ a], np.r_[0, 0, 0, a2]])


def _bodies(model, q):
    """[(body row, inertia, J_b (6, m), dofs (m,))]: each body's Jacobian over the physical DOFs
    on its path, root first, and E (ndof, nv) with q-derivative d/dq_v = sum_p E[p, v] d/dx_p."""
    poses = forward_kinematics(model, q)
    T = {j.row: poses[j.child_link] for j in model.joints}
    parent = model.parents
    dof_cols, E, first = {}, [], {}
    for j in model.joints:                     # physical DOFs, one per joint DOF (mimics too)
        first[j.row] = len(E)
        S = _joint_screws(j.joint, q[j.q_index:j.q_index + j.nq])
        for m in range(j.nv):
            e = np.zeros(model.nv)
            if j.mimic is None:
                e[j.v_index + m] = 1.0
            else:
                e[j.v_index + m] = j.mimic[1]
            E.append(e)
        dof_cols[j.row] = S
    out = []
    for j in model.joints:
        b, chain = j.row, []
        r = b
        while r > 0:
            chain.append(r)
            r = parent[r]
        Tb_inv = np.linalg.inv(T[b])
        cols, dofs = [], []
        for r in reversed(chain):
            cols.append(se3.Ad(Tb_inv @ T[r]) @ dof_cols[r])
            dofs += range(first[r], first[r] + dof_cols[r].shape[1])
        out.append((b, model.inertias[b - 1], np.hstack(cols), np.array(dofs)))
    return out, np.array(E)


def mass_matrix_second_derivatives(model, q):
    """ddM (nv, nv, nv, nv) with ddM[i, j, k, l] = d^2 m_ij / dq_k dq_l (analytic)."""
    require_coordinates(model, "the second derivative of M")
    q = finite_vector(q, model.nq, "q")
    bodies, E = _bodies(model, q)
    P = E.shape[0]
    dd = np.zeros((P, P, P, P))
    for _, I, Jb, dofs in bodies:
        m = len(dofs)
        U = np.triu(np.ones((m, m)), 1)                      # U[j, k]: j before k on the path
        Br = np.einsum("abc,bj,ck->ajk", _C, Jb, Jb)         # [J_j, J_k]
        D1 = Br * U                                          # D1[:, j, k] = dJ_j/dx_k
        # d/dx_l [J_j, J_k] (j before k) = [[J_j, J_l], J_k] (j before l) + [J_j, [J_k, J_l]]
        # (k before l)
        D2 = (np.einsum("abc,bjl,ck->ajkl", _C, D1, Jb)
              + np.einsum("abc,bj,ckl->ajkl", _C, Jb, D1)) * U[None, :, :, None]
        IJ, ID1 = I @ Jb, np.einsum("ab,bjk->ajk", I, D1)
        t = (np.einsum("aikl,aj->ijkl", D2, IJ) + np.einsum("aik,ajl->ijkl", D1, ID1))
        t = t + t.transpose(1, 0, 2, 3)
        dd[np.ix_(dofs, dofs, dofs, dofs)] += t
    return np.einsum("pa,qb,rc,sd,pqrs->abcd", E, E, E, E, dd, optimize=True)


def curvature_tensor(model, q):
    """R (nv, nv, nv, nv), R[i, j, k, l] = R_ijkl of Park, Bobrow & Ploen (1995) eq. (66)."""
    require_coordinates(model, "the curvature tensor")
    q = finite_vector(q, model.nq, "q")
    ddM = mass_matrix_second_derivatives(model, q)
    G = christoffel_symbols(model, q)                       # G[i, j, k] = Gamma_ijk
    Minv = np.linalg.inv(mass_matrix(model, q))
    G_up = np.einsum("kh,ijh->ijk", Minv, G)                # Gamma_ij^k
    # dGamma_jli/dq_k = 1/2 (d_k d_j m_il + d_k d_l m_ij - d_k d_i m_jl), eq. (52) differentiated
    # R_ijkl = 1/2 (d_j d_k m_il + d_i d_l m_jk - d_i d_k m_jl - d_j d_l m_ik) + quadratic terms
    R = 0.5 * (np.einsum("iljk->ijkl", ddM) + np.einsum("jkil->ijkl", ddM)
               - np.einsum("jlik->ijkl", ddM) - np.einsum("ikjl->ijkl", ddM))
    R += np.einsum("ilr,jkr->ijkl", G, G_up)
    R -= np.einsum("ikr,jlr->ijkl", G, G_up)
    return R


def sectional_curvature(model, q, u, w):
    """K(u, w) = R(u, w, u, w) / (<u,u><w,w> - <u,w>^2), inner products in M(q); u, w (nv,)
    tangent vectors that span a plane (else InputError)."""
    q = finite_vector(q, model.nq, "q")
    u, w = finite_vector(u, model.nv, "u"), finite_vector(w, model.nv, "w")
    M = mass_matrix(model, q)
    area = (u @ M @ u) * (w @ M @ w) - (u @ M @ w) ** 2
    if not area > 1e-12 * (u @ M @ u) * (w @ M @ w):
        raise InputError("u and w must span a plane: they are (nearly) parallel or zero")
    R = curvature_tensor(model, q)
    return float(np.einsum("ijkl,i,j,k,l->", R, u, w, u, w) / area)


def scalar_curvature(model, q):
    """sum_ijkl m^ik m^jl R_ijkl (for nv = 2: twice the Gauss curvature)."""
    q = finite_vector(q, model.nq, "q")
    Minv = np.linalg.inv(mass_matrix(model, q))
    return float(np.einsum("ik,jl,ijkl->", Minv, Minv, curvature_tensor(model, q)))
