#!/usr/bin/env python3
"""Time of one closed-loop IK iteration on the UR5's tool frame (the loop body of
examples/pinocchio_inverse_kinematics.py, the package's calls) against the same iteration of
Pinocchio's inverse-kinematics.py (forwardKinematics, updateFramePlacement, actInv, log6,
computeFrameJacobian LOCAL, Jlog6, the same numpy solve, integrate), from the same
configuration, interleaved round by round: the median over the rounds, microseconds per
iteration, and the ratio ours / Pinocchio. The rows below it time each of our calls alone.

    .venv/bin/python benchmarks/bench_ik.py [--rounds 15] [--number 2000] [--cpu]
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
from examples import pinocchio_inverse_kinematics as ik  # noqa: E402
from lie_dynamics_ros.lie import se3  # noqa: E402
from oracle import PinMap, build_pin_model, erd  # noqa: E402


def _per_call(f, number, clock):
    t0 = clock()
    for _ in range(number):
        f()
    return (clock() - t0) / number


def _pairs():
    path = erd(ik.UR5)
    model, pm = ldr.load_urdf(path), build_pin_model(path)
    pd = pm.createData()
    fid = pm.getFrameId(ik.FRAME)
    q = ldr.random_configuration(model, rng=0)
    qp = PinMap(model, pm).q_to_pin(q)
    target, oMdes = ik.TARGET, pin.SE3(ik.TARGET)
    frame, damp, dt = ik.FRAME, ik.DAMP, ik.DT

    def ours():
        iMd = se3.compose(se3.inv(ldr.frame_pose(model, q, frame)), target)
        err = se3.log(iMd)
        np.linalg.norm(err)
        J = ldr.frame_jacobian(model, q, frame, reference="local")
        J = -se3.log_jacobian(se3.inv(iMd)) @ J
        v = -J.T @ np.linalg.solve(J @ J.T + damp * np.eye(6), err)
        return ldr.integrate(model, q, v, dt)

    def theirs():
        pin.forwardKinematics(pm, pd, qp)
        pin.updateFramePlacement(pm, pd, fid)
        iMd = pd.oMf[fid].actInv(oMdes)
        err = pin.log(iMd).vector
        np.linalg.norm(err)
        J = pin.computeFrameJacobian(pm, pd, qp, fid, pin.LOCAL)
        J = -pin.Jlog6(iMd.inverse()) @ J
        v = -J.T @ np.linalg.solve(J @ J.T + damp * np.eye(6), err)
        return pin.integrate(pm, qp, v * dt)

    T = ldr.frame_pose(model, q, frame)
    iMd = se3.compose(se3.inv(T), target)
    J = ldr.frame_jacobian(model, q, frame, reference="local")
    J6 = -se3.log_jacobian(se3.inv(iMd)) @ J
    err = se3.log(iMd)
    v = -J6.T @ np.linalg.solve(J6 @ J6.T + damp * np.eye(6), err)
    Mf = pd.oMf[fid]
    parts = [  # (our call, Pinocchio's counterpart in its loop)
        ("  frame_pose", lambda: ldr.frame_pose(model, q, frame),
         lambda: (pin.forwardKinematics(pm, pd, qp), pin.updateFramePlacement(pm, pd, fid))),
        ("  se3.compose(se3.inv(T), target)", lambda: se3.compose(se3.inv(T), target),
         lambda: Mf.actInv(oMdes)),
        ("  se3.log", lambda: se3.log(iMd), lambda: pin.log(oMdes).vector),
        ("  frame_jacobian (local)", lambda: ldr.frame_jacobian(model, q, frame, reference="local"),
         lambda: pin.computeFrameJacobian(pm, pd, qp, fid, pin.LOCAL)),
        ("  se3.log_jacobian(se3.inv(iMd))", lambda: se3.log_jacobian(se3.inv(iMd)),
         lambda: pin.Jlog6(oMdes.inverse())),
        ("  integrate", lambda: ldr.integrate(model, q, v, dt),
         lambda: pin.integrate(pm, qp, v * dt)),
    ]
    return [("one IK iteration (UR5)", ours, theirs)] + parts


def rows(rounds=15, number=2000, clock=time.perf_counter):
    """[(call, ours us, Pinocchio us)]."""
    out = []
    for name, ours, theirs in _pairs():
        ours(), theirs()
        a, b = [], []
        for _ in range(rounds):
            a.append(_per_call(ours, number, clock))
            b.append(_per_call(theirs, number, clock))
        out.append((name, 1e6 * np.median(a), 1e6 * np.median(b)))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--number", type=int, default=2000)
    p.add_argument("--cpu", action="store_true",
                   help="time with the process's CPU clock (a machine shared with other jobs)")
    args = p.parse_args(argv)
    clock = time.process_time if args.cpu else time.perf_counter
    print(f"{'call':44s} {'ours us':>10s} {'pin us':>10s} {'ratio':>7s}")
    for call, ours, theirs in rows(args.rounds, args.number, clock):
        print(f"{call:44s} {ours:10.2f} {theirs:10.2f} {ours / theirs:7.2f}", flush=True)


if __name__ == "__main__":
    main()
