"""Joint damping and Coulomb friction in a fixed step, implicitly: the torque they apply over
one step is solved at the velocity level, so stiff damping costs no step size and a joint
whose net torque is below its friction sticks exactly.

One step of size h from (q, v), where the other torques (commands, gravity, Coriolis) give the
acceleration a, solves for the end velocity v1 of a backward-Euler velocity update

    v1 = argmin_u  1/2 (u - v - h a)^T M (u - v - h a) + h (1/2 u^T D u + sum_i F_i |u_i|)

with M the joint-space mass matrix (CRBA, armature included), D = diag(joint_damping) and
F = joint_friction. This is the proximal step of the dissipation potential in the metric M,
the velocity-level time stepping of dry friction (Moreau 1988), posed as MuJoCo poses it
(Todorov, Erez & Tassa 2012; MuJoCo documentation, Computation: the implicitfast integrator
puts damping in M + h D, friction loss is the box |c_i| <= F_i on the Coulomb torque c). The passive torque f = (M v1 - M v - h M a) / h
= -D v1 - c is then held constant over the rigid-body step of the chosen method.

Properties (tested in test/test_passive_torques.py):

* stable for any h D (the scalar test v' = -d v gives v1 = v / (1 + h d): L-stable);
* a joint at rest whose net torque is within its friction gets f = -M a there, so every stage
  of the step sees zero acceleration: it stays at rest to round-off (no creep);
* the velocity update never raises the kinetic energy (a proximal step of a convex potential
  with its minimum at u = 0), so friction and damping inject no energy;
* first order in the passive terms (f uses the end velocity of one Euler step); without
  damping and friction the method keeps its own order and its compiled path.

The box problem is solved by coordinate descent with exact one-joint minimisers (projected
Gauss-Seidel; soft thresholding), then made exact by solving the stick/slip pattern it found.
"""
import numpy as np

from ..algorithms.dynamics import mass_matrix
from ..errors import InputError

#: coordinate-descent sweeps before giving up (each followed by an exact polish attempt)
MAX_SWEEPS = 200


def has_passive(model):
    """True if the model has joint damping or Coulomb friction anywhere."""
    return bool(np.any(model.joint_damping) or np.any(model.joint_friction))


def passive_torques(model, q, v, a, h, free=None):
    """The damping and Coulomb friction torques (nv,) to hold over a step of ``h`` from
    (``q``, ``v``), where the other torques alone give the acceleration ``a`` (nv,).

    ``free``: optional (nv,) bool mask; the other joints are prescribed (hybrid dynamics:
    their acceleration is given, so the step's mass matrix is M's free-free block) and get 0.
    """
    h = float(h)
    if not (h > 0.0 and np.isfinite(h)):
        raise InputError(f"the step of the joint friction solve must be positive, got {h}")
    nv = model.nv
    a = np.asarray(a, dtype=float)
    v = np.asarray(v, dtype=float)
    if a.shape != (nv,) or not np.all(np.isfinite(a)):
        raise InputError(f"the acceleration of the joint friction solve must be {nv} finite "
                         "numbers")
    idx = np.arange(nv) if free is None else np.flatnonzero(free)
    out = np.zeros(nv)
    if idx.size == 0:
        return out
    M = mass_matrix(model, q)[np.ix_(idx, idx)]
    d = model.joint_damping[idx]
    fr = model.joint_friction[idx]
    b = M @ (v[idx] + h * a[idx])          # momentum after the other torques
    A = M + h * np.diag(d)
    v1 = box_qp(A, b, h * fr) if np.any(fr) else np.linalg.solve(A, b)
    out[idx] = (M @ v1 - b) / h
    return out


def box_qp(A, b, r):
    """argmin_x 1/2 x^T A x - b^T x + sum_i r_i |x_i| for symmetric positive definite A and
    r >= 0. Entries with the threshold not exceeded are exactly 0 (the stuck joints)."""
    n = b.size
    diag = np.diag(A).copy()
    x = np.zeros(n)
    tol = 1e-13 * (np.abs(b).max() + r.max() + 1e-300)
    for _ in range(MAX_SWEEPS):
        change = 0.0
        for i in range(n):
            z = b[i] - A[i] @ x + diag[i] * x[i]
            xi = np.sign(z) * max(abs(z) - r[i], 0.0) / diag[i]
            change = max(change, abs(xi - x[i]) * diag[i])
            x[i] = xi
        exact = _polish(A, b, r, x, tol)
        if exact is not None:
            return exact
        if change <= tol:
            break
    return x


def _polish(A, b, r, x, tol):
    """The exact minimiser for the stick (x_i = 0) / slip (sign of x_i) pattern of ``x``, or
    None if that pattern does not satisfy the optimality conditions."""
    slip = (x != 0.0) | (r == 0.0)
    s = np.sign(x)
    y = np.zeros_like(x)
    if slip.any():
        P = np.flatnonzero(slip)
        y[P] = np.linalg.solve(A[np.ix_(P, P)], b[P] - r[P] * s[P])
        wrong = slip & (r > 0.0) & (np.sign(y) != s)
        if wrong.any():
            return None
    stick = ~slip
    if stick.any() and np.any(np.abs(b[stick] - A[stick] @ y) > r[stick] + tol):
        return None
    return y
