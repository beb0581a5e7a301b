"""Public dynamics algorithms: free functions named after the textbook (Kim 2012, §2).

All take the model first, validate their arguments (``InputError`` on a wrong shape, NaN/Inf, a
non-unit quaternion) and return new arrays. Conventions: docs/conventions.md.
"""
import numpy as np

from ..errors import InputError
from ..kernels import dynamics as K
from ..kernels import layout as L
from ._inputs import vec, check, prepare, load_fext


def inverse_dynamics(model, q, v, a, f_ext=None):
    """Recursive Newton-Euler (Kim Table 2): tau = M(q) a + C(q, v) v + g(q) - J^T f_ext."""
    q, v, a = vec(q, model.nq, "q"), vec(v, model.nv, "v"), vec(a, model.nv, "a")
    kin = prepare(model, q, v)
    use = f_ext is not None and load_fext(model, f_ext)
    tau = np.empty(model.nv)
    st = K.rnea(model._mi, model._fv, model._fm, q, v, a, tau, kin, use)
    if st:
        check(model, st, q=q, v=v, a=a)
    return tau


def mass_matrix(model, q):
    """Joint-space inertia matrix M(q) by the composite-rigid-body algorithm (full, symmetric)."""
    q = vec(q, model.nq, "q")
    kin = prepare(model, q, model._zero_v)
    M = np.empty((model.nv, model.nv))
    st = K.crba(model._mi, model._fv, model._fm, q, M, kin)
    if st:
        check(model, st, q=q)
    return M


def gravity_torques(model, q):
    """g(q) = inverse_dynamics(q, 0, 0)."""
    return inverse_dynamics(model, q, model._zero_v, model._zero_v)


def nonlinear_effects(model, q, v):
    """C(q, v) v + g(q) = inverse_dynamics(q, v, 0)."""
    return inverse_dynamics(model, q, v, model._zero_v)


def forward_dynamics(model, q, v, tau, f_ext=None):
    """Articulated-body algorithm (Kim Table 3), O(n): a = M^-1 (tau - C v - g + J^T f_ext).

    A model with mimic joints couples bodies outside the tree recursion; it is solved through
    M (CRBA + Cholesky) instead.
    """
    if model.has_mimic:
        return _solve_through_M(model, q, v, tau, f_ext)
    a, _ = _hybrid(model, q, v, model._zero_v, tau, model._no_prescription, f_ext)
    return a


def hybrid_dynamics(model, q, v, a, tau, prescribed, f_ext=None):
    """Hybrid dynamics (Kim Table 4): joints with ``prescribed[k]`` True follow the given
    acceleration ``a[k]`` and the rest the given torque ``tau[k]``.

    Returns ``(a_full, tau_full)``: the accelerations of the torque-driven joints and the torques
    that the prescribed motion needs, merged with the given values. All True = inverse dynamics;
    all False = forward dynamics. A multi-DOF joint is prescribed as a whole.
    """
    mask = np.asarray(prescribed)
    if mask.shape != (model.nv,) or mask.dtype != bool:
        raise InputError(f"prescribed must be a boolean mask of shape ({model.nv},)")
    if model.has_mimic:
        _check_whole_joints(model, mask)
        return _hybrid_through_M(model, q, v, a, tau, mask, f_ext)
    return _hybrid(model, q, v, a, tau, mask, f_ext)


def _check_whole_joints(model, mask):
    first = model._dof_first                  # index of the first DOF of each DOF's joint
    if not np.array_equal(mask, mask[first]):
        k = int(np.flatnonzero(mask != mask[first])[0])
        name = model.joint_names[model.joint_v_index.index(int(first[k]))]
        raise InputError(f"joint {name!r}: prescribe all of its DOFs or none")


def _hybrid(model, q, v, a, tau, mask, f_ext):
    q, v = vec(q, model.nq, "q"), vec(v, model.nv, "v")
    a, tau = vec(a, model.nv, "a"), vec(tau, model.nv, "tau")
    mask = np.ascontiguousarray(mask)
    kin = prepare(model, q, v)
    use = f_ext is not None and load_fext(model, f_ext)
    a_out, tau_out = np.empty(model.nv), np.empty(model.nv)
    st = K.hybrid(model._mi, model._fv, model._fm, q, v, a, tau, mask, a_out, tau_out, kin, use)
    if st == L.BAD_MASK:
        _check_whole_joints(model, mask)
    if st:
        check(model, st, q=q, v=v, a=np.where(mask, a, 0.0), tau=np.where(mask, 0.0, tau))
    return a_out, tau_out


def _solve_through_M(model, q, v, tau, f_ext):
    tau = vec(tau, model.nv, "tau")
    if not np.all(np.isfinite(tau)):
        raise InputError("non-finite values (NaN or Inf) in tau")
    b = inverse_dynamics(model, q, v, np.zeros(model.nv), f_ext)
    return _cho_solve(mass_matrix(model, q), tau - b)


def _hybrid_through_M(model, q, v, a, tau, mask, f_ext):
    """Kim eq. (34) with the index fix of digest P6: a_v = M_vv^-1 (tau_v - b_v - M_vu a_u)."""
    a, tau = vec(a, model.nv, "a"), vec(tau, model.nv, "tau")
    u, w = mask, ~mask
    a_full = np.where(u, a, 0.0)
    if not np.all(np.isfinite(a_full)) or not np.all(np.isfinite(np.where(w, tau, 0.0))):
        raise InputError("non-finite values (NaN or Inf) in a or tau")
    M = mass_matrix(model, q)
    b = inverse_dynamics(model, q, v, np.zeros(model.nv), f_ext)
    if w.any():
        a_full[w] = _cho_solve(M[np.ix_(w, w)], tau[w] - b[w] - M[np.ix_(w, u)] @ a_full[u])
    tau_full = M @ a_full + b
    tau_full[w] = tau[w]
    return a_full, tau_full


def _cho_solve(M, rhs):
    try:
        c = np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        raise InputError("the mass matrix is singular: a joint moves no mass") from None
    return np.linalg.solve(c.T, np.linalg.solve(c, rhs))


def coriolis_matrix(model, q, v):
    """Christoffel-consistent C(q, v): C v + g = inverse_dynamics(q, v, 0) and dM/dt = C + C^T.

    Built recursively from body Jacobians and their derivatives, C = sum_i J_i^T (I_i Jd_i +
    B_i J_i) with a skew B_i (Echeandia & Wensing's factorization), not from finite differences.
    """
    q, v = vec(q, model.nq, "q"), vec(v, model.nv, "v")
    kin = prepare(model, q, v)
    Jb, Jd = _jacobian_buffers(model)
    C = np.empty((model.nv, model.nv))
    check(model, K.coriolis_matrix(model._mi, model._fv, model._fm, q, v, Jb, Jd, C, kin), q=q, v=v)
    return C


def _jacobian_buffers(model):
    key = "jac"
    if key not in model._scratch:
        shape = (model.njoints + 1, 6, model.nv)
        model._scratch[key] = (np.zeros(shape), np.zeros(shape))
    return model._scratch[key]
