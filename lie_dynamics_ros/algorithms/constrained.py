"""Closed kinematic loops (Kim 2012, section 3, eqs. 54-80).

The loops are cut into an open tree (the model) plus closures (``model.loops``). With A(q) the
constraint Jacobian, the equations of motion are Kim's (54)-(55)::

    M(q) qdd + b(q, v) = tau + A^T lam,      A v = 0,      A qdd + Adot v = 0

(eq. 54 says "J^T lam"; it is A^T). Row block i of A is ``P_i (J_b - Ad_{T_ba} J_a)``: the twist
of F_b relative to F_a, expressed in F_b, rows (linear, angular), picked by the closure's
selection ``P_i``. So ``lam`` (same rows) is the wrench (force, torque) that link_a exerts on
link_b through the closure, expressed in F_b at F_b's origin; link_a feels the opposite.

A is allowed to be rank deficient (a planar four-bar closed by a 3D revolute closure has 5 rows
of rank 2). Every algorithm first reduces A to ``Abar = U_r^T A`` with the r left singular vectors
of non-zero singular values; ``lam = U_r lam_bar`` is then the minimum-norm multiplier.

One kernel run per call gives every body's pose, J_i and Jd_i (A and Adot v follow from them);
RNEA, ABA and hybrid dynamics run as usual, and M^-1 A^T comes from r "simplified" ABA sweeps of
Kim (after eq. 67: b dropped, tau = column i of A^T) on the articulated inertias that the ABA
just computed (``kernels/constraints.py``); M^-1 is never formed. Each public function takes
``data=`` like the tree algorithms (the closures' work buffers live in ``data.extra["loops"]``).
"""
import numpy as np

from ..errors import InputError
from ..kernels import constraints as KC
from ..kernels import dynamics as K
from ..lie import so3
from ..model.loops import loop_tables, perpendicular_pair
from ._inputs import check, data_for, prepare
from .configuration import integrate
from .dynamics import forward_dynamics, hybrid_dynamics, inverse_dynamics

#: singular values of A below RANK_RTOL * max(1, s_max) count as zero
RANK_RTOL = 1e-9


# -- closure terms from one kinematics run on a Data -------------------------------------
def _terms(model, d, q, v=None, t=None):
    """(tables, Jrel (nl, 6, nv), brel (nl, 6) or None, Tab (nl, 4, 4)), Kim's order: one
    kernel run fills every body's pose, J_i and Jd_i, then ``closure_terms`` reads them.
    ``t``: LoopTables (default: the model's closures; model/contacts.py adds world anchors)."""
    t = loop_tables(model) if t is None else t
    vv = d.zero_v if v is None else v
    kin = prepare(model, d, q, vv) if model.has_general else True
    check(model, K.jacobian_kinematics(model.mi, model.mc, model.mI, d.dv, d.dm, q, vv,
                                       d.Jb, d.Jd, kin), d, q=q, v=vv)
    K.world_poses(model.mi, d.dv)
    nl = len(t.loops)
    Jrel, brel, Tab = np.empty((nl, 6, model.nv)), np.empty((nl, 6)), np.empty((nl, 4, 4))
    KC.closure_terms(d.dv, d.Jb, d.Jd, vv, t.rows, t.Xoff, t.Toff, t.point, v is not None, Jrel,
                     brel, Tab)
    return t, Jrel, (brel if v is not None else None), Tab


def residual_block(lp, T_ab):
    """The residual rows of closure ``lp`` at the relative pose T_ab (constraint_residual)."""
    R, p = T_ab[:3, :3], T_ab[:3, 3]
    e_p = R.T @ p                                  # F_b's origin seen from F_a, in F_b
    k = lp.kind
    if k == "spherical":
        return e_p
    if k == "weld":
        return np.concatenate([e_p, so3.log(R)])
    n1, n2 = perpendicular_pair(lp.axis)
    if k == "revolute":
        c = R.T @ np.asarray(lp.axis)              # F_a's axis in F_b: equals axis when closed
        return np.concatenate([e_p, [n2 @ c, -n1 @ c]])
    return np.concatenate([[n1 @ p, n2 @ p], so3.log(R)])      # prismatic


def _array(x, n, name):
    try:
        a = np.ascontiguousarray(x, dtype=float)
    except (TypeError, ValueError):
        a = None
    if a is None or a.shape != (n,) or not np.all(np.isfinite(a)):
        raise InputError(f"{name} must be {n} finite numbers")
    return a


