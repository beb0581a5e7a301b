"""Joint-type specialization: a revolute or prismatic joint about +-x, +-y or +-z takes the
kernels' principal-axis path (a rotation mixing two columns, S a unit column, U a column of
I^); any other axis the general path (Rodrigues, 6 x nv products). The same robot with every
axis tilted by 1e-12 rad takes the general path on every joint: both agree to what the tilt
explains, and each agrees with Pinocchio.
"""
import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.kernels import layout as L
from lie_dynamics_ros.kernels.joint_kinematics import unit_row
from oracle import Oracle, rel_err

TILT = 1e-12

# every principal axis and sign, revolute and prismatic, a mimic of each kind, and a general
# axis in the middle of the chain
JOINTS = [("j1", "revolute", "0 0 1", None), ("j2", "revolute", "0 -1 0", None),
          ("j3", "prismatic", "1 0 0", None), ("j4", "revolute", "-1 0 0", None),
          ("j5", "prismatic", "0 0 -1", None), ("j6", "revolute", "0.3 0.5 0.8", None),
          ("j7", "prismatic", "0 1 0", None), ("j8", "revolute", "0 0 -1", ("j2", -0.7, 0.1)),
          ("j9", "prismatic", "-1 0 0", ("j3", 1.5, -0.02))]


def _urdf(tilt):
    rng = np.random.default_rng(11)
    out = ['<robot name="axes">', '<link name="l0"/>']
    for k, (name, kind, axis, mimic) in enumerate(JOINTS, start=1):
        a = np.array(axis.split(), dtype=float)
        if tilt:
            a = a + tilt * np.roll(np.abs(a), 1)    # off the principal axis by ~tilt rad
        m = rng.uniform(0.5, 2.0)
        ix, iy, iz = rng.uniform(0.01, 0.05, 3)
        out.append(f'<link name="l{k}"><inertial><origin xyz="{rng.normal() * 0.1} '
                   f'{rng.normal() * 0.1} {rng.normal() * 0.1}" rpy="0.1 -0.2 0.3"/>'
                   f'<mass value="{m}"/><inertia ixx="{ix + iy}" ixy="0.001" ixz="0" '
                   f'iyy="{iy + iz}" iyz="0" izz="{ix + iz}"/></inertial></link>')
        xyz, rpy = rng.normal(size=3) * 0.2, rng.uniform(-1.0, 1.0, 3)
        ax = " ".join(repr(float(x)) for x in a)
        mim = f'<mimic joint="{mimic[0]}" multiplier="{mimic[1]}" offset="{mimic[2]}"/>' \
            if mimic else ""
        out.append(f'<joint name="{name}" type="{kind}"><parent link="l{k - 1}"/>'
                   f'<child link="l{k}"/><origin xyz="{xyz[0]} {xyz[1]} {xyz[2]}" '
                   f'rpy="{rpy[0]} {rpy[1]} {rpy[2]}"/><axis xyz="{ax}"/>'
                   f'<limit lower="-3" upper="3" effort="100" velocity="10"/>{mim}</joint>')
    out.append("</robot>")
    return "\n".join(out)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    out = []
    for tilt in (0.0, TILT):
        path = tmp_path_factory.mktemp("axes") / f"axes_{tilt}.urdf"
        path.write_text(_urdf(tilt))
        model = ldr.load_urdf(str(path))
        out.append((model, Oracle(model, str(path), False)))
    return out


def test_the_paths_are_the_ones_meant(pair):
    """On-axis joints take the principal-axis path, tilted and general axes do not."""
    (exact, _), (tilted, _) = pair
    rows = {j.name: j.row for j in exact.joints}
    want = {"j1": 2, "j2": 1, "j3": 3, "j4": 0, "j5": 5, "j6": -1, "j7": 4, "j8": 2, "j9": 3}
    assert {n: unit_row(exact.mi[r, L.K], exact.mc[r]) for n, r in rows.items()} == want
    assert all(unit_row(tilted.mi[r, L.K], tilted.mc[r]) == -1 for r in rows.values())


def test_principal_axis_and_general_path_agree_with_each_other_and_pinocchio(pair):
    (exact, pin_exact), (tilted, pin_tilted) = pair
    rng = np.random.default_rng(5)
    for _ in range(10):
        q = rng.uniform(-2.0, 2.0, exact.nq)
        v, a = rng.normal(size=exact.nv), rng.normal(size=exact.nv)
        tau = ldr.inverse_dynamics(exact, q, v, a)
        M = ldr.mass_matrix(exact, q)
        acc = ldr.forward_dynamics(exact, q, v, tau)
        # a wrong fast path would be off by O(1); the tilt and round-off explain < 1e-10
        assert rel_err(tau, ldr.inverse_dynamics(tilted, q, v, a)) < 1e-10
        assert rel_err(M, ldr.mass_matrix(tilted, q)) < 1e-10
        assert rel_err(acc, ldr.forward_dynamics(tilted, q, v, tau)) < 1e-9
        for model, oracle in pair:
            t = ldr.inverse_dynamics(model, q, v, a)
            assert rel_err(t, oracle.rnea(q, v, a)) < 1e-10
            assert rel_err(ldr.mass_matrix(model, q), oracle.crba(q)) < 1e-10
            assert rel_err(ldr.forward_dynamics(model, q, v, t), oracle.aba(q, v, t)) < 1e-9
        assert np.allclose(acc, a, atol=1e-8 * (1 + np.abs(a).max()))
