"""ldr_adaptive_demo (``make demo``): adaptive Slotine-Li control of the bundled 7-DOF arm
carrying a 2 kg payload that the controller's model does not contain, over real DDS.

Two closed loops run side by side in one process, each a simulator node
(``forward_dynamics_node``; its model = urdf/arm7.urdf + the payload welded to the flange
``panda_link8``) and an ``adaptive_controller_node`` (model = urdf/arm7.urdf, no payload):

- ``/adaptive``: payload-only adaptation with the physical-consistency projection;
- ``/fixed``: the same node with ``adapt: false`` (Slotine-Li with the nominal model).

Both follow the same exciting reference (a sum of sines on every joint, published once as a
trajectory_msgs/JointTrajectory on ``reference``) from the arm7 "ready" pose at rest. The
simulators publish ``joint_states`` and a clock (``/clock``, and ``/fixed/clock`` remapped for
the second loop); the controllers use that simulated time. A Python simulator cannot keep
1 kHz real time next to two controllers, so the loops run in lockstep on simulated time (as
``ldr_bringup --offline``): each simulator publishes its state, the executor runs until that
state's torque command has come back over DDS, then the next 1 ms step is taken. The nodes
are the console scripts' classes, created in-process with their parameters (and without
parameter services, which only slow the executor down); the executor is rclpy's
EventsExecutor (``--executor single`` for the SingleThreadedExecutor, about 2x slower).

Printed: the tracking RMS of both loops for each second of simulated time, then a labelled
summary (``summary_lines``: the payload estimates against the truth, the RMS ratios, V, the
pace and what any lockstep timeout means). Written: ``out/adaptive_demo.png`` (``figure``:
reference against actual for the joint the payload disturbs most, the error of every joint
with and without adaptation, the payload's mass [kg] and first moment [kg m] against the
truth on separate axes, the Lyapunov function V = 1/2 s^T M s + 1/2 theta_tilde^T Gamma^-1
theta_tilde) and ``out/adaptive_demo.npz`` (the time series). matplotlib is optional: without
it the demo says so and writes only the data.
"""
import argparse
import io
import os
import sys
import time
import xml.etree.ElementTree as ET

import numpy as np

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms.regressor import PARAMETER_NAMES, inertial_parameters
from lie_dynamics_ros.ros import conversions as cv

#: the bundled arm's "ready" pose (config/arm7_initial_state.yaml)
READY = np.array([0.0, -0.785398163, 0.0, -2.356194490, 0.0, 1.570796327, 0.785398163])
#: excitation: q_d = READY + AMP sin(2 pi FREQ t); the arm starts at rest, so the first
#: second also contains the transient from v = 0 to v_d(0)
AMP = np.array([0.5, 0.35, 0.5, 0.4, 0.6, 0.5, 0.9])
FREQ = np.array([0.23, 0.31, 0.19, 0.37, 0.43, 0.29, 0.51])
#: gains of both controllers (K_D small on the light wrist joints: the loop also stays stable
#: with 2 ms of command delay at 1 kHz, e.g. a timer-driven simulator instead of lockstep)
LAMBDA = 10.0
KD = np.array([20.0, 20.0, 20.0, 20.0, 4.0, 4.0, 2.0])
GAMMA = np.array([1.0, 0.1, 0.1, 0.1, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01]) * 10.0
#: the payload: mass (kg), centre of mass in the flange frame (m), box size (m)
PAYLOAD_MASS = 2.0
PAYLOAD_COM = (0.03, 0.0, 0.16)
PAYLOAD_BOX = (0.12, 0.08, 0.06)
FLANGE = "panda_link8"


def arm7_path():
    from lie_dynamics_ros.ros.model_source import resolve_urdf_path   # imports rclpy: see run
    return os.path.abspath(resolve_urdf_path("arm7.urdf"))


