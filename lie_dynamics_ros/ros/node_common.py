"""What the three nodes share: the console-script ``main``, parameter validators and
throttled warnings.

- ``run_node(cls, name, args)``: ``rclpy.init``, spin ``cls()``, clean shutdown; a bad
  parameter value at start-up (``ValueError``) prints one line and returns exit code 1.
- Validators for ``model_source.Param(check=...)``: each takes the typed value and returns
  None or a reason string.
- ``ThrottledWarnings``: a mixin giving a node ``_warn(key, text)`` (at most once per
  ``self.throttle.period_s`` per key, with a count of suppressed repeats) and
  ``_drop(key, reason)`` (counts ``self.dropped`` and warns).
"""
import sys

# ---------------------------------------------------------------------------------------------
# console script


def run_node(cls, name, args=None) -> int:
    """Console-script body of a node: spin ``cls()`` until Ctrl-C or an external shutdown.

    Returns 0, or 1 when the node refused its parameters at start-up (``ValueError``), after
    printing ``"<name>: <reason>"`` on stderr. ``args`` are rclpy's (``--ros-args ...``).
    """
    import rclpy
    from rclpy.executors import ExternalShutdownException
    rclpy.init(args=args)
    node = None
    try:
        node = cls()
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except ValueError as e:  # bad parameter values at start-up
        print("%s: %s" % (name, e), file=sys.stderr)
        return 1
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0


# ---------------------------------------------------------------------------------------------
# parameter validators (value -> None or a reason)


def three_values(values):
    """Exactly three numbers (a vector in R^3, e.g. gravity)."""
    return None if len(values) == 3 else "needs 3 values, got %d" % len(values)


def positive_number(x):
    """A scalar > 0."""
    return None if x > 0 else "must be > 0"


def nonnegative_number(x):
    """A scalar >= 0."""
    return None if x >= 0 else "must be >= 0"


def positive_values(values):
    """At least one value, every value > 0."""
    return (None if len(values) and all(x > 0 for x in values)
            else "values must be > 0 (at least one)")


def nonnegative_values(values):
    """At least one value, every value >= 0."""
    if not len(values):
        return "needs at least one value"
    return None if all(x >= 0 for x in values) else "values must be >= 0"


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
