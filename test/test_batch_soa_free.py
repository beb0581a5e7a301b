"""The SoA batched RNEA, ABA and CRBA on floating-base robots (a free root joint, then
revolute joints): equal to ``ldr.inverse_dynamics`` / ``forward_dynamics`` / ``mass_matrix``
row by row (to 1e-12 of each row's largest entry) and to Pinocchio's ``rneaInParallel`` /
``abaInParallel`` / ``crba``; bad rows (NaN, a non-unit quaternion) named; a free joint
that is not the root's, or one with armature, refused with a sentence naming it.
"""
import numpy as np
import pinocchio as pin
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms.batch_soa import (MIN_STATES, inverse_dynamics_soa, soa_plan,
                                                   soa_unsupported)
from lie_dynamics_ros.algorithms.batch_soa_aba import forward_dynamics_soa
from lie_dynamics_ros.algorithms.batch_soa_crba import mass_matrix_soa
from lie_dynamics_ros.algorithms.tree_plan import tree_plan
from lie_dynamics_ros.kernels import soa as KS
from lie_dynamics_ros.lie import so3
from oracle import PinMap, build_pin_model, erd

TOL = 1e-12
PATHS = {"centauro": erd("centauro_description/urdf/centauro.urdf"),
         "go2": erd("go2_description/urdf/go2.urdf"),
         "solo12": erd("solo_description/robots/solo12.urdf"),
         "talos_reduced": erd("talos_data/robots/talos_reduced.urdf")}
_CACHE = {}


def model(name):
    if name not in _CACHE:
        _CACHE[name] = (free_tree() if name == "free_tree" else
                        ldr.load_urdf(PATHS[name], floating_base=True))
    return _CACHE[name]


def free_tree(seed=0, free_below=False):
    """A free body on the world with a rotated and shifted joint origin, carrying a branching
    tree of revolute and prismatic joints about arbitrary axes (``free_below``: and a second
    free joint, below a body)."""
    rng = np.random.default_rng(seed)
    b = ldr.ModelBuilder("free_tree")
    specs = [("float_a", ldr.Free(), None), ("r1", ldr.Revolute(rng.normal(size=3)), "l_float_a"),
             ("p1", ldr.Prismatic(rng.normal(size=3)), "l_r1"),
             ("r2", ldr.Revolute((0, 0, -1)), "l_float_a"),
             ("r3", ldr.Revolute((1, 0, 0)), "l_r2")]
    if free_below:
        specs.append(("float_b", ldr.Free(), "l_r2"))
    for name, joint, parent in specs:
        m, (x, y, z) = rng.uniform(0.5, 2.0), rng.uniform(0.05, 0.5, 3)
        b.add_link("l_" + name, mass=m, com=rng.normal(size=3) * 0.1,
                   inertia=m / 12 * np.diag([y * y + z * z, x * x + z * z, x * x + y * y]),
                   com_rotation=so3.exp(rng.normal(size=3)))
        origin = np.eye(4)
        origin[:3, :3], origin[:3, 3] = so3.exp(rng.normal(size=3)), rng.normal(size=3) * 0.3
        b.add_joint(name, joint, parent, "l_" + name, origin=origin)
    return b.build()


