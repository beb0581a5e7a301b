"""Contact and impulse dynamics with rigid contacts (docs/contacts.md).

The contacts are loop closures with a world anchor (``model/contacts.py``) and go through the
closed-loop algorithms of Kim 2012, section 3 (``algorithms/constrained.py``): with A the stacked
contact (and loop) rows and Adot v their bias,

    M qdd + b = tau + A^T lam,      A qdd + Adot v = -Kp e - Kd A v     (Kim 54-55, 67-69)
    M (v+ - v-) = A^T Lambda,       A v+ = -r A v-                       (impulse, contact rows)

which is the system Pinocchio's ``constraintDynamics`` and ``impulseDynamics`` solve (Carpentier
et al. 2021, eqs. 1-3; its proximal iterations converge, from lam = 0, to the minimum-norm lam
that ``reduce_rows`` gives here directly). A redundant contact set (more independent rows than
the robot can satisfy, e.g. four welded feet) keeps the minimum-norm lam; rows that no motion
can satisfy are met in the least-squares sense.
"""
import numpy as np

from ..errors import InputError
from ..kernels import contacts as KK
from ..kernels.layout import OK, P as PARENT
from ..lie import se3
from ..model.contacts import RigidContact, contact_tables
from ._inputs import check, data_for, load_fext, vec
from .constrained import (articulated_columns, jacobian_and_bias, reduce_rows, residual_block,
                          solve_forward)
from .dynamics import forward_dynamics
from .frames import frame_pose


class Work:
    """The compiled path's tables and scratch for one contact set on one Data, packed in two
    buffers (``kernels.contacts.work_sizes``): ``wf`` float64, ``wi`` int64."""

    def __init__(self, model, ct):
        t, nv, nb = ct.tables, model.nv, model.njoints + 1
        nl, nc = len(t.loops), t.nc
        nf, ni = KK.work_sizes(nl, nc, nb, nv)
        self.wf, self.wi = np.zeros(nf), np.zeros(ni, dtype=np.int64)
        lwa = np.zeros(nl, dtype=np.int64)
        for i, _, _ in ct.lwa:
            lwa[i] = 1
        ncs = [lp.nc for lp in t.loops]
        self.wi[:KK.NIH] = nl, nc, ct.nk
        parent = model.mi[:, PARENT]
        active = np.zeros(nb, dtype=np.int64)       # the constrained bodies and their ancestors
        for r in t.rows.ravel():
            while r > 0 and not active[r]:
                active[r], r = 1, parent[r]
        self.wi[KK.NIH:] = np.concatenate([t.rows.ravel(), t.point, np.repeat(np.arange(nl), ncs),
                                           lwa, t.offsets, ncs, active,
                                           np.ones(nb, dtype=np.int64)]).astype(np.int64)
        head = np.concatenate([t.Xoff.ravel(), t.Toff.ravel(), np.vstack(t.P_seeds).ravel()])
        self.wf[:head.size] = head


def tables_for(model, d, contacts, work=False):
    """ContactTables of ``contacts`` (and its Work with ``work``), kept in ``d.extra`` while
    the same set is used."""
    key = contacts if isinstance(contacts, tuple) else tuple(contacts) \
        if isinstance(contacts, list) else contacts
    hit = d.extra.get("contacts")
    if hit is None or hit[0] is not model or not (hit[1] is key or hit[1] == key):
        ct = contact_tables(model, key)
        hit = d.extra["contacts"] = [model, ct.contacts, ct, None]
    if work and hit[3] is None:
        hit[3] = Work(model, hit[2])
    return (hit[2], hit[3]) if work else hit[2]


def place_contacts(model, q, contacts, data=None):
    """The contacts held where their frames are at configuration ``q`` (placement set)."""
    d = data_for(model, data)
    ct = tables_for(model, d, contacts)
    return [RigidContact(model, c.frame, c.kind, c.reference, frame_pose(model, q, c.frame, d))
            for c in ct.contacts]


def _gains(baumgarte):
    try:
        kp, kd = (float(x) for x in baumgarte)
    except (TypeError, ValueError):
        raise InputError(f"baumgarte must be (Kp, Kd), got {baumgarte!r}") from None
    if not (np.isfinite(kp) and np.isfinite(kd) and kp >= 0 and kd >= 0):
        raise InputError(f"baumgarte gains must be finite and >= 0, got {baumgarte!r}")
    return kp, kd


def _errors(ct, Tab):
    """Position errors of every row: per contact Pinocchio's (log6 of F_a^-1 F_b for 6d, the
    position of F_b's origin from F_a in F_b for 3d; zero without a placement), per loop its
    residual."""
    t = ct.tables
    e = np.zeros(t.nc)
    nkc = len(ct.contacts)
    for i, (lp, o) in enumerate(zip(t.loops, t.offsets)):
        if i >= nkc:
            e[o:o + lp.nc] = residual_block(lp, Tab[i])
        elif ct.contacts[i].placement is not None:
            T = Tab[i]
            e[o:o + lp.nc] = se3.log(T) if lp.nc == 6 else T[:3, :3].T @ T[:3, 3]
    return e


