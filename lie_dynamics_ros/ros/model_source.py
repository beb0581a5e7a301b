"""Where a node gets its robot model.

The model comes from, in this order (docs/ros.md):

1. the parameter ``robot_description`` (URDF XML);
2. else the parameter ``urdf_path`` (absolute, relative to the working directory, or a file
   name in the package's ``urdf/`` folder);
3. else the topic ``robot_description`` (std_msgs/String, reliable + transient-local, as
   robot_state_publisher publishes it).

A malformed URDF never takes a running node down: it is logged and ignored, the node keeps
the model it had (or waits for one). Setting ``robot_description`` or ``urdf_path`` at run
time reloads the model; a bad value is refused by the set-parameters call. At start-up, a
``urdf_path`` that cannot be loaded is a configuration error: ``ModelSource`` raises
ValueError (the console script prints one line and exits with status 1) instead of waiting
forever on the topic.
"""
import os
from typing import Any, Callable, Optional

from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from lie_dynamics_ros.ros.parameters import Parameters
from lie_dynamics_ros.ros.schemas.common import MODEL_SOURCE
# per-robot parameter files live in the core (the runtimes read them); re-exported here
from lie_dynamics_ros.runtime.config_files import read_parameters, robot_config_file  # noqa: F401


# -------------------------------------------------------------------------------------------
# model


def resolve_urdf_path(path: str) -> str:
    """``path`` as given if it is a file, else relative to the package's share directory
    (``urdf/arm7.urdf``) or a robot bundled in its ``urdf/`` folder (``arm7.urdf``, ``arm7``).

    The share directory is ``lie_dynamics_ros.resources.share_dir()``: the source checkout,
    ``<sys.prefix>/share/lie_dynamics_ros`` (pip install) or the ament index (colcon).
    Raises FileNotFoundError.
    """
    if os.path.isfile(path):
        return path
    from lie_dynamics_ros import resources
    try:
        in_share = os.path.join(resources.share_dir(), path)
        if os.path.isfile(in_share):
            return in_share
        return resources.bundled_urdf(path)
    except FileNotFoundError as e:
        raise FileNotFoundError("URDF file not found: %s (%s)" % (path, e)) from e


def load_model(text_or_path: str, is_path: bool):
    """ldr.load_urdf with every failure turned into ValueError (message = reason)."""
    import lie_dynamics_ros as ldr
    try:
        if is_path:
            path = resolve_urdf_path(text_or_path)
            return ldr.load_sdf(path) if path.endswith(".sdf") else ldr.load_urdf(path)
        if not text_or_path.lstrip().startswith("<"):
            raise ValueError("robot_description is not XML")
        if text_or_path.lstrip().startswith(("<sdf", "<?xml")) and "<sdf" in text_or_path[:500]:
            return ldr.load_sdf(text_or_path)
        return ldr.load_urdf(text_or_path)
    except ValueError:
        raise
    except Exception as e:  # URDFError is a ValueError; OSError, parser errors, ...
        raise ValueError("%s: %s" % (type(e).__name__, e)) from e


def transient_local_qos() -> QoSProfile:
    """The QoS robot_state_publisher uses for ``robot_description``."""
    return QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL)


