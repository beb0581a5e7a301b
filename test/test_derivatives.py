"""Analytic derivatives (Kim 2012 §4) against central finite differences on the manifold.

* every joint kind (free, ball, planar, universal, revolute, prismatic, mimic: the zoo of
  test/models.py), where the per-direction recursion of Kim's Table 5 runs, and the bundled arm,
  where the world-frame form runs: both forms must agree with each other and with differences;
* forward and hybrid dynamics derivatives (the tuple of ``hybrid_dynamics_derivatives``);
* the kinematic-parameter derivatives, by editing a URDF joint origin (xyz and a right-
  trivialized rotation written back as rpy) and reloading the file;
* batched inputs and bad input.
q-differences are taken as integrate(q, +-h e_k): the tangent space of the documented convention.
"""
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from lie_dynamics_ros.errors import InputError
from scipy.spatial.transform import Rotation

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms.derivatives import PARAMETER_COLUMNS
from lie_dynamics_ros.kernels import derivatives_plan as E
from lie_dynamics_ros.lie import se3, so3
from models import URDF_DIR, bundled, general_twin, random_state, zoo

H = 1e-6
TOL = 2e-7


def rel(x, ref):
    return np.linalg.norm(np.asarray(x) - ref) / max(1.0, np.linalg.norm(ref))


def fd_q(model, f, q, h=H):
    return np.stack([(f(ldr.integrate(model, q, h * e)) - f(ldr.integrate(model, q, -h * e)))
                     / (2 * h) for e in np.eye(model.nv)], axis=-1)


def fd_x(f, x, h=H):
    return np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(len(x))], axis=-1)


MODELS = {
    "zoo-floating-mimic": lambda: zoo(0, floating=True, mimic=True),
    "zoo-fixed": lambda: zoo(1, floating=False, mimic=False),
    "arm7": lambda: bundled("arm7.urdf"),
}


@pytest.fixture(scope="module", params=sorted(MODELS))
def model(request):
    return MODELS[request.param]()


def test_inverse_dynamics_derivatives(model):
    q, v, a = random_state(model, 3)
    F = np.random.default_rng(4).normal(size=(model.njoints, 6))
    dq, dv, M = ldr.inverse_dynamics_derivatives(model, q, v, a, f_ext=F)
    assert rel(dq, fd_q(model, lambda x: ldr.inverse_dynamics(model, x, v, a, f_ext=F), q)) < TOL
    assert rel(dv, fd_x(lambda x: ldr.inverse_dynamics(model, q, x, a, f_ext=F), v)) < TOL
    assert rel(M, ldr.mass_matrix(model, q)) < 1e-13
    # the world-frame form (constant-S joints) and the per-direction recursion agree
    other = ldr.inverse_dynamics_derivatives(model, q, v, a, f_ext=F, _world_form=False)
    for x, y in zip(other, (dq, dv, M)):
        assert rel(x, y) < 1e-12


def test_forward_dynamics_derivatives(model):
    q, v, a = random_state(model, 5)
    tau = ldr.inverse_dynamics(model, q, v, a)
    da_dq, da_dv, Minv = ldr.forward_dynamics_derivatives(model, q, v, tau)
    fd = lambda x: ldr.forward_dynamics(model, x, v, tau)  # noqa: E731
    assert rel(da_dq, fd_q(model, fd, q)) < TOL
    assert rel(da_dv, fd_x(lambda x: ldr.forward_dynamics(model, q, x, tau), v)) < TOL
    assert rel(Minv @ ldr.mass_matrix(model, q), np.eye(model.nv)) < 1e-10
    # the compiled entry (world-frame form on constant-S trees) and the checked path (taken
    # with an f_ext, here zero) agree on the same state
    # (the first call of a process compiles the entry and takes the checked path: call again)
    zero = np.zeros((model.njoints, 6))
    for x, y in zip(ldr.forward_dynamics_derivatives(model, q, v, tau, f_ext=zero),
                    ldr.forward_dynamics_derivatives(model, q, v, tau)):
        assert rel(x, y) < 1e-12


