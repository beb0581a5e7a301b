"""Rigid contacts on floating bases (``ldr.RigidContact``, ``contact_dynamics``,
``impulse_dynamics``, ``simulate(contacts=...)``).

Oracles: Pinocchio's ``constraintDynamics`` and ``impulseDynamics`` (a, lam, v+, impulse) on
solo12 with four point feet and talos_reduced with two welded soles, in both reference frames,
at random states; Pinocchio's frame accelerations for the contact identity J a + gamma =
-Kp e - Kd J v; a minimum-norm KKT solve for a redundant contact set.
"""
import numpy as np
import pytest

import pinocchio as pin  # a test oracle only (make test installs it)

import lie_dynamics_ros as ldr
from oracle import Oracle, erd, rel_err

TOL = 1e-10
SOLO = "solo_description/robots/solo12.urdf"
TALOS = "talos_data/robots/talos_reduced.urdf"
FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
SOLES = ["left_sole_link", "right_sole_link"]
CASES = [("solo12", SOLO, FEET, "3d"), ("talos_reduced", TALOS, SOLES, "6d")]
REFS = ["local", "local_world_aligned"]
_CACHE = {}


def _robot(rel):
    if rel not in _CACHE:
        model = ldr.load_urdf(erd(rel), floating_base=True)
        _CACHE[rel] = (model, Oracle(model, erd(rel), True))
    return _CACHE[rel]


def _states(model, n=3, seed=5):
    rng = np.random.default_rng(seed)
    return [(np.asarray(ldr.random_configuration(model, rng)), rng.uniform(-1, 1, model.nv),
             rng.uniform(-5, 5, model.nv)) for _ in range(n)]


