"""Heavy top on T*SO(3) with the symplectic θ-method (Celledoni et al. 2021, §3.4).

Parameters (Celledoni et al. 2021, §3.4.4, after Brüls & Cardona 2010):
Q(0) = I, l = 2, M = 15, II = diag(0.234375, 0.46875, 0.234375),
pi(0) = II (0, 150, -4.61538), X = (0, 1, 0), Gamma0 = (0, 0, -9.81).

Reading of Gamma0.  The paper writes H = 1/2 <Pi, II^-1 Pi> + M g l Gamma.X with
Gamma0 the *upward* unit axis, but its test sets Gamma0 = (0, 0, -9.81), which contains g and
points down.  We read Gamma0 as the gravity vector g_vec = (0, 0, -9.81) m/s^2 and use the
physical potential energy of the centre of mass,

    V(Q) = -M l <Gamma0, Q X>      (= M * 9.81 * height of the COM),

so the torque is M l (Q X) x Gamma0, i.e. (21) reads  pi' = M l (Q X) x Gamma0.  The other
reading (M g l Gamma0 . Q X with Gamma0 = (0,0,-9.81), a top under upward "gravity" 9.81^2)
changes trajectories but neither the order nor the energy behaviour that the tests check.
``potential_sign=-1`` selects it.

Formulations:

* SLGI: (21)–(22) on T*SO(3) = SO(3) ⋉ so(3)* in spatial momentum pi = Q Pi; f = (dH/dpi,
  -R_Q^* dH/dQ) = (w, pi x w + M l (Q X) x Gamma0) with w = Q II^-1 Q^T pi (eq. 14).
* SLGIKK: (29)–(32) on T*(SO(3) x R^3) with the quadratic Hamiltonian
  H = 1/2 <Pi, II^-1 Pi> + 1/2 |p - Q^T Gamma0|^2 - 1/2 |Q^T Gamma0|^2 and constant p = M l X
  (our reading of p = -M g l X), which reproduces V above.

Run ``python examples/heavy_top.py [outdir]`` for Figs. 2 and 3.
"""
import os
import sys
from dataclasses import dataclass, field

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # checkout

from examples._figures import save  # noqa: E402
from lie_dynamics_ros.integrators import SO3, ProductGroup, Rn, solve_symplectic  # noqa: E402
from lie_dynamics_ros.integrators.spaces import cross3  # noqa: E402


@dataclass
class HeavyTop:
    M: float = 15.0
    l: float = 2.0
    II: np.ndarray = field(default_factory=lambda: np.diag([0.234375, 0.46875, 0.234375]))
    X: np.ndarray = field(default_factory=lambda: np.array([0.0, 1.0, 0.0]))
    Gamma0: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -9.81]))
    potential_sign: float = 1.0

    @property
    def pi0(self):
        return self.II @ np.array([0.0, 150.0, -4.61538])

    @property
    def Q0(self):
        return np.eye(3)

    def __post_init__(self):
        self.II_inv = np.linalg.inv(self.II)

    def omega(self, Q, pi):
        """Spatial angular velocity w = Q II^-1 Q^T pi (= dH/dpi)."""
        return Q @ (self.II_inv @ (Q.T @ pi))

    def torque(self, Q):
        return self.potential_sign * self.M * self.l * cross3(Q @ self.X, self.Gamma0)

    def f(self, Q, pi):
        """(f1, f2) of eq. (14) on the right-trivialised T*SO(3)."""
        w = self.omega(Q, pi)
        return w, cross3(pi, w) + self.torque(Q)

    def energy(self, Q, pi):
        w = self.omega(Q, pi)
        return 0.5 * pi @ w - self.potential_sign * self.M * self.l * self.Gamma0 @ (Q @ self.X)

    # --- SLGIKK: T*(SO(3) x R^3), g = (Q, q), mu = (pi, p)
    @property
    def p_const(self):
        return self.potential_sign * self.M * self.l * self.X

    def f_kk(self, g, mu):
        Q, _ = g
        pi, p = mu[:3], mu[3:]
        w = self.omega(Q, pi)
        f1 = np.concatenate([w, p - Q.T @ self.Gamma0])
        f2 = np.concatenate([cross3(pi, w) + cross3(Q @ p, self.Gamma0), np.zeros(3)])
        return f1, f2

    # --- classical reference
    def rhs(self, t, y):
        Q, pi = y[:9].reshape(3, 3), y[9:]
        w = self.omega(Q, pi)
        return np.concatenate([(np.cross(w[None, :], Q.T).T).ravel(), self.torque(Q)])


def reference(top: HeavyTop, T, t_eval=None, rtol=1e-13, atol=1e-12):
    """(Q(T), pi(T)) by strict DOP853 on the embedded ODE Q' = hat(w) Q, pi' = torque."""
    from scipy.integrate import solve_ivp
    y0 = np.concatenate([top.Q0.ravel(), top.pi0])
    sol = solve_ivp(top.rhs, (0.0, T), y0, method="DOP853", rtol=rtol, atol=atol, t_eval=t_eval)
    return sol


def run_slgi(top: HeavyTop, h, n, theta=0.5, **kw):
    """SLGI: θ-method on T*SO(3) (eqs. 15–17 applied to 21–22)."""
    return solve_symplectic(SO3(), top.f, top.Q0, top.pi0, h, n, theta=theta, **kw)