def payload_urdf(base_xml=None, mass=PAYLOAD_MASS, com=PAYLOAD_COM, box=PAYLOAD_BOX,
                 parent=FLANGE):
    """URDF text of arm7 (or ``base_xml``) with a solid-box payload welded to ``parent``
    through a fixed joint (the loader merges it into the last moving body)."""
    if base_xml is None:
        with open(arm7_path(), encoding="utf-8") as f:
            base_xml = f.read()
    root = ET.fromstring(base_xml)
    a, b, c = box
    I = mass / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    link = ET.SubElement(root, "link", name="payload")
    inertial = ET.SubElement(link, "inertial")
    ET.SubElement(inertial, "origin", xyz="%.17g %.17g %.17g" % tuple(com), rpy="0 0 0")
    ET.SubElement(inertial, "mass", value="%.17g" % mass)
    ET.SubElement(inertial, "inertia", ixx="%.17g" % I[0], ixy="0", ixz="0",
                  iyy="%.17g" % I[1], iyz="0", izz="%.17g" % I[2])
    joint = ET.SubElement(root, "joint", name="payload_joint", type="fixed")
    ET.SubElement(joint, "parent", link=parent)
    ET.SubElement(joint, "child", link="payload")
    ET.SubElement(joint, "origin", xyz="0 0 0", rpy="0 0 0")
    return ET.tostring(root, encoding="unicode")


def excitation(t):
    """Reference (q_d, v_d, a_d) at time t (s), arm7 joint order."""
    w = 2 * np.pi * FREQ
    return (READY + AMP * np.sin(w * t), AMP * w * np.cos(w * t),
            -AMP * w * w * np.sin(w * t))


def reference_message(names, duration, step=0.02, stamp_ns=1):
    """The excitation as a JointTrajectory with positions, velocities and accelerations
    every ``step`` seconds (quintic interpolation between points reproduces it to ~1e-8)."""
    times = np.arange(0.0, duration + step + 1e-12, step)
    q, v, a = zip(*(excitation(t) for t in times))
    return cv.make_trajectory(names, times, np.array(q), np.array(v), np.array(a),
                              stamp_ns=stamp_ns)


def make_executor(kind, context, stream=sys.stderr):
    """rclpy's EventsExecutor for ``kind == "events"`` where it can be made, else (and for
    "single") the SingleThreadedExecutor; says so on ``stream`` when it falls back."""
    from rclpy.executors import SingleThreadedExecutor   # rclpy on use: see run
    if kind == "events":
        try:
            from rclpy.experimental import EventsExecutor
        except ImportError:  # rclpy before Jazzy
            why = "rclpy has no EventsExecutor"
        else:
            try:
                return EventsExecutor(context=context)
            except io.UnsupportedOperation:
                # EventsExecutor() calls faulthandler.enable(), which needs a sys.stderr
                # with a file descriptor (not so under output capture, e.g. pytest's capsys)
                why = "EventsExecutor needs a sys.stderr with a file descriptor"
        print("ldr_adaptive_demo: %s; using the SingleThreadedExecutor (slower)" % why,
              file=stream)
    return SingleThreadedExecutor(context=context)


def _parameters(params):
    from rclpy.parameter import Parameter   # rclpy on use: see run
    return [Parameter(k, value=v) for k, v in params.items()]


