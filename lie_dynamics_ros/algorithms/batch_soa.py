"""Batched inverse dynamics on the structure-of-arrays kernel (``kernels/soa.py``).

``inverse_dynamics_soa(model, Q, V, A)`` evaluates N states of a model whose joints are all
revolute or prismatic (no mimic, no closed loop, no Python-defined joint), possibly under a
free joint on the world (a floating base, without armature), and returns (N, nv),
equal to ``inverse_dynamics`` on the same rows to round-off. ``soa_unsupported(model)`` says
why another model is refused (None when it is served); callers then use the batched path of
``algorithms/batch.py``. ``ldr.inverse_dynamics`` on ``MIN_STATES`` states or more takes
this path for the models it serves.

The blocks of ``kernels.soa.B`` states are cut into one chunk per core and run on the batch
pool's threads (the kernel releases the GIL) when the batch is large enough for that to pay
(``batch.run_split``). Each block copies its rows of Q, V, A into the
kernel's state-innermost scratch and its torques back, so the inputs are read in place once.
"""
import numpy as np

from ..errors import InputError
from ..kernels import joints as J
from ..kernels import layout as L
from ..kernels import soa as KS
from . import batch
from ._inputs import rows

#: batches from this many states take the SoA kernel in ``ldr.inverse_dynamics`` (below,
#: the model check's few microseconds and a part-filled block are not worth it)
MIN_STATES = 32


def soa_unsupported(model):
    """None when ``inverse_dynamics_soa`` serves ``model``, else the reason (a sentence)."""
    return _plan(model)[1]


def soa_plan(model, strict=True):
    """(topo, geo) of ``kernels/soa.py`` for ``model``, read-only, built on the first call and
    kept with the model (``Model.derived``). A model it does not serve raises InputError, or
    gives None when not ``strict`` (a caller that falls back to the batched path)."""
    plan, why = _plan(model)
    if why is not None and strict:
        raise InputError(f"inverse_dynamics_soa: {why}; use ldr.inverse_dynamics")
    return plan


def _plan(model):
    return model.derived("soa_plan", _build_plan)


def _build_plan(model):
    if model.loops:
        return None, "the model has closed kinematic loops"
    n = model.mi.shape[0]
    topo, geo = np.zeros((n, KS.NT), dtype=np.int64), np.zeros((n, KS.NG))
    code = KS.build_plan(model.mi, model.mc, model.mI, topo, geo)
    if code == 0:
        topo.flags.writeable = geo.flags.writeable = False
        return (topo, geo), None
    row, why = divmod(code, 4)
    name = model.body_joint_names[row]
    if why == KS.MIMIC:
        return None, f"joint {name!r} is a mimic joint"
    if why == KS.KIND and model.mi[row, L.K] == J.FREE:
        if model.mi[row, L.P] != 0:
            return None, f"joint {name!r} is free below another body (only a free root joint)"
        return None, f"joint {name!r} is free with armature (a free root joint without one)"
    if why == KS.KIND:
        kind = J.NAMES.get(int(model.mi[row, L.K]), "of another kind")
        return None, (f"joint {name!r} is {kind} (only revolute and prismatic joints, "
                      "and a free root joint)")
    return None, f"the inertia of body {model.body_names[row - 1]!r} is not a rigid body's"


def inverse_dynamics_soa(model, q, v, a, plan=None):
    """tau (N, nv) for the states (N, nq), (N, nv), (N, nv): RNEA (Kim 2012, Table 2) with
    gravity and the armature, f_ext none. ``plan``: ``soa_plan(model)``, to reuse across calls.

    A row with NaN or Inf raises InputError naming the argument and the row; so does a row
    whose free-joint quaternion is not of unit norm, and a finite row whose torques overflow
    float64."""
    topo, geo = soa_plan(model) if plan is None else plan
    if topo.shape[0] != model.mi.shape[0]:
        raise InputError("plan was made for another model: use soa_plan(model)")
    Q = rows(q, model.nq, "q", model=model)
    N = Q.shape[0]
    V = rows(v, model.nv, "v", N)
    A = rows(a, model.nv, "a", N)
    tau = np.empty((N, model.nv))
    status = np.zeros(N, dtype=np.int64)
    batch.soa_blocks(KS.rnea_soa, N, topo, geo, Q, V, A, tau, status)
    if status.any():
        r = int(np.flatnonzero(status)[0])
        bad = [k for k, x in (("q", Q), ("v", V), ("a", A)) if not np.all(np.isfinite(x[r]))]
        if bad:
            raise InputError(f"row {r}: non-finite values (NaN or Inf) in {', '.join(bad)}")
        quaternion_check(model, r, Q[r])
        raise InputError(f"row {r}: overflow: the inputs are finite but the result is not "
                         "(velocities or positions too large for float64)")
    return tau


def quaternion_check(model, r, q):
    """InputError naming row r and the free joint whose quaternion in q fails the per-state
    rule (kernels/joint_kinematics.unit_quat: |norm - 1| < 1e-6), if one does."""
    for i in range(1, model.mi.shape[0]):
        if model.mi[i, L.K] == J.FREE:
            k = int(model.mi[i, L.QI]) + 3
            if not abs(np.sqrt(np.sum(q[k:k + 4] ** 2)) - 1.0) < 1e-6:
                raise InputError(f"row {r}: the quaternion of joint "
                                 f"{model.body_joint_names[i]!r} in q is not of unit norm "
                                 "(tolerance 1e-6); normalize it or build q with "
                                 "ldr.integrate / ldr.random_configuration")
