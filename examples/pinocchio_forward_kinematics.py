"""Pinocchio's ``overview-urdf.py`` with lie_dynamics_ros: load the UR5 of example-robot-data,
sample a configuration, run the forward kinematics and print where each joint is.

    python examples/pinocchio_forward_kinematics.py [urdf]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # checkout

import lie_dynamics_ros as ldr  # noqa: E402
from examples._robot_data import robot_path  # noqa: E402

UR5 = "ur_description/urdf/ur5_robot.urdf"


def main(urdf=None, seed=None):
    """Returns (model, q, {joint name: 4x4 world placement}), "universe" first."""
    model = ldr.load_urdf(urdf or robot_path(UR5))
    print("model name: " + model.name)
    q = ldr.random_configuration(model, rng=seed)
    print("q: %s" % q)
    kin = ldr.kinematics(model, q)                     # one pass; every frame is read from it
    placements = {"universe": np.eye(4)}
    placements.update((j.name, kin.placement(j.name)) for j in model.joints)
    for name, oMi in placements.items():
        print("{:<24} : {: .2f} {: .2f} {: .2f}".format(name, *oMi[:3, 3]))
    return model, q, placements


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
