"""Analytic derivatives of inverse, forward and hybrid dynamics (Kim 2012, §4, Tables 5-7).

Conventions (docs/derivatives.md):

* Rows and columns in ``model.joint_names`` order (the order of v).
* A q-derivative lives in the tangent space: column k is d/dt at t = 0 of the quantity at
  ``ldr.integrate(model, q, t e_k)``; for a free joint that is q exp(t e_k) on SE(3) with
  e_k in (v_lin, w) of the body frame, for a ball joint q exp(t e_k) on SO(3), as in Pinocchio.
* External wrenches are held constant in their body frames.
* Joints given as ``ldr.General`` callables have no S'(q) to differentiate: InputError.
  Mimic joints are supported (the mimic body moves with its master's q and v).
"""
import numpy as np

from ..errors import InputError
from ..kernels import derivatives as KD
from ..kernels import joints as J
from ..kernels import derivatives_plan as E
from ..kernels import tree_derivatives as TD
from . import _inputs as I
from . import batch
from ._inputs import vec, rows, mask, check, prepare, load_fext, data_for, _F64, _ND
from .dynamics import forward_dynamics, hybrid_dynamics
from .tree_plan import tree_plan, entry_plan


class _Ready:
    """Which entries of kernels/derivatives_plan.py are compiled and closed to other argument
    types: the public functions call an entry first once it is (False, then its raw entry
    point: ``_inputs._Ready``)."""
    inverse_dynamics_derivatives = forward_dynamics_derivatives = False


class _TreeReady:
    """The same for the entries of kernels/tree_derivatives.py."""
    inverse_dynamics_derivatives = forward_dynamics_derivatives = False


ready = _Ready()
tree_ready = _TreeReady()
_empty = np.empty


def _tree(model, entry):
    """The plan of the entry ``entry`` of kernels/tree_derivatives.py
    (``tree_plan.entry_plan``), None if unserved."""
    return entry_plan(model, entry, _compile_tree_entry)


def _compile_tree_entry(entry):
    """The tree entry ``entry`` and, as before it, the general one, which the models that
    tree_plan does not serve take (so that a warm-up on a served model compiles both)."""
    I.compile_entry(entry, E.SIGNATURES, ready)
    I.compile_entry(entry, TD.SIGNATURES, tree_ready)


def _tree_call(fn, T, x, y, z, nv):
    """(out[0], out[1], out[2]) of the tree entry ``fn`` (its raw entry point) on vectors
    converted by ``vec``, or None for a nonzero status (the general path then names the
    error)."""
    out = np.empty((3, nv, nv))
    if fn(T, x, y, z, out) == 0:
        return out[0], out[1], out[2]
    return None


def _supported(model):
    if not model.has_general:
        return
    for j in model.joints:
        if j.joint.kind == J.GENERAL:
            raise InputError(f"joint {j.name!r} is a General joint: its derivative dS/dq is not "
                             "known, so analytic derivatives are not available for this model")


def _batch(model, q, rest):
    """(N, arrays) when q is 2-D, else None. rest: [(array, n, name)]."""
    if (q.ndim if isinstance(q, np.ndarray) else np.ndim(q)) != 2 or np.shape(q) == (model.nq, 1):
        return None                        # one state (a column is one state, as in vec)
    N = np.shape(q)[0]
    return N, [rows(q, model.nq, "q", N, model)] + [rows(x, n, name, N) for x, n, name in rest]


def _rows(model, entry, b, row):
    """The batch ``b`` = (N, (Q, X, Y)) through ``entry`` (a ``*_rows`` entry of
    kernels/derivatives_plan.py), its rows cut over the cores; a failed row is named by
    ``row(q, x, y)``, the single-state call, which raises its error."""
    N, (Q, X, Y) = b
    n = model.nv
    out = np.empty((3, N, n, n))
    status = np.zeros(N, dtype=np.int64)

    def run(lo, hi):
        if entry(model.default_data().buf, Q, X, Y, out, status, lo, hi):
            raise AssertionError("derivatives rows: the Data buffer does not fit the model")

    batch.run_split(N, run)
    if status.any():
        batch.raise_for_row(int(np.flatnonzero(status)[0]), Q, (X, Y), row)
    return out[0], out[1], out[2]


