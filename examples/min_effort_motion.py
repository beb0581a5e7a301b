"""Minimum-effort point-to-point motion of the 7-DOF arm, with analytic and with
finite-difference Jacobians of the dynamics (what the analytic derivatives are for).

Transcription (direct, in joint space): the knots q_0 .. q_N on a uniform grid of step h are the
unknowns, q_0 and q_N fixed, at rest at both ends (mirror knots q_-1 = q_1, q_N+1 = q_N-1).
Velocities and accelerations are central differences of the knots, the torques come from
inverse dynamics, and the effort is

    J = h sum_k (tau_k^T W tau_k + rho^2 |a_k|^2),   tau_k = ID(q_k, v_k, a_k),
    W = diag(1 / effort_limit^2),

a nonlinear least-squares problem in the residuals sqrt(h W) tau_k and sqrt(h) rho a_k (the
small acceleration term keeps the light wrist joints, which cost almost no effort, from making
the problem nearly singular). Their Jacobian is
assembled from the dynamics Jacobians at every knot, dtau/dq, dtau/dv and M: one batched
``ldr.inverse_dynamics_derivatives`` call for all knots (analytic run), or central differences
of batched ``ldr.inverse_dynamics`` calls (finite-difference run), and scipy's
``least_squares`` (Levenberg-Marquardt) minimizes J. Both runs start from the same straight
line; the script prints the wall time to convergence and the iteration counts, and draws the
joint trajectories and torques.

    python examples/min_effort_motion.py [outdir]      # default out/, a few seconds
"""
import os
import sys
import time

import numpy as np
from scipy.optimize import least_squares

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # checkout

import lie_dynamics_ros as ldr  # noqa: E402
from examples._figures import save  # noqa: E402

DURATION = 1.2      # s
N = 30              # intervals
FD_STEP = 1e-6
RHO = 0.02          # weight of the acceleration term


def difference_operators(n_knots, h):
    """Dv, Da (n_knots x n_knots): v = Dv Q, a = Da Q with rest at both ends (mirror knots)."""
    Dv = np.zeros((n_knots, n_knots))
    Da = np.zeros((n_knots, n_knots))
    for k in range(n_knots):
        lo, hi = (1 if k == 0 else k - 1), (n_knots - 2 if k == n_knots - 1 else k + 1)
        Dv[k, hi] += 1 / (2 * h)
        Dv[k, lo] -= 1 / (2 * h)
        Da[k, hi] += 1 / h ** 2
        Da[k, lo] += 1 / h ** 2
        Da[k, k] -= 2 / h ** 2
    return Dv, Da


class Problem:
    def __init__(self, model, q_start, q_goal, jacobians):
        self.model, self.q0, self.q1 = model, q_start, q_goal
        self.h = DURATION / N
        self.Dv, self.Da = difference_operators(N + 1, self.h)
        self.W = 1.0 / model.effort_limits ** 2
        self.jacobians = jacobians        # "analytic" or "finite differences"
        self.jacobian_time = 0.0          # wall time spent in dynamics_jacobians

    def knots(self, x):
        return np.vstack([self.q0, x.reshape(N - 1, -1), self.q1])

    def states(self, x):
        Q = self.knots(x)
        return Q, self.Dv @ Q, self.Da @ Q

    def torques(self, x):
        return ldr.inverse_dynamics(self.model, *self.states(x))

    def dynamics_jacobians(self, Q, V, A):
        if self.jacobians == "analytic":
            return ldr.inverse_dynamics_derivatives(self.model, Q, V, A)
        n, K, e = self.model.nv, Q.shape[0], FD_STEP
        # every perturbed state of every knot in one batched call: (K * 6n, n)
        E = np.eye(n) * e
        rows = []
        for dQ, dV, dA in ((E, 0 * E, 0 * E), (0 * E, E, 0 * E), (0 * E, 0 * E, E)):
            for s in (1.0, -1.0):
                rows.append((Q[:, None] + s * dQ, V[:, None] + s * dV, A[:, None] + s * dA))
        stack = [np.concatenate([r[c] for r in rows], axis=1).reshape(-1, n) for c in range(3)]
        tau = ldr.inverse_dynamics(self.model, *stack).reshape(K, 6, n, n)
        D = (tau[:, 0::2] - tau[:, 1::2]) / (2 * e)          # (K, 3, n perturbed, n out)
        return tuple(np.transpose(D[:, j], (0, 2, 1)) for j in range(3))

    def residuals(self, x):
        Q, V, A = self.states(x)
        tau = ldr.inverse_dynamics(self.model, Q, V, A)
        return np.r_[(tau * np.sqrt(self.h * self.W)).ravel(), np.sqrt(self.h) * RHO * A.ravel()]

    def jacobian(self, x):
        """d residuals / d interior knots: ((N+1) n, (N-1) n), banded."""
        Q, V, A = self.states(x)
        t0 = time.perf_counter()
        Dq, Dv, M = self.dynamics_jacobians(Q, V, A)
        self.jacobian_time += time.perf_counter() - t0
        K, n = Q.shape
        Jf = (np.einsum("kj,kab->kajb", self.Dv, Dv) + np.einsum("kj,kab->kajb", self.Da, M))
        Jf[np.arange(K), :, np.arange(K), :] += Dq
        Jf *= np.sqrt(self.h * self.W)[None, :, None, None]
        Ja = np.sqrt(self.h) * RHO * np.einsum("kj,ab->kajb", self.Da, np.eye(n))
        return np.vstack([Jf[:, :, 1:-1, :].reshape(K * n, (K - 2) * n),
                          Ja[:, :, 1:-1, :].reshape(K * n, (K - 2) * n)])