class ModelSource:
    """Finds the robot model for ``node`` and hands it to ``on_model(model, origin)``.

    ``on_model`` may return a reason string to refuse a model the node cannot use (e.g. a
    joint the configuration names is missing); a refused model is treated like a bad URDF.
    ``origin`` is "parameter robot_description", "urdf_path <path>" or "topic <name>".
    """

    PARAMS = MODEL_SOURCE
    NAMES = tuple(p.name for p in MODEL_SOURCE)

    def __init__(self, node, on_model: Callable[[Any, str], Optional[str]],
                 topic: str = "robot_description", parameters: Optional[Parameters] = None,
                 start: bool = True, listen: Optional[bool] = None):
        """The two parameters belong to ``parameters`` (the node's ``Parameters``, which
        declares them here unless its schema already did), else to a ``Parameters`` of its
        own. ``listen`` (default: only with its own): run-time changes go through this
        object's listener, ``on_model`` vetting the new model in the check stage; without
        it the node's own check/apply handle them with ``load_staged``/``adopted``."""
        self.node = node
        self.on_model = on_model
        self.topic = topic
        self.origin: Optional[str] = None
        self.rejected = 0      # malformed or refused descriptions so far
        self._sub = None
        own = parameters is None
        self.parameters = Parameters(node) if own else parameters
        self.params = self.parameters.declare(
            [p for p in self.PARAMS if p.name not in self.parameters.specs])
        if own if listen is None else listen:
            self.parameters.listen(self._check, self._apply)
        if start:
            self.start()

    @property
    def has_model(self) -> bool:
        return self.origin is not None

    def start(self):
        """Load from the parameters, else subscribe to the topic. ValueError when urdf_path
        is set (and robot_description is not) but gives no usable model."""
        if self.params.robot_description and self._try(
                self.params.robot_description, False, "parameter robot_description"):
            return
        if self.params.urdf_path and not self.params.robot_description:
            reason = self._load(self.params.urdf_path, True,
                                "urdf_path %s" % self.params.urdf_path)
            if reason is None:
                return
            raise ValueError("cannot use urdf_path '%s': %s" % (self.params.urdf_path, reason))
        self._subscribe()

    # -- staged changes (Parameters.listen) ------------------------------------------------
    def load_staged(self, trial, names):
        """For a check callback: (model, origin) for a staged change of robot_description or
        urdf_path, (None, None) when neither changes. Raises ValueError with the reason."""
        for name in self.NAMES:
            value = getattr(trial, name)
            if name in names and value:
                is_path = name == "urdf_path"
                origin = "urdf_path %s" % value if is_path else "parameter robot_description"
                try:
                    return load_model(value, is_path), origin
                except ValueError as e:
                    self.rejected += 1
                    self.node.get_logger().error("refusing new %s: %s" % (name, e))
                    raise
        return None, None

    def adopted(self, origin):
        """The node has installed a model loaded by ``load_staged``."""
        self.origin = origin
        self.node.get_logger().info("robot model loaded from %s" % origin)

    def _check(self, trial, names):
        """Own listener: ``on_model`` both vets and installs, so it runs here, in the last
        stage that can still refuse the update."""
        try:
            model, origin = self.load_staged(trial, names)
        except ValueError as e:
            return str(e), None
        if model is None:
            return None, None
        reason = self._hand_over(model, origin)
        if reason is not None:
            self.node.get_logger().error("refusing new model from %s: %s" % (origin, reason))
        return reason, origin

    def _apply(self, names, origin):
        if origin is not None:
            self.adopted(origin)

    def _subscribe(self):
        from std_msgs.msg import String
        if self._sub is None:
            self._sub = self.node.create_subscription(
                String, self.topic, self._on_topic, transient_local_qos())
            self.node.get_logger().info(
                "waiting for the robot model on topic '%s'" % self._sub.topic_name)

    def _try(self, text, is_path, origin, log=True) -> bool:
        """Load and hand over; returns True on success. Failures are logged, never raised."""
        reason = self._load(text, is_path, origin)
        if reason is None:
            return True
        if log:
            self.node.get_logger().error("ignoring robot model from %s: %s" % (origin, reason))
        return False

    def _load(self, text, is_path, origin) -> Optional[str]:
        try:
            model = load_model(text, is_path)
        except ValueError as e:
            self.rejected += 1
            return str(e)
        reason = self._hand_over(model, origin)
        if reason is None:
            self.adopted(origin)
        return reason

    def _hand_over(self, model, origin) -> Optional[str]:
        """``on_model(model, origin)``: None when the node took it, else the reason."""
        try:
            reason = self.on_model(model, origin)
        except Exception as e:  # never let a bad description kill the node
            reason = "%s: %s" % (type(e).__name__, e)
        if reason is not None:
            self.rejected += 1
        return reason

    def _on_topic(self, msg):
        if self.origin is not None and not self.origin.startswith("topic"):
            return  # a parameter wins over the topic
        self._try(msg.data, False, "topic %s" % self._sub.topic_name)
