"""The public, read-only Model API (docs/api.md, "The Model"): topology, joints, index maps,
frames, loops given to the constructor, the per-thread default Data."""
import dataclasses
import os
import threading

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.model.model import JointInfo
from models import bundled, general_twin, zoo

FOUR_BAR = os.path.join(os.path.dirname(__file__), "..", "urdf", "loops", "four_bar.urdf")


def _models():
    return [bundled("arm7.urdf"), bundled("double_pendulum.urdf"), zoo(0), zoo(3, mimic=False),
            general_twin(0)[1]]


@pytest.mark.parametrize("k", range(5))
def test_topology_and_index_maps_agree_with_the_joints(k):
    m = _models()[k]
    assert m.nbodies == m.njoints + 1 == len(m.parents) == m.mi.shape[0] == len(m.joints) + 1
    assert m.parents[0] == -1 and m.body_joint_names[0] == "universe"
    for i, j in enumerate(m.joints):
        assert isinstance(j, JointInfo) and j.row == i + 1
        assert m.parents[j.row] == j.parent_row < j.row              # parents come first
        assert m.body_names[i] == j.child_link and m.body_joint_names[j.row] == j.name
        assert m.joint(j.name) is j
        assert m.frame(j.child_link)[0] == j.row
    actuated = [j for j in m.joints if j.mimic is None]
    assert [j.name for j in actuated] == m.joint_names
    for j in actuated:
        assert np.all(m.dof_first[j.v_index:j.v_index + j.nv] == j.v_index)
    assert len(m.dof_first) == m.nv
    # the vector part and the group joints (free: 7 q / 6 v, ball: 4 / 3) cover q and v once
    groups = [j for j in actuated if j.joint.kind in (3, 4)]
    q_cover = list(m.vector_q_index) + [i for j in groups for i in range(j.q_index,
                                                                          j.q_index + j.nq)]
    v_cover = list(m.vector_v_index) + [i for j in groups for i in range(j.v_index,
                                                                          j.v_index + j.nv)]
    assert sorted(q_cover) == list(range(m.nq)) and sorted(v_cover) == list(range(m.nv))
    continuous = [vi for vi, kind, lo, hi in zip(m.joint_v_index, m.joint_kinds,
                                                   m.lower_limits[m.joint_v_index],
                                                   m.upper_limits[m.joint_v_index])
                  if kind == "revolute" and lo == -np.inf and hi == np.inf]
    assert m.continuous_v.tolist() == continuous
    assert [j.name for j in m.general_joints] == \
        [j.name for j in m.joints if isinstance(j.joint, ldr.General)]
    assert m.has_general == bool(m.general_joints)
    assert list(m.frames) == m.frame_names
    assert all(m.frames[n] is m.frame(n) for n in m.frame_names)


def test_continuous_joints_are_found_and_wrapped():
    b = ldr.ModelBuilder("wheel_on_slide")
    b.add_link("base")
    b.add_link("carriage", mass=1.0, inertia=np.eye(3))
    b.add_link("arm", mass=1.0, inertia=np.eye(3))
    b.add_link("wheel", mass=1.0, inertia=np.eye(3))
    b.add_joint("slide", ldr.Prismatic((1, 0, 0)), "base", "carriage")
    b.add_joint("shoulder", ldr.Revolute((0, 1, 0)), "carriage", "arm", lower=-1, upper=1)
    b.add_joint("spin", ldr.Revolute((0, 0, 1)), "arm", "wheel")
    m = b.build()
    assert m.continuous_v.tolist() == [2]
    d = np.full(m.nv, 2 * np.pi - 0.1)
    np.testing.assert_allclose(ldr.difference(m, np.zeros(m.nq), d),
                               [2 * np.pi - 0.1, 2 * np.pi - 0.1, -0.1], rtol=0, atol=1e-12)


