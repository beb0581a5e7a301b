"""Where example-robot-data keeps its robots, for the examples that load them.

The robots come with `pip install example-robot-data` (under ``<site-packages>/cmeel.prefix``)
or with ROS's ``ros-<distro>-example-robot-data`` (``<prefix>/share``).
"""
import os
import sys
import sysconfig

TAIL = os.path.join("share", "example-robot-data", "robots")


def _candidates():
    for key in ("purelib", "platlib"):
        yield os.path.join(sysconfig.get_paths()[key], "cmeel.prefix", TAIL)
    yield os.path.join(sys.prefix, TAIL)
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if prefix:
            yield os.path.join(prefix, TAIL)


def robot_path(relpath):
    """Absolute path of ``relpath`` (e.g. ``ur_description/urdf/ur5_robot.urdf``) inside the
    example-robot-data robots directory; FileNotFoundError saying how to install it."""
    seen = []
    for root in _candidates():
        path = os.path.join(root, relpath)
        if os.path.isfile(path):
            return path
        seen.append(root)
    raise FileNotFoundError(f"{relpath} of example-robot-data not found (looked in {seen}); "
                            "pip install example-robot-data")
