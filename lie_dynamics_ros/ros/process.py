"""The console-script body of a node that ends cleanly on Ctrl-C, SIGTERM and a second signal.

``ros2 launch`` forwards Ctrl-C to its nodes while the terminal sends them the same SIGINT, so
a node gets two; Docker and systemd send SIGTERM. rclpy's default handlers turn the first one
into a context shutdown that can land in the middle of start-up ("failed to create timer: the
given context is not valid") or of a publish ("publisher's context is invalid"), and the
second one into a KeyboardInterrupt inside ``destroy_node``. Here a signal only sets a flag,
repeats are ignored, and the node is destroyed after the executor stopped.
"""
import signal
import sys
import threading


def spin_node(factory, name, args=None, on_stop=None) -> int:
    """Create ``factory()`` (a Node), spin it until SIGINT/SIGTERM or an rclpy shutdown, then
    call ``on_stop(node)`` (e.g. a last publish) and destroy it.

    Returns 0, or 1 when the node refused its parameters at start-up (``ValueError``), after
    printing ``"<name>: <reason>"`` on stderr. ``args`` are rclpy's (``--ros-args ...``).
    """
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions

    stop = threading.Event()

    def on_signal(signum, _frame):
        stop.set()
        signal.signal(signum, signal.SIG_IGN)   # the second Ctrl-C must not interrupt cleanup

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    node = executor = None
    code = 0
    try:
        node = factory()
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        while not stop.is_set() and rclpy.ok():
            executor.spin_once(timeout_sec=0.1)
        if on_stop is not None and rclpy.ok():
            on_stop(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except ValueError as e:  # bad parameter values at start-up
        print("%s: %s" % (name, e), file=sys.stderr)
        code = 1
    finally:
        for s in previous:   # ignore late signals during cleanup
            signal.signal(s, signal.SIG_IGN)
        if executor is not None:
            executor.shutdown(timeout_sec=1.0)
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return code
