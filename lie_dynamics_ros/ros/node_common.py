"""What the nodes share: the console-script ``main`` and throttled warnings.

- ``run_node(cls, name, args)``: ``rclpy.init``, spin ``cls()`` (``spin.make_spinner``: the
  node's ``hot_subscription`` straight from a wait set; the parameters ``SPIN``),
  SIGINT/SIGTERM -> the node's ``on_shutdown()`` then a clean shutdown; a bad configuration
  at start-up (``ValueError``) prints one line and returns exit code 1;
- ``warm_up(node, fn)``: compile the kernels before subscribing, logged when the cache is cold.
- ``spin_until(executor, cond, timeout_s)``: spin until ``cond()`` or a deadline (in-process
  graphs: ``ldr_bringup``, the demo, the soak test).
- ``ThrottledWarnings``: a mixin giving a node ``_warn(key, text)`` (at most once per
  ``self.throttle.period_s`` per key, with a count of suppressed repeats) and
  ``_drop(key, reason)`` (counts ``self.dropped`` and warns).
"""
import sys

# ---------------------------------------------------------------------------------------------
# console script


def run_node(cls, name, args=None) -> int:
    """Console-script body of a node: spin ``cls()`` until SIGINT, SIGTERM or an external
    shutdown.

    Returns 0, or 1 when the node refused its configuration at start-up (``ValueError``: a
    bad parameter value, a urdf_path that cannot be loaded), after printing
    ``"<name>: <reason>"`` on stderr, without a traceback. ``args`` are rclpy's.

    SIGINT and SIGTERM (what Docker and systemd send) are handled here, not by rclpy: rclpy's
    handlers shut the context down wherever the node happens to be ("failed to create timer:
    the given context is not valid" during start-up, "publisher's context is invalid" in a
    publish). Here a signal only ends the spin loop while the context is still valid, so the
    node's ``on_shutdown()`` (if it has one) can publish its final command; repeats are
    ignored (``ros2 launch`` forwards Ctrl-C while the terminal sends the same SIGINT), so the
    second one cannot interrupt ``destroy_node``. A signal during start-up (e.g. while kernels
    compile) ends the node right after.
    """
    import gc
    import signal
    import threading
    import rclpy
    from rclpy.executors import ExternalShutdownException
    from lie_dynamics_ros.ros.spin import apply_realtime, make_spinner, spin_settings
    from rclpy.signals import SignalHandlerOptions
    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()
        signal.signal(signum, signal.SIG_IGN)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    node = None
    executor = None
    code = 0
    try:
        node = cls()
        settings = spin_settings(node)       # SPIN (in the node's schema), read once
        executor, spinner = make_spinner(node, settings)
        apply_realtime(node, settings)
        # start-up objects (numba, rclpy, the model: ~10^5) out of the collector's reach: a
        # full collection over them stalls a node for ~50 ms, 50 commands at 1 kHz
        gc.freeze()
        while not stop.is_set() and rclpy.ok():
            spinner.spin_once(timeout_sec=0.05)
        if stop.is_set() and rclpy.ok() and hasattr(node, "on_shutdown"):
            node.on_shutdown()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except ValueError as e:  # bad configuration at start-up
        print("%s: %s" % (name, e), file=sys.stderr)
        code = 1
    finally:
        for s in old:            # late signals must not interrupt the clean-up
            signal.signal(s, signal.SIG_IGN)
        if executor is not None:
            executor.shutdown(timeout_sec=0.5)
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
        if not stop.is_set():    # the process goes on (a test calling main()): restore
            gc.unfreeze()
            for s, h in old.items():
                signal.signal(s, h)
        # after a signal the process is ending: a late repeat (the terminal's Ctrl-C after
        # the one ros2 launch forwarded) must not turn into a KeyboardInterrupt at exit
    return code


def warm_up(node, fn):
    """Run ``fn()`` (a first call of the kernels a node uses) before the node subscribes,
    saying so when the compile cache is cold; returns the seconds it took."""
    import time
    from lie_dynamics_ros.compile_notice import NOTICE
    from lie_dynamics_ros.precompile import cache_is_cold
    cold = cache_is_cold()
    if cold:
        node.get_logger().info("compiling numba kernels (first run only)")
        NOTICE.said = True         # the node's log says it: not the library's line too
    t = time.monotonic()
    fn()
    dt = time.monotonic() - t
    if cold:
        node.get_logger().info("kernels compiled in %.1f s" % dt)
    return dt


def spin_until(executor, cond, timeout_s, step_s=0.002) -> bool:
    """Spin ``executor`` until ``cond()`` holds (True) or ``timeout_s`` wall seconds pass
    (False); never hangs."""
    import time
    deadline = time.monotonic() + timeout_s
    while not cond():
        if time.monotonic() > deadline:
            return False
        executor.spin_once(timeout_sec=step_s)
    return True


# ---------------------------------------------------------------------------------------------
# throttled warnings


class ThrottledWarnings:
    """Mixin for a Node with ``self.throttle`` (``conversions.Throttle``) and ``self.dropped``.

    Repeated warnings with the same key are logged at most once per throttle period and say
    how many were suppressed since the last one.
    """

    def _warn(self, key, text) -> bool:
        """Log ``text`` as a warning unless ``key`` was reported recently; True if logged."""
        if not self.throttle.ready(key):
            return False
        more = self.throttle.suppressed(key)
        self.get_logger().warning(text + (" (%d more since last report)" % more if more else ""))
        return True

    def _drop(self, key, reason):
        """A message on topic ``key`` is dropped for ``reason``: count it, warn (throttled)."""
        self.dropped += 1
        self._warn(key, "dropped %s: %s" % (key, reason))
