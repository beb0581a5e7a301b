"""Public dynamics algorithms: free functions named after the textbook (Kim 2012, §2).

All take the model first, validate their arguments (``InputError`` on a wrong shape, NaN/Inf, a
non-unit quaternion) and return new arrays. Conventions: docs/conventions.md.
"""
import numpy as np

from ..errors import InputError
from ..kernels import dynamics as K
from ..kernels import layout as L
from ..kernels import tree_aba as TA
from ..kernels import tree_crba as TC
from ..kernels import tree_rnea as KR
from . import batch, batch_soa, batch_soa_aba, batch_soa_crba
from . import _inputs as I
from ._inputs import vec, check, prepare, load_fext, data_for, _F64, _ND
from .tree_plan import tree_plan, entry_plan



# module-level names: a global read instead of an attribute read per call. _raw.<entry> is the
# raw entry point of a compiled tree entry (_inputs.compile_entry), set before any model's
# tree_<entry> plan exists; _ready.<entry> that of kernels/plan.py's entry, once compiled
_raw, _ready, _empty = I.tree_ready, I.ready, np.empty
_TREE_SIGNATURES = {"inverse_dynamics": KR.SIGNATURES, "gravity": KR.SIGNATURES,
                    "nonlinear": KR.SIGNATURES, "mass_matrix": TC.SIGNATURES,
                    "forward_dynamics": TA.SIGNATURES}


# The public calls first try a compiled entry with the arguments as given, so that a float64
# state costs a few attribute reads here. On the models that tree_plan serves (revolute and
# prismatic trees, under a free root joint or not) that is the tree entry (kernels/tree_rnea.py,
# tree_crba.py, tree_aba.py), on both paths, so that a converted argument gives the same bits as
# a float64 one. The fast path reads its plan as one attribute, model.derived_items.tree_<entry>
# (``_tree``), which exists once that entry is compiled, and calls the entry's raw entry point
# (_raw, 0.1-0.17 us cheaper than numba's dispatch): this guard admits ndarrays of ndim 1 and
# dtype float64 only, and the entry returns BAD_SIZE for a wrong length or a strided vector.
# Other models try the entry of kernels/plan.py on the Data's buffer the same way (_ready).
# Anything else (lists, int arrays, batches, f_ext, Python joints, a bad status) takes the
# checked path, which converts, evaluates batches and names the argument at fault.


def _tree(model, entry):
    """The plan of the tree entry ``entry`` (``tree_plan.entry_plan``), None if unserved."""
    return entry_plan(model, entry, _compile_tree)


def _compile_tree(entry):
    if entry in ("inverse_dynamics", "gravity", "nonlinear"):
        _compile_tree_entry(entry)
    else:
        I.compile_entry(entry, _TREE_SIGNATURES[entry], I.tree_ready)

def inverse_dynamics(model, q, v, a, f_ext=None, data=None):
    """Recursive Newton-Euler (Kim Table 2): tau = M(q) a + C(q, v) v + g(q) - J^T f_ext.

    q (nq,), v and a (nv,) give tau (nv,); (N, nq) and (N, nv) give (N, nv), evaluated in
    parallel. ``data``: a ``model.create_data()`` of the caller's, else this thread's own.
    """
    if (f_ext is None and q.__class__ is v.__class__ is a.__class__ is _ND
            and q.ndim == v.ndim == a.ndim == 1 and q.dtype is v.dtype is a.dtype is _F64):
        try:
            T = model.derived_items.tree_inverse_dynamics
        except AttributeError:
            T = _tree(model, "inverse_dynamics")
        if T is not None:
            if data is not None:
                data_for(model, data)
            tau = _empty(model.nv)
            if _raw.inverse_dynamics(T, q, v, a, tau) == 0:
                return tau
        elif _ready.inverse_dynamics and not model.has_general:
            d = model.default_data() if data is None else data_for(model, data)
            tau = np.empty(model.nv)
            if _ready.inverse_dynamics(d.buf, q, v, a, tau) == 0:
                return tau
    I.compile_entry("inverse_dynamics")
    qc, vc, ac = (vec(q, model.nq, "q", True, model), vec(v, model.nv, "v", True),
                  vec(a, model.nv, "a", True))
    if qc is None or vc is None or ac is None:
        if f_ext is None and np.ndim(q) == 2 and np.shape(q)[0] >= batch_soa.MIN_STATES:
            plan = batch_soa.soa_plan(model, strict=False)
            if plan is not None:                 # revolute/prismatic trees: SoA kernel
                return batch_soa.inverse_dynamics_soa(model, q, v, a, plan)
        return batch.evaluate(model, "rnea", (q, v, a), f_ext,
                              lambda *x: inverse_dynamics(model, *x))
    return _rnea(model, data_for(model, data), qc, vc, ac, f_ext)


