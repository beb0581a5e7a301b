"""Two quadrotors carrying a point mass by rigid massless links (Celledoni et al. 2021, §6;
eqs. 36–38).

Phase space M = T R^3 x (T SO(3))^2 x (T S^2)^2, state
P = [y, v, R1, W1, R2, W2, q1, w1, q2, w2] (42 numbers: R_i as 3x3 row-major).
Group G = R^6 x (SO(3) x R^3)^2 x SE(3)^2 (direct products), acting by
psi_g(P) = [y + a1, v + a2, B1 R1, W1 + b1, B2 R2, W2 + b2, C1 q1, C1 w1 + c1 x C1 q1, ...], so
f(P) = [hbar_1, hbar_2, R1 W1, hbar_3, R2 W2, hbar_4, w1, q1 x hbar_5, w2, q2 x hbar_6] with
hbar = A(z)^-1 h(z) (eqs. 37–38).

Conventions: e3 points DOWN, as the potential U = -m_y g e3.y - sum m_i g e3.(y - L_i q_i), h_2 and
u = -T R e3 of §6 need; q_i is the unit
vector from quadrotor i to the load (quadrotor i sits at y - L_i q_i), thrust u_i = -T_i R_i e3.

The paper gives no parameters.  We use m_y = 0.5 kg, m_i = 1.0 kg, L_i = 1 m,
J_i = diag(0.082, 0.0845, 0.1377) kg m^2 (a typical quadrotor), g = 9.81.

Controller (after Lee, Sreenath & Kumar, the paper's ref. [50]; attitude moments M_i = 0 as in
the paper's experiment, the thrust vectors u_i are the inputs):

* load: a_d = y_d'' - k_y (y - y_d) - k_v (v - y_d'); desired cable forces mu_id with
  sum mu_id = m_y (a_d - g e3), split equally plus a formation term +-c perpendicular to it,
  desired link directions q_id = -mu_id / |mu_id|;
* u_i^par = q_i q_i^T mu_id + m_i L_i |w_i|^2 q_i + m_i q_i q_i^T (a_d - g e3)
  (then v' = a_d exactly when q_i = q_id);
* u_i^perp = m_i L_i q_i x alpha_i - m_i hat(q_i)^2 (a_d - g e3), alpha_i = -k_q q_id x q_i
  - k_w w_i, which makes w_i' = alpha_i (with v' = a_d).

Run ``python examples/quadrotors.py [outdir]`` for Figs. 13–18.
"""
import os
import sys
from dataclasses import dataclass, field

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # checkout

from examples._figures import save  # noqa: E402
from lie_dynamics_ros.integrators import (  # noqa: E402
    ProductSpace, SO3Space, TS2Space, VectorSpace, solve)
from lie_dynamics_ros.integrators.spaces import cross3  # noqa: E402
from lie_dynamics_ros.lie import so3  # noqa: E402

E3 = np.array([0.0, 0.0, 1.0])   # points down (Celledoni et al. 2021, §6)

# state layout
SL = dict(y=slice(0, 3), v=slice(3, 6), R1=slice(6, 15), W1=slice(15, 18), R2=slice(18, 27),
          W2=slice(27, 30), q1=slice(30, 33), w1=slice(33, 36), q2=slice(36, 39),
          w2=slice(39, 42))


def space():
    """R^6 x (SO(3) x R^3)^2 x (TS^2)^2 with the action of G (algebra dim 30)."""
    return ProductSpace(VectorSpace(6), SO3Space(), VectorSpace(3), SO3Space(), VectorSpace(3),
                        TS2Space(2))


