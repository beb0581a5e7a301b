"""Frames in every reference: one compiled kinematics pass, then reads of any link or joint
frame (placement, Jacobian, twist, acceleration, J-dot), and the one-shot functions.

References, rows (linear, angular) as every public 6-vector (docs/conventions.md maps them to
Pinocchio's): "local" (the frame's own axes and origin, Pinocchio's LOCAL), "world" (world
axes, the point at the world origin: the spatial twist, WORLD) and "local_world_aligned" (world
axes, the frame's origin, LOCAL_WORLD_ALIGNED). A frame is a link or joint name (``Model.frame``).
"""
import threading

import numpy as np

from ..conventions import PUBLIC_ROWS
from ..errors import InputError
from ..kernels import frames as K
from ._inputs import vec, check, prepare, data_for

#: reference names -> kernel codes
REFERENCES = {"local": K.LOCAL, "world": K.WORLD, "local_world_aligned": K.LOCAL_WORLD_ALIGNED}
_ORDER_NAMES = ("q", "q and v", "q, v and a")
_ND = np.ndarray
# the low bits of an entry's code (kernels/frames.code_of) by reference name, per quantity
_CODES = {w: {n: K.code_of(0, w, r) for n, r in REFERENCES.items()}
          for w in (K.JACOBIAN, K.JACOBIAN_DOT, K.VELOCITY, K.ACCELERATION, K.CLASSICAL)}
_JAC, _JDOT, _VEL, _ACC = (_CODES[K.JACOBIAN], _CODES[K.JACOBIAN_DOT], _CODES[K.VELOCITY],
                           _CODES[K.ACCELERATION])
_CLS = _CODES[K.CLASSICAL]
_PLACE = K.code_of(0, K.PLACEMENT, 0)
_read = K.read


class _Ready:
    """Which groups of entries of kernels/frames.py (``_GROUPS``) are compiled and closed to
    other argument types: a public call tries its entry first once its group is."""
    kinematics = shot_q = shot_qv = shot_qva = placements_q = False


_ready = _Ready()
_lock = threading.Lock()
_ENTRIES = {fn.py_func.__name__: (fn, sigs) for fn, sigs in K.ENTRIES}
#: the entries of each group (a first call loads only its own from numba's cache)
_GROUPS = {"kinematics": ("pass_q", "pass_qv", "pass_qva", "read", "read_all"),
           "shot_q": ("shot_q",), "shot_qv": ("shot_qv",), "shot_qva": ("shot_qva",),
           "placements_q": ("placements_q",)}


def _compile_entries(group):
    """Compile (or load from numba's cache) the entries of ``group`` for their signatures, then
    close their dispatch (a TypeError for any other type), so that a call takes numba's fast
    path."""
    if getattr(_ready, group):
        return
    with _lock:
        if not getattr(_ready, group):
            for name in _GROUPS[group]:
                fn, sigs = _ENTRIES[name]
                for sig in sigs:
                    fn.compile(sig)
                fn.disable_compile()
            setattr(_ready, group, True)


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


class _Memory:
    """What the frame calls keep per model and Data: ``mem`` (the frame table and the
    one-shots' scratch pass, kernels/frames.py), frame name -> code of the frame (names
    resolved by ``Model.frame_id`` once, then from the dict) and the result shapes. ``mem``'s
    table is never written after it is built; a new model on the Data gets a new ``_Memory``."""

    __slots__ = ("model", "mem", "ids", "kshape", "jshape", "nf")

    def __init__(self, model):
        nf, nb = len(model.frame_rows), model.nbodies
        mem = np.zeros(K.MEM_HEAD + (nf + 1) * 16 + nb * K.NK)
        mem[0], mem[1] = nf, nb
        tab = mem[K.MEM_HEAD:K.MEM_HEAD + (nf + 1) * 16].reshape(nf + 1, 16)
        tab[:-1, 0] = model.frame_rows
        tab[:-1, 1:13] = model.frame_offsets[:, :3, :].reshape(-1, 12)
        tab[-1, :6] = PUBLIC_ROWS
        self.model, self.mem, self.nf = model, mem, nf
        self.ids = {n: K.code_of(k, 0, 0) for k, n in enumerate(model.frame_names)}
        self.kshape, self.jshape = (nb, K.NK), (6, model.nv)

    def tab(self):
        """(nf + 1, 16) the frame table, a view of ``mem``."""
        n = K.MEM_HEAD + (self.nf + 1) * 16
        return self.mem[K.MEM_HEAD:n].reshape(self.nf + 1, 16)

    def scratch(self):
        """(nb, NK) the one-shots' pass array, a view of ``mem``."""
        return self.mem[K.MEM_HEAD + (self.nf + 1) * 16:].reshape(self.kshape)

    def code(self, frame):
        """The code of ``frame`` (InputError naming the nearest frames if it is none)."""
        try:
            return self.ids[frame]
        except (KeyError, TypeError):
            c = K.code_of(self.model.frame_id(frame), 0, 0)
            self.ids[frame] = c
            return c