def states(m, N, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.array([ldr.random_configuration(m, rng) for _ in range(N)]).reshape(N, m.nq)
    return Q, rng.uniform(-2, 2, (N, m.nv)), rng.uniform(-3, 3, (N, m.nv))


def per_state(m, Q, V, A):
    return np.array([ldr.inverse_dynamics(m, q, v, a) for q, v, a in zip(Q, V, A)])


def assert_rows_close(ours, ref):
    assert ours.shape == ref.shape
    scale = np.maximum(np.abs(ref).max(axis=1, keepdims=True), 1e-300)
    err = (np.abs(ours - ref) / scale).max()
    assert err <= TOL, f"row-relative deviation {err:.2e}"


ROBOTS = ["centauro", "go2", "solo12", "talos_reduced", "free_tree"]


@pytest.mark.parametrize("N", [1, KS.B - 1, KS.B + 1, 200])
@pytest.mark.parametrize("name", ROBOTS)
def test_equals_the_per_state_path(name, N):
    m = model(name)
    assert soa_unsupported(m) is None
    Q, V, A = states(m, N, seed=N)
    tau = inverse_dynamics_soa(m, Q, V, A)
    assert_rows_close(tau, per_state(m, Q, V, A))
    if N >= MIN_STATES:     # the public batched call takes this kernel
        np.testing.assert_array_equal(ldr.inverse_dynamics(m, Q, V, A), tau)


@pytest.mark.parametrize("name", ["go2", "talos_reduced"])
def test_other_gravity_and_resting_states(name):
    """At rest the torques are the gravity torques, for a gravity off the z axis too; the root's
    six are then minus the weight's wrench, whatever the base orientation."""
    m = model(name).with_gravity((1.5, -2.0, -9.0))
    Q, _, _ = states(m, 40, seed=3)
    Z = np.zeros((40, m.nv))
    tau = inverse_dynamics_soa(m, Q, Z, Z)
    assert_rows_close(tau, np.array([ldr.gravity_torques(m, q) for q in Q]))
    # the root's force, turned to the world, is the weight held up: -(total mass) g
    mass = sum(float(m.mI[i, 3, 3]) for i in range(1, m.mi.shape[0]))
    for q, t in zip(Q, tau):
        R = so3.quat_to_rot(q[3:7])
        np.testing.assert_allclose(R @ t[:3], -mass * np.asarray(m.gravity), rtol=1e-12,
                                   atol=1e-12 * mass * 10)


@pytest.mark.parametrize("name", ["centauro", "go2"])
def test_against_pinocchio_in_parallel(name):
    m, path = model(name), PATHS[name]
    pm = build_pin_model(path, True)
    pm.gravity = pin.Motion(np.asarray(m.gravity, dtype=float), np.zeros(3))
    mp = PinMap(m, pm, path)
    Q, V, A = states(m, 64, seed=7)
    Qp = np.asfortranarray(np.array([mp.q_to_pin(q) for q in Q]).T)
    Vp = np.asfortranarray(np.array([mp.v_to_pin(v, q) for q, v in zip(Q, V)]).T)
    Ap = np.asfortranarray(np.array([mp.a_to_pin(a, q, v) for q, v, a in zip(Q, V, A)]).T)
    Tp = np.array(pin.rneaInParallel(2, pin.ModelPool(pm, 2), Qp, Vp, Ap))
    ref = np.array([mp.tau_from_pin(Tp[:, r], Q[r]) for r in range(64)])
    tau = inverse_dynamics_soa(m, Q, V, A)
    scale = np.abs(ref).max(axis=1, keepdims=True)
    assert (np.abs(tau - ref) / scale).max() <= 1e-10


def test_quaternion_within_tolerance_is_normalised_as_the_single_call():
    m = model("go2")
    Q, V, A = states(m, 40)
    Q[5, 3:7] *= 1 + 5e-7
    Q[9, 3:7] *= 1 - 5e-7
    assert_rows_close(inverse_dynamics_soa(m, Q, V, A), per_state(m, Q, V, A))


@pytest.mark.parametrize("scale", [1 + 2e-6, 0.5, 0.0])
def test_non_unit_quaternion_row_is_named(scale):
    m = model("solo12")
    Q, V, A = states(m, 50)
    Q[37, 3:7] *= scale
    with pytest.raises(ldr.InputError, match=r"row 37: the quaternion of joint 'root_joint' in q "
                                             r"is not of unit norm"):
        inverse_dynamics_soa(m, Q, V, A)
    with pytest.raises(ldr.InputError, match="row 37: the quaternion"):
        ldr.inverse_dynamics(m, Q, V, A)


def test_builder_free_joint_quaternion_is_named():
    m = model("free_tree")
    Q, V, A = states(m, 20)
    Q[4, 3:7] = (0.0, 0.0, 0.0, 2.0)
    with pytest.raises(ldr.InputError, match=r"row 4: the quaternion of joint 'float_a'"):
        inverse_dynamics_soa(m, Q, V, A)


@pytest.mark.parametrize("arg, col", [("q", 0), ("q", 5), ("v", 1), ("v", 4), ("a", 3),
                                      ("a", 10)])
def test_non_finite_row_is_named(arg, col):
    """A NaN in the base position (which no torque depends on), quaternion, twist or
    acceleration, or in a leg joint, names the row and the argument."""
    m = model("go2")
    Q, V, A = states(m, 40)
    {"q": Q, "v": V, "a": A}[arg][23, col] = np.nan
    with pytest.raises(ldr.InputError, match=rf"row 23: non-finite .* in {arg}$"):
        inverse_dynamics_soa(m, Q, V, A)


def test_free_joint_below_a_body_or_with_armature_is_refused():
    m = free_tree(free_below=True)
    assert soa_unsupported(m) == ("joint 'float_b' is free below another body "
                                  "(only a free root joint)")
    Q, V, A = states(m, MIN_STATES)
    with pytest.raises(ldr.InputError, match="use ldr.inverse_dynamics"):
        inverse_dynamics_soa(m, Q, V, A)
    assert_rows_close(ldr.inverse_dynamics(m, Q, V, A), per_state(m, Q, V, A))
    arm = model("go2").with_joint_dynamics(armature={"root_joint": 0.1})
    assert "joint 'root_joint' is free with armature" in soa_unsupported(arm)
    # armature on the legs only is served
    legs = model("go2").with_joint_dynamics(
        armature={n: 0.05 for n in model("go2").joint_names if n != "root_joint"})
    assert soa_unsupported(legs) is None
    Q, V, A = states(legs, 20)
    assert_rows_close(inverse_dynamics_soa(legs, Q, V, A), per_state(legs, Q, V, A))


def test_the_single_state_tree_plan_serves_free_roots():
    """The single-state tree kernels (kernels/tree.py) serve a free root too."""
    m = model("go2")
    assert (soa_plan(m)[0][1:, KS.TK] == KS.FREE).sum() == 1 and tree_plan(m) is not None


# forward dynamics (kernels/soa_aba.py): the root's 6x6 articulated inertia solved per lane

def fd_per_state(m, Q, V, T):
    return np.array([ldr.forward_dynamics(m, q, v, t) for q, v, t in zip(Q, V, T)])


@pytest.mark.parametrize("N", [1, KS.B + 1, 200])
@pytest.mark.parametrize("name", ROBOTS)
def test_fd_equals_the_per_state_path_and_inverts_the_rnea(name, N):
    m = model(name)
    Q, V, T = states(m, N, seed=N + 1)
    acc = forward_dynamics_soa(m, Q, V, T)
    assert_rows_close(acc, fd_per_state(m, Q, V, T))
    assert_rows_close(inverse_dynamics_soa(m, Q, V, acc), T)
    if N >= MIN_STATES:
        np.testing.assert_array_equal(ldr.forward_dynamics(m, Q, V, T), acc)


def test_fd_of_a_free_falling_robot_is_gravity():
    """No torque, no velocity: every body falls with g; the base's linear acceleration is g in
    its frame and the joints do not accelerate (whatever gravity's direction)."""
    m = model("talos_reduced").with_gravity((2.0, -1.0, -9.5))
    Q, _, _ = states(m, 40, seed=5)
    Z = np.zeros((40, m.nv))
    acc = forward_dynamics_soa(m, Q, Z, Z)
    for q, a in zip(Q, acc):
        R = so3.quat_to_rot(q[3:7])
        np.testing.assert_allclose(R @ a[:3], m.gravity, rtol=0, atol=1e-11)
        np.testing.assert_allclose(a[3:], 0.0, rtol=0, atol=1e-11)


@pytest.mark.parametrize("name", ["centauro", "go2"])
def test_fd_against_pinocchio_in_parallel(name):
    m, path = model(name), PATHS[name]
    pm = build_pin_model(path, True)
    pm.gravity = pin.Motion(np.asarray(m.gravity, dtype=float), np.zeros(3))
    mp = PinMap(m, pm, path)
    Q, V, T = states(m, 64, seed=8)
    Qp = np.asfortranarray(np.array([mp.q_to_pin(q) for q in Q]).T)
    Vp = np.asfortranarray(np.array([mp.v_to_pin(v, q) for q, v in zip(Q, V)]).T)
    # tau_pin = T^-T tau: the map is a permutation with signs (orthogonal), so T tau
    Tp = np.asfortranarray(np.array([mp.T(q) @ t for q, t in zip(Q, T)]).T)
    Ap = np.array(pin.abaInParallel(2, pin.ModelPool(pm, 2), Qp, Vp, Tp))
    ref = np.array([mp.v_from_pin(Ap[:, r], Q[r]) for r in range(64)])
    assert np.allclose(np.array([mp.tau_from_pin(tp, q) for tp, q in zip(Tp.T, Q)]), T)
    acc = forward_dynamics_soa(m, Q, V, T)
    scale = np.abs(ref).max(axis=1, keepdims=True)
    assert (np.abs(acc - ref) / scale).max() <= 1e-10


@pytest.mark.parametrize("arg, col", [("q", 1), ("q", 6), ("v", 2), ("v", 5), ("tau", 0),
                                      ("tau", 12)])
def test_fd_non_finite_row_is_named(arg, col):
    m = model("go2")
    Q, V, T = states(m, 40)
    {"q": Q, "v": V, "tau": T}[arg][29, col] = np.inf
    with pytest.raises(ldr.InputError, match=rf"row 29: non-finite .* in {arg}$"):
        forward_dynamics_soa(m, Q, V, T)


def test_fd_non_unit_quaternion_and_singular_base_are_named():
    m = model("solo12")
    Q, V, T = states(m, 50)
    Q[41, 3:7] *= 1.01
    with pytest.raises(ldr.InputError, match=r"row 41: a quaternion in q is not of unit norm"):
        forward_dynamics_soa(m, Q, V, T)
    # a massless base link under a fixed-base arm's first joint: I^ of the root is singular
    arm = ldr.load_urdf("arm7", floating_base=True)
    Q, V, T = states(arm, 20)
    with pytest.raises(ldr.InputError, match=r"row 0: singular articulated inertia: joint "
                                             r"'root_joint'"):
        forward_dynamics_soa(arm, Q, V, T)


# mass matrix (kernels/soa_crba.py): the root's 6x6 block and its six rows of each column

def m_per_state(m, Q):
    return np.array([ldr.mass_matrix(m, q) for q in Q])


@pytest.mark.parametrize("N", [1, KS.B + 1, 100])
@pytest.mark.parametrize("name", ROBOTS)
def test_m_equals_the_per_state_path(name, N):
    m = model(name)
    Q, _, _ = states(m, N, seed=N + 2)
    M = mass_matrix_soa(m, Q)
    ref = m_per_state(m, Q)
    scale = np.abs(ref).max(axis=(1, 2), keepdims=True)
    assert (np.abs(M - ref) / scale).max() <= TOL
    np.testing.assert_array_equal(M, np.swapaxes(M, 1, 2))
    if N >= MIN_STATES:
        np.testing.assert_array_equal(ldr.mass_matrix(m, Q), M)


@pytest.mark.parametrize("name", ["centauro", "talos_reduced"])
def test_m_agrees_with_the_rnea(name):
    """M a = ID(q, v, a) - ID(q, v, 0), both batched SoA kernels."""
    m = model(name)
    Q, V, A = states(m, 40, seed=4)
    Ma = np.einsum("nij,nj->ni", mass_matrix_soa(m, Q), A)
    assert_rows_close(Ma, inverse_dynamics_soa(m, Q, V, A) - inverse_dynamics_soa(m, Q, V, 0 * A))


def test_m_against_pinocchio():
    m, path = model("go2"), PATHS["go2"]
    pm = build_pin_model(path, True)
    mp = PinMap(m, pm, path)
    Q, _, _ = states(m, 5, seed=9)
    for q, M in zip(Q, mass_matrix_soa(m, Q)):
        Mp = np.array(pin.crba(pm, pm.createData(), mp.q_to_pin(q)))
        ref = mp.mat_from_pin(np.triu(Mp) + np.triu(Mp, 1).T, q)
        assert np.abs(M - ref).max() <= 1e-10 * np.abs(ref).max()


@pytest.mark.parametrize("bad", [np.nan, "quaternion"])
def test_m_bad_row_is_named(bad):
    m = model("go2")
    Q, _, _ = states(m, 40)
    if bad == "quaternion":
        Q[33, 3:7] = (0.0, 0.0, 0.0, 1.0 + 1e-5)
        want = r"row 33: the quaternion of joint 'root_joint' in q is not of unit norm"
    else:
        Q[33, 2] = bad
        want = r"row 33: non-finite .* in q$"
    with pytest.raises(ldr.InputError, match=want):
        mass_matrix_soa(m, Q)
    with pytest.raises(ldr.InputError, match=want):
        ldr.mass_matrix(m, Q)
