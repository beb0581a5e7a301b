"""Pinocchio's ``simulation-pendulum.py`` with lie_dynamics_ros: an N-link pendulum built in
code (revolute joints about x, a 1 kg ball of radius 0.1 m at the end of each 1 m link), with
viscous joint damping 0.1 N m s/rad, released from a random configuration and simulated for
5 s at dt = 0.01 s with the semi-implicit (symplectic) Euler step on the configuration space.

Pinocchio's original applies the damping explicitly, tau = -d v at the start of each step; the
package's integrator applies it implicitly (the torque -d v+ with the step's end velocity,
docs/integrators.md "Joint damping and friction"), which is stable for any d dt. The original
shows the motion in a viewer; this one prints the energy every second.

    python examples/pinocchio_simulation_pendulum.py [-N 3]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # checkout

import lie_dynamics_ros as ldr  # noqa: E402
from lie_dynamics_ros.lie import se3  # noqa: E402

BODY_MASS = 1.0
BODY_RADIUS = 0.1
LENGTH = 1.0
DAMPING = 0.1
DT = 0.01
DURATION = 5.0


def pendulum(n):
    """The n-link pendulum: joint_k about x at the end of link k-1, ball k at z = 1 m."""
    b = ldr.ModelBuilder("pendulum_%d" % n)
    b.add_link("base")
    I_ball = ldr.sphere_inertia(BODY_MASS, BODY_RADIUS)[3:, 3:]   # about the centre
    parent, origin = "base", np.eye(4)
    for k in range(1, n + 1):
        b.add_link("link_%d" % k, mass=BODY_MASS, com=(0, 0, LENGTH), inertia=I_ball)
        b.add_joint("joint_%d" % k, ldr.Revolute((1, 0, 0)), parent, "link_%d" % k,
                    origin=origin, lower=-np.pi, upper=np.pi, damping=DAMPING)
        parent, origin = "link_%d" % k, se3.make(np.eye(3), (0, 0, LENGTH))
    return b.build()


def main(n=1, seed=None):
    """Returns (model, SimulationResult with t, q, v)."""
    model = pendulum(n)
    q0 = ldr.random_configuration(model, rng=seed)
    v0 = np.zeros(model.nv)
    res = ldr.simulate(model, q0, v0, DURATION, DT, method="semi_implicit")
    for k in range(0, len(res.t), int(round(1.0 / DT))):
        q, v = res.q[k], res.v[k]
        print("t = %.1f s  energy = %.4f J" % (res.t[k], ldr.kinetic_energy(model, q, v)
                                              + ldr.potential_energy(model, q)))
    return model, res


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-N", type=int, default=1, help="number of pendulums")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    main(args.N, args.seed)