@dataclass
class Quadrotors:
    m_y: float = 0.5
    m: tuple = (1.0, 1.0)
    L: tuple = (1.0, 1.0)
    J: tuple = field(default_factory=lambda: (np.diag([0.082, 0.0845, 0.1377]),) * 2)
    g: float = 9.81
    k_y: float = 4.0
    k_v: float = 4.0
    k_q: float = 25.0
    k_w: float = 10.0
    formation: float = np.tan(np.pi / 6)    # cables at about +-30 deg from mu_d
    control: bool = True

    # ---------------------------------------------------------------- reference
    @staticmethod
    def y_d(t):
        """Parabolic reference (m): climbing (-e3) while moving along x and y."""
        return np.array([0.5 * t, 0.1 * t * t, -0.05 * t * t])

    @staticmethod
    def y_d_dot(t):
        return np.array([0.5, 0.2 * t, -0.1 * t])

    @staticmethod
    def y_d_ddot(t):
        return np.array([0.0, 0.2, -0.1])

    # ---------------------------------------------------------------- control
    def desired(self, t, y, v):
        a_d = self.y_d_ddot(t) - self.k_y * (y - self.y_d(t)) - self.k_v * (v - self.y_d_dot(t))
        mu_d = self.m_y * (a_d - self.g * E3)
        n = mu_d / np.linalg.norm(mu_d)
        e = np.array([1.0, 0.0, 0.0]) - n[0] * n
        e /= np.linalg.norm(e)
        off = 0.5 * self.formation * np.linalg.norm(mu_d) * e
        mus = (0.5 * mu_d + off, 0.5 * mu_d - off)
        q_d = tuple(-mu / np.linalg.norm(mu) for mu in mus)
        return a_d, mus, q_d

    def thrusts(self, t, P):
        """(u_1, u_2) thrust vectors and the desired link directions."""
        y, v = P[SL["y"]], P[SL["v"]]
        if not self.control:
            return (np.zeros(3), np.zeros(3)), None
        a_d, mus, q_d = self.desired(t, y, v)
        us = []
        for i, (qs, ws) in enumerate((("q1", "w1"), ("q2", "w2"))):
            q, w = P[SL[qs]], P[SL[ws]]
            m, L = self.m[i], self.L[i]
            b = a_d - self.g * E3
            u_par = q * (q @ mus[i]) + m * L * (w @ w) * q + m * q * (q @ b)
            alpha = -self.k_q * cross3(q_d[i], q) - self.k_w * w
            Q = so3.hat(q)
            u_perp = m * L * cross3(q, alpha) - m * (Q @ (Q @ b))
            us.append(u_par + u_perp)
        return tuple(us), q_d

    # ---------------------------------------------------------------- dynamics (37)-(38)
    def accelerations(self, t, P):
        """(v', W1', W2', w1', w2') from A(z) z' = h(z)."""
        (u1, u2), _ = self.thrusts(t, P)
        qs = (P[SL["q1"]], P[SL["q2"]])
        ws = (P[SL["w1"]], P[SL["w2"]])
        Ws = (P[SL["W1"]], P[SL["W2"]])
        us = (u1, u2)
        Mq = self.m_y * np.eye(3) + sum(self.m[i] * np.outer(qs[i], qs[i]) for i in range(2))
        h2 = Mq @ (self.g * E3)
        for i in range(2):
            h2 = h2 - self.m[i] * self.L[i] * (ws[i] @ ws[i]) * qs[i] + qs[i] * (qs[i] @ us[i])
        vdot = np.linalg.solve(Mq, h2)
        Wdot = tuple(np.linalg.solve(self.J[i], -cross3(Ws[i], self.J[i] @ Ws[i]))
                     for i in range(2))
        wdot = []
        for i in range(2):
            q, u, L, m = qs[i], us[i], self.L[i], self.m[i]
            u_perp = u - q * (q @ u)
            h5 = -(self.g / L) * cross3(q, E3) - cross3(q, u_perp) / (m * L)
            wdot.append(h5 + cross3(q, vdot) / L)
        return vdot, Wdot, tuple(wdot)

    def f(self, t, P):
        """f: M -> g (30-vector)."""
        vdot, Wdot, wdot = self.accelerations(t, P)
        R1, R2 = P[SL["R1"]].reshape(3, 3), P[SL["R2"]].reshape(3, 3)
        q1, q2 = P[SL["q1"]], P[SL["q2"]]
        return np.concatenate([P[SL["v"]], vdot, R1 @ P[SL["W1"]], Wdot[0], R2 @ P[SL["W2"]],
                               Wdot[1], P[SL["w1"]], cross3(q1, wdot[0]), P[SL["w2"]],
                               cross3(q2, wdot[1])])

    def vector_field(self, t, P):
        """Classical F(t, P) in R^42 (for scipy / classical RK4 comparisons)."""
        vdot, Wdot, wdot = self.accelerations(t, P)
        out = np.empty(42)
        out[SL["y"]] = P[SL["v"]]
        out[SL["v"]] = vdot
        for Rk, Wk, i in (("R1", "W1", 0), ("R2", "W2", 1)):
            R = P[SL[Rk]].reshape(3, 3)
            out[SL[Rk]] = (R @ so3.hat(P[SL[Wk]])).ravel()
            out[SL[Wk]] = Wdot[i]
        for qk, wk, i in (("q1", "w1", 0), ("q2", "w2", 1)):
            out[SL[qk]] = cross3(P[SL[wk]], P[SL[qk]])
            out[SL[wk]] = wdot[i]
        return out

    def initial_state(self, offset=(0.3, -0.2, 0.1), tilt=0.15):
        """Load displaced from y_d(0); links near (not at) their desired directions."""
        y = self.y_d(0.0) + np.asarray(offset, dtype=float)
        v = np.zeros(3)
        _, _, q_d = self.desired(0.0, y, v)
        q1 = so3.exp([0.0, tilt, 0.0]) @ q_d[0]
        q2 = so3.exp([tilt, 0.0, 0.0]) @ q_d[1]
        W1, W2 = np.array([0.1, -0.2, 0.3]), np.array([-0.3, 0.1, 0.2])
        return np.concatenate([y, v, np.eye(3).ravel(), W1, np.eye(3).ravel(), W2,
                               q1, np.zeros(3), q2, np.zeros(3)])

    def positions(self, P):
        """(load, quadrotor 1, quadrotor 2) positions."""
        y = P[SL["y"]]
        return y, y - self.L[0] * P[SL["q1"]], y - self.L[1] * P[SL["q2"]]


