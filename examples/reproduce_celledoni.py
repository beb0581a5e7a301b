"""Reproduce the figures of Celledoni, Çokaj, Leone, Murari, Owren (2021), "Lie group integrators
for mechanical systems", as PNG files (matplotlib, Agg backend).

    python examples/reproduce_celledoni.py [outdir]       # default out/figures

Writes
  heavy_top_fig2.png                       trajectories on [0, 1] and order plot (SLGI, SLGIKK)
  heavy_top_fig3_energy.png                energy error, h = 0.01, 6000 steps, theta = 1/2 and 0
  pendulum_fig5_orders.png                 convergence of Lie–Euler, Lie–Euler–Heun, RKMK4 x3, RKMK3
  pendulum_fig6_sphere.png                 |1 - q_i^T q_i| for Lie methods, RK4, RK45
  pendulum_fig7_tangent.png                |q_i^T w_i|
  pendulum_fig8_variable_vs_constant.png   RKMK(5,4) tol 1e-6 vs RKMK5, N = 2..20, T = 3
  pendulum_fig9_components.png             the 12 components for N = 2
  pendulum_fig10_variable_vs_constant_L5N.png  the same with L_i = 5/N
  pendulum_fig11_step_size.png             step size over time and the spike at t ~ 2.2
  quadrotors_fig13_orders.png              convergence of four RKMK methods
  quadrotors_fig14_snapshots.png, quadrotors_fig15_17_tracking.png, quadrotors_fig18_norms.png
and prints the measured numbers (orders, drifts, errors).  Takes a few minutes.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from examples import heavy_top, quadrotors, spherical_pendulum  # noqa: E402


def main(outdir="out/figures"):
    os.makedirs(outdir, exist_ok=True)
    written = []
    for mod in (heavy_top, spherical_pendulum, quadrotors):
        t0 = time.perf_counter()
        print(f"--- {mod.__name__}")
        written += mod.main(outdir)
        print(f"    ({time.perf_counter() - t0:.1f} s)")
    for p in written:
        print("wrote", p)
    return written


if __name__ == "__main__":
    main(*sys.argv[1:2])
