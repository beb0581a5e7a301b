#!/usr/bin/env python3
"""Batched inverse dynamics: the structure-of-arrays kernel against the per-state row kernel
(``kernels/batch.rnea_rows`` on the same pool, the batched path of models the SoA kernel does
not serve) and Pinocchio's ``rneaInParallel`` (1 and 2 threads, the better one), at N = 1000
and 10,000.

Per robot and N it prints the wall time per state of each, the ratio to Pinocchio's best, the
time per state per core (wall time x threads used), and the SoA kernel's arithmetic rate (its
on-CPU time alone on one thread) from Park, Bobrow & Ploen's (1995, after eq. 28) RNEA count,
(130 n - 68) multiplications + (101 n - 56) additions per state, as a fraction of one core's
double-precision vector peak, assumed 2 FMA units x 8 doubles x 2 flops = 32 flops per cycle
at the clock of /proc/cpuinfo. The calls are interleaved repeat by repeat and the medians
reported: the machine may be shared, and a load change then affects every side alike. First
it prints the kernel's floating-point instructions by register width, from a fresh
compilation: zmm FMAs mean that LLVM vectorized the recursion across the states.
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

import lie_dynamics_ros as ldr  # noqa: E402
from lie_dynamics_ros.algorithms import batch  # noqa: E402
from lie_dynamics_ros.algorithms.batch_soa import inverse_dynamics_soa, soa_plan  # noqa: E402
from lie_dynamics_ros.kernels import soa as KS  # noqa: E402

try:  # Pinocchio is a reference here, never a dependency of the package
    import pinocchio as pin

    sys.path.insert(0, os.path.join(ROOT, "test"))
    from oracle import PinMap, build_pin_model, erd  # noqa: E402
except Exception:  # pragma: no cover - Pinocchio not installed
    pin = None

FLOPS_PER_CYCLE = 32        # AVX-512: 8 doubles x 2 (FMA) x 2 FMA units


def cpu_info():
    """(model name, MHz, vector width in doubles) from /proc/cpuinfo."""
    name, mhz, flags = "?", float("nan"), set()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                key, _, val = line.partition(":")
                key = key.strip()
                if key == "model name" and name == "?":
                    name = val.strip()
                elif key == "cpu MHz" and mhz != mhz:
                    mhz = float(val)
                elif key == "flags" and not flags:
                    flags = set(val.split())
    except OSError:
        pass
    width = 8 if "avx512f" in flags else 4 if "avx" in flags else 2
    return name, mhz, width


# compiled afresh in a child process (numba does not show the assembly of cached code)
_ASM_PROBE = """
import collections, re, numpy as np
import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms.batch_soa import inverse_dynamics_soa
from lie_dynamics_ros.kernels import soa as KS
m = ldr.load_urdf("arm7")
z = np.zeros((KS.B + 1, m.nv))
inverse_dynamics_soa(m, z + 0.1, z, z)
for fn in (KS._joint_angles, KS._forward, KS._backward):
    asm = next(iter(fn.inspect_asm().values()))
    n = collections.Counter()
    for line in asm.splitlines():
        op = (line.split() or [''])[0]
        if re.match(r'vf(n?)m(add|sub)\\d+(pd|sd)$', op):
            kind = 'fma'
        elif re.match(r'v(mul|add|sub)(pd|sd)$', op):
            kind = 'mul/add'
        else:
            continue
        reg = 'zmm' if 'zmm' in line else 'ymm' if 'ymm' in line else 'xmm'
        n[kind + ' ' + (reg if op.endswith('pd') else 'scalar')] += 1
    print('  %-14s' % fn.__name__, ', '.join('%s %d' % kv for kv in sorted(n.items())))
"""


def vector_report():
    """The kernel's floating-point instructions by register width (fresh compilation)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=ROOT)
        out = subprocess.run([sys.executable, "-W", "ignore", "-c", _ASM_PROBE], env=env,
                             capture_output=True, text=True)
    return out.stdout.rstrip() if out.returncode == 0 else "  (probe failed: %s)" % (
        out.stderr.strip().splitlines() or ["?"])[-1]


def park_flops(n):
    return (130 * n - 68) + (101 * n - 56)


def interleaved(fns, repeat, target_s):
    """Median seconds per call of each fn, repeats interleaved."""
    numbers = []
    for fn in fns:
        fn()
        fn()
        t0, k = time.perf_counter(), 0
        while time.perf_counter() - t0 < 0.2 * target_s:
            fn()
            k += 1
        numbers.append(max(1, int(5 * k)))
    runs = [[] for _ in fns]
    for _ in range(repeat):
        for fn, n, r in zip(fns, numbers, runs):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            r.append((time.perf_counter() - t0) / n)
    return [statistics.median(r) for r in runs]


