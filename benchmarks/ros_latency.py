"""Latency of inverse_dynamics_node: joint_states in -> joint_torques out, over real DDS.

The node runs in its own process (``python -m lie_dynamics_ros.ros.inverse_dynamics_node``)
on the 7-DOF arm (urdf/arm7.urdf). This script publishes JointState messages at each rate
(default 500 Hz and 1 kHz, >= 2000 messages each, after a warm-up), matches every
joint_torques answer to its request by header stamp and prints p50 / p90 / p99 / max of the
round trip (publish -> callback in this process). Not a test.

    .venv/bin/python benchmarks/ros_latency.py [--count 2000] [--rates 500 1000] [--repeat 3]

The node runs with each spin loop (parameter ``executor``: ``wait_set``, the default, and
rclpy's ``single_threaded``), then a bare rclpy echo node gives the floor of the path.
The round trip is split with the DDS message info of each answer (one host, one system
clock): "node" is this script's publish -> the node's publish of the answer (DDS in, the
node's wake-up, spin loop and callback), the rest is DDS out and this script's own executor.
``--repeat`` interleaves the configurations that many times (the machine's load drifts) and
prints each run. Discovery stays on loopback; the domain id is derived from the pid.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
os.environ["ROS_DOMAIN_ID"] = os.environ.get("LDR_BENCH_DOMAIN_ID", str(1 + os.getpid() % 100))
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.pop("ROS_LOCALHOST_ONLY", None)

import numpy as np  # noqa: E402
import rclpy  # noqa: E402
import rclpy.executors  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

import lie_dynamics_ros as ldr  # noqa: E402
from lie_dynamics_ros.ros import conversions as cv  # noqa: E402

ARM7 = os.path.join(REPO, "urdf", "arm7.urdf")


def percentiles(lat_us):
    a = np.sort(np.asarray(lat_us))
    return {p: float(np.percentile(a, p)) for p in (50, 90, 99)} | {"max": float(a[-1])}


def run_rate(node, executor, pub, answers, model, rate, count, stamp0):
    """Publish ``count`` states at ``rate`` Hz; returns (latencies in us, lost, send rate)."""
    rng = np.random.default_rng(int(rate))
    msgs = []
    for k in range(count):
        q = ldr.random_configuration(model, rng)
        msgs.append(cv.make_joint_state(model.joint_names, stamp0 + k * 1000, q,
                                        rng.normal(size=model.nv)))
    sent = {}
    period = 1.0 / rate
    t0 = time.perf_counter()
    for k, msg in enumerate(msgs):
        due = t0 + k * period
        while True:
            now = time.perf_counter()
            if now >= due:
                break
            executor.spin_once(timeout_sec=min(due - now, 0.002))
        sent[stamp0 + k * 1000] = time.time_ns()
        pub.publish(msg)
        executor.spin_once(timeout_sec=0)
    t_send = time.perf_counter() - t0
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and sum(s in answers for s in sent) < len(sent):
        executor.spin_once(timeout_sec=0.01)
    # (round trip, publish -> node's answer published) in us
    lat = [((answers[s][0] - t) / 1e3, (answers[s][1] - t) / 1e3)
           for s, t in sent.items() if s in answers]
    return lat, len(sent) - len(lat), count / t_send


#: the baseline: a bare rclpy node that echoes joint_states to joint_torques, no dynamics
ECHO = """
import rclpy
from sensor_msgs.msg import JointState
from rclpy.qos import qos_profile_sensor_data
rclpy.init()
node = rclpy.create_node("echo")
pub = node.create_publisher(JointState, "joint_torques", 10)
node.create_subscription(JointState, "joint_states", pub.publish, qos_profile_sensor_data)
print("robot model loaded (echo ready)", flush=True)
try:
    rclpy.spin(node)
except KeyboardInterrupt:
    pass
"""


def measure(label, cmd, model, opts):
    """Start ``cmd`` in another process and print its round-trip latency table."""
    log = tempfile.NamedTemporaryFile(prefix="ldr_bench_node_", suffix=".log", delete=False)
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    node = rclpy.create_node("ldr_latency_bench")
    executor = rclpy.executors.SingleThreadedExecutor()
    executor.add_node(node)
    answers = {}

    def on_torques(msg, info):
        answers[cv.stamp_to_ns(msg.header.stamp)] = (time.time_ns(), info["source_timestamp"])

    node.create_subscription(JointState, "joint_torques", on_torques, 1000)
    pub = node.create_publisher(JointState, "joint_states", 1000)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
                pub.get_subscription_count() and "robot model loaded" in open(log.name).read()):
            executor.spin_once(timeout_sec=0.05)
        if proc.poll() is not None or not pub.get_subscription_count():
            raise SystemExit("node did not start:\n" + open(log.name).read())
        run_rate(node, executor, pub, answers, model, 500.0, opts.warmup, 1_000_000_000)
        for i, rate in enumerate(opts.rates):
            lat, lost, send_rate = run_rate(node, executor, pub, answers, model, rate,
                                            opts.count, 10_000_000_000 * (i + 2))
            rt, nd = percentiles([x[0] for x in lat]), percentiles([x[1] for x in lat])
            print("%-22s %6.0f %6d %5d %8.0f %8.0f %8.0f %8.0f %8.0f %8.0f" % (
                label, rate, len(lat), lost, rt[50], rt[99], rt["max"], nd[50], nd[99],
                nd["max"]), flush=True)
    finally:
        proc.send_signal(2)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        executor.shutdown()
        node.destroy_node()
        log.close()
        os.unlink(log.name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--rates", type=float, nargs="+", default=[500.0, 1000.0])
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--realtime", action="store_true",
                    help="also the node at SCHED_FIFO 50: its spin loop (realtime_priority) "
                         "and the whole process (chrt)")
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip the bare echo node (the floor of the path)")
    opts = ap.parse_args()

    model = ldr.load_urdf(ARM7)
    node_cmd = [sys.executable, "-m", "lie_dynamics_ros.ros.inverse_dynamics_node",
                "--ros-args", "-p", "urdf_path:=%s" % ARM7, "-p", "executor:=%s"]
    configs = [("id_node wait_set", "wait_set"), ("id_node single_threaded", "single_threaded")]
    if opts.realtime:       # needs the privilege to use SCHED_FIFO (root, CAP_SYS_NICE)
        configs += [("id_node wait_set rt50", "wait_set -p realtime_priority:=50"),
                    ("id_node chrt -f 50", "wait_set")]
    rclpy.init()
    try:
        print("inverse_dynamics_node, arm7 (7 DOF), in another process: joint_states -> "
              "joint_torques. Microseconds; 'node' = publish -> the node publishes its answer")
        print("%-22s %6s %6s %5s %8s %8s %8s %8s %8s %8s" % (
            "config", "Hz", "msgs", "lost", "rt p50", "rt p99", "rt max", "node p50",
            "node p99", "node max"))
        for _ in range(opts.repeat):
            for label, name in configs:
                cmd = node_cmd[:-1] + (node_cmd[-1] % name).split()
                if label.endswith("chrt -f 50"):        # every thread of the process
                    cmd = ["chrt", "-f", "50"] + cmd
                measure(label, cmd, model, opts)
            if not opts.no_baseline:
                measure("bare rclpy echo", [sys.executable, "-c", ECHO], model, opts)
        print("cpu cores: %d, load average %.2f" % (os.cpu_count(), os.getloadavg()[0]))
    finally:
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
