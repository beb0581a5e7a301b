"""Where the bundled robots live: the source tree, a pip install, or a colcon/ament install."""
import os
import sys

PACKAGE = "lie_dynamics_ros"


def _candidates():
    yield os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # source / editable
    yield os.path.join(sys.prefix, "share", PACKAGE)                      # pip data_files
    try:                                                                  # colcon / ament
        from ament_index_python.packages import get_package_share_directory
        yield get_package_share_directory(PACKAGE)
    except (ImportError, LookupError, OSError, ValueError):   # no ament index, or not in it
        return


def share_dir():
    """The package's share directory (holding urdf/, config/, launch/)."""
    seen = []
    for c in _candidates():
        if os.path.isdir(os.path.join(c, "urdf")):
            return c
        seen.append(c)
    raise FileNotFoundError(f"cannot find the {PACKAGE} share directory (looked in {seen})")


def bundled_urdf(name="arm7.urdf"):
    """Path of a robot bundled in urdf/ (arm7.urdf, double_pendulum.urdf, planar_2r.urdf)."""
    path = os.path.join(share_dir(), "urdf", name if name.endswith(".urdf") else name + ".urdf")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no bundled robot {name!r} in {os.path.dirname(path)}")
    return path
