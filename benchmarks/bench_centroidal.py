#!/usr/bin/env python3
"""Time of the centroidal quantities and of M^-1 (``ldr.center_of_mass``,
``center_of_mass_jacobian``, ``centroidal_momentum``, ``centroidal_momentum_matrix``, its time
variation and ``mass_matrix_inverse``) against Pinocchio's Python calls for the same state
(``centerOfMass``, ``jacobianCenterOfMass``, ``computeCentroidalMomentum``, ``ccrba``,
``dccrba``, ``computeMinverse``, each recomputing its kinematics as ours do), interleaved round
by round: the median over the rounds, microseconds per call, and the ratio ours / Pinocchio as
the median of the rounds' ratios (both sides of a round run back to back, so a machine shared
with other work slows both alike). Times are the process's CPU time (``time.process_time``),
which leaves out the time the process waits for a core on a busy machine.

    .venv/bin/python benchmarks/bench_centroidal.py [--rounds 31] [--number 1000]
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


def _pairs(path, floating):
    model = ldr.load_urdf(path, floating_base=floating)
    pm = build_pin_model(path, floating_base=floating)
    pd = pm.createData()
    rng = np.random.default_rng(0)
    q = ldr.random_configuration(model, rng)
    v, a = rng.uniform(-1, 1, model.nv), rng.uniform(-1, 1, model.nv)
    mp = PinMap(model, pm)
    qp, vp, ap = mp.q_to_pin(q), mp.v_to_pin(v, q), mp.a_to_pin(a, q, v)
    return [
        ("center_of_mass (q)", lambda: ldr.center_of_mass(model, q),
         lambda: pin.centerOfMass(pm, pd, qp)),
        ("center_of_mass (q, v, a)", lambda: ldr.center_of_mass(model, q, v, a),
         lambda: pin.centerOfMass(pm, pd, qp, vp, ap)),
        ("center_of_mass_jacobian", lambda: ldr.center_of_mass_jacobian(model, q),
         lambda: pin.jacobianCenterOfMass(pm, pd, qp)),
        ("centroidal_momentum", lambda: ldr.centroidal_momentum(model, q, v),
         lambda: pin.computeCentroidalMomentum(pm, pd, qp, vp)),
        ("centroidal_momentum_matrix (ccrba)", lambda: ldr.centroidal_momentum_matrix(model, q),
         lambda: pin.ccrba(pm, pd, qp, vp)),
        ("..._time_variation (dccrba)",
         lambda: ldr.centroidal_momentum_matrix_time_variation(model, q, v),
         lambda: pin.dccrba(pm, pd, qp, vp)),
        ("mass_matrix_inverse (computeMinverse)", lambda: ldr.mass_matrix_inverse(model, q),
         lambda: pin.computeMinverse(pm, pd, qp)),
        ("  for scale: inv(mass_matrix)", lambda: np.linalg.inv(ldr.mass_matrix(model, q)),
         lambda: pin.computeMinverse(pm, pd, qp)),
    ]


def rows(rounds=31, number=1000):
    """[(robot, call, ours us, Pinocchio us, median of the rounds' ratios)]."""
    out = []
    for robot, rel, floating in ROBOTS:
        for name, ours, theirs in _pairs(erd(rel), floating):
            out.append((robot, name) + compare(ours, theirs, rounds, number))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=31)
    p.add_argument("--number", type=int, default=1000)
    args = p.parse_args(argv)
    print_rows(rows(args.rounds, args.number), 40)


if __name__ == "__main__":
    main()
