"""Time to first message of the flagship graph (simulator + inverse_dynamics as gravity
compensator), with a cold and then a warm numba cache. Not a test.

Both nodes start as processes (``python -m ...``, the console scripts' code) with the launch
file's YAML files and ``NUMBA_CACHE_DIR`` pointing at a fresh folder: the first run compiles
every kernel (cold), the second loads them (warm). Printed: seconds from the start of the
processes to the first ``joint_states`` and to the first ``joint_torques``, and the largest
distance of the arm from its initial pose over the first 2 s of simulation.

    .venv/bin/python benchmarks/ros_startup.py [--runs 2]
"""
import argparse
import os
import shutil
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
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.qos import QoSProfile  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

CONFIG = os.path.join(REPO, "config")
ARM7 = os.path.join(REPO, "urdf", "arm7.urdf")
READY = [0.0, -0.785398163, 0.0, -2.356194490, 0.0, 1.570796327, 0.785398163]


def nodes(cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, PYTHONPATH=REPO, PYTHONUNBUFFERED="1")
    common = ["-p", "urdf_path:=%s" % ARM7, "-p", "use_sim_time:=true"]
    sim = [sys.executable, "-m", "lie_dynamics_ros.ros.forward_dynamics_node", "--ros-args",
           "--params-file", os.path.join(CONFIG, "simulator.yaml"),
           "-p", "publish_clock:=true"] + common
    idn = [sys.executable, "-m", "lie_dynamics_ros.ros.inverse_dynamics_node", "--ros-args",
           "--params-file", os.path.join(CONFIG, "inverse_dynamics.yaml")] + common
    return [subprocess.Popen(c, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True, start_new_session=True) for c in (sim, idn)]


def one_run(cache_dir, node, executor):
    states, torques = [], []
    s1 = node.create_subscription(JointState, "joint_states",
                                  lambda m: states.append((time.monotonic(), m)),
                                  QoSProfile(depth=5000))
    s2 = node.create_subscription(JointState, "joint_torques",
                                  lambda m: torques.append((time.monotonic(), m)),
                                  QoSProfile(depth=5000))
    t0 = time.monotonic()
    procs = nodes(cache_dir)
    try:
        def sim_t():
            st = states[-1][1].header.stamp if states else None
            return st.sec + 1e-9 * st.nanosec if st else 0.0
        while (not torques or sim_t() < 2.0) and time.monotonic() - t0 < 300:
            executor.spin_once(timeout_sec=0.05)
    finally:
        for p in procs:
            os.killpg(p.pid, 2)
        notes = []
        for p in procs:
            _, err = p.communicate(timeout=20)
            notes += [ln.split("]: ", 1)[-1] for ln in err.splitlines()
                      if "watchdog" in ln or "diverged" in ln or "compiling" in ln]
        for n in dict.fromkeys(notes):
            print("      node: %s" % n[:110])
        node.destroy_subscription(s1)
        node.destroy_subscription(s2)
    q = np.array([m.position for _, m in states])
    return (states[0][0] - t0 if states else float("nan"),
            torques[0][0] - t0 if torques else float("nan"),
            float(np.abs(q - READY).max()) if len(q) else float("nan"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2, help="the first is cold, the rest warm")
    opts = ap.parse_args()
    cache = tempfile.mkdtemp(prefix="ldr_numba_cache_")
    rclpy.init()
    node = rclpy.create_node("startup_bench")
    ex = SingleThreadedExecutor()
    ex.add_node(node)
    print("flagship graph (forward_dynamics + inverse_dynamics, arm7), NUMBA_CACHE_DIR=%s" % cache)
    print("%-5s %22s %23s %16s" % ("run", "first joint_states s", "first joint_torques s",
                                    "max|q-q0| rad"))
    try:
        for k in range(opts.runs):
            a, b, err = one_run(cache, node, ex)
            print("%-5s %22.2f %23.2f %16.3g" % ("cold" if k == 0 else "warm", a, b, err))
    finally:
        ex.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
        shutil.rmtree(cache, ignore_errors=True)
    print("cpu cores: %d, load average %.2f" % (os.cpu_count(), os.getloadavg()[0]))


if __name__ == "__main__":
    main()
