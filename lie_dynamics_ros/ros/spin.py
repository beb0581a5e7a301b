"""The spin loop of the nodes: the hot subscription straight from a wait set.

rclpy's SingleThreadedExecutor rebuilds its wait set, creates a timeout timer and wraps the
callback in a task on every ``spin_once``: about 300 us per message on this package's CI
machine, more than the node's whole callback. ``HotPathSpinner`` keeps one wait set; when the node's
``hot_subscription`` (joint_states) is ready it takes the message and calls the callback
directly. Anything else that is ready (timers, parameter services, other topics, guard
conditions) is handed to the executor, which serves it as usual. Waitables (QoS event
handlers) are not in the wait set: the executor serves them on those calls and at least every
``timeout_sec``.

Measured numbers and the choice against rclpy's EventsExecutor: docs/ros.md, "Latency".
"""
import time
from contextlib import ExitStack
from types import SimpleNamespace

from rclpy.exceptions import InvalidHandle
from rclpy.executors import SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.subscription import Subscription

from lie_dynamics_ros.ros.parameters import Parameters, typed_value
# EXECUTORS: the values of ``executor``, re-exported here
from lie_dynamics_ros.ros.schemas.common import EXECUTORS, SPIN  # noqa: F401


def spin_settings(node):
    """``executor`` and ``realtime_priority`` of ``node`` (the table ``SPIN``, read-only):
    declared on the first call, typed values on every call. ValueError naming a bad value."""
    new = [s for s in SPIN if not node.has_parameter(s.name)]
    if new:
        Parameters(node).declare(new)
    return SimpleNamespace(**{s.name: typed_value(s, node.get_parameter(s.name).value)
                              for s in SPIN})


def make_spinner(node, settings=None):
    """(executor, spinner) for ``node``, chosen by its read-only parameter ``executor``
    (``settings``: ``spin_settings(node)``, got here when not given): ``wait_set`` (default:
    HotPathSpinner on a SingleThreadedExecutor) or ``single_threaded`` (rclpy's). The node is
    added to the executor; ``spinner.spin_once(timeout_sec)`` serves it. ValueError for an
    unknown name.

    Not offered: rclpy.experimental.EventsExecutor. It gained as much as the wait set, but in
    rclpy 7.1 its ``spin()`` busy-loops without serving anything and its ``spin_once`` raised
    "SystemError: null argument to internal routine" on a node with a service and a
    subscription that takes message info (test_ros_spin.py, when it was in the list)."""
    name = (settings or spin_settings(node)).executor
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    return executor, (HotPathSpinner(node, executor) if name == "wait_set" else executor)


class HotPathSpinner:
    """``spin_once(timeout_sec)`` for one node on ``executor``; falls back to the executor
    while the node has no ``hot_subscription`` (before its model is loaded)."""

    def __init__(self, node, executor):
        self.node = node
        self.executor = executor
        self._wait_set = None
        self._sizes = None
        self._executor_served = time.monotonic()

    def spin_once(self, timeout_sec):
        node = self.node
        hot = getattr(node, "hot_subscription", None)
        if hot is None:
            return self._executor_spin(timeout_sec)
        kinds = (("subscription", list(node.subscriptions)), ("guard_condition", list(node.guards)),
                 ("timer", list(node.timers)), ("client", list(node.clients)),
                 ("service", list(node.services)))
        sizes = tuple(len(entities) for _, entities in kinds)
        if sizes != self._sizes:     # the WaitSet constructor takes the counts in this order
            self._wait_set = _rclpy.WaitSet(*sizes, 0, node.context.handle)
            self._sizes = sizes
        ws = self._wait_set
        hot_ready = False
        others = []
        with ExitStack() as handles:
            try:
                handles.enter_context(node.context.handle)
                for _, entities in kinds:
                    for e in entities:
                        handles.enter_context(e.handle)
            except InvalidHandle:       # an entity is being destroyed: rclpy sorts it out
                return self._executor_spin(0)
            ws.clear_entities()
            added = []
            for kind, entities in kinds:
                add = getattr(ws, "add_" + kind)
                added.extend((kind, add(e.handle), e) for e in entities)
            ws.wait(int(timeout_sec * 1e9))
            for kind, index, e in added:
                if ws.is_ready(kind, index):
                    if e is hot:
                        hot_ready = True
                    else:
                        others.append((kind, e))
            taken = hot.handle.take_message(hot.msg_type, hot.raw) if hot_ready else None
        if taken is not None:
            if hot._callback_type == Subscription.CallbackType.WithMessageInfo:
                hot.callback(*taken)
            else:
                hot.callback(taken[0])
        for kind, e in others:
            if kind == "guard_condition":
                e.trigger()          # our wait consumed the trigger: the executor needs it
        if others or time.monotonic() - self._executor_served >= timeout_sec:
            self._executor_spin(0)

    def _executor_spin(self, timeout_sec):
        self.executor.spin_once(timeout_sec=timeout_sec)
        self._executor_served = time.monotonic()


def apply_realtime(node, settings=None):
    """The read-only parameter ``realtime_priority`` (0 = off, 1-99; ``settings`` as in
    ``make_spinner``): run the spin loop's thread under SCHED_FIFO at that priority, as
    ros2_control's controller manager does with its ``thread_priority``. DDS's own threads
    keep theirs. Without the privilege (root, CAP_SYS_NICE or an ``rtprio`` limit) the node
    says how to get it and runs as before. Returns the priority in force (0 when off or
    refused)."""
    import os
    prio = (settings or spin_settings(node)).realtime_priority
    if prio == 0:
        return 0
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(prio))
    except PermissionError:
        node.get_logger().warning(
            "realtime_priority %d refused: no permission to use SCHED_FIFO (add "
            "'<user> - rtprio 99' to /etc/security/limits.conf, or run with CAP_SYS_NICE); "
            "running with the default scheduler" % prio)
        return 0
    node.get_logger().info("spin loop at SCHED_FIFO priority %d" % prio)
    return prio