def _q(model, q):
    return _array(q, model.nq, "q")


def _v(model, v, name="v"):
    return _array(v, model.nv, name)


def constraint_residual(model, q, data=None):
    """(nc,) closure errors, zero when the mechanism is assembled.

    Per closure: position of F_b's origin relative to F_a in F_b (3), then for ``weld`` the
    SO(3) log of R_ab (3), for ``revolute`` the two components of F_a's axis seen in F_b that
    must vanish (2); for ``prismatic`` the offsets across the axis (2, in F_a) and log R_ab (3).
    Near the assembly the derivative of each row equals the matching row of A.
    """
    return closure_residual(model, data_for(model, data), _q(model, q))


def closure_residual(model, d, q, tables=None):
    """``constraint_residual`` on Data ``d`` for the closures of ``tables`` (default: the
    model's)."""
    t, _, _, Tab = _terms(model, d, q, None, tables)
    out = np.empty(t.nc)
    for lp, T, o in zip(t.loops, Tab, t.offsets):
        out[o:o + lp.nc] = residual_block(lp, T)
    return out


def jacobian_and_bias(model, d, q, v=None, tables=None):
    """(A, Adot v or None) on Data ``d`` for the closures of ``tables`` (default: the
    model's), and the poses T_ab (nl, 4, 4) of F_b relative to F_a."""
    t, Jrel, brel, Tab = _terms(model, d, q, v, tables)
    A = np.empty((t.nc, model.nv))
    bias = None if v is None else np.empty(t.nc)
    for lp, P, o, J, i in zip(t.loops, t.P_seeds, t.offsets, Jrel, range(len(t.loops))):
        A[o:o + lp.nc] = P @ J
        if v is not None:
            bias[o:o + lp.nc] = P @ brel[i]
    return A, bias, Tab


def constraint_jacobian(model, q, data=None):
    """A (nc, nv): A v is the selected relative twist of F_b w.r.t. F_a, in F_b."""
    return jacobian_and_bias(model, data_for(model, data), _q(model, q))[0]


def constraint_bias(model, q, v, data=None):
    """Adot v (nc,): A qdd + Adot v is the selected relative acceleration of the closure."""
    return jacobian_and_bias(model, data_for(model, data), _q(model, q), _v(model, v))[1]


def _null_space(M):
    """Orthonormal basis (columns) of the null space of M, by SVD (same rank rule as reduce_rows)."""
    if M.shape[1] == 0:
        return np.zeros((0, 0))
    _, s, Vt = np.linalg.svd(M, full_matrices=True)
    r = int(np.sum(s > RANK_RTOL * max(1.0, s[0] if s.size else 0.0)))
    return Vt[r:].T


# -- rank reduction and M^-1 A^T ------------------------------------------------------------
def reduce_rows(A):
    """(U_r, Abar = U_r^T A) with full row rank; U_r (nc, r)."""
    if A.shape[0] == 0:
        return np.zeros((0, 0)), A
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    r = int(np.sum(s > RANK_RTOL * max(1.0, s[0] if s.size else 0.0)))
    return U[:, :r], s[:r, None] * Vt[:r]


def articulated_columns(model, d, B):
    """(Y, Tu) of ``kernels.constraints.articulated_columns`` for B (nv, k), on the
    articulated inertias that the last aba/hybrid call left in ``d`` (same q)."""
    w = d.extra.get("loops")
    if w is None:
        nb = model.njoints + 1
        w = d.extra["loops"] = (np.zeros((nb, 6)), np.zeros((nb, 6)), np.zeros((nb, 6)),
                                np.ones(nb, dtype=np.int64))
    B = np.ascontiguousarray(B)
    Y, Tu = np.empty_like(B), np.empty_like(B)
    KC.articulated_columns(model.mi, d.dv, d.dm, d.prescribed_body, B, Y, Tu, *w)
    return Y, Tu


def _baumgarte_rhs(model, d, q, v, A, baumgarte):
    if baumgarte is None:
        return 0.0
    alpha, beta = baumgarte
    return 2.0 * alpha * (A @ v) + beta * beta * constraint_residual(model, q, data=d)


