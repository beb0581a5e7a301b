"""The ported Pinocchio examples (examples/pinocchio_*.py) against Pinocchio computing the same
thing (a test oracle; a test dependency, imported, never skipped).

Each example's ``main()`` runs as a user would run it; Pinocchio then repeats its computation
on its own model of the same URDF, joints matched by name (test/oracle.py). Tolerance 1e-10
relative (``rel_err``), the 500-step simulation included: both sides take the same steps (the
damping applied at the step's end velocity on both), so only round-off separates them.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import pinocchio as pin

import lie_dynamics_ros as ldr
from examples import (pinocchio_forward_dynamics_derivatives as fd_derivatives,
                      pinocchio_forward_kinematics as fk,
                      pinocchio_inverse_dynamics as rnea,
                      pinocchio_inverse_dynamics_derivatives as id_derivatives,
                      pinocchio_inverse_kinematics as ik,
                      pinocchio_simulation_pendulum as pendulum)
from examples._robot_data import robot_path
from lie_dynamics_ros.lie import se3
from oracle import PinMap, build_pin_model, rel_err

TOL = 1e-10
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


def _pin(relpath, model, floating_base=False):
    pm = build_pin_model(robot_path(relpath), floating_base=floating_base)
    return pm, pm.createData(), PinMap(model, pm)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_forward_kinematics(seed):
    model, q, placements = fk.main(seed=seed)
    pm, pd, mp = _pin(fk.UR5, model)
    pin.forwardKinematics(pm, pd, mp.q_to_pin(q))
    pin.updateFramePlacements(pm, pd)
    assert list(placements) == ["universe"] + list(model.joint_names)
    assert sorted(pm.names) == sorted(placements)
    for name, oMi in placements.items():
        ref = pd.oMi[pm.getJointId(name)].homogeneous
        assert rel_err(oMi, ref) <= TOL, name
    frames = ldr.forward_kinematics(model, q)          # every link, as Pinocchio's frames
    for link, T in frames.items():
        assert rel_err(T, pd.oMf[pm.getFrameId(link)].homogeneous) <= TOL, link


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_inverse_dynamics(seed):
    model, q, v, a, tau = rnea.main(seed=seed)
    pm, pd, mp = _pin(rnea.UR5, model)
    ref = mp.tau_from_pin(pin.rnea(pm, pd, mp.q_to_pin(q), mp.v_to_pin(v), mp.v_to_pin(a)))
    assert rel_err(tau, ref) <= TOL


@pytest.mark.parametrize("seed", [0, 1])
def test_inverse_dynamics_derivatives(seed):
    model, q, v, a, *ours = id_derivatives.main(seed=seed)
    assert model.joint_names[0] == "root_joint"         # the floating base is in the check
    pm, pd, mp = _pin(id_derivatives.HUMANOID, model, floating_base=True)
    pin.computeRNEADerivatives(pm, pd, mp.q_to_pin(q), mp.v_to_pin(v), mp.v_to_pin(a))
    M = np.triu(pd.M) + np.triu(pd.M, 1).T
    for name, x, y in zip(("dtau_dq", "dtau_dv", "M"), ours, (pd.dtau_dq, pd.dtau_dv, M)):
        assert rel_err(x, mp.mat_from_pin(y)) <= TOL, name


@pytest.mark.parametrize("seed", [0, 1])
def test_forward_dynamics_derivatives(seed):
    model, q, v, tau, *ours = fd_derivatives.main(seed=seed)
    assert model.joint_names[0] == "root_joint"
    pm, pd, mp = _pin(fd_derivatives.HUMANOID, model, floating_base=True)
    pin.computeABADerivatives(pm, pd, mp.q_to_pin(q), mp.v_to_pin(v), mp.v_to_pin(tau))
    Minv = np.triu(pd.Minv) + np.triu(pd.Minv, 1).T
    for name, x, y in zip(("ddq_dq", "ddq_dv", "Minv"), ours, (pd.ddq_dq, pd.ddq_dv, Minv)):
        assert rel_err(x, mp.mat_from_pin(y)) <= TOL, name
    # identity: the torque derivative is the inverse of the mass matrix
    assert rel_err(ours[2] @ ldr.mass_matrix(model, q), np.eye(model.nv)) <= TOL


def _pin_ik(pm, pd, oMdes):
    """Pinocchio's inverse-kinematics.py on the frame ik.FRAME: the iterates q."""
    fid = pm.getFrameId(ik.FRAME)
    q = pin.neutral(pm)
    qs = [q]
    for i in range(ik.IT_MAX + 1):
        pin.framesForwardKinematics(pm, pd, q)
        iMd = pd.oMf[fid].actInv(oMdes)
        err = pin.log(iMd).vector
        if np.linalg.norm(err) < ik.EPS or i == ik.IT_MAX:
            break
        J = pin.computeFrameJacobian(pm, pd, q, fid, pin.LOCAL)
        J = -pin.Jlog6(iMd.inverse()) @ J
        v = -J.T @ np.linalg.solve(J @ J.T + ik.DAMP * np.eye(6), err)
        q = pin.integrate(pm, q, v * ik.DT)
        qs.append(q)
    return np.array(qs), err


