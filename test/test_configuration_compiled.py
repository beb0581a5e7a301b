"""``ldr.integrate``, ``ldr.difference`` and ``ldr.neutral_configuration``, one compiled call
each (kernels/configuration.py), against

* the numpy implementation they replaced, kept here as the oracle (one formula per joint kind,
  written with ``lie.so3``/``lie.se3``), on every joint kind: free, ball, planar, universal,
  revolute (continuous and limited), prismatic, mimic and General joints;
* Pinocchio's ``integrate`` and ``difference`` on ur5, solo12 and talos_reduced;
* the identities difference(q, integrate(q, v)) = v and integrate(q0, difference(q0, q1)) = q1;

and their errors for bad input.
"""
import numpy as np
import pinocchio as pin
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.kernels import configuration as KC
from lie_dynamics_ros.kernels import joints as J
from lie_dynamics_ros.lie import se3, so3
from models import bundled, general_twin, zoo
from oracle import PinMap, build_pin_model, erd


# ----------------------------------------------------------------------------- numpy oracle
def _groups(model):
    return [(j.q_index, j.v_index, j.joint.kind) for j in model.joints
            if j.mimic is None and j.joint.kind in (J.FREE, J.SPHERICAL)]


def _conj(qt):
    return np.array([-qt[0], -qt[1], -qt[2], qt[3]])


def ref_integrate(model, q, v, dt=1.0):
    """T exp(xi dt) on free joints (body twist), R exp(w dt) on ball joints, q + v dt else."""
    out = np.empty(model.nq)
    vq, vv = model.vector_q_index, model.vector_v_index
    out[vq] = q[vq] + v[vv] * dt
    for qi, vi, kind in _groups(model):
        if kind == J.FREE:
            vl, w = v[vi:vi + 3] * dt, v[vi + 3:vi + 6] * dt
            R = so3.quat_to_rot(q[qi + 3:qi + 7])
            out[qi:qi + 3] = q[qi:qi + 3] + R @ (so3.left_jacobian(w) @ vl)
            out[qi + 3:qi + 7] = so3.quat_multiply(q[qi + 3:qi + 7], so3.quat_exp(w))
        else:
            out[qi:qi + 4] = so3.quat_multiply(q[qi:qi + 4], so3.quat_exp(v[vi:vi + 3] * dt))
    return out


def ref_difference(model, q0, q1):
    """se3.log(T0^-1 T1) (matrix log) on free joints, the quaternion log on ball joints,
    q1 - q0 else, continuous angles wrapped into [-pi, pi)."""
    out = np.empty(model.nv)
    vq, vv = model.vector_q_index, model.vector_v_index
    out[vv] = q1[vq] - q0[vq]
    for qi, vi, kind in _groups(model):
        if kind == J.FREE:
            T0 = se3.make(so3.quat_to_rot(q0[qi + 3:qi + 7]), q0[qi:qi + 3])
            T1 = se3.make(so3.quat_to_rot(q1[qi + 3:qi + 7]), q1[qi:qi + 3])
            out[vi:vi + 6] = se3.log(se3.inv(T0) @ T1)
        else:
            out[vi:vi + 3] = so3.quat_log(so3.quat_multiply(_conj(q0[qi:qi + 4]), q1[qi:qi + 4]))
    c = model.continuous_v
    out[c] = np.mod(out[c] + np.pi, 2 * np.pi) - np.pi
    return out


def ref_neutral(model):
    q = np.zeros(model.nq)
    for qi, _, kind in _groups(model):
        q[qi + (6 if kind == J.FREE else 3)] = 1.0
    return q


# ----------------------------------------------------------------------------- models
def _models():
    twin, general = general_twin(0)
    return {"zoo": zoo(0), "zoo_fixed_base": zoo(1, floating=False, mimic=False),
            "zoo_seed3": zoo(3), "general": general, "general_builtin": twin,
            "arm7": bundled("arm7.urdf"), "arm7_floating": bundled("arm7.urdf", True),
            "planar_2r": bundled("planar_2r.urdf")}


MODELS = _models()


def test_the_models_hold_every_joint_kind():
    """The comparisons below see each kind, a mimic joint, continuous and General joints."""
    kinds = {j.joint.kind for m in MODELS.values() for j in m.joints}
    assert kinds >= {J.REVOLUTE, J.PRISMATIC, J.FREE, J.SPHERICAL, J.PLANAR, J.UNIVERSAL,
                     J.GENERAL}
    assert MODELS["zoo"].has_mimic and MODELS["general"].has_general
    assert MODELS["zoo"].continuous_v.size == 2


def _states(model, seed, scale):
    """(q0, q1, v): random configurations, and a velocity of the given size."""
    rng = np.random.default_rng(seed)
    q0, q1 = ldr.random_configuration(model, rng), ldr.random_configuration(model, rng)
    return q0, q1, scale * rng.normal(size=model.nv)


