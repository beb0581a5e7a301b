#!/usr/bin/env python3
"""Benchmark of lie_dynamics_ros against Pinocchio (same calls, same states, one run).

For the bundled 7-DOF arm (``urdf/arm7.urdf``), the xArm7 and the Centauro quadruped with two
arms (floating base, nv = 45) from example-robot-data it times

    inverse_dynamics  vs pin.rnea
    forward_dynamics  vs pin.aba
    mass_matrix       vs pin.crba
    hybrid_dynamics   (no Pinocchio equivalent: ours only)
    gravity_torques   vs pin.computeGeneralizedGravity
    nonlinear_effects vs pin.nonLinearEffects
    1000 states       ours batched (N, nq) call vs pin.rneaInParallel / pin.abaInParallel at
                      their best thread count (1..cores), per state

with ``timeit`` after a warm-up (numba compilation happens there), and prints the median
microseconds per call over the repeats and the ratio ours / Pinocchio (single calls: the median
ratio of neighbouring 0.2 ms slices, see ``time_ratio``).  Pinocchio is optional:
without it only our timings are printed.  ``make bench`` runs it (``BENCH_ARGS=...``).
"""
from __future__ import annotations

import argparse
import os

# Pinocchio's parallel calls run on OpenMP, whose idle threads spin for a while after each call
# (GOMP_SPINCOUNT) and would steal the cores from the next timed call, ours or theirs; passive
# waiting keeps the interleaved measurements independent. Set before OpenMP starts.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import platform
import statistics
import sys
import time
import timeit

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import lie_dynamics_ros as ldr  # noqa: E402

try:  # Pinocchio is a reference here, never a dependency of the package
    import pinocchio as pin

    sys.path.insert(0, os.path.join(ROOT, "test"))
    from oracle import PinMap, build_pin_model, erd, symmetrize_upper  # noqa: F401
except Exception:  # pragma: no cover - Pinocchio not installed
    pin = None


