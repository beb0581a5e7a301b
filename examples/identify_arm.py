"""Identify an arm in the simulator, end to end: excitation -> controller -> rosbag2 bag ->
``ldr_identify`` -> identified URDF -> a better inverse-dynamics model.

1. The "true" arm is urdf/arm7.urdf with every body's mass distribution scaled by a random
   factor in [0.8, 1.2] (the whole pseudo-inertia: mass, first and second moments, so it
   stays physical) and joint damping and Coulomb friction that the URDF lacks. The example
   writes it as a URDF (``identification.urdf_writer.write_urdf``).
2. A Fourier excitation (Swevers et al. 1997, ``ldr.excitation_trajectory``) on the nominal
   model plays through ``ldr_bringup sim_with_adaptive_controller --offline --reference
   --record``: the simulator runs the true arm, the controller is Slotine-Li with ``adapt:
   false`` on the nominal URDF (computed torque with a PD term, Slotine & Li 1987).
3. ``ldr_identify`` reads the bag (positions and the simulator's applied efforts) and writes
   the identified URDF and its validation figure.
4. Holding the arm: the true arm, from rest, under the torques of the inverse-dynamics
   node's runtime (``runtime/inverse_dynamics.py``, the node's default parameters: gravity
   and friction compensation, no feedback) with the nominal and with the identified URDF;
   the drift from the start pose over ``hold`` seconds is the error.

Prints the numbers and writes ``identify_arm.png`` (and the URDFs, the bag) into ``--out``
(default ``./out/identify_arm``). Needs ROS 2 (rclpy), mcap and matplotlib.

    python examples/identify_arm.py                 # 30 s of excitation, two to three minutes
    python examples/identify_arm.py --duration 8 --harmonics 3 --iterations 5
"""
import argparse
import os
import sys
import time
from types import SimpleNamespace

import numpy as np
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # checkout

import lie_dynamics_ros as ldr  # noqa: E402
from lie_dynamics_ros.identification.urdf_writer import write_urdf  # noqa: E402
from lie_dynamics_ros.resources import share_dir  # noqa: E402

NOMINAL = os.path.join(share_dir(), "urdf", "arm7.urdf")
#: the true arm's joint terms (the nominal URDF has none): N m s/rad and N m
DAMPING = np.array([0.8, 0.8, 0.6, 0.6, 0.2, 0.2, 0.1])
FRICTION = np.array([1.0, 1.0, 0.8, 0.8, 0.3, 0.3, 0.2])


def true_model(nominal, seed=0, spread=0.2):
    """The nominal model with each body scaled by a factor in [1 - spread, 1 + spread] and
    the joint terms DAMPING, FRICTION."""
    rng = np.random.default_rng(seed)
    scale = 1.0 + spread * rng.uniform(-1.0, 1.0, nominal.njoints)
    theta = ldr.inertial_parameters(nominal).reshape(nominal.njoints, 10) * scale[:, None]
    return nominal.with_inertial_parameters(theta.reshape(-1)).with_joint_dynamics(
        damping=DAMPING, friction=FRICTION)


def write_yaml(path, doc):
    with open(path, "w") as f:
        yaml.safe_dump(doc, f)


def reference_yaml(exc):
    jt = exc.to_joint_trajectory()
    return {"joint_names": list(jt.names), "times": jt.times.tolist(),
            "positions": jt.positions.tolist(), "velocities": jt.velocities.tolist(),
            "accelerations": jt.accelerations.tolist()}


def inverse_dynamics_runtime(model):
    """The inverse-dynamics node's runtime for ``model`` with the node's default parameters
    (gravity and friction compensation on)."""
    from lie_dynamics_ros.ros.schemas.inverse_dynamics import SCHEMA
    from lie_dynamics_ros.runtime.inverse_dynamics import InverseDynamicsRuntime
    from lie_dynamics_ros.safety import GuardConfig
    p = SimpleNamespace(**{prm.name: prm.default for prm in SCHEMA})
    rt = InverseDynamicsRuntime()
    reason, setup = rt.prepare(model, p, GuardConfig(), lambda m, p: None)
    if reason:
        raise RuntimeError(reason)
    rt.install(setup, new_model=True)
    return rt


def hold_error(plant, controller, q0, duration, dt=1e-3):
    """Drift of ``plant`` from rest at ``q0`` under the torque the inverse-dynamics node
    answers each state with, its model being ``controller`` (no reference: gravity, Coriolis
    and the friction feedforward; no feedback): (times, |q - q0| per joint over time)."""
    rt = inverse_dynamics_runtime(controller)

    def tau(t, q, v):
        return rt.torques(int(round(t * 1e9)) + 1, q, v, 0)
    res = ldr.simulate(plant, q0, np.zeros(plant.nv), duration, dt=dt, method="rkmk4", tau=tau)
    return res.t, np.abs(res.q - q0)


