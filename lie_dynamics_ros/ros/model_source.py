"""Where a node gets its robot model, and its typed parameters.

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
import math
import os
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable, List, Optional

from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

# per-robot parameter files live in the core (the runtimes read them); re-exported here
from lie_dynamics_ros.runtime.config_files import read_parameters, robot_config_file  # noqa: F401

# -------------------------------------------------------------------------------------------
# typed parameters


@dataclass(frozen=True)
class Param:
    """One declared parameter: name, default, kind, description, and whether it is read-only.

    kind is one of bool, int, double, string, double_array, string_array. Parameters are
    declared with dynamic typing so that YAML/CLI integers are accepted for doubles
    (``gravity: [0, 0, -9.81]``) and then coerced here, with a clear error otherwise.
    """
    name: str
    default: Any
    kind: str
    description: str
    read_only: bool = False
    check: Optional[Callable[[Any], Optional[str]]] = field(default=None, compare=False)


def _coerce(spec: Param, value):
    """Value as given by rclpy -> typed Python value; raises ValueError."""
    k = spec.kind
    if value is None:
        return list(spec.default) if isinstance(spec.default, (list, tuple)) else spec.default
    if k == "bool":
        if isinstance(value, bool):
            return value
    elif k == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif k == "double":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif k == "string":
        if isinstance(value, str):
            return value
    elif k == "double_array":
        if isinstance(value, (bytes, bytearray)) and len(value) == 0:
            return []
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return [float(value)]      # a scalar gain: one value for every joint
        if hasattr(value, "__len__") and not isinstance(value, str) and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
            return [float(x) for x in value]
    elif k == "string_array":
        if isinstance(value, (bytes, bytearray)) and len(value) == 0:
            return []
        if hasattr(value, "__len__") and not isinstance(value, str) and all(
                isinstance(x, str) for x in value):
            return list(value)
    raise ValueError("parameter '%s' must be %s, got %r" % (spec.name, k, value))


def _validate(spec: Param, value):
    value = _coerce(spec, value)
    if spec.kind in ("double", "double_array"):
        vals = value if isinstance(value, list) else [value]
        if not all(math.isfinite(x) for x in vals):
            raise ValueError("parameter '%s' must be finite, got %r" % (spec.name, value))
    if spec.check is not None:
        reason = spec.check(value)
        if reason:
            raise ValueError("parameter '%s': %s" % (spec.name, reason))
    return value


class Parameters:
    """The declared parameters of a node, validated in the on-set callback and applied in the
    post-set callback (rclpy's two stages), so that an update refused by any check changes
    nothing: neither the values nor the state built from them.

    ``declare(specs)`` declares and returns the namespace of typed values (``self.values``).
    ``listen(check, apply)``, called once after every declaration:

    - ``check(trial, names)``: ``trial`` is a copy of the values with the staged ones; returns
      ``(reason, prepared)``: a reason string refuses the whole update; ``prepared`` is any
      object built from ``trial`` (a new model, a new controller) and handed to ``apply``;
    - ``apply(names, prepared)``: after rclpy has accepted the update (values already set).
    """

    def __init__(self, node):
        self.node = node
        self.values = SimpleNamespace()
        self.specs = {}
        self._pending = None

    def declare(self, specs: List[Param]):
        for s in specs:
            desc = ParameterDescriptor(description=s.description, read_only=s.read_only,
                                       dynamic_typing=True)
            default = (None if isinstance(s.default, (list, tuple)) and not s.default
                       else s.default)
            p = self.node.declare_parameter(s.name, default, desc)
            setattr(self.values, s.name, _validate(s, p.value))
            self.specs[s.name] = s
        return self.values

    def stage(self, params):
        """Typed validation of a set-parameters request: (trial namespace, names) or a
        ValueError naming the parameter."""
        staged = {p.name: _validate(self.specs[p.name], p.value)
                  for p in params if p.name in self.specs}
        trial = SimpleNamespace(**vars(self.values))
        for name, v in staged.items():
            setattr(trial, name, v)
        return trial, set(staged)

    def listen(self, check: Optional[Callable] = None, apply: Optional[Callable] = None):
        def on_set(params):
            try:
                trial, names = self.stage(params)
            except ValueError as e:
                return SetParametersResult(successful=False, reason=str(e))
            prepared = None
            if names and check is not None:
                reason, prepared = check(trial, names)
                if reason:
                    return SetParametersResult(successful=False, reason=reason)
            self._pending = (_key(params), trial, names, prepared)
            return SetParametersResult(successful=True)

        def post_set(params):
            pending, self._pending = self._pending, None
            if pending is None or pending[0] != _key(params):
                return          # refused by another callback, or not ours
            _, trial, names, prepared = pending
            for name in names:
                setattr(self.values, name, getattr(trial, name))
            if names and apply is not None:
                apply(sorted(names), prepared)

        self.node.add_on_set_parameters_callback(on_set)
        self.node.add_post_set_parameters_callback(post_set)


def _key(params):
    return tuple((p.name, repr(p.value)) for p in params)


def declare_parameters(node, specs: List[Param], on_change: Optional[Callable] = None):
    """Declare ``specs`` on ``node`` and return a namespace of typed values.

    Values set later (``ros2 param set``) are validated the same way; read-only ones are
    refused by rclpy. After a successful change ``on_change(names)`` is called. Raises
    ValueError at start-up for a value of the wrong type. (Simple form of ``Parameters``.)
    """
    ps = Parameters(node)
    values = ps.declare(specs)
    ps.listen(apply=None if on_change is None else lambda names, _: on_change(names))
    return values


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

    PARAMS = [
        Param("robot_description", "", "string",
              "URDF XML of the robot. Takes precedence over urdf_path and the topic."),
        Param("urdf_path", "", "string",
              "URDF file, used when robot_description is empty. Absolute, relative to "
              "the working directory, or a file name in the package's urdf/ folder."),
    ]
    NAMES = ("robot_description", "urdf_path")

    def __init__(self, node, on_model: Callable[[Any, str], Optional[str]],
                 topic: str = "robot_description", parameters: Optional[Parameters] = None,
                 start: bool = True):
        """With ``parameters`` (a node's ``Parameters``), the two parameters join them and
        run-time changes go through the node's check/apply (``load_staged``/``adopted``);
        without, ModelSource declares them and reloads in its own on-set callback."""
        self.node = node
        self.on_model = on_model
        self.topic = topic
        self.origin: Optional[str] = None
        self.rejected = 0      # malformed or refused descriptions so far
        self._sub = None
        if parameters is not None:
            self.params = parameters.declare(self.PARAMS)
        else:
            self.params = declare_parameters(node, self.PARAMS)
            node.add_on_set_parameters_callback(self._on_set)
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
            reason = self.on_model(model, origin)
        except Exception as e:  # never let a bad description kill the node
            reason = "%s: %s" % (type(e).__name__, e)
        if reason is not None:
            self.rejected += 1
            return reason
        self.origin = origin
        self.node.get_logger().info("robot model loaded from %s" % origin)
        return None

    def _on_topic(self, msg):
        if self.origin is not None and not self.origin.startswith("topic"):
            return  # a parameter wins over the topic
        self._try(msg.data, False, "topic %s" % self._sub.topic_name)

    def _on_set(self, params):
        for p in params:
            if p.name not in ("robot_description", "urdf_path") or not p.value:
                continue
            if not isinstance(p.value, str):
                return SetParametersResult(successful=False, reason="%s must be a string"
                                           % p.name)
            is_path = p.name == "urdf_path"
            origin = "urdf_path %s" % p.value if is_path else "parameter robot_description"
            reason = self._load(p.value, is_path, origin)
            if reason is not None:
                self.node.get_logger().error("refusing new %s: %s" % (p.name, reason))
                return SetParametersResult(successful=False, reason=reason)
        return SetParametersResult(successful=True)

