#!/usr/bin/env python3
"""Benchmark of the analytic dynamics derivatives against Pinocchio (same states, one run).

Rows: ``inverse_dynamics_derivatives`` vs ``pin.computeRNEADerivatives`` and
``forward_dynamics_derivatives`` vs ``pin.computeABADerivatives`` (single calls, and per state
of a batch of 1000: ours in one call on all cores, Pinocchio's in a loop), on the bundled 7-DOF arm
(``urdf/arm7.urdf``, fixed base) and Talos (``talos_reduced.urdf`` from example-robot-data,
floating base, nv = 38), the robots of ``benchmarks/bench_dynamics.py``. Both sides are called
from Python with the same inputs; calls are interleaved round by round and the minimum over the
rounds is kept, in CPU time of this process (``time.process_time``), so that load from other
processes (a shared machine) affects both alike and little. Prints microseconds per
call and the ratio ours / Pinocchio; ``rows()`` returns them for the lead's bench table.

    .venv/bin/python benchmarks/bench_derivatives.py [--rounds 30] [--number 200]
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

import lie_dynamics_ros as ldr  # noqa: E402

try:  # Pinocchio is a reference here, never a dependency of the package
    import pinocchio as pin
    from oracle import Oracle, erd
except Exception:  # pragma: no cover - Pinocchio not installed
    pin = None

ROBOTS = [("arm7 (7 DOF)", lambda: os.path.join(ROOT, "urdf", "arm7.urdf"), False),
          ("talos_reduced (38 DOF, floating)",
           lambda: erd("talos_data/robots/talos_reduced.urdf"), True)]


def _min_time(fns, rounds, number):
    best = [np.inf] * len(fns)
    for _ in range(rounds):
        for k, f in enumerate(fns):
            t0 = time.process_time()
            for _ in range(number):
                f()
            best[k] = min(best[k], (time.process_time() - t0) / number)
    return best


def rows(rounds=30, number=200):
    """[(robot, call, ours_us, pinocchio_us)]."""
    out = []
    for label, path_fn, fb in ROBOTS:
        path = path_fn()
        model = ldr.load_urdf(path, floating_base=fb)
        rng = np.random.default_rng(0)
        q = ldr.random_configuration(model, rng)
        v, a = rng.uniform(-1, 1, model.nv), rng.uniform(-2, 2, model.nv)
        tau = ldr.inverse_dynamics(model, q, v, a)
        calls = [("inverse_dynamics_derivatives",
                  lambda: ldr.inverse_dynamics_derivatives(model, q, v, a)),
                 ("forward_dynamics_derivatives",
                  lambda: ldr.forward_dynamics_derivatives(model, q, v, tau))]
        refs = [None, None]
        if pin is not None:
            o = Oracle(model, path, fb)
            qp, vp, ap = o._qva(q, v, a)
            tp = o.map.T() @ tau
            refs = [lambda: pin.computeRNEADerivatives(o.pm, o.pd, qp, vp, ap),
                    lambda: pin.computeABADerivatives(o.pm, o.pd, qp, vp, tp)]
        for (name, f), g in zip(calls, refs):
            f()
            fns = [f] if g is None else [f, g]
            t = _min_time(fns, rounds, number)
            out.append((label, name, t[0] * 1e6, t[1] * 1e6 if g is not None else float("nan")))
        out += _batched(label, model, path, fb, rng, max(3, rounds // 6))
    return out


def _batched(label, model, path, fb, rng, rounds, N=1000):
    """Per state of N states: our batched call (its rows cut over the cores) against a loop of
    Pinocchio's single calls (it has no parallel derivatives), in wall-clock time since ours
    runs on several threads."""
    Q = np.array([ldr.random_configuration(model, rng) for _ in range(N)])
    V, A = rng.uniform(-1, 1, (N, model.nv)), rng.uniform(-2, 2, (N, model.nv))
    T = ldr.inverse_dynamics(model, Q, V, A)
    calls = [("batch %d ID derivatives /state" % N,
              lambda: ldr.inverse_dynamics_derivatives(model, Q, V, A)),
             ("batch %d FD derivatives /state" % N,
              lambda: ldr.forward_dynamics_derivatives(model, Q, V, T))]
    refs = [None, None]
    if pin is not None:
        o = Oracle(model, path, fb)
        P = [o._qva(q, v, a) for q, v, a in zip(Q, V, A)]
        TP = [o.map.T() @ t for t in T]

        def rnea_loop():
            for qp, vp, ap in P:
                pin.computeRNEADerivatives(o.pm, o.pd, qp, vp, ap)

        def aba_loop():
            for (qp, vp, _), tp in zip(P, TP):
                pin.computeABADerivatives(o.pm, o.pd, qp, vp, tp)
        refs = [rnea_loop, aba_loop]
    out = []
    for (name, f), g in zip(calls, refs):
        fns = [f] if g is None else [f, g]
        best = [np.inf] * len(fns)
        for _ in range(rounds):
            for k, fn in enumerate(fns):
                t0 = time.perf_counter()
                fn()
                best[k] = min(best[k], (time.perf_counter() - t0) / N)
        out.append((label, name, best[0] * 1e6,
                    best[1] * 1e6 if g is not None else float("nan")))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--number", type=int, default=200)
    args = ap.parse_args()
    print("%-34s %-32s %9s %9s %6s" % ("robot", "call", "ours us", "pin us", "ratio"))
    for label, name, ours, ref in rows(args.rounds, args.number):
        print("%-34s %-32s %9.2f %9.2f %6.2f" % (label, name, ours, ref, ours / ref))


if __name__ == "__main__":
    main()