def _memory(model, d):
    m = d.extra.get("frames")
    if m is None or m.model is not model:
        m = d.extra["frames"] = _Memory(model)
    return m


class Kinematics:
    """The result of ``kinematics``: world poses, body twists and accelerations and the world
    Jacobian columns of every body, in arrays of its own (later calls do not change it).
    Every read below takes a frame name and is compiled; none recomputes the tree."""

    __slots__ = ("model", "order", "_kin", "_m")

    def __init__(self, model, kin, m, order):
        #: the model, and what the pass had: 0 (q), 1 (q, v), 2 (q, v, a)
        self.model, self.order, self._kin, self._m = model, order, kin, m

    def _need(self, need):
        if self.order < need:
            arg = "v" if need == 1 else "a"
            raise InputError(f"this needs {arg}: the pass had {_ORDER_NAMES[self.order]}; "
                             f"call ldr.kinematics(model, q, v{', a' if need == 2 else ''})")

    def _code(self, frame, codes, reference):
        """The slow path of a read's code: names resolved, or the InputError."""
        f = self._m.code(frame)
        _reference(reference)
        return f + codes[reference]

    def _get(self, res, code):
        """The checked read (a status becomes the InputError)."""
        check(self.model, K.read(self._kin, self._m.mem, res, code))
        return res

    def placement(self, frame):
        """4x4 pose of ``frame`` in the world."""
        m = self._m
        try:
            code = m.ids[frame] + _PLACE
        except (KeyError, TypeError):
            code = m.code(frame) + _PLACE
        res = np.empty((4, 4))
        return res if _read(self._kin, m.mem, res, code) == 0 else self._get(res, code)

    def placements(self):
        """(len(model.frame_names), 4, 4) world poses of every link frame, in
        ``model.frame_names`` order."""
        out = np.empty((self._m.nf, 4, 4))
        st = K.read_all(self._kin, self._m.mem, out)
        if st:
            check(self.model, st)
        return out

    def jacobian(self, frame, reference="local"):
        """(6, nv) J with the frame's twist = J v in ``reference``."""
        m = self._m
        try:
            code = m.ids[frame] + _JAC[reference]
        except (KeyError, TypeError):
            code = self._code(frame, _JAC, reference)
        res = np.empty(m.jshape)
        return res if _read(self._kin, m.mem, res, code) == 0 else self._get(res, code)

    def velocity(self, frame, reference="local"):
        """(6,) twist of ``frame`` in ``reference`` (needs v)."""
        if self.order < 1:
            self._need(1)
        m = self._m
        try:
            code = m.ids[frame] + _VEL[reference]
        except (KeyError, TypeError):
            code = self._code(frame, _VEL, reference)
        res = np.empty(6)
        return res if _read(self._kin, m.mem, res, code) == 0 else self._get(res, code)

    def acceleration(self, frame, reference="local", classical=False):
        """(6,) acceleration of ``frame`` in ``reference`` (needs v and a): the spatial one, the
        derivative of the twist in that reference (Pinocchio's getFrameAcceleration); with
        ``classical`` the linear part gets + w x v of the twist in the same reference
        (getFrameClassicalAcceleration: the frame origin's acceleration in "local" and
        "local_world_aligned")."""
        if self.order < 2:
            self._need(2)
        codes = _CODES[_classical(classical)]
        m = self._m
        try:
            code = m.ids[frame] + codes[reference]
        except (KeyError, TypeError):
            code = self._code(frame, codes, reference)
        res = np.empty(6)
        return res if _read(self._kin, m.mem, res, code) == 0 else self._get(res, code)

    def jacobian_time_variation(self, frame, reference="local"):
        """(6, nv) dJ/dt of ``jacobian(frame, reference)`` along v (needs v), so that
        J a + dJ/dt v is the derivative of the twist in ``reference``: the spatial acceleration
        in "local" and "world", the classical one (linear part) in "local_world_aligned"
        (Pinocchio's getFrameJacobianTimeVariation)."""
        if self.order < 1:
            self._need(1)
        m = self._m
        try:
            code = m.ids[frame] + _JDOT[reference]
        except (KeyError, TypeError):
            code = self._code(frame, _JDOT, reference)
        res = np.empty(m.jshape)
        return res if _read(self._kin, m.mem, res, code) == 0 else self._get(res, code)

    def __repr__(self):
        return f"<Kinematics of {self.model.name!r} from {_ORDER_NAMES[self.order]}>"


