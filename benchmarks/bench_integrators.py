"""Error vs work: Lie group integrators against classical integrators.

Problems
  * pendulum: the N-fold spherical pendulum on (TS^2)^N (examples/spherical_pendulum.py),
    N = 2, a non-planar initial condition, T = 3;
  * floating: a floating-base robot from URDF (example-robot-data solo12 when installed, else
    the walker URDF of test/test_simulate.py), PD torques on the joints, T = 1 s.

Contestants
  * ours: RKMK4, Casas–Owren RKMK4, CF4 (fixed h), RKMK(5,4), CF 4(3) (tolerance sweep), and on
    the robot ``simulate``'s semi_implicit;
  * classical RK4 on the embedding coordinates (pendulum: R^6N; robot: quaternions), with
    renormalisation after every step (and, for the pendulum, without);
  * scipy ``solve_ivp`` RK45 and DOP853 on the same coordinates (normalised at the end only).

Error: pendulum, Euclidean norm in R^6N at T; robot, |difference(q_ref, q)| + |v - v_ref| at T,
against a strict DOP853 reference (rtol = atol = 1e-13).  Work: evaluations of the vector field
(``nfev``; one ABA per evaluation on the robot) and wall time (best of ``--repeat`` runs).
"""
import argparse
import os
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import lie_dynamics_ros as ldr  # noqa: E402
from examples import spherical_pendulum as pend  # noqa: E402
from lie_dynamics_ros.integrators import solve  # noqa: E402
from lie_dynamics_ros.integrators.simulate import (configuration_rate,  # noqa: E402
                                                   normalize_configuration, simulate)


def _timed(fn, repeat):
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return out, best


class Counter:
    def __init__(self, f):
        self.f, self.n = f, 0

    def __call__(self, *a):
        self.n += 1
        return self.f(*a)


# ============================================================================= pendulum
def bench_pendulum(repeat=1, quick=False, N=2, T=3.0):
    p = pend.PendulumParams.uniform(N)
    y0 = pend.generic_initial_condition(N, seed=1)
    ref = pend.reference_solution(p, y0, T).sol(T)
    sp = pend.space(N)
    F = pend.make_vector_field(p)
    rows = []
    steps = (50, 100, 200, 400, 800) if not quick else (100, 400)
    tols = (1e-3, 1e-5, 1e-7, 1e-9) if not quick else (1e-5, 1e-8)

    def add(name, param, fn):
        (y, nfev), wall = _timed(fn, repeat)
        dq, qw = pend.constraint_residuals(y, N)
        rows.append(dict(problem="pendulum", method=name, param=param, nfev=nfev, wall=wall,
                         err=float(np.linalg.norm(y - ref)), manifold=max(dq, qw)))

    for m in ("rkmk4", "rkmk4_2c", "cf4"):
        for n in steps:
            def run(m=m, n=n):
                f = Counter(pend.make_f(p))
                sol = solve(sp, f, y0, (0, T), h=T / n, method=m)
                return sol.y[-1], f.n
            add(m, f"h=T/{n}", run)
    for m in ("rkmk45", "cf43"):
        for tol in tols:
            def run(m=m, tol=tol):
                f = Counter(pend.make_f(p))
                sol = solve(sp, f, y0, (0, T), method=m, tol=tol)
                return sol.y[-1], f.n
            add(m, f"tol={tol:g}", run)
    for proj, name in ((sp.project, "RK4 R^6N + projection"), (None, "RK4 R^6N")):
        for n in steps:
            def run(n=n, proj=proj):
                Fc = Counter(F)
                return pend.classical_rk4(Fc, y0, T, n, proj, trajectory=False), Fc.n
            add(name, f"h=T/{n}", run)
    for meth in ("RK45", "DOP853"):
        for tol in tols:
            def run(meth=meth, tol=tol):
                sol = solve_ivp(F, (0, T), y0, method=meth, rtol=tol, atol=tol)
                return sol.y[:, -1], sol.nfev
            add(f"scipy {meth}", f"tol={tol:g}", run)
    return rows


