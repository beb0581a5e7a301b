"""Generalized-momentum observer of external joint torques (De Luca & Mattone 2003; De Luca,
Albu-Schaeffer, Haddadin & Hirzinger 2006, "Collision detection and safe reaction with the DLR-III
lightweight manipulator arm", eq. (6)).

With p = M(q) qd and the property dM/dt = C + C^T of a Christoffel-consistent C (as
``ldr.coriolis_matrix`` returns it), the momentum obeys dp/dt = tau + C^T qd - g + tau_ext. The
residual

    r(t) = K_O (p(t) - int_0^t (tau + C^T qd - g + r) ds - p(0))

then follows dr/dt = K_O (tau_ext - r): a first-order low-pass estimate of the external torque
tau_ext with bandwidth K_O (1/s), which needs no acceleration and no inverse of M.

Discretization: the integral is advanced with the integrand of the previous sample (explicit
Euler) and the torque applied over the interval, which matches a simulator's semi-implicit step
up to O(dt) in the change of M.

Joint friction: a drive's own damping and Coulomb friction f(qd) = D qd + F_c sign(qd)
(``ldr.friction_torques``) act like an external torque -f(qd); unmodelled, they would raise r
and a contact flag in every fast free motion. With ``friction`` on they are taken off the
applied torque, at the velocity that ends the interval (the simulator's damping and friction
are implicit, at the step's end velocity). At rest, static friction holds anything up to F_c,
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
            The explicit update needs gain * dt < 1.
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
        self.p0 = None
        self.integral = np.zeros(self.model.nv)
        self._integrand = None     # tau-free part of the integrand at the last sample
        self.samples = 0

    def momentum(self, q, v):
        return mass_matrix(self.model, q) @ v

    def _drift(self, q, v):
        """C(q, qd)^T qd - g(q)."""
        return coriolis_matrix(self.model, q, v).T @ v - gravity_torques(self.model, q)

    def update(self, q, v, tau, dt):
        """Take the state (q, v) at the end of an interval of length ``dt`` (s) over which the
        torques ``tau`` were applied; returns the residual r (the external-torque estimate).
        The first call only initializes (r = 0; ``tau`` and ``dt`` unused)."""
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        p = self.momentum(q, v)
        if self.p0 is None:
            self.p0 = p
        else:
            tau = np.asarray(tau, dtype=float)
            if not (dt > 0 and np.isfinite(dt)):
                raise InputError("dt must be a positive number, got %r" % (dt,))
            if tau.shape != (self.model.nv,) or not np.isfinite(tau).all():
                raise InputError("tau must be %d finite numbers" % self.model.nv)
            if self.friction:
                tau = tau - friction_torques(self.model, v)
            self.integral += (tau + self._integrand + self.r) * dt
            self.r = self.gain * (p - self.integral - self.p0)
        self._integrand = self._drift(q, v)
        self.samples += 1
        return self.r

    @property
    def contact(self):
        """True when some joint's estimate exceeds its threshold."""
        return bool((np.abs(self.r) > self.threshold).any())

    def contact_joints(self):
        """Names of the joints whose estimate exceeds the threshold."""
        return [n for n, x in zip(self.model.joint_names, np.abs(self.r) > self.threshold) if x]
