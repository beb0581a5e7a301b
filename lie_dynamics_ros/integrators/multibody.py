"""The multibody state space of ``simulate`` and its fixed step on the Python path.

Below both ``simulate`` (which adds the compiled path) and constrained stepping
(``integrators/constrained.py``), so that neither imports the other's module back.
"""
from dataclasses import dataclass

import numpy as np

from ..algorithms.configuration import difference, integrate
from ..algorithms.dynamics import forward_dynamics
from ..errors import InputError
from ..lie import se3, so3
from .solve import get_method
from .spaces import HomogeneousSpace, dexp_inv_series

#: method names accepted by ``simulate``
SIMULATE_METHODS = ("euler", "lie_euler", "semi_implicit", "heun", "lie_euler_heun", "rk3",
                    "rkmk3", "rkmk4", "rkmk4_trunc", "rkmk4_2c", "rkmk5", "cf3", "cf4",
                    "rkmk45", "cf32", "cf32a", "cf32b", "cf43")
#: the ones that use rtol/atol and a variable step
SIMULATE_ADAPTIVE_METHODS = ("rkmk45", "cf32", "cf32a", "cf32b", "cf43")


@dataclass
class SimulationResult:
    t: np.ndarray          # (k,)
    q: np.ndarray          # (k, nq)
    v: np.ndarray          # (k, nv)
    nfev: int = 0          # dynamics evaluations (ABA / hybrid calls)
    nreject: int = 0       # rejected steps (adaptive methods)
    method: str = ""
    compiled: bool = False  # True if the compiled kernels (kernels/integrate.py) ran the steps

    @property
    def h(self):
        return np.diff(self.t)


def _joint_blocks(model):
    """(v index, kind) of free ('se3') and ball ('so3') joints, from the public joint tables."""
    blocks = []
    for nq, nv, vi in zip(model.joint_nq, model.joint_nv, model.joint_v_index):
        if (nq, nv) == (7, 6):
            blocks.append((int(vi), "se3"))
        elif (nq, nv) == (4, 3):
            blocks.append((int(vi), "so3"))
    return blocks


class MultibodySpace(HomogeneousSpace):
    """Q x R^nv with the right action of the configuration group and translation on v.

    State y = (q, v) (nq + nv); algebra element (dq, dv) (2 nv): exp_act((dq, dv), (q, v)) =
    (integrate(q, dq), v + dv).
    """

    def __init__(self, model):
        self.model = model
        self.nq, self.nv = int(model.nq), int(model.nv)
        self.size = self.nq + self.nv
        self.dim = 2 * self.nv
        self.blocks = _joint_blocks(model)
        self._integrate, self._difference = integrate, difference

    def split(self, y):
        return y[:self.nq], y[self.nq:]

    def exp_act(self, xi, y):
        q, v = y[:self.nq], y[self.nq:]
        return np.concatenate([self._integrate(self.model, q, xi[:self.nv]), v + xi[self.nv:]])

    def generator(self, xi, y):
        raise NotImplementedError("q lives on a group; use exp_act")

    def bracket(self, u, w):
        """Bracket of the opposite algebra (right action): -[u, w] on the group blocks."""
        out = np.zeros(self.dim)
        for vi, kind in self.blocks:
            if kind == "se3":
                out[vi:vi + 6] = -se3.bracket_unchecked(u[vi:vi + 6], w[vi:vi + 6])
            else:
                out[vi:vi + 3] = -np.cross(u[vi:vi + 3], w[vi:vi + 3])
        return out

    def dexp_inv(self, u, w, order=None):
        if order is not None:
            return dexp_inv_series(self.bracket, u, w, order)
        out = np.array(w, dtype=float, copy=True)
        for vi, kind in self.blocks:
            if kind == "se3":
                out[vi:vi + 6] = se3.dexp_inv_unchecked(-u[vi:vi + 6]) @ w[vi:vi + 6]
            else:
                out[vi:vi + 3] = so3.dexp_inv(-u[vi:vi + 3]) @ w[vi:vi + 3]
        return out

    def dexp_inv_exact(self, u, w):
        return self.dexp_inv(u, w, None)

    def dist(self, y1, y2):
        dq = self._difference(self.model, y1[:self.nq], y2[:self.nq])
        dv = y1[self.nq:] - y2[self.nq:]
        return float(np.sqrt(dq @ dq + dv @ dv))

    def scale(self, y):
        """|v_i| on the velocity part, 1 on the configuration tangent."""
        return np.concatenate([np.ones(self.nv), np.abs(y[self.nq:])])


def name_of(method):
    return str(method).lower()


#: names ``get_method`` knows under another name
ALIASES = {"euler": "lie_euler", "rk3": "rkmk3"}


def fixed_method(method, who):
    """The lower-case name of a fixed-step method of ``SIMULATE_METHODS``; InputError naming
    ``who`` otherwise."""
    name = name_of(method)
    if name not in SIMULATE_METHODS or name in SIMULATE_ADAPTIVE_METHODS:
        fixed = [m for m in SIMULATE_METHODS if m not in SIMULATE_ADAPTIVE_METHODS]
        raise InputError(f"{who}: method must be one of {', '.join(fixed)}")
    return name


def python_stepper(model, name):
    """make_stepper's step on the Python path (MultibodySpace and the generic methods)."""
    nq, nv = model.nq, model.nv
    sp = MultibodySpace(model)
    m = None if name == "semi_implicit" else get_method(ALIASES.get(name, name))
    zero = np.zeros(nv)

    def step(q, v, dt, tau=None, t=0.0, accel=None):
        if accel is None:
            tau_f = (lambda t_, q_, v_: zero) if tau is None else (
                tau if callable(tau) else (lambda t_, q_, v_: tau))

            def accel(t_, q_, v_):
                return forward_dynamics(model, q_, v_, tau_f(t_, q_, v_))
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        if m is None:
            return semi_implicit_step(model, q, v, accel(t, q, v), dt)

        def f(tt, y):
            qq, vv = y[:nq], y[nq:]
            return np.concatenate([vv, accel(tt, qq, vv)])
        y = m.step(sp, f, t, np.concatenate([q, v]), dt).y
        return y[:nq], y[nq:]
    return step


def semi_implicit_step(model, q, v, a, h):
    """Symplectic Euler on the group: v+ = v + h a;  q+ = q . exp(h v+).  Returns (q+, v+)."""
    v1 = v + h * a
    return integrate(model, q, v1, h), v1
