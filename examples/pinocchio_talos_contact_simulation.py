"""Pinocchio's contact-simulation example on Talos, with this package: the humanoid stands on
its two soles (two 6D contacts) for 5 s under a posture controller.

Each 5 ms step: the torques that hold the robot against gravity and velocity terms with the
base unactuated (least squares on [S; J]^T x = RNEA(q, v, 0)), plus a PD on the joints towards
a posture 0.1 rad away from half-sitting; then the contact dynamics gives a, and semi-implicit
Euler advances v += a dt, q = q (+) v dt. Printed: the final posture error and how far the
soles drifted (the contacts hold at acceleration level only, as in the original: the soles
drift by the integration error).

    python examples/pinocchio_talos_contact_simulation.py [--steps 1001]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # checkout

import lie_dynamics_ros as ldr  # noqa: E402
from examples._robot_data import robot_path  # noqa: E402

SOLES = ["left_sole_link", "right_sole_link"]
DT, KP = 5e-3, 30.0
KV = 0.05 * np.sqrt(KP)


def talos_files():
    """(talos_reduced.urdf, talos.srdf) of example-robot-data."""
    return (robot_path("talos_data/robots/talos_reduced.urdf"),
            robot_path("talos_data/srdf/talos.srdf"))


def step(model, contacts, S, q, v, q_ref, v_ref):
    """One 5 ms step of the controlled robot: (q, v) -> (q, v)."""
    nv = model.nv
    J = ldr.contact_jacobian(model, q, contacts)
    b = ldr.inverse_dynamics(model, q, v, np.zeros(nv))
    x = np.linalg.lstsq(np.vstack([S, J]).T, b, rcond=None)[0]
    tau = np.concatenate([np.zeros(6), x[:nv - 6]])
    tau[6:] += -KP * ldr.difference(model, q_ref, q)[6:] - KV * (v - v_ref)[6:]
    a, _ = ldr.contact_dynamics(model, q, v, tau, contacts)
    v = v + a * DT
    return ldr.integrate(model, q, v * DT), v


def main(steps=1001, seed=0, verbose=True):
    urdf, srdf = talos_files()
    model = ldr.load_urdf(urdf, floating_base=True)
    nv = model.nv
    q0 = ldr.reference_configuration(model, srdf, "half_sitting")
    dq_ref = 0.1 * np.random.default_rng(seed).random(nv)
    q_ref, v_ref = ldr.integrate(model, q0, dq_ref), np.zeros(nv)
    contacts = [ldr.RigidContact(model, f, kind="6d", reference="local") for f in SOLES]
    S = np.zeros((nv - 6, nv))
    S[:, 6:] = np.eye(nv - 6)                                 # the actuated rows

    q, v = q0.copy(), np.zeros(nv)
    Q = [q.copy()]
    for _ in range(steps):
        q, v = step(model, contacts, S, q, v, q_ref, v_ref)
        Q.append(q.copy())
    Q = np.array(Q)
    soles = np.array([[ldr.frame_pose(model, qk, f)[:3, 3] for f in SOLES] for qk in Q])
    drift = float(np.max(np.abs(soles - soles[0])))
    if verbose:
        err = ldr.difference(model, q_ref, q)[6:]
        print(f"{steps} steps of {DT * 1e3:g} ms: posture error {np.max(np.abs(err)):.4f} rad, "
              f"base at {np.round(q[:3], 4)}, soles drifted {drift:.2e} m")
    return {"q0": q0, "q_ref": q_ref, "Q": Q, "v": v, "sole_drift": drift}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1001)
    main(ap.parse_args().steps)
