"""Loop closures: the joints that a spanning tree leaves out (Kim 2012, section 3).

A closure joins a frame F_a, fixed on ``link_a``, and a frame F_b, fixed on ``link_b``:

* ``weld``       6 constraints, F_a and F_b coincide;
* ``revolute``   5, same origin, and ``axis`` (given in F_a) equals the same axis in F_b;
* ``spherical``  3, same origin;
* ``prismatic``  5, same orientation, F_b's origin on the line through F_a's origin along ``axis``.

Three ways to give them (docs/loops.md): Python objects, a YAML file (``load_loops_yaml``), and
the ``<loop_joint>`` extension element of a URDF (``parse_urdf_loops``). A model gets its closures
in its constructor (``Model(..., loops=...)``, ``model.with_loops``), which computes their tables
here (``loop_tables_for``).
"""
import math
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np
import yaml

from ..conventions import matrix_to_internal, to_internal
from ..errors import InputError, URDFError
from ..lie import se3
from ..lie.so3 import from_rpy

#: kind -> number of constraint rows
KIND_ROWS = {"weld": 6, "revolute": 5, "spherical": 3, "prismatic": 5}
#: accepted spellings (URDF/SDF joint types, urdfdom #264 names)
KIND_ALIASES = {"fixed": "weld", "continuous": "revolute", "ball": "spherical",
                "spherical": "spherical", "weld": "weld", "revolute": "revolute",
                "prismatic": "prismatic"}


def _three(x, what, name):
    try:
        a = np.array(x, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f"loop closure {name!r}: {what} must be 3 numbers, got {x!r}") from None
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise InputError(f"loop closure {name!r}: {what} must be 3 finite numbers, got {x!r}")
    return a


@dataclass(frozen=True, init=False)
class LoopClosure:
    """A closure between F_a on ``link_a`` and F_b on ``link_b`` (poses as URDF origins)."""
    name: str
    kind: str
    link_a: str
    link_b: str
    xyz_a: tuple
    rpy_a: tuple
    xyz_b: tuple
    rpy_b: tuple
    axis: tuple

    def __init__(self, name, kind, link_a, link_b, xyz_a=(0, 0, 0), rpy_a=(0, 0, 0),
                 xyz_b=(0, 0, 0), rpy_b=(0, 0, 0), axis=(0, 0, 1)):
        if not isinstance(name, str) or not name:
            raise InputError(f"a loop closure needs a non-empty name, got {name!r}")
        k = KIND_ALIASES.get(str(kind).lower()) if isinstance(kind, str) else None
        if k is None:
            raise InputError(f"loop closure {name!r}: unknown kind {kind!r}; use one of "
                             f"{sorted(KIND_ROWS)}")
        for what, ln in (("link_a", link_a), ("link_b", link_b)):
            if not isinstance(ln, str) or not ln:
                raise InputError(f"loop closure {name!r}: {what} must be a link name, got {ln!r}")
        if link_a == link_b:
            raise InputError(f"loop closure {name!r}: link_a and link_b are both {link_a!r}")
        ax = _three(axis, "axis", name)
        n = np.linalg.norm(ax)
        if n < 1e-9:
            raise InputError(f"loop closure {name!r}: axis must be non-zero")
        set_ = object.__setattr__
        set_(self, "name", name)
        set_(self, "kind", k)
        set_(self, "link_a", link_a)
        set_(self, "link_b", link_b)
        for f, x in (("xyz_a", xyz_a), ("rpy_a", rpy_a), ("xyz_b", xyz_b), ("rpy_b", rpy_b)):
            set_(self, f, tuple(float(c) for c in _three(x, f, name)))
        set_(self, "axis", tuple(float(c) for c in ax / n))

    @property
    def nc(self):
        """Number of constraint rows."""
        return KIND_ROWS[self.kind]

    @property
    def T_a(self):
        """4x4 pose of F_a in link_a's frame."""
        return _pose(self.xyz_a, self.rpy_a)

    @property
    def T_b(self):
        """4x4 pose of F_b in link_b's frame."""
        return _pose(self.xyz_b, self.rpy_b)

    def as_dict(self):
        return {"name": self.name, "kind": self.kind, "link_a": self.link_a,
                "link_b": self.link_b, "xyz_a": list(self.xyz_a), "rpy_a": list(self.rpy_a),
                "xyz_b": list(self.xyz_b), "rpy_b": list(self.rpy_b), "axis": list(self.axis)}


