"""Bad input gets a typed error that names the culprit, never a crash or a wrong number."""
import glob
import os
import warnings

import numpy as np
import pytest
import yaml

import lie_dynamics_ros as ldr
from models import HERE, bundled, zoo

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
    assert m.inertias[:, 5, 5].sum() == pytest.approx(spec["moving_mass"], rel=1e-12)
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


@pytest.fixture(scope="module")
def arm():
    return bundled("arm7.urdf")


@pytest.fixture(scope="module")
def floating():
    return zoo(0)


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
