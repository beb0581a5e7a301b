"""Pinocchio's ``inverse-kinematics.py`` with lie_dynamics_ros: closed-loop inverse kinematics
of the UR5's tool frame to an SE(3) target, from the neutral configuration.

Each iteration takes the error e = log(T(q)^-1 T_des) in the tool frame, its Jacobian
de/dq = -Jlog(T_des^-1 T(q)) J(q), with J the tool's LOCAL (body) Jacobian and Jlog the
Jacobian of the SE(3) log, the inverse right Jacobian (Sola et al. 2018, Section III;
Pinocchio's Jlog6), then a damped least-squares step v = -J^T (J J^T + lambda I)^-1 e
(Wampler 1986) and q <- q (+) v dt on the configuration space.

    python examples/pinocchio_inverse_kinematics.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # checkout

import lie_dynamics_ros as ldr  # noqa: E402
from examples._robot_data import robot_path  # noqa: E402
from lie_dynamics_ros.lie import se3  # noqa: E402

UR5 = "ur_description/urdf/ur5_robot.urdf"
FRAME = "tool0"
TARGET = se3.make(np.eye(3), [0.4, 0.2, 0.4])    # oMdes
EPS = 1e-4
IT_MAX = 1000
DT = 1e-1
DAMP = 1e-12


def main(target=TARGET, verbose=True):
    """Returns (model, success, qs (iterations + 1, nq), final error (6,))."""
    model = ldr.load_urdf(robot_path(UR5))
    q = ldr.neutral_configuration(model)
    qs = [q]
    i = 0
    while True:
        iMd = se3.compose(se3.inv(ldr.frame_pose(model, q, FRAME)), target)
        err = se3.log(iMd)                               # in the tool frame
        if np.linalg.norm(err) < EPS:
            success = True
            break
        if i >= IT_MAX:
            success = False
            break
        J = ldr.frame_jacobian(model, q, FRAME, reference="local")
        J = -se3.log_jacobian(se3.inv(iMd)) @ J
        v = -J.T @ np.linalg.solve(J @ J.T + DAMP * np.eye(6), err)
        q = ldr.integrate(model, q, v, DT)
        qs.append(q)
        if verbose and not i % 10:
            print("%d: error = %s" % (i, err))
        i += 1
    if success:
        print("Convergence achieved!")
    else:
        print("\nWarning: the iterative algorithm has not reached convergence to the desired "
              "precision")
    print("\nresult: %s" % q.tolist())
    print("\nfinal error: %s" % err)
    return model, success, np.array(qs), err


if __name__ == "__main__":
    main()