def _versions():
    import numba

    out = {
        "machine": " ".join(x for x in (platform.machine(), platform.processor()) if x) or "?",
        "cpu": _cpu_name(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "pinocchio": getattr(pin, "__version__", "not installed") if pin is not None else "not installed",
    }
    return out


def _vector_width():
    """(bits, instruction set) of the widest double-precision vector unit /proc/cpuinfo lists."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
            else:
                flags = set()
    except OSError:
        flags = set()
    for bits, flag, name in ((512, "avx512f", "AVX-512F"), (256, "avx2", "AVX2"),
                             (256, "avx", "AVX"), (128, "sse2", "SSE2")):
        if flag in flags:
            return bits, name
    return 0, "unknown"


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _calibrate(timer, target_s):
    number, t = 1, 0.0
    while True:
        t = timer.timeit(number)
        if t >= 0.2 * target_s or number >= 1_000_000:
            break
        number *= 4
    return max(1, int(number * target_s / max(t, 1e-9)))


def time_calls(fns, repeat, target_s):
    """Median seconds per call of each ``fn()`` in ``fns`` over ``repeat`` repeats of
    ~``target_s`` each; the repeats of the functions are interleaved, so that a load change on
    the machine affects ours and Pinocchio's alike."""
    for fn in fns:
        for _ in range(3):  # warm-up: numba compilation, caches
            fn()
    timers = [timeit.Timer(fn) for fn in fns]
    numbers = [_calibrate(t, target_s) for t in timers]
    runs = [[] for _ in fns]
    for _ in range(repeat):
        for k, (t, n) in enumerate(zip(timers, numbers)):
            runs[k].append(t.timeit(n) / n)
    return [statistics.median(r) for r in runs]


def time_ratio(ours, theirs, repeat, target_s, slice_s=2e-4):
    """(median ours, median theirs, median ratio ours / theirs) over ``repeat * target_s /
    slice_s`` alternating slices of ~``slice_s`` each: on a shared machine the load changes
    within milliseconds, and the ratio of two neighbouring short slices is far steadier than
    the ratio of two medians."""
    for fn in (ours, theirs):
        for _ in range(3):  # warm-up: numba compilation, caches
            fn()
    timers = [timeit.Timer(ours), timeit.Timer(theirs)]
    numbers = [_calibrate(t, slice_s) for t in timers]
    runs = [[], []]
    for _ in range(max(repeat, int(repeat * target_s / slice_s))):
        for k, (t, n) in enumerate(zip(timers, numbers)):
            runs[k].append(t.timeit(n) / n)
    return (statistics.median(runs[0]), statistics.median(runs[1]),
            statistics.median(a / b for a, b in zip(*runs)))


def bench_robot(label, path, floating_base, repeat, target_s, seed=0):
    model = ldr.load_urdf(path, floating_base=floating_base)
    rng = np.random.default_rng(seed)
    q = np.asarray(ldr.random_configuration(model, rng), dtype=float)
    v = rng.uniform(-1.0, 1.0, model.nv)
    a = rng.uniform(-1.0, 1.0, model.nv)
    tau = ldr.inverse_dynamics(model, q, v, a)
    prescribed = np.zeros(model.nv, dtype=bool)
    prescribed[model.nv // 2:] = True  # second half acceleration-controlled

    ours = {
        "inverse_dynamics": lambda: ldr.inverse_dynamics(model, q, v, a),
        "forward_dynamics": lambda: ldr.forward_dynamics(model, q, v, tau),
        "mass_matrix": lambda: ldr.mass_matrix(model, q),
        "hybrid_dynamics": lambda: ldr.hybrid_dynamics(model, q, v, a, tau, prescribed),
        "gravity_torques": lambda: ldr.gravity_torques(model, q),
        "nonlinear_effects": lambda: ldr.nonlinear_effects(model, q, v),
    }
    theirs = {}
    check = {}
    if pin is not None:
        pm = build_pin_model(path, floating_base)
        pm.gravity = pin.Motion(np.asarray(model.gravity, dtype=float), np.zeros(3))
        pd = pm.createData()
        mp = PinMap(model, pm, path)
        qp, vp, ap = mp.q_to_pin(q), mp.v_to_pin(v, q), mp.a_to_pin(a, q, v)
        taup = pin.rnea(pm, pd, qp, vp, ap).copy()
        theirs = {
            "inverse_dynamics": ("pin.rnea", lambda: pin.rnea(pm, pd, qp, vp, ap)),
            "forward_dynamics": ("pin.aba", lambda: pin.aba(pm, pd, qp, vp, taup)),
            "mass_matrix": ("pin.crba", lambda: pin.crba(pm, pd, qp)),
            "gravity_torques": ("pin.computeGeneralizedGravity", lambda: pin.computeGeneralizedGravity(pm, pd, qp)),
            "nonlinear_effects": ("pin.nonLinearEffects", lambda: pin.nonLinearEffects(pm, pd, qp, vp)),
        }
        # sanity: the timed calls compute the same thing
        check["inverse_dynamics"] = np.abs(mp.tau_from_pin(taup, q) - tau).max()
        check["mass_matrix"] = np.abs(mp.mat_from_pin(symmetrize_upper(np.array(pin.crba(pm, pd, qp))), q)
                                      - ldr.mass_matrix(model, q)).max()

    rows = []
    if pin is not None:
        rows += bench_batched(model, pm, mp, repeat, target_s, rng)
    for name, fn in ours.items():
        if name in theirs:
            pname, pfn = theirs[name]
            rows.append((name, pname) + time_ratio(fn, pfn, repeat, target_s))
        else:
            (t_ours,) = time_calls([fn], repeat, target_s)
            rows.append((name, "-", t_ours, None, None))
    return model, rows, check


def bench_batched(model, pm, mp, repeat, target_s, rng, n_states=1000):
    """Per-state time of 1000 states: our batched call against Pinocchio's ModelPool calls at
    their best thread count on this machine."""
    Q = np.array([ldr.random_configuration(model, rng) for _ in range(n_states)])
    V = rng.uniform(-1.0, 1.0, (n_states, model.nv))
    A = rng.uniform(-1.0, 1.0, (n_states, model.nv))
    T = ldr.inverse_dynamics(model, Q, V, A)
    Qp = np.asfortranarray(np.array([mp.q_to_pin(q) for q in Q]).T)
    Vp = np.asfortranarray(np.array([mp.v_to_pin(v, q) for q, v in zip(Q, V)]).T)
    Ap = np.asfortranarray(np.array([mp.a_to_pin(a, q, v) for q, v, a in zip(Q, V, A)]).T)
    cores = len(os.sched_getaffinity(0))
    pool = pin.ModelPool(pm, cores)
    Tp = np.asfortranarray(pin.rneaInParallel(1, pool, Qp, Vp, Ap))
    out = np.empty_like(Tp)
    rows = []
    for name, ours, theirs in (
            ("batch 1000 ID", lambda: ldr.inverse_dynamics(model, Q, V, A),
             lambda k: pin.rneaInParallel(k, pool, Qp, Vp, Ap, out)),
            ("batch 1000 FD", lambda: ldr.forward_dynamics(model, Q, V, T),
             lambda k: pin.abaInParallel(k, pool, Qp, Vp, Tp, out))):
        fns = [ours] + [(lambda k=k: theirs(k)) for k in range(1, cores + 1)]
        times = time_calls(fns, repeat, target_s)
        best = int(np.argmin(times[1:]))
        pname = "pin.%sInParallel(%d thr)" % ("rnea" if "ID" in name else "aba", best + 1)
        rows.append((name + " /state", pname, times[0] / n_states, times[1 + best] / n_states,
                     times[0] / times[1 + best]))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=11, help="timeit repeats (median reported)")
    ap.add_argument("--target-ms", type=float, default=10.0, help="duration of one repeat")
    ap.add_argument("--big", default="centauro_description/urdf/centauro.urdf",
                    help="example-robot-data URDF of the 30+-DOF floating-base robot")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    info = _versions()
    print("lie_dynamics_ros benchmark")
    print("  machine   : %s | %s | %d CPUs" % (info["machine"], info["cpu"], os.cpu_count() or 0))
    bits, isa = _vector_width()
    print("  vectors   : %d bit (%s), %d doubles per instruction" % (bits, isa, bits // 64))
    print("  python %s  numpy %s  numba %s  pinocchio %s" % (
        info["python"], info["numpy"], info["numba"], info["pinocchio"]))
    print("  median of %d repeats of ~%.0f ms each (ours and Pinocchio interleaved), after warm-up "
          "(numba compiled first)" % (
        args.repeat, args.target_ms))

    robots = [("arm7", os.path.join(ROOT, "urdf", "arm7.urdf"), False)]
    if pin is not None:
        robots.append(("xarm7", erd("xarm_description/urdf/xarm7.urdf"), False))
        robots.append((os.path.basename(args.big).split(".")[0], erd(args.big), True))
    else:
        print("  (pinocchio not installed: no humanoid from example-robot-data, no reference timings)")

    for label, path, fb in robots:
        if not os.path.exists(path):
            print("\n%s: %s not found, skipped" % (label, path))
            continue
        tc = time.perf_counter()
        model, rows, check = bench_robot(label, path, fb, args.repeat, args.target_ms / 1e3)
        print("\n%s (%s, %s base, nq %d, nv %d)  [%.1f s incl. warm-up]" % (
            label, os.path.basename(path), "floating" if fb else "fixed", model.nq, model.nv,
            time.perf_counter() - tc))
        hdr = "%-24s %12s  %-30s %12s %9s" % ("call", "ours [us]", "pinocchio call", "pin [us]",
                                             "ours/pin")
        print(hdr)
        print("-" * len(hdr))
        for name, pname, t_ours, t_pin, ratio in rows:
            if t_pin is None:
                print("%-24s %12.2f  %-30s %12s %9s" % (name, t_ours * 1e6, pname, "-", "-"))
            else:
                print("%-24s %12.2f  %-30s %12.2f %9.2f" % (name, t_ours * 1e6, pname, t_pin * 1e6,
                                                            ratio))
        if check:
            print("  (same results: max |tau - rnea| %.1e, max |M - crba| %.1e)" % (
                check["inverse_dynamics"], check["mass_matrix"]))
    print("\ntotal %.1f s" % (time.perf_counter() - t0))


if __name__ == "__main__":
    main()