# The public calls first try the compiled entries with the arguments as given (float64
# vectors, a known frame and reference): a few dict reads and one dispatch. Anything else, and
# a bad status, takes the checked path, which converts, compiles and names what is at fault.

def kinematics(model, q, v=None, a=None, data=None):
    """One compiled pass over the tree at (q[, v[, a]]) (Pinocchio's forwardKinematics +
    computeJointJacobians, + computeJointJacobiansTimeVariation with v); a ``Kinematics``
    whose reads give any frame's quantities. Accelerations are kinematic (no gravity)."""
    if q.__class__ is _ND and _ready.kinematics and not model.has_general:
        d = model.default_data() if data is None else data_for(model, data)
        m = d.extra.get("frames")
        if m is not None and m.model is model:
            kin = np.empty(m.kshape)
            try:
                if v is None:
                    if a is None and K.pass_q(d.buf, q, kin) == 0:
                        return Kinematics(model, kin, m, 0)
                elif a is None:
                    if K.pass_qv(d.buf, q, v, kin) == 0:
                        return Kinematics(model, kin, m, 1)
                elif K.pass_qva(d.buf, q, v, a, kin) == 0:
                    return Kinematics(model, kin, m, 2)
            except TypeError:
                pass
    _compile_entries("kinematics")
    d = data_for(model, data)
    q, v, a, order = _inputs(model, q, v, a, d, "kinematics")
    m = _memory(model, d)
    kin = np.empty(m.kshape)
    wj = prepare(model, d, q, v) if model.has_general else True
    st = K.kinematics(d.buf, q, v, a, kin, order, wj)
    if st:
        check(model, st, d, q=q, v=v, a=a)
    return Kinematics(model, kin, m, order)


def _checked_shot(model, q, v, a, frame, what, reference, data, who):
    """The checked path of the one-shot calls: the pass (to the order the arguments give) on
    the frame's chain only, and one read."""
    _compile_entries("shot_q" if v is None else "shot_qv" if a is None else "shot_qva")
    d = data_for(model, data)
    m = _memory(model, d)
    f = m.code(frame) >> 5
    ref = 0 if what == K.PLACEMENT else _reference(reference)
    q, v, a, order = _inputs(model, q, v, a, d, who)
    if what == K.PLACEMENT:
        res = np.empty((4, 4))
    else:
        res = np.empty((6, model.nv) if what in (K.JACOBIAN, K.JACOBIAN_DOT) else 6)
    wj = prepare(model, d, q, v) if model.has_general else True
    st = K.frame_quantity(d.buf, q, v, a, m.scratch(), m.tab(), f, what, ref,
                          res.reshape(6, 1) if res.ndim == 1 else res, order, wj)
    if st:
        check(model, st, d, q=q, v=v, a=a)
    return res


def frame_jacobian(model, q, frame, reference="local", data=None):
    """(6, nv) Jacobian of ``frame`` in ``reference`` (Pinocchio's computeFrameJacobian)."""
    if q.__class__ is _ND and _ready.shot_q and not model.has_general:
        d = model.default_data() if data is None else data_for(model, data)
        m = d.extra.get("frames")
        try:
            res = np.empty(m.jshape)
            if m.model is model and K.shot_q(d.buf, q, m.mem, res,
                                             m.ids[frame] + _JAC[reference]) == 0:
                return res
        except (KeyError, TypeError, AttributeError):
            pass
    return _checked_shot(model, q, None, None, frame, K.JACOBIAN, reference, data,
                         "frame_jacobian")


