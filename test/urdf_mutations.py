"""Mutations of real URDFs for the fuzz tests (a helper, not a test module).

``mutated_urdf(ops)`` is a hypothesis strategy: it takes a real robot (the bundled URDFs and
a few example-robot-data robots, with visual and collision elements stripped, which
``load_urdf`` ignores anyway), applies one to three mutations drawn from ``ops`` and returns
a ``Case``. ``outcome(case)`` loads it and sorts the result into "loaded", "rejected" or
"bad: <why>"; "bad" is what the fuzz tests forbid.
"""
import random
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

import lie_dynamics_ros as ldr
from models import URDF_DIR
from oracle import erd

ROBOTS = {
    "arm7": f"{URDF_DIR}/arm7.urdf",
    "double_pendulum": f"{URDF_DIR}/double_pendulum.urdf",
    "planar_2r": f"{URDF_DIR}/planar_2r.urdf",
    "erd_double_pendulum": erd("double_pendulum_description/urdf/double_pendulum_simple.urdf"),
    "ur5": erd("ur_description/urdf/ur5_robot.urdf"),
    "panda": erd("panda_description/urdf/panda.urdf"),          # a mimic finger joint
    "so101": erd("so_arm_description/urdf/so101.urdf"),
    "z1": erd("z1_description/urdf/z1.urdf"),
    "solo12": erd("solo_description/robots/solo12.urdf"),
}

# the attributes each element may carry, so a mutation can also add a missing one
ATTRS = {"robot": ["name"], "link": ["name"], "joint": ["name", "type"],
         "origin": ["xyz", "rpy"], "mass": ["value"],
         "inertia": ["ixx", "ixy", "ixz", "iyy", "iyz", "izz"], "axis": ["xyz"],
         "limit": ["lower", "upper", "effort", "velocity"],
         "mimic": ["joint", "multiplier", "offset"], "parent": ["link"], "child": ["link"],
         "dynamics": ["damping", "friction"]}
VECTORS = {"xyz", "rpy"}
NAMES = {"name", "link", "joint"}
TAGS = ["link", "joint", "inertial", "origin", "mass", "inertia", "axis", "limit", "mimic",
        "parent", "child", "dynamics", "robot", "visual", "bogus"]
JOINT_TYPES = ["revolute", "continuous", "prismatic", "fixed", "floating", "planar",
               "hinge", "", "REVOLUTE", "ball"]
SCALARS = ["nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e308", "-1e308", "1e309",
           "1e-308", "5e-324", "0", "-0", "-1", "1", "1e6", "1e7", "-1e5", "1e4", "1e16", "",
           " ", "garbage", "1,2", "0x10", "1_000", "\u0661", "1e", "--1", "1 2", "3.0 kg"]


def _strip(path):
    root = ET.parse(path).getroot()
    for el in list(root):
        if el.tag not in ("link", "joint"):
            root.remove(el)
            continue
        for sub in list(el):
            if sub.tag in ("visual", "collision"):
                el.remove(sub)
    return ET.tostring(root, encoding="unicode")


CORPUS = {name: _strip(path) for name, path in ROBOTS.items()}
_ROOTS = {name: ET.fromstring(text) for name, text in CORPUS.items()}
# small robots twice as often: their cases cost half as much and mutate the same elements
_PICKS = sorted(CORPUS) + [r for r in sorted(CORPUS) if len(CORPUS[r]) < 5000]


def to_xml(el, out=None):
    """ET.tostring for these plain documents (no text, no namespaces), three times faster."""
    top = out is None
    out = [] if top else out
    out.append("<" + el.tag + "".join(f' {k}="{_escape(v)}"' for k, v in el.attrib.items()))
    if len(el):
        out.append(">")
        for child in el:
            to_xml(child, out)
        out.append(f"</{el.tag}>")
    else:
        out.append("/>")
    return "".join(out) if top else None


def _escape(v):
    return v.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;").replace(
        "\n", "&#10;")


