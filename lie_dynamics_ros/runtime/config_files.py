"""Per-robot parameter files of the package (``config/<urdf stem><suffix>``) and the values a
node reads from a ros__parameters YAML file. ROS-free: the runtimes use them."""
import os
from typing import Optional

import yaml

from ..resources import share_dir


def robot_config_file(origin: Optional[str], suffix: str) -> str:
    """``config/<urdf stem><suffix>`` of the package for a model loaded from ``urdf_path``
    (origin "urdf_path <path>") when that file exists, else "" (models from
    robot_description have no file name). E.g. arm7.urdf -> config/arm7_initial_state.yaml."""
    if not origin or not origin.startswith("urdf_path "):
        return ""
    stem = os.path.splitext(os.path.basename(origin[len("urdf_path "):]))[0]
    try:
        path = os.path.join(share_dir(), "config", stem + suffix)
    except FileNotFoundError:
        return ""
    return path if os.path.isfile(path) else ""


def read_parameters(path: str, keys) -> dict:
    """``keys`` from a ros__parameters YAML file: those of the first node entry (``/**/node:``
    or ``/**:`` keys) that has any of them, as lists of floats (a scalar becomes one value).
    ValueError if none has them, or for malformed YAML or values that are not numbers;
    OSError if the file cannot be read."""
    try:
        with open(path) as f:
            doc = yaml.safe_load(f) or {}
    except yaml.YAMLError as e:
        raise ValueError("%s is not valid YAML: %s" % (path, e)) from None
    for entry in (doc.values() if isinstance(doc, dict) else []):
        params = (entry or {}).get("ros__parameters", {}) if isinstance(entry, dict) else {}
        found = {}
        for k in keys:
            if k in params:
                vals = params[k] if isinstance(params[k], list) else [params[k]]
                try:
                    found[k] = [float(x) for x in vals]
                except (TypeError, ValueError):
                    raise ValueError("%s: %s must be numbers, got %r" % (path, k, params[k])
                                     ) from None
        if found:
            return found
    raise ValueError("%s has no %s" % (path, " / ".join(keys)))
