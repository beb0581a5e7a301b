"""URDF -> Model, through urdf_parser_py.

Only kinematics and inertia matter for dynamics, so visual, collision, material, transmission,
gazebo and ros2_control elements are stripped before parsing: a quirky material can never make
dynamics fail. Every error becomes a URDFError naming the link or joint at fault.
"""
import math
import os
import xml.etree.ElementTree as ET

import numpy as np

from . import joint_types as JT
from .builder import ModelBuilder
from ..errors import URDFError

_KEEP_IN_ROBOT = {"link", "joint"}
_KEEP_IN_LINK = {"inertial"}
_KEEP_IN_JOINT = {"origin", "parent", "child", "axis", "limit", "mimic", "dynamics"}


def rpy_to_matrix(rpy):
    """URDF rpy (fixed axes X, then Y, then Z): R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _pose(origin, what):
    T = np.eye(4)
    if origin is None:
        return T
    xyz = np.zeros(3) if origin.xyz is None else np.asarray(origin.xyz, dtype=float)
    rpy = np.zeros(3) if origin.rpy is None else np.asarray(origin.rpy, dtype=float)
    if xyz.shape != (3,) or rpy.shape != (3,) or not (np.all(np.isfinite(xyz)) and np.all(np.isfinite(rpy))):
        raise URDFError(f"{what}: origin must hold 3 finite xyz and 3 finite rpy values", what)
    T[:3, :3], T[:3, 3] = rpy_to_matrix(rpy), xyz
    return T


def _read_text(source):
    if isinstance(source, bytes):
        return source.decode()
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if not isinstance(source, str):
        raise URDFError(f"load_urdf expects a path or URDF XML text, got {type(source).__name__}")
    if source.lstrip().startswith("<"):
        return source
    if not os.path.isfile(source):
        raise URDFError(f"{source!r} is neither URDF XML nor an existing file")
    with open(source, encoding="utf-8") as f:
        return f.read()


def _sanitize(text):
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise URDFError(f"not valid XML: {e}") from None
    if root.tag != "robot":
        raise URDFError(f"the root element is <{root.tag}>, not <robot>")
    if root.get("name") is None:          # urdf_parser_py requires it, urdfdom does not
        root.set("name", "robot")
    for child in list(root):
        if child.tag not in _KEEP_IN_ROBOT:
            root.remove(child)
            continue
        keep = _KEEP_IN_LINK if child.tag == "link" else _KEEP_IN_JOINT
        for sub in list(child):
            if sub.tag not in keep:
                child.remove(sub)
    return root, ET.tostring(root, encoding="unicode")


def load_urdf(source, floating_base=False, inertia_check="error"):
    """Build a Model from a URDF file path or XML string.

    ``floating_base=True`` attaches the root link to the world with a free SE(3) joint named
    ``root_joint``; otherwise the root link is fixed to the world.

    ``inertia_check``: an inertia tensor with a negative principal moment is a URDFError by
    default; ``"warn"`` loads it with a warning (some published URDFs have such links).
    Principal moments that violate the triangle inequality always only warn.
    """
    if inertia_check not in ("error", "warn"):
        raise ValueError("inertia_check must be 'error' or 'warn'")
    from urdf_parser_py import urdf as U
    from urdf_parser_py.xml_reflection import core

    root, text = _sanitize(_read_text(source))
    for j in root.findall("joint"):      # checked here: urdf_parser_py reads a bad type as None
        jt = j.get("type")
        if jt not in ("revolute", "continuous", "prismatic", "fixed", "floating", "planar"):
            raise URDFError(f"joint {j.get('name')!r}: unknown joint type {jt!r}", j.get("name"))
    warnings_seen = []
    old = core.on_error
    core.on_error = warnings_seen.append          # urdf_parser_py prints warnings otherwise
    try:
        robot = U.URDF.from_xml_string(text)
    except core.ParseError as e:
        raise URDFError(f"malformed URDF: {e}", _element_in(str(e))) from None
    except (AssertionError, ValueError, TypeError, KeyError, AttributeError, IndexError) as e:
        raise URDFError(f"malformed URDF: {type(e).__name__}: {e}") from None
    finally:
        core.on_error = old
    return _build(robot, floating_base, inertia_check == "error")


def _element_in(msg):
    import re
    m = re.search(r"(?:joint|link)\[@name='([^']*)'\]", msg)
    return m.group(1) if m else None


def _build(robot, floating_base, strict):
    b = ModelBuilder(robot.name or "robot", strict_inertia=strict, warn_stacklevel=5)
    for link in robot.links:
        name = link.name
        if name is None:
            raise URDFError("a <link> has no name")
        ine = link.inertial
        if ine is None:
            b.add_link(name)
            continue
        T = _pose(ine.origin, f"link {name!r}")
        i = ine.inertia
        if i is None:
            Ic = np.zeros((3, 3))
        else:
            vals = [i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz]
            if any(x is None for x in vals):
                raise URDFError(f"link {name!r}: <inertia> needs ixx ixy ixz iyy iyz izz", name)
            Ic = np.array([[i.ixx, i.ixy, i.ixz], [i.ixy, i.iyy, i.iyz], [i.ixz, i.iyz, i.izz]],
                          dtype=float)
        mass = 0.0 if ine.mass is None else float(ine.mass)
        b.add_link(name, mass, T[:3, 3], Ic, T[:3, :3])
    for j in robot.joints:
        name = j.name
        if j.parent is None or j.child is None:
            raise URDFError(f"joint {name!r}: needs <parent link> and <child link>", name)
        axis = (1.0, 0.0, 0.0) if j.axis is None else tuple(j.axis)
        joint = {"revolute": lambda: JT.Revolute(axis), "continuous": lambda: JT.Revolute(axis),
                 "prismatic": lambda: JT.Prismatic(axis), "fixed": JT.Fixed,
                 "floating": JT.Free, "planar": lambda: JT.Planar(axis)}[j.type]()
        lim = j.limit
        lower = upper = effort = velocity = None
        if lim is not None and j.type != "fixed":
            lower, upper, effort, velocity = lim.lower, lim.upper, lim.effort, lim.velocity
            for nm, val in (("lower", lower), ("upper", upper), ("effort", effort),
                            ("velocity", velocity)):
                if val is not None and (math.isnan(val) or (nm in ("effort", "velocity") and val < 0)):
                    raise URDFError(f"joint {name!r}: invalid limit {nm}={val}", name)
            if j.type == "continuous":
                lower = upper = None
            elif lower is not None and upper is not None and lower == upper == 0.0 and j.type != "prismatic":
                lower = upper = None               # URDF's "no limits" placeholder on revolutes
        mimic = None
        if j.mimic is not None and j.type != "fixed":     # a fixed joint has nothing to mimic
            if j.mimic.joint is None:
                raise URDFError(f"joint {name!r}: <mimic> without a joint attribute", name)
            mimic = (j.mimic.joint, 1.0 if j.mimic.multiplier is None else float(j.mimic.multiplier),
                     0.0 if j.mimic.offset is None else float(j.mimic.offset))
        inf = float("inf")
        b.add_joint(name, joint, j.parent, j.child, _pose(j.origin, f"joint {name!r}"), mimic,
                    -inf if lower is None else lower, inf if upper is None else upper,
                    inf if not effort else effort, inf if not velocity else velocity)
    if floating_base:
        children = {j.child for j in robot.joints}
        roots = [ln.name for ln in robot.links if ln.name not in children]
        if len(roots) == 1:
            b.add_joint("root_joint", JT.Free(), None, roots[0])
    return b.build()
