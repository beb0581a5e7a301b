"""N-fold 3D (spherical) pendulum on (TS^2)^N (Celledoni et al. 2021, §5).

State y = (q_1, w_1, ..., q_N, w_N), |q_i| = 1, w_i . q_i = 0, q_i' = w_i x q_i.  The group
SE(3)^N acts by the adjoint action restricted to TS^2 (``TS2Space``) and

    f(q, w) = (w_1, q_1 x h_1, ..., w_N, q_N x h_N),   h = R(q)^{-1} [rhs]_i  (projected on T_q S^2)

R_ii = (sum_{j>=i} m_j) L_i^2 I,  R_ij = (sum_{k>=j} m_k) L_i L_j hat(q_i)^T hat(q_j) (i < j),
rhs_i = sum_{j != i} M_ij |w_j|^2 q_i x q_j - (sum_{j>=i} m_j) g L_i q_i x e3, e3 up.
g is not stated in the paper; we use 9.81.

Run ``python examples/spherical_pendulum.py [outdir]`` for the figures of §5.3 (Figs. 5–9, 11).
"""
import os
import sys
import time
from dataclasses import dataclass

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # checkout

from examples._figures import save  # noqa: E402
from lie_dynamics_ros.integrators import TS2Space, solve  # noqa: E402
from lie_dynamics_ros.integrators.adaptive import solve_adaptive  # noqa: E402
from lie_dynamics_ros.integrators.solve import get_method  # noqa: E402

E3 = np.array([0.0, 0.0, 1.0])


@dataclass
class PendulumParams:
    N: int
    m: np.ndarray
    L: np.ndarray
    g: float = 9.81

    @classmethod
    def uniform(cls, N, m=1.0, L=1.0, g=9.81):
        return cls(int(N), np.full(N, float(m)), np.full(N, float(L)), float(g))

    @property
    def tail_mass(self):
        """sum_{j>=i} m_j."""
        return np.cumsum(self.m[::-1])[::-1]

    @property
    def M(self):
        """M_ij = (sum_{k>=max(i,j)} m_k) L_i L_j (scalar factor of the 3x3 blocks)."""
        tm = self.tail_mass
        idx = np.arange(self.N)
        C = tm[np.maximum.outer(idx, idx)]
        return C * np.outer(self.L, self.L)


def initial_condition(N):
    """The paper's IC: (q_i, w_i) = (sqrt2/2, 0, sqrt2/2, 0, 1, 0) for every i."""
    s = np.sqrt(2.0) / 2.0
    return np.tile([s, 0.0, s, 0.0, 1.0, 0.0], N)


def generic_initial_condition(N, seed=0):
    """A non-planar IC on (TS^2)^N (random directions, w_i projected on T_{q_i} S^2).

    The paper's IC above keeps the motion in the x-z plane (q_i . w_i = 0 exactly for any
    integrator), and it does not state the IC of its Figs. 6-7, so those use this one."""
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(N, 3))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    w = rng.normal(size=(N, 3))
    w -= np.sum(w * q, axis=1, keepdims=True) * q
    return np.concatenate([q, w], axis=1).ravel()


def space(N):
    return TS2Space(N)


def _split(y, N):
    Y = np.asarray(y).reshape(N, 6)
    return Y[:, :3], Y[:, 3:]


def angular_accelerations(p: PendulumParams, y):
    """h_i = w_i' (projected on T_{q_i} S^2), shape (N, 3)."""
    N = p.N
    q, w = _split(y, N)
    M = p.M
    dots = q @ q.T
    # blocks hat(q_i)^T hat(q_j) = (q_i.q_j) I - q_j q_i^T
    R = (M * dots)[:, None, :, None] * np.eye(3)[None, :, None, :] \
        - M[:, None, :, None] * np.einsum("ja,ib->iajb", q, q)
    for i in range(N):
        R[i, :, i, :] = M[i, i] * np.eye(3)
    R = R.reshape(3 * N, 3 * N)
    w2 = np.sum(w * w, axis=1)
    Mw = M * w2[None, :]
    np.fill_diagonal(Mw, 0.0)
    rhs = np.cross(q, Mw @ q) - (p.tail_mass * p.g * p.L)[:, None] * np.cross(q, E3)
    h = np.linalg.solve(R, rhs.ravel()).reshape(N, 3)
    return h - np.sum(h * q, axis=1, keepdims=True) * q


