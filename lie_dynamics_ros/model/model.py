"""The immutable multibody model, stored as flat arrays for the compiled kernels."""
import difflib
import threading
from dataclasses import dataclass, replace
from types import MappingProxyType

import numpy as np

from ..kernels import joints as J
from . import joint_types as JT
from ..conventions import matrix_to_internal, matrix_to_public
from ..errors import InputError
from ..kernels import layout as L
from .bounds import MAX_ARMATURE, MAX_DAMPING, MAX_FRICTION, MAX_GRAVITY
from .data import Data
from .loops import loop_tables_for


@dataclass(frozen=True)
class JointInfo:
    """One kernel joint (a moving body). Mimic joints share their master's q/v indices."""
    name: str
    row: int                     # body row it moves (1..njoints; row 0 is the universe)
    joint: object                # the joint type (ldr.Revolute, ...)
    q_index: int
    v_index: int
    nq: int
    nv: int
    mimic: tuple = None          # (master, multiplier, offset)
    parent_row: int = 0
    origin: np.ndarray = None    # joint origin in the parent body frame (read-only)
    limits: tuple = (-np.inf, np.inf, np.inf, np.inf)   # lower, upper, effort, velocity
    child_link: str = ""
    dynamics: tuple = (0.0, 0.0)  # URDF <dynamics>: damping (N m s/rad), friction (N m) per DOF


def _frozen_array(a, dtype=None):
    a = np.array(a, dtype=dtype)
    a.flags.writeable = False
    return a


class DerivedItems:
    """What ``Model.derived`` made for one model, as attributes (set once each, under the
    model's lock; never by a caller)."""

    def __setattr__(self, name, value):
        raise AttributeError(f"model.derived_items.{name} is made by model.derived, not set")

    def keep(self, key, value):
        """Store ``value`` as attribute ``key`` (``Model.derived``, holding the lock)."""
        self.__dict__[key] = value