def test_nothing_on_a_model_can_be_changed(arm):
    arrays = ["parents", "dof_first", "continuous_v", "vector_q_index", "vector_v_index", "mi",
              "mc", "mI", "inertias", "effort_limits", "velocity_limits", "lower_limits",
              "upper_limits"]
    for name in arrays:
        a = getattr(arm, name)
        with pytest.raises(ValueError, match="read-only"):
            a[...] = 0
    with pytest.raises(ValueError, match="read-only"):
        arm.frames[arm.frame_names[-1]][1][0, 3] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        arm.joints[0].origin[0, 3] = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        arm.joints[0].parent_row = 3
    with pytest.raises(TypeError):
        arm.frames["elsewhere"] = (0, np.eye(4))
    for name in ("nc", "loops", "joints", "parents", "name", "anything_new"):
        with pytest.raises(AttributeError, match="frozen.*with_gravity"):
            setattr(arm, name, None)
    assert not hasattr(arm, "copy")


def test_default_data_is_one_per_thread(arm):
    mine = arm.default_data()
    assert arm.default_data() is mine and arm.create_data() is not mine
    assert isinstance(mine, ldr.Data) and mine.nv == arm.nv
    theirs = []
    t = threading.Thread(target=lambda: theirs.append(arm.default_data()))
    t.start()
    t.join()
    assert theirs[0] is not mine and theirs[0].nv == arm.nv
    # the public functions use it when called without data=
    q = ldr.random_configuration(arm, 4)
    ldr.forward_kinematics(arm, q)
    ldr.body_jacobian(arm, q, arm.body_names[-1])
    ref = arm.create_data()
    ldr.body_jacobian(arm, q, arm.body_names[-1], data=ref)
    assert np.array_equal(mine.world_translation, ref.world_translation)
    assert np.any(mine.world_translation != 0)


def test_loops_given_to_the_constructor_match_with_loops():
    four_bar = ldr.load_urdf(FOUR_BAR)
    loops = four_bar.loops
    assert loops and four_bar.nc == sum(lp.nc for lp in loops)
    tree = four_bar.with_loops(())
    assert tree.nc == 0 and tree.loops == () and tree.loop_tables is None
    with pytest.raises(ldr.InputError, match="no loop closures"):
        ldr.constraint_residual(tree, ldr.neutral_configuration(tree))
    built = ldr.Model(tree.name, tree.joints, tree.mI, tree.frames, tree.nq, tree.nv,
                      tree.total_mass, gravity=tree.gravity, loops=loops)
    t = built.loop_tables
    assert built.loops == loops and built.nc == four_bar.nc == t.nc
    assert list(t.offsets) == list(np.cumsum([0] + [lp.nc for lp in loops])[:-1])
    for lp, (a, b) in zip(loops, t.sides):
        assert (a.frame, b.frame) == (lp.link_a, lp.link_b)
        assert a.row == built.frame(lp.link_a)[0] and b.row == built.frame(lp.link_b)[0]
        assert not a.T.flags.writeable
    q = ldr.assemble(built, ldr.neutral_configuration(built) + 0.05)
    assert np.abs(ldr.constraint_residual(built, q)).max() < 1e-10
    np.testing.assert_array_equal(ldr.constraint_jacobian(built, q),
                                  ldr.constraint_jacobian(four_bar, q))
    moon = built.with_gravity((0.0, 0.0, -1.62))
    assert moon.loops == loops and moon.nc == built.nc and moon.loop_tables is not t


def test_a_bad_closure_is_refused_by_the_constructor_naming_it():
    tree = ldr.load_urdf(FOUR_BAR).with_loops(())
    bad = ldr.LoopClosure("strut", "revolute", tree.frame_names[1], "no_such_link")
    with pytest.raises(ldr.InputError, match="'strut': unknown link 'no_such_link'"):
        tree.with_loops([bad])
    with pytest.raises(ldr.InputError, match="LoopClosure objects, got dict"):
        tree.with_loops([bad.as_dict()])


def test_a_pickled_model_addresses_the_same_frames():
    """A Dask worker gets the model by pickle: links and joints still name the same frames."""
    import pickle
    m = bundled("arm7.urdf")
    back = pickle.loads(pickle.dumps(m))
    assert dict(back.joint_frames) == dict(m.joint_frames) and back.frame_names == m.frame_names
    q = ldr.random_configuration(m, rng=3)
    for name in (m.frame_names[-1], m.joints[2].name):
        np.testing.assert_array_equal(ldr.frame_jacobian(back, q, name, reference="world"),
                                      ldr.frame_jacobian(m, q, name, reference="world"))
    with pytest.raises(TypeError):
        back.joint_frames["x"] = "y"                     # still read-only