def solve(model, q_start, q_goal, jacobians):
    prob = Problem(model, q_start, q_goal, jacobians)
    s = np.linspace(0, 1, N + 1)[1:-1, None]
    x0 = ((1 - s) * q_start + s * q_goal).ravel()
    prob.jacobian(x0)                                          # compile outside the clock
    prob.jacobian_time = 0.0
    t0 = time.perf_counter()
    res = least_squares(prob.residuals, x0, jac=prob.jacobian, method="lm", xtol=1e-10,
                        ftol=1e-10, gtol=1e-10)
    return prob, res, time.perf_counter() - t0


def main(outdir=os.path.join(ROOT, "out")):
    model = ldr.load_urdf(os.path.join(ROOT, "urdf", "arm7.urdf"))
    q_start = np.array([0.0, -0.6, 0.0, -2.2, 0.0, 1.6, 0.8])
    q_goal = np.array([1.2, 0.3, -0.4, -1.2, 0.5, 2.0, -0.3])
    runs = {}
    for jac in ("analytic", "finite differences"):
        prob, res, wall = solve(model, q_start, q_goal, jac)
        runs[jac] = (prob, res, wall)
        effort = prob.h * np.sum(prob.torques(res.x) ** 2 * prob.W)
        print(f"{jac:>19}: {wall:6.3f} s to convergence ({prob.jacobian_time:.3f} s of it in the "
              f"dynamics Jacobians), {res.njev} iterations, {res.nfev} residual evaluations, "
              f"effort {effort:.6f}, cost {2 * res.cost:.6f}")
    a, f = runs["analytic"][1], runs["finite differences"][1]
    pa, pf = runs["analytic"][0], runs["finite differences"][0]
    print(f"analytic / finite-difference Jacobians: {pf.jacobian_time / pa.jacobian_time:.1f}x "
          f"faster to evaluate, {runs['finite differences'][2] / runs['analytic'][2]:.1f}x faster "
          f"to convergence; optimal costs differ by {abs(a.cost - f.cost) / a.cost:.1e} (relative)")
    prob, res, _ = runs["analytic"]
    Q, tau = prob.knots(res.x), prob.torques(res.x)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(outdir, exist_ok=True)
    t = np.linspace(0, DURATION, N + 1)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    for j, name in enumerate(model.joint_names):
        ax1.plot(t, Q[:, j], label=name)
        ax2.plot(t, tau[:, j])
    ax1.set_ylabel("q [rad]")
    ax1.legend(fontsize=7, ncol=4)
    ax1.set_title("minimum-effort motion of arm7 (least squares, analytic Jacobians)")
    ax2.set_ylabel("tau [N m]")
    ax2.set_xlabel("t [s]")
    print("wrote", save(fig, outdir, "min_effort_motion.png"))


if __name__ == "__main__":
    main(*sys.argv[1:])