def run(duration=10.0, rate=1000.0, out_dir="out", plot=True, executor="events",
        stream=None, domain_id=None, command_array=True, param_services=False,
        which=("adaptive", "fixed")):
    """Run the loops ``which`` (both by default) for ``duration`` s of simulated time; returns
    a summary dict (per-second RMS rows, V, estimates, timing)."""
    # rclpy and the nodes load when a run starts: the excitation, the payload URDF and the
    # plots are used (and tested) without ROS
    import rclpy
    from lie_dynamics_ros.ros.adaptive_controller_node import AdaptiveControllerNode
    from lie_dynamics_ros.ros.forward_dynamics_node import ForwardDynamicsNode
    from lie_dynamics_ros.ros.node_common import spin_until

    stream = sys.stdout if stream is None else stream
    t_wall0 = time.monotonic()
    plant_xml = payload_urdf()
    plant = ldr.load_urdf(plant_xml)
    nominal = ldr.load_urdf(arm7_path())
    theta_true = inertial_parameters(plant)
    names = list(nominal.joint_names)

    context = rclpy.Context()
    init_kw = {} if domain_id is None else {"domain_id": int(domain_id)}
    rclpy.init(args=["ldr_adaptive_demo"], context=context, **init_kw)
    ex = make_executor(executor, context, stream)
    loops = {}
    nodes = []          # every node created, destroyed in `finally`
    try:
        for ns, adapt in (("adaptive", True), ("fixed", False)):
            if ns not in which:
                continue
            remap = [] if ns == "adaptive" else ["--ros-args", "-r", "/clock:=/fixed/clock"]
            sim = ForwardDynamicsNode(
                "forward_dynamics", drive="external", context=context, namespace=ns,
                cli_args=remap, start_parameter_services=param_services,
                parameter_overrides=_parameters({
                    "robot_description": plant_xml, "rate": float(rate),
                    "publish_clock": True, "initial_positions": list(READY),
                    "command_timeout": 0.5, "enforce_effort_limits": True}))
            nodes.append(sim)
            ctrl = AdaptiveControllerNode(
                "adaptive_controller", context=context, namespace=ns, cli_args=remap,
                start_parameter_services=param_services, parameter_overrides=_parameters({
                    "urdf_path": arm7_path(), "use_sim_time": True,
                    "lambda_gains": [LAMBDA], "kd_gains": list(KD),
                    "gamma_gains": list(GAMMA), "adapt": adapt, "payload_only": True,
                    "projection": True, "state_timeout": 0.1,
                    "publish_command_array": command_array, "monitor_decimation": 10}))
            nodes.append(ctrl)
            if sim.sim is None or ctrl.controller is None:
                raise RuntimeError("a node has no usable model (see the log)")
            for n in (sim, ctrl):
                ex.add_node(n)
            loops[ns] = dict(sim=sim, ctrl=ctrl, pub=None)
        # the reference: a helper node publishes it once per loop (reliable, depth 1 ok)
        from trajectory_msgs.msg import JointTrajectory   # ROS on use, as above
        from rclpy.node import Node
        helper = Node("reference_publisher", context=context,
                      start_parameter_services=param_services)
        nodes.append(helper)
        ex.add_node(helper)
        ref_msg = reference_message(names, duration)
        pubs = {ns: helper.create_publisher(JointTrajectory, "/%s/reference" % ns, 10)
                for ns in loops}


        # discovery: simulator <-> controller, reference publisher -> controllers
        ok = spin_until(ex, lambda: all(
            L["sim"].pub.get_subscription_count() >= 1
            and L["ctrl"].torque_pub.get_subscription_count() >= 1
            and pubs[ns].get_subscription_count() >= 2 for ns, L in loops.items()), 20.0)
        if not ok:
            raise RuntimeError("DDS discovery did not complete within 20 s")
        for ns in loops:
            pubs[ns].publish(ref_msg)
        if not spin_until(ex, lambda: all(L["ctrl"].reference is not None
                                      for L in loops.values()), 10.0):
            raise RuntimeError("the controllers did not receive the reference")

        # compile / load the numba kernels before the clock starts (first call is slow)
        for L in loops.values():
            c = L["ctrl"].controller
            q0 = L["sim"].sim.q
            c.step(0.0, q0, 0 * q0, q0, 0 * q0, 0 * q0, 1e-3)
            c.lyapunov(q0, 0 * q0, q0, 0 * q0, theta_true)
            c.reset()
        steps = int(round(duration * rate))
        every = max(1, int(round(rate / 100)))          # 100 Hz samples for the figure
        rec = {ns: dict(t=[], e=[], q=[], q_d=[], V=[], theta=[], tau=[]) for ns in loops}
        sq_err = {ns: 0.0 for ns in loops}
        count = 0
        misses = 0
        t_loop0 = time.monotonic()
        print("ldr_adaptive_demo: arm7 + %.1f kg payload at the flange, controllers without "
              "it; %.0f Hz lockstep on simulated time, %.1f s" % (PAYLOAD_MASS, rate, duration),
              file=stream)
        print("  sim time   tracking RMS [rad]: adaptive    fixed (no adaptation)", file=stream)
        rms_rows = []
        for k in range(steps + 1):
            for L in loops.values():
                L["sim"].tick()
            stamps = {ns: L["sim"].sim.t_ns for ns, L in loops.items()}
            if not spin_until(ex, lambda: all(loops[ns]["sim"].last_cmd_stamp_ns == stamps[ns]
                                          for ns in loops), 10.0 if k == 0 else 2.0):
                misses += 1
            for ns, L in loops.items():
                sim, ctrl = L["sim"].sim, L["ctrl"].controller
                t = sim.t_ns * 1e-9
                q_d, v_d, _ = excitation(t)
                e = sim.q - q_d
                sq_err[ns] += float(e @ e)
                if k % every == 0:
                    r = rec[ns]
                    r["t"].append(t)
                    r["e"].append(e)
                    r["q"].append(sim.q.copy())
                    r["q_d"].append(q_d)
                    r["theta"].append(ctrl.theta_hat)
                    r["tau"].append(sim.tau.copy())
                    r["V"].append(ctrl.lyapunov(sim.q, sim.v, q_d, v_d, theta_true))
            count += 1
            if k > 0 and k % int(round(rate)) == 0:
                row = [np.sqrt(sq_err[ns] / count) for ns in loops]
                rms_rows.append(row)
                print("  %5.1f s   %31.5f %12s" % (k / rate, row[0], "%.5f" % row[1]
                                                  if len(row) > 1 else "-"), file=stream)
                stream.flush()
                sq_err = {ns: 0.0 for ns in loops}
                count = 0
        wall_loop = time.monotonic() - t_loop0
        first = next(iter(loops))
        ctrl_a = loops[first]["ctrl"].controller
        summary = dict(
            duration=duration, rate=rate, steps=steps, lockstep_misses=misses, names=names,
            executor=type(ex).__name__,
            wall_loop=wall_loop, realtime_factor=duration / wall_loop, loops=list(loops),
            rms_per_second=np.array(rms_rows).reshape(-1, len(loops)),
            theta_hat=ctrl_a.theta_hat, theta_true=theta_true[ctrl_a.adapted],
            theta_nominal=ctrl_a.theta_nominal[ctrl_a.adapted],
            projections=ctrl_a.state.projections, adapted_body=ctrl_a.adapted_bodies[0],
            clamped={ns: L["ctrl"].clamped for ns, L in loops.items()},
            dropped={ns: L["ctrl"].dropped for ns, L in loops.items()},
            watchdog_trips={ns: L["sim"].watchdog_trips for ns, L in loops.items()},
            stale_events={ns: L["ctrl"].stale_events for ns, L in loops.items()})
        for ns in loops:
            for key in rec[ns]:
                summary["%s_%s" % (ns, key)] = np.array(rec[ns][key])
    finally:
        # remove_node ignores nodes it does not hold and shutdown is idempotent (rclpy's
        # executors and the EventsExecutor): an error here is a real one and propagates
        # (chained to the one that brought us here, if any)
        for n in nodes:
            ex.remove_node(n)
            n.destroy_node()
        ex.shutdown()
        rclpy.try_shutdown(context=context)
    rows = summary["rms_per_second"]
    for col, ns in enumerate(summary["loops"]):
        summary["ratio_%s" % ns] = float(rows[-1, col] / rows[0, col]) if len(rows) else np.nan
    V = summary["%s_V" % first]
    summary["V_max_increase"] = float(np.max(np.diff(V))) if V.size > 1 else 0.0
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        np.savez(os.path.join(out_dir, "adaptive_demo.npz"),
                 **{k: v for k, v in summary.items() if isinstance(v, np.ndarray)})
        if plot and summary["loops"] == ["adaptive", "fixed"]:
            if have_matplotlib():
                summary["figure"] = plot_summary(summary,
                                                 os.path.join(out_dir, "adaptive_demo.png"))
            else:
                print(NO_MATPLOTLIB % os.path.join(out_dir, "adaptive_demo.npz"), file=stream)
    summary["wall_total"] = time.monotonic() - t_wall0
    return summary


