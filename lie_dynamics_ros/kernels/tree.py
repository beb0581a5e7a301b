"""What the single-state kernels on the SoA plan share: the packed plan and stack scratch.

A model of revolute and prismatic joints about any axis (no mimic, no loop) has the plan of
kernels/soa.py: every body frame turned so that its joint axis is z, the joint transform a
rotation about z or a translation along z, S_i a unit column and the inertia 10 numbers
(Featherstone 2008, §4.2, the joint types of Table 4.1). The single-state kernels
(``tree_rnea.py``, ``tree_crba.py``, ``tree_aba.py``) run on one float64 matrix ``P`` that
packs it, so that an entry dispatches with the plan, the inputs and the output only:

    P[i, :soa.NG]          geo row i (soa.GR, GP, GI, GC, GM, GA; row 0: gravity at soa.GX)
    P[i, TOPO + soa.TP]    topo row i as float64 (parent, kind, index in q, index in v)
    P[0, TOPO + soa.TQ]    nq of the model, P[0, TOPO + soa.TV] its nv

``P`` is built by ``algorithms/tree_plan.py`` (read-only, kept with the model). Scratch lives
on the kernel's stack (``views.stack_matrix``): a model of more than ``MAX_BODIES``
bodies keeps the general kernels.
"""
import numpy as np

from . import soa as KS

#: first column of the topology in P
TOPO = KS.NG
NP = KS.NG + KS.NT
#: bodies (world row included) whose scratch fits the stack arrays of the kernels
MAX_BODIES = 64


def pack(topo, geo, nq, nv):
    """The packed plan P of (topo, geo) of kernels/soa.py (see the module docstring)."""
    P = np.zeros((topo.shape[0], NP))
    P[:, :KS.NG] = geo
    P[:, TOPO:] = topo
    P[0, TOPO + KS.TQ], P[0, TOPO + KS.TV] = nq, nv
    return P
