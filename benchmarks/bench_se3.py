#!/usr/bin/env python3
"""Time of the public SE(3) algebra (``ldr.lie.se3``: one compiled call each, argument checks
included) and of ``ldr.reduced_model``, against Pinocchio's Python calls for the same inputs
(an ``SE3``, ``Motion`` or ``Force`` built once, as a Pinocchio user holds them), interleaved
round by round: the median over the rounds, microseconds per call, and the ratio ours /
Pinocchio. One IK iteration, which chains these calls: ``bench_ik.py``.

    .venv/bin/python benchmarks/bench_se3.py [--rounds 15] [--number 2000] [--cpu]
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
sys.path.insert(0, os.path.join(ROOT, "test"))

import pinocchio as pin  # noqa: E402

import lie_dynamics_ros as ldr  # noqa: E402
from lie_dynamics_ros.lie import se3  # noqa: E402
from oracle import PinMap, build_pin_model, erd  # noqa: E402


def _per_call(f, number, clock=time.perf_counter):
    t0 = clock()
    for _ in range(number):
        f()
    return (clock() - t0) / number


def _pairs():
    r = np.random.default_rng(0)
    xi, x, F = r.normal(size=6), r.normal(size=3), r.normal(size=6)
    T = se3.exp(xi)
    M, m, f = pin.SE3(T), pin.Motion(xi), pin.Force(F)
    return [
        ("exp", lambda: se3.exp(xi), lambda: pin.exp6(xi)),
        ("log", lambda: se3.log(T), lambda: pin.log6(M)),
        ("right_jacobian (Jexp6)", lambda: se3.right_jacobian(xi), lambda: pin.Jexp6(xi)),
        ("log_jacobian (Jlog6)", lambda: se3.log_jacobian(T), lambda: pin.Jlog6(M)),
        ("act_point", lambda: se3.act_point(T, x), lambda: M.act(x)),
        ("act_inv_point", lambda: se3.act_inv_point(T, x), lambda: M.actInv(x)),
        ("act_twist", lambda: se3.act_twist(T, xi), lambda: M.act(m)),
        ("act_inv_twist", lambda: se3.act_inv_twist(T, xi), lambda: M.actInv(m)),
        ("act_wrench", lambda: se3.act_wrench(T, F), lambda: M.act(f)),
        ("act_inv_wrench", lambda: se3.act_inv_wrench(T, F), lambda: M.actInv(f)),
        ("Ad", lambda: se3.Ad(T), lambda: M.action),
        ("Ad_inv", lambda: se3.Ad_inv(T), lambda: M.actionInverse),
        ("ad", lambda: se3.ad(xi), lambda: m.action),
        ("compose", lambda: se3.compose(T, T), lambda: M * M),
        ("inv", lambda: se3.inv(T), lambda: M.inverse()),
    ]


def _reduced_pair():
    urdf = erd("talos_data/robots/talos_reduced.urdf")
    model = ldr.load_urdf(urdf, floating_base=True)
    pm = build_pin_model(urdf, floating_base=True)
    q = ldr.random_configuration(model, rng=0)
    qp = PinMap(model, pm).q_to_pin(q)
    arms = [f"arm_{s}_{k}_joint" for s in ("left", "right") for k in range(1, 8)]
    ids = [pm.getJointId(n) for n in arms]
    return ("reduced_model (talos_reduced, arms locked)",
            lambda: ldr.reduced_model(model, arms, q), lambda: pin.buildReducedModel(pm, ids, qp))


def rows(rounds=15, number=2000, clock=time.perf_counter):
    """[(call, ours us, Pinocchio us)]."""
    out = []
    for name, ours, theirs in _pairs() + [_reduced_pair()]:
        n = number if not name.startswith("reduced") else max(1, number // 200)
        ours(), theirs()
        a, b = [], []
        for _ in range(rounds):
            a.append(_per_call(ours, n, clock))
            b.append(_per_call(theirs, n, clock))
        out.append((name, 1e6 * np.median(a), 1e6 * np.median(b)))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--number", type=int, default=2000)
    p.add_argument("--cpu", action="store_true",
                   help="time with the process's CPU clock (a machine shared with other jobs)")
    args = p.parse_args(argv)
    clock = time.process_time if args.cpu else time.perf_counter
    print(f"{'call':44s} {'ours us':>10s} {'pin us':>10s} {'ratio':>7s}")
    for call, ours, theirs in rows(args.rounds, args.number, clock):
        print(f"{call:44s} {ours:10.2f} {theirs:10.2f} {ours / theirs:7.1f}", flush=True)


if __name__ == "__main__":
    main()
