"""Identify a link length from a recorded trajectory: kinematic calibration with
``ldr.inverse_dynamics_parameter_derivatives`` (the use of the dynamics derivatives that Park,
Bobrow & Ploen 1995 stress).

The "robot" is arm7 with a forearm 12 mm longer than in its URDF: the y of panda_joint5's
origin is 0.396 m instead of 0.384 m. It follows a smooth excitation trajectory and we record
q, qd, qdd and the joint torques (with 0.05 N m of noise). Starting from the URDF value,
Gauss-Newton on the torque residuals r = tau_recorded - ID(q, qd, qdd; p) estimates p:

    p <- p + (g^T r) / (g^T g),   g = dtau/dp stacked over the samples,

with g the column "y" of panda_joint5 in ``inverse_dynamics_parameter_derivatives`` (the origin
translation along the parent body's y axis). The model is rebuilt from the URDF text at each
step. Prints the estimate per iteration; runs in a few seconds.

    python examples/calibrate_link_length.py
"""
import os
import re
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # checkout

import lie_dynamics_ros as ldr  # noqa: E402
from lie_dynamics_ros.algorithms.derivatives import PARAMETER_COLUMNS  # noqa: E402

JOINT = "panda_joint5"
TRUE_LENGTH = 0.396
with open(os.path.join(ROOT, "urdf", "arm7.urdf")) as fh:
    URDF = fh.read()


def arm(length):
    """arm7 with panda_joint5's origin y = length."""
    pattern = r'(<joint name="%s".*?<origin xyz=")(\S+) (\S+) (\S+)"' % JOINT
    text, n = re.subn(pattern, lambda m: f'{m.group(1)}{m.group(2)} {length!r} {m.group(4)}"',
                      URDF, count=1, flags=re.S)
    assert n == 1
    return ldr.load_urdf(text)


def recording(model, T=4.0, rate=100.0, noise=0.05, seed=0):
    """A multi-sine excitation of every joint: t, q, qd, qdd and noisy torques."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, T, 1.0 / rate)
    n = model.nv
    amp, freq, phase = rng.uniform(0.2, 0.6, n), rng.uniform(0.3, 1.0, n), rng.uniform(0, 6, n)
    center = 0.5 * (model.lower_limits + model.upper_limits)
    w = 2 * np.pi * freq
    q = center + amp * np.sin(w * t[:, None] + phase)
    qd = amp * w * np.cos(w * t[:, None] + phase)
    qdd = -amp * w ** 2 * np.sin(w * t[:, None] + phase)
    tau = ldr.inverse_dynamics(model, q, qd, qdd) + noise * rng.normal(size=q.shape)
    return t, q, qd, qdd, tau


def main():
    truth = arm(TRUE_LENGTH)
    t, q, qd, qdd, tau = recording(truth)
    col = PARAMETER_COLUMNS.index("y")          # one joint: columns 0..5
    p = float(re.search(r'<joint name="%s".*?<origin xyz="\S+ (\S+)' % JOINT, URDF, re.S).group(1))
    print(f"{len(t)} samples; URDF length {p:.6f} m, true length {TRUE_LENGTH:.6f} m")
    for it in range(6):
        model = arm(p)
        r = (tau - ldr.inverse_dynamics(model, q, qd, qdd)).ravel()
        g = np.concatenate([ldr.inverse_dynamics_parameter_derivatives(
            model, q[k], qd[k], qdd[k], joints=[JOINT])[:, col] for k in range(len(t))])
        step = float(g @ r / (g @ g))
        p += step
        print(f"iteration {it}: torque residual RMS {np.sqrt(np.mean(r ** 2)):.4f} N m, "
              f"length {p:.6f} m (error {1e3 * (p - TRUE_LENGTH):+.3f} mm)")
        if abs(step) < 1e-7:
            break
    sigma = 0.05 / np.sqrt(g @ g)
    print(f"identified {p:.6f} m, true {TRUE_LENGTH:.6f} m, standard error {1e3 * sigma:.3f} mm")


if __name__ == "__main__":
    main()
