"""Cold start: the first call of each of the 13 functions a Pinocchio user calls first, in a
fresh process, after the documented ``ldr_precompile``. Not a test.

The issue-21 target is 2 s in all. A first call either loads its kernels from numba's cache
(the case measured here, after the precompile) or compiles them (a miss: the package then
logs "compiling numba kernels" on stderr, which this script reports as a failure of the
precompile set). Printed: the import and the URDF load, then one line per function with the
seconds of its first call, then the total of the 13 calls.

    .venv/bin/python benchmarks/cold_start.py [--urdf arm7] [--no-precompile] [--runs 1]
                                              [--empty-cache]

``--empty-cache`` starts from an empty NUMBA_CACHE_DIR (a fresh install): ldr_precompile
then compiles everything (minutes), and the probe shows whether it covered the 13 calls.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_S = 2.0

#: the fresh process: times each first call and prints one JSON object
PROBE = r'''
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import lie_dynamics_ros as ldr
from lie_dynamics_ros.resources import bundled_urdf
t_import = time.perf_counter() - t0
t0 = time.perf_counter()
name = sys.argv[1]
model = ldr.load_urdf(name)
t_load = time.perf_counter() - t0
q = ldr.random_configuration(model, rng=0)
v, a, tau = np.full(model.nv, 0.1), np.full(model.nv, 0.2), np.full(model.nv, 0.3)
mask = np.zeros(model.nv, dtype=bool)
mask[-1] = True
frame = model.body_names[-1]
calls = [
    ("inverse_dynamics", lambda: ldr.inverse_dynamics(model, q, v, a)),
    ("forward_dynamics", lambda: ldr.forward_dynamics(model, q, v, tau)),
    ("mass_matrix", lambda: ldr.mass_matrix(model, q)),
    ("hybrid_dynamics", lambda: ldr.hybrid_dynamics(model, q, v, a, tau, mask)),
    ("inverse_dynamics_derivatives", lambda: ldr.inverse_dynamics_derivatives(model, q, v, a)),
    ("forward_dynamics_derivatives", lambda: ldr.forward_dynamics_derivatives(model, q, v, tau)),
    ("simulate", lambda: ldr.simulate(model, q, v, 0.01, 1e-3, tau=tau)),
    ("rollout", lambda: ldr.rollout(model, np.tile(q, (4, 1)), np.tile(v, (4, 1)), 0.01, 1e-3,
                                    tau=tau)),
    ("regressor", lambda: ldr.regressor(model, q, v, v, a)),
    ("kinetic_energy", lambda: ldr.kinetic_energy(model, q, v)),
    ("frame_pose", lambda: ldr.frame_pose(model, q, frame)),
    ("body_jacobian", lambda: ldr.body_jacobian(model, q, frame)),
    ("center_of_mass", lambda: ldr.center_of_mass(model, q)),
]
times = []
for what, call in calls:
    t0 = time.perf_counter()
    call()
    times.append((what, time.perf_counter() - t0))
print(json.dumps({"import": t_import, "load_urdf": t_load, "calls": times}))
'''


def run_probe(urdf):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [REPO] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    out = subprocess.run([sys.executable, "-c", PROBE, urdf], env=env, capture_output=True,
                         text=True, timeout=3600, cwd=REPO)
    if out.returncode != 0:
        raise SystemExit("cold_start: the probe failed:\n" + out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--urdf", default="arm7", help="bundled name or URDF path (default arm7)")
    p.add_argument("--no-precompile", action="store_true",
                   help="skip ldr_precompile (measures whatever the cache holds)")
    p.add_argument("--runs", type=int, default=1, help="fresh processes to time")
    p.add_argument("--empty-cache", action="store_true",
                   help="start from an empty NUMBA_CACHE_DIR (a fresh install)")
    opts = p.parse_args()
    if opts.empty_cache:
        os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="ldr_cold_start_")
        print("empty numba cache: %s" % os.environ["NUMBA_CACHE_DIR"])
    if not opts.no_precompile:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "lie_dynamics_ros.precompile", opts.urdf],
                       check=True, env=dict(os.environ, PYTHONPATH=REPO), cwd=REPO,
                       stderr=subprocess.DEVNULL)
        print("ldr_precompile: %.1f s (once; later processes reuse numba's cache)"
              % (time.perf_counter() - t))
    for run in range(opts.runs):
        res, err = run_probe(opts.urdf)
        compiled = [line for line in err.splitlines() if "compiling numba kernels" in line]
        print("cold start, fresh process %d, %s: import %.2f s, load_urdf %.2f s"
              % (run + 1, opts.urdf, res["import"], res["load_urdf"]))
        for what, s in res["calls"]:
            print("  %-30s %7.3f s" % (what, s))
        total = sum(s for _, s in res["calls"])
        print("  %-30s %7.3f s  (target <= %.1f s: %s)"
              % ("total of the 13 first calls", total, TARGET_S,
                 "met" if total <= TARGET_S else "NOT met"))
        if compiled:
            print("  a first call compiled (not covered by the precompile set): " + compiled[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