def residuals(P):
    """max over the two links of | |q_i| - 1 |, |q_i . w_i|, and max |R_i^T R_i - I|."""
    out = []
    for q, w in (("q1", "w1"), ("q2", "w2")):
        out.append((abs(np.linalg.norm(P[SL[q]]) - 1.0), abs(P[SL[q]] @ P[SL[w]])))
    orth = max(np.abs(P[SL[k]].reshape(3, 3).T @ P[SL[k]].reshape(3, 3) - np.eye(3)).max()
               for k in ("R1", "R2"))
    return max(o[0] for o in out), max(o[1] for o in out), orth


def simulate(model=None, T=5.0, h=0.01, method="rkmk4", P0=None):
    model = model or Quadrotors()
    P0 = model.initial_state() if P0 is None else P0
    return solve(space(), model.f, P0, (0.0, T), h=h, method=method)


def reference(model, P0, T, rtol=1e-12, atol=1e-12, t_eval=None):
    from scipy.integrate import solve_ivp
    return solve_ivp(model.vector_field, (0.0, T), P0, method="DOP853", rtol=rtol, atol=atol,
                     t_eval=t_eval)


def convergence(model=None, T=1.0, steps=(20, 40, 80, 160),
                methods=("rkmk4", "rkmk4_2c", "rkmk3", "lie_euler_heun")):
    model = model or Quadrotors()
    P0 = model.initial_state()
    ref = reference(model, P0, T).y[:, -1]
    hs = np.array([T / n for n in steps])
    errs = {}
    for m in methods:
        errs[m] = np.array([np.linalg.norm(simulate(model, T, T / n, m, P0).y[-1] - ref)
                            for n in steps])
    slopes = {m: float(np.polyfit(np.log(hs[-3:]), np.log(e[-3:]), 1)[0])
              for m, e in errs.items()}
    return hs, errs, slopes


