"""Frames in every reference: the ``kinematics`` pass and its reads, the one-shot functions, and
frame addressing (links, joints, "joint:NAME").

Oracle: Pinocchio's forwardKinematics + computeJointJacobians +
computeJointJacobiansTimeVariation + updateFramePlacements and its getFrame* reads (LOCAL,
WORLD, LOCAL_WORLD_ALIGNED) and computeFrameJacobian, on five example-robot-data robots, three
floating (solo12, talos_reduced, go2 with point feet), at random states. Identities on the same
robots and on the joint zoo (every joint kind, a fixed link, a mimic joint, General joints):
J v = twist, world = Ad(T) local, J a + dJ/dt v = the derivative of the twist, dJ/dt against
central differences of J along q(t) = integrate(q, v t).
"""
import numpy as np
import pytest

import pinocchio as pin

import lie_dynamics_ros as ldr
from lie_dynamics_ros.lie import se3
from models import general_twin, zoo
from oracle import Oracle, erd, rel_err

TOL = 1e-10
REFS = {"local": pin.LOCAL, "world": pin.WORLD, "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}
ROBOTS = [("ur5", "ur_description/urdf/ur5_robot.urdf", False),
          ("xarm7", "xarm_description/urdf/xarm7.urdf", False),
          ("solo12", "solo_description/robots/solo12.urdf", True),
          ("talos_reduced", "talos_data/robots/talos_reduced.urdf", True),
          ("go2", "go2_description/urdf/go2.urdf", True)]
IDS = [r[0] for r in ROBOTS]
_CACHE = {}


def _setup(rid):
    if rid not in _CACHE:
        rel, fb = next((p, f) for r, p, f in ROBOTS if r == rid)
        path = erd(rel)
        model = ldr.load_urdf(path, floating_base=fb)
        _CACHE[rid] = (model, Oracle(model, path, fb))
    return _CACHE[rid]


def _states(model, n=2, seed=11):
    rng = np.random.default_rng(seed)
    return [(np.asarray(ldr.random_configuration(model, rng)), rng.uniform(-1, 1, model.nv),
             rng.uniform(-2, 2, model.nv)) for _ in range(n)]


def _check(what, ours, ref, tol=TOL):
    err = rel_err(ours, ref)
    assert err <= tol, f"{what}: relative deviation {err:.2e}"


def _pin_pass(o, q, v, a):
    qp, vp, ap = o._qva(q, v, a)
    pin.forwardKinematics(o.pm, o.pd, qp, vp, ap)
    pin.computeJointJacobians(o.pm, o.pd, qp)
    pin.computeJointJacobiansTimeVariation(o.pm, o.pd, qp, vp)
    pin.updateFramePlacements(o.pm, o.pd)
    return qp


def _links(model, o):
    """Every link Pinocchio has as a BODY frame (some URDF links of talos are merged away)."""
    return [n for n in model.frame_names if o.pm.existFrame(n, pin.BODY)]


@pytest.mark.parametrize("rid", IDS)
def test_every_link_frame_equals_pinocchio_in_every_reference(rid):
    model, o = _setup(rid)
    for q, v, a in _states(model):
        qp = _pin_pass(o, q, v, a)
        kin = ldr.kinematics(model, q, v, a)
        for link in _links(model, o):
            fid = o.pm.getFrameId(link, pin.BODY)
            _check(f"{link} placement", kin.placement(link), o.pd.oMf[fid].homogeneous)
            for name, rf in REFS.items():
                what = f"{link} {name}"
                J = o.map.jac_from_pin(pin.getFrameJacobian(o.pm, o.pd, fid, rf), q)
                dJ = o.map.jac_from_pin(pin.getFrameJacobianTimeVariation(o.pm, o.pd, fid, rf), q)
                _check(what + " J", kin.jacobian(link, name), J)
                _check(what + " dJ/dt", kin.jacobian_time_variation(link, name), dJ)
                _check(what + " twist", kin.velocity(link, name),
                       pin.getFrameVelocity(o.pm, o.pd, fid, rf).vector)
                _check(what + " acceleration", kin.acceleration(link, name),
                       pin.getFrameAcceleration(o.pm, o.pd, fid, rf).vector)
                _check(what + " classical acceleration",
                       kin.acceleration(link, name, classical=True),
                       pin.getFrameClassicalAcceleration(o.pm, o.pd, fid, rf).vector)
        link = _links(model, o)[-1]
        fid = o.pm.getFrameId(link, pin.BODY)
        for name, rf in REFS.items():        # the one-shot calls, against Pinocchio's
            J = pin.computeFrameJacobian(o.pm, o.pd, qp, fid, rf)
            _check(f"frame_jacobian {name}", ldr.frame_jacobian(model, q, link, name),
                   o.map.jac_from_pin(J, q))
            _pin_pass(o, q, v, a)
            _check(f"frame_jacobian_time_variation {name}",
                   ldr.frame_jacobian_time_variation(model, q, v, link, name),
                   o.map.jac_from_pin(pin.getFrameJacobianTimeVariation(o.pm, o.pd, fid, rf), q))
            _check(f"frame_velocity {name}", ldr.frame_velocity(model, q, v, link, name),
                   pin.getFrameVelocity(o.pm, o.pd, fid, rf).vector)
            for classical in (False, True):
                get = pin.getFrameClassicalAcceleration if classical else pin.getFrameAcceleration
                _check(f"frame_acceleration {name} {classical}",
                       ldr.frame_acceleration(model, q, v, a, link, name, classical=classical),
                       get(o.pm, o.pd, fid, rf).vector)
        _check("frame_pose", ldr.frame_pose(model, q, link), o.pd.oMf[fid].homogeneous)


@pytest.mark.parametrize("rid", IDS)
def test_all_placements_and_joint_frames_equal_pinocchio(rid):
    model, o = _setup(rid)
    for q, v, a in _states(model, n=1):
        qp = o.map.q_to_pin(q)
        pin.framesForwardKinematics(o.pm, o.pd, qp)
        links = _links(model, o)
        ref = {n: o.pd.oMf[o.pm.getFrameId(n, pin.BODY)].homogeneous for n in links}
        for poses in (ldr.kinematics(model, q).placements(), ldr.frame_placements(model, q)):
            assert poses.shape == (len(model.frame_names), 4, 4)
            by_name = dict(zip(model.frame_names, poses))
            for n in links:
                _check(f"placements {n}", by_name[n], ref[n])
        kin = ldr.kinematics(model, q, v, a)
        pin.computeJointJacobians(o.pm, o.pd, qp)
        joints = [f for f in o.pm.frames if f.type in (pin.JOINT, pin.FIXED_JOINT)
                  and f.name in model.joint_frames]
        assert {f.name for f in joints} >= set(model.joint_names)
        for f in joints:                     # a joint name gives Pinocchio's joint frame
            fid = o.pm.getFrameId(f.name, f.type)
            _check(f"joint {f.name} placement", kin.placement(f.name), o.pd.oMf[fid].homogeneous)
            _check(f"joint {f.name} J", kin.jacobian("joint:" + f.name, "world"),
                   o.map.jac_from_pin(pin.getFrameJacobian(o.pm, o.pd, fid, pin.WORLD), q))


def _models():
    out = [(rid, _setup(rid)[0]) for rid in ("solo12", "ur5")]
    out.append(("zoo", zoo(seed=4, floating=True, mimic=True)))
    out.append(("zoo_fixed_base", zoo(seed=5, floating=False, mimic=False)))
    out.append(("general_twin", general_twin(seed=2)[1]))
    return out


@pytest.mark.parametrize("rid, model", _models(), ids=[r for r, _ in _models()])
def test_identities_and_finite_differences(rid, model):
    rng = np.random.default_rng(3)
    q = np.asarray(ldr.random_configuration(model, rng))
    v, a = rng.uniform(-1, 1, model.nv), rng.uniform(-1, 1, model.nv)
    kin = ldr.kinematics(model, q, v, a)
    h = 1e-5
    kp = ldr.kinematics(model, ldr.integrate(model, q, v, h))
    km = ldr.kinematics(model, ldr.integrate(model, q, v, -h))
    for frame in list(model.frame_names) + list(model.joint_frames):
        T = kin.placement(frame)
        Jl = kin.jacobian(frame, "local")
        Jw = kin.jacobian(frame, "world")
        Jlwa = kin.jacobian(frame, "local_world_aligned")
        np.testing.assert_allclose(Jw, se3.Ad(T) @ Jl, atol=1e-11)
        Rb = np.kron(np.eye(2), T[:3, :3])
        np.testing.assert_allclose(Jlwa, Rb @ Jl, atol=1e-11)
        for ref, J in (("local", Jl), ("world", Jw), ("local_world_aligned", Jlwa)):
            np.testing.assert_allclose(J @ v, kin.velocity(frame, ref), atol=1e-11)
            dJ = kin.jacobian_time_variation(frame, ref)
            fd = (kp.jacobian(frame, ref) - km.jacobian(frame, ref)) / (2 * h)
            assert np.abs(dJ - fd).max() <= 1e-6 * max(1.0, np.abs(dJ).max()), (frame, ref)
            # J a + dJ/dt v is the derivative of the twist in that reference: the spatial
            # acceleration in local and world, the classical one in local_world_aligned
            acc = kin.acceleration(frame, ref, classical=(ref == "local_world_aligned"))
            np.testing.assert_allclose(J @ a + dJ @ v, acc, atol=1e-10)
            # the one-shot calls (a pass on the frame's chain only) give the same numbers
            np.testing.assert_allclose(ldr.frame_jacobian(model, q, frame, ref), J, atol=1e-13)
            np.testing.assert_allclose(ldr.frame_jacobian_time_variation(model, q, v, frame, ref),
                                       dJ, atol=1e-13)
            np.testing.assert_allclose(ldr.frame_acceleration(model, q, v, a, frame, ref),
                                       kin.acceleration(frame, ref), atol=1e-13)
        np.testing.assert_allclose(ldr.frame_pose(model, q, frame), T, atol=1e-14)
        # the twist against differences of the placement: log(T(-h)^-1 T(+h)) / 2h
        Tp, Tm = kp.placement(frame), km.placement(frame)
        np.testing.assert_allclose(se3.log(se3.inv(Tm) @ Tp) / (2 * h),
                                   kin.velocity(frame, "local"), atol=1e-6)


def test_general_joints_give_the_builtin_numbers():
    builtin, general = general_twin(seed=2)
    q = np.asarray(ldr.random_configuration(builtin, 1))
    v, a = np.linspace(-1, 1, builtin.nv), np.linspace(1, -0.5, builtin.nv)
    kb, kg = ldr.kinematics(builtin, q, v, a), ldr.kinematics(general, q, v, a)
    for f in builtin.frame_names:
        for ref in REFS:
            np.testing.assert_allclose(kg.jacobian(f, ref), kb.jacobian(f, ref), atol=1e-12)
            np.testing.assert_allclose(kg.jacobian_time_variation(f, ref),
                                       kb.jacobian_time_variation(f, ref), atol=1e-12)
            np.testing.assert_allclose(kg.acceleration(f, ref), kb.acceleration(f, ref),
                                       atol=1e-12)


def test_the_result_owns_its_arrays():
    model = _setup("ur5")[0]
    q1, q2 = ldr.random_configuration(model, 1), ldr.random_configuration(model, 2)
    k1 = ldr.kinematics(model, q1)
    T1, J1 = k1.placement("tool0"), k1.jacobian("tool0", "world")
    k2 = ldr.kinematics(model, q2)
    ldr.frame_jacobian(model, q2, "tool0")
    assert not np.allclose(k2.placement("tool0"), T1)
    np.testing.assert_array_equal(k1.placement("tool0"), T1)
    np.testing.assert_array_equal(k1.jacobian("tool0", "world"), J1)
    np.testing.assert_array_equal(ldr.body_jacobian(model, q1, "tool0"),
                                  k1.jacobian("tool0", "local"))


def _collision_model():
    """A link named like a joint: link "elbow" hangs from joint "wrist", joint "elbow" moves
    link "forearm"."""
    b = ldr.ModelBuilder("collide")
    for ln in ("base", "forearm", "elbow"):
        b.add_link(ln, mass=1.0, inertia=np.eye(3) * 1e-2)
    b.add_joint("elbow", ldr.Revolute((0, 0, 1)), "base", "forearm",
                origin=se3.make(np.eye(3), [0, 0, 0.5]))
    b.add_joint("wrist", ldr.Revolute((0, 1, 0)), "forearm", "elbow",
                origin=se3.make(np.eye(3), [0.3, 0, 0]))
    return b.build()


def test_a_link_wins_over_a_joint_of_the_same_name():
    m = _collision_model()
    q = np.array([0.4, -0.7])
    kin = ldr.kinematics(m, q)
    np.testing.assert_array_equal(kin.placement("elbow"), ldr.forward_kinematics(m, q)["elbow"])
    np.testing.assert_array_equal(kin.placement("joint:elbow"), kin.placement("forearm"))
    np.testing.assert_array_equal(kin.placement("wrist"), kin.placement("elbow"))
    assert not np.allclose(kin.placement("elbow"), kin.placement("joint:elbow"))


def test_fixed_and_mimic_joints_have_frames():
    m = zoo(seed=4, floating=True, mimic=True)
    assert m.frame("fix") is m.frame("l_fix") and m.frame("mim") is m.frame("l_mim")
    assert m.frame("root_joint") is m.frame("base")
    assert "fix" in m.joint_frames and "fix" not in m.joint_names
    for name in list(m.frame_names) + list(m.joint_frames):    # frame_id: the same frame
        assert m.frames[m.frame_names[m.frame_id(name)]] is m.frame(name)
    # a rebuilt model (other gravity) keeps its fixed joints' frames
    assert m.with_gravity((0, 0, -1.0)).frame("fix")[0] == m.frame("fix")[0]


def test_bad_names_references_and_arguments():
    model = _setup("ur5")[0]
    q = ldr.neutral_configuration(model)
    kin = ldr.kinematics(model, q)
    with pytest.raises(ldr.InputError, match=r"unknown frame 'wrist_3_lnk'.*nearest.*"
                       r"'wrist_3_link'.*joint name") as e:
        kin.placement("wrist_3_lnk")
    assert "joint:NAME" in str(e.value)
    with pytest.raises(ldr.InputError, match=r"nearest.*'elbow_joint'"):
        ldr.frame_jacobian(model, q, "elbow_jont")
    with pytest.raises(ldr.InputError, match="unknown frame 'joint:forearm_link'"):
        kin.placement("joint:forearm_link")         # a link is not a joint
    with pytest.raises(ldr.InputError, match="reference must be one of"):
        kin.jacobian("tool0", "LOCAL")
    with pytest.raises(ldr.InputError, match="reference must be one of"):
        ldr.frame_velocity(model, q, np.zeros(model.nv), "tool0", reference=pin.WORLD)
    with pytest.raises(ldr.InputError, match="this needs v"):
        kin.velocity("tool0")
    with pytest.raises(ldr.InputError, match="this needs v"):
        kin.jacobian_time_variation("tool0")
    with pytest.raises(ldr.InputError, match="this needs a"):
        ldr.kinematics(model, q, np.zeros(model.nv)).acceleration("tool0")
    full = ldr.kinematics(model, q, np.zeros(model.nv), np.zeros(model.nv))
    with pytest.raises(ldr.InputError, match="classical must be True or False"):
        full.acceleration("tool0", classical="yes")
    with pytest.raises(ldr.InputError, match="acceleration a needs the velocity v"):
        ldr.kinematics(model, q, a=np.zeros(model.nv))
    with pytest.raises(ldr.InputError, match=r"v must have shape \(6,\)"):
        ldr.kinematics(model, q, np.zeros(3))
    with pytest.raises(ldr.InputError, match="non-finite"):
        ldr.kinematics(model, q, np.full(model.nv, np.nan))
    with pytest.raises(ldr.InputError, match="non-finite"):
        ldr.frame_acceleration(model, q, np.zeros(model.nv), np.full(model.nv, np.inf), "tool0")
    with pytest.raises(ldr.InputError, match="a is required"):
        ldr.frame_acceleration(model, q, np.zeros(model.nv), None, "tool0")
    with pytest.raises(ldr.InputError, match="a frame is a link or joint name"):
        kin.placement(["tool0"])


def test_a_chain_deeper_than_the_one_shot_scratch():
    """70 links in a row: the one-shot pass keeps its chain on the heap past 64 bodies."""
    b = ldr.ModelBuilder("long_chain")
    b.add_link("l0", mass=1.0, inertia=np.eye(3) * 1e-2)
    for k in range(1, 71):
        b.add_link(f"l{k}", mass=1.0, inertia=np.eye(3) * 1e-2)
        b.add_joint(f"j{k}", ldr.Revolute((0, 1, 1) if k % 2 else (1, 0, 0)), f"l{k - 1}",
                    f"l{k}", origin=se3.make(np.eye(3), [0.1, 0, 0]))
    m = b.build()
    rng = np.random.default_rng(0)
    q, v = rng.uniform(-1, 1, m.nv), rng.uniform(-1, 1, m.nv)
    kin = ldr.kinematics(m, q, v)
    for frame in ("l70", "j40", "l3"):
        for ref in REFS:
            np.testing.assert_allclose(ldr.frame_jacobian(m, q, frame, ref),
                                       kin.jacobian(frame, ref), atol=1e-13)
            np.testing.assert_allclose(ldr.frame_jacobian_time_variation(m, q, v, frame, ref),
                                       kin.jacobian_time_variation(frame, ref), atol=1e-12)
    assert np.abs(kin.jacobian("l70", "world")[:, :70]).max() > 0.1


def _two_arms(offset):
    """Two-link arms of equal sizes and frame names whose tool frames (a link on a fixed
    joint, so the frame table holds its offset) differ."""
    b = ldr.ModelBuilder(f"arm_{offset}")
    for ln in ("base", "upper", "fore"):
        b.add_link(ln, mass=1.0, inertia=np.eye(3) * 1e-2)
    b.add_link("tip")
    b.add_joint("shoulder", ldr.Revolute((0, 0, 1)), "base", "upper")
    b.add_joint("elbow", ldr.Revolute((0, 1, 0)), "upper", "fore",
                origin=se3.make(np.eye(3), [0.3, 0, 0]))
    b.add_joint("tool", ldr.Fixed(), "fore", "tip", origin=se3.make(np.eye(3), [offset, 0, 0]))
    return b.build(), "tip"


def test_a_data_shared_by_two_models_gives_each_its_frames():
    """The fast paths keep the frame table per model and Data: a Data reloaded with another
    model of the same sizes serves that model's frames, and a result keeps its own."""
    (m1, tip1), (m2, tip2) = _two_arms(0.3), _two_arms(0.7)
    q = np.array([0.4, -0.9])
    d = m1.create_data()
    ref1, ref2 = ldr.forward_kinematics(m1, q)[tip1], ldr.forward_kinematics(m2, q)[tip2]
    k1 = ldr.kinematics(m1, q, data=d)
    for _ in range(2):      # the first call builds the table, the second reads it
        np.testing.assert_allclose(ldr.frame_pose(m1, q, tip1, data=d), ref1, atol=1e-14)
        np.testing.assert_allclose(ldr.frame_pose(m2, q, tip2, data=d), ref2, atol=1e-14)
        np.testing.assert_allclose(ldr.kinematics(m2, q, data=d).placement(tip2), ref2,
                                   atol=1e-14)
        np.testing.assert_allclose(ldr.frame_placements(m1, q, data=d)[m1.frame_id(tip1)], ref1,
                                   atol=1e-14)
    np.testing.assert_allclose(k1.placement(tip1), ref1, atol=1e-14)
    assert not np.allclose(ref1, ref2)


def test_threads_with_their_own_data_agree_with_one_thread():
    import threading
    model = _setup("talos_reduced")[0]
    states = _states(model, n=4, seed=5)
    want = [(ldr.frame_jacobian(model, q, "left_sole_link", "world"),
             ldr.kinematics(model, q, v, a).acceleration("right_sole_link")) for q, v, a in states]
    got, errors = {}, []

    def work(k):
        try:
            for _ in range(200):
                for i, (q, v, a) in enumerate(states):
                    J = ldr.frame_jacobian(model, q, "left_sole_link", "world")
                    acc = ldr.kinematics(model, q, v, a).acceleration("right_sole_link")
                    got[k, i] = (J, acc)
                    assert np.array_equal(J, want[i][0]) and np.array_equal(acc, want[i][1])
        except AssertionError as e:
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(got) == 3 * len(states)


def test_the_fast_paths_refuse_what_the_checked_path_refuses():
    """float64 vectors take the compiled entries first; any other input, a wrong length or a
    non-finite value ends in the checked path's InputError, and lists give the same numbers."""
    model = _setup("ur5")[0]
    q = np.asarray(ldr.random_configuration(model, 3))
    v = np.linspace(-1, 1, model.nv)
    ldr.frame_jacobian(model, q, "tool0")          # the entries are compiled
    np.testing.assert_array_equal(ldr.frame_jacobian(model, list(q), "tool0", "world"),
                                  ldr.frame_jacobian(model, q, "tool0", "world"))
    np.testing.assert_array_equal(ldr.frame_velocity(model, q, list(v), "tool0"),
                                  ldr.frame_velocity(model, q, v, "tool0"))
    np.testing.assert_array_equal(ldr.kinematics(model, q.astype(np.float32)).placement("tool0"),
                                  ldr.kinematics(model, q.astype(np.float32).astype(float))
                                  .placement("tool0"))
    for call in (lambda x: ldr.frame_jacobian(model, x, "tool0"),
                 lambda x: ldr.frame_pose(model, x, "tool0"),
                 lambda x: ldr.frame_placements(model, x),
                 lambda x: ldr.kinematics(model, x, v).velocity("tool0"),
                 lambda x: ldr.frame_acceleration(model, x, v, v, "tool0", classical=True)):
        with pytest.raises(ldr.InputError, match=r"q must have shape \(6,\)"):
            call(np.zeros(model.nq + 1))
        with pytest.raises(ldr.InputError, match="non-finite.*q"):
            call(np.full(model.nq, np.nan))
    with pytest.raises(ldr.InputError, match="classical must be True or False"):
        ldr.frame_acceleration(model, q, v, v, "tool0", classical=1.0)
    with pytest.raises(ldr.InputError, match="reference must be one of"):
        ldr.kinematics(model, q).jacobian("tool0", ["local"])
    with pytest.raises(ldr.InputError, match="a frame is a link or joint name"):
        ldr.frame_jacobian(model, q, ["tool0"])
    with pytest.raises(ldr.InputError, match="v is required"):
        ldr.frame_acceleration(model, q, None, v, "tool0")
    with pytest.raises(ldr.InputError, match="acceleration a needs the velocity v"):
        ldr.kinematics(model, q, None, v)
