"""SDFormat -> Model with loop closures (``ldr.load_sdf``).

SDFormat lets a joint close a cycle, so a mechanism file may hold loops. The links and joints
are split into a spanning tree, grown from the root link along parent -> child joints (ball
joints last, so that they become the closures when there is a choice), and the remaining joints
become LoopClosures of the matching kind (fixed -> weld, revolute/continuous -> revolute,
ball -> spherical, prismatic -> prismatic) between the joint frame seen from the parent link
(F_a) and from the child link (F_b).

Covered: one ``<model>`` (``<sdf><model>`` or ``<sdf><world><model>``), ``<link>`` with
``<pose>`` and ``<inertial>`` (``<pose>``, ``<mass>``, ``<inertia>``), ``<joint>`` of type
revolute, continuous, prismatic, ball, fixed with ``<parent>``, ``<child>``, ``<pose>``,
``<axis><xyz expressed_in=...>`` and ``<axis><limit>``; poses with ``relative_to`` naming a
link, joint, ``<frame>`` or nested model; ``<frame>`` elements (``attached_to`` ignored for
poses); nested ``<model>`` elements given inline (names scoped as ``outer::inner``); ``world``
as a joint parent. A model whose root link is not joined to the world is welded to it (like
``load_urdf``) unless ``floating_base=True``.

Not covered (an SDFError naming the element): ``<include>``, ``<static>`` true, joint types
universal, revolute2, screw, gearbox; ``<axis2>``; ``//pose/@degrees`` and the quaternion form of
``<pose>``; a tree that needs a joint run from child to parent. Visuals, collisions, sensors,
plugins are ignored; ``<axis><dynamics>`` gives the joint's damping and friction
(``spring_*`` are ignored).
"""
import math
import os
import xml.etree.ElementTree as ET

import numpy as np

from . import joint_types as JT
from .builder import ModelBuilder
from .loops import LoopClosure
from ..errors import SDFError, URDFError
from ..lie import se3
from ..lie.so3 import from_rpy, to_rpy


_JOINTS = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic",
           "ball": "spherical", "fixed": "weld"}


def _floats(text, n, what, el_name):
    try:
        vals = [float(x) for x in (text or "").split()]
    except ValueError:
        vals = []
    if len(vals) != n or not all(math.isfinite(x) for x in vals):
        raise SDFError(f"{what}: expected {n} finite numbers, got {text!r}", el_name)
    return vals


class _Scope:
    """Poses of the named frames of one model (links, joints, frames, nested models)."""

    def __init__(self, model_pose=None):
        self.model_pose = np.eye(4) if model_pose is None else model_pose
        self.raw = {}        # name -> (pose element or None, default relative_to, kind)
        self.world = {}      # name -> 4x4 pose in the top model frame
        self.busy = set()

    def add(self, name, el, default, kind):
        if name in self.raw:
            raise SDFError(f"duplicate name {name!r} in the model", name)
        self.raw[name] = (el, default, kind)

    def pose(self, name, who):
        if name in ("__model__", ""):
            return self.model_pose
        if name == "world":
            return np.eye(4)
        if name in self.world:
            return self.world[name]
        if name not in self.raw:
            raise SDFError(f"{who}: relative_to/attached frame {name!r} does not exist", who)
        if name in self.busy:
            raise SDFError(f"{who}: the poses form a cycle through {name!r}", name)
        self.busy.add(name)
        el, default, _ = self.raw[name]
        rel, X = default, np.eye(4)
        if el is not None:
            if el.get("degrees") not in (None, "false", "0"):
                raise SDFError(f"{name}: <pose degrees=...> is not covered", name)
            if el.get("rotation_format") not in (None, "euler_rpy"):
                raise SDFError(f"{name}: <pose rotation_format=...> is not covered", name)
            rel = el.get("relative_to") or default
            vals = _floats(el.text, 6, f"<pose> of {name!r}", name)
            X[:3, :3], X[:3, 3] = from_rpy(vals[3:]), vals[:3]
        T = self.pose(rel, name) @ X
        self.busy.discard(name)
        self.world[name] = T
        return T


