"""Closed loops against Pinocchio (test oracle only): the constrained dynamics rebuilt from
Pinocchio's M, nonlinear effects, frame placements, LOCAL frame Jacobians and frame
accelerations, and Pinocchio's own constraintDynamics for the 6D weld of the five-bar."""
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from scipy.linalg import null_space

import lie_dynamics_ros as ldr

pin = pytest.importorskip("pinocchio")
from oracle import PinMap  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MECH = os.path.join(HERE, "..", "urdf", "loops")


def tree_urdf(name, tmp_path):
    """The mechanism's URDF without its <loop_joint> elements (what Pinocchio reads)."""
    root = ET.parse(os.path.join(MECH, f"{name}.urdf")).getroot()
    for el in root.findall("loop_joint"):
        root.remove(el)
    path = tmp_path / f"{name}_tree.urdf"
    path.write_text(ET.tostring(root, encoding="unicode"))
    return str(path)


def _Ad(T):
    R, p = T[:3, :3], T[:3, 3]
    hat = np.array([[0, -p[2], p[1]], [p[2], 0, -p[0]], [-p[1], p[0], 0]])
    X = np.zeros((6, 6))
    X[:3, :3] = X[3:, 3:] = R
    X[:3, 3:] = hat @ R
    return X


def _ad(x, y):
    v, w = x[:3], x[3:]
    return np.concatenate([np.cross(w, y[:3]) + np.cross(v, y[3:]), np.cross(w, y[3:])])


def pin_closure_terms(ours, pm, pmap, q, v):
    """A and Adot v from Pinocchio's frame quantities (same closure definition: the relative
    twist of F_b w.r.t. F_a in F_b, rows picked by the closure's selection)."""
    from lie_dynamics_ros.model.loops import selection
    pd = pm.createData()
    qp, vp = pmap.q_to_pin(q), pmap.v_to_pin(v, q)
    pin.forwardKinematics(pm, pd, qp, vp, np.zeros(pm.nv))
    pin.computeJointJacobians(pm, pd, qp)
    pin.updateFramePlacements(pm, pd)
    rows_A, rows_b = [], []
    for lp in ours.loops:
        side = []
        for link, Toff in ((lp.link_a, lp.T_a), (lp.link_b, lp.T_b)):
            fid = pm.getFrameId(link)
            T = pd.oMf[fid].homogeneous @ Toff
            J = pmap.jac_from_pin(pin.getFrameJacobian(pm, pd, fid, pin.LOCAL), q)
            acc = pin.getFrameAcceleration(pm, pd, fid, pin.LOCAL).vector   # Jdot v (a = 0)
            Xo = _Ad(np.linalg.inv(Toff))
            side.append((T, Xo @ J, Xo @ acc))
        (Ta, Ja, da), (Tb, Jb, db) = side
        X = _Ad(np.linalg.inv(Tb) @ Ta)
        Jrel = Jb - X @ Ja
        P = selection(lp)
        rows_A.append(P @ Jrel)
        rows_b.append(P @ (db - X @ da + _ad(Jrel @ v, Jb @ v)))
    return np.vstack(rows_A), np.concatenate(rows_b)


@pytest.mark.parametrize("name", ["delta", "five_bar", "four_bar", "slider_crank"])
def test_constrained_dynamics_agree_with_pinocchio_terms(name, tmp_path):
    ours = ldr.load_urdf(os.path.join(MECH, f"{name}.urdf"))
    path = tree_urdf(name, tmp_path)
    pm = pin.buildModelFromUrdf(path)
    pm.gravity.linear = ours.gravity
    pmap = PinMap(ours, pm, path)
    rng = np.random.default_rng(11)
    for _ in range(3):
        q = ldr.assemble(ours, 0.1 * rng.standard_normal(ours.nq))
        v = null_space(ldr.constraint_jacobian(ours, q)) @ rng.standard_normal(
            ours.nv - np.linalg.matrix_rank(ldr.constraint_jacobian(ours, q), tol=1e-9))
        tau = rng.standard_normal(ours.nv)
        A_ref, b_ref = pin_closure_terms(ours, pm, pmap, q, v)
        assert np.max(np.abs(ldr.constraint_jacobian(ours, q) - A_ref)) < 1e-10
        assert np.max(np.abs(ldr.constraint_bias(ours, q, v) - b_ref)) < 1e-10
        qp, vp = pmap.q_to_pin(q), pmap.v_to_pin(v, q)
        M = pmap.mat_from_pin(pin.crba(pm, pm.createData(), qp), q)
        M = np.triu(M) + np.triu(M, 1).T
        h = pmap.tau_from_pin(pin.nonLinearEffects(pm, pm.createData(), qp, vp), q)
        # KKT: [M -A^T; A 0] (a, lam) = (tau - h, -Adot v), minimum-norm lam if A is deficient
        n, c = ours.nv, A_ref.shape[0]
        K = np.block([[M, -A_ref.T], [A_ref, np.zeros((c, c))]])
        sol = np.linalg.lstsq(K, np.concatenate([tau - h, -b_ref]), rcond=1e-12)[0]
        a, lam = ldr.constrained_forward_dynamics(ours, q, v, tau)
        assert np.max(np.abs(a - sol[:n])) < 1e-8 * (1 + np.max(np.abs(a)))
        assert np.max(np.abs(lam - sol[n:])) < 1e-7 * (1 + np.max(np.abs(lam)))


def test_five_bar_weld_against_pinocchio_constraint_dynamics(tmp_path):
    """The five-bar's weld is a 6D contact in Pinocchio: its constraintDynamics (proximal
    solver) gives the same accelerations."""
    ours = ldr.load_urdf(os.path.join(MECH, "five_bar.urdf"))
    path = tree_urdf("five_bar", tmp_path)
    pm = pin.buildModelFromUrdf(path)
    pm.gravity.linear = ours.gravity
    pmap = PinMap(ours, pm, path)
    lp = ours.loops[0]
    fa, fb = pm.frames[pm.getFrameId(lp.link_a)], pm.frames[pm.getFrameId(lp.link_b)]
    Pa = fa.placement * pin.SE3(lp.T_a)
    Pb = fb.placement * pin.SE3(lp.T_b)
    cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_6D, pm, fa.parentJoint, Pa,
                                  fb.parentJoint, Pb, pin.ReferenceFrame.LOCAL)
    cms = pin.StdVec_RigidConstraintModel()
    cms.append(cm)
    cds = pin.StdVec_RigidConstraintData()
    cds.append(cm.createData())
    pd = pm.createData()
    pin.initConstraintDynamics(pm, pd, cms, cds)
    settings = pin.ProximalSettings(1e-14, 1e-10, 200)
    rng = np.random.default_rng(12)
    for _ in range(3):
        q = ldr.assemble(ours, 0.1 * rng.standard_normal(ours.nq))
        v = null_space(ldr.constraint_jacobian(ours, q)) @ rng.standard_normal(2)
        tau = rng.standard_normal(ours.nv)
        qp, vp = pmap.q_to_pin(q), pmap.v_to_pin(v, q)
        ap = pin.constraintDynamics(pm, pd, qp, vp, pmap.T(q) @ tau, cms, cds, settings)
        a_ref = np.linalg.lstsq(pmap.T(q), ap, rcond=None)[0]
        a, _ = ldr.constrained_forward_dynamics(ours, q, v, tau)
        assert np.max(np.abs(a - a_ref)) < 1e-7 * (1 + np.max(np.abs(a)))
