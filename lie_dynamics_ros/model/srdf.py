"""Reference configurations from an SRDF's ``<group_state>`` elements (MoveIt's semantic robot
description; Pinocchio's ``loadReferenceConfigurations``), as q of a model.

A state starts from the neutral configuration and sets the joints it lists by name. Values
are in the model's q convention (docs/conventions.md): one angle for a revolute or continuous
joint, (x, y, z, qx, qy, qz, qw) for a free joint, (qx, qy, qz, qw) for a ball, (x, y, theta)
for a planar one. A mimic joint's value is its master's business and is not read.
"""
import os
import xml.etree.ElementTree as ET

import numpy as np

from ..algorithms.configuration import neutral_configuration
from ..errors import InputError

_QUAT_ROUNDING = 1e-3   # a quaternion typed with 4 digits is normalized; further off is refused


def _root(srdf):
    if isinstance(srdf, bytes):
        srdf = srdf.decode()
    if not isinstance(srdf, (str, os.PathLike)):
        raise InputError(f"srdf must be a path or XML text, got {type(srdf).__name__}")
    text = str(srdf)
    try:
        if text.lstrip().startswith("<"):
            root = ET.fromstring(text)
        else:
            if not os.path.isfile(text):
                raise InputError(f"SRDF file {text!r} not found")
            root = ET.parse(text).getroot()
    except ET.ParseError as e:
        raise InputError(f"the SRDF is not XML: {e}") from None
    if root.tag != "robot":
        raise InputError(f"the SRDF's root element is <{root.tag}>, not <robot>")
    return root


def _numbers(text, where):
    try:
        x = np.array([float(s) for s in (text or "").split()])
    except ValueError:
        raise InputError(f"{where}: value {text!r} is not a list of numbers") from None
    if not np.isfinite(x).all():
        raise InputError(f"{where}: value {text!r} is not finite")
    return x


def _state(model, el, extra):
    name = el.get("name")
    q = neutral_configuration(model)
    index = {n: k for k, n in enumerate(model.joint_names)}
    for k, js in enumerate(el.findall("joint"), start=1):
        jn = js.get("name")
        where = f"group_state {name!r}, " + (f"joint {jn!r}" if jn else f"<joint> #{k}")
        if jn in model.mimic_joints:
            continue
        if jn not in index:
            if extra == "ignore":
                continue
            raise InputError(f"{where}: no such joint in model {model.name!r} (a fixed joint, or "
                             "another robot's); extra='ignore' skips it. Joints: "
                             f"{model.joint_names}")
        i = index[jn]
        qi, nq, kind = model.joint_q_index[i], model.joint_nq[i], model.joint_kinds[i]
        x = _numbers(js.get("value"), where)
        if x.size != nq:
            raise InputError(f"{where}: {x.size} values for a {kind} joint with nq = {nq} "
                             "(docs/conventions.md gives its q)")
        if nq in (4, 7):                          # ball or free: the quaternion (x, y, z, w)
            n = np.linalg.norm(x[-4:])
            if not abs(n - 1.0) <= _QUAT_ROUNDING:
                raise InputError(f"{where}: the quaternion {x[-4:].tolist()} has norm {n:.6g}, "
                                 "not 1")
            x[-4:] /= n
        q[qi:qi + nq] = x
    return name, q


def reference_configurations(model, srdf, extra="error"):
    """{state name: q} of every ``<group_state>`` in ``srdf`` (a path or XML text).

    ``extra="error"``: a listed joint the model lacks is an InputError naming it and the state;
    ``"ignore"`` skips it (an SRDF written for a larger model, as talos.srdf for talos_reduced).
    Two states of one name (e.g. for two groups) are an InputError."""
    if extra not in ("error", "ignore"):
        raise InputError(f"extra must be 'error' or 'ignore', got {extra!r}")
    out = {}
    for k, el in enumerate(_root(srdf).iter("group_state"), start=1):
        if not el.get("name"):
            raise InputError(f"<group_state> #{k} has no name")
        name, q = _state(model, el, extra)
        if name in out:
            raise InputError(f"group_state {name!r} appears twice (groups "
                             f"{el.get('group')!r} and another); rename one")
        out[name] = q
    return out


def reference_configuration(model, srdf, state, extra="error"):
    """q of the ``<group_state name=state>`` of ``srdf``; InputError listing the states for an
    unknown one."""
    states = reference_configurations(model, srdf, extra)
    if state not in states:
        raise InputError(f"no group_state {state!r} in the SRDF; it has {sorted(states)}")
    return states[state]