# ============================================================================= floating base
def floating_model():
    """solo12 from example-robot-data when available, else the test walker."""
    try:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))), "test"))
        from oracle import erd
        path = erd("solo_description/robots/solo12.urdf")
        if os.path.exists(path):
            return ldr.load_urdf(path, floating_base=True), "solo12 (example-robot-data)"
    except Exception:
        pass
    from test_simulate import FLOATING_URDF
    return ldr.load_urdf(FLOATING_URDF, floating_base=True), "walker (test URDF)"


def bench_floating(repeat=1, quick=False, T=1.0):
    model, label = floating_model()
    nq, nv = model.nq, model.nv
    rng = np.random.default_rng(0)
    q0 = ldr.neutral_configuration(model)
    q0[3:7] = [0.2, -0.1, 0.3, 0.9]
    q0[3:7] /= np.linalg.norm(q0[3:7])
    q0[7:] = rng.uniform(-0.5, 0.5, nq - 7)
    v0 = np.r_[rng.normal(size=3), 3.0 * rng.normal(size=3), rng.normal(size=nv - 6)]
    qj0 = q0[7:].copy()
    Kp, Kd = 0.5, 0.005       # gentle PD (knee inertia ~5e-4 kg m^2: keep it non-stiff)

    def tau(t, q, v):
        out = np.zeros(nv)
        out[6:] = -Kp * (q[7:] - qj0) - Kd * v[6:]
        return out

    def F(t, y):
        # classical ODE in quaternion coordinates; the dynamics sees the normalised quaternion
        q, v = y[:nq], y[nq:]
        qn = normalize_configuration(model, q)
        return np.r_[configuration_rate(model, q, v), ldr.forward_dynamics(model, qn, v,
                                                                           tau(t, qn, v))]
    y0 = np.r_[q0, v0]
    sol = solve_ivp(F, (0, T), y0, method="DOP853", rtol=1e-13, atol=1e-13)
    qr, vr = normalize_configuration(model, sol.y[:nq, -1]), sol.y[nq:, -1]
    chk = simulate(model, q0, v0, T, T / 4000, method="rkmk4", tau=tau)
    ref_check = (np.linalg.norm(ldr.difference(model, qr, chk.q[-1]))
                 + np.linalg.norm(chk.v[-1] - vr))
    rows = []

    def err(q, v):
        return float(np.linalg.norm(ldr.difference(model, qr, normalize_configuration(model, q)))
                     + np.linalg.norm(v - vr))

    def add(name, param, fn):
        try:
            with np.errstate(all="ignore"):
                (q, v, nfev), wall = _timed(fn, repeat)
            e = err(q, v)
            if not np.isfinite(e):
                raise FloatingPointError
        except (ValueError, FloatingPointError, np.linalg.LinAlgError):
            rows.append(dict(problem=label, method=name, param=param, nfev=0, wall=np.nan,
                             err=np.inf, manifold=np.nan))
            return
        rows.append(dict(problem=label, method=name, param=param, nfev=nfev, wall=wall,
                         err=e, manifold=abs(np.linalg.norm(q[3:7]) - 1.0)))

    steps = (25, 50, 100, 200, 400) if not quick else (50, 200)
    tols = (1e-3, 1e-5, 1e-7, 1e-9) if not quick else (1e-5, 1e-8)
    for m in ("rkmk4", "rkmk4_2c", "cf4"):
        for n in steps:
            def run(m=m, n=n):
                r = simulate(model, q0, v0, T, T / n, method=m, tau=tau)
                return r.q[-1], r.v[-1], r.nfev
            add(m, f"h=T/{n}", run)
    for n in [s * 4 for s in steps]:
        def run(n=n):
            r = simulate(model, q0, v0, T, T / n, method="semi_implicit", tau=tau)
            return r.q[-1], r.v[-1], r.nfev
        add("semi_implicit", f"h=T/{n}", run)
    for m in ("rkmk45", "cf43"):
        for tol in tols:
            def run(m=m, tol=tol):
                r = simulate(model, q0, v0, T, method=m, tau=tau, rtol=tol, atol=tol)
                return r.q[-1], r.v[-1], r.nfev
            add(m, f"tol={tol:g}", run)

    def project(y):
        return np.r_[normalize_configuration(model, y[:nq]), y[nq:]]
    for n in steps:
        def run(n=n):
            Fc = Counter(F)
            y = pend.classical_rk4(Fc, y0, T, n, project, trajectory=False)
            return y[:nq], y[nq:], Fc.n
        add("RK4 quaternions + renormalisation", f"h=T/{n}", run)
    for meth in ("RK45", "DOP853"):
        for tol in tols:
            def run(meth=meth, tol=tol):
                s = solve_ivp(F, (0, T), y0, method=meth, rtol=tol, atol=tol)
                return s.y[:nq, -1], s.y[nq:, -1], s.nfev
            add(f"scipy {meth} (quaternions)", f"tol={tol:g}", run)
    return rows, label, ref_check