def _copy(el):
    """A deep copy of an element (copy.deepcopy with its memo is three times slower)."""
    new = ET.Element(el.tag, el.attrib.copy())
    new.extend([_copy(child) for child in el])
    return new


@dataclass
class Case:
    robot: str
    ops: list
    text: str
    floating_base: bool
    inertia_check: str = "error"

    def __repr__(self):      # what hypothesis prints for a failing case
        return (f"Case({self.robot}, ops={self.ops}, floating_base={self.floating_base}, "
                f"inertia_check={self.inertia_check!r})\n{self.text}")


def _scalar(rng):
    if rng.random() < 0.25:          # any float, from subnormal to overflow, as Python prints it
        x = rng.choice([rng.uniform(-10, 10), rng.choice([-1, 1]) * 10 ** rng.uniform(-325, 309)])
        return repr(x)
    return rng.choice(SCALARS)


def _names(root, tag):
    return [el.get("name") for el in root.iter(tag) if el.get("name") is not None]


def _elements(root):
    return [(parent, child) for parent in root.iter() for child in parent]


def op_value(rng, root):
    """Set one attribute (present or not) to NaN, inf, 1e308, empty, garbage, another name."""
    el = rng.choice([c for _, c in _elements(root) if c.tag in ATTRS] + [root])
    attr = rng.choice(ATTRS[el.tag])
    if attr in NAMES:
        value = rng.choice(["", "missing_thing", " ", "\u00e9\u4e2d"]
                           + _names(root, "link")[:4] + _names(root, "joint")[:4])
    elif attr == "type":
        value = rng.choice(JOINT_TYPES)
    elif attr in VECTORS and rng.random() < 0.5:
        parts = (el.get(attr) or "0 0 0").split() or ["0"]
        parts[rng.randrange(len(parts))] = _scalar(rng)
        value = " ".join(parts)
    else:
        value = _scalar(rng)
    el.set(attr, value)
    return f"{el.tag}[{el.get('name', '')}].{attr}={value!r}"


def op_delete(rng, root):
    parent, el = rng.choice(_elements(root))
    parent.remove(el)
    return f"delete {el.tag}[{el.get('name', '')}]"


def op_duplicate(rng, root):
    parent, el = rng.choice(_elements(root))
    parent.insert(list(parent).index(el) + 1, _copy(el))
    return f"duplicate {el.tag}[{el.get('name', '')}]"


def op_move(rng, root):
    """Put an element where it does not belong (or where it does, in another parent)."""
    parent, el = rng.choice(_elements(root))
    inside = set(map(id, el.iter()))
    target = rng.choice([t for t in root.iter() if id(t) not in inside])
    parent.remove(el)
    target.append(el)
    return f"move {el.tag}[{el.get('name', '')}] into {target.tag}[{target.get('name', '')}]"


def op_retag(rng, root):
    _, el = rng.choice(_elements(root))
    old, el.tag = el.tag, rng.choice(TAGS)
    return f"retag {old}[{el.get('name', '')}] -> {el.tag}"


def op_rewire(rng, root):
    """A joint's parent or child becomes another link (cycles, two parents) or a missing one."""
    joints = list(root.iter("joint"))
    end = rng.choice(joints).find(rng.choice(["parent", "child"])) if joints else None
    if end is None:
        return "rewire: nothing to rewire"
    end.set("link", rng.choice(_names(root, "link")[:8] + ["missing_link"]))
    return f"rewire {end.tag} -> {end.get('link')}"


def op_mimic(rng, root):
    """A mimic of anything: itself, a fixed joint, a missing joint, a chain; any multiplier."""
    joints = list(root.iter("joint"))
    if not joints:
        return "mimic: no joint"
    j = rng.choice(joints)
    for m in j.findall("mimic"):
        j.remove(m)
    attrs = {"joint": rng.choice([j.get("name"), "no_such_joint", ""]
                                 + [k.get("name") for k in joints][:10])}
    for a in ("multiplier", "offset"):
        if rng.random() < 0.5:
            attrs[a] = _scalar(rng) if rng.random() < 0.5 else repr(rng.uniform(-3, 3))
    ET.SubElement(j, "mimic", {k: v for k, v in attrs.items() if v is not None})
    return f"mimic {j.get('name')} ({j.get('type')}) {attrs}"


