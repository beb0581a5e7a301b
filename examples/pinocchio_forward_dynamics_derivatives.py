"""Pinocchio's ``forward-dynamics-derivatives.py`` with lie_dynamics_ros: the analytic
derivatives of forward dynamics (Kim 2012, Section 4, Table 6) of a floating-base humanoid,
example-robot-data's simple humanoid (Pinocchio's original builds its sample humanoid in code).

The q-derivative is taken in the tangent space: a step d moves q to ``ldr.integrate(model, q, d)``
(the free joint on SE(3)), as Pinocchio's.

    python examples/pinocchio_forward_dynamics_derivatives.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # checkout

import lie_dynamics_ros as ldr  # noqa: E402
from examples._robot_data import robot_path  # noqa: E402

HUMANOID = "simple_humanoid_description/urdf/simple_humanoid.urdf"


def main(seed=None):
    """Returns (model, q, v, tau, ddq_dq, ddq_dv, ddq_dtau)."""
    model = ldr.load_urdf(robot_path(HUMANOID), floating_base=True)
    rng = np.random.default_rng(seed)
    q = ldr.random_configuration(model, rng=rng)     # joint configuration
    v = rng.random(model.nv)                         # joint velocity
    tau = rng.random(model.nv)                       # joint torque
    ddq_dq, ddq_dv, ddq_dtau = ldr.forward_dynamics_derivatives(model, q, v, tau)
    # ddq_dtau is the inverse of the mass matrix
    print("ddq_dq %s, ddq_dv %s, ddq_dtau = M^-1 %s" % (ddq_dq.shape, ddq_dv.shape,
                                                        ddq_dtau.shape))
    return model, q, v, tau, ddq_dq, ddq_dv, ddq_dtau


if __name__ == "__main__":
    main()
