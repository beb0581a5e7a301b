"""Pinocchio's ``inverse-dynamics.py`` with lie_dynamics_ros: the joint torques of the UR5 for a
random motion (q, v, a), by the recursive Newton-Euler algorithm (Kim 2012, Table 2).

    python examples/pinocchio_inverse_dynamics.py [urdf]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # checkout

import lie_dynamics_ros as ldr  # noqa: E402
from examples._robot_data import robot_path  # noqa: E402

UR5 = "ur_description/urdf/ur5_robot.urdf"


def main(urdf=None, seed=None):
    """Returns (model, q, v, a, tau)."""
    model = ldr.load_urdf(urdf or robot_path(UR5))
    rng = np.random.default_rng(seed)
    q = ldr.random_configuration(model, rng=rng)     # rad
    v = rng.random(model.nv)                         # rad/s
    a = rng.random(model.nv)                         # rad/s^2
    tau = ldr.inverse_dynamics(model, q, v, a)
    print("Joint torques: " + str(tau))              # N m
    return model, q, v, a, tau


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