def test_inverse_kinematics():
    model, success, qs, err = ik.main(verbose=False)
    assert success and np.linalg.norm(err) < ik.EPS
    assert len(qs) > 10                                  # it did iterate
    T = ldr.frame_pose(model, qs[-1], ik.FRAME)
    assert rel_err(se3.log(se3.compose(se3.inv(T), ik.TARGET)), err) <= TOL
    pm, pd, mp = _pin(ik.UR5, model)
    oMdes = pin.SE3(ik.TARGET[:3, :3], ik.TARGET[:3, 3])
    ref, ref_err = _pin_ik(pm, pd, oMdes)
    assert len(ref) == len(qs)                           # the same number of iterations
    for k, (q, qp) in enumerate(zip(qs, ref)):
        assert rel_err(q, mp.q_from_pin(qp)) <= TOL, k
    assert rel_err(err, ref_err) <= TOL


def _pin_pendulum(n):
    """Pinocchio's simulation-pendulum.py model: RX joints, a sphere 1 m out on each."""
    pm = pin.Model()
    parent, placement = 0, pin.SE3.Identity()
    for k in range(n):
        jid = pm.addJoint(parent, pin.JointModelRX(), placement, "joint_%d" % (k + 1))
        body = pin.SE3(np.eye(3), np.array([0.0, 0.0, pendulum.LENGTH]))
        pm.appendBodyToJoint(jid, pin.Inertia.FromSphere(pendulum.BODY_MASS,
                                                         pendulum.BODY_RADIUS), body)
        parent, placement = jid, body
    return pm


def _pin_simulation(pm, q0, n_steps):
    """Pinocchio's loop (aba, v += a dt, q = integrate(q, v dt)) with the damping torque taken
    at the step's end velocity, (M + dt D) v+ = M (v + dt a_free), as the package applies it."""
    pd = pm.createData()
    q, v = q0.copy(), np.zeros(pm.nv)
    D = pendulum.DAMPING * np.eye(pm.nv)
    Q = [q]
    for _ in range(n_steps):
        a_free = pin.aba(pm, pd, q, v, np.zeros(pm.nv))
        M = pin.crba(pm, pd, q)
        M = np.triu(M) + np.triu(M, 1).T
        v_end = np.linalg.solve(M + pendulum.DT * D, M @ (v + pendulum.DT * a_free))
        a = pin.aba(pm, pd, q, v, -D @ v_end)
        v = v + a * pendulum.DT
        q = pin.integrate(pm, q, v * pendulum.DT)
        Q.append(q)
    return np.array(Q)


@pytest.mark.parametrize("n,seed", [(1, 0), (3, 1)])
def test_simulation_pendulum(n, seed):
    model, res = pendulum.main(n, seed=seed)
    n_steps = int(round(pendulum.DURATION / pendulum.DT))
    assert res.q.shape == (n_steps + 1, n)
    pm = _pin_pendulum(n)
    assert rel_err(ldr.mass_matrix(model, res.q[0]), pin.crba(pm, pm.createData(), res.q[0])) \
        <= TOL
    ref = _pin_simulation(pm, res.q[0], n_steps)
    assert rel_err(res.q, ref) <= TOL


@pytest.mark.parametrize("script,args,first", [
    ("pinocchio_forward_kinematics.py", [], "model name: ur5"),
    ("pinocchio_inverse_dynamics.py", [], "Joint torques: "),
    ("pinocchio_inverse_dynamics_derivatives.py", [], "dtau_dq (35, 35)"),
    ("pinocchio_forward_dynamics_derivatives.py", [], "ddq_dq (35, 35)"),
    ("pinocchio_inverse_kinematics.py", [], "0: error = "),
    ("pinocchio_simulation_pendulum.py", ["-N", "2", "--seed", "3"], "t = 0.0 s  energy = ")])
def test_runs_standalone(tmp_path, script, args, first):
    """``python examples/X.py`` from any folder, as the README says."""
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, script), *args], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(first), out.stdout[:200]
