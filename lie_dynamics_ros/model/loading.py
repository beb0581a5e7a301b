"""``load_urdf`` with loop closures: the tree from model.urdf, the closures from the URDF's
``<loop_joint>`` elements and/or the ``loops`` argument (LoopClosures or a YAML file)."""
import os

from . import urdf as _urdf
from .loops import load_loops_yaml, loops_from_data, parse_urdf_loops
from ..errors import URDFError


def load_urdf(source, floating_base=False, inertia_check="error", loops=None):
    """Build a Model from a URDF file path or XML string (see ``model.urdf.load_urdf``).

    ``loops``: a list of ``LoopClosure`` (or dicts with the same fields), or a YAML file path or
    text (docs/loops.md). Closures in the URDF's ``<loop_joint>`` elements are always read; the
    model gets ``model.loops`` and ``model.nc`` (0 without closures).
    """
    model = _urdf.load_urdf(source, floating_base=floating_base, inertia_check=inertia_check)
    found = list(parse_urdf_loops(_root(source)))
    if loops is not None:
        if isinstance(loops, (str, os.PathLike)):
            found += load_loops_yaml(loops)
        else:
            found += loops_from_data(list(loops), "loops")
    try:
        return model.with_loops(found) if found else model
    except ValueError as e:
        name = next((lp.name for lp in found if repr(lp.name) in str(e)), None)
        raise URDFError(str(e), name) from None


def _root(source):
    """The <robot> element of a source that model.urdf.load_urdf has accepted."""
    import xml.etree.ElementTree as ET
    return ET.fromstring(_urdf._read_text(source))