def constrained_forward_dynamics(model, q, v, tau, f_ext=None, baumgarte=None, data=None):
    """(qdd, lam) of the closed-loop mechanism, Kim (67)-(69).

    qdd_r = ABA(q, v, tau); Y = M^-1 Abar^T by simplified ABA runs;
    lam_bar = -(Abar Y)^-1 (Abar qdd_r + Abar_dot v); qdd = qdd_r + Y lam_bar.
    ``baumgarte=(alpha, beta)`` adds 2 alpha A v + beta^2 residual to the acceleration
    constraint (off by default; ``simulate_constrained`` projects instead).
    """
    q, v, tau = _q(model, q), _v(model, v), _v(model, tau, "tau")
    d = data_for(model, data)
    A, bias, _ = jacobian_and_bias(model, d, q, v)
    extra = _baumgarte_rhs(model, d, q, v, A, baumgarte)
    return solve_forward(model, d, q, v, tau, f_ext, A, bias + extra)


def solve_forward(model, d, q, v, tau, f_ext, A, rhs_c):
    """(qdd, lam) with A qdd + rhs_c = 0, Kim (67)-(69), on Data ``d`` (A from the same q)."""
    a_r = forward_dynamics(model, q, v, tau, f_ext, data=d)
    U, Ab = reduce_rows(A)
    if Ab.shape[0] == 0:
        return a_r, np.zeros(A.shape[0])
    Y = articulated_columns(model, d, Ab.T)[0]              # M^-1 Abar^T (right after the ABA)
    G = Ab @ Y
    rhs = Ab @ a_r + U.T @ rhs_c
    lam_bar = -np.linalg.solve(G, rhs)
    return a_r + Y @ lam_bar, U @ lam_bar


def _columns(model, names, what):
    if isinstance(names, str):
        names = [names]
    cols = []
    for n in names:
        if n not in model.joint_names:
            raise InputError(f"{what}: unknown joint {n!r}; known: {model.joint_names}")
        i = model.joint_names.index(n)
        vi, nv = model.joint_v_index[i], model.joint_nv[i]
        cols.extend(range(vi, vi + nv))
    return np.array(sorted(set(cols)), dtype=np.int64)


def _tol(*xs):
    return 1e-8 * (1.0 + max(float(np.max(np.abs(x))) if np.size(x) else 0.0 for x in xs))


def constrained_inverse_dynamics(model, q, v, a, actuated, f_ext=None, data=None):
    """(tau, lam) that produce the motion (q, v, a) with only ``actuated`` joints driven,
    Kim (56)-(66). ``tau`` is zero on passive joints.

    tau_r = RNEA(q, v, a) (open tree); the passive rows give Abar_p^T lam = tau_pr (57).
    Exactly actuated: the unique solution (58). Redundantly actuated: lam = lam* + N s with N an
    orthonormal null basis of Abar_p^T and s chosen for the minimum-norm actuator torque
    (62)-(64). When Abar_p^T lam = tau_pr has no solution the mechanism is under-actuated for this
    motion: InputError. (v, a) must satisfy the constraints (A v = 0, A a + Adot v = 0).
    """
    q, v, a = _q(model, q), _v(model, v), _v(model, a, "a")
    ia = _columns(model, actuated, "actuated")
    ip = np.setdiff1d(np.arange(model.nv), ia)
    d = data_for(model, data)
    tau_r = inverse_dynamics(model, q, v, a, f_ext, data=d)
    U, Ab = reduce_rows(jacobian_and_bias(model, d, q)[0])
    Aa, Ap = Ab[:, ia], Ab[:, ip]
    lam0 = np.linalg.lstsq(Ap.T, tau_r[ip], rcond=None)[0] if Ab.shape[0] else np.zeros(0)
    miss = Ap.T @ lam0 - tau_r[ip]
    if miss.size and np.max(np.abs(miss)) > _tol(tau_r):
        worst = ip[int(np.argmax(np.abs(miss)))]
        raise InputError(
            f"under-actuated for this motion: with actuated joints {list(actuated)} the passive "
            f"joint {_joint_of(model, worst)!r} needs {miss[np.argmax(np.abs(miss))]:+.3g} N(m) "
            "that no closure force can supply; actuate more joints or use "
            "constrained_hybrid_dynamics")
    r = tau_r[ia] - Aa.T @ lam0
    N = _null_space(Ap.T) if Ab.shape[0] else np.zeros((0, 0))
    lam_bar, tau_a = lam0, r
    if N.shape[1]:
        s = np.linalg.lstsq(Aa.T @ N, r, rcond=None)[0]
        lam_bar, tau_a = lam0 + N @ s, r - Aa.T @ (N @ s)
    tau = np.zeros(model.nv)
    tau[ia] = tau_a
    return tau, U @ lam_bar if U.size else np.zeros(model.nc)


