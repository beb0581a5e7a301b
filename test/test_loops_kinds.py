"""Every closure kind on spatial (non-planar) trees with every joint kind (free base too): the
closures are built assembled at a random pose, then the identities of the constrained
algorithms are checked at other assembled states."""
import numpy as np
import pytest
from scipy.linalg import null_space

import lie_dynamics_ros as ldr
from lie_dynamics_ros.lie.so3 import from_rpy as _rpy_to_matrix, to_rpy


def _unit(rng):
    a = rng.standard_normal(3)
    return tuple(a / np.linalg.norm(a))


def spatial_tree(rng, floating):
    """Two branches from a base: revolute, prismatic, ball, universal and planar joints with
    random axes and offsets."""
    b = ldr.ModelBuilder("spatial")
    b.add_link("base", 2.0, (0, 0, 0), np.diag([0.1, 0.2, 0.3]))
    kinds = [lambda: ldr.Revolute(_unit(rng)), lambda: ldr.Prismatic(_unit(rng)),
             lambda: ldr.Spherical(), lambda: ldr.Universal(_unit(rng), _unit(rng)),
             lambda: ldr.Planar(_unit(rng)), lambda: ldr.Revolute(_unit(rng))]
    for br in ("l", "r"):
        parent = "base"
        for k, make in enumerate(kinds):
            name = f"{br}{k}"
            I = np.diag(rng.uniform(0.02, 0.03, 3))   # triangle inequality holds
            b.add_link(name, rng.uniform(0.5, 2.0), rng.uniform(-0.1, 0.1, 3), I)
            T = np.eye(4)
            T[:3, :3] = _rpy_to_matrix(rng.uniform(-1, 1, 3))
            T[:3, 3] = rng.uniform(-0.3, 0.3, 3) + (0.3 if br == "l" else -0.3, 0, -0.2)
            b.add_joint(f"j_{name}", make(), parent, name, T)
            parent = name
    b.add_link("r5_tool", 0.3, (0.01, 0, 0), 1e-3 * np.eye(3))     # merged into r5's body
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = _rpy_to_matrix((0.3, -0.2, 0.5)), (0.05, 0.1, -0.02)
    b.add_joint("tool_joint", ldr.Fixed(), "r5", "r5_tool", T)
    if floating:
        b.add_joint("root_joint", ldr.Free(), None, "base")
    return b.build()


def closed(model, kind, rng):
    """A closure of ``kind`` between the two branch tips, assembled at a random q0."""
    q0 = ldr.random_configuration(model, rng)
    Tl, Tr = ldr.frame_pose(model, q0, "l5"), ldr.frame_pose(model, q0, "r5_tool")
    xyz_a, rpy_a = rng.uniform(-0.2, 0.2, 3), rng.uniform(-1, 1, 3)
    Ta = np.eye(4)
    Ta[:3, :3], Ta[:3, 3] = _rpy_to_matrix(rpy_a), xyz_a
    Tb = np.linalg.inv(Tr) @ Tl @ Ta             # the same frame, seen from r3
    loop = ldr.LoopClosure("tip", kind, "l5", "r5_tool", xyz_a, rpy_a, Tb[:3, 3],
                           to_rpy(Tb[:3, :3]), axis=_unit(rng))
    return model.with_loops([loop]), q0


@pytest.mark.parametrize("kind", ["weld", "revolute", "spherical", "prismatic"])
@pytest.mark.parametrize("floating", [False, True])
def test_identities_for_every_kind(kind, floating):
    rng = np.random.default_rng(["weld", "revolute", "spherical", "prismatic"].index(kind)
                                + 10 * floating)
    m, q0 = closed(spatial_tree(rng, floating), kind, rng)
    assert m.nc == {"weld": 6, "revolute": 5, "spherical": 3, "prismatic": 5}[kind]
    assert np.max(np.abs(ldr.constraint_residual(m, q0))) < 1e-12
    q, info = ldr.assemble(m, ldr.integrate(m, q0, 0.05 * rng.standard_normal(m.nv)), info=True)
    assert info["residual"] <= 1e-12 and info["iterations"] <= 8
    A = ldr.constraint_jacobian(m, q)
    assert np.linalg.matrix_rank(A, tol=1e-9) == m.nc
    v = null_space(A) @ rng.standard_normal(m.nv - m.nc)
    tau = rng.standard_normal(m.nv)
    a, lam = ldr.constrained_forward_dynamics(m, q, v, tau)
    b = ldr.constraint_bias(m, q, v)
    assert np.max(np.abs(A @ a + b)) < 1e-10
    eps = 1e-5
    d = (ldr.constraint_jacobian(m, ldr.integrate(m, q, v, eps)) @ v
         - ldr.constraint_jacobian(m, ldr.integrate(m, q, v, -eps)) @ v) / (2 * eps)
    assert np.max(np.abs(d - b)) < 1e-7 * (1 + np.max(np.abs(b)))
    dq = rng.standard_normal(m.nv)
    dr = (ldr.constraint_residual(m, ldr.integrate(m, q, dq, 1e-6))
          - ldr.constraint_residual(m, ldr.integrate(m, q, dq, -1e-6))) / 2e-6
    assert np.allclose(dr, A @ dq, atol=1e-7)
    # all joints actuated: the minimum-norm torque (66) reproduces the motion
    tau_id, _ = ldr.constrained_inverse_dynamics(m, q, v, a, m.joint_names)
    a2, _ = ldr.constrained_forward_dynamics(m, q, v, tau_id)
    assert np.max(np.abs(a2 - a)) < 1e-8 * (1 + np.max(np.abs(a)))


def test_lambda_is_the_wrench_of_link_a_on_link_b():
    """The sign and frame of lam: a weld holding a branch tip, with gravity only, carries the
    weight of what it holds; applying -lam as an external wrench on link_b (and +lam, moved to
    link_a's frame, on link_a) in the open tree gives the same accelerations."""
    rng = np.random.default_rng(3)
    m, q0 = closed(spatial_tree(rng, False), "weld", rng)
    q = q0
    v = np.zeros(m.nv)
    a, lam = ldr.constrained_forward_dynamics(m, q, v, np.zeros(m.nv))
    lp = m.loops[0]
    # wrench on link_b at F_b (in F_b) -> in link_b's frame: Ad_{T_b}^{-T} applied as X* = Ad^-T
    def to_link(T_off, w):
        R, p = T_off[:3, :3], T_off[:3, 3]
        f, t = R @ w[:3], R @ w[3:]
        return np.concatenate([f, t + np.cross(p, f)])
    T_ab = np.linalg.inv(ldr.frame_pose(m, q, lp.link_a) @ lp.T_a) @ (
        ldr.frame_pose(m, q, lp.link_b) @ lp.T_b)
    w_b = to_link(lp.T_b, lam)                       # on link_b, in link_b's frame
    w_a = to_link(lp.T_a @ T_ab, -lam)               # the reaction on link_a
    a_open = ldr.forward_dynamics(m, q, v, np.zeros(m.nv), f_ext={lp.link_b: w_b, lp.link_a: w_a})
    assert np.max(np.abs(a_open - a)) < 1e-9
