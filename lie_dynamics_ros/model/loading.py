"""``load_urdf``: the tree (``urdf.py``) plus the closures from the URDF's ``<loop_joint>``
elements and/or the ``loops`` argument (LoopClosures or a YAML file)."""
import os

from .loops import load_loops_yaml, loops_from_data, parse_urdf_loops
from .urdf import read_robot, tree_model
from ..errors import URDFError


def load_urdf(source, floating_base=False, inertia_check="error", loops=None, armature=None):
    """Build a Model from a URDF file path, XML text or bundled robot name ("arm7").

    ``floating_base=True`` attaches the root link to the world with a free SE(3) joint named
    ``root_joint``; otherwise the root link is fixed to the world. ``inertia_check``: a
    negative principal moment of inertia is a URDFError by default, a warning with "warn".

    ``loops``: a list of ``LoopClosure`` (or dicts with the same fields), or a YAML file path or
    text (docs/loops.md). Closures in the URDF's ``<loop_joint>`` elements are always read; the
    model gets ``model.loops`` and ``model.nc`` (0 without closures).

    ``armature``: reflected rotor inertia (kg m^2), which URDF has no tag for: a number for
    every DOF, an (nv,) array or {joint name: value} (``Model.with_joint_dynamics``). Joint
    damping and friction come from the URDF's ``<dynamics>``.
    """
    root = read_robot(source)
    model = tree_model(root, floating_base=floating_base, inertia_check=inertia_check)
    found = list(parse_urdf_loops(root))
    if loops is not None:
        if isinstance(loops, (str, os.PathLike)):
            found += load_loops_yaml(loops)
        else:
            found += loops_from_data(list(loops), "loops")
    if armature is not None:
        model = model.with_joint_dynamics(armature=armature)
    try:
        return model.with_loops(found) if found else model
    except ValueError as e:
        name = next((lp.name for lp in found if repr(lp.name) in str(e)), None)
        raise URDFError(str(e), name) from None