def _joint_of(model, col):
    for n, vi, nv in zip(model.joint_names, model.joint_v_index, model.joint_nv):
        if vi <= col < vi + nv:
            return n
    return str(col)


def constrained_hybrid_dynamics(model, q, v, a, tau, prescribed, f_ext=None, data=None):
    """(a_full, tau_full, lam), Kim (70)-(80): accelerations given on the ``prescribed`` (bool
    mask (nv,), as ``hybrid_dynamics``) joints u, torques given on the others v.

    Two hybrid runs: (qdd_u, tau_v) -> (tau_ur, qdd_vr), and simplified runs with (0, Abar_v,i^T)
    that give M_vv^-1 Abar_v^T and M_uv M_vv^-1 Abar_v^T; lam_bar = -(Abar_v M_vv^-1 Abar_v^T)^+
    (Abar qdd_r + Abar_dot v) (74)-(76); tau_u = tau_ur + tau_uc - Abar_u^T lam (80). When there
    are more independent constraints than free joints (m > n_v), the part of lam in the null space
    of Abar_v^T is chosen for the minimum-norm tau_u, as (61)-(64) with a -> u, p -> v.
    """
    q, v, a, tau = _q(model, q), _v(model, v), _v(model, a, "a"), _v(model, tau, "tau")
    mask = np.asarray(prescribed, dtype=bool).reshape(-1)
    if mask.shape != (model.nv,):
        raise InputError(f"prescribed must be a boolean mask of shape ({model.nv},)")
    d = data_for(model, data)
    A, bias, _ = jacobian_and_bias(model, d, q, v)
    a_r, tau_r = hybrid_dynamics(model, q, v, a, tau, mask, f_ext, data=d)
    U, Ab = reduce_rows(A)
    if Ab.shape[0] == 0:
        return a_r, tau_r, np.zeros(A.shape[0])
    iu, iv = np.flatnonzero(mask), np.flatnonzero(~mask)
    # simplified hybrid runs (qdd_u = 0, tau_v = Abar_v,i^T) on the hybrid call's inertias
    Y, T = articulated_columns(model, d, np.where(mask[:, None], 0.0, Ab.T))
    Yv, Tu = Y[iv], T[iu]                            # M_vv^-1 Abar_v^T, M_uv M_vv^-1 Abar_v^T
    Av, Au = Ab[:, iv], Ab[:, iu]
    G = Av @ Yv
    rhs = Ab @ a_r + U.T @ bias
    lam0 = -np.linalg.lstsq(G, rhs, rcond=None)[0]
    miss = G @ lam0 + rhs
    if np.max(np.abs(miss)) > _tol(rhs, a_r):
        raise InputError("the prescribed accelerations violate the loop closures (A a + Adot v "
                         f"misses by {np.max(np.abs(miss)):.3g}) and the free joints cannot make "
                         "up for it")
    a_full = a_r.copy()
    a_full[iv] += Yv @ lam0
    tau_u = tau_r[iu] + Tu @ lam0 - Au.T @ lam0
    lam_bar = lam0
    N = _null_space(Av.T) if iv.size else np.eye(Ab.shape[0])
    if N.shape[1]:
        s = np.linalg.lstsq(Au.T @ N, tau_u, rcond=None)[0]
        lam_bar, tau_u = lam0 + N @ s, tau_u - Au.T @ (N @ s)
    tau_full = tau.copy()
    tau_full[iu] = tau_u
    return a_full, tau_full, U @ lam_bar


# -- assembly and projection ----------------------------------------------------------------
def assemble(model, q_guess, locked=None, tol=1e-12, max_iter=50, info=False, data=None):
    """q near ``q_guess`` with every closure satisfied: Gauss-Newton on the SE(3) residual
    (minimum-norm steps, so a rank-deficient A is fine) with a backtracking line search.

    ``locked``: joint names held at their guessed value (e.g. the actuated joints). Stops when
    max |residual| <= ``tol``; raises InputError naming the worst closure when no assembly is
    reachable. ``info=True`` returns ``(q, {"iterations", "residual"})``.
    """
    d = data_for(model, data)
    q, it, err = assemble_on(model, d, q_guess, loop_tables(model), locked, tol, max_iter)
    return (q, {"iterations": it, "residual": err}) if info else q


