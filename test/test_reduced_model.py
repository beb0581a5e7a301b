"""ldr.reduced_model against Pinocchio's buildReducedModel (test oracle only), and the identity
that defines it: the reduced dynamics are the full ones with the locked joints held at q_ref
(M_red = M[kept, kept], tau_red = tau[kept] at zero locked velocity and acceleration, every
frame where it was)."""
import numpy as np
import pytest

import lie_dynamics_ros as ldr

pin = pytest.importorskip("pinocchio")
from oracle import PinMap, build_pin_model, bundled, erd, rel_err  # noqa: E402

TALOS_ARMS = [f"arm_{s}_{k}_joint" for s in ("left", "right") for k in range(1, 8)]
ROBOTS = [  # (urdf, floating base, locked joints)
    (erd("ur_description/urdf/ur5_robot.urdf"), False, ["elbow_joint", "wrist_2_joint"]),
    (erd("talos_data/robots/talos_reduced.urdf"), True, TALOS_ARMS),
    (erd("solo_description/robots/solo12.urdf"), True, ["FL_HFE", "FL_KFE", "HR_HAA"]),
    (erd("talos_data/robots/talos_reduced.urdf"), True, ["root_joint", "torso_1_joint"]),
]
IDS = ["ur5", "talos_arms", "solo12", "talos_root"]


def _full_q(model, reduced, q_ref, q_red):
    """The full model's q: q_ref with the kept joints' entries from q_red."""
    q = np.array(q_ref)
    for name, qi, nq in zip(reduced.joint_names, reduced.joint_q_index, reduced.joint_nq):
        old = model.joint_q_index[model.joint_names.index(name)]
        q[old:old + nq] = q_red[qi:qi + nq]
    return q


def _kept_v(model, reduced):
    """Indices into the full v of the reduced v's entries."""
    idx = []
    for name, nv in zip(reduced.joint_names, reduced.joint_nv):
        old = model.joint_v_index[model.joint_names.index(name)]
        idx += range(old, old + nv)
    return np.array(idx)


