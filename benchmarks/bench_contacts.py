#!/usr/bin/env python3
"""Time of the rigid-contact calls against Pinocchio's Python calls for the same state,
interleaved round by round in CPU time (benchmarks/paired.py): medians in microseconds per
call and the ratio ours / Pinocchio.

* ``contact_dynamics`` / ``constraintDynamics`` (ProximalSettings mu = 0, one iteration: the
  exact solve) on solo12 with four 3D feet and talos_reduced with two 6D soles, LOCAL;
* ``impulse_dynamics`` / ``impulseDynamics`` on the same contacts;
* one step of the Talos contact-simulation example (examples/pinocchio_talos_contact_
  simulation.py) / the same step written with Pinocchio.

    .venv/bin/python benchmarks/bench_contacts.py [--rounds 15] [--number 1000]
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "test"))
sys.path.insert(0, os.path.join(ROOT, "examples"))

import pinocchio as pin  # noqa: E402

import lie_dynamics_ros as ldr  # noqa: E402
import pinocchio_talos_contact_simulation as talos_example  # noqa: E402
from oracle import PinMap, build_pin_model, erd  # noqa: E402
from paired import compare, print_rows  # noqa: E402

ROBOTS = [("solo12", "solo_description/robots/solo12.urdf",
           ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"], "3d"),
          ("talos_reduced", "talos_data/robots/talos_reduced.urdf",
           ["left_sole_link", "right_sole_link"], "6d")]


def _pin_contacts(pm, frames, kind):
    cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    ctype = pin.ContactType.CONTACT_6D if kind == "6d" else pin.ContactType.CONTACT_3D
    for name in frames:
        f = pm.frames[pm.getFrameId(name)]
        cms.append(pin.RigidConstraintModel(ctype, pm, f.parentJoint, f.placement,
                                            pin.ReferenceFrame.LOCAL))
        cds.append(cms[-1].createData())
    return cms, cds


def _pairs(robot, path, frames, kind):
    model = ldr.load_urdf(path, floating_base=True)
    pm = build_pin_model(path, floating_base=True)
    pd = pm.createData()
    rng = np.random.default_rng(0)
    q = np.asarray(ldr.random_configuration(model, rng))
    v, tau = rng.uniform(-1, 1, model.nv), rng.uniform(-5, 5, model.nv)
    mp = PinMap(model, pm)
    qp, vp, tp = mp.q_to_pin(q), mp.v_to_pin(v, q), mp.v_to_pin(tau, q)
    contacts = [ldr.RigidContact(model, f, kind) for f in frames]
    cms, cds = _pin_contacts(pm, frames, kind)
    pin.initConstraintDynamics(pm, pd, cms, cds)
    prox = pin.ProximalSettings(1e-12, 0.0, 1)
    d = model.create_data()
    out = [
        (robot, f"contact_dynamics {len(frames)}x{kind.upper()}",
         lambda: ldr.contact_dynamics(model, q, v, tau, contacts, data=d),
         lambda: pin.constraintDynamics(pm, pd, qp, vp, tp, cms, cds, prox)),
        (robot, "impulse_dynamics",
         lambda: ldr.impulse_dynamics(model, q, v, contacts, data=d),
         lambda: pin.impulseDynamics(pm, pd, qp, vp, cms, cds, 0.0, prox)),
    ]
    if robot == "talos_reduced":
        out.append(_talos_step(model, pm, mp, contacts, cms, cds, prox))
    return out


def _talos_step(model, pm, mp, contacts, cms, cds, prox):
    """One step of the example, ours and Pinocchio's, from half-sitting."""
    _, srdf = talos_example.talos_files()
    nv = model.nv
    q0 = ldr.reference_configuration(model, srdf, "half_sitting")
    q_ref = ldr.integrate(model, q0, 0.1 * np.random.default_rng(0).random(nv))
    S = np.zeros((nv - 6, nv))
    S[:, 6:] = np.eye(nv - 6)
    v0 = np.zeros(nv)
    pd, pc = pm.createData(), pm.createData()
    pin.initConstraintDynamics(pm, pd, cms, cds)
    ids = [cm.joint1_id for cm in cms]
    places = [cm.joint1_placement for cm in cms]
    qp0, qp_ref = mp.q_to_pin(q0), mp.q_to_pin(q_ref)
    zero = np.zeros(nv)

    def theirs():
        pin.computeJointJacobians(pm, pc, qp0)
        J = np.vstack([pin.getFrameJacobian(pm, pc, i, P, pin.LOCAL) for i, P in zip(ids, places)])
        b = pin.rnea(pm, pc, qp0, v0, zero)
        x = np.linalg.lstsq(np.vstack([S, J]).T, b, rcond=None)[0]
        tau = np.concatenate([np.zeros(6), x[:nv - 6]])
        tau[6:] += -talos_example.KP * pin.difference(pm, qp_ref, qp0)[6:] - talos_example.KV * v0[6:]
        a = pin.constraintDynamics(pm, pd, qp0, v0, tau, cms, cds, prox)
        v = v0 + a * talos_example.DT
        return pin.integrate(pm, qp0, v * talos_example.DT), v

    return ("talos_reduced", "contact-simulation step (example)",
            lambda: talos_example.step(model, contacts, S, q0, v0, q_ref, v0), theirs)


def rows(rounds=15, number=1000):
    """[(robot, call, ours us, Pinocchio us, median of the rounds' ratios)] (paired.py)."""
    out = []
    for robot, rel, frames, kind in ROBOTS:
        for robot_, name, ours, theirs in _pairs(robot, erd(rel), frames, kind):
            out.append((robot_, name) + compare(ours, theirs, rounds, number))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--number", type=int, default=1000)
    args = p.parse_args(argv)
    print_rows(rows(args.rounds, args.number), 40)


if __name__ == "__main__":
    main()