def _read(source):
    if isinstance(source, bytes):
        source = source.decode()
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if not isinstance(source, str):
        raise SDFError(f"load_sdf expects a path or SDF XML text, got {type(source).__name__}")
    if not source.lstrip().startswith("<"):
        if not os.path.isfile(source):
            raise SDFError(f"{source!r} is neither SDF XML nor an existing file")
        with open(source, encoding="utf-8") as f:
            source = f.read()
    try:
        return ET.fromstring(source)
    except ET.ParseError as e:
        raise SDFError(f"not valid XML: {e}") from None


def _collect(model_el, prefix, scope, links, joints):
    """Register the frames of ``model_el`` (names scoped by ``prefix``)."""
    name = model_el.get("name")
    for tag in ("include",):
        if model_el.find(tag) is not None:
            raise SDFError(f"model {name!r}: <{tag}> is not covered; inline the model", name)
    st = model_el.find("static")
    if st is not None and (st.text or "").strip() in ("true", "1"):
        raise SDFError(f"model {name!r}: a static model has no dynamics", name)

    model_frame = prefix[:-2] if prefix else "__model__"

    def scoped(n):
        return n if n == "world" else model_frame if n == "__model__" else prefix + n
    for el in model_el:
        n = el.get("name")
        if el.tag in ("link", "joint", "frame", "model") and not n:
            raise SDFError(f"a <{el.tag}> in model {name!r} has no name", name)
        if el.tag == "link":
            scope.add(prefix + n, el.find("pose"), model_frame, "link")
            links.append((prefix + n, el))
        elif el.tag == "frame":
            scope.add(prefix + n, el.find("pose"), scoped(el.get("attached_to") or "__model__"),
                      "frame")
        elif el.tag == "model":
            pe = el.find("pose")
            scope.add(prefix + n, pe, model_frame, "model")
            if pe is not None and pe.get("relative_to"):
                pe.set("relative_to", scoped(pe.get("relative_to")))
            _collect(el, prefix + n + "::", scope, links, joints)
        elif el.tag == "joint":
            joints.append((prefix + n, el, prefix))
    # relative_to names are scoped to the model that holds them
    for el in model_el:
        if el.tag in ("link", "frame", "joint"):
            pe = el.find("pose")
            if pe is not None and pe.get("relative_to"):
                pe.set("relative_to", scoped(pe.get("relative_to")))