def test_hybrid_dynamics_derivatives(model):
    rng = np.random.default_rng(6)
    q, v, a = random_state(model, 6)
    tau = rng.normal(size=model.nv)
    mask = np.zeros(model.nv, dtype=bool)
    for iv, nv in zip(model.joint_v_index, model.joint_nv):
        mask[iv:iv + nv] = rng.random() < 0.5
    mask[model.joint_v_index[-1]:] = True     # at least one of each kind
    mask[:model.joint_nv[0]] = False

    def y(qq=q, vv=v, x=None):
        aa, tt = (a, tau) if x is None else (np.where(mask, x, a), np.where(mask, tau, x))
        a_full, tau_full = ldr.hybrid_dynamics(model, qq, vv, aa, tt, mask)
        return np.where(mask, tau_full, a_full)

    dy_dq, dy_dv, dy_dx = ldr.hybrid_dynamics_derivatives(model, q, v, a, tau, mask)
    x0 = np.where(mask, a, tau)
    assert rel(dy_dq, fd_q(model, lambda x: y(qq=x), q)) < TOL
    assert rel(dy_dv, fd_x(lambda x: y(vv=x), v)) < TOL
    assert rel(dy_dx, fd_x(lambda x: y(x=x), x0)) < TOL
    # the two extreme cases are the inverse and the forward dynamics derivatives
    ones, zeros = np.ones(model.nv, dtype=bool), np.zeros(model.nv, dtype=bool)
    for got, ref in zip(ldr.hybrid_dynamics_derivatives(model, q, v, a, tau, ones),
                        ldr.inverse_dynamics_derivatives(model, q, v, a)):
        assert rel(got, ref) < 1e-12
    for got, ref in zip(ldr.hybrid_dynamics_derivatives(model, q, v, a, tau, zeros),
                        ldr.forward_dynamics_derivatives(model, q, v, tau)):
        assert rel(got, ref) < 1e-9


def test_batched_state_derivatives():
    model = zoo(2, floating=True, mimic=False)
    states = [random_state(model, s) for s in range(4)]
    Q, V, A = (np.array([s[k] for s in states]) for k in range(3))
    taus = np.array([ldr.inverse_dynamics(model, *s) for s in states])
    batch_id = ldr.inverse_dynamics_derivatives(model, Q, V, A)
    batch_fd = ldr.forward_dynamics_derivatives(model, Q, V, taus)
    for r, s in enumerate(states):
        for got, ref in zip(batch_id, ldr.inverse_dynamics_derivatives(model, *s)):
            assert got.shape == (4, model.nv, model.nv)
            np.testing.assert_array_equal(got[r], ref)
        for got, ref in zip(batch_fd, ldr.forward_dynamics_derivatives(model, s[0], s[1], taus[r])):
            np.testing.assert_allclose(got[r], ref, rtol=0, atol=1e-12 * np.abs(ref).max())


