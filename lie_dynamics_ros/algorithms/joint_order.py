"""q and v between the model's joint order and another one (Pinocchio's, a driver's).

Our joints are ordered depth-first in URDF declaration order; Pinocchio orders siblings
differently and a driver lists joints as it likes. Pasting such a vector into our functions
gives plausible but wrong numbers, so map it by name::

    order = ldr.JointOrder(model, [n for n in pin_model.names[1:]], continuous="cos_sin")
    q = order.q_to_model(q_pin); q_pin = order.q_from_model(q)
    v = order.v_to_model(v_pin); v_pin = order.v_from_model(v)

Each joint keeps its own coordinates (a free joint's 7/6, a ball joint's quaternion), except
continuous joints with ``continuous="cos_sin"``: Pinocchio stores those as (cos θ, sin θ).
"""
import numpy as np

from ..errors import InputError
from ._inputs import vec


class JointOrder:
    """Index maps between ``model.joint_names`` and the list ``names``.

    ``names`` must contain every joint of the model; names the model lacks (a gripper, a
    universe entry) are allowed with ``extra="ignore"`` and filled with ``fill`` on the way out.
    """

    def __init__(self, model, names, continuous="angle", extra="error", fill=0.0):
        if continuous not in ("angle", "cos_sin"):
            raise InputError("continuous must be 'angle' or 'cos_sin'")
        if extra not in ("error", "ignore"):
            raise InputError("extra must be 'error' or 'ignore'")
        names = [str(n) for n in names]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise InputError(f"joint names given twice: {dup}")
        ours = {n: k for k, n in enumerate(model.joint_names)}
        unknown = [n for n in names if n not in ours]
        if unknown and extra == "error":
            raise InputError(f"joints not in the model {model.name!r}: {unknown} "
                             "(extra='ignore' to skip them)")
        missing = [n for n in model.joint_names if n not in names]
        if missing:
            raise InputError(f"the list lacks the model's joints {missing}")
        continuous_v = set(model.continuous_v.tolist())     # unbounded revolute joints
        circle = {k for k, vi in enumerate(model.joint_v_index)
                  if vi in continuous_v} if continuous == "cos_sin" else set()
        self.model, self.names, self.fill = model, names, float(fill)
        self._cos_sin = []
        oq = ov = 0
        self._q_other_of, self._v_other_of = {}, {}
        for n in names:
            if n not in ours:
                oq, ov = oq + 1, ov + 1        # an unknown joint counts as one coordinate
                continue
            k = ours[n]
            nq, nv = model.joint_nq[k], model.joint_nv[k]
            if k in circle:
                self._cos_sin.append((model.joint_q_index[k], oq))
                oq += 2
            else:
                self._q_other_of[k] = oq
                oq += nq
            self._v_other_of[k] = ov
            ov += nv
        self.nq_other, self.nv_other = oq, ov
        self._q_idx = np.zeros(model.nq, dtype=int)     # model q[i] = other q[_q_idx[i]]
        self._q_use = np.ones(model.nq, dtype=bool)
        self._v_idx = np.zeros(model.nv, dtype=int)
        for k in range(len(model.joint_names)):
            qi, vi = model.joint_q_index[k], model.joint_v_index[k]
            for d in range(model.joint_nv[k]):
                self._v_idx[vi + d] = self._v_other_of[k] + d
            if k in self._q_other_of:
                for d in range(model.joint_nq[k]):
                    self._q_idx[qi + d] = self._q_other_of[k] + d
            else:
                self._q_use[qi] = False

    def _vec(self, x, n, what):
        return vec(x, n, what)

    def q_to_model(self, q_other):
        """The model's q from a q in the other order."""
        q_other = self._vec(q_other, self.nq_other, "q")
        q = np.where(self._q_use, q_other[self._q_idx], 0.0)
        for qi, oq in self._cos_sin:
            q[qi] = np.arctan2(q_other[oq + 1], q_other[oq])
        return q

    def q_from_model(self, q):
        """A q in the other order from the model's q (unknown joints get ``fill``)."""
        q = self._vec(q, self.model.nq, "q")
        out = np.full(self.nq_other, self.fill)
        out[self._q_idx[self._q_use]] = q[self._q_use]
        for qi, oq in self._cos_sin:
            out[oq], out[oq + 1] = np.cos(q[qi]), np.sin(q[qi])
        return out

    def v_to_model(self, v_other):
        """The model's v (or a, tau) from one in the other order."""
        return self._vec(v_other, self.nv_other, "v")[self._v_idx]

    def v_from_model(self, v):
        """A v (or a, tau) in the other order from the model's (unknown joints get ``fill``)."""
        v = self._vec(v, self.model.nv, "v")
        out = np.full(self.nv_other, self.fill)
        out[self._v_idx] = v
        return out