def inverse_dynamics_derivatives(model, q, v, a, f_ext=None, data=None, _world_form=True):
    """(dtau_dq, dtau_dv, M): the partial derivatives of tau = ID(q, v, a) (Kim Table 5).

    dtau_dq is in the tangent space of q (see the module doc), dtau_dv = dtau/dv and
    M = dtau/da is the mass matrix. 2-D inputs (N, nq), (N, nv), (N, nv) give (N, nv, nv)
    arrays, the rows cut over the cores (f_ext per state only). Models whose joints all have
    a constant S (revolute, prismatic, free, ball; no mimic) use the world-frame form of
    Table 5 in ``kernels/derivatives.py``; the others run Table 5 once per direction. Single
    states of the models ``tree_plan`` serves (revolute and prismatic joints, a free root) and
    f_ext None take that form specialized, ``kernels/tree_derivatives.py``.
    """
    # float64 vectors: the entry of kernels/tree_derivatives.py on the models tree_plan
    # serves, else that of kernels/derivatives_plan.py (see algorithms/dynamics.py)
    if (q.__class__ is v.__class__ is a.__class__ is _ND and q.ndim == v.ndim == a.ndim == 1
            and q.dtype is v.dtype is a.dtype is _F64 and f_ext is None and _world_form):
        try:
            T = model.derived_items.tree_inverse_dynamics_derivatives
        except AttributeError:
            T = _tree(model, "inverse_dynamics_derivatives")
        if T is not None:
            if data is not None:
                data_for(model, data)
            nv = model.nv
            out = _empty((3, nv, nv))
            if tree_ready.inverse_dynamics_derivatives(T, q, v, a, out) == 0:
                return out[0], out[1], out[2]
        elif ready.inverse_dynamics_derivatives and not model.has_general:
            d = model.default_data() if data is None else data_for(model, data)
            out = _empty((3, model.nv, model.nv))
            if ready.inverse_dynamics_derivatives(d.buf, q, v, a, out) == 0:
                return out[0], out[1], out[2]
    I.compile_entry("inverse_dynamics_derivatives", E.SIGNATURES, ready)
    _supported(model)
    n = model.nv
    d = data_for(model, data)
    b = _batch(model, q, [(v, n, "v"), (a, n, "a")])
    if b is not None:
        if f_ext is not None:
            raise InputError("f_ext is per state: batched calls take f_ext=None")
        return _rows(model, E.inverse_dynamics_derivatives_rows, b,
                     lambda *x: inverse_dynamics_derivatives(model, *x))
    q, v, a = vec(q, model.nq, "q", model=model), vec(v, n, "v"), vec(a, n, "a")
    T = tree_plan(model) if f_ext is None and _world_form else None
    if T is not None:           # the bits of the fast path, whatever the input's type was
        _compile_tree_entry("inverse_dynamics_derivatives")
        res = _tree_call(tree_ready.inverse_dynamics_derivatives, T, q, v, a, n)
        if res is not None:
            return res
    use = f_ext is not None and load_fext(model, d, f_ext)
    out = np.empty((3, n, n))
    kin = prepare(model, d, q, v) if model.has_general else True
    st = KD.rnea_derivatives_packed(model.mi, model.mc, model.mI, d.dv, d.dm, q, v, a, out, kin,
                                    use, _world_form)
    if st:
        check(model, st, d, q=q, v=v, a=a)
    return out[0], out[1], out[2]