def run(out_dir="out/identify_arm", duration=30.0, harmonics=5, base_frequency=0.1,
        iterations=40, hold=2.0, seed=0, figure=None, stream=sys.stdout):
    """The whole workflow; returns a dict of the numbers (hold drifts, true and identified
    friction and damping), the excitation, the number of steps and the paths written."""
    from lie_dynamics_ros.ros import bringup, identify_cli
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.monotonic()
    nominal = ldr.load_urdf(NOMINAL)
    plant = true_model(nominal, seed)
    true_urdf = os.path.join(out_dir, "arm7_true.urdf")
    write_urdf(plant, NOMINAL, true_urdf)

    exc = ldr.excitation_trajectory(nominal, duration, harmonics=harmonics,
                                    base_frequency=base_frequency, seed=seed,
                                    max_iterations=iterations)
    ref, init = (os.path.join(out_dir, n) for n in ("reference.yaml", "initial_state.yaml"))
    write_yaml(ref, reference_yaml(exc))
    write_yaml(init, {"/**/forward_dynamics": {"ros__parameters": {
        "initial_positions": exc.q[0].tolist(), "initial_velocities": [0.0] * nominal.nv}}})
    print("excitation: %s" % exc, file=stream)

    bag = os.path.join(out_dir, "excitation_bag")
    if os.path.exists(bag):
        import shutil
        shutil.rmtree(bag)
    summary = bringup.run([
        "sim_with_adaptive_controller", "--urdf", true_urdf, "--offline",
        "--duration", str(duration), "--reference", ref, "--initial-state", init,
        "--record", bag, "--no-progress", "--ros-args",
        "-p", "adaptive_controller:urdf_path:=%s" % NOMINAL,
        "-p", "adaptive_controller:adapt:=false"], stream=sys.stderr)
    print("bag: %d steps, %d messages (%s)" % (summary["steps"], summary["recorded"], bag),
          file=stream)

    identified_urdf = os.path.join(out_dir, "arm7_identified.urdf")
    report = os.path.join(out_dir, "identify_report.png")
    rc = identify_cli.main(["--urdf", NOMINAL, "--bag", bag, "--out", identified_urdf,
                            "--report", report, "--no-progress"])
    if rc != 0:
        raise RuntimeError("ldr_identify failed (exit %d)" % rc)
    identified = ldr.load_urdf(identified_urdf)

    q0 = exc.q[0]
    th, drift_nominal = hold_error(plant, nominal, q0, hold)
    _, drift_identified = hold_error(plant, identified, q0, hold)
    numbers = {
        "hold_rms_nominal": float(np.sqrt(np.mean(drift_nominal ** 2))),
        "hold_rms_identified": float(np.sqrt(np.mean(drift_identified ** 2))),
        "hold_max_nominal": float(drift_nominal.max()),
        "hold_max_identified": float(drift_identified.max()),
        "friction_true": plant.joint_friction.tolist(),
        "friction_identified": identified.joint_friction.tolist(),
        "damping_true": plant.joint_damping.tolist(),
        "damping_identified": identified.joint_damping.tolist(),
        "true_urdf": true_urdf, "identified_urdf": identified_urdf, "bag": bag,
        "report": report, "steps": summary["steps"], "excitation": exc,
        "wall_time": time.monotonic() - t0,
    }
    print("holding the true arm at rest for %.1f s with the inverse-dynamics torque of\n"
          "  the nominal URDF:    drift RMS %.3g rad, max %.3g rad\n"
          "  the identified URDF: drift RMS %.3g rad, max %.3g rad" % (
              hold, numbers["hold_rms_nominal"], numbers["hold_max_nominal"],
              numbers["hold_rms_identified"], numbers["hold_max_identified"]), file=stream)
    for j, name in enumerate(nominal.joint_names):
        print("  %s: friction %.3f -> %.3f N m, damping %.3f -> %.3f N m s/rad" % (
            name, FRICTION[j], identified.joint_friction[j], DAMPING[j],
            identified.joint_damping[j]), file=stream)
    if figure is not False:
        numbers["figure"] = plot(th, drift_nominal, drift_identified, plant, identified,
                                 figure or os.path.join(out_dir, "identify_arm.png"))
        print("figure: %s" % numbers["figure"], file=stream)
    print("%.1f s wall" % numbers["wall_time"], file=stream)
    return numbers


def plot(t, drift_nominal, drift_identified, plant, identified, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    ax1.semilogy(t, np.maximum(drift_nominal.max(axis=1), 1e-9), label="nominal URDF")
    ax1.semilogy(t, np.maximum(drift_identified.max(axis=1), 1e-9), label="identified URDF")
    ax1.set(xlabel="t (s)", ylabel="max |q - q0| (rad)",
            title="holding the true arm (gravity + friction compensation)")
    ax1.legend()
    # the nominal URDF has no joint friction: true against identified
    k = np.arange(plant.nv)
    ax2.bar(k - 0.2, plant.joint_friction, 0.4, label="true")
    ax2.bar(k + 0.2, identified.joint_friction, 0.4, label="identified")
    ax2.set(xlabel="joint", ylabel="Coulomb friction (N m)", title="joint friction")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default="out/identify_arm", help="output folder")
    p.add_argument("--figure", default=None, help="figure path (default OUT/identify_arm.png)")
    p.add_argument("--duration", type=float, default=30.0, help="excitation, s")
    p.add_argument("--harmonics", type=int, default=5)
    p.add_argument("--base-frequency", type=float, default=0.1)
    p.add_argument("--iterations", type=int, default=40, help="excitation optimiser's")
    p.add_argument("--hold", type=float, default=2.0, help="holding test, s")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    run(a.out, a.duration, a.harmonics, a.base_frequency, a.iterations, a.hold, a.seed,
        a.figure)
    return 0


if __name__ == "__main__":
    sys.exit(main())
