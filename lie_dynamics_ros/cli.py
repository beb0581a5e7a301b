"""``ldr_demo``: the model tree and its dynamics at one configuration (``make dynamics-demo``)."""
import argparse
import sys
import time

import numpy as np

from .algorithms.configuration import random_configuration
from .algorithms.dynamics import (coriolis_matrix, forward_dynamics, gravity_torques,
                                  hybrid_dynamics, inverse_dynamics, mass_matrix)
from .algorithms.frames import frame_pose
from .algorithms.kinematics import kinetic_energy, potential_energy
from .errors import InputError, URDFError
from .model.loading import load_urdf
from .resources import bundled_urdf


def _row(label, x, width=9):
    return f"  {label:<24}" + " ".join(f"{v:{width}.3f}" for v in np.atleast_1d(x))


def _timed(fn, n=2000):
    fn()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n * 1e6


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("urdf", nargs="?", default=None,
                   help="URDF file (default: the bundled 7-DOF arm, urdf/arm7.urdf)")
    p.add_argument("--floating-base", action="store_true", help="free SE(3) joint at the root")
    p.add_argument("--seed", type=int, default=0, help="seed of the random state shown")
    args = p.parse_args(argv)
    try:
        model = load_urdf(args.urdf or bundled_urdf("arm7.urdf"), floating_base=args.floating_base)
    except (URDFError, FileNotFoundError) as e:
        print(f"ldr_demo: {e}", file=sys.stderr)
        return 2
    print(model.describe())
    print(f"  joint_names: {model.joint_names}")
    rng = np.random.default_rng(args.seed)
    q = random_configuration(model, rng)
    v = rng.uniform(-1, 1, model.nv)
    a = rng.uniform(-1, 1, model.nv)
    print(f"\nstate (seed {args.seed}); torques in N m (N for prismatic joints)")
    print(_row("q", q))
    print(_row("v", v))
    print(_row("a", a))
    tau = inverse_dynamics(model, q, v, a)
    print("\ninverse dynamics (RNEA, Kim Table 2)")
    print(_row("tau = M a + C v + g", tau))
    print(_row("g(q)", gravity_torques(model, q)))
    print(_row("C(q, v) v", coriolis_matrix(model, q, v) @ v))
    print("\nforward dynamics (ABA, Kim Table 3)")
    try:
        print(_row("a = FD(q, v, tau)", forward_dynamics(model, q, v, tau)))
        print(_row("free fall, tau = 0", forward_dynamics(model, q, v, np.zeros(model.nv))))
    except InputError as e:       # e.g. a massless floating base: accelerations undefined
        print(f"  undefined: {e}")
    # prescribe the first half of the joints (whole joints: a free joint is one block)
    half = len(model.joint_names) // 2
    mask = np.zeros(model.nv, bool)
    mask[:model.joint_v_index[half] if half < len(model.joint_names) else model.nv] = True
    try:
        a_h, tau_h = hybrid_dynamics(model, q, v, a, tau, mask)
        print(f"\nhybrid dynamics (Kim Table 4): the first {half} joints' accelerations given, "
              "the others' torques")
        print(_row("a_full", a_h))
        print(_row("tau_full", tau_h))
    except InputError as e:
        print(f"\nhybrid dynamics: undefined ({e})")
    M = mass_matrix(model, q)
    print(f"\nmass matrix M(q) (CRBA), eigenvalues {np.linalg.eigvalsh(M).min():.4f} .. "
          f"{np.linalg.eigvalsh(M).max():.4f}")
    for r in M[:8]:
        print(_row("", r[:8], 8))
    ke, pe = kinetic_energy(model, q, v), potential_energy(model, q)
    print(f"\nenergy: kinetic {ke:.4f} J, potential {pe:.4f} J")
    tip = model.frame_names[-1]
    T = frame_pose(model, q, tip)
    print(f"pose of {tip!r}: position {np.round(T[:3, 3], 4)}")
    print("\ntime per call (this machine, Python call included):")
    for name, fn in [("inverse_dynamics", lambda: inverse_dynamics(model, q, v, a)),
                     ("forward_dynamics", lambda: forward_dynamics(model, q, v, tau)),
                     ("mass_matrix", lambda: mass_matrix(model, q))]:
        try:
            print(f"  {name:<20} {_timed(fn):7.2f} us")
        except InputError:
            print(f"  {name:<20} undefined for this model")
    return 0


if __name__ == "__main__":
    sys.exit(main())
