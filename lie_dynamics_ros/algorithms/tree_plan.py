"""The packed plan of the single-state tree kernels (kernels/tree.py) for a model, or None.

Served: the models of the SoA batch kernels (revolute and prismatic joints, no mimic, no loop,
rigid-body inertias; ``batch_soa.soa_unsupported`` says why another is not) with at most
``kernels.tree.MAX_BODIES`` rows. Others keep the general kernels of kernels/plan.py. A free
joint (only ever on a root row, parent the world) is served only on request (``free_root``),
by the callers whose tree kernel handles its row.
"""
from ..kernels import tree as KT
from . import batch_soa


def tree_plan(model, free_root=False):
    """The read-only packed plan P of ``model`` (built once, kept with the model), or None;
    with ``free_root``, also for a model with a free root joint (a floating base)."""
    if free_root:
        return model.derived("tree_plan_free", _build_free)
    return model.derived("tree_plan", _build)


def _build(model):
    plan = batch_soa.soa_plan(model, strict=False)
    if plan is None or batch_soa.has_free(plan):
        return None
    return _pack(model, plan)


def _build_free(model):
    plan = batch_soa.soa_plan(model, strict=False)
    if plan is None:
        return None
    if not batch_soa.has_free(plan):
        return tree_plan(model)     # the same array as without a free root
    return _pack(model, plan)


def _pack(model, plan):
    if plan[0].shape[0] > KT.MAX_BODIES:
        return None
    P = KT.pack(plan[0], plan[1], model.nq, model.nv)
    P.flags.writeable = False
    return P