def bench(label, path, floating, sizes, repeat, target_s, mhz):
    model = ldr.load_urdf(path, floating_base=floating)
    plan = soa_plan(model)
    rng = np.random.default_rng(0)
    cores = batch.WORKERS
    print(f"\n{label} (nv {model.nv}; Park's count {park_flops(model.nv)} flops per state)")
    hdr = (f"{'N':>6} {'SoA ns':>7} {'rows ns':>8} {'pin ns':>7} {'thr':>3} {'SoA/pin':>7} "
           f"{'rows/pin':>9} {'SoA/rows':>9} {'SoA ns*core':>11} {'pin ns*core':>11} "
           f"{'kern cpu ns':>11} {'GFLOP/s':>7} {'of peak':>7}")
    print(hdr)
    print("-" * len(hdr))
    for N in sizes:
        Q = np.array([ldr.random_configuration(model, rng) for _ in range(N)])
        V = rng.uniform(-1.0, 1.0, (N, model.nv))
        A = rng.uniform(-1.0, 1.0, (N, model.nv))
        fns = [lambda: inverse_dynamics_soa(model, Q, V, A, plan), lambda: rows(model, Q, V, A)]
        T = rows(model, Q, V, A)
        err = np.abs(inverse_dynamics_soa(model, Q, V, A, plan) - T).max() / np.abs(T).max()
        if pin is not None:
            pm = build_pin_model(path, floating)
            pm.gravity = pin.Motion(np.asarray(model.gravity, dtype=float), np.zeros(3))
            mp = PinMap(model, pm, path)
            Qp = np.asfortranarray(np.array([mp.q_to_pin(q) for q in Q]).T)
            Vp = np.asfortranarray(np.array([mp.v_to_pin(v, q) for q, v in zip(Q, V)]).T)
            Ap = np.asfortranarray(np.array([mp.a_to_pin(a, q, v) for q, v, a in zip(Q, V, A)]).T)
            pool = pin.ModelPool(pm, cores)
            out = np.asfortranarray(np.empty((pm.nv, N)))
            fns += [(lambda k=k: pin.rneaInParallel(k, pool, Qp, Vp, Ap, out))
                    for k in range(1, cores + 1)]
        times = interleaved(fns, repeat, target_s)
        t_soa, t_rows = times[0] / N, times[1] / N
        t_cpu = kernel_cpu_time(plan, Q, V, A, repeat) / N
        threads = batch.threads_for(t_cpu * N, -(-N // KS.B))   # the rule the call applies
        gflops = park_flops(model.nv) / t_cpu / 1e9
        peak = FLOPS_PER_CYCLE * mhz / 1e3
        if pin is not None:
            k = int(np.argmin(times[2:]))
            t_pin = times[2 + k] / N
            pin_cols = (f"{t_pin * 1e9:7.1f} {k + 1:>3} {t_soa / t_pin:7.3f} "
                        f"{t_rows / t_pin:9.3f}",
                        f"{t_pin * (k + 1) * 1e9:11.1f}")
        else:
            pin_cols = (f"{'-':>7} {'-':>3} {'-':>7} {'-':>9}", f"{'-':>11}")
        print(f"{N:>6} {t_soa * 1e9:7.1f} {t_rows * 1e9:8.1f} {pin_cols[0]} "
              f"{t_soa / t_rows:9.3f} {t_soa * threads * 1e9:11.1f} {pin_cols[1]} "
              f"{t_cpu * 1e9:11.1f} {gflops:7.2f} {gflops / peak:7.1%}")
        print(f"{'':>6} (SoA vs rows: max |dtau| / max |tau| = {err:.1e})")


def rows(model, Q, V, A):
    """The per-state batched RNEA (``kernels/batch.rnea_rows``, one state per row, split over
    the same pool): what ``ldr.inverse_dynamics`` runs on models the SoA kernel refuses."""
    return batch.evaluate(model, "rnea", (Q, V, A), None,
                          lambda *x: ldr.inverse_dynamics(model, *x))


def kernel_cpu_time(plan, Q, V, A, repeat):
    """Median on-CPU seconds of the SoA kernel over all N states on this thread alone (no
    pool, no argument checks): what the arithmetic costs when the core is ours."""
    topo, geo = plan
    N = Q.shape[0]
    out, status = np.empty((N, V.shape[1])), np.zeros(N, dtype=np.int64)
    nblk = -(-N // KS.B)
    KS.rnea_soa(topo, geo, Q, V, A, out, status, 0, nblk)
    runs = []
    for _ in range(repeat):
        n = max(1, 20000 // N)
        t0 = time.thread_time()
        for _ in range(n):
            KS.rnea_soa(topo, geo, Q, V, A, out, status, 0, nblk)
        runs.append((time.thread_time() - t0) / n)
    return statistics.median(runs)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=11, help="interleaved repeats (median)")
    ap.add_argument("--target-ms", type=float, default=20.0, help="duration of one repeat")
    ap.add_argument("--sizes", default="1000,10000", help="batch sizes N")
    args = ap.parse_args(argv)
    name, mhz, width = cpu_info()
    import numba
    print("batched inverse dynamics, structure-of-arrays kernel")
    print(f"  cpu {name} | {batch.WORKERS} cores | {mhz:.0f} MHz | vector width {width} doubles "
          f"| numba {numba.__version__} (kernel: fastmath contract, block of "
          f"{KS.B} states)")
    print(f"  peak assumed {FLOPS_PER_CYCLE} flops/cycle x {mhz / 1e3:.2f} GHz = "
          f"{FLOPS_PER_CYCLE * mhz / 1e3:.1f} GFLOP/s per core. ns: wall time per state (median "
          "of interleaved repeats); ns*core: x threads used; kern cpu ns: the kernel alone on "
          "one thread, on-CPU time; GFLOP/s from it and Park's count")
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
        bench(label, path, floating, sizes, args.repeat, args.target_ms / 1e3, mhz)


if __name__ == "__main__":
    main()