@pytest.mark.parametrize("which", ["arm7", "zoo"])
def test_batched_derivatives_split_over_cores_equal_single_calls(which):
    """A batch large enough to be cut into one chunk per core (each on its thread's Data) gives
    every row exactly as the single-state call; a bad row is named by its index. arm7 takes
    the world-frame kernels, the zoo (free, planar, universal, ... joints) the general ones.
    A single arm7 state's ID and FD derivatives take kernels/tree_derivatives.py, the rows the
    world-frame kernels: the rows equal those kernels' single-state entries exactly and the
    public calls to round-off (test_tree_derivatives.py holds the kernels together)."""
    model = (ldr.load_urdf(os.path.join(URDF_DIR, "arm7.urdf")) if which == "arm7"
             else zoo(3, floating=True, mimic=False))
    N = 64
    states = [random_state(model, s) for s in range(N)]
    Q, V, A = (np.array([s[k] for s in states]) for k in range(3))
    T = ldr.inverse_dynamics(model, Q, V, A)
    batch_id = ldr.inverse_dynamics_derivatives(model, Q, V, A)
    batch_fd = ldr.forward_dynamics_derivatives(model, Q, V, T)
    for r in range(N):
        single = ldr.inverse_dynamics_derivatives(model, Q[r], V[r], A[r])
        if which == "arm7":
            out = np.empty((3, model.nv, model.nv))
            assert E.inverse_dynamics_derivatives(model.create_data().buf, Q[r], V[r], A[r],
                                                  out) == 0
            for got, ref, tree in zip(batch_id, out, single):
                np.testing.assert_array_equal(got[r], ref)
                np.testing.assert_allclose(tree, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
        else:
            for got, ref in zip(batch_id, single):
                np.testing.assert_array_equal(got[r], ref)
        single = ldr.forward_dynamics_derivatives(model, Q[r], V[r], T[r])
        if which == "arm7":
            out = np.empty((3, model.nv, model.nv))
            assert E.forward_dynamics_derivatives(model.create_data().buf, Q[r], V[r], T[r],
                                                  out) == 0
            for got, ref, tree in zip(batch_fd, out, single):
                np.testing.assert_array_equal(got[r], ref)
                np.testing.assert_allclose(tree, ref, rtol=0, atol=1e-10 * np.abs(ref).max())
        else:
            for got, ref in zip(batch_fd, single):
                np.testing.assert_array_equal(got[r], ref)
    V[41, 2] = np.nan
    with pytest.raises(InputError, match=r"row 41: .*v"):
        ldr.inverse_dynamics_derivatives(model, Q, V, A)
    with pytest.raises(InputError, match=r"row 41: .*v"):
        ldr.forward_dynamics_derivatives(model, Q, V, T)


# ------------------------------------------------------------------- kinematic parameters
ARM = os.path.join(URDF_DIR, "arm7.urdf")


def _edited_arm(joint, dxyz=np.zeros(3), drot=np.zeros(3)):
    """arm7 with joint's origin moved by dxyz (parent frame) and rotated to R exp([drot])."""
    root = ET.parse(ARM).getroot()
    j = next(e for e in root.iter("joint") if e.get("name") == joint)
    o = j.find("origin")
    xyz = np.array([float(x) for x in o.get("xyz", "0 0 0").split()]) + dxyz
    R = Rotation.from_euler("xyz", [float(x) for x in o.get("rpy", "0 0 0").split()]).as_matrix()
    rpy = Rotation.from_matrix(R @ so3.exp(drot)).as_euler("xyz")
    o.set("xyz", " ".join(repr(float(x)) for x in xyz))
    o.set("rpy", " ".join(repr(float(x)) for x in rpy))
    return ldr.load_urdf(ET.tostring(root, encoding="unicode"))


def test_parameter_derivatives_by_editing_the_urdf():
    model = ldr.load_urdf(ARM)
    q, v, a = random_state(model, 8)
    joints = ["panda_joint2", "panda_joint4", "panda_joint7"]
    D = ldr.inverse_dynamics_parameter_derivatives(model, q, v, a, joints=joints)
    assert D.shape == (model.nv, 6 * len(joints))
    h = 1e-6
    for b, name in enumerate(joints):
        for c in range(6):
            e = np.zeros(3)
            e[c % 3] = h
            plus = _edited_arm(name, *((e, np.zeros(3)) if c < 3 else (np.zeros(3), e)))
            minus = _edited_arm(name, *((-e, np.zeros(3)) if c < 3 else (np.zeros(3), -e)))
            fd = (ldr.inverse_dynamics(plus, q, v, a)
                  - ldr.inverse_dynamics(minus, q, v, a)) / (2 * h)
            assert rel(D[:, 6 * b + c], fd) < 1e-6, (name, PARAMETER_COLUMNS[c])
    # default: every joint, in model.joint_names order
    full = ldr.inverse_dynamics_parameter_derivatives(model, q, v, a)
    assert full.shape == (model.nv, 6 * model.nv)
    np.testing.assert_allclose(full[:, 6:12], D[:, 0:6], rtol=0, atol=1e-12)


def _mimic_chain(T_mim):
    """base -r-> l1 -p-> l2 -mim-> l3 with mim = 0.7 r + 0.2, mim's origin T_mim."""
    rng = np.random.default_rng(11)
    b = ldr.ModelBuilder("mimic_chain")
    b.add_link("base")
    for k in range(3):
        b.add_link("l%d" % k, mass=1.0 + k, com=rng.normal(size=3) * 0.1,
                   inertia=np.diag([0.02, 0.03, 0.04]))
    b.add_joint("r", ldr.Revolute((0, 0.6, 0.8)), "base", "l0",
                origin=se3.make(so3.exp([0.1, 0.2, 0.3]), [0.1, 0, 0.3]))
    b.add_joint("p", ldr.Prismatic((1, 0, 0)), "l0", "l1",
                origin=se3.make(so3.exp([0.3, -0.2, 0.1]), [0, 0.2, 0.1]))
    b.add_joint("mim", ldr.Revolute((0, 1, 0)), "l1", "l2", origin=T_mim, mimic=("r", 0.7, 0.2))
    return b.build()


def test_parameter_derivatives_of_a_mimic_joint_origin():
    R0, p0 = so3.exp([0.4, 0.1, -0.2]), np.array([0.3, -0.1, 0.2])
    model = _mimic_chain(se3.make(R0, p0))
    q, v, a = random_state(model, 9)
    D = ldr.inverse_dynamics_parameter_derivatives(model, q, v, a, joints=["mim", "p"])
    assert D.shape == (model.nv, 12)
    h = 1e-6
    for c in range(6):
        e = np.zeros(3)
        e[c % 3] = h
        if c < 3:
            plus, minus = _mimic_chain(se3.make(R0, p0 + e)), _mimic_chain(se3.make(R0, p0 - e))
        else:
            plus = _mimic_chain(se3.make(R0 @ so3.exp(e), p0))
            minus = _mimic_chain(se3.make(R0 @ so3.exp(-e), p0))
        fd = (ldr.inverse_dynamics(plus, q, v, a) - ldr.inverse_dynamics(minus, q, v, a)) / (2 * h)
        assert rel(D[:, c], fd) < 1e-6, c


def test_origin_rotation_about_the_axis_is_a_joint_displacement():
    """R_o exp([axis] d) exp([axis] q) = R_o exp([axis] (q + d)): that column equals dtau/dq."""
    model = bundled("arm7.urdf")
    q, v, a = random_state(model, 10)
    D = ldr.inverse_dynamics_parameter_derivatives(model, q, v, a)
    dq, _, _ = ldr.inverse_dynamics_derivatives(model, q, v, a)
    for k, name in enumerate(model.joint_names):
        axis = np.asarray(model.joint(name).joint.axis, dtype=float)
        np.testing.assert_allclose(D[:, 6 * k + 3:6 * k + 6] @ axis, dq[:, k], rtol=0,
                                   atol=1e-10 * np.abs(dq).max())


# ------------------------------------------------------------------- bad input
def test_bad_input():
    model = bundled("arm7.urdf")
    q, v, a = random_state(model, 0)
    with pytest.raises(ldr.InputError, match="shape"):
        ldr.inverse_dynamics_derivatives(model, q[:3], v, a)
    with pytest.raises(ldr.InputError, match="shape"):
        ldr.inverse_dynamics_derivatives(model, np.tile(q, (2, 1)), np.tile(v, (3, 1)), a)
    with pytest.raises(ldr.InputError, match="non-finite"):
        ldr.forward_dynamics_derivatives(model, q, v * np.nan, a)
    with pytest.raises(ldr.InputError, match="non-finite"):
        ldr.inverse_dynamics_derivatives(model, q, v, a * np.inf)
    with pytest.raises(ldr.InputError, match="unknown joint 'nope'"):
        ldr.inverse_dynamics_parameter_derivatives(model, q, v, a, joints=["nope"])
    with pytest.raises(ldr.InputError, match="prescribed"):
        ldr.hybrid_dynamics_derivatives(model, q, v, a, a, np.ones(model.nv))
    builtin, general = general_twin(0)
    qg, vg, ag = random_state(general, 0)
    with pytest.raises(ldr.InputError, match="'j0'.*General"):
        ldr.inverse_dynamics_derivatives(general, qg, vg, ag)
    with pytest.raises(ldr.InputError, match="General"):
        ldr.christoffel_symbols(general, qg)
