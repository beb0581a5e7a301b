"""Pinocchio's ``inverse-dynamics-derivatives.py`` with lie_dynamics_ros: the analytic
derivatives of inverse dynamics (Kim 2012, Section 4, Table 5) of a floating-base humanoid,
example-robot-data's simple humanoid (Pinocchio's original builds its sample humanoid in code).

The q-derivative is taken in the tangent space: a step d moves q to ``ldr.integrate(model, q, d)``
(the free joint on SE(3)), as Pinocchio's.

    python examples/pinocchio_inverse_dynamics_derivatives.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # checkout

import lie_dynamics_ros as ldr  # noqa: E402
from examples._robot_data import robot_path  # noqa: E402

HUMANOID = "simple_humanoid_description/urdf/simple_humanoid.urdf"


def main(seed=None):
    """Returns (model, q, v, a, dtau_dq, dtau_dv, dtau_da)."""
    model = ldr.load_urdf(robot_path(HUMANOID), floating_base=True)
    rng = np.random.default_rng(seed)
    q = ldr.random_configuration(model, rng=rng)     # joint configuration
    v = rng.random(model.nv)                         # joint velocity
    a = rng.random(model.nv)                         # joint acceleration
    dtau_dq, dtau_dv, dtau_da = ldr.inverse_dynamics_derivatives(model, q, v, a)
    # dtau_da is the mass matrix M
    print("dtau_dq %s, dtau_dv %s, dtau_da = M %s" % (dtau_dq.shape, dtau_dv.shape,
                                                      dtau_da.shape))
    return model, q, v, a, dtau_dq, dtau_dv, dtau_da


if __name__ == "__main__":
    main()