# ============================================================================= report
def print_table(rows, title):
    print(f"\n## {title}\n")
    print(f"| {'method':34s} | {'parameter':10s} | {'nfev':>6s} | {'wall ms':>8s} | "
          f"{'error':>9s} | {'off-manifold':>12s} |")
    print("|" + "|".join("-" * w for w in (36, 12, 8, 10, 11, 14)) + "|")
    for r in rows:
        if not np.isfinite(r["err"]):
            print(f"| {r['method']:34s} | {r['param']:10s} | {'-':>6s} | {'-':>8s} | "
                  f"{'diverged':>9s} | {'-':>12s} |")
            continue
        print(f"| {r['method']:34s} | {r['param']:10s} | {r['nfev']:6d} | "
              f"{1e3 * r['wall']:8.1f} | {r['err']:9.2e} | {r['manifold']:12.1e} |")


def winners(rows, targets=(1e-4, 1e-6, 1e-8)):
    """For each target error, the method reaching it with the fewest evaluations / least time
    (the cheapest run of each method that meets the target)."""
    by = {}
    for r in rows:
        by.setdefault(r["method"], []).append(r)
    out = []
    for tgt in targets:
        best_n, best_w = None, None
        for m, rs in by.items():
            ok = [r for r in rs if r["err"] <= tgt]
            if not ok:
                continue
            n = min(r["nfev"] for r in ok)
            w = min(r["wall"] for r in ok)
            if best_n is None or n < best_n[1]:
                best_n = (m, n)
            if best_w is None or w < best_w[1]:
                best_w = (m, w)
        out.append((tgt, best_n, best_w))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer runs")
    ap.add_argument("--repeat", type=int, default=3, help="wall time = best of this many")
    args = ap.parse_args(argv)
    rows = bench_pendulum(args.repeat, args.quick)
    print_table(rows, "N = 2 spherical pendulum on (TS^2)^2, T = 3")
    rows2, label, ref_check = bench_floating(args.repeat, args.quick)
    print_table(rows2, f"floating base: {label}, T = 1 s (reference check: DOP853 1e-13 vs "
                       f"RKMK4 h = 1/4000: {ref_check:.1e})")
    for title, rr in (("pendulum", rows), (label, rows2)):
        print(f"\nCheapest method reaching a target error ({title}):")
        for tgt, bn, bw in winners(rr):
            if bn is None:
                print(f"  error <= {tgt:g}: none")
                continue
            print(f"  error <= {tgt:g}: fewest evaluations {bn[0]} ({bn[1]}), "
                  f"least wall time {bw[0]} ({1e3 * bw[1]:.1f} ms)")
    return rows, rows2


if __name__ == "__main__":
    main()
