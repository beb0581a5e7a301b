"""Generalized-momentum observer of external joint torques (De Luca & Mattone 2005; De Luca,
Albu-Schaeffer, Haddadin & Hirzinger 2006, "Collision detection and safe reaction with the DLR-III
lightweight manipulator arm", eq. (6)).

With p = M(q) qd and the property dM/dt = C + C^T of a Christoffel-consistent C (as
``ldr.coriolis_matrix`` returns it), the momentum obeys dp/dt = beta + tau_ext with the known
part beta = tau + C^T qd - g. The residual

    r(t) = K_O (p(t) - int_0^t (beta + r) ds - p(0))

follows dr/dt = K_O (dp/dt - beta - r) = K_O (tau_ext - r): a first-order low-pass estimate of
the external torque tau_ext with bandwidth K_O (1/s), which needs no acceleration and no
inverse of M.

Discretization, exact for any gap between two states. Over an interval of length dt the linear
equation dr/dt = K_O (u - r), u = dp/dt - beta, integrates exactly to

    r1 = e^{-K_O dt} r0 + int_0^dt K_O e^{-K_O (dt - s)} u(s) ds,

and with u taken as its mean over the interval (the zero-order-hold equivalent of a first-order
system; Franklin, Powell & Workman 1998),

    r1 = e^{-K_O dt} r0 + (1 - e^{-K_O dt}) u_bar,    u_bar = (p1 - p0) / dt - beta_bar,

where the mean of dp/dt is exact and beta_bar is the trapezoid of beta at the two states. For
K_O dt << 1 this is the explicit update of r(t) above (r1 = r0 + K_O dt (u_bar - r0)), to
first order; unlike it, it stays stable for any K_O dt (the old estimate decays by e^{-K_O dt}
over a gap, and a long gap gives the gap's mean momentum-based estimate u_bar, not an
amplified one). So states may be skipped, as a subscriber on a loaded machine does.

Joint friction: a drive's own damping and Coulomb friction f(qd) = D qd + F_c sign(qd)
(``ldr.friction_torques``) act like an external torque -f(qd); unmodelled, they would raise r
and a contact flag in every fast free motion. With ``friction`` on they are taken off the
applied torque at each state's velocity. At rest, static friction holds anything up to F_c,
which no model of the velocity says: the threshold must stay above the joints' F_c.
"""
import numpy as np

from ..algorithms.dynamics import coriolis_matrix, gravity_torques, mass_matrix
from ..algorithms.joint_friction import friction_torques
from ..errors import InputError


def _per_joint(x, n, name):
    a = np.asarray(x, dtype=float).reshape(-1)
    if a.size == 1:
        a = np.full(n, a[0])
    if a.shape != (n,) or not np.isfinite(a).all() or (a <= 0).any():
        raise InputError("%s must be a positive number or %d positive numbers" % (name, n))
    return a


class MomentumObserver:
    """External joint torques of ``model`` from q, qd and the applied torques.

    Args:
        model: ldr model with nq == nv.
        gain: K_O (1/s), a scalar or one per joint; the estimate's time constant is 1/K_O.
            Any interval between states is fine (exact exponential update).
        threshold: contact when some |r_i| exceeds threshold_i (N m or N), scalar or per joint.
        friction: subtract the model's joint damping and Coulomb friction from the applied
            torques (no effect on a model without them).
    """

    def __init__(self, model, gain=100.0, threshold=2.0, friction=True):
        if model.nq != model.nv:
            raise InputError("the momentum observer needs nq == nv (1-DOF joints)")
        self.model = model
        self.gain = _per_joint(gain, model.nv, "gain")
        self.threshold = _per_joint(threshold, model.nv, "threshold")
        self.friction = bool(friction)
        self.reset()

    def reset(self):
        """Forget everything; the next ``update`` starts the observer (r = 0)."""
        self.r = np.zeros(self.model.nv)
        self.p = None               # momentum at the last state
        self.drift = None           # C^T qd - g at the last state
        self.tau = None             # applied torque at the last state (friction taken off)
        self.samples = 0

    def momentum(self, q, v):
        return mass_matrix(self.model, q) @ v

    def _drift(self, q, v):
        """C(q, qd)^T qd - g(q)."""
        return coriolis_matrix(self.model, q, v).T @ v - gravity_torques(self.model, q)

    def _applied(self, tau, v):
        tau = np.asarray(tau, dtype=float)
        if tau.shape != (self.model.nv,) or not np.isfinite(tau).all():
            raise InputError("tau must be %d finite numbers" % self.model.nv)
        return tau - friction_torques(self.model, v) if self.friction else tau

    def update(self, q, v, tau, dt):
        """Take the state (q, v) reached after an interval of ``dt`` seconds (any length) and
        the torques ``tau`` applied at its end; returns the residual r (the external-torque
        estimate). The first call only initializes (r = 0; ``dt`` unused, ``tau`` may be
        None)."""
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        if self.p is not None and not (dt is not None and dt > 0 and np.isfinite(dt)):
            raise InputError("dt must be a positive number, got %r" % (dt,))
        applied = None if tau is None and self.p is None else self._applied(tau, v)
        p, drift = self.momentum(q, v), self._drift(q, v)
        if self.p is not None:
            before = applied if self.tau is None else self.tau
            beta_bar = 0.5 * (before + self.drift + applied + drift)
            decay = np.exp(-self.gain * dt)
            self.r = decay * self.r + (1.0 - decay) * ((p - self.p) / dt - beta_bar)
        self.p, self.drift, self.tau = p, drift, applied
        self.samples += 1
        return self.r

    @property
    def contact(self):
        """True when some joint's estimate exceeds its threshold."""
        return bool((np.abs(self.r) > self.threshold).any())

    def contact_joints(self):
        """Names of the joints whose estimate exceeds the threshold."""
        return [n for n, x in zip(self.model.joint_names, np.abs(self.r) > self.threshold) if x]
