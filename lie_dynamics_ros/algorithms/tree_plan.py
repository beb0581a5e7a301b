"""The packed plan of the single-state tree kernels (kernels/tree.py) for a model, or None.

Served: the models of the SoA batch kernels (revolute and prismatic joints, no mimic, no loop,
rigid-body inertias, and a free joint only on a root row: a floating base;
``batch_soa.soa_unsupported`` says why another is not) with at most ``kernels.tree.MAX_BODIES``
rows. Others keep the general kernels of kernels/plan.py. The three tree kernels
(tree_rnea.py, tree_aba.py, tree_crba.py) handle every row kind of the plan;
``regressor_plan`` adds each body's frame turn C_j for kernels/tree_regressor.py.
"""
import numpy as np

from ..kernels import soa as KS
from ..kernels import tree as KT
from ..kernels import tree_regressor as KR
from . import batch_soa


def tree_plan(model):
    """The read-only packed plan P of ``model`` (built once, kept with the model), or None."""
    return model.derived("tree_plan", _build)


def entry_plan(model, entry, compile_entry):
    """``tree_plan(model)`` for the tree entry ``entry``: kept as
    ``model.derived_items.tree_<entry>`` once ``compile_entry(entry)`` has compiled that entry
    (closed to other signatures) for a served model, so that a public call's fast path reads
    plan and readiness in one attribute (algorithms/dynamics.py, derivatives.py)."""
    def build(m):
        T = tree_plan(m)
        if T is not None:
            compile_entry(entry)
        return T
    return model.derived("tree_" + entry, build)


def _build(model):
    plan = batch_soa.soa_plan(model, strict=False)
    if plan is None or plan[0].shape[0] > KT.MAX_BODIES:
        return None
    P = KT.pack(plan[0], plan[1], model.nq, model.nv)
    P.flags.writeable = False
    return P


def regressor_plan(model):
    """``tree_plan(model)`` with C_j, the turn from body j's plan frame to its model frame,
    in columns GCR (kernels/tree_regressor.py): read-only, kept with the model, or None
    (also for a model without a moving body)."""
    return model.derived("tree_regressor_plan", _build_regressor)


def _build_regressor(model):
    P = tree_plan(model)
    if P is None or P.shape[0] < 2:
        return None
    n = P.shape[0]
    C = np.empty((n, 3, 3))
    KS.axis_frames(model.mi, model.mc, C)
    R = np.zeros((n, KR.NPR))
    R[:, :KT.NP] = P
    R[:, KR.GCR:KR.GCR + 9] = C.reshape(n, 9)
    R.flags.writeable = False
    return R
