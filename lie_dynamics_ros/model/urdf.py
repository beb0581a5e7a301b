"""URDF -> Model, read with ElementTree.

Only kinematics, inertia and joint ``<dynamics>`` (damping, friction) matter for dynamics:
visual, collision, material, transmission,
gazebo, ros2_control and unknown elements are never read, so a quirky material can never make
dynamics fail. Every value that is read is checked there: a number must be finite (and within
the bounds of ``bounds.py``), an element that may appear once appears at most once. Every error
is a URDFError naming the link or joint at fault; an element without a name is named by its
position (``<joint> #3``).
"""
import math
import os
import re
import xml.etree.ElementTree as ET

import numpy as np

from . import joint_types as JT
from .bounds import MAX_ANGLE
from .builder import ModelBuilder
from ..errors import InputError, URDFError
from ..lie.so3 import from_rpy
from ..resources import bundled_urdf

_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
_WITH_AXIS = ("revolute", "continuous", "prismatic", "planar")     # urdfdom reads no other axis
_XACRO_NS = "{http://www.ros.org/wiki/xacro}"
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)


def read_robot(source):
    """The checked ``<robot>`` element of a URDF file path, XML text (str or bytes) or bundled
    robot name; the file is read once."""
    return _parse(_read_text(source))


def tree_model(root, floating_base=False, inertia_check="error"):
    """The Model (an open tree) of a ``<robot>`` element from ``read_robot``.

    ``floating_base=True`` attaches the root link to the world with a free SE(3) joint named
    ``root_joint``; otherwise the root link is fixed to the world.

    ``inertia_check``: an inertia tensor with a negative principal moment is a URDFError by
    default; ``"warn"`` loads it with a warning (some published URDFs have such links).
    Principal moments that violate the triangle inequality always only warn.
    """
    if inertia_check not in ("error", "warn"):
        raise InputError("inertia_check must be 'error' or 'warn'")
    b = ModelBuilder(root.get("name") or "robot", strict_inertia=inertia_check == "error",
                     warn_stacklevel=4)
    for k, el in enumerate(root.findall("link"), start=1):
        _add_link(b, el, _name(el, "link", k))
    children = set()
    for k, el in enumerate(root.findall("joint"), start=1):
        children.add(_add_joint(b, el, _name(el, "joint", k)))
    if floating_base:
        roots = [ln for ln in b.links if ln not in children]
        if len(roots) == 1:
            b.add_joint("root_joint", JT.Free(), None, roots[0])
    return b.build()


