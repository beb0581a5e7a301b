"""M(q)^-1 by the articulated-body recursion on unit torques (``ldr.mass_matrix_inverse``).

Oracle: Pinocchio's ``computeMinverse`` (upper triangle, mirrored) at random states of five
example-robot-data robots, three floating (solo12, talos_reduced, go2), with and without an
armature (set on Pinocchio's ``model.armature`` by joint name). Identities: M^-1 M = I and
M^-1 (tau - b) = forward_dynamics on the same robots, the joint zoo (every joint kind), General
joints and a model with mimic joints (inverted through M).
"""
import numpy as np
import pytest

import pinocchio as pin

import lie_dynamics_ros as ldr
from models import general_twin, zoo
from oracle import Oracle, erd, rel_err

TOL = 1e-10

ROBOTS = [("ur5", "ur_description/urdf/ur5_robot.urdf", False),
          ("xarm7", "xarm_description/urdf/xarm7.urdf", False),
          ("solo12", "solo_description/robots/solo12.urdf", True),
          ("talos_reduced", "talos_data/robots/talos_reduced.urdf", True),
          ("go2", "go2_description/urdf/go2.urdf", True)]
IDS = [r[0] for r in ROBOTS]
_CACHE = {}


def _setup(rid, armature):
    key = (rid, armature)
    if key not in _CACHE:
        rel, fb = next((p, f) for r, p, f in ROBOTS if r == rid)
        path = erd(rel)
        model = ldr.load_urdf(path, floating_base=fb)
        if armature:
            model = model.with_joint_dynamics(
                armature=np.random.default_rng(1).uniform(0.05, 0.5, model.nv))
        o = Oracle(model, path, fb)
        for name, vi, nv in zip(model.joint_names, model.joint_v_index, model.joint_nv):
            j = o.pm.joints[o.pm.getJointId(name)]
            o.pm.armature[j.idx_v:j.idx_v + nv] = model.armature[vi:vi + nv]
        _CACHE[key] = (model, o)
    return _CACHE[key]


def _states(model, n=3, seed=11):
    rng = np.random.default_rng(seed)
    return [(np.asarray(ldr.random_configuration(model, rng)), rng.uniform(-1, 1, model.nv),
             rng.uniform(-5, 5, model.nv)) for _ in range(n)]


def _check(what, ours, ref, tol=TOL):
    err = rel_err(ours, ref)
    assert err <= tol, f"{what}: relative deviation {err:.2e}"


@pytest.mark.parametrize("armature", [False, True], ids=["plain", "armature"])
@pytest.mark.parametrize("rid", IDS)
def test_equals_pinocchio_compute_minverse(rid, armature):
    model, o = _setup(rid, armature)
    assert model.armature.any() == armature
    for q, _, _ in _states(model):
        Mp = pin.computeMinverse(o.pm, o.pd, o.map.q_to_pin(q))
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        Minv = ldr.mass_matrix_inverse(model, q)
        _check("M^-1", Minv, o.map.mat_from_pin(Mp, q))
        assert np.array_equal(Minv, Minv.T)


def _identity_models():
    out = [(rid, _setup(rid, True)[0]) for rid in IDS]
    out.append(("zoo", zoo(seed=4, floating=True, mimic=False)))
    out.append(("zoo_two_roots", zoo(seed=4, floating=False, mimic=False)))  # chains on the world
    out.append(("zoo_mimic", zoo(seed=4, floating=True, mimic=True)))
    out.append(("general_twin", general_twin(seed=2)[1]))
    return [pytest.param(rid, m, id=rid) for rid, m in out]


@pytest.mark.parametrize("rid,model", _identity_models())
def test_inverts_the_mass_matrix(rid, model):
    for q, v, tau in _states(model, n=2, seed=4):
        Minv = ldr.mass_matrix_inverse(model, q)
        M = ldr.mass_matrix(model, q)
        # relative to M^-1's size: light distal links make it large on the quadrupeds
        scale = max(1.0, np.linalg.norm(Minv) * np.linalg.norm(M))
        err = np.linalg.norm(Minv @ M - np.eye(model.nv)) / scale
        assert err < 1e-13, f"{rid}: ||M^-1 M - I|| / (||M^-1|| ||M||) = {err:.1e}"
        b = ldr.nonlinear_effects(model, q, v)
        _check(f"{rid}: M^-1 (tau - b) = forward dynamics", Minv @ (tau - b),
               ldr.forward_dynamics(model, q, v, tau), 1e-9)


def test_general_joints_give_the_builtin_numbers():
    builtin, general = general_twin(seed=2)
    for q, _, _ in _states(builtin, n=2, seed=9):
        _check("M^-1", ldr.mass_matrix_inverse(general, q), ldr.mass_matrix_inverse(builtin, q))


def test_inputs_are_checked():
    model, _ = _setup("solo12", False)
    q = ldr.neutral_configuration(model)
    with pytest.raises(ldr.InputError, match=r"q must have shape \(19,\)"):
        ldr.mass_matrix_inverse(model, np.zeros(18))
    bad = q.copy()
    bad[3:7] = (0.0, 0.0, 0.0, 2.0)
    with pytest.raises(ldr.InputError, match="quaternion"):
        ldr.mass_matrix_inverse(model, bad)
    bad = q.copy()
    bad[9] = np.inf
    with pytest.raises(ldr.InputError, match=r"NaN or Inf\) in q"):
        ldr.mass_matrix_inverse(model, bad)


@pytest.mark.parametrize("mimic", [False, True], ids=["recursion", "mimic_through_M"])
def test_singular_mass_matrix_names_the_joint(mimic):
    b = ldr.ModelBuilder("massless_tip")
    b.add_link("base")
    b.add_link("arm", mass=1.0, com=(0.5, 0, 0), inertia=np.eye(3) * 0.01)
    b.add_link("tip")                                   # no mass, no inertia
    b.add_joint("shoulder", ldr.Revolute((0, 0, 1)), "base", "arm")
    b.add_joint("wrist", ldr.Revolute((0, 0, 1)), "arm", "tip")
    if mimic:
        b.add_link("twin", mass=1.0, com=(0.2, 0, 0), inertia=np.eye(3) * 0.01)
        b.add_joint("twin_joint", ldr.Revolute((0, 1, 0)), "arm", "twin",
                    mimic=("shoulder", 0.5, 0.0))
    model = b.build()
    assert model.has_mimic == mimic
    with pytest.raises(ldr.InputError, match="singular.*'wrist'"):
        ldr.mass_matrix_inverse(model, np.zeros(2))