class Model:
    """A rigid multibody tree, frozen, with optional loop closures. Build it with
    ``ldr.load_urdf``, ``ldr.load_sdf`` or ``ModelBuilder``.

    The model is a description only (topology, joint placements, axes, inertias, limits,
    gravity, loops); the algorithms' work memory is a ``Data`` (``model.create_data()``), so
    one model can be shared by any number of threads. Nothing on it can be set: a different
    gravity or other closures make a new model (``with_gravity``, ``with_loops``). The public
    read-only API is listed in docs/api.md ("The Model").
    """

    def __init__(self, name, kernel_joints, inertia, frames, nq, nv, total_mass,
                 gravity=(0.0, 0.0, -9.81), loops=(), armature=None, fixed_joints=None):
        self.name = name
        self.joints = tuple(kernel_joints)
        self.frames = MappingProxyType(
            {ln: (int(row), _frozen_array(T, float)) for ln, (row, T) in dict(frames).items()})
        #: {joint name: child link} for every joint, moving, mimic and fixed: a joint's frame is
        #: its child link's frame (the joint frame at its origin, Pinocchio's JOINT frame)
        self.joint_frames = MappingProxyType(
            {**{j.name: j.child_link for j in self.joints}, **dict(fixed_joints or {})})
        self.nq, self.nv = int(nq), int(nv)
        self.total_mass = total_mass
        actuated = [j for j in self.joints if j.mimic is None]
        self.joint_names = [j.name for j in actuated]
        self.joint_nq = [j.nq for j in actuated]
        self.joint_nv = [j.nv for j in actuated]
        self.joint_q_index = [j.q_index for j in actuated]
        self.joint_v_index = [j.v_index for j in actuated]
        self.joint_kinds = [J.NAMES[j.joint.kind] for j in actuated]
        self.body_names = [j.child_link for j in self.joints]
        self.frame_names = list(self.frames)
        self.has_mimic = len(actuated) != len(self.joints)
        self.general_joints = tuple(j for j in self.joints if isinstance(j.joint, JT.General))
        self.has_general = bool(self.general_joints)
        #: forward dynamics by the tree recursion (ABA) alone: no General or mimic joint
        self.tree_aba = not (self.has_general or self.has_mimic)
        self.mimic_joints = {j.name: j.mimic for j in self.joints if j.mimic is not None}
        self._limits(actuated)
        self._joint_dynamics(armature)
        self._index_maps()
        self._inertia = _frozen_array(inertia, float)
        self._compile(_gravity_vector(gravity))
        self._tls = threading.local()
        self.derived_items, self._derived_lock = DerivedItems(), threading.RLock()
        self.loops, self.nc, self.loop_tables = (), 0, None
        if loops:
            self.loop_tables = loop_tables_for(self, loops)
            self.loops, self.nc = self.loop_tables.loops, self.loop_tables.nc
        self._frozen = True

    def __setattr__(self, name, value):
        if self.__dict__.get("_frozen"):
            raise AttributeError(f"a Model is frozen (it is shared by threads): model.{name} "
                                 "cannot be set; make a new one with model.with_gravity(g) or "
                                 "model.with_loops(loops)")
        super().__setattr__(name, value)

    # pickling (a Dask worker in another process gets the model): the per-thread work memory
    # is not sent, and the arrays come back read-only
    def __getstate__(self):
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("_tls", "derived_items", "_derived_lock")}
        state["frames"], state["joint_frames"] = dict(self.frames), dict(self.joint_frames)
        return state

    def __setstate__(self, state):
        for k, v in state.items():
            if isinstance(v, np.ndarray):
                v.flags.writeable = False
            object.__setattr__(self, k, v)
        for _, T in state["frames"].values():
            T.flags.writeable = False
        object.__setattr__(self, "frames", MappingProxyType(state["frames"]))
        object.__setattr__(self, "joint_frames", MappingProxyType(state["joint_frames"]))
        object.__setattr__(self, "_tls", threading.local())
        object.__setattr__(self, "derived_items", DerivedItems())
        object.__setattr__(self, "_derived_lock", threading.RLock())

    def _limits(self, actuated):
        nv = self.nv
        eff, vel, lo, hi = (np.full(nv, np.inf), np.full(nv, np.inf), np.full(nv, -np.inf),
                            np.full(nv, np.inf))
        for j in actuated:
            s = slice(j.v_index, j.v_index + j.nv)
            eff[s], vel[s] = j.limits[2], j.limits[3]
            if j.nv == 1:
                lo[s], hi[s] = j.limits[0], j.limits[1]
        self.effort_limits, self.velocity_limits = _frozen_array(eff), _frozen_array(vel)
        self.lower_limits, self.upper_limits = _frozen_array(lo), _frozen_array(hi)

    def _joint_dynamics(self, armature):
        """(nv,) joint_damping, joint_friction (URDF <dynamics>; a mimic joint's act on its
        master's DOF, scaled by its multiplier as the virtual work says: m^2 d and |m| f) and
        armature (reflected rotor inertia, added to M's diagonal)."""
        d, f = np.zeros(self.nv), np.zeros(self.nv)
        for j in self.joints:
            s = slice(j.v_index, j.v_index + j.nv)
            m = 1.0 if j.mimic is None else j.mimic[1]
            d[s] += m * m * j.dynamics[0]
            f[s] += abs(m) * j.dynamics[1]
        self.joint_damping, self.joint_friction = _frozen_array(d), _frozen_array(f)
        self.armature = _frozen_array(
            np.zeros(self.nv) if armature is None
            else _per_dof(self, armature, "armature", MAX_ARMATURE, "kg m^2"))

    def _index_maps(self):
        """Index arrays that keep Python loops over joints out of the per-call paths."""
        self.nbodies = len(self.joints) + 1
        self._frame_ids = {n: k for k, n in enumerate(self.frames)}
        #: body row and 4x4 offset of every link frame, in frame_names order
        self.frame_rows = _frozen_array([self.frames[n][0] for n in self.frames], np.int64)
        self.frame_offsets = _frozen_array(
            np.array([self.frames[n][1] for n in self.frames]).reshape(-1, 4, 4), float)
        self.parents = _frozen_array([-1] + [j.parent_row for j in self.joints], np.int64)
        self.body_joint_names = ("universe",) + tuple(j.name for j in self.joints)
        self.dof_first = _frozen_array(
            np.concatenate([np.full(n, i, dtype=np.int64)
                            for i, n in zip(self.joint_v_index, self.joint_nv)]
                           or [np.zeros(0, dtype=np.int64)]))
        # continuous joints: difference() wraps their angle
        self.continuous_v = _frozen_array(
            [j.v_index for j in self.joints if j.mimic is None and j.joint.kind == J.REVOLUTE
             and not (np.isfinite(j.limits[0]) or np.isfinite(j.limits[1]))], np.int64)
        qs, vs = [], []
        for j in self.joints:
            if j.mimic is None and j.joint.kind not in (J.FREE, J.SPHERICAL):
                qs += range(j.q_index, j.q_index + j.nq)
                vs += range(j.v_index, j.v_index + j.nv)
        self.vector_q_index = _frozen_array(qs, np.int64)
        self.vector_v_index = _frozen_array(vs, np.int64)

    # -- kernel arrays -------------------------------------------------------------------
    def _compile(self, gravity):
        nj = len(self.joints)
        mi = np.zeros((nj + 1, L.NI), dtype=np.int64)
        mc = np.zeros((nj + 1, L.NMC))
        mi[0, L.P] = -1
        mc[0, L.G:L.G + 3] = gravity
        for j in self.joints:
            r = j.row
            mi[r, L.P], mi[r, L.K] = j.parent_row, j.joint.kind
            mi[r, L.QI], mi[r, L.VI], mi[r, L.NQ], mi[r, L.NV] = j.q_index, j.v_index, j.nq, j.nv
            mi[r, L.MIMIC] = j.mimic is not None
            mc[r, L.R0:L.R0 + 9] = j.origin[:3, :3].ravel()
            mc[r, L.P0:L.P0 + 3] = j.origin[:3, 3]
            ax, ax2 = JT.joint_axes(j.joint, j.name)
            mc[r, L.AX:L.AX + 3], mc[r, L.AX2:L.AX2 + 3] = ax, ax2
            mc[r, L.MULT], mc[r, L.OFF] = (j.mimic[1], j.mimic[2]) if j.mimic else (1.0, 0.0)
            if j.mimic is None:     # a mimic row shares its master's DOF: counted once
                mc[r, L.ARM:L.ARM + j.nv] = self.armature[j.v_index:j.v_index + j.nv]
        mi.flags.writeable = mc.flags.writeable = False
        #: (nj + 1, NI) int64 topology, (nj + 1, NMC) constants, (nj + 1, 6, 6) inertias
        self.mi, self.mc, self.mI = mi, mc, self._inertia

    def derived(self, key, build):
        """``build(model)`` made once per model and kept (thread-safe): kernel arrays that an
        algorithm derives from the frozen model, such as the SoA plan of ``batch_soa.py``.
        ``build`` should return read-only arrays, since every thread shares them; it may ask
        for another derived item (the lock is re-entrant). Once made, the item is also the
        attribute ``model.derived_items.<key>``: one attribute read for the hot paths of
        algorithms/dynamics.py, which catch the AttributeError of an item not made yet."""
        items = self.derived_items
        try:
            return getattr(items, key)
        except AttributeError:
            pass
        with self._derived_lock:
            if key not in items.__dict__:
                items.keep(key, build(self))
            return getattr(items, key)

    def create_data(self):
        """A new ``Data``: the work buffers of every algorithm, for one thread at a time."""
        return Data(self)

    def default_data(self):
        """The calling thread's Data of this model: what the public functions use when called
        without ``data=``. Per thread: each thread gets its own, created on first use, and the
        same one on every later call, so the next algorithm call on this thread overwrites it."""
        try:
            return self._tls.data
        except AttributeError:
            d = self._tls.data = Data(self)
            return d

    def _rebuilt(self, gravity, loops, joints=None, armature=None):
        return Model(self.name, self.joints if joints is None else joints, self._inertia,
                     self.frames, self.nq, self.nv, self.total_mass, gravity=gravity,
                     loops=loops, armature=self.armature if armature is None else armature,
                     fixed_joints=self._fixed_joints())

    def _fixed_joints(self):
        moving = {j.name for j in self.joints}
        return {n: ln for n, ln in self.joint_frames.items() if n not in moving}

    def with_joint_dynamics(self, damping=None, friction=None, armature=None):
        """A model with these joint terms instead of its own (None keeps them): viscous
        ``damping`` (N m s/rad), Coulomb ``friction`` (N m), ``armature`` (reflected rotor
        inertia, kg m^2). Each is a number for every DOF, an (nv,) array, or a dict
        {joint name: value} (other joints keep theirs). Mimic joints keep their URDF terms."""
        joints = list(self.joints)
        for k, (what, values, bound, unit) in enumerate(
                (("damping", damping, MAX_DAMPING, "N m s/rad"),
                 ("friction", friction, MAX_FRICTION, "N m"))):
            if values is None:
                continue
            current = self.joint_damping if k == 0 else self.joint_friction
            per_dof = _per_dof(self, values, what, bound, unit, current)
            for i, j in enumerate(joints):
                if j.mimic is None:
                    vals = np.unique(per_dof[j.v_index:j.v_index + j.nv])
                    if vals.size > 1:
                        raise InputError(f"joint {j.name!r}: one {what} value per joint, got "
                                         f"{vals.tolist()} for its {j.nv} DOF")
                    dyn = list(j.dynamics)
                    dyn[k] = float(vals[0]) if vals.size else 0.0
                    joints[i] = replace(j, dynamics=tuple(dyn))
        arm = None if armature is None else _per_dof(self, armature, "armature", MAX_ARMATURE,
                                                     "kg m^2", self.armature)
        return self._rebuilt(self.gravity, self.loops, joints, arm)

    def with_inertial_parameters(self, theta):
        """A model with these body inertias: ``theta`` (10 * njoints,) as
        ``ldr.inertial_parameters`` (per body m, m c, I about the body origin, Pinocchio's
        order). Each body must be physical: its pseudo-inertia [[tr(I)/2 1 - I, m c], [m c^T,
        m]] positive semidefinite (Wensing, Kim & Slotine 2017). InputError naming the
        body otherwise. Everything else (joints, friction, armature, loops) is kept."""
        try:
            th = np.asarray(theta, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise InputError(f"theta must be {10 * self.njoints} numbers, got {theta!r}") from None
        if th.size != 10 * self.njoints or not np.all(np.isfinite(th)):
            raise InputError(f"theta must be {10 * self.njoints} finite numbers (10 per body in "
                             f"model.body_names), got {th.size}"
                             + ("" if np.all(np.isfinite(th)) else " with NaN/Inf"))
        inertia = np.array(self._inertia)
        for k, body in enumerate(self.body_names):
            m, h = th[10 * k], th[10 * k + 1:10 * k + 4]
            xx, xy, yy, xz, yz, zz = th[10 * k + 4:10 * k + 10]
            Ibar = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
            P = np.zeros((4, 4))
            P[:3, :3] = 0.5 * np.trace(Ibar) * np.eye(3) - Ibar
            P[:3, 3] = P[3, :3] = h
            P[3, 3] = m
            scale = max(abs(m), np.abs(Ibar).max(), 1e-300)
            if np.linalg.eigvalsh(P).min() < -1e-9 * scale:
                raise InputError(f"body {body!r}: inertial parameters {th[10 * k:10 * k + 10]} "
                                 "are not physical (pseudo-inertia not positive semidefinite)")
            I = np.zeros((6, 6))                       # public (linear, angular) order
            I[:3, :3], I[3:, 3:] = m * np.eye(3), Ibar
            I[3:, :3] = [[0.0, -h[2], h[1]], [h[2], 0.0, -h[0]], [-h[1], h[0], 0.0]]
            I[:3, 3:] = I[3:, :3].T
            inertia[k + 1] = matrix_to_internal(I)
        total = self.total_mass + float(th[0::10].sum() - self._inertia[1:, 5, 5].sum())
        return Model(self.name, self.joints, inertia, self.frames, self.nq, self.nv, total,
                     gravity=self.gravity, loops=self.loops, armature=self.armature,
                     fixed_joints=self._fixed_joints())

    def with_gravity(self, g):
        """A model with the same description (loops included) and gravity ``g`` (3,), in m/s^2,
        world frame."""
        return self._rebuilt(g, self.loops)

    def with_loops(self, loops):
        """A model with the same tree and these loop closures (``ldr.LoopClosure``) instead of
        its own; the tree algorithms ignore them, the constrained ones (docs/loops.md) use them."""
        return self._rebuilt(self.gravity, loops)

    @property
    def gravity(self):
        """(3,) gravity in the world frame, m/s^2. Frozen: ``model.with_gravity(g)``."""
        return self.mc[0, L.G:L.G + 3].copy()

    @property
    def njoints(self):
        """Number of moving bodies (kernel joints, mimic joints included)."""
        return len(self.joints)

    @property
    def inertias(self):
        """(njoints, 6, 6) spatial inertias of the moving bodies in their body frames, acting on
        (linear, angular) twists as ``lie.se3.spatial_inertia``."""
        return _frozen_array(matrix_to_public(self._inertia[1:]))

    def joint(self, name):
        """The ``JointInfo`` of a moving joint (mimic joints included)."""
        for j in self.joints:
            if j.name == name:
                return j
        raise InputError(f"unknown joint {name!r}; known: {self.joint_names}")

    def frame(self, name):
        """(body row, 4x4 pose of the frame in that body's frame); row 0 is the world.

        ``name`` is a link name, or a joint name (moving, mimic or fixed) for the joint's frame,
        which is its child link's frame. A link wins when a link and a joint share a name;
        ``"joint:NAME"`` always addresses the joint."""
        try:
            return self.frames[name]
        except KeyError:
            return self.frames[self._joint_link(name)]
        except TypeError:
            raise InputError(f"a frame is a link or joint name (str), got {name!r}") from None

    def frame_id(self, name):
        """Index of the frame ``name`` (the rule of ``frame``) in ``frame_names``."""
        k = self._frame_ids.get(name) if name.__class__ is str else None
        if k is None:
            if not isinstance(name, str):
                raise InputError(f"a frame is a link or joint name (str), got {name!r}")
            k = self._frame_ids[self._joint_link(name)]
        return k

    def _joint_link(self, name):
        if not isinstance(name, str):
            raise InputError(f"a frame is a link or joint name (str), got {name!r}")
        joint = name[6:] if name.startswith("joint:") else name
        link = self.joint_frames.get(joint)
        if link is None:
            raise InputError(self._unknown_frame(name)) from None
        return link

    def _unknown_frame(self, name):
        names = list(self.frames) + [n for n in self.joint_frames if n not in self.frames]
        near = difflib.get_close_matches(str(name), names, n=5, cutoff=0.5)
        hint = f"nearest: {near}" if near else f"links: {self.frame_names[:20]}"
        return (f"unknown frame {name!r} in model {self.name!r}; {hint}. A frame is a link "
                "name or a joint name (the joint's frame, its child link's); 'joint:NAME' "
                "addresses a joint whose name is also a link's")

    def describe(self):
        """The model tree as text: bodies, joints, masses, nq/nv."""
        out = [f"robot {self.name!r}: nq={self.nq} nv={self.nv} bodies={self.njoints} "
               f"total mass={self.total_mass:.4f} kg"]
        depth = {0: 0}
        for j in self.joints:
            depth[j.row] = depth[j.parent_row] + 1
            m = self._inertia[j.row][5, 5]
            tag = f" mimics {j.mimic[0]} (x{j.mimic[1]:g}{j.mimic[2]:+g})" if j.mimic else \
                f" q[{j.q_index}:{j.q_index + j.nq}] v[{j.v_index}:{j.v_index + j.nv}]"
            out.append("  " * depth[j.row] + f"- {j.child_link} <- {j.name} "
                       f"({J.NAMES[j.joint.kind]}){tag}, body mass {m:.4f} kg")
        return "\n".join(out)

    def __repr__(self):
        return f"<Model {self.name!r} nq={self.nq} nv={self.nv} joints={self.joint_names}>"


def _per_dof(model, values, what, bound, unit, current=None):
    """(nv,) floats in [0, bound] from a number, an (nv,) sequence or {joint name: value}
    (the other joints keep ``current``); InputError naming the joint otherwise."""
    nv = model.nv
    if isinstance(values, dict):
        out = np.zeros(nv) if current is None else np.array(current, dtype=float)
        for name, x in values.items():
            if name not in model.joint_names:
                raise InputError(f"{what}: unknown joint {name!r}; known: {model.joint_names}")
            i = model.joint_names.index(name)
            vi, n = model.joint_v_index[i], model.joint_nv[i]
            out[vi:vi + n] = _bounded(x, f"{what} of joint {name!r}", bound, unit)
        return out
    try:
        arr = np.broadcast_to(np.asarray(values, dtype=float), (nv,)).copy()
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a number, {nv} numbers or {{joint: value}}, got "
                         f"{values!r}") from None
    for name, vi, n in zip(model.joint_names, model.joint_v_index, model.joint_nv):
        for k in range(vi, vi + n):
            arr[k] = _bounded(arr[k], f"{what} of joint {name!r}", bound, unit)
    return arr


def _bounded(x, what, bound, unit):
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a number, got {x!r}") from None
    if not (np.isfinite(x) and 0.0 <= x <= bound):
        raise InputError(f"{what} = {x:g} {unit} is outside [0, {bound:g}] {unit}")
    return x


def _gravity_vector(g):
    try:
        g = np.asarray(g, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f"gravity must be 3 finite numbers, got {g!r}") from None
    if g.shape != (3,) or not np.all(np.isfinite(g)):
        raise InputError(f"gravity must be 3 finite numbers, got {g}")
    if np.abs(g).max() > MAX_GRAVITY:
        raise InputError(f"gravity {g} m/s^2 is beyond the sane bound |g_i| <= {MAX_GRAVITY:g}")
    return g