def assemble_on(model, d, q_guess, t, locked=None, tol=1e-12, max_iter=50):
    """``assemble`` for the closures of tables ``t`` on Data ``d``: (q, iterations, error)."""
    q = _q(model, q_guess).copy()
    free = np.ones(model.nv, dtype=bool)
    if locked:
        free[_columns(model, locked, "locked")] = False
    r = closure_residual(model, d, q, t)
    err = float(np.max(np.abs(r)))
    for it in range(max_iter + 1):
        if err <= tol:
            return q, it, err
        if it == max_iter:
            break
        A = jacobian_and_bias(model, d, q, None, t)[0]
        dq = np.zeros(model.nv)
        dq[free] = np.linalg.lstsq(A[:, free], -r, rcond=1e-12)[0]
        step, nrm = 1.0, np.linalg.norm(r)
        while step > 1e-6:
            q1 = integrate(model, q, step * dq)
            r1 = closure_residual(model, d, q1, t)
            if np.linalg.norm(r1) < nrm * (1.0 - 1e-4 * step) or np.max(np.abs(r1)) <= tol:
                break
            step *= 0.5
        else:
            break                                   # no descent: a local minimum with r != 0
        q, r = q1, r1
        err = float(np.max(np.abs(r)))
    worst = int(np.argmax(np.abs(r)))
    lp = t.loops[int(np.searchsorted(t.offsets, worst, side="right")) - 1]
    raise InputError(f"assembly not reachable from this guess: closure {lp.name!r} ({lp.kind}, "
                     f"{lp.link_a!r}-{lp.link_b!r}) keeps an error of {abs(r[worst]):.3g} "
                     f"(max |residual| {err:.3g} > tol {tol:g})"
                     + (f" with joints {list(locked)} locked" if locked else ""))


def project(model, q, v, tol=1e-12, max_iter=10, data=None):
    """(q, v) on the constraint manifold: q by ``assemble`` from q, then v by the M-orthogonal
    projection v - M^-1 Abar^T (Abar M^-1 Abar^T)^-1 Abar v (removes only constraint-violating
    kinetic energy)."""
    return project_on(model, data_for(model, data), q, v, loop_tables(model), tol, max_iter)


def project_on(model, d, q, v, t, tol=1e-12, max_iter=10):
    """``project`` for the closures of tables ``t`` on Data ``d``."""
    q = assemble_on(model, d, q, t, None, tol, max_iter)[0]
    v = _v(model, v)
    U, Ab = reduce_rows(jacobian_and_bias(model, d, q, None, t)[0])
    if Ab.shape[0]:
        forward_dynamics(model, q, d.zero_v, d.zero_v, data=d)      # articulated inertias at q
        Y = articulated_columns(model, d, Ab.T)[0]
        v = v - Y @ np.linalg.solve(Ab @ Y, Ab @ v)
    return q, v


def complete_motion(model, q, v, a, known, data=None):
    """(q, v, a) of the whole mechanism from the values on the ``known`` joints (e.g. the
    actuated ones, as a trajectory gives them): q by ``assemble`` with ``known`` locked, then the
    other velocities from A v = 0 and accelerations from A a + Adot v = 0 (least squares, so
    redundant closure rows are fine). InputError when the known joints do not determine the
    others (the closure rows leave a passive direction free).
    """
    d = data_for(model, data)
    q = assemble(model, q, locked=known, data=d)
    v, a = _v(model, v).copy(), _v(model, a, "a").copy()
    ik = _columns(model, known, "known")
    ip = np.setdiff1d(np.arange(model.nv), ik)
    A = jacobian_and_bias(model, d, q)[0]
    Ap = A[:, ip]
    if ip.size and np.linalg.matrix_rank(Ap, tol=RANK_RTOL * max(1.0, np.abs(A).max())) < ip.size:
        raise InputError(f"joints {list(known)} do not determine the others: the closures leave "
                         f"{ip.size - np.linalg.matrix_rank(Ap)} passive direction(s) free")
    v[ip] = np.linalg.lstsq(Ap, -A[:, ik] @ v[ik], rcond=None)[0]
    b = jacobian_and_bias(model, d, q, v)[1]
    a[ip] = np.linalg.lstsq(Ap, -A[:, ik] @ a[ik] - b, rcond=None)[0]
    return q, v, a