NO_MATPLOTLIB = ("matplotlib is not installed: no figure (pip install matplotlib, or the "
                 "package's [plot] extra); the time series are in %s")


def have_matplotlib():
    """True when matplotlib can be imported (it is optional at run time)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def disturbed_joint(s):
    """Index of the joint whose error without adaptation has the largest mean: the sag under
    the missing payload's weight, a steady offset that the reference-against-actual panel
    shows at any scale (an oscillating error of a fast joint hides in its range)."""
    return int(np.argmax(np.abs(np.mean(s["fixed_e"], axis=0))))


def figure(s):
    """The demo's matplotlib figure of the summary ``s`` of ``run`` (both loops)."""
    import matplotlib          # optional at run time (have_matplotlib)
    matplotlib.use("Agg")      # before pyplot: no display needed
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(4, 2, figsize=(13, 13))
    names = list(s["names"])
    t = s["adaptive_t"]
    j = disturbed_joint(s)
    a = ax[0, 0]
    a.plot(t, s["adaptive_q_d"][:, j], "k:", lw=1.5, label="reference q_d")
    a.plot(t, s["adaptive_q"][:, j], "-", label="actual q, adaptive")
    a.plot(t, s["fixed_q"][:, j], "--", label="actual q, no adaptation")
    a.set_ylabel("%s position [rad]" % names[j])
    a.set_title("reference against actual, %s" % names[j])
    a.legend(fontsize=8)
    a = ax[0, 1]
    for ns, style, label in (("adaptive", "-", "adaptive"), ("fixed", "--", "no adaptation")):
        col = 0 if ns == "adaptive" else 1
        a.plot(t, np.linalg.norm(s["%s_e" % ns], axis=1), style, label="%s (RMS last second "
               "%.2g rad)" % (label, s["rms_per_second"][-1, col]))
    a.set_yscale("log")
    a.set_ylabel("tracking error norm |q - q_d| [rad]")
    a.set_title("arm7 + %.1f kg payload, controller model without it" % PAYLOAD_MASS)
    a.legend(fontsize=8)
    lim = max(np.abs(s["adaptive_e"]).max(), np.abs(s["fixed_e"]).max())
    for col, ns, label in ((0, "adaptive", "adaptive"), (1, "fixed", "no adaptation")):
        a = ax[1, col]
        for k, name in enumerate(names):
            a.plot(t, s["%s_e" % ns][:, k], lw=0.8, label=name)
        a.set_ylim(-1.05 * lim, 1.05 * lim)
        a.set_ylabel("error q - q_d per joint [rad]")
        a.set_title("%s: error of each joint" % label)
        a.legend(ncol=4, fontsize=7)
    th = s["adaptive_theta"] - s["theta_nominal"]
    true = s["theta_true"] - s["theta_nominal"]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    a = ax[2, 0]
    a.plot(t, th[:, 0], color=colors[0], label="estimate")
    a.axhline(true[0], color=colors[0], ls=":", label="true %.2f kg" % true[0])
    a.set_ylabel("payload mass [kg]")
    a.set_title("payload mass (estimate - nominal model)")
    a.legend(fontsize=8)
    a = ax[2, 1]
    for k, axis in enumerate("xyz"):
        c = colors[(k + 1) % len(colors)]
        a.plot(t, th[:, 1 + k], color=c, label="m c_%s estimate" % axis)
        a.axhline(true[1 + k], color=c, ls=":", lw=1)
    a.set_ylabel("payload first moment m c [kg m]")
    a.set_title("first moment in the %s frame (dotted: true)" % s["adapted_body"])
    a.legend(ncol=3, fontsize=8)
    gs = ax[3, 0].get_gridspec()
    ax[3, 0].remove()
    ax[3, 1].remove()
    a = fig.add_subplot(gs[3, :])
    a.semilogy(t, s["adaptive_V"], label="adaptive")
    a.set_ylabel("Lyapunov function V\n(1/2 s'M s + 1/2 th~' G^-1 th~)")
    a.set_title("Lyapunov function of the adaptive loop (Slotine & Li 1987: it never increases)")
    for row in ax[:3]:
        for a_ in row:
            a_.set_xlabel("simulated time [s]")
    a.set_xlabel("simulated time [s]")
    fig.tight_layout()
    return fig