@pytest.mark.parametrize("urdf, floating, locked", ROBOTS, ids=IDS)
def test_inverse_dynamics_and_mass_matrix_equal_build_reduced_model(urdf, floating, locked):
    model = ldr.load_urdf(urdf, floating_base=floating, inertia_check="warn")
    pm = build_pin_model(urdf, floating_base=floating)
    q_ref = ldr.random_configuration(model, rng=7)
    reduced = ldr.reduced_model(model, locked, q_ref)
    assert reduced.joint_names == [n for n in model.joint_names if n not in locked]
    pr = pin.buildReducedModel(pm, [pm.getJointId(n) for n in locked],
                               PinMap(model, pm).q_to_pin(q_ref))
    m, dr = PinMap(reduced, pr), pr.createData()
    rng = np.random.default_rng(3)
    for k in range(5):
        q = ldr.random_configuration(reduced, rng=k)
        v, a = rng.normal(size=reduced.nv), rng.normal(size=reduced.nv)
        qp, vp, ap = m.q_to_pin(q), m.v_to_pin(v, q), m.a_to_pin(a, q, v)
        tau = ldr.inverse_dynamics(reduced, q, v, a)
        assert rel_err(tau, m.tau_from_pin(pin.rnea(pr, dr, qp, vp, ap), q)) < 1e-10
        Mp = pin.crba(pr, dr, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        assert rel_err(ldr.mass_matrix(reduced, q), m.mat_from_pin(Mp, q)) < 1e-10
    assert abs(reduced.total_mass - model.total_mass) < 1e-12 * model.total_mass


def _mimic_arm():
    """A 4-link arm whose last joint mimics the second, with damping, armature and another
    gravity: what the rebuild must carry over."""
    b = ldr.ModelBuilder("mimic_arm")
    b.add_link("base")
    for k in range(4):
        b.add_link(f"l{k}", mass=1.0 + k, com=(0.1, 0.02 * k, 0.2),
                   inertia=np.diag([0.02, 0.03, 0.01 + 0.01 * k]))
    b.add_link("tool")
    T = np.eye(4)
    T[:3, 3] = (0.0, 0.05, 0.3)
    axes = [(0, 0, 1), (0, 1, 0), (1, 0, 0), (0, 1, 0)]
    for k in range(4):
        b.add_joint(f"j{k}", ldr.Revolute(axes[k]), "base" if k == 0 else f"l{k - 1}", f"l{k}",
                    origin=T, damping=0.1 * (k + 1), lower=-2.0, upper=2.0,
                    mimic=("j1", -0.5, 0.1) if k == 3 else None)
    b.add_joint("tool_mount", ldr.Fixed(), "l3", "tool", origin=T)
    model = b.build().with_joint_dynamics(armature=[0.1, 0.2, 0.3])
    return model.with_gravity((0.5, 0.0, -9.0))


@pytest.mark.parametrize("locked", [["j1"], ["j0"], ["j2"], ["j0", "j2"]])
def test_the_reduced_dynamics_are_the_full_ones_held_at_q_ref(locked):
    model = _mimic_arm()
    q_ref = np.array([0.3, -0.7, 1.1])
    reduced = ldr.reduced_model(model, locked, q_ref)
    kept = _kept_v(model, reduced)
    assert np.array_equal(reduced.gravity, model.gravity)
    assert np.array_equal(reduced.armature, model.armature[kept])
    assert np.array_equal(reduced.joint_damping, model.joint_damping[kept])
    assert np.array_equal(reduced.lower_limits, model.lower_limits[kept])
    assert set(reduced.frame_names) == set(model.frame_names)
    assert ("j3" in reduced.mimic_joints) == ("j1" not in locked)
    rng = np.random.default_rng(1)
    for _ in range(3):
        q = rng.uniform(-1, 1, reduced.nq)
        v, a = rng.normal(size=reduced.nv), rng.normal(size=reduced.nv)
        qf, vf, af = _full_q(model, reduced, q_ref, q), np.zeros(model.nv), np.zeros(model.nv)
        vf[kept], af[kept] = v, a
        M = ldr.mass_matrix(model, qf)
        assert np.abs(ldr.mass_matrix(reduced, q) - M[np.ix_(kept, kept)]).max() < 1e-12
        tau = ldr.inverse_dynamics(model, qf, vf, af)[kept]
        assert np.abs(ldr.inverse_dynamics(reduced, q, v, a) - tau).max() < 1e-12
        full, red = ldr.forward_kinematics(model, qf), ldr.forward_kinematics(reduced, q)
        assert max(np.abs(full[f] - red[f]).max() for f in full) < 1e-12


def test_locking_everything_leaves_a_rigid_model_and_nothing_changes_when_locking_nothing():
    model = _mimic_arm()
    q_ref = np.array([0.3, -0.7, 1.1])
    same = ldr.reduced_model(model, [], q_ref)
    q = np.array([0.1, 0.2, 0.3])
    assert same.joint_names == model.joint_names
    assert np.abs(ldr.mass_matrix(same, q) - ldr.mass_matrix(model, q)).max() < 1e-14
    rigid = ldr.reduced_model(model, model.joint_names, q_ref)
    assert rigid.nq == rigid.nv == 0 and abs(rigid.total_mass - model.total_mass) < 1e-12


def test_bad_requests_raise_input_errors_naming_them():
    model = _mimic_arm()
    q_ref = np.zeros(3)
    with pytest.raises(ldr.InputError, match=r"unknown joint 'j9'.*\['j0', 'j1', 'j2'\]"):
        ldr.reduced_model(model, ["j9"], q_ref)
    with pytest.raises(ldr.InputError, match="joint 'j3' mimics 'j1': lock that joint"):
        ldr.reduced_model(model, ["j3"], q_ref)
    with pytest.raises(ldr.InputError, match="q"):
        ldr.reduced_model(model, ["j0"], np.zeros(4))
    with pytest.raises(ldr.InputError, match="non-finite"):
        ldr.reduced_model(model, ["j0"], [0, np.nan, 0])
    loops = ldr.load_urdf(bundled("loops/four_bar.urdf"))
    with pytest.raises(ldr.InputError, match="loop closures"):
        ldr.reduced_model(loops, [loops.joint_names[0]], ldr.neutral_configuration(loops))