def _to_reference(ct, lam, Tab):
    """Contact rows of lam (or of A) from F_b (local) to local_world_aligned where asked."""
    for i, o, nc in ct.lwa:
        R = ct.tables.Toff[i, 0, :3, :3] @ Tab[i, :3, :3]       # F_b's axes in the world
        lam[o:o + 3] = R @ lam[o:o + 3]
        if nc == 6:
            lam[o + 3:o + 6] = R @ lam[o + 3:o + 6]
    return lam


def contact_dynamics(model, q, v, tau, contacts, baumgarte=None, f_ext=None, data=None):
    """(a, lam): forward dynamics with ``contacts`` (ldr.RigidContact list) and the model's
    loops. ``lam`` stacks, in the given order, each contact's wrench (force, torque) or force
    exerted by the world on its frame, in the contact's ``reference`` frame, then the model's
    loop rows (as ``constrained_forward_dynamics``). The contact rows of A a + Adot v equal
    -Kp e - Kd A v with ``baumgarte=(Kp, Kd)`` (Pinocchio's Baumgarte corrector), else 0.
    """
    nv = model.nv
    q, v, tau = vec(q, model.nq, "q"), vec(v, nv, "v"), vec(tau, nv, "tau")
    d = data_for(model, data)
    if baumgarte is None and not model.has_general:
        ct, w = tables_for(model, d, contacts, True)
        t = ct.tables
        use = f_ext is not None and load_fext(model, d, f_ext)
        a, lam = np.empty(nv), np.empty(t.nc)
        st = KK.forward_entry(d.buf, w.wf, w.wi, q, v, tau, a, lam, use)
        if st == OK:
            return a, lam
        if st != KK.RANK_DEFICIENT:
            check(model, st, d, q=q, v=v, tau=tau)
    ct = tables_for(model, d, contacts)
    A, bias, Tab = jacobian_and_bias(model, d, q, v, ct.tables)
    if baumgarte is not None:
        kp, kd = _gains(baumgarte)
        bias = bias + kd * (A @ v) + kp * _errors(ct, Tab)
    a, lam = solve_forward(model, d, q, v, tau, f_ext, A, bias)
    return a, _to_reference(ct, lam, Tab)


def impulse_dynamics(model, q, v, contacts, restitution=0.0, data=None):
    """(v_plus, impulse) after an impact that sets the contacts (ldr.RigidContact list): the
    contact rows of A v_plus equal -restitution * A v, the model's loop rows 0; ``impulse``
    stacks the contact impulses (N s, N m s) as ``contact_dynamics`` stacks lam."""
    q, v = vec(q, model.nq, "q"), vec(v, model.nv, "v")
    try:
        r = float(restitution)
    except (TypeError, ValueError):
        r = float("nan")
    if not 0.0 <= r <= 1.0:
        raise InputError(f"restitution must be a number in [0, 1], got {restitution!r}")
    d = data_for(model, data)
    if not model.has_general:
        ct, w = tables_for(model, d, contacts, True)
        t = ct.tables
        v_plus, lam = np.empty(model.nv), np.empty(t.nc)
        st = KK.impulse_entry(d.buf, w.wf, w.wi, q, v, v_plus, lam, r)
        if st == OK:
            return v_plus, lam
        if st != KK.RANK_DEFICIENT:
            check(model, st, d, q=q, v=v)
    ct = tables_for(model, d, contacts)
    A, _, Tab = jacobian_and_bias(model, d, q, None, ct.tables)
    if not np.all(np.isfinite(v)):
        raise InputError("non-finite values (NaN or Inf) in v")
    target = -(A @ v)
    target[:ct.nk] *= 1.0 + r
    U, Ab = reduce_rows(A)
    if Ab.shape[0] == 0:
        return v.copy(), np.zeros(A.shape[0])
    forward_dynamics(model, q, d.zero_v, d.zero_v, data=d)      # articulated inertias at q
    Y = articulated_columns(model, d, Ab.T)[0]                 # M^-1 Abar^T
    lam_bar = np.linalg.solve(Ab @ Y, U.T @ target)
    return v + Y @ lam_bar, _to_reference(ct, U @ lam_bar, Tab)


def contact_jacobian(model, q, contacts, data=None):
    """(nk, nv) contact Jacobian: the rows of each contact's velocity (linear, angular for
    "6d", linear for "3d") in its reference frame, stacked in the given order (Pinocchio's
    ``getConstraintsJacobian``)."""
    q = vec(q, model.nq, "q")
    d = data_for(model, data)
    if not model.has_general:
        ct, w = tables_for(model, d, contacts, True)
        J = np.empty((ct.nk, model.nv))
        st = KK.jacobian_entry(d.buf, w.wf, w.wi, q, J)
        if st == OK:
            return J
        check(model, st, d, q=q)
    ct = tables_for(model, d, contacts)
    A, _, Tab = jacobian_and_bias(model, d, q, None, ct.tables)
    return _to_reference(ct, A[:ct.nk].copy(), Tab)
