#!/usr/bin/env python3
"""Closed-loop algorithms on the bundled mechanisms (urdf/loops/): call times and the agreement
with a KKT solve built from Pinocchio's M, nonlinear effects and frame terms.

For each mechanism, at a few random assembled states with velocities in the null space of A:
the median time per call of constrained_forward_dynamics, constrained_inverse_dynamics,
constraint_jacobian and assemble (from 0.05 rad off), and the largest differences
|a - a_kkt|, |lam - lam_kkt|, |A q'' + Adot q'|.

    python benchmarks/bench_loops.py [--repeat 200]
"""
import argparse
import os
import statistics
import sys
import time
import xml.etree.ElementTree as ET

import numpy as np
from scipy.linalg import null_space

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "test"))

import lie_dynamics_ros as ldr  # noqa: E402

MECH = os.path.join(ROOT, "urdf", "loops")


def timed(f, repeat):
    f()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e6


def kkt_errors(name, model, states):
    """Max |a - a_kkt|, |lam - lam_kkt| with Pinocchio's M, nle, A, Adot v."""
    try:
        import pinocchio as pin
        from oracle import PinMap
        from test_loops_pinocchio import pin_closure_terms
    except Exception:
        return None
    import tempfile
    root = ET.parse(os.path.join(MECH, f"{name}.urdf")).getroot()
    for el in root.findall("loop_joint"):
        root.remove(el)
    with tempfile.NamedTemporaryFile("w", suffix=".urdf", delete=False) as f:
        f.write(ET.tostring(root, encoding="unicode"))
    pm = pin.buildModelFromUrdf(f.name)
    os.unlink(f.name)
    pm.gravity.linear = model.gravity
    pmap = PinMap(model, pm, None)
    ea = el_ = eA = 0.0
    for q, v, tau in states:
        A_ref, b_ref = pin_closure_terms(model, pm, pmap, q, v)
        qp, vp = pmap.q_to_pin(q), pmap.v_to_pin(v, q)
        M = pin.crba(pm, pm.createData(), qp)
        M = np.triu(M) + np.triu(M, 1).T
        M = pmap.mat_from_pin(M, q)
        h = pmap.tau_from_pin(pin.nonLinearEffects(pm, pm.createData(), qp, vp), q)
        n, c = model.nv, A_ref.shape[0]
        K = np.block([[M, -A_ref.T], [A_ref, np.zeros((c, c))]])
        sol = np.linalg.lstsq(K, np.concatenate([tau - h, -b_ref]), rcond=1e-12)[0]
        a, lam = ldr.constrained_forward_dynamics(model, q, v, tau)
        ea, el_ = max(ea, np.max(np.abs(a - sol[:n]))), max(el_, np.max(np.abs(lam - sol[n:])))
        eA = max(eA, np.max(np.abs(ldr.constraint_jacobian(model, q) - A_ref)))
    return ea, el_, eA


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"{'mechanism':14s} {'nv':>3s} {'nc':>3s} {'rank':>4s} {'cFD us':>8s} {'cID us':>8s} "
          f"{'A us':>7s} {'asm us':>8s} {'|Aa+b|':>8s} {'|a-kkt|':>8s} {'|lam-kkt|':>9s} "
          f"{'|A-Apin|':>8s}")
    for name in ("four_bar", "slider_crank", "five_bar", "parallelogram", "delta"):
        m = ldr.load_urdf(os.path.join(MECH, f"{name}.urdf"))
        states, res = [], 0.0
        for _ in range(5):
            q = ldr.assemble(m, 0.1 * rng.standard_normal(m.nq))
            N = null_space(ldr.constraint_jacobian(m, q))
            v = N @ rng.standard_normal(N.shape[1])
            tau = rng.standard_normal(m.nv)
            a, _ = ldr.constrained_forward_dynamics(m, q, v, tau)
            res = max(res, np.max(np.abs(ldr.constraint_jacobian(m, q) @ a
                                         + ldr.constraint_bias(m, q, v))))
            states.append((q, v, tau))
        q, v, tau = states[0]
        a, _ = ldr.constrained_forward_dynamics(m, q, v, tau)
        rank = np.linalg.matrix_rank(ldr.constraint_jacobian(m, q), tol=1e-9)
        act = [n for n in m.joint_names if n.startswith(("shoulder", "crank_joint", "crank1",
                                                         "slider", "joint1", "joint5"))]
        guess = q + 0.05 * rng.standard_normal(m.nq)
        t_fd = timed(lambda: ldr.constrained_forward_dynamics(m, q, v, tau), args.repeat)
        t_id = timed(lambda: ldr.constrained_inverse_dynamics(m, q, v, a, act), args.repeat)
        t_A = timed(lambda: ldr.constraint_jacobian(m, q), args.repeat)
        t_as = timed(lambda: ldr.assemble(m, guess), max(10, args.repeat // 10))
        kkt = kkt_errors(name, m, states)
        k = ("{:8.1e} {:9.1e} {:8.1e}".format(*kkt)) if kkt else "(no Pinocchio)"
        print(f"{name:14s} {m.nv:3d} {m.nc:3d} {rank:4d} {t_fd:8.0f} {t_id:8.0f} {t_A:7.0f} "
              f"{t_as:8.0f} {res:8.1e} {k}")


if __name__ == "__main__":
    main()