OPS = {"value": op_value, "delete": op_delete, "duplicate": op_duplicate, "move": op_move,
       "retag": op_retag, "rewire": op_rewire, "mimic": op_mimic}


_SEED = st.integers(0, 2 ** 32)


@st.composite
def mutated_urdf(draw, ops, max_ops=3, truncate=False):
    """Hypothesis draws the robot, the number of mutations and one seed per mutation; the seed
    picks the kind of mutation, the element and the value. Few draws per case keep
    hypothesis' share of the time small (each draw costs ~0.1 ms; st.lists triples it),
    and a failure still shrinks to fewer mutations with smaller seeds."""
    robot = draw(st.sampled_from(_PICKS))
    seeds = [draw(_SEED) for _ in range(draw(st.integers(1, max_ops)) if ops else 0)]
    root = _copy(_ROOTS[robot])
    done = [OPS[ops[s % len(ops)]](random.Random(s), root) for s in seeds]
    text = to_xml(root)
    if truncate:
        cut = draw(st.integers(0, len(text) - 1))
        text, done = text[:cut], done + [f"truncate at {cut}"]
    return Case(robot, done, text, draw(st.booleans()), draw(st.sampled_from(["error", "warn"])))


# document-level defects have no link or joint to name
DOCUMENT_LEVEL = ("not valid XML", "the root element is", "has no links", "neither URDF XML")


def outcome(case):
    """'loaded', 'rejected' or 'bad: <why>' for one mutated URDF."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")        # triangle-inequality warnings of real files
            model = ldr.load_urdf(case.text, floating_base=case.floating_base,
                                  inertia_check=case.inertia_check)
    except ldr.URDFError as e:
        if e.element is None and not any(d in str(e) for d in DOCUMENT_LEVEL):
            return f"bad: URDFError names no element: {e}"
        if e.element is not None and str(e.element) not in str(e):
            return f"bad: URDFError.element {e.element!r} is not in its message: {e}"
        return "rejected"
    except Exception as e:                         # noqa: BLE001 - the point of the test
        return f"bad: {type(e).__name__}: {e}"
    return dynamics_outcome(model)


def dynamics_outcome(model):
    q, z = ldr.neutral_configuration(model), np.zeros(model.nv)
    try:
        g = ldr.gravity_torques(model, q)
        tau = ldr.inverse_dynamics(model, q, z, z)
        M = ldr.mass_matrix(model, q)
    except Exception as e:                         # noqa: BLE001
        return f"bad: dynamics raised {type(e).__name__}: {e}"
    for name, x in (("gravity_torques", g), ("inverse_dynamics", tau), ("mass_matrix", M)):
        if not np.all(np.isfinite(x)):
            return f"bad: non-finite {name} {x}"
    if model.nv:
        spd = _spd(M)
        try:
            a = ldr.forward_dynamics(model, q, z, z)
        except ldr.InputError as e:                # a singular M may say so, clearly
            if spd:
                return f"bad: forward_dynamics raised InputError: {e} (M is SPD)"
        except Exception as e:                     # noqa: BLE001
            return f"bad: forward_dynamics raised {type(e).__name__}: {e}"
        else:
            if not np.all(np.isfinite(a)):
                return f"bad: non-finite forward_dynamics {a} (M SPD: {spd})"
    return "loaded"


def _spd(M):
    """Positive definite with a margin: the smallest eigenvalue above 1e-12 of the largest."""
    ev = np.linalg.eigvalsh(M)
    return ev[0] > 1e-12 * max(ev[-1], 0.0) and ev[-1] > 0