def mass_matrix(model, q, data=None):
    """Joint-space inertia matrix M(q) by the composite-rigid-body algorithm (full, symmetric).
    (N, nq) gives (N, nv, nv).

    Models of revolute and prismatic joints, under a free root joint or not (``tree_plan``),
    take the specialized kernel of kernels/tree_crba.py, also after the checked path has
    converted q, so that every form of the same q gives the same bits; it needs no Data (a
    caller's ``data`` is only checked)."""
    if q.__class__ is _ND and q.ndim == 1 and q.dtype is _F64:
        try:
            T = model.derived_items.tree_mass_matrix
        except AttributeError:
            T = _tree(model, "mass_matrix")
        if T is not None:
            if data is not None:
                data_for(model, data)
            nv = model.nv
            M = _empty((nv, nv))
            if _raw.mass_matrix(T, q, M) == 0:
                return M
        elif _ready.mass_matrix and not model.has_general:
            d = model.default_data() if data is None else data_for(model, data)
            M = np.empty((model.nv, model.nv))
            if _ready.mass_matrix(d.buf, q, M) == 0:
                return M
    I.compile_entry("mass_matrix")
    I.compile_entry("mass_matrix", TC.SIGNATURES, I.tree_ready)
    qc = vec(q, model.nq, "q", True, model)
    if qc is None:
        if np.ndim(q) == 2 and np.shape(q)[0] >= batch_soa.MIN_STATES:
            plan = batch_soa.soa_plan(model, strict=False)
            if plan is not None:                 # revolute/prismatic trees: SoA kernel
                return batch_soa_crba.mass_matrix_soa(model, q, plan)
        return batch.evaluate(model, "crba", (q,), None, lambda q: mass_matrix(model, q))
    q = qc
    d = data_for(model, data)
    T = tree_plan(model)
    if T is not None:
        M = np.empty((model.nv, model.nv))
        if _raw.mass_matrix(T, q, M) == 0:     # q converted by vec: contiguous float64
            return M
    kin = prepare(model, d, q, d.zero_v) if model.has_general else True
    M = np.empty((model.nv, model.nv))
    st = K.crba(model.mi, model.mc, model.mI, d.dv, d.dm, q, d.zero_v, M, kin)
    if st:
        check(model, st, d, q=q)
    return M


def gravity_torques(model, q, data=None):
    """g(q) = inverse_dynamics(q, 0, 0). (N, nq) gives (N, nv)."""
    if q.__class__ is _ND and q.ndim == 1 and q.dtype is _F64:
        try:
            T = model.derived_items.tree_gravity
        except AttributeError:
            T = _tree(model, "gravity")
        if T is not None:
            if data is not None:
                data_for(model, data)
            tau = _empty(model.nv)
            if _raw.gravity(T, q, tau) == 0:
                return tau
        elif _ready.inverse_dynamics and not model.has_general:
            d = model.default_data() if data is None else data_for(model, data)
            tau = np.empty(model.nv)
            if _ready.inverse_dynamics(d.buf, q, d.zero_v, d.zero_v, tau) == 0:
                return tau
    I.compile_entry("inverse_dynamics")
    qc = vec(q, model.nq, "q", True, model)
    if qc is None:
        z = np.zeros((np.shape(q)[0], model.nv))
        return batch.evaluate(model, "rnea", (q, z, z), None,
                              lambda *x: inverse_dynamics(model, *x))
    q = qc
    d = data_for(model, data)
    return _rnea(model, d, q, d.zero_v, d.zero_v, entry="gravity")


