"""Rigid contacts: a frame of the model held by the world (docs/contacts.md).

A contact is a loop closure (Kim 2012, section 3; ``model/loops.py``) whose first side F_a is
anchored in the world, on body row 0, at the contact's placement, and whose second side F_b is
the contact frame. ``6d`` welds F_b to the world (a foot sole flat on the ground), ``3d`` holds
only its origin (a point foot). The closure rows are those of a weld or a spherical closure;
for ``3d`` the bias is the classical acceleration of the point, as Pinocchio's CONTACT_3D.

``reference`` says in which frame lam (the wrench the world exerts on the frame) is given:
``local`` (F_b) or ``local_world_aligned`` (F_b's origin, world axes), as Pinocchio's
RigidConstraintModel reference frames LOCAL and LOCAL_WORLD_ALIGNED.
"""
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .loops import LoopClosure, LoopSide, loop_side, tables_from_sides

KINDS = {"6d": "weld", "3d": "spherical"}
REFERENCES = ("local", "local_world_aligned")
_EYE = np.eye(4)
_EYE.flags.writeable = False


def _placement(placement, frame):
    if placement is None:
        return None
    P = getattr(placement, "homogeneous", placement)        # a pinocchio.SE3 is fine too
    try:
        P = np.array(P, dtype=float)
    except (TypeError, ValueError):
        P = None
    if P is None or P.shape != (4, 4) or not np.all(np.isfinite(P)):
        raise InputError(f"contact on {frame!r}: placement must be a finite 4x4 pose, got "
                         f"{placement!r}")
    R = P[:3, :3]
    if (np.max(np.abs(R.T @ R - np.eye(3))) > 1e-9 or np.linalg.det(R) < 0
            or np.max(np.abs(P[3] - (0, 0, 0, 1))) > 0):
        raise InputError(f"contact on {frame!r}: placement is not a rigid pose (its rotation "
                         "must be orthonormal with det +1, its last row 0 0 0 1)")
    return tuple(tuple(float(x) for x in row) for row in P)


@dataclass(frozen=True, init=False)
class RigidContact:
    """``frame`` of ``model`` held by the world: ``kind`` "6d" (weld) or "3d" (point),
    ``reference`` "local" or "local_world_aligned" (the frame of lam), ``placement`` the 4x4
    world pose where the world holds the frame, or None: where the frame is (no position error
    for Baumgarte's Kp; ``ldr.place_contacts(model, q, contacts)`` fixes it at q)."""
    frame: str
    kind: str
    reference: str
    placement: tuple
    row: int

    def __init__(self, model, frame, kind="6d", reference="local", placement=None):
        if not isinstance(frame, str) or not frame:
            raise InputError(f"a contact needs a frame name, got {frame!r}")
        k = kind.lower() if isinstance(kind, str) else None
        if k not in KINDS:
            raise InputError(f"contact on {frame!r}: unknown kind {kind!r}; use '6d' (weld) or "
                             "'3d' (point)")
        ref = reference.lower() if isinstance(reference, str) else None
        if ref not in REFERENCES:
            raise InputError(f"contact on {frame!r}: unknown reference {reference!r}; use "
                             f"{' or '.join(map(repr, REFERENCES))}")
        row = int(model.frame(frame)[0])          # InputError naming an unknown frame
        if row == 0:
            raise InputError(f"contact on {frame!r}: this frame is fixed to the world already "
                             "(it moves with no joint), a contact on it constrains nothing")
        set_ = object.__setattr__
        set_(self, "frame", frame)
        set_(self, "kind", k)
        set_(self, "reference", ref)
        set_(self, "placement", _placement(placement, frame))
        set_(self, "row", row)

    @property
    def nc(self):
        """Number of constraint rows (6 or 3)."""
        return 6 if self.kind == "6d" else 3


@dataclass(frozen=True)
class ContactTables:
    """What the contact algorithms read for one contact set on one model: the closures'
    LoopTables (contacts first, in the given order, then the model's loops), the row offset
    of each contact and its world-aligned flag, the number of contact rows."""
    contacts: tuple
    tables: object
    nk: int                  # contact rows (the first nk rows of A and lam)
    lwa: tuple               # (index, offset, nc) of the local_world_aligned contacts
    placed: bool             # every contact has a placement


def contact_tables(model, contacts):
    """ContactTables of ``contacts`` (RigidContact objects) on ``model``; InputError for a
    contact of another model, a duplicate frame or an empty list."""
    if isinstance(contacts, RigidContact):
        contacts = (contacts,)
    try:
        contacts = tuple(contacts)
    except TypeError:
        raise InputError(f"contacts must be a list of ldr.RigidContact, got "
                         f"{type(contacts).__name__}") from None
    if not contacts:
        raise InputError("contacts is empty; use forward_dynamics for a free model")
    seen = set()
    for c in contacts:
        if not isinstance(c, RigidContact):
            raise InputError(f"contacts must be ldr.RigidContact objects, got {type(c).__name__}")
        if c.frame in seen:
            raise InputError(f"two contacts on frame {c.frame!r}; give each frame one contact "
                             "(a '6d' contact already holds what a '3d' one would)")
        seen.add(c.frame)
        if c.frame not in model.frames or model.frames[c.frame][0] != c.row:
            raise InputError(f"the contact on {c.frame!r} was made for another model; make it "
                             "with ldr.RigidContact(model, ...) of this model")
    if model.has_mimic:
        raise InputError("contacts on a model with mimic joints are not supported")
    loops, sides = [], []
    for c in contacts:
        loops.append(LoopClosure(f"contact {c.frame}", KINDS[c.kind], "world", c.frame))
        anchor = _EYE if c.placement is None else np.array(c.placement)
        anchor.flags.writeable = False
        sides.append((LoopSide("world", 0, anchor), loop_side(model, c.frame, _EYE)))
    point = [1 if c.kind == "3d" else 0 for c in contacts]
    if model.loop_tables is not None:
        loops += list(model.loop_tables.loops)
        sides += list(model.loop_tables.sides)
        point += [0] * len(model.loop_tables.loops)
    t = tables_from_sides(tuple(loops), tuple(sides), np.array(point, dtype=np.int64))
    nk = sum(c.nc for c in contacts)
    lwa = tuple((i, o, c.nc) for i, (c, o) in enumerate(zip(contacts, t.offsets))
                if c.reference == "local_world_aligned")
    return ContactTables(contacts, t, nk, lwa, all(c.placement is not None for c in contacts))