def load_sdf(source, floating_base=False, model=None):
    """Build a Model (with ``model.loops`` and ``model.nc``) from an SDFormat file or text.

    ``model``: the name of the ``<model>`` to load when the file holds several (default: the
    first). Raises SDFError (a URDFError, so a ValueError) naming the element at fault.
    """
    root = _read(source)
    if root.tag != "sdf":
        raise SDFError(f"the root element is <{root.tag}>, not <sdf>")
    models = root.findall("model") + root.findall("world/model")
    if model is not None:
        models = [m for m in models if m.get("name") == model]
    if not models:
        raise SDFError("no <model> found" + (f" named {model!r}" if model else ""), model)
    top = models[0]
    name = top.get("name") or "model"
    mp = np.eye(4)
    pe = top.find("pose")
    if pe is not None:                     # the top model's pose in the world (gravity's frame)
        if pe.get("relative_to") not in (None, "", "world"):
            raise SDFError(f"model {name!r}: <pose relative_to> must be the world", name)
        v = _floats(pe.text, 6, f"<pose> of model {name!r}", name)
        mp[:3, :3], mp[:3, 3] = from_rpy(v[3:]), v[:3]
    scope, links, joints = _Scope(mp), [], []
    _collect(top, "", scope, links, joints)
    if not links:
        raise SDFError(f"model {name!r} has no links", name)
    link_names = {ln for ln, _ in links}

    # joints: kind, endpoints, frame (default relative_to: the child link)
    parsed, prefixes = [], {}
    for jn, el, prefix in joints:
        jt = el.get("type")
        if jt not in _JOINTS:
            raise SDFError(f"joint {jn!r}: type {jt!r} is not covered (revolute, continuous, "
                           "prismatic, ball, fixed)", jn)
        if el.find("axis2") is not None:
            raise SDFError(f"joint {jn!r}: <axis2> is not covered", jn)
        ends = []
        for side in ("parent", "child"):
            s = el.find(side)
            if s is None or not (s.text or "").strip():
                raise SDFError(f"joint {jn!r}: needs <{side}>", jn)
            t = s.text.strip()
            t = t if t == "world" else prefix + t
            if t not in link_names and t != "world":
                raise SDFError(f"joint {jn!r}: {side} link {t!r} does not exist", jn)
            ends.append(t)
        if ends[1] == "world":
            raise SDFError(f"joint {jn!r}: the world cannot be a child", jn)
        scope.add(jn, el.find("pose"), ends[1], "joint")
        parsed.append((jn, el, jt, ends[0], ends[1]))
        prefixes[jn] = prefix

    X = {ln: scope.pose(ln, ln) for ln in link_names}
    XJ = {jn: scope.pose(jn, jn) for jn, *_ in parsed}

    def axis_of(jn, el):
        ax = el.find("axis")
        if ax is None or ax.find("xyz") is None:
            return np.array([0.0, 0.0, 1.0]), ax
        xe = ax.find("xyz")
        a = np.array(_floats(xe.text, 3, f"joint {jn!r} <axis><xyz>", jn))
        if np.linalg.norm(a) < 1e-12:
            raise SDFError(f"joint {jn!r}: zero axis", jn)
        frame = xe.get("expressed_in")
        if frame is None and (ax.findtext("use_parent_model_frame") or "").strip() in ("true", "1"):
            frame = "__model__"
        if frame:                              # rotate into the joint frame
            if frame == "__model__":
                frame = prefixes[jn][:-2] or "__model__"
            else:
                frame = prefixes[jn] + frame
            a = XJ[jn][:3, :3].T @ scope.pose(frame, jn)[:3, :3] @ a
        return a / np.linalg.norm(a), ax

    # spanning tree: grow from the world / root along parent -> child; ball joints last
    world_joints = [p for p in parsed if p[3] == "world"]
    children = {p[4] for p in parsed if p[3] != "world"}
    if world_joints:
        reached = {"world"}
    else:
        roots = [ln for ln, _ in links if ln not in children]
        if not roots:
            raise SDFError(f"model {name!r}: no root link (every link is a joint child) and no "
                           "joint to the world", name)
        root_link = roots[0]
        reached = {root_link}
    tree, order = [], sorted(parsed, key=lambda p: p[2] == "ball")
    changed = True
    while changed:
        changed = False
        for p in order:
            if p in tree:
                continue
            if p[3] in reached and p[4] not in reached:
                tree.append(p)
                reached.add(p[4])
                changed = True
    missing = [ln for ln, _ in links if ln not in reached]
    if missing:
        raise SDFError(f"link {missing[0]!r} cannot be reached from the root along parent -> "
                       "child joints (not covered: reversed joints, several roots)", missing[0])
    closures = [p for p in parsed if p not in tree]

    # body frame of each link: its tree joint's frame (the URDF convention), the root's own
    b = ModelBuilder(name, warn_stacklevel=4)
    body = {"world": np.eye(4)}
    for jn, el, jt, par, ch in tree:
        body[ch] = XJ[jn]
    for ln, el in links:
        if ln not in body:
            body[ln] = X[ln]
    for ln, el in links:
        ine = el.find("inertial")
        if ine is None:
            b.add_link(ln)
            continue
        Ti = np.eye(4)
        pe = ine.find("pose")
        if pe is not None:
            if pe.get("relative_to") not in (None, "", ln):
                raise SDFError(f"link {ln!r}: <inertial><pose relative_to> is not covered", ln)
            v = _floats(pe.text, 6, f"link {ln!r} <inertial><pose>", ln)
            Ti[:3, :3], Ti[:3, 3] = from_rpy(v[3:]), v[:3]
        T = se3.inv(body[ln]) @ X[ln] @ Ti                 # inertial frame in the body frame
        mass = float(_floats(ine.findtext("mass") or "1", 1, f"link {ln!r} <mass>", ln)[0])
        ie = ine.find("inertia")
        vals = {}
        for k, d in (("ixx", 1.0), ("ixy", 0.0), ("ixz", 0.0), ("iyy", 1.0), ("iyz", 0.0),
                     ("izz", 1.0)):
            t = ie.findtext(k) if ie is not None else None
            vals[k] = d if t is None else _floats(t, 1, f"link {ln!r} <{k}>", ln)[0]
        I = np.array([[vals["ixx"], vals["ixy"], vals["ixz"]],
                      [vals["ixy"], vals["iyy"], vals["iyz"]],
                      [vals["ixz"], vals["iyz"], vals["izz"]]])
        try:
            b.add_link(ln, mass, T[:3, 3], I, T[:3, :3])
        except URDFError as e:
            raise SDFError(str(e), ln) from None
    for jn, el, jt, par, ch in tree:
        a, ax_el = axis_of(jn, el)
        joint = {"revolute": lambda: JT.Revolute(tuple(a)),
                 "continuous": lambda: JT.Revolute(tuple(a)),
                 "prismatic": lambda: JT.Prismatic(tuple(a)), "ball": JT.Spherical,
                 "fixed": JT.Fixed}[jt]()
        lim = {"lower": -np.inf, "upper": np.inf, "effort": np.inf, "velocity": np.inf}
        le = ax_el.find("limit") if ax_el is not None else None
        if le is not None and jt in ("revolute", "prismatic"):
            for k in lim:
                t = le.findtext(k)
                if t is not None:
                    val = _floats(t, 1, f"joint {jn!r} <limit><{k}>", jn)[0]
                    lim[k] = np.inf if (k in ("effort", "velocity") and val < 0) else val
        dyn = {"damping": 0.0, "friction": 0.0}
        de = ax_el.find("dynamics") if ax_el is not None else None
        if de is not None and jt in ("revolute", "continuous", "prismatic"):
            for k in dyn:
                t = de.findtext(k)
                if t is not None:
                    dyn[k] = _floats(t, 1, f"joint {jn!r} <dynamics><{k}>", jn)[0]
        origin = se3.inv(body[par]) @ XJ[jn]
        try:
            b.add_joint(jn, joint, None if par == "world" else par, ch, origin, None,
                        lim["lower"], lim["upper"], lim["effort"], lim["velocity"],
                        dyn["damping"], dyn["friction"])
        except URDFError as e:
            raise SDFError(str(e), jn) from None
    if floating_base and not world_joints:
        b.add_joint("root_joint", JT.Free(), None, root_link)
    try:
        m = b.build()
    except URDFError as e:
        raise SDFError(str(e), e.element) from None
    loops = []
    for jn, el, jt, par, ch in closures:
        if par == "world":
            raise SDFError(f"joint {jn!r}: a closure to the world is not covered; make the world "
                           "joint part of the tree", jn)
        a, _ = axis_of(jn, el)
        Ta = se3.inv(body[par]) @ XJ[jn]
        Tb = se3.inv(body[ch]) @ XJ[jn]
        loops.append(LoopClosure(jn, _JOINTS[jt], par, ch, Ta[:3, 3], to_rpy(Ta[:3, :3]),
                                 Tb[:3, 3], to_rpy(Tb[:3, :3]), a))
    return m.with_loops(loops) if loops else m
