"""Data: the work memory of the algorithms, one per thread or worker (Pinocchio's ``Data``,
MuJoCo's ``mjData``).

A ``Model`` is a frozen description; every quantity an algorithm computes on the way (joint
transforms, twists, wrenches, articulated inertias, Jacobians) lives in a Data. Two threads that
share a model and use their own Data never see each other's numbers. The public functions take
``data=`` and otherwise use a per-thread Data of the model.

The packed kernel arrays ``dv`` and ``dm`` are laid out by ``kernels/layout.py``, as regions of
one buffer ``buf`` that also holds a copy of the model's arrays (one argument per call for the
compiled entries of ``kernels/plan.py``); the views below are generated from its field lists,
so ``data.twist[i]`` is body i's twist V_i (Kim's order: angular first) after an algorithm that
computes twists ran on this Data.
"""
import numpy as np

from ..kernels import layout as L


def _vector_view(name, offset, width, doc):
    def get(self):
        return self.dv[:, offset:offset + width]
    return property(get, doc=f"(nj + 1, {width}) {doc}")


def _matrix_view(slot, doc):
    def get(self):
        return self.dm[:, slot]
    return property(get, doc=f"(nj + 1, 6, 6) {doc}")


class Data:
    """Work buffers for one model, for one thread at a time. ``model.create_data()``.

    Named views of the packed arrays (rows = bodies, row 0 = the universe):
    see ``Data.FIELDS`` for the list with their meaning.
    """

    def __init__(self, model):
        nb, nv = model.njoints + 1, model.nv
        self.nv = nv
        self.njoints = model.njoints
        off, size = L.plan_offsets(nb, nv)
        #: (size,) float64: the packed work memory (kernels/layout.py, PLAN); the arrays below
        #: and a copy of the model's (mi, mc, mI) are views into it
        self.buf = np.zeros(size)
        head = self.buf[:L.NH].view(np.int64)
        head[L.H_NB], head[L.H_NV] = nb, nv
        for h, o in off.items():
            head[h] = o

        def region(h, n):
            return self.buf[off[h]:off[h] + n]
        self._mi = region(L.H_MI, nb * L.NI).view(np.int64).reshape(nb, L.NI)
        self._mc = region(L.H_MC, nb * L.NMC).reshape(nb, L.NMC)
        self._mI = region(L.H_MI6, nb * 36).reshape(nb, 6, 6)
        #: (nj + 1, NDV) per-body vectors (layout.VECTORS)
        self.dv = region(L.H_DV, nb * L.NDV).reshape(nb, L.NDV)
        #: (nj + 1, NDM, 6, 6) per-body matrices (layout.MATRICES)
        self.dm = region(L.H_DM, nb * L.NDM * 36).reshape(nb, L.NDM, 6, 6)
        #: (nj + 1,) bool: joint i's acceleration is prescribed (hybrid dynamics)
        self.prescribed_body = region(L.H_PRESC, (nb + 7) // 8).view(np.bool_)[:nb]
        #: (nv,) always zero: the zero velocity/acceleration of g(q), M(q) (never written)
        self.zero_v = region(L.H_ZERO, nv)
        #: (nv,) torques of the last forward-dynamics call (all given, returned as a)
        self.tau_out = region(L.H_TAU, nv)
        #: (1,) int64: the body row at which the last kernel failed (SINGULAR), else 0
        self.failed_row = region(L.H_FAIL, 1).view(np.int64)
        #: the model constants (``model.mc``) whose copy ``buf`` holds
        self.model_constants = None
        self.load_model(model)
        #: (nj + 1, 6, nv) body Jacobians J_i: V_i = J_i v, in frame i (Kim's order)
        self.Jb = np.zeros((nb, 6, nv))
        #: (nj + 1, 6, nv) their time derivatives Jd_i
        self.Jd = np.zeros((nb, 6, nv))
        #: (nj + 1, 6) reference twists W_i = J_i v_r (Slotine-Li regressor)
        self.W = np.zeros((nb, 6))
        #: (nj + 1, 6) their rates J_i a_r + Jd_i v_r + X_i0 (0, -g)
        self.Wd = np.zeros((nb, 6))
        #: (nj + 1, 6) body wrenches of the Slotine-Li recursion
        self.Fw = np.zeros((nb, 6))
        #: (2,) kinetic and potential energy of the last energies call
        self.energy = np.zeros(2)
        #: algorithm-specific buffers of extension modules, created on first use
        self.extra = {}

    def load_model(self, model):
        """Copy ``model``'s arrays into ``buf`` (a Data serves one model at a time; the public
        functions reload it when given a Data last used with another model of the same sizes)."""
        self._mi[:], self._mc[:], self._mI[:] = model.mi, model.mc, model.mI
        self.buf[:L.NH].view(np.int64)[L.H_NQ] = model.nq
        self.model_constants = model.mc

    FIELDS = tuple((view, doc) for _, view, _, doc in L.VECTORS) + \
        tuple((view, doc) for _, view, doc in L.MATRICES)

    def __repr__(self):
        return f"<Data nv={self.nv} bodies={self.njoints}>"


for _name, _view, _width, _doc in L.VECTORS:
    setattr(Data, _view, _vector_view(_view, getattr(L, _name), _width, _doc))
for _name, _view, _doc in L.MATRICES:
    setattr(Data, _view, _matrix_view(getattr(L, _name), _doc))