def frame_pose(model, q, frame, data=None):
    """4x4 world pose of ``frame`` (Pinocchio's updateFramePlacement)."""
    if q.__class__ is _ND and _ready.shot_q and not model.has_general:
        d = model.default_data() if data is None else data_for(model, data)
        m = d.extra.get("frames")
        try:
            res = np.empty((4, 4))
            if m.model is model and K.shot_q(d.buf, q, m.mem, res, m.ids[frame] + _PLACE) == 0:
                return res
        except (KeyError, TypeError, AttributeError):
            pass
    return _checked_shot(model, q, None, None, frame, K.PLACEMENT, 0, data, "frame_pose")


def frame_velocity(model, q, v, frame, reference="local", data=None):
    """(6,) twist of ``frame`` in ``reference`` (Pinocchio's getFrameVelocity)."""
    if q.__class__ is _ND and _ready.shot_qv and not model.has_general:
        d = model.default_data() if data is None else data_for(model, data)
        m = d.extra.get("frames")
        try:
            res = np.empty(6)
            if m.model is model and K.shot_qv(d.buf, q, v, m.mem, res,
                                              m.ids[frame] + _VEL[reference]) == 0:
                return res
        except (KeyError, TypeError, AttributeError):
            pass
    if v is None:
        raise InputError("frame_velocity: v is required")
    return _checked_shot(model, q, v, None, frame, K.VELOCITY, reference, data,
                         "frame_velocity")


def frame_acceleration(model, q, v, a, frame, reference="local", classical=False, data=None):
    """(6,) acceleration of ``frame`` in ``reference``; see ``Kinematics.acceleration``."""
    if q.__class__ is _ND and _ready.shot_qva and not model.has_general:
        d = model.default_data() if data is None else data_for(model, data)
        m = d.extra.get("frames")
        try:
            res = np.empty(6)
            codes = _CLS if classical is True else _ACC if classical is False else {}
            if m.model is model and K.shot_qva(d.buf, q, v, a, m.mem, res,
                                               m.ids[frame] + codes[reference]) == 0:
                return res
        except (KeyError, TypeError, AttributeError):
            pass
    if v is None or a is None:
        raise InputError(f"frame_acceleration: {'v' if v is None else 'a'} is required")
    return _checked_shot(model, q, v, a, frame, _classical(classical), reference, data,
                         "frame_acceleration")


def frame_jacobian_time_variation(model, q, v, frame, reference="local", data=None):
    """(6, nv) dJ/dt of ``frame`` in ``reference``; see
    ``Kinematics.jacobian_time_variation``."""
    if q.__class__ is _ND and _ready.shot_qv and not model.has_general:
        d = model.default_data() if data is None else data_for(model, data)
        m = d.extra.get("frames")
        try:
            res = np.empty(m.jshape)
            if m.model is model and K.shot_qv(d.buf, q, v, m.mem, res,
                                              m.ids[frame] + _JDOT[reference]) == 0:
                return res
        except (KeyError, TypeError, AttributeError):
            pass
    if v is None:
        raise InputError("frame_jacobian_time_variation: v is required")
    return _checked_shot(model, q, v, None, frame, K.JACOBIAN_DOT, reference, data,
                         "frame_jacobian_time_variation")


def frame_placements(model, q, data=None):
    """(len(model.frame_names), 4, 4) world poses of every link frame, in
    ``model.frame_names`` order (Pinocchio's framesForwardKinematics)."""
    if q.__class__ is _ND and _ready.placements_q and not model.has_general:
        d = model.default_data() if data is None else data_for(model, data)
        m = d.extra.get("frames")
        try:
            out = np.empty((m.nf, 4, 4))
            if m.model is model and K.placements_q(d.buf, q, m.mem, out) == 0:
                return out
        except (TypeError, AttributeError):
            pass
    _compile_entries("placements_q")
    d = data_for(model, data)
    q = vec(q, model.nq, "q", model=model)
    m = _memory(model, d)
    out = np.empty((m.nf, 4, 4))
    wj = prepare(model, d, q, d.zero_v) if model.has_general else True
    st = K.all_placements(d.buf, q, m.scratch(), m.tab(), out, wj)
    if st:
        check(model, st, d, q=q)
    return out