def nonlinear_effects(model, q, v, data=None):
    """C(q, v) v + g(q) = inverse_dynamics(q, v, 0). (N, nq), (N, nv) give (N, nv)."""
    if (q.__class__ is v.__class__ is _ND and q.ndim == v.ndim == 1
            and q.dtype is v.dtype is _F64):
        try:
            T = model.derived_items.tree_nonlinear
        except AttributeError:
            T = _tree(model, "nonlinear")
        if T is not None:
            if data is not None:
                data_for(model, data)
            tau = _empty(model.nv)
            if _raw.nonlinear(T, q, v, tau) == 0:
                return tau
        elif _ready.inverse_dynamics and not model.has_general:
            d = model.default_data() if data is None else data_for(model, data)
            tau = np.empty(model.nv)
            if _ready.inverse_dynamics(d.buf, q, v, d.zero_v, tau) == 0:
                return tau
    I.compile_entry("inverse_dynamics")
    qc, vc = vec(q, model.nq, "q", True, model), vec(v, model.nv, "v", True)
    if qc is None or vc is None:
        return batch.evaluate(model, "rnea", (q, v, np.zeros(np.shape(v))), None,
                              lambda *x: inverse_dynamics(model, *x))
    q, v = qc, vc
    d = data_for(model, data)
    return _rnea(model, d, q, v, d.zero_v, entry="nonlinear")


def _compile_tree_entry(name):
    """The tree entry ``name`` of kernels/tree_rnea.py and, as before it, kernels/plan.py's
    inverse_dynamics, which the models that tree_plan does not serve take (so that a warm-up
    on a served model, ldr_precompile's arm7, still compiles both)."""
    I.compile_entry("inverse_dynamics")
    I.compile_entry(name, KR.SIGNATURES, I.tree_ready)


def _rnea(model, d, q, v, a, f_ext=None, entry="inverse_dynamics"):
    """The RNEA kernel on validated vectors and this Data: the tree entry ``entry`` of
    kernels/tree_rnea.py (v or a unused by "nonlinear" and "gravity") where the model is served
    and f_ext is None, else (and for the error of a bad status) the general kernel."""
    T = tree_plan(model) if f_ext is None else None
    if T is not None:
        _compile_tree_entry(entry)
        tau = np.empty(model.nv)
        args = (q,) if entry == "gravity" else (q, v) if entry == "nonlinear" else (q, v, a)
        if getattr(_raw, entry)(T, *args, tau) == 0:    # vectors converted by vec
            return tau
    kin = prepare(model, d, q, v) if model.has_general else True
    use = f_ext is not None and load_fext(model, d, f_ext)
    tau = np.empty(model.nv)
    st = K.rnea(model.mi, model.mc, model.mI, d.dv, d.dm, q, v, a, tau, kin, use)
    if st:
        check(model, st, d, q=q, v=v, a=a)
    return tau


