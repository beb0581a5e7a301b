"""Hold the pose and detect a contact: the external-torque observer on the bundled arm, without ROS.

arm7 holds its ready pose under PD + gravity (``ldr.control.PDGravityController``) in the
simulator (``Simulator``, semi-implicit Euler at 1 kHz). From t = 1 s to 1.5 s a 20 N push along
the flange's axis acts on panda_link7 (J^T f: about 6 N m on panda_joint2 and 9.4 N m on
panda_joint4). The observer's runtime (``runtime.observer.ObserverRuntime``, what
external_torque_observer_node runs; De Luca et al. 2006) takes the states with the torque the
simulator applied, twice:

  * every state (1 kHz);
  * as a subscriber on a busy machine takes them: runs of consecutive states and gaps of
    50-300 ms (seeded), where the exact exponential update keeps the estimate right.

Printed: the first contact and its delay after the push, the joints flagged, the largest |r|
before the push and after its release, and for the gapped states the skipped count. The figure
(r(t) per joint for both, the push shaded, the threshold dashed) is
``<outdir>/hold_and_detect_contact.png``.

    python examples/hold_and_detect_contact.py [outdir]
"""
import argparse
import os
import sys
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # checkout

import lie_dynamics_ros as ldr  # noqa: E402
from examples._figures import save  # noqa: E402
from lie_dynamics_ros.control.controllers import PDGains, PDGravityController  # noqa: E402
from lie_dynamics_ros.integrators.simulate import make_stepper  # noqa: E402
from lie_dynamics_ros.integrators.simulator import Simulator  # noqa: E402
from lie_dynamics_ros.runtime.observer import ObserverRuntime  # noqa: E402

READY = np.array([0.0, -0.785398163, 0.0, -2.356194490, 0.0, 1.570796327, 0.785398163])
DT_NS = 1_000_000
LINK = "panda_link7"
PUSH = np.array([0.0, 0.0, 20.0, 0.0, 0.0, 0.0])        # (force, torque) in LINK's frame
PUSH_S = (1.0, 1.5)
DURATION_S = 2.5
# the observer node's defaults (ros/schemas/external_torque_observer.py)
PARAMS = SimpleNamespace(observer_gain=[50.0], contact_threshold=[2.0], joints=[],
                         gravity=[0.0, 0.0, -9.81], compensate_friction=True)


def simulate(model):
    """(t (k,), q, v, applied torque (k, nv)) of the held arm, one row per state."""
    sim = Simulator(model, DT_NS, make_stepper(model, "semi_implicit"),
                    np.zeros(model.nv, bool), READY, np.zeros(model.nv))
    ctrl = PDGravityController(model, PDGains(K_P=[600, 600, 600, 600, 250, 150, 50],
                                              K_D=[50, 50, 50, 20, 20, 20, 10]))
    rows = [(0.0, sim.q, sim.v, ldr.gravity_torques(model, sim.q))]
    zero = np.zeros(model.nv)
    for k in range(int(round(DURATION_S / (DT_NS * 1e-9)))):
        t = k * DT_NS * 1e-9
        if np.isclose(t, PUSH_S[0]) or np.isclose(t, PUSH_S[1]):
            sim.set_external_wrench(LINK, PUSH if np.isclose(t, PUSH_S[0]) else None)
        sim.step(ctrl.step(t, sim.q, sim.v, READY, zero))
        rows.append((t + DT_NS * 1e-9, sim.q, sim.v, sim.tau))
    return [np.array(x) for x in zip(*rows)]


def observe(model, run, taken):
    """Runtime fed the states ``taken`` -> (its estimates (len(taken), nv), contact flags,
    [(time, joints) of each new contact], the runtime)."""
    t, q, v, tau = run
    rt = ObserverRuntime("joint_states")
    reason = rt.set_model(model, PARAMS)
    assert reason is None, reason
    rs, flags, news = [], [], []
    for i in taken:
        r, contact, new = rt.update(int(round(t[i] * 1e9)), q[i], v[i], tau[i])
        rs.append(r.copy())
        flags.append(contact)
        if new is not None:
            news.append((t[i], new))
    return np.array(rs), np.array(flags), news, rt


def busy_subscriber(n, rng):
    """Indices of the states a loaded subscriber takes: runs of 5-50 consecutive states and
    gaps of 50-300 ms, alternately."""
    taken, i = [0], 0
    while i < n - 1:
        for _ in range(int(rng.integers(5, 51))):
            i = min(n - 1, i + 1)
            taken.append(i)
        i = min(n - 1, i + int(rng.integers(50, 301)))
        taken.append(i)
    return np.unique(taken)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", nargs="?", default="out")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    os.makedirs(args.outdir, exist_ok=True)
    model = ldr.load_urdf("arm7")
    run = simulate(model)
    t = run[0]
    every = np.arange(len(t))
    gapped = busy_subscriber(len(t), np.random.default_rng(args.seed))
    threshold = PARAMS.contact_threshold[0]
    tau_ext = ldr.body_jacobian(model, READY, LINK).T @ PUSH
    print("push %.0f N on %s from %.1f s to %.1f s: J^T f = %s N m" % (
        PUSH[2], LINK, PUSH_S[0], PUSH_S[1], np.round(tau_ext, 2)))
    results = {}
    for name, taken in (("every state (1 kHz)", every),
                        ("a busy subscriber (gaps of 50-300 ms)", gapped)):
        r, flags, news, rt = observe(model, run, taken)
        ts = t[taken]
        before = ts <= PUSH_S[0]
        released = ts > PUSH_S[1] + 0.3
        print("%s: %d states (%d skipped, largest gap %.0f ms)" % (
            name, len(taken), rt.skipped, rt.largest_gap_ns * 1e-6))
        print("  max |r| before the push %.2g N m; from 0.3 s after its release %.2g N m" % (
            np.abs(r[before]).max(), np.abs(r[released]).max()))
        for when, joints in news:
            print("  contact at t = %.3f s (%.0f ms after the push) on %s" % (
                when, (when - PUSH_S[0]) * 1e3, joints))
        results["%s: %d of %d states" % (name, len(taken), len(t))] = (ts, r, flags)
    figure(model, results, threshold, args.outdir)


def figure(model, results, threshold, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(results), 1, figsize=(9, 6.5), sharex=True)
    for ax, (name, (ts, r, flags)) in zip(axes, results.items()):
        ax.axvspan(*PUSH_S, color="0.9", label="push (20 N on the flange)")
        for j, joint in enumerate(model.joint_names):
            ax.plot(ts, r[:, j], lw=1.2, label=joint.replace("panda_", ""),
                    marker="." if len(ts) < 1000 else None, ms=3)
        for y in (threshold, -threshold):
            ax.axhline(y, ls="--", lw=0.8, color="k")
        if flags.any():
            ax.plot(ts[flags], np.full(flags.sum(), 1.15 * np.abs(r).max()), "|", color="r",
                    ms=6, label="contact flagged")
        ax.set_ylabel("external torque estimate r (N m)")
        ax.set_title(name, fontsize=10)
    axes[0].legend(ncol=2, fontsize=7, loc="lower right")
    axes[-1].set_xlabel("time (s)")
    return print("figure:", save(fig, outdir, "hold_and_detect_contact.png"))


if __name__ == "__main__":
    main()
