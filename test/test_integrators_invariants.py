"""Invariants, energy behaviour and variable steps (Celledoni et al. 2021, Figs. 3, 6–8, 11, 18).
"""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from examples import heavy_top, quadrotors, spherical_pendulum as pend  # noqa: E402
from lie_dynamics_ros.integrators import StepSizeController, solve  # noqa: E402


# ----------------------------------------------------------------------------- pendulum
@pytest.fixture(scope="module")
def pendulum_runs():
    """N = 2 on [0, 5] with h = 0.01: Lie group methods and classical RK4 in R^12 (Figs. 6–7).

    Non-planar IC: the paper's IC keeps the motion planar, where q_i . w_i = 0 holds exactly
    for every integrator."""
    p = pend.PendulumParams.uniform(2)
    y0 = pend.generic_initial_condition(2)
    T, n = 5.0, 500
    sp, f = pend.space(2), pend.make_f(p)
    runs = {m: solve(sp, f, y0, (0, T), h=T / n, method=m).y
            for m in ("lie_euler", "lie_euler_heun", "rkmk3", "rkmk4", "rkmk4_2c", "cf4")}
    rk4 = pend.classical_rk4(pend.make_vector_field(p), y0, T, n)
    return runs, rk4


def _drift(Y):
    res = np.array([pend.constraint_residuals(y, 2) for y in Y])
    return res[:, 0].max(), res[:, 1].max()


@pytest.mark.parametrize("method", ["lie_euler", "lie_euler_heun", "rkmk3", "rkmk4",
                                    "rkmk4_2c", "cf4"])
def test_pendulum_lie_methods_stay_on_TS2(pendulum_runs, method):
    """| |q_i| - 1 | and |q_i . w_i| stay at round-off (~1e-14) for 500 steps."""
    runs, _ = pendulum_runs
    dq, qw = _drift(runs[method])
    assert dq < 5e-14, dq
    assert qw < 5e-14, qw


def test_pendulum_classical_rk4_drifts(pendulum_runs):
    """Classical RK4 in R^12 leaves TS^2 x TS^2: the gap to the Lie methods is > 1e5."""
    runs, rk4 = pendulum_runs
    dq, qw = _drift(rk4)
    lie = max(max(_drift(Y)) for Y in runs.values())
    assert dq > 1e-9 and qw > 1e-9, (dq, qw)
    assert min(dq, qw) > 1e5 * lie


def test_variable_step_wins_for_two_pendulums():
    """RKMK(5,4) with tol 1e-6 vs constant-step RKMK5 with as many steps, T = 3, N = 2 (Fig. 8):
    variable step wins by more than a factor 10, and the step shrinks near the spike of
    w_i^(2) (t ~ 2.25 with g = 9.81; the paper reports t ~ 2.2, Fig. 11)."""
    r = pend.variable_vs_constant(2, T=3.0, tol=1e-6)
    assert r["err_variable"] < 0.1 * r["err_constant"], r
    assert r["err_variable"] < 1e-3
    t, h = r["t"][1:], r["h"]
    body = (t > 0.5) & (t < t[-1] - 1e-9)       # after the start-up, without the last step
    t_min = t[body][np.argmin(h[body])]
    assert 2.0 <= t_min <= 2.45, t_min
    assert h[body].min() < 0.5 * np.median(h), (h[body].min(), np.median(h))


def test_variable_step_twenty_pendulums():
    """N = 20 (Fig. 8): both errors small; adaptivity helps much less than for N = 2."""
    r20 = pend.variable_vs_constant(20, T=3.0, tol=1e-6)
    assert r20["err_variable"] < 1e-3 and r20["err_constant"] < 1e-3, r20
    gain20 = r20["err_constant"] / r20["err_variable"]
    r2 = pend.variable_vs_constant(2, T=3.0, tol=1e-6)
    gain2 = r2["err_constant"] / r2["err_variable"]
    assert gain20 < 0.1 * gain2, (gain20, gain2)


def test_step_size_controller_formula():
    """h_new = theta (tol/e)^alpha h, alpha = 1/(1 + min(p, p~)) (eq. 33 and the algorithm)."""
    c = StepSizeController(5, 4, theta=0.9)
    assert c.alpha == pytest.approx(1 / 5)
    assert c.propose(0.1, 1.0 / 32.0) == pytest.approx(0.1 * 0.9 * 2.0)
    assert c.propose(0.1, 32.0) == pytest.approx(0.1 * 0.9 / 2.0)
    assert c.propose(0.1, 0.0) == pytest.approx(0.1 * c.fac_max)


# ----------------------------------------------------------------------------- heavy top
def test_heavy_top_no_energy_drift():
    """SLGI theta = 1/2, h = 0.01, 6000 steps (Fig. 3): bounded oscillation of H, no drift.

    Measured: max |H - H0| = 0.169 (H0 = 5276, relative 3e-5), the linear fit of H - H0 over
    t in [0, 60] has slope -1.4e-6 per unit time (8.6e-5 over the run)."""
    top = heavy_top.HeavyTop()
    t, dE, r = heavy_top.energy_history(top, 0.01, 6000, 0.5)
    E0 = top.energy(top.Q0, top.pi0)
    assert np.max(np.abs(dE)) < 1e-4 * abs(E0), (np.max(np.abs(dE)), E0)
    slope, _ = np.polyfit(t, dE, 1)
    assert abs(slope) * t[-1] < 0.01 * np.max(np.abs(dE)), slope
    n = len(dE)
    assert abs(np.abs(dE[n // 2:]).max() - np.abs(dE[:n // 2]).max()) < 0.01 * np.abs(dE).max()
    Q = r.g[-1]
    assert np.abs(Q.T @ Q - np.eye(3)).max() < 1e-12


# ----------------------------------------------------------------------------- quadrotors
def test_quadrotors_invariants_and_tracking():
    """RKMK4, h = 0.01 on [0, 5] (Figs. 15–18): |q_i| = 1, q_i . w_i = 0 and R_i^T R_i = I to
    round-off, and the load converges to the parabolic reference."""
    model = quadrotors.Quadrotors()
    sol = quadrotors.simulate(model, 5.0, 0.01)
    res = np.array([quadrotors.residuals(P) for P in sol.y])
    assert res.max() < 1e-13, res.max(axis=0)
    e = [np.linalg.norm(P[:3] - model.y_d(t)) for t, P in zip(sol.t, sol.y)]
    assert e[0] > 0.3
    assert e[-1] < 0.03 * e[0], (e[0], e[-1])
    _, q_d = model.thrusts(sol.t[-1], sol.y[-1])
    assert sol.y[-1][quadrotors.SL["q1"]] @ q_d[0] > 0.999
    assert sol.y[-1][quadrotors.SL["q2"]] @ q_d[1] > 0.999


def test_quadrotors_classical_rk4_leaves_manifold():
    """The same run with classical RK4 in R^42 drifts off S^2 and SO(3)."""
    model = quadrotors.Quadrotors()
    P0 = model.initial_state()
    F = model.vector_field
    P = P0.copy()
    h = 0.01
    worst = 0.0
    for k in range(200):
        t = k * h
        k1 = F(t, P)
        k2 = F(t + h / 2, P + h / 2 * k1)
        k3 = F(t + h / 2, P + h / 2 * k2)
        k4 = F(t + h, P + h * k3)
        P = P + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        worst = max(worst, max(quadrotors.residuals(P)))
    assert worst > 1e-11
