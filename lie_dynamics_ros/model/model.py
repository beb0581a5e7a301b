"""The immutable multibody model, stored as flat arrays for the compiled kernels."""
import threading
from dataclasses import dataclass

import numpy as np

from . import joints as J
from . import joint_types as JT
from ..conventions import matrix_to_public
from ..kernels import layout as L
from .bounds import MAX_GRAVITY
from .data import Data


@dataclass
class JointInfo:
    """One kernel joint (a moving body). Mimic joints share their master's q/v indices."""
    name: str
    row: int
    joint: object
    q_index: int
    v_index: int
    nq: int
    nv: int
    mimic: tuple = None          # (master, multiplier, offset)
    parent_row: int = 0
    origin: np.ndarray = None    # joint origin in the parent body frame
    limits: tuple = (-np.inf, np.inf, np.inf, np.inf)   # lower, upper, effort, velocity
    child_link: str = ""


class Model:
    """A rigid multibody tree, frozen. Build it with ``ldr.load_urdf`` or ``ModelBuilder``.

    The model is a description only (topology, joint placements, axes, inertias, limits,
    gravity); the algorithms' work memory is a ``Data`` (``model.create_data()``), so one model
    can be shared by any number of threads. A different gravity is a different model:
    ``model.with_gravity(g)``.
    """

    def __init__(self, name, kernel_joints, inertia, frames, nq, nv, total_mass,
                 gravity=(0.0, 0.0, -9.81)):
        self.name = name
        self._kjoints = list(kernel_joints)
        self._frames = dict(frames)
        self.nq, self.nv = int(nq), int(nv)
        self.total_mass = total_mass
        actuated = [j for j in self._kjoints if j.mimic is None]
        self.joint_names = [j.name for j in actuated]
        self.joint_nq = [j.nq for j in actuated]
        self.joint_nv = [j.nv for j in actuated]
        self.joint_q_index = [j.q_index for j in actuated]
        self.joint_v_index = [j.v_index for j in actuated]
        self.joint_kinds = [J.NAMES[j.joint.kind] for j in actuated]
        self.body_names = [j.child_link for j in self._kjoints]
        self.frame_names = list(self._frames)
        self.has_mimic = len(actuated) != len(self._kjoints)
        self.has_general = any(isinstance(j.joint, JT.General) for j in self._kjoints)
        self.mimic_joints = {j.name: j.mimic for j in self._kjoints if j.mimic is not None}
        self.effort_limits = np.full(nv, np.inf)
        self.velocity_limits = np.full(nv, np.inf)
        self.lower_limits = np.full(nv, -np.inf)
        self.upper_limits = np.full(nv, np.inf)
        for j in actuated:
            lo, hi, eff, vel = j.limits
            s = slice(j.v_index, j.v_index + j.nv)
            self.effort_limits[s], self.velocity_limits[s] = eff, vel
            if j.nv == 1:
                self.lower_limits[s], self.upper_limits[s] = lo, hi
        self._inertia = inertia.copy()
        self._compile(_gravity_vector(gravity))
        for a in (self.effort_limits, self.velocity_limits, self.lower_limits, self.upper_limits,
                  self._inertia):
            a.flags.writeable = False
        self._tls = threading.local()
        #: closed kinematic loops (model.loops.LoopClosure) and their number of constraint rows
        self.loops, self.nc = (), 0

    # -- kernel arrays -------------------------------------------------------------------
    def _compile(self, gravity):
        nj = len(self._kjoints)
        mi = np.zeros((nj + 1, L.NI), dtype=np.int64)
        mc = np.zeros((nj + 1, L.NMC))
        mi[0, L.P] = -1
        mc[0, L.G:L.G + 3] = gravity
        for j in self._kjoints:
            r = j.row
            mi[r, L.P], mi[r, L.K] = j.parent_row, j.joint.kind
            mi[r, L.QI], mi[r, L.VI], mi[r, L.NQ], mi[r, L.NV] = j.q_index, j.v_index, j.nq, j.nv
            mi[r, L.MIMIC] = j.mimic is not None
            mc[r, L.R0:L.R0 + 9] = j.origin[:3, :3].ravel()
            mc[r, L.P0:L.P0 + 3] = j.origin[:3, 3]
            ax, ax2 = JT.joint_axes(j.joint, j.name)
            mc[r, L.AX:L.AX + 3], mc[r, L.AX2:L.AX2 + 3] = ax, ax2
            mc[r, L.MULT], mc[r, L.OFF] = (j.mimic[1], j.mimic[2]) if j.mimic else (1.0, 0.0)
        #: (nj + 1, NI) int64 topology, (nj + 1, NMC) constants, (nj + 1, 6, 6) inertias
        self.mi, self.mc, self.mI = mi, mc, self._inertia
        self._general = [j for j in self._kjoints if isinstance(j.joint, JT.General)]
        self._row_joint = ["universe"] + [None] * nj      # joint name of each body row
        for j in self._kjoints:
            self._row_joint[j.row] = j.name
        # index helpers that keep Python loops over joints out of the per-call paths
        self._dof_first = np.concatenate(
            [np.full(n, i, dtype=np.int64) for i, n in zip(self.joint_v_index, self.joint_nv)]
            or [np.zeros(0, dtype=np.int64)])
        # continuous joints (wrapped by difference()) and the coordinates that add as vectors
        self._circles = np.array(
            [j.v_index for j in self._kjoints if j.mimic is None and j.joint.kind == J.REVOLUTE
             and not (np.isfinite(j.limits[0]) or np.isfinite(j.limits[1]))], dtype=int)
        qs, vs = [], []
        for j in self._kjoints:
            if j.mimic is None and j.joint.kind not in (J.FREE, J.SPHERICAL):
                qs += range(j.q_index, j.q_index + j.nq)
                vs += range(j.v_index, j.v_index + j.nv)
        self._vector_part = (np.array(qs, dtype=int), np.array(vs, dtype=int))
        for a in (mi, mc, self._dof_first, self._circles,
                  *self._vector_part):
            a.flags.writeable = False

    def create_data(self):
        """A new ``Data``: the work buffers of every algorithm, for one thread at a time."""
        return Data(self)

    def _default_data(self):
        """This thread's Data of this model (what the public functions use without ``data=``)."""
        try:
            return self._tls.data
        except AttributeError:
            d = self._tls.data = Data(self)
            return d

    def with_gravity(self, g):
        """A model with the same description (loops included) and gravity ``g`` (3,), in m/s^2,
        world frame."""
        m = Model(self.name, self._kjoints, self._inertia, self._frames, self.nq, self.nv,
                  self.total_mass, gravity=g)
        return m.with_loops(self.loops) if self.loops else m

    def with_loops(self, loops):
        """A model with the same tree and these loop closures (``ldr.LoopClosure``) instead of
        its own; the tree algorithms ignore them, the constrained ones (docs/loops.md) use them."""
        from .loops import attach_loops
        m = Model(self.name, self._kjoints, self._inertia, self._frames, self.nq, self.nv,
                  self.total_mass, gravity=self.gravity)
        return attach_loops(m, loops)

    def copy(self):
        """The same model. Kept for old callers: a Model is frozen and thread-safe, so a copy is
        never needed (give each thread its own ``create_data()`` if it wants one)."""
        return self

    @property
    def gravity(self):
        """(3,) gravity in the world frame, m/s^2. Frozen: ``model.with_gravity(g)``."""
        return self.mc[0, L.G:L.G + 3].copy()

    @gravity.setter
    def gravity(self, g):
        raise AttributeError("a Model is frozen (it is shared by threads): use "
                             "model = model.with_gravity(g)")

    @property
    def njoints(self):
        """Number of moving bodies (kernel joints, mimic joints included)."""
        return len(self._kjoints)

    @property
    def inertias(self):
        """(njoints, 6, 6) spatial inertias of the moving bodies in their body frames, acting on
        (linear, angular) twists as ``lie.se3.spatial_inertia``."""
        return matrix_to_public(self._inertia[1:])

    def joint(self, name):
        for j in self._kjoints:
            if j.name == name:
                return j
        from ..errors import InputError
        raise InputError(f"unknown joint {name!r}; known: {self.joint_names}")

    def frame(self, name):
        """(body row, 4x4 pose of the frame in that body's frame); row 0 is the world."""
        try:
            return self._frames[name]
        except KeyError:
            from ..errors import InputError
            raise InputError(f"unknown frame {name!r}; known: {self.frame_names}") from None

    def describe(self):
        """The model tree as text: bodies, joints, masses, nq/nv."""
        out = [f"robot {self.name!r}: nq={self.nq} nv={self.nv} bodies={self.njoints} "
               f"total mass={self.total_mass:.4f} kg"]
        depth = {0: 0}
        for j in self._kjoints:
            depth[j.row] = depth[j.parent_row] + 1
            m = self._inertia[j.row][5, 5]
            tag = f" mimics {j.mimic[0]} (x{j.mimic[1]:g}{j.mimic[2]:+g})" if j.mimic else \
                f" q[{j.q_index}:{j.q_index + j.nq}] v[{j.v_index}:{j.v_index + j.nv}]"
            out.append("  " * depth[j.row] + f"- {j.child_link} <- {j.name} "
                       f"({J.NAMES[j.joint.kind]}){tag}, body mass {m:.4f} kg")
        return "\n".join(out)

    def __repr__(self):
        return f"<Model {self.name!r} nq={self.nq} nv={self.nv} joints={self.joint_names}>"


def _gravity_vector(g):
    from ..errors import InputError
    try:
        g = np.asarray(g, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f"gravity must be 3 finite numbers, got {g!r}") from None
    if g.shape != (3,) or not np.all(np.isfinite(g)):
        raise InputError(f"gravity must be 3 finite numbers, got {g}")
    if np.abs(g).max() > MAX_GRAVITY:
        raise InputError(f"gravity {g} m/s^2 is beyond the sane bound |g_i| <= {MAX_GRAVITY:g}")
    return g
