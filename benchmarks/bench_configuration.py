#!/usr/bin/env python3
"""Time of ``ldr.integrate`` and ``ldr.difference`` against Pinocchio's ``integrate`` and
``difference`` for the same configurations, interleaved round by round in CPU time
(benchmarks/paired.py): medians in microseconds per call and the ratio ours / Pinocchio. ur5
(six revolute joints) and talos_reduced (free base, 32 revolute joints).

    .venv/bin/python benchmarks/bench_configuration.py [--rounds 15] [--number 2000]
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "test"))

import pinocchio as pin  # noqa: E402

import lie_dynamics_ros as ldr  # noqa: E402
from oracle import PinMap, build_pin_model, erd  # noqa: E402
from paired import compare, print_rows  # noqa: E402

ROBOTS = [("ur5", "ur_description/urdf/ur5_robot.urdf", False),
          ("talos_reduced", "talos_data/robots/talos_reduced.urdf", True)]


def _pairs(robot, path, floating):
    model = ldr.load_urdf(path, floating_base=floating)
    pm = build_pin_model(path, floating_base=floating)
    mp = PinMap(model, pm)
    rng = np.random.default_rng(0)
    q0, q1 = ldr.random_configuration(model, rng), ldr.random_configuration(model, rng)
    v = rng.uniform(-1, 1, model.nv)
    qp0, qp1, vp = mp.q_to_pin(q0), mp.q_to_pin(q1), mp.v_to_pin(v, q0)
    dt = 0.01
    return [(robot, "integrate", lambda: ldr.integrate(model, q0, v, dt),
             lambda: pin.integrate(pm, qp0, vp * dt)),
            (robot, "difference", lambda: ldr.difference(model, q0, q1),
             lambda: pin.difference(pm, qp0, qp1))]


def rows(rounds=15, number=2000):
    """[(robot, call, ours us, Pinocchio us, median of the rounds' ratios)] (paired.py)."""
    out = []
    for robot, rel, floating in ROBOTS:
        for robot_, name, ours, theirs in _pairs(robot, erd(rel), floating):
            out.append((robot_, name) + compare(ours, theirs, rounds, number))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--number", type=int, default=2000)
    args = p.parse_args(argv)
    print_rows(rows(args.rounds, args.number), 12)


if __name__ == "__main__":
    main()
