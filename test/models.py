"""Models shared by the core tests: the bundled URDFs and builder models with every joint kind."""
import os

import numpy as np

import lie_dynamics_ros as ldr
from lie_dynamics_ros.lie import se3, so3
from lie_dynamics_ros.model.joint_types import joint_axes

HERE = os.path.dirname(os.path.abspath(__file__))
URDF_DIR = os.path.join(os.path.dirname(HERE), "urdf")
BUNDLED = ["arm7.urdf", "double_pendulum.urdf", "planar_2r.urdf"]


def bundled(name, floating_base=False):
    return ldr.load_urdf(os.path.join(URDF_DIR, name), floating_base=floating_base)


def _pose(rng):
    return se3.make(so3.exp(rng.normal(size=3)), rng.normal(size=3) * 0.3)


def _inertial(rng):
    m, (a, b, c) = rng.uniform(0.5, 2.0), rng.uniform(0.05, 0.5, 3)     # a solid box
    I = m / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    return dict(mass=m, com=rng.normal(size=3) * 0.1, inertia=I,
                com_rotation=so3.exp(rng.normal(size=3)))


def zoo(seed=0, floating=True, mimic=True):
    """A tree with every built-in joint kind, a fixed link, a mimic joint and rpy origins."""
    rng = np.random.default_rng(seed)
    b = ldr.ModelBuilder("zoo")
    b.add_link("base", **_inertial(rng))
    specs = [("rev", ldr.Revolute(rng.normal(size=3)), "base"),
             ("pri", ldr.Prismatic(rng.normal(size=3)), "l_rev"),
             ("ball", ldr.Spherical(), "l_pri"),
             ("uni", ldr.Universal(rng.normal(size=3), rng.normal(size=3)), "l_ball"),
             ("pla", ldr.Planar(rng.normal(size=3)), "base"),
             ("rev2", ldr.Revolute((0, 0, 1)), "l_pla"),
             ("fix", ldr.Fixed(), "l_rev2"),
             ("mim", ldr.Revolute(rng.normal(size=3)), "l_fix")]
    for name, joint, parent in specs:
        b.add_link("l_" + name, **_inertial(rng))
        b.add_joint(name, joint, parent, "l_" + name, origin=_pose(rng),
                    mimic=("rev", -0.7, 0.2) if (name == "mim" and mimic) else None)
    if floating:
        b.add_joint("root_joint", ldr.Free(), None, "base")
    return b.build()


def general_twin(seed=0):
    """(builtin model, the same robot with its joints given as General callables)."""
    rng = np.random.default_rng(seed)
    a1 = rng.normal(size=3)
    a1 /= np.linalg.norm(a1)
    n = rng.normal(size=3)
    models = []
    for general in (False, True):
        r = np.random.default_rng(seed + 1)
        b = ldr.ModelBuilder("twin")
        b.add_link("base")
        for k in range(2):
            b.add_link(f"l{k}", **_inertial(r))
        if general:
            xi = np.r_[0, 0, 0, a1]                # (linear, angular), as lie.se3
            j0 = ldr.General(1, T=lambda q: se3.exp(xi * q[0]), S=lambda q: xi.reshape(6, 1))
            planar = ldr.Planar(n)
            ax, e1 = joint_axes(planar, "p")      # the same in-plane axes as the builtin
            e2 = np.cross(ax, e1)

            def T1(q):
                return se3.make(so3.exp(ax * q[2]), q[0] * e1 + q[1] * e2)

            def S1(q):
                R = so3.exp(ax * q[2])
                return np.column_stack([np.r_[R.T @ e1, 0, 0, 0], np.r_[R.T @ e2, 0, 0, 0],
                                        np.r_[0, 0, 0, ax]])

            def Sd1(q, v):
                R = so3.exp(ax * q[2])
                d = lambda e: -v[2] * np.cross(ax, R.T @ e)
                return np.column_stack([np.r_[d(e1), 0, 0, 0], np.r_[d(e2), 0, 0, 0], np.zeros(6)])
            j1 = ldr.General(3, T=T1, S=S1, Sdot=Sd1)
        else:
            j0, j1 = ldr.Revolute(a1), ldr.Planar(n)
        o0, o1 = _pose(np.random.default_rng(seed + 2)), _pose(np.random.default_rng(seed + 3))
        b.add_joint("j0", j0, "base", "l0", origin=o0)
        b.add_joint("j1", j1, "l0", "l1", origin=o1)
        models.append(b.build())
    return models


def random_state(model, seed=0):
    rng = np.random.default_rng(seed)
    return (ldr.random_configuration(model, rng), rng.normal(size=model.nv),
            rng.normal(size=model.nv))


def damped_pendulum_xml(damping, friction):
    """The bundled double pendulum's URDF text with <dynamics damping friction> on both
    joints (for the nodes, which take a model as URDF)."""
    with open(os.path.join(URDF_DIR, "double_pendulum.urdf")) as f:
        xml = f.read()
    limit = 'effort="100" velocity="50"/>'
    assert xml.count(limit) == 2
    return xml.replace(limit, limit + '\n    <dynamics damping="%r" friction="%r"/>'
                       % (damping, friction))
