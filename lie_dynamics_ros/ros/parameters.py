"""Declarative, typed node parameters: one ``Param`` per parameter, one update protocol.

A ``Param`` gives a parameter's name, default, kind, description, read-only flag and its
constraints: ``min``/``max`` (inclusive; for an array, every element), ``choices``, and
``check`` for what those cannot say. From it come the declaration, the
``ParameterDescriptor`` that ``ros2 param describe`` shows, the validation of every value (at
start-up and on ``ros2 param set``) and the docs tables (``parameter_docs``).

Parameters are declared with dynamic typing so that YAML/CLI integers are accepted for doubles
(``gravity: [0, 0, -9.81]``); ``typed_value`` then coerces them, with an error naming the
parameter otherwise.
"""
import math
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable, List, Optional, Tuple

from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                SetParametersResult)
from rclpy.exceptions import ParameterException

KINDS = ("bool", "int", "double", "string", "double_array", "string_array")
_NUMERIC = ("int", "double", "double_array")
_INT64 = (-2 ** 63, 2 ** 63 - 1)


@dataclass(frozen=True)
class Param:
    """One declared parameter. ``kind`` is one of ``KINDS``.

    ``check(value) -> None | reason`` sees the typed value; the first line of its docstring
    is its constraint as the docs and ``ros2 param describe`` show it. The default must
    satisfy every constraint (checked here, so a bad table fails at import).
    """
    name: str
    default: Any
    kind: str
    description: str
    read_only: bool = False
    check: Optional[Callable[[Any], Optional[str]]] = field(default=None, compare=False)
    min: Optional[float] = None
    max: Optional[float] = None
    choices: Optional[Tuple] = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError("parameter %s: kind %r is not one of %s"
                             % (self.name, self.kind, ", ".join(KINDS)))
        if not self.description.strip():
            raise ValueError("parameter %s has no description" % self.name)
        if (self.min is not None or self.max is not None) and self.kind not in _NUMERIC:
            raise ValueError("parameter %s: min/max need a numeric kind, not %s"
                             % (self.name, self.kind))
        if self.kind == "int" and not all(b is None or isinstance(b, int)
                                          for b in (self.min, self.max)):
            raise ValueError("parameter %s: the bounds of an int are ints" % self.name)
        if self.choices is not None:
            if self.kind not in ("string", "string_array", "int"):
                raise ValueError("parameter %s: choices need kind string, string_array or "
                                 "int, not %s" % (self.name, self.kind))
            object.__setattr__(self, "choices", tuple(self.choices))
        typed_value(self, self.default)


def schema(*tables: List[Param]) -> List[Param]:
    """One node's whole table: ``tables`` concatenated in order; ValueError naming a
    parameter that two of them declare."""
    out, seen = [], set()
    for t in tables:
        for p in t:
            if p.name in seen:
                raise ValueError("parameter %s is declared twice" % p.name)
            seen.add(p.name)
            out.append(p)
    return out


def typed_value(spec: Param, value):
    """A value as rclpy gives it (None: not set) -> the typed value; ValueError naming the
    parameter when it has the wrong type or breaks a constraint."""
    value = _coerce(spec, value)
    vals = value if isinstance(value, list) else [value]
    if spec.kind in ("double", "double_array") and not all(math.isfinite(x) for x in vals):
        raise ValueError("parameter %s: %r is not finite" % (spec.name, value))
    lo, hi = spec.min, spec.max
    for i, x in enumerate(vals if spec.kind in _NUMERIC else ()):
        if (lo is not None and x < lo) or (hi is not None and x > hi):
            at = "value %d (%r)" % (i, x) if isinstance(value, list) else repr(x)
            raise ValueError("parameter %s: %s is not %s" % (spec.name, at, range_text(spec)))
    if spec.choices is not None:
        for x in vals:
            if x not in spec.choices:
                raise ValueError("parameter %s: %r is not one of %s" % (
                    spec.name, x, ", ".join(str(c) for c in spec.choices)))
    if spec.check is not None:
        reason = spec.check(value)
        if reason:
            raise ValueError("parameter %s: %s" % (spec.name, reason))
    return value


def _coerce(spec: Param, value):
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
    elif isinstance(value, (bytes, bytearray)) and len(value) == 0:
        return []            # how rclpy types an empty list
    elif k == "double_array":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return [float(value)]      # a scalar gain: one value for every joint
        if _sequence(value) and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
            return [float(x) for x in value]
    elif k == "string_array":
        if _sequence(value) and all(isinstance(x, str) for x in value):
            return list(value)
    raise ValueError("parameter %s: %r is not of type %s" % (spec.name, value, k))


def _sequence(value):
    return hasattr(value, "__len__") and not isinstance(value, (str, bytes, bytearray))


# -------------------------------------------------------------------------------------------
# how a table reads: ros2 param describe and the docs


def _number(x):
    return "%d" % x if isinstance(x, int) else "%g" % x


def range_text(spec: Param) -> str:
    """``"0..99"``, ``">= 0"``, ``"<= 1"`` or ``""`` (for an array: of every element)."""
    lo, hi = spec.min, spec.max
    if lo is not None and hi is not None:
        return "in %s..%s" % (_number(lo), _number(hi))
    if lo is not None:
        return ">= %s" % _number(lo)
    if hi is not None:
        return "<= %s" % _number(hi)
    return ""