def run_slgikk(top: HeavyTop, h, n, theta=0.5, **kw):
    """SLGIKK: θ-method on T*(SO(3) x R^3) (eqs. 29–32)."""
    G = ProductGroup(SO3(), Rn(3))
    mu0 = np.concatenate([top.pi0, top.p_const])
    return solve_symplectic(G, top.f_kk, (top.Q0, np.zeros(3)), mu0, h, n, theta=theta, **kw)


def state_error(Q, pi, Qr, pir):
    return float(np.linalg.norm(Q - Qr) + np.linalg.norm(pi - pir) / np.linalg.norm(pir))


def order_study(top=None, T=1.0, steps=(100, 200, 400, 800), thetas=(0.0, 0.5, 1.0),
                kk=True):
    """Errors at T vs h for SLGI(θ) and SLGIKK(1/2): ({label: errors}, hs, {label: slope of the
    three smallest h})."""
    top = top or HeavyTop()
    ref = reference(top, T)
    Qr, pir = ref.y[:9, -1].reshape(3, 3), ref.y[9:, -1]
    hs = np.array([T / n for n in steps])
    errs = {}
    for th in thetas:
        e = []
        for n in steps:
            r = run_slgi(top, T / n, n, theta=th)
            e.append(state_error(r.g[-1], r.mu[-1], Qr, pir))
        errs[f"SLGI theta={th:g}"] = np.array(e)
    if kk:
        e = []
        for n in steps:
            r = run_slgikk(top, T / n, n)
            e.append(state_error(r.g[-1][0], r.mu[-1][:3], Qr, pir))
        errs["SLGIKK theta=1/2"] = np.array(e)
    # slope of the finest three step sizes (the top spins at 150 rad/s: h |w| << 1 is needed)
    slopes = {k: float(np.polyfit(np.log(hs[-3:]), np.log(v[-3:]), 1)[0])
              for k, v in errs.items()}
    return errs, hs, slopes


def energy_history(top, h=0.01, n=6000, theta=0.5, kk=False):
    r = run_slgikk(top, h, n, theta) if kk else run_slgi(top, h, n, theta)
    if kk:
        E = np.array([top.energy(g[0], mu[:3]) for g, mu in zip(r.g, r.mu)])
    else:
        E = np.array([top.energy(g, mu) for g, mu in zip(r.g, r.mu)])
    return r.t, E - E[0], r


def main(outdir="out/figures"):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(outdir, exist_ok=True)
    top = HeavyTop()
    written = []

    # Fig. 2: trajectories on [0, 1] and the order plot
    n = 200
    r = run_slgi(top, 1.0 / n, n)
    G = np.array([top.M * top.l * Q.T @ top.Gamma0 for Q in r.g])
    QX = np.array([Q @ top.X for Q in r.g])
    errs, hs, slopes = order_study(top, steps=(125, 250, 500, 1000, 2000, 4000))
    fig = plt.figure(figsize=(15, 4.5))
    ax = fig.add_subplot(131, projection="3d")
    ax.plot(*G.T)
    ax.set_title("M l Q^-1 Gamma0, SLGI theta=1/2")
    ax = fig.add_subplot(132)
    ax.plot(r.t, QX)
    ax.set_title("components of Q X")
    ax.set_xlabel("t")
    ax = fig.add_subplot(133)
    for k, v in errs.items():
        ax.loglog(hs, v, "o-", label=f"{k} (slope {slopes[k]:.2f})")
    ax.loglog(hs, 0.5 * errs["SLGI theta=0.5"][-1] * (hs / hs[-1]) ** 2, "k--", label="h^2")
    ax.set_xlabel("h")
    ax.set_ylabel("error at T = 1")
    ax.legend(fontsize=7)
    ax.set_title("order (Fig. 2)")
    written.append(save(fig, outdir, "heavy_top_fig2.png"))
    print("heavy top orders:", {k: round(v, 3) for k, v in slopes.items()})

    # Fig. 3: 6000 steps of h = 0.01, energy error for theta = 1/2 and 0
    fig = plt.figure(figsize=(15, 4.5))
    for k, th in enumerate((0.5, 0.0)):
        t, dE, rr = energy_history(top, 0.01, 6000, th)
        ax = fig.add_subplot(1, 3, k + 1)
        ax.plot(t, dE, lw=0.4)
        slope = np.polyfit(t, dE, 1)[0]
        ax.plot(t, np.polyval(np.polyfit(t, dE, 1), t), "r--", lw=1,
                label=f"linear fit, slope {slope:.2g}")
        ax.set_xlabel("t")
        ax.set_ylabel("H - H0")
        ax.set_title(f"SLGI theta = {th:g}: energy error, h = 0.01, 6000 steps (Fig. 3)",
                     fontsize=9)
        ax.legend(fontsize=8)
        print(f"theta={th:g}: max |E - E0| = {np.max(np.abs(dE)):.4g} (E0 = "
              f"{top.energy(top.Q0, top.pi0):.6g}), linear-fit slope = {slope:.3g} per unit "
              f"time, mean iterations = {rr.iterations.mean():.2f}")
        if th == 0.5:
            G = np.array([top.M * top.l * Q.T @ top.Gamma0 for Q in rr.g[:400]])
    ax = fig.add_subplot(1, 3, 3, projection="3d")
    ax.plot(*G.T, lw=0.5)
    ax.set_title("M l Q^-1 Gamma0, theta = 1/2, first 400 steps", fontsize=9)
    written.append(save(fig, outdir, "heavy_top_fig3_energy.png"))
    return written


if __name__ == "__main__":
    for pth in main(*sys.argv[1:2]):
        print("wrote", pth)