def forward_dynamics(model, q, v, tau, f_ext=None, data=None):
    """Articulated-body algorithm (Kim Table 3), O(n): a = M^-1 (tau - C v - g + J^T f_ext).

    A model with mimic joints couples bodies outside the tree recursion; it is solved through
    M (CRBA + Cholesky) instead. (N, nq), (N, nv) give (N, nv).
    """
    if (f_ext is None and q.__class__ is v.__class__ is tau.__class__ is _ND
            and q.ndim == v.ndim == tau.ndim == 1 and q.dtype is v.dtype is tau.dtype is _F64):
        # a caller's Data gets the general kernel: contacts and loops read the articulated
        # inertias it leaves there (constrained.articulated_columns)
        plan = None
        if data is None:
            try:
                plan = model.derived_items.tree_forward_dynamics
            except AttributeError:
                plan = _tree(model, "forward_dynamics")
        if plan is not None:
            acc = _empty(model.nv)
            if _raw.forward_dynamics(plan, q, v, tau, acc) == 0:
                return acc
        elif _ready.forward_dynamics and model.tree_aba:
            d = model.default_data() if data is None else data_for(model, data)
            acc = np.empty(model.nv)
            if _ready.forward_dynamics(d.buf, q, v, tau, acc) == 0:
                return acc
    I.compile_entry("forward_dynamics")
    I.compile_entry("forward_dynamics", TA.SIGNATURES, I.tree_ready)
    qc, vc, tc = (vec(q, model.nq, "q", True, model), vec(v, model.nv, "v", True),
                  vec(tau, model.nv, "tau", True))
    if qc is None or vc is None or tc is None:
        if f_ext is None and np.ndim(q) == 2 and np.shape(q)[0] >= batch_soa.MIN_STATES:
            plan = batch_soa.soa_plan(model, strict=False)
            if plan is not None:                 # revolute/prismatic trees: SoA kernel
                return batch_soa_aba.forward_dynamics_soa(model, q, v, tau, plan)
        return batch.evaluate(model, "aba", (q, v, tau), f_ext,
                              lambda *x: forward_dynamics(model, *x))
    q, v, tau = qc, vc, tc
    plan = tree_plan(model) if data is None and f_ext is None else None
    if plan is not None:        # the bits of the fast path, whatever the input's type was
        acc = np.empty(model.nv)
        if _raw.forward_dynamics(plan, q, v, tau, acc) == 0:     # vectors converted by vec
            return acc
    d = data_for(model, data)
    if model.has_mimic:
        return _solve_through_M(model, d, q, v, tau, f_ext)
    kin = prepare(model, d, q, v) if model.has_general else True
    use = f_ext is not None and load_fext(model, d, f_ext)
    a = np.empty(model.nv)
    st = K.aba(model.mi, model.mc, model.mI, d.dv, d.dm, q, v, tau, d.prescribed_body, a,
               d.tau_out, d.failed_row, kin, use)
    if st:
        check(model, st, d, q=q, v=v, tau=tau)
    return a


def hybrid_dynamics(model, q, v, a, tau, prescribed, f_ext=None, data=None):
    """Hybrid dynamics (Kim Table 4): joints with ``prescribed[k]`` True follow the given
    acceleration ``a[k]`` and the rest the given torque ``tau[k]``.

    Returns ``(a_full, tau_full)``: the accelerations of the torque-driven joints and the torques
    that the prescribed motion needs, merged with the given values. All True = inverse dynamics;
    all False = forward dynamics. A multi-DOF joint is prescribed as a whole. Batched: (N, nq),
    (N, nv) states with one (nv,) mask give two (N, nv) arrays.
    """
    mask = I.mask(prescribed, model.nv)
    qc, vc = vec(q, model.nq, "q", True, model), vec(v, model.nv, "v", True)
    ac, tc = vec(a, model.nv, "a", True), vec(tau, model.nv, "tau", True)
    if qc is None or vc is None or ac is None or tc is None:
        _check_whole_joints(model, mask)
        return batch.evaluate(model, "hybrid", (q, v, a, tau), f_ext,
                              lambda *x: hybrid_dynamics(model, *x, mask), mask=mask)
    q, v, a, tau = qc, vc, ac, tc
    d = data_for(model, data)
    if model.has_mimic:
        _check_whole_joints(model, mask)
        return _hybrid_through_M(model, d, q, v, a, tau, mask, f_ext)
    return _hybrid(model, d, q, v, a, tau, mask, f_ext)