def main(outdir="out/figures"):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(outdir, exist_ok=True)
    model = Quadrotors()
    written = []

    hs, errs, slopes = convergence(model, steps=(20, 40, 80, 160, 320))
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for m, e in errs.items():
        ax.loglog(hs, e, "o-", label=f"{m} (slope {slopes[m]:.2f})")
    ax.set_xlabel("h")
    ax.set_ylabel("error at T = 1 vs DOP853 1e-12")
    ax.set_title("Quadrotors: convergence (Fig. 13)")
    ax.legend(fontsize=7)
    written.append(save(fig, outdir, "quadrotors_fig13_orders.png"))
    print("quadrotor orders:", {k: round(v, 3) for k, v in slopes.items()})

    T, h = 5.0, 0.01
    sol = simulate(model, T, h)
    t, Y = sol.t, sol.y
    yd = np.array([model.y_d(s) for s in t])
    pos = [np.array([model.positions(P)[k] for P in Y]) for k in range(3)]
    fig = plt.figure(figsize=(7, 6))
    ax = fig.add_subplot(111, projection="3d")
    for k in range(0, len(t), 50):
        a, b, c = pos[0][k], pos[1][k], pos[2][k]
        ax.plot(*np.array([b, a, c]).T, "k-", lw=0.7)
    ax.plot(*pos[0].T, "b", label="load")
    ax.plot(*pos[1].T, "g", label="quadrotor 1")
    ax.plot(*pos[2].T, "m", label="quadrotor 2")
    ax.plot(*yd.T, "r--", label="y_d")
    ax.invert_zaxis()
    ax.legend()
    ax.set_title("snapshots 0 <= t <= 5 (Fig. 14; e3 down)")
    written.append(save(fig, outdir, "quadrotors_fig14_snapshots.png"))

    fig, axs = plt.subplots(1, 3, figsize=(14, 4))
    for k in range(3):
        axs[0].plot(t, pos[0][:, k], "b")
        axs[0].plot(t, yd[:, k], "r--")
    axs[0].set_title("load position (blue) and y_d (red) (Fig. 15)")
    axs[1].semilogy(t, np.linalg.norm(pos[0] - yd, axis=1))
    axs[1].set_title("|y - y_d| (Fig. 16)")
    ed = []
    for P, s in zip(Y, t):
        _, q_d = model.thrusts(s, P)
        ed.append([1 - P[SL["q1"]] @ q_d[0], 1 - P[SL["q2"]] @ q_d[1]])
    axs[2].semilogy(t, np.abs(np.array(ed)) + 1e-18)
    axs[2].set_title("link direction errors 1 - q_i.q_id (Fig. 17)")
    for a in axs:
        a.set_xlabel("t")
    written.append(save(fig, outdir, "quadrotors_fig15_17_tracking.png"))

    fig, ax = plt.subplots(figsize=(6, 4))
    nq = np.array([[abs(np.linalg.norm(P[SL["q1"]]) - 1), abs(np.linalg.norm(P[SL["q2"]]) - 1)]
                   for P in Y])
    ax.semilogy(t, nq + 1e-18)
    ax.set_title("| |q_i| - 1 | with RKMK4 (Fig. 18)")
    ax.set_xlabel("t")
    written.append(save(fig, outdir, "quadrotors_fig18_norms.png"))
    print(f"quadrotors: |y - y_d| from {np.linalg.norm(pos[0][0] - yd[0]):.3g} to "
          f"{np.linalg.norm(pos[0][-1] - yd[-1]):.3g}; max | |q| - 1 | = {nq.max():.2e}")
    return written


if __name__ == "__main__":
    for pth in main(*sys.argv[1:2]):
        print("wrote", pth)