def _pose(xyz, rpy):
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = from_rpy(rpy), xyz
    return T


def perpendicular_pair(axis):
    """(n1, n2) with (n1, n2, axis) a right-handed orthonormal frame."""
    a = np.asarray(axis, dtype=float)
    t = np.array([1.0, 0.0, 0.0]) if abs(a[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    n1 = np.cross(a, t)
    n1 /= np.linalg.norm(n1)
    return n1, np.cross(a, n1)


def selection(loop):
    """(nc, 6) rows picking the constrained components of the relative twist (linear, angular)."""
    k = loop.kind
    if k == "weld":
        return np.eye(6)
    if k == "spherical":
        return np.eye(6)[:3]
    n1, n2 = perpendicular_pair(loop.axis)
    P = np.zeros((5, 6))
    if k == "revolute":
        P[:3, :3] = np.eye(3)
        P[3, 3:], P[4, 3:] = n1, n2
    else:                                  # prismatic
        P[0, :3], P[1, :3] = n1, n2
        P[2:, 3:] = np.eye(3)
    return P


# -- YAML --------------------------------------------------------------------------------
_FIELDS = ("name", "kind", "link_a", "link_b", "xyz_a", "rpy_a", "xyz_b", "rpy_b", "axis")


def loops_from_data(data, source="loops"):
    """LoopClosures from parsed YAML/JSON data: ``{"closures": [ {...}, ... ]}`` or a list."""
    if isinstance(data, dict):
        if set(data) - {"closures", "actuated"}:
            raise InputError(f"{source}: unknown top-level keys "
                             f"{sorted(set(data) - {'closures', 'actuated'})}; expected 'closures'")
        data = data.get("closures") or []
    if not isinstance(data, (list, tuple)):
        raise InputError(f"{source}: expected a list of closures")
    out = []
    for i, item in enumerate(data):
        if isinstance(item, LoopClosure):
            out.append(item)
            continue
        if not isinstance(item, dict):
            raise InputError(f"{source}: closure #{i} is not a mapping")
        unknown = set(item) - set(_FIELDS)
        name = item.get("name", f"#{i}")
        if unknown:
            raise InputError(f"{source}: closure {name!r} has unknown fields {sorted(unknown)}; "
                             f"allowed: {list(_FIELDS)}")
        missing = [f for f in ("name", "kind", "link_a", "link_b") if f not in item]
        if missing:
            raise InputError(f"{source}: closure {name!r} misses {missing}")
        out.append(LoopClosure(**item))
    return out


def load_loops_yaml(source):
    """LoopClosures from a YAML file path or YAML text (format: docs/loops.md)."""
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if not isinstance(source, str):
        raise InputError(f"loops must be a list of LoopClosure or a YAML path, got "
                         f"{type(source).__name__}")
    text, where = source, "loops YAML"
    if "\n" not in source and (source.endswith((".yaml", ".yml")) or os.path.isfile(source)):
        if not os.path.isfile(source):
            raise InputError(f"loops file {source!r} does not exist")
        with open(source, encoding="utf-8") as f:
            text, where = f.read(), source
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise InputError(f"{where}: not valid YAML: {e}") from None
    return loops_from_data(data, where)


# -- the URDF extension element -------------------------------------------------------------
_URDF_TAGS = ("loop_joint", "constraint")


def _xyz_rpy(el, loop_name):
    if el is None:
        return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)

    def parse(attr):
        txt = el.get(attr)
        if txt is None:
            return (0.0, 0.0, 0.0)
        try:
            vals = tuple(float(x) for x in txt.split())
        except ValueError:
            vals = ()
        if len(vals) != 3 or not all(math.isfinite(x) for x in vals):
            raise URDFError(f"loop_joint {loop_name!r}: <{el.tag} {attr}> must be 3 finite "
                            f"numbers, got {txt!r}", loop_name)
        return vals
    return parse("xyz"), parse("rpy")


def parse_urdf_loops(root):
    """LoopClosures from the ``<loop_joint>`` (alias ``<constraint>``) children of ``<robot>``.

    ``root`` is an ElementTree element or URDF XML text. Element (docs/loops.md)::

        <loop_joint name="crank_rocker" type="revolute">   <!-- weld|fixed, revolute|continuous,
                                                                spherical|ball, prismatic -->
          <parent link="coupler"/>  <parent_origin xyz="0.4 0 0" rpy="0 0 0"/>
          <child link="rocker"/>    <child_origin xyz="0 0 0.3" rpy="0 0 0"/>
          <axis xyz="0 0 1"/>       <!-- in the parent frame F_a; alias <parent_axis> -->
        </loop_joint>
    """
    if isinstance(root, (str, bytes)):
        try:
            root = ET.fromstring(root)
        except ET.ParseError as e:
            raise URDFError(f"not valid XML: {e}") from None
    out = []
    for el in root:
        if el.tag not in _URDF_TAGS:
            continue
        name = el.get("name")
        if not name:
            raise URDFError(f"a <{el.tag}> has no name")
        kind = el.get("type")
        if kind is None or kind.lower() not in KIND_ALIASES:
            raise URDFError(f"{el.tag} {name!r}: unknown type {kind!r}; use one of "
                            f"{sorted(KIND_ALIASES)}", name)
        known = {"parent", "child", "parent_origin", "child_origin", "axis", "parent_axis",
                 "child_axis"}
        for sub in el:
            if sub.tag not in known:
                raise URDFError(f"{el.tag} {name!r}: unknown element <{sub.tag}>", name)
        links = {}
        for side in ("parent", "child"):
            s = el.find(side)
            if s is None or not s.get("link"):
                raise URDFError(f"{el.tag} {name!r}: needs <{side} link=\"...\"/>", name)
            links[side] = s.get("link")
        xyz_a, rpy_a = _xyz_rpy(el.find("parent_origin"), name)
        xyz_b, rpy_b = _xyz_rpy(el.find("child_origin"), name)
        ax_el = el.find("axis") if el.find("axis") is not None else el.find("parent_axis")
        axis = (0.0, 0.0, 1.0)
        if ax_el is not None:
            axis = _xyz_rpy(ax_el, name)[0] if ax_el.get("xyz") is not None else axis
        try:
            out.append(LoopClosure(name, kind, links["parent"], links["child"], xyz_a, rpy_a,
                                   xyz_b, rpy_b, axis))
        except InputError as e:
            raise URDFError(str(e), name) from None
    return out


# -- the tables of a model's closures ------------------------------------------------------
@dataclass(frozen=True)
class LoopSide:
    """One end of a closure: its frame on a body."""
    frame: str            # link name
    row: int              # body row of that link
    T: np.ndarray         # F in the body frame (the link's pose in its body, then F in the link)


@dataclass(frozen=True)
class LoopTables:
    """What the algorithms read, computed once per model: per closure the two frames and the
    selection rows, and the row offsets of each closure in the stacked constraint vector."""
    loops: tuple
    sides: tuple          # ((LoopSide a, LoopSide b), ...)
    P: tuple              # (nc_i, 6) selections of public (linear, angular) rows
    offsets: tuple        # start row of each closure
    nc: int
    # the same for the kernels (kernels/constraints.closure_terms), Kim's order
    rows: np.ndarray      # (nl, 2) int64 body rows of F_a, F_b
    Toff: np.ndarray      # (nl, 2, 4, 4) F_a, F_b in their body frames
    Xoff: np.ndarray      # (nl, 2, 6, 6) Ad_{Toff^-1}
    P_seeds: tuple        # (nc_i, 6) selections acting on (angular, linear) vectors
    point: np.ndarray     # (nl,) int64: 1 = the bias is the classical acceleration of F_b's
    #                       origin (a point contact on the world anchor, model/contacts.py)


def _read_only(a):
    a.flags.writeable = False
    return a


def loop_tables_for(model, loops):
    """The LoopTables of ``loops`` (LoopClosure objects) on the tree of ``model``; InputError
    naming the closure when one does not fit the tree. Called by the Model constructor, which
    has set the tree's names and frames by then; the open tree is unchanged."""
    loops = tuple(loops or ())
    for lp in loops:
        if not isinstance(lp, LoopClosure):
            raise InputError(f"loops must be LoopClosure objects, got {type(lp).__name__}")
    names = [lp.name for lp in loops]
    for lp in loops:
        if names.count(lp.name) > 1:
            raise InputError(f"duplicate loop closure name {lp.name!r}")
        if lp.name in model.joint_names:
            raise InputError(f"loop closure {lp.name!r} has the name of a tree joint")
        for ln in (lp.link_a, lp.link_b):
            if ln not in model.frame_names:
                raise InputError(f"loop closure {lp.name!r}: unknown link {ln!r}; known: "
                                 f"{model.frame_names}")
    if loops and model.has_mimic:
        # forward dynamics of mimic models goes through M, not the articulated inertias
        raise InputError("loop closures on a model with mimic joints are not supported")

    sides = tuple((loop_side(model, lp.link_a, lp.T_a), loop_side(model, lp.link_b, lp.T_b))
                  for lp in loops)
    for lp, (a, b) in zip(loops, sides):
        if a.row == b.row:
            raise InputError(f"loop closure {lp.name!r}: {lp.link_a!r} and {lp.link_b!r} are "
                             "rigidly attached to each other (fixed joints), nothing can move "
                             "between them")
    return tables_from_sides(loops, sides, np.zeros(len(loops), dtype=np.int64))


def loop_side(model, link, T):
    """The LoopSide of frame ``T`` (4x4, in the frame of ``link``) on ``model``."""
    row, T_link = model.frame(link)
    return LoopSide(link, int(row), _read_only(T_link @ T))


def tables_from_sides(loops, sides, point):
    """LoopTables of closures whose sides are resolved (a side on body row 0 is anchored in the
    world at its T); ``point`` as LoopTables.point."""
    P = tuple(_read_only(selection(lp)) for lp in loops)
    offsets, n = [], 0
    for lp in loops:
        offsets.append(n)
        n += lp.nc
    nl = len(loops)
    rows = np.array([[a.row, b.row] for a, b in sides], dtype=np.int64).reshape(nl, 2)
    Toff = np.array([[a.T, b.T] for a, b in sides], dtype=float).reshape(nl, 2, 4, 4)
    Xoff = matrix_to_internal(np.array([[se3.Ad_inv(a.T), se3.Ad_inv(b.T)] for a, b in sides],
                                       dtype=float).reshape(nl, 2, 6, 6))
    P_seeds = tuple(_read_only(np.ascontiguousarray(to_internal(Pi))) for Pi in P)
    return LoopTables(loops, sides, P, tuple(offsets), n, _read_only(rows), _read_only(Toff),
                      _read_only(np.ascontiguousarray(Xoff)), P_seeds,
                      _read_only(np.ascontiguousarray(point, dtype=np.int64)))


def loop_tables(model):
    """The LoopTables of ``model``; InputError when it has no closures."""
    t = model.loop_tables
    if t is None or t.nc == 0:
        raise InputError(f"model {model.name!r} has no loop closures; load it with "
                         "ldr.load_urdf(..., loops=...) or ldr.load_sdf, or use "
                         "model.with_loops(...)")
    return t
