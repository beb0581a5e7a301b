"""Pinocchio's static-contact example on solo12, with this package: the contact forces and the
joint torques that hold the quadruped at rest on its four point feet.

At rest (v = 0, a = 0) the dynamics reduce to g(q) = tau + J^T lam with the base unactuated:
the six base rows give the foot forces lam = pinv(J_base^T) g_base, the joint rows the torques
tau = g_joints - J_joints^T lam. Two checks: inverse dynamics with those forces applied at the
feet gives tau (zero on the base), and contact dynamics with tau gives a = 0 and the same lam.

    python examples/pinocchio_static_contact_dynamics.py [path/to/solo12.urdf]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # checkout

import lie_dynamics_ros as ldr  # noqa: E402
from examples._robot_data import robot_path  # noqa: E402

FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
#: standing with bent knees: base 0.235 m up, legs (HAA, HFE, KFE) = (0, +-0.8, -+1.6)
Q0 = np.array([0, 0, 0.235, 0, 0, 0, 1] + [0, 0.8, -1.6, 0, -0.8, 1.6] * 2, dtype=float)


def main(urdf=None, verbose=True):
    model = ldr.load_urdf(urdf or robot_path("solo_description/robots/solo12.urdf"), floating_base=True)
    q0, zero = Q0.copy(), np.zeros(model.nv)
    g = ldr.inverse_dynamics(model, q0, zero, zero)          # gravity torques (RNEA, a = v = 0)

    # the feet as point contacts; forces in each foot's frame (Pinocchio's LOCAL)
    contacts = [ldr.RigidContact(model, f, kind="3d", reference="local") for f in FEET]
    J = ldr.contact_jacobian(model, q0, contacts)             # (12, 18)
    lam = np.linalg.pinv(J[:, :6].T) @ g[:6]                  # base rows: g_b = J_b^T lam
    tau = np.concatenate([np.zeros(6), g[6:] - J[:, 6:].T @ lam])

    # check 1: RNEA with the foot forces as external wrenches gives tau
    f_ext = {f: np.concatenate([lam[3 * k:3 * k + 3], np.zeros(3)]) for k, f in enumerate(FEET)}
    tau_rnea = ldr.inverse_dynamics(model, q0, zero, zero, f_ext=f_ext)
    # check 2: contact dynamics with tau keeps the robot at rest with the same forces
    a, lam_fd = ldr.contact_dynamics(model, q0, zero, tau, contacts)
    if verbose:
        np.set_printoptions(linewidth=160, precision=6, suppress=True)
        for k, f in enumerate(FEET):
            print(f"contact force at {f} (foot frame): {lam[3 * k:3 * k + 3]}")
        print(f"joint torques: {tau[6:]}")
        print(f"|tau_rnea - tau| = {np.linalg.norm(tau_rnea - tau):.3e}")
        print(f"|a| of contact dynamics = {np.linalg.norm(a):.3e}, "
              f"|lam_fd - lam| = {np.linalg.norm(lam_fd - lam):.3e}")
    return {"q": q0, "lam": lam, "tau": tau, "tau_rnea": tau_rnea, "a": a, "lam_fd": lam_fd}


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
