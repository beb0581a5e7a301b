"""Frames in every reference: one compiled kinematics pass, then reads of any link or joint
frame (placement, Jacobian, twist, acceleration, J-dot), and the one-shot functions.

References, rows (linear, angular) as every public 6-vector (docs/conventions.md maps them to
Pinocchio's): "local" (the frame's own axes and origin, Pinocchio's LOCAL), "world" (world
axes, the point at the world origin: the spatial twist, WORLD) and "local_world_aligned" (world
axes, the frame's origin, LOCAL_WORLD_ALIGNED). A frame is a link or joint name (``Model.frame``).
"""
import numpy as np

from ..conventions import PUBLIC_ROWS
from ..errors import InputError
from ..kernels import frames as K
from ._inputs import vec, check, prepare, data_for

#: reference names -> kernel codes
REFERENCES = {"local": K.LOCAL, "world": K.WORLD, "local_world_aligned": K.LOCAL_WORLD_ALIGNED}
_ORDER_NAMES = ("q", "q and v", "q, v and a")


def _reference(reference):
    r = REFERENCES.get(reference) if reference.__class__ is str else None
    if r is None:
        raise InputError(f"reference must be one of {list(REFERENCES)}, got {reference!r}")
    return r


def _classical(classical):
    if classical is True or classical is False or classical in (0, 1) and \
            isinstance(classical, (bool, np.bool_, int)):
        return K.CLASSICAL if classical else K.ACCELERATION
    raise InputError(f"classical must be True or False, got {classical!r}")


def _inputs(model, q, v, a, d, who):
    """(q, v, a, order): v and a default to the Data's zeros; order 0, 1 or 2."""
    if a is not None and v is None:
        raise InputError(f"{who}: an acceleration a needs the velocity v")
    q = vec(q, model.nq, "q", model=model)
    order = 0 if v is None else (1 if a is None else 2)
    v = d.zero_v if v is None else vec(v, model.nv, "v")
    a = d.zero_v if a is None else vec(a, model.nv, "a")
    return q, v, a, order


def _frames_memory(model, d):
    """(frame table, scratch pass array) of ``model`` in the Data ``d``, built once per model
    and Data. The table (kernels/frames.py) is never written after; a result keeps its own."""
    t = d.extra.get("frames")
    if t is None or t[0] is not model.frame_offsets:
        tab = np.zeros((len(model.frame_rows) + 1, 16))
        tab[:-1, 0] = model.frame_rows
        tab[:-1, 1:13] = model.frame_offsets[:, :3, :].reshape(-1, 12)
        tab[-1, :6] = PUBLIC_ROWS
        t = d.extra["frames"] = (model.frame_offsets, tab, np.empty((model.nbodies, K.NK)))
    return t


class Kinematics:
    """The result of ``kinematics``: world poses, body twists and accelerations and the world
    Jacobian columns of every body, in arrays of its own (later calls do not change it).
    Every read below takes a frame name and is compiled; none recomputes the tree."""

    __slots__ = ("model", "order", "_kin", "_tab")

    def __init__(self, model, kin, tab, order):
        #: the model, and what the pass had: 0 (q), 1 (q, v), 2 (q, v, a)
        self.model, self.order, self._kin, self._tab = model, order, kin, tab

    def _read(self, frame, what, reference, ncols, need):
        if self.order < need:
            arg = "v" if need == 1 else "a"
            raise InputError(f"this needs {arg}: the pass had {_ORDER_NAMES[self.order]}; "
                             f"call ldr.kinematics(model, q, v{', a' if need == 2 else ''})")
        f = self.model.frame_id(frame)
        res = np.empty((4, 4) if what == K.PLACEMENT else (6, ncols))
        st = K.frame_read(self._kin, self._tab, f, what, reference, res)
        if st:
            check(self.model, st)
        return res

    def placement(self, frame):
        """4x4 pose of ``frame`` in the world."""
        res = np.empty((4, 4))
        st = K.frame_read(self._kin, self._tab, self.model.frame_id(frame), K.PLACEMENT, 0, res)
        if st:
            check(self.model, st)
        return res

    def placements(self):
        """(len(model.frame_names), 4, 4) world poses of every link frame, in
        ``model.frame_names`` order."""
        m = self.model
        out = np.empty((len(m.frame_rows), 4, 4))
        st = K.placements(self._kin, self._tab, out)
        if st:
            check(m, st)
        return out

    def jacobian(self, frame, reference="local"):
        """(6, nv) J with the frame's twist = J v in ``reference``."""
        m = self.model
        res = np.empty((6, m.nv))
        st = K.frame_read(self._kin, self._tab, m.frame_id(frame), K.JACOBIAN,
                          _reference(reference), res)
        if st:
            check(m, st)
        return res

    def velocity(self, frame, reference="local"):
        """(6,) twist of ``frame`` in ``reference`` (needs v)."""
        return self._read(frame, K.VELOCITY, _reference(reference), 1, 1)[:, 0]

    def acceleration(self, frame, reference="local", classical=False):
        """(6,) acceleration of ``frame`` in ``reference`` (needs v and a): the spatial one, the
        derivative of the twist in that reference (Pinocchio's getFrameAcceleration); with
        ``classical`` the linear part gets + w x v of the twist in the same reference
        (getFrameClassicalAcceleration: the frame origin's acceleration in "local" and
        "local_world_aligned")."""
        what = _classical(classical)
        return self._read(frame, what, _reference(reference), 1, 2)[:, 0]

    def jacobian_time_variation(self, frame, reference="local"):
        """(6, nv) dJ/dt of ``jacobian(frame, reference)`` along v (needs v), so that
        J a + dJ/dt v is the derivative of the twist in ``reference``: the spatial acceleration
        in "local" and "world", the classical one (linear part) in "local_world_aligned"
        (Pinocchio's getFrameJacobianTimeVariation)."""
        return self._read(frame, K.JACOBIAN_DOT, _reference(reference), self.model.nv, 1)

    def __repr__(self):
        return f"<Kinematics of {self.model.name!r} from {_ORDER_NAMES[self.order]}>"


