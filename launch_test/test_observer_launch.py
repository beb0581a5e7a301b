"""observer.launch.py under real ``ros2 launch`` (``make launch-test``): the flagship graph
(simulator + gravity compensation, not in lockstep) with the external-torque observer.

The arm holds its pose for several seconds of simulation with no contact (none at all: the
observer waits for the first applied torque, so the simulator's start-up hold is not one),
then a 25 N push
along the flange's axis (``external_wrench`` on panda_link7) is flagged on the joint that
feels it most (and only on joints that feel more than the threshold), within 10 ms of
simulation time of the push's first effect. Times are the
states' stamps (simulation time), which the observer's estimates carry, so a loaded machine
delays the check but cannot fail it: the observer takes every state from its queue.
"""
import ast
import re
import time

import numpy as np

from test_ros2_launch import (READY, SCALE, Launch, _report, param, ros, ros2,  # noqa: F401
                              share_file, stamp_s)

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from rclpy.qos import QoSProfile  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

import lie_dynamics_ros as ldr  # noqa: E402

LINK = "panda_link7"
PUSH = np.array([0.0, 0.0, 25.0, 0.0, 0.0, 0.0])     # (force, torque) in LINK's frame
QUIET_S = 4.0           # simulation seconds without a push, checked for no contact
FIRST_EFFECT = 1e-3     # N m: the first estimate this far from zero felt the push


class Stream:
    """Every message of ``topic``, taken straight from the reader (no executor: rclpy's costs
    ~0.3 ms a message, which falls behind 1 kHz on 2 cores and lets the reader's queue
    overflow). ``wait(cond, timeout_s)`` takes what arrived until ``cond()``."""

    def __init__(self, node, topic, cls):
        self.sub = node.create_subscription(cls, topic, lambda m: None,
                                            QoSProfile(depth=10000))
        self.box = []

    def take(self):
        with self.sub.handle:
            while True:
                taken = self.sub.handle.take_message(self.sub.msg_type, self.sub.raw)
                if taken is None:
                    return
                self.box.append(taken[0])

    def wait(self, cond, timeout_s):
        deadline = time.monotonic() + timeout_s * SCALE
        while True:
            self.take()
            if cond() or time.monotonic() > deadline:
                return cond()
            time.sleep(0.005)


def wrench_msg(w):
    msg = WrenchStamped()
    msg.header.frame_id = LINK
    (msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z,
     msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z) = [float(x) for x in w]
    return msg


def test_observer_graph_flags_a_push_on_the_right_joint_within_10_ms_and_nothing_before(ros):
    model = ldr.load_urdf(share_file("urdf", "arm7.urdf"))
    with Launch("observer.launch.py") as launch:
        assert launch.wait_for_log("first command received", 90), launch.output()
        assert launch.wait_for_log("[external_torque_observer]: robot model loaded", 60), \
            launch.output()
        # before the stream: nothing would take the estimates while these commands run
        out = ros2("param", "get", "--no-daemon", "--spin-time", "5",
                   "/external_torque_observer", "contact_threshold")   # "... values are: [2.0]"
        threshold = float(out.split("[", 1)[1].split(",")[0].split("]")[0])
        assert param("/external_torque_observer", "torque_source") == "joint_states"
        stream = Stream(ros.node, "/external_torque_estimate", JointState)
        est = stream.box
        diags = ros.collect("/diagnostics", DiagnosticArray)
        wrench_pub = ros.node.create_publisher(WrenchStamped, "/external_wrench", 10)
        assert stream.wait(lambda: len(est) > 0, 30), launch.output()
        # simulation time of the first step (the simulator held the arm until then); the
        # observer (wait_for_torque) estimates from the first applied torque on, with r = 0
        t_run = float(re.search(r"integrating from t = ([0-9.]+) s", launch.output()).group(1))
        t_quiet = stamp_s(est[0])
        assert t_quiet > t_run, (t_quiet, t_run)
        assert stream.wait(lambda: stamp_s(est[-1]) >= t_quiet + QUIET_S,
                           30 + 10 * QUIET_S), "only %.2f s:\n%s" % (
            stamp_s(est[-1]) - t_quiet, launch.output())
        contacts_at_push = launch.output().count("contact on")
        t_before_push, n_before = stamp_s(est[-1]), len(est)
        # the push lasts until its contact is seen (the simulator may serve both wrench
        # messages in one go); released at once, as the gravity-compensated arm then drifts
        wrench_pub.publish(wrench_msg(PUSH))
        ok = stream.wait(lambda: any(np.abs(m.effort).max() > threshold
                                     for m in est[n_before:]), 60)
        wrench_pub.publish(wrench_msg(np.zeros(6)))             # released
        assert ok, "no contact after the push:\n" + launch.output()
        ros.spin_until(lambda: False, 0.1)                      # the diagnostics
        out = launch.stop()
    r = np.array([m.effort for m in est])
    t = np.array([stamp_s(m) for m in est])

    # no contact without a push: QUIET_S of simulation before it, on the estimates, and no
    # "contact on" line in the node's log since it started
    quiet = (t >= t_quiet) & (t <= t_before_push)
    assert t[quiet].max() - t[quiet].min() >= QUIET_S - 0.01
    quiet_peak = float(np.abs(r[quiet]).max())
    assert quiet_peak < FIRST_EFFECT, quiet_peak
    assert contacts_at_push == 0, out      # not even the start-up hold

    # the push: its first effect is the first state whose estimate leaves zero
    pushed = t > t_before_push
    t_effect = t[pushed][np.argmax(np.abs(r[pushed]).max(axis=1) > FIRST_EFFECT)]
    first = int(np.argmax(pushed & (np.abs(r) > threshold).any(axis=1)))
    delay_ms = (t[first] - t_effect) * 1e3
    tau_ext = ldr.body_jacobian(model, READY, LINK).T @ PUSH
    right = model.joint_names[int(np.argmax(np.abs(tau_ext)))]
    feel = [n for n, x in zip(model.joint_names, np.abs(tau_ext) > threshold) if x]
    flagged = [n for n, x in zip(model.joint_names, np.abs(r[first]) > threshold) if x]
    around = np.round((t[first - 6:first + 2] - t_effect) * 1e3, 3)
    assert right in flagged and set(flagged) <= set(feel), (flagged, np.round(tau_ext, 2),
                                                            around)
    assert 0 <= delay_ms <= 10.0 + 1e-6, (delay_ms, around)
    line = re.findall(r"contact on (\[[^]]*\])", out)[-1]
    assert right in line and set(ast.literal_eval(line)) <= set(feel), out
    # the quiet window's estimates came through (each one also carries any torque since the
    # one before: the update is exact over gaps, and the log covers every state's flag)
    seen = np.count_nonzero(quiet) / (1 + round((t[quiet].max() - t[quiet].min()) / 1e-3))
    skipped = [kv.value for _, d in diags for st in d.status if "torque observer" in st.name
               for kv in st.values if kv.key == "skipped states"]
    assert seen > 0.9 and np.diff(t[quiet]).max() < 0.05, (
        "the test saw %.3f of the quiet window's states, largest gap %.1f ms; the observer "
        "skipped %s" % (seen, np.diff(t[quiet]).max() * 1e3, skipped[-1:]))
    _report("observer_graph_quiet_max_abs_r_n_m", quiet_peak)
    _report("observer_graph_contact_delay_ms", round(delay_ms, 3))
    _report("observer_graph_quiet_states_seen_by_the_test", round(seen, 4))
    _report("observer_graph_states_skipped_by_the_observer", skipped[-1] if skipped else None)