def forward_dynamics_derivatives(model, q, v, tau, f_ext=None, data=None):
    """(da_dq, da_dv, Minv): the partial derivatives of a = FD(q, v, tau) (Kim Table 6).

    At a = FD(q, v, tau), da/dq = -M^-1 dtau/dq and da/dv = -M^-1 dtau/dv (the Table 5
    derivatives at that a), and da/dtau = M^-1; solved with the tree-sparse L^T D L
    factorization of M (Featherstone's), O(n d) per column. Batched like
    ``inverse_dynamics_derivatives``. With mimic joints M is not tree-sparse: dense solves.
    Single states of the models ``tree_plan`` serves and f_ext None take
    ``kernels/tree_derivatives.py``.
    """
    if (q.__class__ is v.__class__ is tau.__class__ is _ND and q.ndim == v.ndim == tau.ndim == 1
            and q.dtype is v.dtype is tau.dtype is _F64 and f_ext is None):
        try:
            T = model.derived_items.tree_forward_dynamics_derivatives
        except AttributeError:
            T = _tree(model, "forward_dynamics_derivatives")
        if T is not None:
            if data is not None:
                data_for(model, data)
            nv = model.nv
            out = _empty((3, nv, nv))
            if tree_ready.forward_dynamics_derivatives(T, q, v, tau, out) == 0:
                return out[0], out[1], out[2]
        elif ready.forward_dynamics_derivatives and model.tree_aba:
            d = model.default_data() if data is None else data_for(model, data)
            out = _empty((3, model.nv, model.nv))
            if ready.forward_dynamics_derivatives(d.buf, q, v, tau, out) == 0:
                return out[0], out[1], out[2]
    I.compile_entry("forward_dynamics_derivatives", E.SIGNATURES, ready)
    _supported(model)
    n = model.nv
    d = data_for(model, data)
    b = _batch(model, q, [(v, n, "v"), (tau, n, "tau")])
    if b is not None and f_ext is not None:
        raise InputError("f_ext is per state: batched calls take f_ext=None")
    if model.has_mimic:
        if b is not None:
            N, (q, v, tau) = b
            outs = [forward_dynamics_derivatives(model, q[r], v[r], tau[r], data=d)
                    for r in range(N)]
            return tuple(np.stack(x) for x in zip(*outs))
        a = forward_dynamics(model, q, v, tau, f_ext, data=d)
        dq, dv, M = inverse_dynamics_derivatives(model, q, v, a, f_ext, data=d)
        Minv = _spd_inverse(M)
        return -Minv @ dq, -Minv @ dv, Minv
    if b is not None:
        return _rows(model, E.forward_dynamics_derivatives_rows, b,
                     lambda *x: forward_dynamics_derivatives(model, *x))
    q, v, tau = vec(q, model.nq, "q", model=model), vec(v, n, "v"), vec(tau, n, "tau")
    T = tree_plan(model) if f_ext is None else None
    if T is not None:           # the bits of the fast path, whatever the input's type was
        _compile_tree_entry("forward_dynamics_derivatives")
        res = _tree_call(tree_ready.forward_dynamics_derivatives, T, q, v, tau, n)
        if res is not None:
            return res
    use = f_ext is not None and load_fext(model, d, f_ext)
    out = np.empty((3, n, n))
    st = KD.aba_derivatives(model.mi, model.mc, model.mI, d.dv, d.dm, q, v, tau, np.empty(n),
                            out[0], out[1], out[2], d.failed_row, prepare(model, d, q, v), use)
    if st:
        check(model, st, d, q=q, v=v, tau=tau)
    return out[0], out[1], out[2]


def _spd_inverse(M):
    try:
        c = np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        raise InputError("the mass matrix is singular: a joint moves no mass") from None
    ci = np.linalg.inv(c)
    return ci.T @ ci


