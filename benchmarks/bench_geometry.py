#!/usr/bin/env python3
"""Time of the configuration-space geometry (docs/geometry.md): the second derivatives of M,
the curvature tensor (Park et al. 1995, eq. 66) and a geodesic, on the bundled 2R arm and
7-DOF arm. Pinocchio has no counterpart, so only our times: the minimum over the rounds,
milliseconds per call.

    .venv/bin/python benchmarks/bench_geometry.py [--rounds 10] [--number 20]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import lie_dynamics_ros as ldr  # noqa: E402
from examples.geodesics import Q0, Q1, DURATION  # noqa: E402

CASES = [("planar_2r", np.array([0.0, 0.3]), np.array([1.5, 2.0]), 1.0),
         ("arm7", Q0, Q1, DURATION)]


def _min_ms(f, rounds, number):
    f()                                   # compile / warm the caches first
    best = np.inf
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(number):
            f()
        best = min(best, (time.perf_counter() - t0) / number)
    return 1e3 * best


def rows(rounds=10, number=20):
    """[(robot, call, ms)]."""
    out = []
    for name, q0, q1, T in CASES:
        model = ldr.load_urdf(name)
        calls = [("mass_matrix_second_derivatives",
                  lambda: ldr.mass_matrix_second_derivatives(model, q0)),
                 ("curvature_tensor", lambda: ldr.curvature_tensor(model, q0)),
                 ("geodesic (with the conjugate-point check)",
                  lambda: ldr.geodesic(model, q0, q1, T))]
        for call, f in calls:
            n = max(1, number // 10) if call.startswith("geodesic") else number
            out.append((name, call, _min_ms(f, rounds if n == number else 3, n)))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--number", type=int, default=20)
    args = p.parse_args(argv)
    print(f"{'robot':10s} {'call':44s} {'ms':>9s}")
    for robot, call, ms in rows(args.rounds, args.number):
        print(f"{robot:10s} {call:44s} {ms:9.3f}")


if __name__ == "__main__":
    main()