def make_f(p: PendulumParams):
    """f: (TS^2)^N -> se(3)^N, f(t, y) = (w_i, q_i x h_i)_i."""
    N = p.N

    def f(t, y):
        q, w = _split(y, N)
        h = angular_accelerations(p, y)
        return np.concatenate([w, np.cross(q, h)], axis=1).ravel()
    return f


def make_vector_field(p: PendulumParams):
    """Classical F(t, y) in R^{6N} (q_i' = w_i x q_i, w_i' = h_i) for RK4 / solve_ivp."""
    N = p.N

    def F(t, y):
        q, w = _split(y, N)
        h = angular_accelerations(p, y)
        return np.concatenate([np.cross(w, q), h], axis=1).ravel()
    return F


def energy(p: PendulumParams, y):
    q, w = _split(y, p.N)
    v = np.cross(w, q)
    T = 0.5 * np.sum(p.M * (v @ v.T))
    U = np.sum(p.tail_mass * p.g * p.L * q[:, 2])
    return T + U


def constraint_residuals(y, N):
    """(| |q_i| - 1 |, |q_i . w_i|) maxima over i."""
    q, w = _split(y, N)
    return (float(np.max(np.abs(np.linalg.norm(q, axis=1) - 1.0))),
            float(np.max(np.abs(np.sum(q * w, axis=1)))))


def reference_solution(p, y0, T, t_eval=None, rtol=1e-13, atol=1e-13):
    """Strict-tolerance DOP853 in R^{6N} (the paper uses a strict ODE45)."""
    from scipy.integrate import solve_ivp
    sol = solve_ivp(make_vector_field(p), (0.0, T), y0, method="DOP853", rtol=rtol, atol=atol,
                    t_eval=t_eval, dense_output=t_eval is None)
    return sol


