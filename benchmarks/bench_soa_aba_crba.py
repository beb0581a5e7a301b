#!/usr/bin/env python3
"""Batched forward dynamics and mass matrix: the structure-of-arrays ABA and CRBA against the
per-state batched kernels and Pinocchio (``abaInParallel`` at 1 and 2 threads, the better one;
for M, which Pinocchio does not batch, a Python loop over ``pin.crba``), at N = 1000 and 10,000.

Per robot and N: wall time per state of each, the ratio to Pinocchio, time per state per core
(wall time x threads used), and the SoA kernel's on-CPU time per state on one thread. The calls
are interleaved repeat by repeat and the medians reported (the machine may be shared; a load
change then affects every side alike). First it prints the kernels' floating-point
instructions by register width, from a fresh compilation (zmm FMAs: LLVM vectorized the
recursions across the states).
"""
from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")   # idle OpenMP threads would spin
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

import lie_dynamics_ros as ldr  # noqa: E402
from lie_dynamics_ros.algorithms import batch  # noqa: E402
from lie_dynamics_ros.algorithms.batch_soa import soa_plan  # noqa: E402
from lie_dynamics_ros.algorithms.batch_soa_aba import forward_dynamics_soa  # noqa: E402
from lie_dynamics_ros.algorithms.batch_soa_crba import mass_matrix_soa  # noqa: E402
from lie_dynamics_ros.kernels import soa as KS  # noqa: E402
from lie_dynamics_ros.kernels import soa_aba as KA  # noqa: E402
from lie_dynamics_ros.kernels import soa_crba as KC  # noqa: E402
from bench_soa import cpu_info, interleaved  # noqa: E402

try:  # Pinocchio is a reference here, never a dependency of the package
    import pinocchio as pin

    sys.path.insert(0, os.path.join(ROOT, "test"))
    from oracle import PinMap, build_pin_model, erd  # noqa: E402
except Exception:  # pragma: no cover - Pinocchio not installed
    pin = None

# compiled afresh in a child process (numba does not show the assembly of cached code)
_ASM_PROBE = """
import collections, re, numpy as np
import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms.batch_soa_aba import forward_dynamics_soa
from lie_dynamics_ros.algorithms.batch_soa_crba import mass_matrix_soa
from lie_dynamics_ros.kernels import soa as KS, soa_aba as KA, soa_crba as KC
m = ldr.load_urdf("arm7")
z = np.zeros((KS.B + 1, m.nv))
forward_dynamics_soa(m, z + 0.1, z, z)
mass_matrix_soa(m, z + 0.1)
for fn in (KA._velocities, KA._articulate, KA._accelerations, KC._composite, KC._columns):
    asm = next(iter(fn.inspect_asm().values()))
    n = collections.Counter()
    for line in asm.splitlines():
        op = (line.split() or [''])[0]
        if re.match(r'vf(n?)m(add|sub)\\d+(pd|sd)$', op):
            kind = 'fma'
        elif re.match(r'v(mul|add|sub|div)(pd|sd)$', op):
            kind = 'mul/add/div'
        else:
            continue
        reg = 'zmm' if 'zmm' in line else 'ymm' if 'ymm' in line else 'xmm'
        n[kind + ' ' + (reg if op.endswith('pd') else 'scalar')] += 1
    print('  %-15s' % fn.__name__, ', '.join('%s %d' % kv for kv in sorted(n.items())))
"""