def check_text(spec: Param) -> str:
    """The first line of ``check``'s docstring, without the final period ("" without)."""
    doc = getattr(spec.check, "__doc__", None) if spec.check is not None else None
    return doc.strip().splitlines()[0].rstrip(".") if doc and doc.strip() else ""


def constraints(spec: Param, scalar_range=True) -> List[str]:
    """The constraints of ``spec`` in words; without the range of a scalar when
    ``scalar_range`` is false (the descriptor carries it as a number range)."""
    out = []
    each = "each value " if spec.kind.endswith("_array") else ""
    if range_text(spec) and (each or scalar_range):
        out.append(each + range_text(spec))
    if spec.choices is not None:
        out.append("%sone of %s" % (each, ", ".join(str(c) for c in spec.choices)))
    if check_text(spec):
        out.append(check_text(spec))
    return out


def descriptor(spec: Param) -> ParameterDescriptor:
    """What ``ros2 param describe`` shows: description, read-only, the number range of a
    scalar, the other constraints as text. Dynamic typing: see the module docstring."""
    d = ParameterDescriptor(description=spec.description, read_only=spec.read_only,
                            dynamic_typing=True,
                            additional_constraints="; ".join(constraints(spec, False)))
    if spec.min is None and spec.max is None:
        return d
    if spec.kind == "double":
        d.floating_point_range = [FloatingPointRange(
            from_value=-math.inf if spec.min is None else float(spec.min),
            to_value=math.inf if spec.max is None else float(spec.max), step=0.0)]
    elif spec.kind == "int":
        d.integer_range = [IntegerRange(
            from_value=_INT64[0] if spec.min is None else spec.min,
            to_value=_INT64[1] if spec.max is None else spec.max, step=0)]
    return d


# -------------------------------------------------------------------------------------------
# declaration and the update protocol


class Parameters:
    """The declared parameters of a node, validated in the on-set callback and applied in the
    post-set callback (rclpy's two stages), so that an update refused by any check changes
    nothing: neither the values nor the state built from them.

    ``declare(specs)`` declares and returns the namespace of typed values (``self.values``);
    it may be called again later (the nodes declare their whole ``SCHEMA`` at once).
    ``listen(check, apply)`` adds a listener; every listener sees every update of these
    parameters:

    - ``check(trial, names)``: ``trial`` is a copy of the values with the staged ones; returns
      ``(reason, prepared)``: a reason string refuses the whole update; ``prepared`` is any
      object built from ``trial`` (a new model, a new controller) and handed to ``apply``;
    - ``apply(names, prepared)``: after rclpy has accepted the update (values already set).

    rclpy itself refuses first what the descriptors say: a read-only parameter, a scalar out
    of its range.
    """

    def __init__(self, node):
        self.node = node
        self.values = SimpleNamespace()
        self.specs = {}
        self._listeners = []
        self._pending = None
        self._declaring = False

    def declare(self, specs: List[Param]):
        """Declare ``specs``; ValueError naming the parameter for a bad value (overrides
        included)."""
        self._declaring = True      # our own callbacks ignore these declarations
        try:
            for s in specs:
                self._declare(s)
        finally:
            self._declaring = False
        return self.values

    def _declare(self, s: Param):
        # declared loose, typed and checked here, then given its descriptor: so the error
        # for a bad override is ours, and names the constraint it breaks
        default = (None if isinstance(s.default, (list, tuple)) and not s.default
                   else s.default)
        try:
            p = self.node.declare_parameter(s.name, default, ParameterDescriptor(
                description=s.description, dynamic_typing=True))
        except ParameterException as e:
            raise ValueError("parameter %s: %s" % (s.name, e)) from None
        value = typed_value(s, p.value)
        self.node.set_descriptor(s.name, descriptor(s))
        setattr(self.values, s.name, value)
        self.specs[s.name] = s

    def stage(self, params):
        """Typed validation of a set-parameters request: (trial namespace, names) or a
        ValueError naming the parameter."""
        staged = {p.name: typed_value(self.specs[p.name], p.value)
                  for p in params if p.name in self.specs}
        trial = SimpleNamespace(**vars(self.values))
        for name, v in staged.items():
            setattr(trial, name, v)
        return trial, set(staged)

    def listen(self, check: Optional[Callable] = None, apply: Optional[Callable] = None):
        if not self._listeners:
            self.node.add_on_set_parameters_callback(self._on_set)
            self.node.add_post_set_parameters_callback(self._post_set)
        self._listeners.append((check, apply))

    def _on_set(self, params):
        if self._declaring:
            return SetParametersResult(successful=True)
        try:
            trial, names = self.stage(params)
        except ValueError as e:
            return SetParametersResult(successful=False, reason=str(e))
        prepared = []
        for check, _ in self._listeners:
            reason, ready = (None, None) if not names or check is None else check(trial, names)
            if reason:
                return SetParametersResult(successful=False, reason=reason)
            prepared.append(ready)
        self._pending = (_key(params), trial, names, prepared)
        return SetParametersResult(successful=True)

    def _post_set(self, params):
        pending, self._pending = self._pending, None
        if self._declaring or pending is None or pending[0] != _key(params):
            return          # refused by another callback, or not ours
        _, trial, names, prepared = pending
        for name in names:
            setattr(self.values, name, getattr(trial, name))
        if names:
            for (_, apply), ready in zip(self._listeners, prepared):
                if apply is not None:
                    apply(sorted(names), ready)


def _key(params):
    return tuple((p.name, repr(p.value)) for p in params)
