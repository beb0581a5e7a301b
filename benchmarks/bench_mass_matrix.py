#!/usr/bin/env python3
"""Single-state mass matrix on fixed- and floating-base robots: ``ldr.mass_matrix`` against
``pin.crba``, and the two compiled entries behind it alone (no Python around them): the tree
CRBA of ``kernels/tree_crba.py`` on the packed plan (``tree_plan(model)``,
what the public call runs for a revolute/prismatic tree, under a free root joint or not) and
the general CRBA of ``kernels/plan.py`` on a Data buffer (what it ran before for a floating base).

Per robot: the minimum over ``--repeats`` interleaved repeats (each side timed back to back in
every repeat, so that a shared machine slows them alike) of the time per call, in µs. The
"empty call" column is a compiled function of the same three arrays that returns at once
(numba's dispatch alone): the tree entry less it is the kernel's own work.
"""
import argparse
import os
import sys
import timeit

import numba
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "test"))

import pinocchio as pin  # noqa: E402  (the reference, never a dependency of the package)

import lie_dynamics_ros as ldr  # noqa: E402
from lie_dynamics_ros.algorithms.tree_plan import tree_plan  # noqa: E402
from lie_dynamics_ros.kernels import plan as KP  # noqa: E402
from lie_dynamics_ros.kernels import tree_crba as TC  # noqa: E402
from oracle import PinMap, build_pin_model, erd, symmetrize_upper  # noqa: E402

ROBOTS = [("arm7", os.path.join(ROOT, "urdf", "arm7.urdf"), False),
          ("go2", erd("go2_description/urdf/go2.urdf"), True),
          ("solo12", erd("solo_description/robots/solo12.urdf"), True),
          ("talos_reduced", erd("talos_data/robots/talos_reduced.urdf"), True),
          ("centauro", erd("centauro_description/urdf/centauro.urdf"), True)]


@numba.njit(nogil=False)
def _empty(P, q, M):
    """The tree entry's dispatch (three arrays in, an int out) without its work."""
    return 0


def bench(path, floating, repeats, number):
    """(nv, {side: µs per call}, max |M - Pinocchio's| / max |M|) of one robot."""
    m = ldr.load_urdf(path, floating_base=floating)
    pm = build_pin_model(path, floating)
    pd, mp = pm.createData(), PinMap(m, pm, path)
    q = ldr.random_configuration(m, rng=1)
    qp = mp.q_to_pin(q)
    P, d = tree_plan(m), m.create_data()
    M = np.empty((m.nv, m.nv))
    sides = {"ldr.mass_matrix": lambda: ldr.mass_matrix(m, q),
             "pin.crba": lambda: pin.crba(pm, pd, qp),
             "tree entry": lambda: TC.mass_matrix(P, q, M),
             "general entry": lambda: KP.mass_matrix(d.buf, q, M),
             "empty call": lambda: _empty(P, q, M)}
    ours = ldr.mass_matrix(m, q)
    ref = mp.mat_from_pin(symmetrize_upper(np.array(pin.crba(pm, pd, qp))), q)
    for f in sides.values():
        f()
    best = {k: np.inf for k in sides}
    for _ in range(repeats):
        for k, f in sides.items():
            best[k] = min(best[k], timeit.timeit(f, number=number) / number * 1e6)
    return m.nv, best, np.abs(ours - ref).max() / np.abs(ref).max()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--number", type=int, default=50000, help="calls per repeat and side")
    args = ap.parse_args(argv)
    print(f"{'robot':14s} {'nv':>3s} {'ldr us':>8s} {'pin us':>8s} {'ratio':>6s} "
          f"{'tree entry':>10s} {'empty call':>10s} {'general entry':>13s} {'|M-pin|/|M|':>12s}")
    for name, path, floating in ROBOTS:
        nv, t, err = bench(path, floating, args.repeats, args.number)
        print(f"{name:14s} {nv:3d} {t['ldr.mass_matrix']:8.3f} {t['pin.crba']:8.3f} "
              f"{t['ldr.mass_matrix'] / t['pin.crba']:6.2f} {t['tree entry']:10.3f} "
              f"{t['empty call']:10.3f} {t['general entry']:13.3f} {err:12.1e}", flush=True)


if __name__ == "__main__":
    main()