def _read_text(source):
    if isinstance(source, bytes):
        try:
            return source.decode()
        except UnicodeDecodeError as e:
            raise URDFError(f"URDF bytes are not UTF-8: {e}") from None
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if not isinstance(source, str):
        raise URDFError(f"load_urdf expects a path or URDF XML text, got {type(source).__name__}")
    if source.lstrip().startswith("<"):
        return source
    if not os.path.isfile(source):
        source = _bundled(source)
    try:
        with open(source, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise URDFError(f"cannot read {source!r}: {e}") from None


def _bundled(name):
    """The path of a robot bundled with the package ("arm7", "double_pendulum.urdf", the
    mechanisms "loops/four_bar"...), the names the nodes accept, so examples run from any
    folder; else the URDFError for a missing file."""
    if name.strip() and not os.path.isabs(name) and ".." not in name.split("/"):
        try:
            return bundled_urdf(name)
        except FileNotFoundError:
            pass
    raise URDFError(f"{name!r} is neither URDF XML, an existing file nor a bundled robot "
                    "(arm7, double_pendulum, planar_2r, loops/four_bar, loops/five_bar, "
                    "loops/slider_crank, loops/parallelogram, loops/delta)")


def _parse(text):
    xacro = URDFError("this is a xacro file: run xacro first (`xacro robot.urdf.xacro > "
                      "robot.urdf`) and load its output")
    try:
        root = ET.fromstring(text)
    except (ET.ParseError, ValueError) as e:
        if "<xacro:" in text:          # a macro without its xmlns declaration
            raise xacro from None
        raise URDFError(f"not valid XML: {e}") from None
    if any(el.tag.startswith(_XACRO_NS) for el in root.iter()):   # unexpanded macros
        raise xacro
    if root.tag != "robot":
        raise URDFError(f"the root element is <{root.tag}>, not <robot>")
    return root


def _name(el, tag, k):
    name = el.get("name")
    if not name:
        raise URDFError(f"<{tag}> #{k} has no name", f"<{tag}> #{k}")
    return name


class _Where:
    """The element being read, for error messages: ``link 'base'``, ``joint 'elbow'``."""

    def __init__(self, tag, name):
        self.name, self.text = name, f"{tag} {name!r}"

    def error(self, msg):
        return URDFError(f"{self.text}: {msg}", self.name)

    def only(self, parent, tag):
        """The one <tag> child of ``parent``, or None; two of them are ambiguous."""
        found = parent.findall(tag)
        if len(found) > 1:
            raise self.error(f"{len(found)} <{tag}> elements where at most one is allowed")
        return found[0] if found else None

    def number(self, el, attr, default=None):
        raw = el.get(attr)
        if raw is None:
            if default is None:
                raise self.error(f"<{el.tag}> needs the attribute {attr}")
            return default
        s = raw.strip()
        x = float(s) if _NUMBER.fullmatch(s) else math.nan
        if not math.isfinite(x):
            raise self.error(f'<{el.tag} {attr}="{raw}">: not a finite number')
        return x

    def vector(self, el, attr, default):
        raw = el.get(attr)
        if raw is None:
            if default is None:
                raise self.error(f"<{el.tag}> needs the attribute {attr}")
            return default
        parts = raw.split()
        xs = [float(s) if _NUMBER.fullmatch(s) else math.nan for s in parts]
        if len(xs) != 3 or not all(map(math.isfinite, xs)):
            raise self.error(f'<{el.tag} {attr}="{raw}">: needs 3 finite numbers')
        return xs

    def pose(self, el):
        """4x4 pose of an <origin> element (identity when absent)."""
        T = np.eye(4)
        if el is None:
            return T
        xyz = self.vector(el, "xyz", (0.0, 0.0, 0.0))
        rpy = self.vector(el, "rpy", (0.0, 0.0, 0.0))
        if max(map(abs, rpy)) > MAX_ANGLE:
            raise self.error(f'<origin rpy="{el.get("rpy")}">: angles beyond the sane bound '
                             f"{MAX_ANGLE:g} rad")
        T[:3, :3], T[:3, 3] = from_rpy(rpy), xyz
        return T


def _add_link(b, el, name):
    w = _Where("link", name)
    ine = w.only(el, "inertial")
    if ine is None:
        b.add_link(name)
        return
    T = w.pose(w.only(ine, "origin"))
    mass_el, inertia_el = w.only(ine, "mass"), w.only(ine, "inertia")
    mass = 0.0 if mass_el is None else w.number(mass_el, "value")
    if inertia_el is None:
        Ic = np.zeros((3, 3))
    else:
        xx, xy, xz, yy, yz, zz = (w.number(inertia_el, a)
                                  for a in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
        Ic = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    b.add_link(name, mass, T[:3, 3], Ic, T[:3, :3])


def _add_joint(b, el, name):
    """Adds the joint; returns its child link."""
    w = _Where("joint", name)
    jtype = el.get("type")
    if jtype not in _JOINT_TYPES:
        raise w.error(f"unknown joint type {jtype!r} (URDF knows {', '.join(_JOINT_TYPES)})")
    parent, child = (_link_of(w, el, end) for end in ("parent", "child"))
    origin = w.pose(w.only(el, "origin"))
    axis = (1.0, 0.0, 0.0)
    if jtype in _WITH_AXIS:
        ax = w.only(el, "axis")
        if ax is not None:
            axis = tuple(w.vector(ax, "xyz", None))
    joint = {"revolute": lambda: JT.Revolute(axis), "continuous": lambda: JT.Revolute(axis),
             "prismatic": lambda: JT.Prismatic(axis), "fixed": JT.Fixed,
             "floating": JT.Free, "planar": lambda: JT.Planar(axis)}[jtype]()
    inf = math.inf
    lower, upper, effort, velocity = -inf, inf, inf, inf
    lim = w.only(el, "limit") if jtype != "fixed" else None
    if lim is not None:
        lower, upper = w.number(lim, "lower", -inf), w.number(lim, "upper", inf)
        effort, velocity = w.number(lim, "effort", inf), w.number(lim, "velocity", inf)
        for attr, x in (("effort", effort), ("velocity", velocity)):
            if x < 0:
                raise w.error(f'<limit {attr}="{lim.get(attr)}">: must be >= 0')
        effort, velocity = effort or inf, velocity or inf        # 0: URDF's "not given"
        if jtype == "continuous" or (lower == upper == 0.0 and jtype != "prismatic"):
            lower, upper = -inf, inf           # URDF's "no limits" placeholder on revolutes
    mimic = None
    mim = w.only(el, "mimic") if jtype != "fixed" else None     # a fixed joint mimics nothing
    if mim is not None:
        if not mim.get("joint"):
            raise w.error("<mimic> without a joint attribute")
        mimic = (mim.get("joint"), w.number(mim, "multiplier", 1.0), w.number(mim, "offset", 0.0))
    damping = friction = 0.0
    dyn = w.only(el, "dynamics") if jtype != "fixed" else None
    if dyn is not None:
        damping, friction = w.number(dyn, "damping", 0.0), w.number(dyn, "friction", 0.0)
        for attr, x in (("damping", damping), ("friction", friction)):
            if x < 0:
                raise w.error(f'<dynamics {attr}="{dyn.get(attr)}">: must be >= 0')
    b.add_joint(name, joint, parent, child, origin, mimic, lower, upper, effort, velocity,
                damping, friction)
    return child


def _link_of(w, el, end):
    e = w.only(el, end)
    if e is None or not e.get("link"):
        raise w.error(f'needs <{end} link="..."/>')
    return e.get("link")
