"""One fixed simulation step, ours against MuJoCo's ``mj_step``, and batched rollouts.

    PYTHONPATH=$PWD python benchmarks/bench_simulate.py [--steps 2000] [--batch 1000]

Robots from example-robot-data: the UR10 arm (6 DOF, fixed base) and the Go2 quadruped (12
joints on a free base, nv = 18). MuJoCo loads the same URDF (visual and collision geometry
dropped, contacts disabled, RK4, dt = 1 ms; the floating base gets a free joint). Rows:

* ``ldr rkmk4 in a run``: per step of one ``simulate`` call of ``--steps`` steps (one compiled
  call for the whole run);
* ``ldr rkmk4 stepper``: per call of ``make_stepper(model, "rkmk4")`` (one compiled step per
  Python call, as the simulator node does);
* ``ldr rkmk4 Python path``: per step of ``make_stepper``'s Python path (``MultibodySpace`` and
  the generic RKMK4, which adaptive methods, constrained models and callable torques take; it
  calls ``lie.se3``'s unchecked twins on the free joint);
* ``ldr simulate(dt)``: a whole ``simulate`` call of one step (validation and result included);
* ``mujoco mj_step``: per Python call of ``mujoco.mj_step`` with ``mjINT_RK4``;
* rollouts: ``--batch`` initial states x 100 steps, ``ldr.rollout`` (batch pool) against
  ``mujoco.rollout.rollout`` with one MjData per core; states per second.

Best of ``--repeat`` runs of ``--steps`` steps, all rows run in turns (the machine is shared:
the minimum is the least disturbed run, and the load falls on both engines alike). Never part of
the tests.
"""
import argparse
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "test"))

import lie_dynamics_ros as ldr  # noqa: E402
from lie_dynamics_ros.algorithms.batch import WORKERS  # noqa: E402
from lie_dynamics_ros.integrators.multibody import python_stepper  # noqa: E402
from lie_dynamics_ros.integrators.simulate import make_stepper, rollout, simulate  # noqa: E402
import mujoco_oracle  # noqa: E402  (test/: the URDF -> MuJoCo conversion the tests use too)

DT = 1e-3


def mujoco_model(path, floating):
    """MuJoCo model of the URDF (test/mujoco_oracle.py): no geometry, no contacts, RK4, 1 ms."""
    return mujoco_oracle.mujoco_model(path, floating, DT)


def interleaved(fns, repeat):
    """Best time of each callable, the callables run in turns so that the load of a shared
    machine falls on all of them alike."""
    out = {k: np.inf for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            t = time.perf_counter()
            fn()
            out[k] = min(out[k], time.perf_counter() - t)
    return out


def bench_robot(label, path, floating, steps, batch, repeat):
    import mujoco
    from mujoco import rollout as mjr
    model = ldr.load_urdf(path, floating_base=floating)
    rng = np.random.default_rng(0)
    q0 = ldr.random_configuration(model, rng)
    v0 = 0.1 * rng.normal(size=model.nv)
    tau = np.zeros(model.nv)
    m = mujoco_model(path, floating)
    d = mujoco.MjData(m)
    d.qvel[:] = 0.1 * rng.normal(size=m.nv)
    m_euler = mujoco_model(path, floating)
    m_euler.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    d_euler = mujoco.MjData(m_euler)
    step = make_stepper(model, "rkmk4")
    fns, per = {}, {}
    for method in ("rkmk4", "cf4", "semi_implicit"):
        simulate(model, q0, v0, 10 * DT, DT, method, tau=tau)             # compile / warm up
        fns[f"ldr {method} in a run"] = (
            lambda method=method: simulate(model, q0, v0, steps * DT, DT, method, tau=tau))
        per[f"ldr {method} in a run"] = steps

    def stepper():
        q, v = q0, v0
        for _ in range(steps):
            q, v = step(q, v, DT, tau)
    fns["ldr rkmk4 stepper"], per["ldr rkmk4 stepper"] = stepper, steps
    slow = python_stepper(model, "rkmk4")

    def slow_stepper():
        q, v = q0, v0
        for _ in range(steps // 10):
            q, v = slow(q, v, DT, tau)
    fns["ldr rkmk4 Python path"], per["ldr rkmk4 Python path"] = slow_stepper, steps // 10

    def one_sim():
        for _ in range(steps // 4):
            simulate(model, q0, v0, DT, DT, "rkmk4", tau=tau)
    fns["ldr simulate(dt) rkmk4"], per["ldr simulate(dt) rkmk4"] = one_sim, steps // 4

    def mj_loop(m=m, d=d):
        for _ in range(steps):
            mujoco.mj_step(m, d)
    fns["mujoco mj_step RK4"], per["mujoco mj_step RK4"] = mj_loop, steps
    fns["mujoco mj_step Euler"] = lambda: mj_loop(m_euler, d_euler)
    per["mujoco mj_step Euler"] = steps
    for fn in fns.values():
        fn()
    best = interleaved(fns, repeat)
    t_mj = best["mujoco mj_step RK4"] / steps

    # rollouts: batch x 100 steps, same initial velocities
    n_roll = 100
    Q0 = np.array([ldr.random_configuration(model, rng) for _ in range(batch)])
    V0 = 0.1 * rng.normal(size=(batch, model.nv))
    rollout(model, Q0[:4], V0[:4], 10 * DT, DT, "rkmk4")
    datas = [mujoco.MjData(m) for _ in range(WORKERS)]
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    init = np.zeros((batch, mujoco.mj_stateSize(m, spec)))
    for k in range(batch):
        mujoco.mj_resetData(m, d)
        d.qvel[:] = V0[k]
        mujoco.mj_getState(m, d, init[k], spec)
    with mjr.Rollout(nthread=WORKERS) as r:
        r.rollout(m, datas, init, nstep=n_roll)
        roll = interleaved({"ldr": lambda: rollout(model, Q0, V0, n_roll * DT, DT, "rkmk4"),
                            "mujoco": lambda: r.rollout(m, datas, init, nstep=n_roll)},
                           max(3, repeat // 3))
    print(f"\n{label}: nq={model.nq} nv={model.nv} (mujoco nq={m.nq} nv={m.nv}), dt = 1 ms, "
          f"contacts off")
    print(f"  {'':28s} {'us/step':>9s} {'vs mj_step RK4':>15s}")
    for name, t in best.items():
        t /= per[name]
        print(f"  {name:28s} {t * 1e6:9.2f} {t / t_mj:14.2f}x")
    t_ours, t_mjr = roll["ldr"], roll["mujoco"]
    print(f"  rollout {batch} x {n_roll} steps, {WORKERS} threads: ldr.rollout "
          f"{batch * n_roll / t_ours / 1e6:.3f} M steps/s ({t_ours * 1e3:.1f} ms), "
          f"mujoco.rollout {batch * n_roll / t_mjr / 1e6:.3f} M steps/s ({t_mjr * 1e3:.1f} ms), "
          f"ratio {t_ours / t_mjr:.2f}x")


def main():
    from oracle import erd
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, batch pool {WORKERS} threads")
    for label, rel, floating in (("ur10", "ur_description/urdf/ur10_robot.urdf", False),
                                 ("go2", "go2_description/urdf/go2.urdf", True)):
        bench_robot(label, erd(rel), floating, args.steps, args.batch, args.repeat)


if __name__ == "__main__":
    main()