# rotation angles of v dt across the series switch of so3 (0.5 rad), near 0 and beyond pi
SCALES = [0.0, 1e-9, 1e-4, 0.2, 0.3, 1.0, 3.0]


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("scale", SCALES)
def test_integrate_equals_the_numpy_oracle(name, scale):
    model = MODELS[name]
    for seed in range(4):
        q0, _, v = _states(model, seed, scale)
        for dt in (1.0, 0.37):
            ours, ref = ldr.integrate(model, q0, v, dt), ref_integrate(model, q0, v, dt)
            np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-14 * (1 + np.abs(ref).max()))


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("scale", SCALES)
def test_difference_equals_the_numpy_oracle(name, scale):
    """q1 random (rotations up to pi apart) and q1 = q0 (+) v (close, in the series range)."""
    model = MODELS[name]
    for seed in range(4):
        q0, q1, v = _states(model, seed, scale)
        for target in (q1, ref_integrate(model, q0, v)):
            ours, ref = ldr.difference(model, q0, target), ref_difference(model, q0, target)
            np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12 * (1 + np.abs(ref).max()))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_neutral_configuration_equals_the_numpy_oracle(name):
    model = MODELS[name]
    np.testing.assert_array_equal(ldr.neutral_configuration(model), ref_neutral(model))


def test_difference_normalises_the_quaternions_as_the_oracle():
    """Quaternions of norm 0.5 and 3 (accepted as before: their rotation is used)."""
    model = MODELS["zoo"]
    q0, q1, _ = _states(model, 5, 1.0)
    for qi, _, kind in _groups(model):
        s = slice(qi + (3 if kind == J.FREE else 0), qi + (7 if kind == J.FREE else 4))
        q0[s] *= 0.5
        q1[s] *= 3.0
    np.testing.assert_allclose(ldr.difference(model, q0, q1), ref_difference(model, q0, q1),
                               rtol=0, atol=1e-12)
    v = np.random.default_rng(1).normal(size=model.nv)
    np.testing.assert_allclose(ldr.integrate(model, q0, v, 0.1), ref_integrate(model, q0, v, 0.1),
                               rtol=0, atol=1e-14)


def test_continuous_joints_wrap_and_limited_ones_do_not():
    """zoo's 'rev' and 'rev2' have no limits: 2 pi + 0.1 apart is 0.1; arm7's are limited."""
    model = MODELS["zoo"]
    q0 = ldr.random_configuration(model, 0)
    q1 = q0.copy()
    rev = [model.joint_q_index[model.joint_names.index(n)] for n in ("rev", "rev2")]
    q1[rev] += 2 * np.pi + 0.1
    d = ldr.difference(model, q0, q1)
    np.testing.assert_allclose(d[model.continuous_v], 0.1, atol=1e-12)
    others = np.setdiff1d(np.arange(model.nv), model.continuous_v)
    np.testing.assert_allclose(d[others], 0.0, atol=1e-12)
    arm = MODELS["arm7"]
    q = ldr.neutral_configuration(arm)
    assert ldr.difference(arm, q, q + 4.0)[0] == pytest.approx(4.0, abs=1e-14)


# ----------------------------------------------------------------------------- identities
@pytest.mark.parametrize("name", sorted(MODELS))
def test_difference_inverts_integrate(name):
    """difference(q, q (+) v) = v while every rotation of v stays below pi (and continuous
    angles within [-pi, pi)), and q0 (+) difference(q0, q1) = q1 (quaternions up to sign)."""
    model = MODELS[name]
    for seed in range(5):
        q0, q1, v = _states(model, seed, 0.5)
        np.testing.assert_allclose(ldr.difference(model, q0, ldr.integrate(model, q0, v)), v,
                                   rtol=0, atol=1e-12)
        back = ldr.integrate(model, q0, ldr.difference(model, q0, q1))
        dq = ldr.difference(model, q1, back)          # zero on the manifold, signs aside
        np.testing.assert_allclose(dq, 0.0, atol=1e-12)


# ----------------------------------------------------------------------------- Pinocchio
ROBOTS = [("ur5", "ur_description/urdf/ur5_robot.urdf", False),
          ("solo12", "solo_description/robots/solo12.urdf", True),
          ("talos_reduced", "talos_data/robots/talos_reduced.urdf", True)]


def _same_configuration(model, mp, q, qp):
    """q (ours) and qp (Pinocchio's) are one configuration: equal coordinates, quaternions up
    to sign."""
    ours = mp.q_to_pin(q)
    for j in model.joints:
        if j.joint.kind in (J.FREE, J.SPHERICAL):
            e = next(e for e in mp.entries if e[1] == j.q_index)
            s = slice(e[5] + (3 if j.joint.kind == J.FREE else 0), e[5] + e[7])
            if ours[s] @ qp[s] < 0:
                ours[s] = -ours[s]
    np.testing.assert_allclose(ours, qp, rtol=0, atol=1e-12)


