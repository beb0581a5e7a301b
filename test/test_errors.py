"""Bad input gets a typed error that names the culprit, never a crash or a wrong number."""
import glob
import os
import warnings

import numpy as np
import pytest
import yaml

import lie_dynamics_ros as ldr
from models import HERE, bundled

DATA = os.path.join(HERE, "data")


def _manifest(kind):
    with open(os.path.join(DATA, kind, "manifest.yaml")) as f:
        return yaml.safe_load(f)


MALFORMED = _manifest("malformed")
QUIRKY = _manifest("quirky")


def test_every_corpus_file_is_in_the_manifest():
    for kind, man in (("malformed", MALFORMED), ("quirky", QUIRKY)):
        files = {os.path.basename(p) for p in glob.glob(os.path.join(DATA, kind, "*.urdf"))}
        assert files == set(man), kind


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_urdf_raises_urdf_error_naming_the_culprit(name):
    spec = MALFORMED[name]
    path = os.path.join(DATA, "malformed", name)
    if spec["error"] == "UserWarning":
        with pytest.warns(UserWarning, match=spec["names"]):
            ldr.load_urdf(path)
        return
    with pytest.raises(ldr.URDFError) as err:
        ldr.load_urdf(path)
    assert isinstance(err.value, ValueError)
    if spec["names"]:
        assert spec["names"] in str(err.value), str(err.value)
    # the same text given as XML behaves the same way
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if text.lstrip().startswith("<"):
        with pytest.raises(ldr.URDFError):
            ldr.load_urdf(text)