def vector_report():
    """The ABA kernel's floating-point instructions by register width (fresh compilation)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=ROOT)
        out = subprocess.run([sys.executable, "-W", "ignore", "-c", _ASM_PROBE], env=env,
                             capture_output=True, text=True)
    return out.stdout.rstrip() if out.returncode == 0 else "  (probe failed: %s)" % (
        out.stderr.strip().splitlines() or ["?"])[-1]


def kernel_cpu_time(kernel, args, N, repeat):
    """Median on-CPU seconds of ``kernel(*args, 0, nblk)`` over all N states on this thread
    alone (no pool, no argument checks)."""
    nblk = -(-N // KS.B)
    kernel(*args, 0, nblk)
    runs = []
    for _ in range(repeat):
        n = max(1, 20000 // N)
        t0 = time.thread_time()
        for _ in range(n):
            kernel(*args, 0, nblk)
        runs.append((time.thread_time() - t0) / n)
    return statistics.median(runs)


def bench(label, path, floating, sizes, repeat, target_s):
    model = ldr.load_urdf(path, floating_base=floating)
    plan = soa_plan(model)
    rng = np.random.default_rng(0)
    cores = batch.WORKERS
    print(f"\n{label} (nv {model.nv}), forward dynamics")
    hdr = (f"{'N':>6} {'SoA ns':>7} {'rows ns':>8} {'pin ns':>7} {'thr':>3} {'SoA/pin':>7} "
           f"{'rows/pin':>8} {'SoA/rows':>8} {'SoA ns*core':>11} {'pin ns*core':>11} "
           f"{'kern cpu ns':>11}")
    print(hdr)
    print("-" * len(hdr))

    def row(q, v, t):
        return ldr.forward_dynamics(model, q, v, t)

    for N in sizes:
        Q = np.array([ldr.random_configuration(model, rng) for _ in range(N)])
        V = rng.uniform(-1.0, 1.0, (N, model.nv))
        T = rng.uniform(-5.0, 5.0, (N, model.nv))
        # the per-state kernel's batch (what ldr.forward_dynamics ran before the SoA ABA)
        fns = [lambda: forward_dynamics_soa(model, Q, V, T, plan),
               lambda: batch.evaluate(model, "aba", (Q, V, T), None, row)]
        ref = fns[1]()
        soa = fns[0]()
        err = np.abs(soa - ref).max() / np.abs(ref).max()
        pin_err = None
        if pin is not None:
            pm = build_pin_model(path, floating)
            pm.gravity = pin.Motion(np.asarray(model.gravity, dtype=float), np.zeros(3))
            mp = PinMap(model, pm, path)
            Qp = np.asfortranarray(np.array([mp.q_to_pin(q) for q in Q]).T)
            Vp = np.asfortranarray(np.array([mp.v_to_pin(v, q) for q, v in zip(Q, V)]).T)
            Tp = np.asfortranarray(np.array([mp.v_to_pin(t, q) for q, t in zip(Q, T)]).T)
            pool = pin.ModelPool(pm, cores)
            out = np.asfortranarray(np.empty((pm.nv, N)))
            pin.abaInParallel(1, pool, Qp, Vp, Tp, out)
            back = np.array([mp.v_from_pin(out[:, r], Q[r]) for r in range(N)])
            pin_err = np.abs(soa - back).max() / np.abs(back).max()
            fns += [(lambda k=k: pin.abaInParallel(k, pool, Qp, Vp, Tp, out))
                    for k in range(1, cores + 1)]
        times = interleaved(fns, repeat, target_s)
        t_soa, t_rows = times[0] / N, times[1] / N
        t_cpu = kernel_cpu_time(KA.aba_soa, (*plan, Q, V, T, np.empty((N, model.nv)),
                                             np.zeros(N, dtype=np.int64)), N, repeat) / N
        threads = batch.threads_for(t_cpu * N, -(-N // KS.B))   # the rule the call applies
        if pin is not None:
            k = int(np.argmin(times[2:]))
            t_pin = times[2 + k] / N
            pin_cols = (f"{t_pin * 1e9:7.1f} {k + 1:>3} {t_soa / t_pin:7.3f} "
                        f"{t_rows / t_pin:8.3f}", f"{t_pin * (k + 1) * 1e9:11.1f}")
        else:
            pin_cols = (f"{'-':>7} {'-':>3} {'-':>7} {'-':>8}", f"{'-':>11}")
        print(f"{N:>6} {t_soa * 1e9:7.1f} {t_rows * 1e9:8.1f} {pin_cols[0]} "
              f"{t_soa / t_rows:8.3f} {t_soa * threads * 1e9:11.1f} {pin_cols[1]} "
              f"{t_cpu * 1e9:11.1f}")
        print(f"{'':>6} (max |dqdd| / max |qdd|: SoA vs rows {err:.1e}"
              + ("" if pin_err is None else f", SoA vs Pinocchio {pin_err:.1e}") + ")")


def bench_m(label, path, floating, sizes, repeat, target_s):
    model = ldr.load_urdf(path, floating_base=floating)
    plan = soa_plan(model)
    rng = np.random.default_rng(1)
    cores = batch.WORKERS
    print(f"\n{label} (nv {model.nv}), mass matrix")
    hdr = (f"{'N':>6} {'SoA ns':>7} {'rows ns':>8} {'pin ns':>7} {'SoA/pin':>7} "
           f"{'rows/pin':>8} {'SoA/rows':>8} {'SoA ns*core':>11} {'kern cpu ns':>11}")
    print(hdr)
    print("-" * len(hdr))
    for N in sizes:
        Q = np.array([ldr.random_configuration(model, rng) for _ in range(N)])
        fns = [lambda: mass_matrix_soa(model, Q, plan),
               lambda: batch.evaluate(model, "crba", (Q,), None,
                                      lambda q: ldr.mass_matrix(model, q))]
        ref = fns[1]()
        err = np.abs(fns[0]() - ref).max() / np.abs(ref).max()
        if pin is not None:
            pm = build_pin_model(path, floating)
            pd = pm.createData()
            mp = PinMap(model, pm, path)
            Qp = [np.asarray(mp.q_to_pin(q)) for q in Q]
            crba = pin.crba

            def pin_loop():
                for q in Qp:
                    crba(pm, pd, q)
            fns.append(pin_loop)
        times = interleaved(fns, repeat, target_s)
        t_soa, t_rows = times[0] / N, times[1] / N
        t_cpu = kernel_cpu_time(KC.crba_soa, (*plan, Q, np.empty((N, model.nv, model.nv)),
                                              np.zeros(N, dtype=np.int64)), N, repeat) / N
        threads = batch.threads_for(t_cpu * N, -(-N // KS.B))   # the rule the call applies
        if pin is not None:
            t_pin = times[2] / N
            pin_cols = f"{t_pin * 1e9:7.1f} {t_soa / t_pin:7.3f} {t_rows / t_pin:8.3f}"
        else:
            pin_cols = f"{'-':>7} {'-':>7} {'-':>8}"
        print(f"{N:>6} {t_soa * 1e9:7.1f} {t_rows * 1e9:8.1f} {pin_cols} {t_soa / t_rows:8.3f} "
              f"{t_soa * threads * 1e9:11.1f} {t_cpu * 1e9:11.1f}")
        print(f"{'':>6} (max |dM| / max |M|: SoA vs rows {err:.1e}; pin: one thread, a Python "
              "loop over pin.crba)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=11, help="interleaved repeats (median)")
    ap.add_argument("--target-ms", type=float, default=20.0, help="duration of one repeat")
    ap.add_argument("--sizes", default="1000,10000", help="batch sizes N")
    args = ap.parse_args(argv)
    name, mhz, width = cpu_info()
    import numba
    print("batched forward dynamics and mass matrix, structure-of-arrays ABA and CRBA")
    print(f"  cpu {name} | {batch.WORKERS} cores | {mhz:.0f} MHz | vector width {width} doubles "
          f"| numba {numba.__version__} (kernel: fastmath contract, block of {KS.B} states)")
    print("  ns: wall time per state (median of interleaved repeats); rows: the per-state "
          "kernel's batch on the same pool; ns*core: x threads used; kern cpu ns: the SoA "
          "kernel alone on one thread, on-CPU time")
    print("  instructions of the compiled kernel (zmm = 8 doubles, packed; scalar = one double):")
    print(vector_report())
    robots = [("arm7", os.path.join(ROOT, "urdf", "arm7.urdf"), False)]
    if pin is not None:
        robots += [("xarm7", erd("xarm_description/urdf/xarm7.urdf"), False),
                   ("ur5", erd("ur_description/urdf/ur5_robot.urdf"), False),
                   # floating bases: a free root joint, then revolute legs (and arms)
                   ("go2", erd("go2_description/urdf/go2.urdf"), True),
                   ("centauro", erd("centauro_description/urdf/centauro.urdf"), True)]
    sizes = [int(s) for s in args.sizes.split(",")]
    for label, path, floating in robots:
        bench(label, path, floating, sizes, args.repeat, args.target_ms / 1e3)
    for label, path, floating in robots:
        bench_m(label, path, floating, sizes, args.repeat, args.target_ms / 1e3)


if __name__ == "__main__":
    main()