def kinematics(model, q, v=None, a=None, data=None):
    """One compiled pass over the tree at (q[, v[, a]]) (Pinocchio's forwardKinematics +
    computeJointJacobians, + computeJointJacobiansTimeVariation with v); a ``Kinematics``
    whose reads give any frame's quantities. Accelerations are kinematic (no gravity)."""
    d = data_for(model, data)
    q, v, a, order = _inputs(model, q, v, a, d, "kinematics")
    kin = np.empty((model.nbodies, K.NK))
    wj = prepare(model, d, q, v) if model.has_general else True
    st = K.kinematics(d.buf, q, v, a, kin, order, wj)
    if st:
        check(model, st, d, q=q, v=v, a=a)
    return Kinematics(model, kin, _frames_memory(model, d)[1], order)


def _one_shot(model, q, v, a, frame, what, reference, data, who):
    f = model.frame_id(frame)
    d = data_for(model, data)
    q, v, a, order = _inputs(model, q, v, a, d, who)
    _, tab, kin = _frames_memory(model, d)
    if what == K.PLACEMENT:
        res = np.empty((4, 4))
    else:
        res = np.empty((6, model.nv if what in (K.JACOBIAN, K.JACOBIAN_DOT) else 1))
    wj = prepare(model, d, q, v) if model.has_general else True
    st = K.frame_quantity(d.buf, q, v, a, kin, tab, f, what, reference, res, order, wj)
    if st:
        check(model, st, d, q=q, v=v, a=a)
    return res


def _at_rest(model, q, frame, what, reference, data):
    """``_one_shot`` for the quantities of q alone (placement, Jacobian)."""
    f = model.frame_id(frame)
    d = data_for(model, data)
    q = vec(q, model.nq, "q", model=model)
    _, tab, kin = _frames_memory(model, d)
    res = np.empty((4, 4) if what == K.PLACEMENT else (6, model.nv))
    wj = prepare(model, d, q, d.zero_v) if model.has_general else True
    st = K.frame_quantity_q(d.buf, q, kin, tab, f, what, reference, res, wj)
    if st:
        check(model, st, d, q=q)
    return res


def frame_jacobian(model, q, frame, reference="local", data=None):
    """(6, nv) Jacobian of ``frame`` in ``reference`` (Pinocchio's computeFrameJacobian)."""
    return _at_rest(model, q, frame, K.JACOBIAN, _reference(reference), data)


def frame_velocity(model, q, v, frame, reference="local", data=None):
    """(6,) twist of ``frame`` in ``reference`` (Pinocchio's getFrameVelocity)."""
    if v is None:
        raise InputError("frame_velocity: v is required")
    return _one_shot(model, q, v, None, frame, K.VELOCITY, _reference(reference), data,
                     "frame_velocity")[:, 0]


def frame_acceleration(model, q, v, a, frame, reference="local", classical=False, data=None):
    """(6,) acceleration of ``frame`` in ``reference``; see ``Kinematics.acceleration``."""
    if v is None or a is None:
        raise InputError(f"frame_acceleration: {'v' if v is None else 'a'} is required")
    return _one_shot(model, q, v, a, frame, _classical(classical), _reference(reference), data,
                     "frame_acceleration")[:, 0]


def frame_jacobian_time_variation(model, q, v, frame, reference="local", data=None):
    """(6, nv) dJ/dt of ``frame`` in ``reference``; see
    ``Kinematics.jacobian_time_variation``."""
    if v is None:
        raise InputError("frame_jacobian_time_variation: v is required")
    return _one_shot(model, q, v, None, frame, K.JACOBIAN_DOT, _reference(reference), data,
                     "frame_jacobian_time_variation")


def frame_pose(model, q, frame, data=None):
    """4x4 world pose of ``frame`` (Pinocchio's updateFramePlacement)."""
    return _at_rest(model, q, frame, K.PLACEMENT, 0, data)


def frame_placements(model, q, data=None):
    """(len(model.frame_names), 4, 4) world poses of every link frame, in
    ``model.frame_names`` order (Pinocchio's framesForwardKinematics)."""
    d = data_for(model, data)
    q = vec(q, model.nq, "q", model=model)
    return _placements(model, d, q)


def _placements(model, d, q):
    _, tab, kin = _frames_memory(model, d)
    out = np.empty((len(model.frame_rows), 4, 4))
    wj = prepare(model, d, q, d.zero_v) if model.has_general else True
    st = K.all_placements(d.buf, q, kin, tab, out, wj)
    if st:
        check(model, st, d, q=q)
    return out
