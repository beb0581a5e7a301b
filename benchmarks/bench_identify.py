#!/usr/bin/env python3
"""Benchmark of identification on the bundled 7-DOF arm (``urdf/arm7.urdf``), per 10^5 samples
(one run, same samples for both):

    stacking           ours: the identification regressor of every sample (``ldr.regressor``
                       rows plus damping and Coulomb columns), as one array
    stacking + reduce  ours: the same, chunk by chunk, reduced to each joint's QR factor
                       (the bounded-memory path; ``identification/reduction.py``)
    identify           ours: ``ldr.identify`` end to end (stacking, reduction, base
                       parameters, weights, physically consistent solve, report)
    Pinocchio          a Python loop over ``pin.computeJointTorqueRegressor`` for the same
                       samples, stacked into one array (Pinocchio has no identification)

It prints seconds per 10^5 samples (median over the repeats, ours and Pinocchio's
interleaved) and each of ours against Pinocchio's loop. ``make bench`` runs it.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import lie_dynamics_ros as ldr  # noqa: E402
from lie_dynamics_ros.identification.reduction import reduce_samples  # noqa: E402
from lie_dynamics_ros.identification.regressors import stacked_regressor  # noqa: E402

try:  # Pinocchio is a reference here, never a dependency of the package
    import pinocchio as pin
except Exception:  # pragma: no cover - Pinocchio not installed
    pin = None

PER = 100_000


def samples(model, n, seed=0, harmonics=5, f0=0.1):
    """A random sum of sines within the joint ranges, at 1 kHz: q, v, a (n, nv)."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) * 1e-3
    lo, hi = model.lower_limits, model.upper_limits
    mid, amp = 0.5 * (lo + hi), 0.35 * (hi - lo) / harmonics
    q = np.tile(mid, (n, 1))
    v, a = np.zeros_like(q), np.zeros_like(q)
    for k in range(1, harmonics + 1):
        w = 2 * np.pi * f0 * k
        c, s = rng.standard_normal((2, model.nv)) * amp
        sn, cs = np.sin(w * t)[:, None], np.cos(w * t)[:, None]
        q += c * sn + s * cs
        v += w * (c * cs - s * sn)
        a -= w * w * (c * sn + s * cs)
    return q, v, a


def pin_stack(pm, pd, q, v, a):
    Y = np.empty((q.shape[0], pm.nv, 10 * (pm.njoints - 1)))
    for k in range(q.shape[0]):
        Y[k] = pin.computeJointTorqueRegressor(pm, pd, q[k], v[k], a[k])
    return Y.reshape(-1, Y.shape[2])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=PER, help="samples per run (default 10^5)")
    ap.add_argument("--repeat", type=int, default=3, help="repeats (median reported)")
    args = ap.parse_args()
    path = os.path.join(ROOT, "urdf", "arm7.urdf")
    model = ldr.load_urdf(path).with_joint_dynamics(damping=np.full(7, 0.5),
                                                     friction=np.full(7, 1.0))
    n = args.samples
    q, v, a = samples(model, n)
    tau = ldr.inverse_dynamics(model, q, v, a) + ldr.friction_torques(model, v)
    tau += 0.01 * np.std(tau, axis=0) * np.random.default_rng(1).standard_normal(tau.shape)

    ours = {
        "stacking": lambda: stacked_regressor(model, q, v, a, True, False),
        "stacking + reduce": lambda: reduce_samples(model, q, v, a, tau, True, False),
        "identify": lambda: ldr.identify(model, q, v, a, tau),
    }
    fns = dict(ours)
    if pin is not None:
        pm = pin.buildModelFromUrdf(path)
        pd = pm.createData()
        assert list(pm.names)[1:] == list(model.joint_names), "joint orders differ"
        Y_pin = pin_stack(pm, pd, q[:50], v[:50], a[:50])
        Y_ours = stacked_regressor(model, q[:50], v[:50], a[:50], False, False)
        err = np.abs(Y_pin - Y_ours).max()
        fns["Pinocchio loop"] = lambda: pin_stack(pm, pd, q, v, a)

    print("lie_dynamics_ros identification benchmark: arm7 (nv 7, 70 inertial + 14 friction "
          "columns), %d samples per run, median of %d runs, seconds per 10^5 samples"
          % (n, args.repeat))
    for fn in fns.values():             # warm-up: numba compilation, caches
        fn()
    runs = {k: [] for k in fns}
    for _ in range(args.repeat):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            runs[k].append(time.perf_counter() - t0)
    per = {k: statistics.median(r) * PER / n for k, r in runs.items()}
    ref = per.get("Pinocchio loop")
    hdr = "%-22s %14s %14s" % ("", "s / 10^5", "ours / pin")
    print(hdr)
    print("-" * len(hdr))
    for k, t in per.items():
        ratio = "%14.2f" % (t / ref) if ref and k != "Pinocchio loop" else "%14s" % "-"
        print("%-22s %14.3f %s" % (k, t, ratio))
    if pin is None:
        print("  (pinocchio not installed: no reference timing)")
    else:
        print("  (same regressor: max |Y_ours - Y_pin| %.1e over 50 samples)" % err)


if __name__ == "__main__":
    main()
