"""The two ported Pinocchio contact examples against Pinocchio doing the same computation.

* ``examples/pinocchio_static_contact_dynamics.py`` (solo12 on four point feet): the foot forces
  and holding torques from Pinocchio's RNEA and LOCAL frame Jacobians, to 1e-10, and Pinocchio's
  constraintDynamics with those torques (a = 0, same forces).
* ``examples/pinocchio_talos_contact_simulation.py`` (Talos on two welded soles, 1,001 steps of
  5 ms): the same controller and semi-implicit Euler run with Pinocchio's rnea, frame Jacobians,
  difference, integrate and constraintDynamics; the configurations agree to 1e-10 at every step
  (round-off grows over 1,001 steps of a floating humanoid; seen: 6e-13).
"""
import os
import sys

import numpy as np

import pinocchio as pin  # a test oracle only (make test installs it)

from oracle import Oracle, erd, rel_err

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "examples"))
import pinocchio_static_contact_dynamics as static_example  # noqa: E402
import pinocchio_talos_contact_simulation as talos_example  # noqa: E402

TOL = 1e-10


def test_static_contact_example_equals_pinocchio():
    out = static_example.main(verbose=False)
    path = erd("solo_description/robots/solo12.urdf")
    import lie_dynamics_ros as ldr
    model = ldr.load_urdf(path, floating_base=True)
    o = Oracle(model, path, True)
    pm, pd = o.pm, o.pm.createData()
    q = out["q"]
    qp, zero = o.map.q_to_pin(q), np.zeros(pm.nv)
    g = pin.rnea(pm, pd, qp, zero, zero)
    ids = [pm.getFrameId(f) for f in static_example.FEET]
    J = np.vstack([pin.computeFrameJacobian(pm, pd, qp, i, pin.LOCAL)[:3] for i in ids])
    lam = np.linalg.pinv(J[:, :6].T) @ g[:6]
    tau = np.concatenate([np.zeros(6), g[6:] - J[:, 6:].T @ lam])
    assert rel_err(out["lam"], lam) < TOL
    assert rel_err(out["tau"], o.map.tau_from_pin(tau, q)) < TOL
    assert rel_err(out["tau_rnea"], out["tau"]) < TOL
    cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for i in ids:
        f = pm.frames[i]
        cms.append(pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, f.parentJoint,
                                            f.placement, pin.ReferenceFrame.LOCAL))
        cds.append(cms[-1].createData())
    pin.initConstraintDynamics(pm, pd, cms, cds)
    a = pin.constraintDynamics(pm, pd, qp, zero, tau, cms, cds, pin.ProximalSettings(1e-14, 0, 1))
    assert np.max(np.abs(a)) < 1e-9 and np.max(np.abs(out["a"])) < 1e-9
    assert rel_err(out["lam_fd"], pd.lambda_c) < TOL


def pinocchio_talos_run(o, q0, q_ref, steps):
    """The example's loop written with Pinocchio (its own coordinates)."""
    pm, pd, pc = o.pm, o.pm.createData(), o.pm.createData()
    nv = pm.nv
    ids = [pm.getFrameId(f) for f in talos_example.SOLES]
    cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for i in ids:
        f = pm.frames[i]
        cms.append(pin.RigidConstraintModel(pin.ContactType.CONTACT_6D, pm, f.parentJoint,
                                            f.placement, pin.ReferenceFrame.LOCAL))
        cds.append(cms[-1].createData())
    pin.initConstraintDynamics(pm, pd, cms, cds)
    S = np.zeros((nv - 6, nv))
    S[:, 6:] = np.eye(nv - 6)
    prox = pin.ProximalSettings(1e-14, 0.0, 1)
    q, v, Q = q0.copy(), np.zeros(nv), [q0.copy()]
    for _ in range(steps):
        pin.computeJointJacobians(pm, pc, q)
        pin.updateFramePlacements(pm, pc)
        J = np.vstack([pin.getFrameJacobian(pm, pc, i, pin.LOCAL) for i in ids])
        b = pin.rnea(pm, pc, q, v, np.zeros(nv))
        x = np.linalg.lstsq(np.vstack([S, J]).T, b, rcond=None)[0]
        tau = np.concatenate([np.zeros(6), x[:nv - 6]])
        tau[6:] += (-talos_example.KP * pin.difference(pm, q_ref, q)[6:]
                    - talos_example.KV * v[6:])
        a = pin.constraintDynamics(pm, pd, q, v, tau, cms, cds, prox)
        v = v + a * talos_example.DT
        q = pin.integrate(pm, q, v * talos_example.DT)
        Q.append(q.copy())
    return np.array(Q)


def test_talos_contact_simulation_example_equals_pinocchio():
    out = talos_example.main(verbose=False)
    path = erd("talos_data/robots/talos_reduced.urdf")
    import lie_dynamics_ros as ldr
    model = ldr.load_urdf(path, floating_base=True)
    o = Oracle(model, path, True)
    Q = out["Q"]
    Q_pin = pinocchio_talos_run(o, o.map.q_to_pin(out["q0"]), o.map.q_to_pin(out["q_ref"]),
                                len(Q) - 1)
    err = max(np.max(np.abs(o.map.q_to_pin(q) - qp)) for q, qp in zip(Q, Q_pin))
    assert err < 1e-10, err
    assert out["sole_drift"] < 1e-2                  # held at acceleration level only
