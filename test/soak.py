"""Soak run: simulator node + adaptive_controller_node in closed loop at 1 kHz of simulated
time, over real DDS, in lockstep (as ``ldr_adaptive_demo``: a Python simulator cannot hold
1 kHz wall-clock next to the controller on a shared machine).

Reports the loop rate (steps per wall second) and the jitter of the step period (p50, p99,
p99.9), RSS growth, the tracking error per sim second, and counts non-finite values in every
command and state. ``make soak``: ``python test/soak.py --duration 600``; a short version
runs in ``make test`` (test_ros_soak.py).
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])


def soak(duration=600.0, rate=1000.0, domain_id=None, stream=sys.stdout):
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory
    from rclpy.parameter import Parameter
    from lie_dynamics_ros.ros import adaptive_demo as demo
    from lie_dynamics_ros.ros.node_common import spin_until
    from lie_dynamics_ros.ros.adaptive_controller_node import AdaptiveControllerNode
    from lie_dynamics_ros.ros.forward_dynamics_node import ForwardDynamicsNode

    def params(d):
        return [Parameter(k, value=v) for k, v in d.items()]

    context = rclpy.Context()
    rclpy.init(args=["soak"], context=context,
               **({} if domain_id is None else {"domain_id": int(domain_id)}))
    try:
        ex = demo.make_executor("events", context, stream)
    except Exception:
        ex = SingleThreadedExecutor(context=context)
    nodes = []
    bad = dict(commands=0, states=0)
    try:
        plant_xml = demo.payload_urdf()
        sim = ForwardDynamicsNode("forward_dynamics", drive="external", context=context,
                                  start_parameter_services=False, parameter_overrides=params({
                                      "robot_description": plant_xml, "rate": float(rate),
                                      "publish_clock": True,
                                      "initial_positions": list(demo.READY),
                                      "command_timeout": 0.5,
                                      "enforce_effort_limits": True}))
        ctrl = AdaptiveControllerNode("adaptive_controller", context=context,
                                      start_parameter_services=False,
                                      parameter_overrides=params({
                                          "urdf_path": demo.arm7_path(), "use_sim_time": True,
                                          "lambda_gains": [demo.LAMBDA],
                                          "kd_gains": list(demo.KD),
                                          "gamma_gains": list(demo.GAMMA),
                                          "state_timeout": 0.1, "max_torque_rate": 5000.0,
                                          "monitor_decimation": 0}))
        helper = rclpy.create_node("soak_probe", context=context,
                                   start_parameter_services=False)
        nodes += [sim, ctrl, helper]
        for n in nodes:
            ex.add_node(n)

        def on_cmd(msg):
            if not np.isfinite(np.asarray(msg.data)).all():
                bad["commands"] += 1
        helper.create_subscription(Float64MultiArray, "effort_controller/commands", on_cmd, 100)
        ref_pub = helper.create_publisher(JointTrajectory, "reference", 10)


        if not spin_until(ex, lambda: sim.pub.get_subscription_count() >= 1
                          and ctrl.torque_pub.get_subscription_count() >= 1
                          and ref_pub.get_subscription_count() >= 1, 20.0):
            raise RuntimeError("DDS discovery did not complete within 20 s")
        ref_pub.publish(demo.reference_message(list(ctrl.model.joint_names), duration))
        if not spin_until(ex, lambda: ctrl.reference is not None, 10.0):
            raise RuntimeError("the controller did not receive the reference")

        steps = int(round(duration * rate))
        per_s = int(round(rate))
        periods = np.empty(steps)
        rss, rms, emax = [], [], []
        sq, e_inf, misses = 0.0, 0.0, 0
        t_prev = time.monotonic()
        t0 = t_prev
        for k in range(steps):
            sim.tick()
            stamp = sim.sim.t_ns
            if not spin_until(ex, lambda: sim.last_cmd_stamp_ns == stamp, 2.0):
                misses += 1
            q = sim.sim.q
            if not (np.isfinite(q).all() and np.isfinite(sim.sim.v).all()):
                bad["states"] += 1
            e = q - demo.excitation(stamp * 1e-9)[0]
            sq += float(e @ e)
            e_inf = max(e_inf, float(np.abs(e).max()))
            now = time.monotonic()
            periods[k] = now - t_prev
            t_prev = now
            if (k + 1) % per_s == 0:
                rms.append(math.sqrt(sq / per_s))
                emax.append(e_inf)
                rss.append(rss_kb())
                sq, e_inf = 0.0, 0.0
        wall = time.monotonic() - t0
        spin_until(ex, lambda: False, 0.1)
        p = np.percentile(periods[per_s:] if steps > 2 * per_s else periods,
                          [50, 99, 99.9]) * 1e3
        base = rss[0] if rss else rss_kb()
        out = dict(
            sim_seconds=duration, rate_hz=rate, wall_s=wall, loop_rate_hz=steps / wall,
            period_ms_p50=p[0], period_ms_p99=p[1], period_ms_p999=p[2],
            rss_kb_after_1s=base, rss_kb_end=rss[-1] if rss else base,
            rss_growth_pct=100.0 * ((rss[-1] if rss else base) - base) / base,
            rms_first_s=rms[0] if rms else float("nan"),
            rms_last_s=rms[-1] if rms else float("nan"),
            max_abs_error_rad=max(emax) if emax else float("nan"),
            nonfinite_commands=bad["commands"], nonfinite_states=bad["states"],
            lockstep_misses=misses, dropped=ctrl.dropped,
            guard=dict(ctrl.rt.guard.counts))
        return out
    finally:
        for n in nodes:
            ex.remove_node(n)
            n.destroy_node()
        ex.shutdown()
        rclpy.try_shutdown(context=context)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=600.0, help="simulated seconds")
    ap.add_argument("--rate", type=float, default=1000.0)
    ap.add_argument("--domain-id", type=int, default=None)
    a = ap.parse_args(argv)
    out = soak(a.duration, a.rate, a.domain_id)
    print(json.dumps(out, indent=1, default=float))
    ok = (out["nonfinite_commands"] == 0 and out["nonfinite_states"] == 0
          and out["rss_growth_pct"] < 5.0 and out["rms_last_s"] <= out["rms_first_s"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