def classical_rk4(F, y0, T, n, project=None, trajectory=True):
    """Classical RK4 in the ambient space (optionally projecting after every step). Returns
    every state, or only the last with ``trajectory=False``."""
    h = T / n
    y = np.array(y0, dtype=float)
    ys = [y.copy()]
    t = 0.0
    for _ in range(n):
        k1 = F(t, y)
        k2 = F(t + h / 2, y + h / 2 * k1)
        k3 = F(t + h / 2, y + h / 2 * k2)
        k4 = F(t + h, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        if project is not None:
            y = project(y)
        t += h
        if trajectory:
            ys.append(y.copy())
    return np.array(ys) if trajectory else y


ORDER_METHODS = [("lie_euler", 1), ("lie_euler_heun", 2), ("rkmk4", 4), ("rkmk4_trunc", 4),
                 ("rkmk4_2c", 4), ("rkmk3", 3)]


def convergence(p, y0, T, methods=ORDER_METHODS, steps=(50, 100, 200, 400), ref=None):
    """Global errors at T (Euclidean norm in R^{6N}) for each method and number of steps.

    Returns (hs, {name: errors}, {name: slope fitted on the three smallest h})."""
    if ref is None:
        ref = reference_solution(p, y0, T).sol(T)
    sp, f = space(p.N), make_f(p)
    hs = np.array([T / n for n in steps])
    errs, slopes = {}, {}
    for name, _ in methods:
        e = []
        for n in steps:
            sol = solve(sp, f, y0, (0.0, T), h=T / n, method=name)
            e.append(np.linalg.norm(sol.y[-1] - ref))
        errs[name] = np.array(e)
        slopes[name] = float(np.polyfit(np.log(hs[-3:]), np.log(errs[name][-3:]), 1)[0])
    return hs, errs, slopes


def variable_vs_constant(N, T=3.0, tol=1e-6, L=None):
    """RKMK(5,4) with tol vs constant-step RKMK5 with the same number of steps (Fig. 8).

    Returns dict with errors at T, step counts, the adaptive time grid and step sizes."""
    p = PendulumParams.uniform(N) if L is None else PendulumParams(N, np.ones(N),
                                                                   np.full(N, float(L)))
    y0 = initial_condition(N)
    sp, f = space(N), make_f(p)
    ref = reference_solution(p, y0, T).sol(T)
    t0 = time.perf_counter()
    ad = solve_adaptive(sp, f, y0, (0.0, T), get_method("rkmk45"), tol=tol)
    t_ad = time.perf_counter() - t0
    n = len(ad.h)
    t0 = time.perf_counter()
    cs = solve(sp, f, y0, (0.0, T), h=T / n, method="rkmk5")
    t_cs = time.perf_counter() - t0
    return dict(N=N, n_steps=n, n_reject=ad.nreject,
                err_variable=float(np.linalg.norm(ad.y[-1] - ref)),
                err_constant=float(np.linalg.norm(cs.y[-1] - ref)),
                t=ad.t, h=ad.h, y=ad.y, t_const=cs.t, y_const=cs.y,
                time_variable=t_ad, time_constant=t_cs)


# ----------------------------------------------------------------------------- figures
def main(outdir="out/figures"):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(outdir, exist_ok=True)
    written = []

    # Fig. 5: convergence, N = 2
    p = PendulumParams.uniform(2)
    y0 = initial_condition(2)
    T = 1.0
    hs, errs, slopes = convergence(p, y0, T, steps=(25, 50, 100, 200, 400, 800, 1600))
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for name, order in ORDER_METHODS:
        ax.loglog(hs, errs[name], "o-", label=f"{name} (slope {slopes[name]:.2f}, p={order})")
    ax.set_xlabel("h")
    ax.set_ylabel("global error at T = 1")
    ax.set_title("N = 2 spherical pendulum: convergence (Fig. 5)")
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    written.append(save(fig, outdir, "pendulum_fig5_orders.png"))
    print("pendulum orders:", {k: round(v, 3) for k, v in slopes.items()})

    # Figs. 6-7: invariants on [0, 5], N = 2 (non-planar IC, see generic_initial_condition)
    T, n = 5.0, 500
    y0 = generic_initial_condition(2)
    sp, f, F = space(2), make_f(p), make_vector_field(p)
    ts = np.linspace(0, T, n + 1)
    runs = {m: solve(sp, f, y0, (0, T), h=T / n, method=m).y
            for m in ("lie_euler", "lie_euler_heun", "rkmk4", "rkmk4_2c", "rkmk3")}
    runs["RK4 (classical)"] = classical_rk4(F, y0, T, n)
    ref = reference_solution(p, y0, T, t_eval=ts, rtol=1e-6, atol=1e-6)   # ODE45-like
    runs["RK45 (scipy, tol 1e-6)"] = ref.y.T
    fig6, axs6 = plt.subplots(1, 2, figsize=(10, 4))
    fig7, axs7 = plt.subplots(1, 2, figsize=(10, 4))
    for name, Y in runs.items():
        Yr = Y.reshape(len(Y), 2, 6)
        for i in range(2):
            dq = np.abs(1.0 - np.sum(Yr[:, i, :3] ** 2, axis=1)) + 1e-18
            qw = np.abs(np.sum(Yr[:, i, :3] * Yr[:, i, 3:], axis=1)) + 1e-18
            axs6[i].semilogy(ts[:len(Y)], dq, label=name)
            axs7[i].semilogy(ts[:len(Y)], qw, label=name)
    for i in range(2):
        axs6[i].set_title(f"|1 - q_{i + 1}^T q_{i + 1}| (Fig. 6)")
        axs7[i].set_title(f"|q_{i + 1}^T w_{i + 1}| (Fig. 7)")
        for a in (axs6[i], axs7[i]):
            a.set_xlabel("t")
            a.legend(fontsize=6)
    written.append(save(fig6, outdir, "pendulum_fig6_sphere.png"))
    written.append(save(fig7, outdir, "pendulum_fig7_tangent.png"))

    # Fig. 8 / 10: variable vs constant step at T = 3
    Ns = [2, 4, 8, 12, 16, 20]
    res = [variable_vs_constant(N) for N in Ns]
    res10 = [variable_vs_constant(N, L=5.0 / N) for N in Ns]
    for tag, rr, fname in (("L_i = 1", res, "pendulum_fig8_variable_vs_constant.png"),
                           ("L_i = 5/N", res10, "pendulum_fig10_variable_vs_constant_L5N.png")):
        fig, axs = plt.subplots(1, 2, figsize=(11, 4))
        axs[0].semilogy(Ns, [r["err_variable"] for r in rr], "o-", label="RKMK(5,4), tol 1e-6")
        axs[0].semilogy(Ns, [r["err_constant"] for r in rr], "s-",
                        label="RKMK5, same number of steps")
        axs[0].set_xlabel("N")
        axs[0].set_ylabel("error at T = 3")
        axs[0].legend()
        axs[0].set_title(f"Variable vs constant step ({tag})")
        r20 = rr[-1]
        axs[1].semilogy(r20["t"][1:], r20["h"], ".-")
        axs[1].set_xlabel("t")
        axs[1].set_ylabel("h")
        axs[1].set_title(f"RKMK(5,4) step size, N = 20 ({tag})")
        written.append(save(fig, outdir, fname))
        for r in rr:
            print(f"{tag} N={r['N']:2d} steps={r['n_steps']:5d} variable={r['err_variable']:.3e} "
                  f"constant={r['err_constant']:.3e}")

    # Figs. 9 and 11: N = 2 in detail
    y0 = initial_condition(2)
    r2 = res[0]
    ts = np.linspace(0, 3, 1201)
    ref = reference_solution(p, y0, 3.0, t_eval=ts)
    fig, axs = plt.subplots(2, 6, figsize=(16, 5), sharex=True)
    labels = ["q1", "q2", "q3", "w1", "w2", "w3"]
    for i in range(2):
        for k in range(6):
            a = axs[i, k]
            a.plot(ts, ref.y[6 * i + k], "k-", lw=0.8, label="reference")
            a.plot(r2["t"], r2["y"][:, 6 * i + k], "r.", ms=2, label="RKMK(5,4)")
            a.plot(r2["t_const"], r2["y_const"][:, 6 * i + k], "b-", lw=0.6, label="RKMK5")
            a.set_title(f"mass {i + 1}: {labels[k]}", fontsize=8)
    axs[0, 0].legend(fontsize=6)
    written.append(save(fig, outdir, "pendulum_fig9_components.png"))

    F2 = make_vector_field(p)
    wdot = np.array([F2(0, ref.y[:, k]) for k in range(len(ts))])
    fig, axs = plt.subplots(1, 3, figsize=(15, 4))
    axs[0].semilogy(r2["t"][1:], r2["h"], "r.-", label="RKMK(5,4) tol 1e-6")
    axs[0].axhline(3.0 / r2["n_steps"], color="b", label="RKMK5 constant")
    axs[0].axvline(2.2, color="gray", ls=":")
    axs[0].set_title("step size (Fig. 11a)")
    axs[0].legend()
    sel = ts >= 2.1
    for i in range(2):
        axs[1].plot(ts[sel], ref.y[6 * i + 4, sel], "k-", lw=0.8)
        m = r2["t"] >= 2.1
        axs[1].plot(r2["t"][m], r2["y"][m, 6 * i + 4], "r.")
        mc = r2["t_const"] >= 2.1
        axs[1].plot(r2["t_const"][mc], r2["y_const"][mc, 6 * i + 4], "b--")
        axs[2].plot(ts, wdot[:, 6 * i + 4], label=f"d/dt w_{i + 1}^(2)")
    axs[1].set_title("w_i^(2) on [2.1, 3] (Fig. 11b)")
    axs[2].set_title("w_i^(2)' (Fig. 11c)")
    axs[2].legend()
    written.append(save(fig, outdir, "pendulum_fig11_step_size.png"))
    return written


if __name__ == "__main__":
    for pth in main(*sys.argv[1:2]):
        print("wrote", pth)