def hybrid_dynamics_derivatives(model, q, v, a, tau, prescribed, f_ext=None, data=None):
    """(dy_dq, dy_dv, dy_dx): derivatives of hybrid dynamics (Kim Table 7).

    With ``prescribed`` as in ``ldr.hybrid_dynamics``, the given inputs are
    x_k = a_k (prescribed) or tau_k (not prescribed) and the unknowns are y_k = tau_k
    (prescribed) or a_k (not prescribed), k in v order. Returned: dy/dq (tangent space),
    dy/dv and dy/dx, each (nv, nv). All prescribed gives (dtau_dq, dtau_dv, M) of
    ``inverse_dynamics_derivatives``; none prescribed gives (da_dq, da_dv, M^-1) of
    ``forward_dynamics_derivatives``.

    With u the prescribed and w the free DOFs and D = dtau/d(q, v) at the full acceleration:
    da_w = -M_ww^-1 (D_w dx + M_wu da_u - dtau_w), dtau_u = D_u dx + M_uu da_u + M_uw da_w.
    """
    _supported(model)
    u = mask(prescribed, model.nv)
    w = ~u
    a_full, _ = hybrid_dynamics(model, q, v, a, tau, u, f_ext, data=data)
    Dq, Dv, M = inverse_dynamics_derivatives(model, q, v, a_full, f_ext, data=data)
    n = model.nv
    Mww = M[np.ix_(w, w)]
    Mwu = M[np.ix_(w, u)]
    Minv_ww = _spd_inverse(Mww) if w.any() else np.zeros((0, 0))
    out = []
    for D in (Dq, Dv):
        Y = np.empty((n, n))
        daw = -Minv_ww @ D[w]
        Y[w] = daw
        Y[u] = D[u] + M[np.ix_(u, w)] @ daw
        out.append(Y)
    X = np.zeros((n, n))
    X[np.ix_(w, w)] = Minv_ww
    X[np.ix_(w, u)] = -Minv_ww @ Mwu
    X[np.ix_(u, u)] = M[np.ix_(u, u)] - Mwu.T @ Minv_ww @ Mwu
    X[np.ix_(u, w)] = Mwu.T @ Minv_ww
    out.append(X)
    return tuple(out)


PARAMETER_COLUMNS = ("x", "y", "z", "rx", "ry", "rz")


def inverse_dynamics_parameter_derivatives(model, q, v, a, joints=None, data=None):
    """dtau/dp for the kinematic parameters of joint origins: (nv, 6 len(joints)).

    For each joint (``joints``: names, default ``model.joint_names``; mimic joints allowed) six
    columns, in the order of ``PARAMETER_COLUMNS``: the origin translation x, y, z (in the frame
    of the parent body, i.e. the URDF ``<origin xyz>`` when the parent link is a body), then a
    rotation of the origin, right-trivialized: R_origin exp([r]) with r = (rx, ry, rz) in the
    origin frame. Kim Table 5 with dh = T^-1 dT/dp at that joint only (eq. 89). The inertial
    parameters' derivative is ``ldr.regressor(model, q, v, v, a)`` (tau is linear in them).
    """
    _supported(model)
    names = list(model.joint_names) if joints is None else list(joints)
    rows = np.empty(len(names), dtype=np.int64)
    for b, name in enumerate(names):
        rows[b] = model.joint(name).row          # InputError for an unknown name
    n = model.nv
    q, v, a = vec(q, model.nq, "q", model=model), vec(v, n, "v"), vec(a, n, "a")
    d = data_for(model, data)
    out = np.empty((n, 6 * len(names)))
    st = KD.parameter_derivatives(model.mi, model.mc, model.mI, d.dv, d.dm, q, v, a, rows, out,
                                  prepare(model, d, q, v))
    check(model, st, d, q=q, v=v, a=a)
    return out


__all__ = ["inverse_dynamics_derivatives", "forward_dynamics_derivatives",
           "hybrid_dynamics_derivatives", "inverse_dynamics_parameter_derivatives",
           "PARAMETER_COLUMNS"]