@pytest.mark.parametrize("name", sorted(QUIRKY))
def test_quirky_but_valid_urdf_loads(name):
    spec = QUIRKY[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # valid files load without complaint
        m = ldr.load_urdf(os.path.join(DATA, "quirky", name))
    assert (m.nq, m.nv, m.joint_names) == (spec["nq"], spec["nv"], spec["joint_names"])
    assert m.inertias[:, 0, 0].sum() == pytest.approx(spec["moving_mass"], rel=1e-12)
    q = ldr.random_configuration(m, 0)
    assert np.all(np.isfinite(ldr.inverse_dynamics(m, q, np.ones(m.nv), np.ones(m.nv))))


def test_inertia_check_warn_loads_a_non_physical_inertia():
    path = os.path.join(DATA, "malformed", "inertia_not_positive_definite.urdf")
    with pytest.warns(UserWarning, match="bad_inertia_link"):
        ldr.load_urdf(path, inertia_check="warn")


@pytest.mark.parametrize("source", [42, None, "/no/such/file.urdf", "just words"])
def test_not_a_urdf_source(source):
    with pytest.raises(ldr.URDFError):
        ldr.load_urdf(source)


def _calls(m):
    q, v = ldr.neutral_configuration(m), np.zeros(m.nv)
    return {
        "inverse_dynamics": lambda q=q, v=v, a=v: ldr.inverse_dynamics(m, q, v, a),
        "forward_dynamics": lambda q=q, v=v, a=v: ldr.forward_dynamics(m, q, v, a),
        "hybrid_dynamics": lambda q=q, v=v, a=v: ldr.hybrid_dynamics(m, q, v, a, a, np.zeros(m.nv, bool)),
        "mass_matrix": lambda q=q, v=v, a=v: ldr.mass_matrix(m, q),
        "coriolis_matrix": lambda q=q, v=v, a=v: ldr.coriolis_matrix(m, q, v),
        "kinetic_energy": lambda q=q, v=v, a=v: ldr.kinetic_energy(m, q, v),
        "integrate": lambda q=q, v=v, a=v: ldr.integrate(m, q, v),
        "difference": lambda q=q, v=v, a=v: ldr.difference(m, q, q),
    }


@pytest.mark.parametrize("call", sorted(_calls(bundled("planar_2r.urdf"))))
@pytest.mark.parametrize("bad", ["short", "long", "2d", "nan", "inf", "text"])
def test_bad_arrays_raise_input_error(arm, call, bad):
    q, v = ldr.neutral_configuration(arm), np.zeros(arm.nv)
    mk = {"short": lambda x: x[:-1], "long": lambda x: np.r_[x, 0.0], "2d": lambda x: x[None, :],
          "nan": lambda x: np.r_[x[:-1], np.nan], "inf": lambda x: np.r_[np.inf, x[1:]],
          "text": lambda x: ["a"] * len(x)}[bad]
    fn = _calls(arm)[call]
    used = {"mass_matrix": "q", "coriolis_matrix": "qv", "kinetic_energy": "qv", "integrate": "qv",
            "difference": "q"}
    if bad == "2d" and call == "mass_matrix":   # a batch of one state (test_batch.py)
        assert fn(q=mk(q)).shape == (1, arm.nv, arm.nv)
        return
    for kw in used.get(call, "qva"):
        args = {"q": q, "v": v, "a": v}
        args[kw] = mk(args[kw])
        with pytest.raises(ldr.InputError):
            fn(**args)


def test_non_unit_quaternion_is_rejected(floating):
    q = ldr.random_configuration(floating, 0)
    q[3:7] *= 1.01
    with pytest.raises(ldr.InputError, match="quaternion"):
        ldr.inverse_dynamics(floating, q, np.zeros(floating.nv), np.zeros(floating.nv))


def test_other_bad_arguments(arm, floating):
    q, z = ldr.neutral_configuration(arm), np.zeros(arm.nv)
    with pytest.raises(ldr.InputError):
        ldr.hybrid_dynamics(arm, q, z, z, z, np.zeros(arm.nv))          # not a bool mask
    with pytest.raises(ldr.InputError):
        ldr.hybrid_dynamics(arm, q, z, z, z, np.zeros(arm.nv + 1, bool))
    with pytest.raises(ldr.InputError):                                 # half a ball joint
        mask = np.zeros(floating.nv, bool)
        mask[floating.joint_v_index[floating.joint_names.index("ball")]] = True
        qf, zf = ldr.neutral_configuration(floating), np.zeros(floating.nv)
        ldr.hybrid_dynamics(floating, qf, zf, zf, zf, mask)
    with pytest.raises(ldr.InputError, match="no_such_link"):
        ldr.frame_pose(arm, q, "no_such_link")
    with pytest.raises(ldr.InputError):
        ldr.inverse_dynamics(arm, q, z, z, f_ext=np.zeros((2, 6)))
    with pytest.raises(ldr.InputError):
        ldr.inverse_dynamics(arm, q, z, z, f_ext={arm.body_names[-1]: [np.nan] * 6})
    with pytest.raises(ldr.InputError):
        arm.with_gravity((0, 0))
    with pytest.raises(AttributeError, match="with_gravity"):
        arm.gravity = (0, 0, -1)
    with pytest.raises(ldr.InputError, match="unknown joint"):
        arm.joint("nope")


def test_builder_rejects_bad_structure():
    b = ldr.ModelBuilder("x")
    b.add_link("a")
    with pytest.raises(ldr.URDFError, match="'a'"):
        b.add_link("a")
    with pytest.raises(ldr.URDFError, match="zero joint axis"):
        b.add_joint("j", ldr.Revolute((0, 0, 0)), "a", "b")
    with pytest.raises(ldr.URDFError, match="General"):
        b.add_joint("g", ldr.General(2), "a", "b")
    with pytest.raises(ldr.URDFError, match="no links"):
        ldr.ModelBuilder("empty").build()


def _two_links():
    b = ldr.ModelBuilder("x")
    b.add_link("a")
    b.add_link("b", mass=1.0, inertia=np.eye(3) * 1e-2)
    return b


@pytest.mark.parametrize("kwargs, match", [
    (dict(mass=1e308), "mass = 1e\\+308 kg is outside the sane range"),
    (dict(mass=np.nan), "mass must be finite"),
    (dict(mass=-1.0), "mass = -1 kg"),
    (dict(mass="heavy"), "mass must be a number"),
    (dict(com=(0, 0, 1e5)), "center of mass .* beyond the sane bound 10000 m"),
    (dict(com=(0, np.inf, 0)), "center of mass must be finite"),
    (dict(com=(0, 0)), "center of mass must be finite numbers of shape \\(3,\\)"),
    (dict(inertia=np.eye(3) * 1e7), "inertia entry 1e\\+07 kg m\\^2 is beyond"),
    (dict(inertia=[[1, 2, 3]]), "inertia must be finite numbers of shape \\(3, 3\\)"),
    (dict(inertia=[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]), "symmetric"),
    (dict(com_rotation=np.eye(3) * 2), "not orthonormal"),
    (dict(com_rotation=np.diag([1.0, 1.0, -1.0])), "not orthonormal with det \\+1"),
])
def test_builder_rejects_absurd_link_values_naming_the_link(kwargs, match):
    b = ldr.ModelBuilder("x")
    with pytest.raises(ldr.URDFError, match=match) as err:
        b.add_link("bad_link", **kwargs)
    assert err.value.element == "bad_link" and "'bad_link'" in str(err.value)


def _origin(R=np.eye(3), p=(0, 0, 0)):
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    return T


@pytest.mark.parametrize("kwargs, match", [
    (dict(origin=_origin(p=(1e5, 0, 0))), "origin .* beyond the sane bound 10000 m"),
    (dict(origin=_origin(R=np.eye(3) * 1.01)), "origin: the rotation is not orthonormal"),
    (dict(origin=_origin(p=(np.nan, 0, 0))), "origin must be finite"),
    (dict(origin=np.r_[_origin()[:3], [[1, 0, 0, 1]]]), "last row"),
    (dict(lower=np.nan), "lower limit is NaN"),
    (dict(lower=1.0, upper=-1.0), "lower limit 1 is above upper limit -1"),
    (dict(effort=-1.0), "effort limit must be >= 0"),
    (dict(velocity="fast"), "velocity limit must be a number"),
    (dict(mimic=("a_joint", np.inf, 0.0)), "mimic multiplier must be finite"),
    (dict(mimic=("a_joint", 1.0, np.nan)), "mimic offset must be finite"),
    (dict(mimic=("a_joint", 1e5, 0.0)), "mimic multiplier = 100000 is outside the sane range"),
    (dict(mimic=("a_joint", 1.0)), "mimic must be \\(master, multiplier, offset\\)"),
    (dict(mimic=(None, 1.0, 0.0)), "mimic master must be a joint name"),
])
def test_builder_rejects_absurd_joint_values_naming_the_joint(kwargs, match):
    b = _two_links()
    with pytest.raises(ldr.URDFError, match=match) as err:
        b.add_joint("bad_joint", ldr.Revolute((0, 0, 1)), "a", "b", **kwargs)
    assert err.value.element == "bad_joint"


@pytest.mark.parametrize("joint, match", [
    (ldr.Revolute((0, np.nan, 1)), "axis must be 3 finite numbers"),
    (ldr.Prismatic((0, 0, np.inf)), "axis must be 3 finite numbers"),
    (ldr.Universal((1, 0, 0), "up"), "axis must be 3 finite numbers"),
    (ldr.Planar((0, 0, 0)), "zero joint axis"),
    (ldr.Universal((1, 0, 0), (-2, 0, 1e-9)), "must not be parallel"),
    (ldr.General(0, T=lambda q: np.eye(4), S=lambda q: np.zeros((6, 0))), "nq >= 1"),
    ("revolute", "not a joint type"),
])
def test_builder_rejects_bad_joint_descriptions(joint, match):
    b = _two_links()
    with pytest.raises(ldr.URDFError, match=match) as err:
        b.add_joint("bad_joint", joint, "a", "b")
    assert err.value.element == "bad_joint"


def test_a_huge_finite_axis_is_a_direction_not_an_overflow():
    """The norm of (1e308, 1e308, 0) overflows; the axis is still the diagonal of x and y."""
    from lie_dynamics_ros.model.joint_types import joint_axes
    axis, _ = joint_axes(ldr.Revolute((1e308, 1e308, 0.0)), "j")
    np.testing.assert_allclose(axis, [2 ** -0.5, 2 ** -0.5, 0.0], rtol=1e-15)
    b = _two_links()
    b.add_joint("j", ldr.Revolute((1e308, 1e308, 0.0)), "a", "b")
    m = b.build()
    assert np.all(np.isfinite(ldr.mass_matrix(m, ldr.neutral_configuration(m))))


def test_mimic_chain_composes_within_the_bound():
    b = ldr.ModelBuilder("chain")
    for n in ("a", "b", "c", "d"):
        b.add_link(n, mass=1.0, inertia=np.eye(3) * 1e-2)
    b.add_joint("j1", ldr.Revolute((0, 0, 1)), "a", "b")
    b.add_joint("j2", ldr.Revolute((0, 0, 1)), "b", "c", mimic=("j1", 100.0, 0.5))
    b.add_joint("j3", ldr.Revolute((0, 0, 1)), "c", "d", mimic=("j2", 100.0, 0.0))
    m = b.build()                      # 100 x 100 is the bound itself
    assert m.mimic_joints["j3"] == ("j1", 1e4, 50.0)
    b.joints[-1].mimic = ("j2", 101.0, 0.0)
    with pytest.raises(ldr.URDFError, match="mimic chain") as err:
        b.build()
    assert err.value.element == "j3"


@pytest.mark.parametrize("text, match", [
    ("<robot name='r'><link name='a'/><link/></robot>", "<link> #2 has no name"),
    ("<robot name='r'><link name='a'><inertial><mass value='1'/><mass value='2'/>"
     "</inertial></link></robot>", "link 'a': 2 <mass> elements"),
    ("<robot name='r'><link name='a'><inertial><mass value='\u0661'/></inertial></link></robot>",
     "not a finite number"),
    ("<robot name='r'><link name='a'><inertial><mass value='1_0'/></inertial></link></robot>",
     "not a finite number"),
    ("<robot name='r'><link name='a'><inertial><origin rpy='0 0 1e5'/></inertial></link>"
     "</robot>", "beyond the sane bound 10000 rad"),
    ("<robot name='r'><link name='a'/><link name='b'/><joint name='j' type='revolute'>"
     "<parent link='a'/><child link='b'/><axis/></joint></robot>", "<axis> needs the attribute xyz"),
    ("<robot name='r'><link name='a'/><link name='b'/><joint name='j' type='revolute'>"
     "<parent link='a'/><child link='b'/><mimic multiplier='2'/></joint></robot>",
     "<mimic> without a joint"),
    ("<robot name='r'><link name='a'/><link name='b'/><joint name='j' type='revolute'>"
     "<parent link='a'/></joint></robot>", "needs <child link="),
])
def test_urdf_values_are_checked_where_they_are_read(text, match):
    with pytest.raises(ldr.URDFError, match=match):
        ldr.load_urdf(text)


def test_bytes_that_are_not_utf8_are_a_urdf_error():
    with pytest.raises(ldr.URDFError, match="UTF-8"):
        ldr.load_urdf(b"<robot name='\xff'/>")


def test_bundled_names_and_xacro_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                 # bundled names work from any folder
    assert ldr.load_urdf("loops/four_bar").loops and ldr.load_urdf("loops/delta.urdf").loops
    assert ldr.load_urdf("arm7").nv == 7 and ldr.load_urdf("double_pendulum.urdf").nv == 2
    with pytest.raises(ldr.URDFError, match="bundled robot"):
        ldr.load_urdf("no_such_robot")
    with pytest.raises(ldr.URDFError, match="bundled robot"):
        ldr.load_urdf("loops/no_such_mechanism")
    xacro = ('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
             '<xacro:macro name="leg"/><link name="base"/></robot>')
    with pytest.raises(ldr.URDFError, match="run xacro first"):
        ldr.load_urdf(xacro)
