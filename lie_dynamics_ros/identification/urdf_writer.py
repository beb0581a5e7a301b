"""Write identified parameters back into the source URDF.

Only ``<inertial>`` of the moving bodies' links and ``<dynamics>`` of the joints change;
everything else (visuals, collisions, transmissions, gazebo and ros2_control tags, comments)
is kept: comments, the XML declaration and attribute order survive, whitespace inside tags
may not.

Links merged by fixed joints: the model holds one inertia per moving body, the sum of the
links welded to it. The identified body inertia is written into the body's own link (the
moving joint's child) and the merged links get a zero ``<inertial>`` (mass 0), so that every
loader that lumps fixed joints (ours, Pinocchio, Gazebo, MuJoCo) sees the same body. A zero
inertial is written rather than none, since MuJoCo would infer a missing one from the geoms.
"""
import os
import re
import xml.etree.ElementTree as ET

import numpy as np

from ..algorithms.regressor import N_PARAMS, inertial_parameters
from ..errors import InputError
from . import consistency as C


_PROLOGUE = re.compile(r"<!--.*?-->|<robot[\s>/]", re.DOTALL)


def _read(source):
    """(prologue text before <robot>: declaration and leading comments, which ElementTree
    drops; the element tree, comments inside kept)."""
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if isinstance(source, bytes):
        source = source.decode()
    if not (isinstance(source, str) and source.lstrip().startswith("<")):
        if not (isinstance(source, str) and os.path.isfile(source)):
            raise InputError(f"source URDF {source!r} is not a file nor URDF text")
        with open(source, encoding="utf-8") as f:
            source = f.read()
    start = next((m.start() for m in _PROLOGUE.finditer(source)
                  if not m.group().startswith("<!--")), 0)
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    return source[:start], ET.fromstring(source, parser=parser)


def _fmt(x):
    return repr(float(x))


def _set_inertial(link, theta):
    """<inertial> at the COM, axes of the link frame: mass, origin, inertia about the COM."""
    m, h = theta[0], theta[1:4]
    xx, xy, yy, xz, yz, zz = theta[4:10]
    I_o = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    c = h / m if m > 0 else np.zeros(3)
    I_c = I_o - m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))   # parallel axis
    old = link.find("inertial")
    if old is None:
        old = ET.SubElement(link, "inertial")
    for child in list(old):
        old.remove(child)
    ET.SubElement(old, "origin", xyz=" ".join(map(_fmt, c)), rpy="0 0 0")
    ET.SubElement(old, "mass", value=_fmt(m))
    ET.SubElement(old, "inertia", ixx=_fmt(I_c[0, 0]), ixy=_fmt(I_c[0, 1]),
                  ixz=_fmt(I_c[0, 2]), iyy=_fmt(I_c[1, 1]), iyz=_fmt(I_c[1, 2]),
                  izz=_fmt(I_c[2, 2]))


def write_urdf(model, source, path):
    """Write ``source`` (a URDF path or text) with ``model``'s body inertias and joint
    damping/friction to ``path``; returns ``path``. Refuses a non-physical body."""
    theta = inertial_parameters(model).reshape(-1, N_PARAMS)
    C.check_physical(theta, model.body_names)
    prologue, root = _read(source)
    links = {el.get("name"): el for el in root.findall("link")}
    joints = {el.get("name"): el for el in root.findall("joint")}
    for k, body in enumerate(model.body_names):
        if body not in links:
            raise InputError(f"link {body!r} of the model is not in the source URDF")
        _set_inertial(links[body], theta[k])
    for name, (row, _) in model.frames.items():
        if row > 0 and name != model.body_names[row - 1] and name in links:
            _set_inertial(links[name], np.zeros(N_PARAMS))          # merged into its body
    for j in model.joints:
        if j.mimic is not None or j.nv != 1:
            continue
        el = joints.get(j.name)
        if el is None:
            raise InputError(f"joint {j.name!r} of the model is not in the source URDF")
        dyn = el.find("dynamics")
        if dyn is None:
            dyn = ET.SubElement(el, "dynamics")
        dyn.set("damping", _fmt(j.dynamics[0]))
        dyn.set("friction", _fmt(j.dynamics[1]))
    with open(path, "w", encoding="utf-8") as f:
        f.write(prologue + ET.tostring(root, encoding="unicode") + "\n")
    return path