def pin_contacts(pm, contacts, gains=None):
    """Pinocchio's constraint models of our contacts (same frame, kind, reference, placement)."""
    cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for c in contacts:
        f = pm.frames[pm.getFrameId(c.frame)]
        kind = pin.ContactType.CONTACT_6D if c.kind == "6d" else pin.ContactType.CONTACT_3D
        ref = (pin.ReferenceFrame.LOCAL if c.reference == "local"
               else pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        cm = pin.RigidConstraintModel(kind, pm, f.parentJoint, f.placement, ref)
        if c.placement is not None:
            cm.joint2_placement = pin.SE3(np.array(c.placement))
        if gains is not None:
            cm.m_baumgarte_parameters.Kp, cm.m_baumgarte_parameters.Kd = gains
        cms.append(cm)
        cds.append(cm.createData())
    return cms, cds


def pin_contact_dynamics(o, contacts, q, v, tau, gains=None, mu=0.0, iters=1):
    pm = o.pm
    cms, cds = pin_contacts(pm, contacts, gains)
    pd = pm.createData()
    pin.initConstraintDynamics(pm, pd, cms, cds)
    prox = pin.ProximalSettings(1e-14, mu, iters)
    ap = pin.constraintDynamics(pm, pd, o.map.q_to_pin(q), o.map.v_to_pin(v, q),
                                o.map.v_to_pin(tau, q), cms, cds, prox)
    return o.map.v_from_pin(ap, q), pd.lambda_c.copy()


def _contacts(model, frames, kind, ref):
    return [ldr.RigidContact(model, f, kind, ref) for f in frames]


@pytest.mark.parametrize("ref", REFS)
@pytest.mark.parametrize("rid,rel,frames,kind", CASES, ids=[c[0] for c in CASES])
def test_contact_dynamics_equals_pinocchio(rid, rel, frames, kind, ref):
    model, o = _robot(rel)
    contacts = _contacts(model, frames, kind, ref)
    for q, v, tau in _states(model):
        a, lam = ldr.contact_dynamics(model, q, v, tau, contacts)
        a_ref, lam_ref = pin_contact_dynamics(o, contacts, q, v, tau)
        assert rel_err(a, a_ref) < TOL, rel_err(a, a_ref)
        assert rel_err(lam, lam_ref) < TOL, rel_err(lam, lam_ref)
        assert lam.shape == (len(frames) * (3 if kind == "3d" else 6),)


def _placed(model, q, frames, kind, ref, rng):
    """Contacts held 1 cm and a few degrees away from where the frames are at q."""
    out = []
    for f in frames:
        T = ldr.frame_pose(model, q, f) @ ldr.lie.se3.exp(rng.uniform(-0.02, 0.02, 6))
        out.append(ldr.RigidContact(model, f, kind, ref, placement=T))
    return out


@pytest.mark.parametrize("ref", REFS)
@pytest.mark.parametrize("rid,rel,frames,kind", CASES, ids=[c[0] for c in CASES])
def test_baumgarte_equals_pinocchio_corrector(rid, rel, frames, kind, ref):
    model, o = _robot(rel)
    rng = np.random.default_rng(2)
    gains = (30.0, 7.0)
    for q, v, tau in _states(model, 2, seed=9):
        contacts = _placed(model, q, frames, kind, ref, rng)
        a, lam = ldr.contact_dynamics(model, q, v, tau, contacts, baumgarte=gains)
        a_ref, lam_ref = pin_contact_dynamics(o, contacts, q, v, tau, gains)
        assert rel_err(a, a_ref) < TOL, rel_err(a, a_ref)
        assert rel_err(lam, lam_ref) < TOL, rel_err(lam, lam_ref)


@pytest.mark.parametrize("gains", [None, (30.0, 7.0)], ids=["plain", "baumgarte"])
@pytest.mark.parametrize("ref", REFS)
@pytest.mark.parametrize("rid,rel,frames,kind", CASES, ids=[c[0] for c in CASES])
def test_contact_acceleration_identity(rid, rel, frames, kind, ref, gains):
    """The frames' accelerations, computed by Pinocchio from our a, are -Kp e - Kd (J v):
    the classical linear acceleration for point contacts, the spatial one for welds."""
    model, o = _robot(rel)
    pm, pd = o.pm, o.pm.createData()
    rng = np.random.default_rng(4)
    for q, v, tau in _states(model, 2, seed=13):
        contacts = _placed(model, q, frames, kind, ref, rng)
        a, _ = ldr.contact_dynamics(model, q, v, tau, contacts, baumgarte=gains)
        J = ldr.contact_jacobian(model, q, contacts)
        qp = o.map.q_to_pin(q)
        pin.forwardKinematics(pm, pd, qp, o.map.v_to_pin(v, q), o.map.a_to_pin(a, q, v))
        pin.updateFramePlacements(pm, pd)
        kp, kd = gains or (0.0, 0.0)
        row = 0
        for c in contacts:
            fid = pm.getFrameId(c.frame)
            oMf = pd.oMf[fid]
            err_T = pin.SE3(np.array(c.placement)).actInv(oMf)      # F_a^-1 F_b
            if kind == "3d":
                acc = pin.getFrameClassicalAcceleration(pm, pd, fid, pin.LOCAL).linear
                e, edot = err_T.translation @ err_T.rotation, J[row:row + 3] @ v
                R = oMf.rotation
                if ref == "local_world_aligned":
                    edot = R.T @ edot                               # back to the local frame
                target = -kp * e - kd * edot
                rows = 3
            else:
                acc = pin.getFrameAcceleration(pm, pd, fid, pin.LOCAL).vector
                edot = pin.getFrameVelocity(pm, pd, fid, pin.LOCAL).vector
                target = -kp * pin.log6(err_T).vector - kd * edot
                rows = 6
            scale = 1.0 + np.max(np.abs(a))
            assert np.max(np.abs(acc - target)) < 1e-9 * scale, (c.frame, acc - target)
            row += rows


@pytest.mark.parametrize("restitution", [0.0, 0.4])
@pytest.mark.parametrize("ref", REFS)
@pytest.mark.parametrize("rid,rel,frames,kind", CASES, ids=[c[0] for c in CASES])
def test_impulse_dynamics_equals_pinocchio(rid, rel, frames, kind, ref, restitution):
    model, o = _robot(rel)
    pm = o.pm
    contacts = _contacts(model, frames, kind, ref)
    cms, cds = pin_contacts(pm, contacts)
    pd = pm.createData()
    pin.initConstraintDynamics(pm, pd, cms, cds)
    for q, v, _ in _states(model, seed=21):
        v_plus, impulse = ldr.impulse_dynamics(model, q, v, contacts, restitution=restitution)
        vp = pin.impulseDynamics(pm, pd, o.map.q_to_pin(q), o.map.v_to_pin(v, q), cms, cds,
                                 restitution, pin.ProximalSettings(1e-14, 0.0, 1))
        assert rel_err(v_plus, o.map.v_from_pin(vp, q)) < TOL
        assert rel_err(impulse, pd.impulse_c) < TOL
        J = ldr.contact_jacobian(model, q, contacts)
        assert np.max(np.abs(J @ v_plus + restitution * (J @ v))) < 1e-10 * (1 + np.abs(v).max())


def test_contact_jacobian_equals_pinocchio_frame_jacobians():
    for rid, rel, frames, kind in CASES:
        model, o = _robot(rel)
        q = _states(model, 1)[0][0]
        for ref, pref in (("local", pin.ReferenceFrame.LOCAL),
                          ("local_world_aligned", pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)):
            J = ldr.contact_jacobian(model, q, _contacts(model, frames, kind, ref))
            qp = o.map.q_to_pin(q)
            blocks = [pin.computeFrameJacobian(o.pm, o.pd, qp, o.pm.getFrameId(f), pref)
                      for f in frames]
            ref_J = np.vstack([B[:3] if kind == "3d" else B for B in blocks])
            assert rel_err(J, o.map.jac_from_pin(ref_J, q)) < TOL


def test_redundant_welds_give_the_minimum_norm_forces():
    """Four welded feet on solo12 (24 rows, rank 18): at rest, a = 0 and lam is the
    minimum-norm solution of J^T lam = g - tau, which Pinocchio's proximal iterations reach
    from lam = 0."""
    model, o = _robot(SOLO)
    q = _states(model, 1, seed=3)[0][0]
    tau = np.random.default_rng(0).uniform(-1, 1, model.nv)
    contacts = _contacts(model, FEET, "6d", "local")
    a, lam = ldr.contact_dynamics(model, q, np.zeros(model.nv), tau, contacts)
    J = ldr.contact_jacobian(model, q, contacts)
    assert np.linalg.matrix_rank(J) == model.nv < J.shape[0]
    assert np.max(np.abs(a)) < 1e-9
    g = ldr.gravity_torques(model, q)
    lam_ref = np.linalg.lstsq(J.T, g - tau, rcond=None)[0]
    assert rel_err(lam, lam_ref) < 1e-9
    # the proximal iterations stop on their residual short of the limit (1e-7 relative here)
    a_pin, lam_pin = pin_contact_dynamics(o, contacts, q, np.zeros(model.nv), tau, mu=1e-2,
                                          iters=200000)
    assert np.max(np.abs(a_pin)) < 1e-9 and rel_err(lam, lam_pin) < 1e-6


def test_contacts_with_loops_stack_contacts_first():
    """A contact on a closed-loop mechanism: the contact rows come first, then the model's
    closures, and every row of A a + Adot v vanishes."""
    model = ldr.load_urdf("loops/four_bar")
    link = next(n for n in model.frame_names if model.frame(n)[0] == model.njoints)
    c = ldr.RigidContact(model, link, "3d")
    q = ldr.assemble(model, np.full(model.nq, 0.3))
    v, tau = np.zeros(model.nv), np.ones(model.nv)
    a, lam = ldr.contact_dynamics(model, q, v, tau, [c])
    assert lam.shape == (3 + model.nc,)
    A = np.vstack([ldr.contact_jacobian(model, q, [c]), ldr.constraint_jacobian(model, q)])
    assert np.max(np.abs(A @ a)) < 1e-9
    M, b = ldr.mass_matrix(model, q), ldr.nonlinear_effects(model, q, v)
    assert np.max(np.abs(M @ a + b - tau - A.T @ lam)) < 1e-9 * (1 + np.abs(lam).max())


def _holding_torques(model, q, contacts):
    """Joint torques (zero on the base) that hold the robot at rest on its contacts."""
    J = ldr.contact_jacobian(model, q, contacts)
    g = ldr.gravity_torques(model, q)
    S = np.zeros((model.nv - 6, model.nv))
    S[:, 6:] = np.eye(model.nv - 6)
    sol = np.linalg.lstsq(np.vstack([S, J]).T, g, rcond=None)[0]
    return np.concatenate([np.zeros(6), sol[:model.nv - 6]])


def standing(rid, model):
    """solo12 with bent knees (Pinocchio's static-contact example), Talos half-sitting."""
    if rid == "solo12":
        return np.array([0, 0, 0.235, 0, 0, 0, 1] + [0, 0.8, -1.6, 0, -0.8, 1.6] * 2)
    return ldr.reference_configuration(model, erd("talos_data/srdf/talos.srdf"), "half_sitting")


@pytest.mark.parametrize("rid,rel,frames,kind", CASES, ids=[c[0] for c in CASES])
def test_standing_robot_keeps_its_feet(rid, rel, frames, kind):
    """0.2 s (RKMK4, 2 ms) under gravity and holding torques from a standing state with a
    random velocity: with projection the feet stay put to 1e-10 (seen: 1e-12); without it,
    with Baumgarte Kp=100, Kd=20, they drift less than 1e-8 (seen: 6e-11 m)."""
    model, _ = _robot(rel)
    q0 = standing(rid, model)
    contacts = ldr.place_contacts(model, q0, _contacts(model, frames, kind, "local"))
    tau = _holding_torques(model, q0, contacts)
    v0 = np.random.default_rng(1).uniform(-0.2, 0.2, model.nv)
    held = slice(None) if kind == "6d" else (slice(None), slice(0, 3), 3)   # pose or point

    def drift(res):
        P = np.array([[ldr.frame_pose(model, q, f) for f in frames] for q in res.q])
        return np.max(np.abs(P[(slice(None),) + (held if kind == "3d" else ())] - P0[held]))
    P0 = np.array([ldr.frame_pose(model, q0, f) for f in frames])
    res = ldr.simulate(model, q0, v0, 0.2, 2e-3, tau=tau, contacts=contacts,
                       joint_friction=False)
    assert np.max(np.abs(res.v[-1])) > 1e-3                   # it moved
    assert drift(res) < 1e-10, drift(res)
    res = ldr.simulate_constrained(model, q0, v0, 0.2, 2e-3, tau=tau, contacts=contacts,
                                   projection=False, baumgarte=(100.0, 20.0))
    assert drift(res) < 1e-8, drift(res)


def test_bad_contacts_raise_input_errors():
    model, _ = _robot(SOLO)
    with pytest.raises(ldr.InputError, match="FL_FOOTX"):
        ldr.RigidContact(model, "FL_FOOTX")
    with pytest.raises(ldr.InputError, match="unknown kind '2d'"):
        ldr.RigidContact(model, "FL_FOOT", kind="2d")
    with pytest.raises(ldr.InputError, match="unknown reference 'world'"):
        ldr.RigidContact(model, "FL_FOOT", reference="world")
    with pytest.raises(ldr.InputError, match="placement"):
        ldr.RigidContact(model, "FL_FOOT", placement=np.ones((4, 4)))
    c = ldr.RigidContact(model, "FL_FOOT", "3d")
    q, v, tau = _states(model, 1)[0]
    with pytest.raises(ldr.InputError, match="two contacts on frame 'FL_FOOT'"):
        ldr.contact_dynamics(model, q, v, tau, [c, ldr.RigidContact(model, "FL_FOOT", "6d")])
    with pytest.raises(ldr.InputError, match="contacts is empty"):
        ldr.contact_dynamics(model, q, v, tau, [])
    with pytest.raises(ldr.InputError, match="RigidContact"):
        ldr.contact_dynamics(model, q, v, tau, ["FL_FOOT"])
    with pytest.raises(ldr.InputError, match="baumgarte"):
        ldr.contact_dynamics(model, q, v, tau, [c], baumgarte=(1.0, -1.0))
    with pytest.raises(ldr.InputError, match="restitution"):
        ldr.impulse_dynamics(model, q, v, [c], restitution=1.5)
    with pytest.raises(ldr.InputError, match="tau"):
        ldr.contact_dynamics(model, q, v, tau[:-1], [c])
    with pytest.raises(ldr.InputError, match="non-finite"):
        ldr.contact_dynamics(model, q, np.full(model.nv, np.nan), tau, [c])
    arm = ldr.load_urdf("arm7")
    root = next(n for n in arm.frame_names if arm.frame(n)[0] == 0)
    with pytest.raises(ldr.InputError, match=f"contact on {root!r}: this frame is fixed"):
        ldr.RigidContact(arm, root)
    other = ldr.RigidContact(arm, "panda_hand")
    with pytest.raises(ldr.InputError, match="another model"):
        ldr.contact_dynamics(model, q, v, tau, [other])


def test_compiled_path_equals_the_loop_machinery_path():
    """contact_dynamics / impulse_dynamics / contact_jacobian take one compiled kernel; with
    baumgarte=(0, 0) contact_dynamics takes the Python path of algorithms/constrained.py. Both
    agree, with external wrenches too, and a Data reused across contact sets stays right."""
    model, _ = _robot(SOLO)
    d = model.create_data()
    q, v, tau = _states(model, 1, seed=8)[0]
    f_ext = {"FL_LOWER_LEG": [1.0, -2.0, 3.0, 0.1, 0.2, -0.3], "base_link": [0, 0, 5.0, 0, 0, 0]}
    for kind, ref in (("3d", "local_world_aligned"), ("6d", "local"), ("3d", "local")):
        contacts = _contacts(model, FEET[:2], kind, ref)
        a, lam = ldr.contact_dynamics(model, q, v, tau, contacts, f_ext=f_ext, data=d)
        a0, lam0 = ldr.contact_dynamics(model, q, v, tau, contacts, f_ext=f_ext,
                                        baumgarte=(0.0, 0.0), data=d)
        assert rel_err(a, a0) < TOL and rel_err(lam, lam0) < TOL
        J = ldr.contact_jacobian(model, q, contacts, data=d)
        M, b = ldr.mass_matrix(model, q), ldr.nonlinear_effects(model, q, v)
        tau_ext = ldr.inverse_dynamics(model, q, v, a) - ldr.inverse_dynamics(
            model, q, v, a, f_ext=f_ext)
        assert np.max(np.abs(M @ a + b - tau - tau_ext - J.T @ lam)) < 1e-9 * (1 + np.abs(lam).max())
