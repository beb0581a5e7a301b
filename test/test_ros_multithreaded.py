"""The nodes on a MultiThreadedExecutor: two inverse-dynamics nodes in one process, spun by
four executor threads while the test thread runs batched dynamics on a shared model, answer
every joint state with exactly ldr.inverse_dynamics's torques."""
import threading
import time

import numpy as np

from ros_fixtures import ARM7, timeout  # sets the DDS environment before rclpy loads

import rclpy  # noqa: E402
from rclpy.executors import MultiThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

import lie_dynamics_ros as ldr  # noqa: E402
from lie_dynamics_ros.ros import conversions as cv  # noqa: E402
from lie_dynamics_ros.ros.inverse_dynamics_node import InverseDynamicsNode  # noqa: E402


def test_two_nodes_on_a_multithreaded_executor_answer_exactly():
    model = ldr.load_urdf(ARM7)
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    ex = MultiThreadedExecutor(num_threads=4, context=ctx)
    nodes = [InverseDynamicsNode(context=ctx, parameter_overrides=[
        Parameter("urdf_path", value=ARM7)],
        cli_args=["--ros-args", "-r", f"__node:=id{k}", "-r", f"joint_states:=/mt{k}/states",
                  "-r", f"joint_torques:=/mt{k}/torques"]) for k in range(2)]
    probe = rclpy.create_node("mt_probe", context=ctx)
    for n in nodes + [probe]:
        ex.add_node(n)
    got = {0: {}, 1: {}}
    lock = threading.Lock()

    def on(k):
        def cb(msg):
            with lock:
                got[k][cv.stamp_to_ns(msg.header.stamp)] = np.array(msg.effort)
        return cb

    pubs = [probe.create_publisher(JointState, f"/mt{k}/states", 50) for k in range(2)]
    for k in range(2):
        probe.create_subscription(JointState, f"/mt{k}/torques", on(k), 50)
    spinner = threading.Thread(target=ex.spin, daemon=True)
    spinner.start()
    stop = threading.Event()
    batch_errors = []

    def hammer():      # batched calls on a shared model, concurrently with the node callbacks
        rng = np.random.default_rng(1)
        Q = np.array([ldr.random_configuration(model, rng) for _ in range(200)])
        V, A = rng.normal(size=(200, 7)), rng.normal(size=(200, 7))
        ref = ldr.inverse_dynamics(model, Q, V, A)
        while not stop.is_set():
            if not np.array_equal(ldr.inverse_dynamics(model, Q, V, A), ref):
                batch_errors.append(1)

    hammer_thread = threading.Thread(target=hammer, daemon=True)
    hammer_thread.start()
    try:
        rng = np.random.default_rng(2)
        states = {}
        t_end = time.monotonic() + timeout(60.0)
        stamp = 1_000_000_000
        while time.monotonic() < t_end and any(
                len([s for s in states if s in got[k]]) < 100 for k in range(2)):
            stamp += 1_000_000
            q, v = ldr.random_configuration(model, rng), rng.normal(size=7)
            states[stamp] = (q, v)
            for k in range(2):
                pubs[k].publish(cv.make_joint_state(model.joint_names, stamp, q, v))
            time.sleep(0.002)
        answered = 0
        for k in range(2):
            with lock:
                answers = dict(got[k])
            for s, tau in answers.items():
                q, v = states[s]
                np.testing.assert_allclose(tau, ldr.inverse_dynamics(model, q, v, np.zeros(7)),
                                           rtol=0, atol=1e-12)
                answered += 1
        assert all(len(got[k]) >= 100 for k in range(2)), {k: len(got[k]) for k in got}
        assert answered >= 200 and batch_errors == []
    finally:
        stop.set()
        hammer_thread.join(timeout=10)
        ex.shutdown()
        spinner.join(timeout=10)
        for n in nodes + [probe]:
            n.destroy_node()
        rclpy.try_shutdown(context=ctx)
