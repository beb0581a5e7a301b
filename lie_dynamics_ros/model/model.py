"""The immutable multibody model, stored as flat arrays for the compiled kernels."""
from dataclasses import dataclass

import numpy as np

from . import joints as J
from . import joint_types as JT
from ..kernels import layout as L


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
    """A rigid multibody tree. Build it with ``ldr.load_urdf`` or ``ModelBuilder``.

    Public fields are read-only views; the only mutable setting is ``gravity``. The model also
    owns the work buffers of the kernels, so one model must not be used from two threads at
    once (``model.copy()`` gives an independent one).
    """

    def __init__(self, name, kernel_joints, inertia, frames, nq, nv, total_mass):
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
        for a in (self.effort_limits, self.velocity_limits, self.lower_limits, self.upper_limits):
            a.flags.writeable = False
        self._inertia = inertia.copy()
        self._inertia.flags.writeable = False
        self._compile()
        self.gravity = (0.0, 0.0, -9.81)

    # -- kernel arrays -------------------------------------------------------------------
    def _compile(self):
        nj = len(self._kjoints)
        mi = np.zeros((nj + 1, L.NI), dtype=np.int64)
        fv = np.zeros((nj + 1, L.NCOL))
        fm = np.zeros((nj + 1, L.NSLOT, 6, 6))
        mi[0, L.P] = -1
        for j in self._kjoints:
            r = j.row
            mi[r, L.P], mi[r, L.K] = j.parent_row, j.joint.kind
            mi[r, L.QI], mi[r, L.VI], mi[r, L.NQ], mi[r, L.NV] = j.q_index, j.v_index, j.nq, j.nv
            mi[r, L.MIMIC] = j.mimic is not None
            fv[r, L.R0:L.R0 + 9] = j.origin[:3, :3].ravel()
            fv[r, L.P0:L.P0 + 3] = j.origin[:3, 3]
            ax, ax2 = JT.joint_axes(j.joint, j.name)
            fv[r, L.AX:L.AX + 3], fv[r, L.AX2:L.AX2 + 3] = ax, ax2
            fv[r, L.MULT], fv[r, L.OFF] = (j.mimic[1], j.mimic[2]) if j.mimic else (1.0, 0.0)
            fm[r, L.MI] = self._inertia[r]
        self._mi, self._fv, self._fm = mi, fv, fm
        self._general = [j for j in self._kjoints if isinstance(j.joint, JT.General)]
        # index helpers that keep Python loops over joints out of the per-call paths
        self._dof_first = np.concatenate(
            [np.full(n, i, dtype=np.int64) for i, n in zip(self.joint_v_index, self.joint_nv)]
            or [np.zeros(0, dtype=np.int64)])
        self._no_prescription = np.zeros(self.nv, dtype=np.bool_)
        self._zero_v = np.zeros(self.nv)
        for a in (self._dof_first, self._no_prescription, self._zero_v):
            a.flags.writeable = False
        self._scratch = {}

    def copy(self):
        """An independent model (own work buffers) with the same description."""
        m = Model(self.name, self._kjoints, self._inertia, self._frames, self.nq, self.nv,
                  self.total_mass)
        m.gravity = self.gravity
        return m

    def with_gravity(self, g):
        """A model with the same description and gravity ``g`` (3,), in m/s^2, world frame."""
        m = self.copy()
        m.gravity = g
        return m

    @property
    def gravity(self):
        return self._fv[0, L.G:L.G + 3].copy()

    @gravity.setter
    def gravity(self, g):
        g = np.asarray(g, dtype=float).reshape(-1)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            from ..errors import InputError
            raise InputError(f"gravity must be 3 finite numbers, got {g}")
        self._fv[0, L.G:L.G + 3] = g

    @property
    def njoints(self):
        """Number of moving bodies (kernel joints, mimic joints included)."""
        return len(self._kjoints)

    @property
    def inertias(self):
        """(njoints, 6, 6) spatial inertias of the moving bodies, seeds' order, body frames."""
        return self._inertia[1:]

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