def plot_summary(s, path):
    """``figure(s)`` written to ``path`` (PNG); returns ``path``."""
    fig = figure(s)
    import matplotlib.pyplot as plt     # after figure() chose the Agg backend
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def summary_lines(s):
    """The labelled console summary of ``run``'s result ``s`` (both loops)."""
    th, tr, nom = s["theta_hat"], s["theta_true"], s["theta_nominal"]
    m_hat, m_true = th[0] - nom[0], tr[0] - nom[0]
    rows = s["rms_per_second"]
    lines = [
        "payload mass: estimated %.3f kg, true %.3f kg" % (m_hat, m_true),
        "payload centre of mass in the %s frame: estimated %s m, true %s m" % (
            s["adapted_body"],
            np.array2string((th[1:4] - nom[1:4]) / max(m_hat, 1e-9), precision=3),
            np.array2string((tr[1:4] - nom[1:4]) / m_true, precision=3)),
        "tracking RMS, first second -> last second: adaptive %.4f -> %.4f rad (x%.3f), "
        "no adaptation %.4f -> %.4f rad (x%.3f)" % (
            rows[0, 0], rows[-1, 0], s["ratio_adaptive"], rows[0, 1], rows[-1, 1],
            s["ratio_fixed"]),
        "Lyapunov function V (adaptive): %.4g at the start -> %.4g at the end; largest "
        "change between 10 ms samples %+.2g (V must never increase)" % (
            s["adaptive_V"][0], s["adaptive_V"][-1], s["V_max_increase"]),
        "pace: %d steps x 2 loops in %.1f s of wall time (%.2fx real time); total %.1f s" % (
            s["steps"], s["wall_loop"], s["realtime_factor"], s["wall_total"])]
    misses = s["lockstep_misses"]
    if misses:
        lines.append(
            "lockstep timeouts: %d of %d steps went ahead without the controller's answer "
            "(after waiting 2 s, 10 s for the first): the machine was too busy to deliver it "
            "over DDS in time, and those steps reused the previous command, so the RMS "
            "above includes them" % (misses, s["steps"] + 1))
    else:
        lines.append("lockstep timeouts: none (every step waited for and got its command)")
    if s.get("figure"):
        lines.append("figure: %s" % s["figure"])
    return lines


def main(argv=None):
    """Console script ``ldr_adaptive_demo`` (``make demo``)."""
    p = argparse.ArgumentParser(prog="ldr_adaptive_demo", description=__doc__.split("\n")[0])
    p.add_argument("--duration", type=float, default=10.0, help="simulated seconds")
    p.add_argument("--rate", type=float, default=1000.0, help="simulator steps per second")
    p.add_argument("--out", default="out", help="folder of the figure and the data")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--executor", choices=("events", "single"), default="events")
    opts = p.parse_args(argv)
    s = run(opts.duration, opts.rate, opts.out, not opts.no_plot, opts.executor)
    print("\n".join(summary_lines(s)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
