"""Minimum kinetic-energy motion of the 7-DOF arm: the geodesic of the mass-matrix metric
(Park, Bobrow & Ploen 1995, §6) against the straight joint-space line in the same time.

Both motions go from Q0 to Q1 in DURATION seconds; the line at constant joint speed. On the
geodesic M qdd + C qd = 0, so with gravity compensation g(q) the arm needs no further torque
and its kinetic energy stays constant; the line needs tau - g = C(q, qd) qd and its energy
varies. The script prints the action int qd^T M qd dt (Park's objective) of both, the energy
drift, the largest torque beyond gravity and the curvature met along the way, and draws the
joint paths, the kinetic energy, the torque beyond gravity and the scalar curvature of the
metric along both paths.

    python examples/geodesics.py [outdir]      # default out/, a few seconds
"""
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # checkout

import lie_dynamics_ros as ldr  # noqa: E402
from examples._figures import save  # noqa: E402

Q0 = np.array([0.0, -0.3, 0.2, -2.0, 0.1, 1.6, 0.4])
Q1 = np.array([0.8, 0.2, -0.4, -1.2, 0.9, 2.2, -0.6])
DURATION = 1.5      # s


def straight_line(t, q0, q1, T):
    s = (t / T)[:, None]
    qd = np.repeat(((q1 - q0) / T)[None], len(t), axis=0)
    return q0 + s * (q1 - q0), qd, np.zeros_like(qd)


def compare(model, q0=Q0, q1=Q1, T=DURATION):
    """{name: numbers} for the geodesic and the line, and the sampled motions."""
    g = ldr.geodesic(model, q0, q1, T)
    ql, vl, al = straight_line(g.t, q0, q1, T)
    grav = ldr.gravity_torques(model, g.q), ldr.gravity_torques(model, ql)
    # the geodesic's acceleration from its sampled velocities (not g.a, which is FD(q, v, 0)
    # and so would give zero by construction)
    a_g = np.gradient(g.v, g.t, axis=0, edge_order=2)
    tau_g = ldr.inverse_dynamics(model, g.q, g.v, a_g) - grav[0]      # beyond gravity
    tau_l = ldr.inverse_dynamics(model, ql, vl, al) - grav[1]
    e_l = 0.5 * np.einsum("ni,nij,nj->n", vl, ldr.mass_matrix(model, ql), vl)
    curv = (np.array([ldr.scalar_curvature(model, q) for q in g.q]),
            np.array([ldr.scalar_curvature(model, q) for q in ql]))
    numbers = {
        "action geodesic": g.action,
        "action line": ldr.path_action(model, g.t, ql, vl),
        "energy drift geodesic": g.energy_drift,
        "energy drift line": float(np.ptp(e_l) / e_l.mean()),
        "max |tau - g| geodesic (N m)": float(np.abs(tau_g).max()),
        "max |tau - g| line (N m)": float(np.abs(tau_l).max()),
        "max |tau| geodesic (N m)": float(np.abs(tau_g + grav[0]).max()),
        "max |tau| line (N m)": float(np.abs(tau_l + grav[1]).max()),
        "end-point error (rad)": g.endpoint_error,
        "residual (N m)": g.residual,
    }
    motions = dict(t=g.t, q=(g.q, ql), energy=(g.energy, e_l), tau=(tau_g, tau_l),
                   curvature=curv)
    return numbers, motions


def main(outdir=os.path.join(ROOT, "out")):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    model = ldr.load_urdf("arm7")
    numbers, m = compare(model)
    for k, val in numbers.items():
        print(f"{k:32s} {val:.6g}")
    t = m["t"]
    fig, ax = plt.subplots(2, 2, figsize=(11, 7))
    for k in range(model.nv):
        line, = ax[0, 0].plot(t, m["q"][0][:, k], label=model.joint_names[k])
        ax[0, 0].plot(t, m["q"][1][:, k], "--", color=line.get_color())
    ax[0, 0].set(title="joint paths: geodesic (solid), line (dashed)", xlabel="t (s)",
                 ylabel="q (rad)")
    ax[0, 0].legend(fontsize=7, ncol=2)
    ax[0, 1].plot(t, m["energy"][0], label="geodesic")
    ax[0, 1].plot(t, m["energy"][1], "--", label="line")
    ax[0, 1].set(title="kinetic energy", xlabel="t (s)", ylabel="J")
    ax[0, 1].legend()
    for k, style in ((0, "-"), (1, "--")):
        ax[1, 0].plot(t, np.linalg.norm(m["tau"][k], axis=1), style,
                      label="geodesic" if k == 0 else "line")
        ax[1, 1].plot(t, m["curvature"][k], style, label="geodesic" if k == 0 else "line")
    ax[1, 0].set(title="torque beyond gravity compensation |tau - g(q)|", xlabel="t (s)",
                 ylabel="N m")
    ax[1, 0].legend()
    ax[1, 1].set(title="scalar curvature of M along the path", xlabel="t (s)",
                 ylabel="1 / (kg m^2)")
    ax[1, 1].legend()
    os.makedirs(outdir, exist_ok=True)
    path = save(fig, outdir, "geodesics.png")
    print("wrote", path)
    return numbers, path


if __name__ == "__main__":
    main(*sys.argv[1:])