def _check_whole_joints(model, mask):
    first = model.dof_first                   # index of the first DOF of each DOF's joint
    if not np.array_equal(mask, mask[first]):
        k = int(np.flatnonzero(mask != mask[first])[0])
        name = model.joint_names[model.joint_v_index.index(int(first[k]))]
        raise InputError(f"joint {name!r}: prescribe all of its DOFs or none")


def _hybrid(model, d, q, v, a, tau, mask, f_ext):
    mask = np.ascontiguousarray(mask)
    kin = prepare(model, d, q, v) if model.has_general else True
    use = f_ext is not None and load_fext(model, d, f_ext)
    a_out, tau_out = np.empty(model.nv), np.empty(model.nv)
    st = K.hybrid(model.mi, model.mc, model.mI, d.dv, d.dm, q, v, a, tau, mask,
                  d.prescribed_body, a_out, tau_out, d.failed_row, kin, use)
    if st == L.BAD_MASK:
        _check_whole_joints(model, mask)
    if st:
        check(model, st, d, q=q, v=v, a=np.where(mask, a, 0.0), tau=np.where(mask, 0.0, tau))
    return a_out, tau_out


def _solve_through_M(model, d, q, v, tau, f_ext):
    if not np.all(np.isfinite(tau)):
        raise InputError("non-finite values (NaN or Inf) in tau")
    b = inverse_dynamics(model, q, v, d.zero_v, f_ext, data=d)
    return _cho_solve(model, mass_matrix(model, q, data=d), tau - b)


def _hybrid_through_M(model, d, q, v, a, tau, mask, f_ext):
    """Kim (2012) eq. (34), solved for the torque-driven joints v given the prescribed u:
    a_v = M_vv^-1 (tau_v - b_v - M_vu a_u) (the printed equation swaps the index sets)."""
    u, w = mask, ~mask
    a_full = np.where(u, a, 0.0)
    if not np.all(np.isfinite(a_full)) or not np.all(np.isfinite(np.where(w, tau, 0.0))):
        raise InputError("non-finite values (NaN or Inf) in a or tau")
    M = mass_matrix(model, q, data=d)
    b = inverse_dynamics(model, q, v, d.zero_v, f_ext, data=d)
    if w.any():
        a_full[w] = _cho_solve(model, M[np.ix_(w, w)],
                               tau[w] - b[w] - M[np.ix_(w, u)] @ a_full[u], np.flatnonzero(w))
    tau_full = M @ a_full + b
    tau_full[w] = tau[w]
    return a_full, tau_full


def _cho_solve(model, M, rhs, dofs=None):
    """M^-1 rhs by Cholesky; a singular M names the joints whose diagonal entry vanishes."""
    try:
        c = np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        diag = np.diag(M)
        dofs = np.arange(model.nv) if dofs is None else dofs
        small = dofs[diag <= 1e-12 * max(np.abs(diag).max(), 1e-300)]
        names = sorted({model.joint_names[model.joint_v_index.index(int(model.dof_first[k]))]
                        for k in small})
        who = f"joint(s) {names} move" if names else "a joint moves"
        raise InputError(f"the mass matrix is singular: {who} no mass or inertia") from None
    return np.linalg.solve(c.T, np.linalg.solve(c, rhs))


def coriolis_matrix(model, q, v, data=None):
    """Christoffel-consistent C(q, v): C v + g = inverse_dynamics(q, v, 0) and dM/dt = C + C^T.

    Built recursively from body Jacobians and their derivatives, C = sum_i J_i^T (I_i Jd_i +
    B_i J_i) with a skew B_i (Echeandia & Wensing's factorization), not from finite differences.
    """
    q, v = vec(q, model.nq, "q", model=model), vec(v, model.nv, "v")
    d = data_for(model, data)
    kin = prepare(model, d, q, v) if model.has_general else True
    C = np.empty((model.nv, model.nv))
    check(model, K.coriolis_matrix(model.mi, model.mc, model.mI, d.dv, d.dm, q, v, d.Jb, d.Jd,
                                   C, kin), d, q=q, v=v)
    return C
