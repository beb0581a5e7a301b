"""The nodes' spin loop (ros/spin.py) over real DDS: the hot subscription is served straight
from a wait set, in order and without loss, while timers, services and other topics still go
through rclpy's executor."""
import time

import pytest

from ros_fixtures import RosSession, wait_matched  # noqa: F401

from rclpy.node import Node  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from std_msgs.msg import Int64, String  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from lie_dynamics_ros.ros.spin import EXECUTORS, HotPathSpinner, make_spinner  # noqa: E402


class Busy(Node):
    """A hot topic, another topic, a timer and a service."""

    def __init__(self, context, **kwargs):
        super().__init__("busy", context=context, **kwargs)
        self.hot, self.info, self.other, self.ticks = [], [], [], 0
        self.hot_subscription = self.create_subscription(Int64, "hot", self._on_hot, 1000)
        self.create_subscription(String, "other", lambda m: self.other.append(m.data), 10)
        self.create_timer(0.01, self._tick)
        self.create_service(Trigger, "~/ping", self._ping)

    def _on_hot(self, msg, info):
        self.hot.append(msg.data)
        self.info.append(info)

    def _tick(self):
        self.ticks += 1

    def _ping(self, request, response):
        response.success, response.message = True, "pong %d" % len(self.hot)
        return response


@pytest.mark.parametrize("executor", EXECUTORS)
def test_every_entity_is_served_and_the_hot_topic_in_order(executor):
    session = RosSession("spin_test")
    node = Busy(session.context, parameter_overrides=[Parameter("executor", value=executor)])
    try:
        _, spinner = make_spinner(node)
        assert isinstance(spinner, HotPathSpinner) == (executor == "wait_set")
        hot = session.node.create_publisher(Int64, "hot", 1000)
        other = session.node.create_publisher(String, "other", 10)
        client = session.node.create_client(Trigger, "/busy/ping")

        def spin_both(seconds):
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                spinner.spin_once(0.005)
                session.executor.spin_once(timeout_sec=0)

        deadline = time.monotonic() + 20
        while not (hot.get_subscription_count() and other.get_subscription_count()
                   and client.service_is_ready()) and time.monotonic() < deadline:
            spin_both(0.05)
        t0 = time.monotonic()
        for k in range(500):
            hot.publish(Int64(data=k))
            if k % 100 == 0:
                other.publish(String(data="m%d" % k))
            spin_both(0.0005)
        future = client.call_async(Trigger.Request())
        deadline = time.monotonic() + 20
        while (len(node.hot) < 500 or not future.done()) and time.monotonic() < deadline:
            spin_both(0.01)
        assert node.hot == list(range(500))                 # all, in order, once
        assert all(i["source_timestamp"] > 0 for i in node.info)   # WithMessageInfo kept
        assert node.other == ["m%d" % k for k in range(0, 500, 100)]
        assert future.done() and future.result().success
        assert node.ticks >= 0.5 * (time.monotonic() - t0) / 0.01, node.ticks
    finally:
        node.destroy_node()
        session.close()


@pytest.mark.parametrize("value, says", [("fast", "'fast' is not one of wait_set"),
                                         (3, "executor: .*type")])
def test_an_unknown_executor_is_refused(value, says):
    session = RosSession("spin_test_bad")
    node = Busy(session.context, parameter_overrides=[Parameter("executor", value=value)])
    try:
        with pytest.raises(ValueError, match=says):
            make_spinner(node)
    finally:
        node.destroy_node()
        session.close()


def _fifo_allowed():
    """Whether this process may use SCHED_FIFO (tried on a throwaway thread)."""
    import os
    import threading
    out = []

    def probe():
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
            out.append(True)
        except PermissionError:
            out.append(False)
    t = threading.Thread(target=probe)
    t.start()
    t.join()
    return out[0]


@pytest.mark.parametrize("prio", [0, 10, 120])
def test_realtime_priority_sets_fifo_on_the_spin_thread_or_says_why_not(prio):
    """realtime_priority acts on the calling (spin) thread only: here a worker thread, so the
    test session keeps its scheduler. Without the privilege the node warns and goes on."""
    import os
    import threading
    from lie_dynamics_ros.ros.spin import apply_realtime
    session = RosSession("spin_test_rt")
    node = Busy(session.context, parameter_overrides=[Parameter("realtime_priority", value=prio)])
    seen = {}

    def spin_thread():
        try:
            seen["prio"] = apply_realtime(node)
            seen["policy"] = os.sched_getscheduler(0)
        except ValueError as e:
            seen["error"] = str(e)
    try:
        t = threading.Thread(target=spin_thread)
        t.start()
        t.join()
        if prio > 99:
            assert "realtime_priority: 120 is not in 0..99" in seen["error"]
        elif prio == 0 or not _fifo_allowed():
            assert seen["prio"] == 0 and seen["policy"] == os.SCHED_OTHER
        else:
            assert seen["prio"] == prio and seen["policy"] == os.SCHED_FIFO
        assert os.sched_getscheduler(0) == os.SCHED_OTHER          # this thread untouched
    finally:
        node.destroy_node()
        session.close()