@pytest.mark.parametrize("robot,rel,floating", ROBOTS)
def test_integrate_and_difference_equal_pinocchios(robot, rel, floating):
    path = erd(rel)
    model = ldr.load_urdf(path, floating_base=floating)
    pm = build_pin_model(path, floating_base=floating)
    mp = PinMap(model, pm)
    for seed in range(5):
        q0, q1, v = _states(model, seed, 1.0)
        qp0, qp1 = mp.q_to_pin(q0), mp.q_to_pin(q1)
        for dt in (1.0, 0.05):
            _same_configuration(model, mp, ldr.integrate(model, q0, v, dt),
                                pin.integrate(pm, qp0, mp.v_to_pin(v, q0) * dt))
        np.testing.assert_allclose(mp.v_to_pin(ldr.difference(model, q0, q1), q0),
                                   pin.difference(pm, qp0, qp1), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(mp.q_to_pin(ldr.neutral_configuration(model)), pin.neutral(pm))


# ----------------------------------------------------------------------------- input
def test_any_array_like_gives_the_same_result():
    """Lists, (n, 1) columns, read-only and strided arrays, an int or numpy dt: the checked
    path, the same numbers as the one call."""
    model = MODELS["zoo"]
    q0, q1, v = _states(model, 0, 1.0)
    want_i, want_d = ldr.integrate(model, q0, v, 2.0), ldr.difference(model, q0, q1)
    ro0, ro1, rov = q0.copy(), q1.copy(), v.copy()
    for a in (ro0, ro1, rov):
        a.flags.writeable = False
    strided = np.repeat(q0, 2)[::2]
    for q, vv, dt in ((q0.tolist(), v.tolist(), 2), (q0[:, None], v[:, None], np.float64(2)),
                      (ro0, rov, 2.0), (strided, v, np.array(2.0)), (q0, v, 2)):
        np.testing.assert_array_equal(ldr.integrate(model, q, vv, dt), want_i)
    for a, b in ((q0.tolist(), q1.tolist()), (q0[:, None], q1[:, None]), (ro0, ro1),
                 (strided, q1)):
        np.testing.assert_array_equal(ldr.difference(model, a, b), want_d)


def test_outputs_are_new_arrays():
    model = MODELS["arm7"]
    q = ldr.neutral_configuration(model)
    a, b = ldr.integrate(model, q, np.zeros(model.nv)), ldr.integrate(model, q, np.zeros(model.nv))
    assert a is not b and a is not q and not np.shares_memory(a, q)
    assert ldr.difference(model, q, q) is not ldr.difference(model, q, q)


@pytest.mark.parametrize("where", ["q", "v", "dt"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input_to_integrate(where, bad):
    model = MODELS["zoo"]
    q, _, v = _states(model, 0, 1.0)
    dt = 0.1
    if where == "q":
        q[0] = bad
    elif where == "v":
        v[-1] = bad
    else:
        dt = bad
    with pytest.raises(ldr.InputError, match=r"non-finite values in q, v or dt"):
        ldr.integrate(model, q, v, dt)


@pytest.mark.parametrize("where", ["q0", "q1"])
def test_non_finite_input_to_difference(where):
    model = MODELS["zoo"]
    q0, q1, _ = _states(model, 0, 1.0)
    {"q0": q0, "q1": q1}[where][5] = np.nan
    with pytest.raises(ldr.InputError, match=r"non-finite values in q0 or q1"):
        ldr.difference(model, q0, q1)


@pytest.mark.parametrize("joint", ["root_joint", "ball"])
def test_a_zero_quaternion_names_its_joint(joint):
    model = MODELS["zoo"]
    q0, q1, v = _states(model, 0, 1.0)
    j = model.joint(joint)
    i = j.q_index + (3 if j.joint.kind == J.FREE else 0)
    q1[i:i + 4] = 0.0
    with pytest.raises(ldr.InputError, match=rf"quaternion must be finite and non-zero: q1 of "
                                             rf"joint '{joint}'"):
        ldr.difference(model, q0, q1)
    with pytest.raises(ldr.InputError, match=rf"q of joint '{joint}'"):
        ldr.integrate(model, q1, v)


@pytest.mark.parametrize("call", ["integrate", "difference"])
def test_wrong_lengths_and_types(call):
    model = MODELS["zoo"]
    q, _, v = _states(model, 0, 1.0)
    fn = {"integrate": lambda a, b: ldr.integrate(model, a, b),
          "difference": lambda a, b: ldr.difference(model, a, b)}[call]
    other = v if call == "integrate" else q
    for a, b in ((q[:-1], other), (q, other[:-1]), (np.r_[q, 0.0], other), (q[None, :], other),
                 (["x"] * model.nq, other), (q.astype(np.float32)[:-1], other)):
        with pytest.raises(ldr.InputError, match=r"must|shape"):
            fn(a, b)
    with pytest.raises(ldr.InputError, match="dt must be a real number"):
        ldr.integrate(model, q, v, "fast")


def test_the_entries_are_compiled_for_one_signature_only():
    """No silent second compile: after a call, other argument types take the checked path."""
    model = MODELS["arm7"]
    q = ldr.neutral_configuration(model)
    ldr.integrate(model, q, np.zeros(model.nv))
    ldr.difference(model, q, q)
    for name in ("integrate", "difference", "neutral"):
        fn, sig = KC.SIGNATURES[name]
        assert list(fn.signatures) == [sig], name
