#!/usr/bin/env python3
"""Time of the frame quantities against Pinocchio's Python calls for the same state,
interleaved round by round: the median over the rounds, microseconds per call, and the ratio
ours / Pinocchio.

"pass + read" rows time ``ldr.kinematics`` and one read against Pinocchio's pass
(forwardKinematics, computeJointJacobians or computeJointJacobiansTimeVariation) and its
getFrame* read; "read" rows time the read alone after the pass; "one-shot" rows time
``ldr.frame_*`` against computeFrameJacobian or the same pass + read; "all frames" times every
link frame's placement against framesForwardKinematics.

    .venv/bin/python benchmarks/bench_kinematics.py [--rounds 9] [--number 2000] [--cpu]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "test"))

import pinocchio as pin  # noqa: E402

import lie_dynamics_ros as ldr  # noqa: E402
from oracle import PinMap, build_pin_model, erd  # noqa: E402

# (robot, URDF, floating base, frame)
ROBOTS = [("ur5", "ur_description/urdf/ur5_robot.urdf", False, "tool0"),
          ("talos_reduced", "talos_data/robots/talos_reduced.urdf", True, "left_sole_link")]
REFS = (("local", pin.LOCAL), ("world", pin.WORLD),
        ("local_world_aligned", pin.LOCAL_WORLD_ALIGNED))
SHORT = {"local": "local", "world": "world", "local_world_aligned": "lwa"}


def _per_call(f, number, clock=time.perf_counter):
    t0 = clock()
    for _ in range(number):
        f()
    return (clock() - t0) / number


def _pairs(path, floating, frame):
    model = ldr.load_urdf(path, floating_base=floating)
    pm = build_pin_model(path, floating_base=floating)
    pd = pm.createData()
    rng = np.random.default_rng(0)
    q = ldr.random_configuration(model, rng)
    v, a = rng.uniform(-1, 1, model.nv), rng.uniform(-1, 1, model.nv)
    mp = PinMap(model, pm)
    qp, vp, ap = mp.q_to_pin(q), mp.v_to_pin(v, q), mp.a_to_pin(a, q, v)
    fid = pm.getFrameId(frame, pin.BODY)
    kin = ldr.kinematics(model, q, v, a)

    def fk_place():
        pin.forwardKinematics(pm, pd, qp)
        return pin.updateFramePlacement(pm, pd, fid)

    out = [("placement: pass + read", lambda: ldr.kinematics(model, q).placement(frame),
            fk_place),
           ("placement: one-shot frame_pose", lambda: ldr.frame_pose(model, q, frame), fk_place),
           ("placements of all frames", lambda: ldr.frame_placements(model, q),
            lambda: pin.framesForwardKinematics(pm, pd, qp))]
    for name, rf in REFS:
        s = SHORT[name]

        def pin_jac(rf=rf):
            pin.computeJointJacobians(pm, pd, qp)
            return pin.getFrameJacobian(pm, pd, fid, rf)

        out += [(f"jacobian {s}: pass + read",
                 lambda name=name: ldr.kinematics(model, q).jacobian(frame, name), pin_jac),
                (f"jacobian {s}: read", lambda name=name: kin.jacobian(frame, name),
                 lambda rf=rf: pin.getFrameJacobian(pm, pd, fid, rf)),
                (f"jacobian {s}: one-shot",
                 lambda name=name: ldr.frame_jacobian(model, q, frame, name),
                 lambda rf=rf: pin.computeFrameJacobian(pm, pd, qp, fid, rf))]
    for name, rf in REFS:
        s = SHORT[name]

        def pin_djac(rf=rf):
            pin.computeJointJacobiansTimeVariation(pm, pd, qp, vp)
            return pin.getFrameJacobianTimeVariation(pm, pd, fid, rf)

        out += [(f"dJ/dt {s}: pass + read",
                 lambda name=name: ldr.kinematics(model, q, v).jacobian_time_variation(frame, name),
                 pin_djac),
                (f"dJ/dt {s}: one-shot",
                 lambda name=name: ldr.frame_jacobian_time_variation(model, q, v, frame, name),
                 pin_djac)]

    def pin_vel():
        pin.forwardKinematics(pm, pd, qp, vp)
        return pin.getFrameVelocity(pm, pd, fid, pin.LOCAL)

    def pin_acc(classical=False):
        pin.forwardKinematics(pm, pd, qp, vp, ap)
        get = pin.getFrameClassicalAcceleration if classical else pin.getFrameAcceleration
        return get(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED if classical else pin.LOCAL)

    out += [("velocity local: pass + read", lambda: ldr.kinematics(model, q, v).velocity(frame),
             pin_vel),
            ("velocity local: one-shot", lambda: ldr.frame_velocity(model, q, v, frame), pin_vel),
            ("acceleration local: pass + read",
             lambda: ldr.kinematics(model, q, v, a).acceleration(frame), pin_acc),
            ("acceleration local: one-shot",
             lambda: ldr.frame_acceleration(model, q, v, a, frame), pin_acc),
            ("classical acc. lwa: one-shot",
             lambda: ldr.frame_acceleration(model, q, v, a, frame, "local_world_aligned", True),
             lambda: pin_acc(True)),
            ("kinematics pass (q, v, a) alone", lambda: ldr.kinematics(model, q, v, a),
             lambda: pin.forwardKinematics(pm, pd, qp, vp, ap))]
    return out


def rows(rounds=9, number=2000, clock=time.perf_counter):
    """[(robot, call, ours us, Pinocchio us)]."""
    out = []
    for robot, rel, floating, frame in ROBOTS:
        for name, ours, theirs in _pairs(erd(rel), floating, frame):
            ours(), theirs()
            a, b = [], []
            for _ in range(rounds):
                a.append(_per_call(ours, number, clock))
                b.append(_per_call(theirs, number, clock))
            out.append((robot, name, 1e6 * np.median(a), 1e6 * np.median(b)))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--number", type=int, default=2000)
    p.add_argument("--cpu", action="store_true",
                   help="time with the process's CPU clock (a machine shared with other jobs)")
    args = p.parse_args(argv)
    print(f"{'robot':14s} {'call':36s} {'ours us':>9s} {'pin us':>9s} {'ratio':>6s}")
    clock = time.process_time if args.cpu else time.perf_counter
    for robot, call, ours, theirs in rows(args.rounds, args.number, clock):
        print(f"{robot:14s} {call:36s} {ours:9.2f} {theirs:9.2f} {ours / theirs:6.2f}",
              flush=True)


if __name__ == "__main__":
    main()
