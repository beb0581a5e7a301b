"""``ldr.identify``: inertial parameters, damping and Coulomb friction from (q, v, a, tau).

Synthetic data: a "true" arm (the CAD arm with perturbed inertias and friction), torques from
our inverse dynamics + friction_torques, plus Gaussian noise of 1 % of each joint's RMS
torque. The held-out check compares the identified model with the noise-free truth on another
trajectory. The written URDF is checked with Pinocchio (test/oracle.py): its RNEA plus the
URDF's damping * v + friction * sign(v) must equal ``res.predict``.
"""
import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.identification import consistency as C
from oracle import Oracle, bundled, build_pin_model, erd

ROBOTS = {"arm7": bundled("arm7.urdf"), "ur5": erd("ur_description/urdf/ur5_robot.urdf")}


def perturbed(model, rng, spread=0.3, shift=0.01):
    """Each body's pseudo-inertia scaled by a factor in [1 - spread, 1 + spread] (a wrong
    density) with its mass distribution shifted by up to ``shift`` m (stays physical); damping
    and Coulomb friction drawn per joint."""
    out = []
    for t in ldr.inertial_parameters(model).reshape(-1, 10):
        T = np.eye(4)
        T[:3, 3] = rng.uniform(-shift, shift, 3)
        out.append(C.pseudo_inertia_to_parameters(
            rng.uniform(1 - spread, 1 + spread) * T @ C.pseudo_inertia(t) @ T.T))
    return model.with_inertial_parameters(np.concatenate(out)).with_joint_dynamics(
        damping=rng.uniform(0.2, 2.0, model.nv), friction=rng.uniform(0.5, 3.0, model.nv))


def sines(model, n, duration, seed, harmonics=5, f0=0.1):
    """A random sum of sines around the middle of each joint's range: q, v, a (n, nv)."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, duration, n)
    lo, hi = model.lower_limits, model.upper_limits
    mid = np.where(np.isfinite(lo + hi), 0.5 * (lo + hi), 0.0)
    amp = np.minimum(np.where(np.isfinite(hi - lo), 0.35 * (hi - lo), 2.0), 2.0) / harmonics
    q, v, a = (np.zeros((n, model.nv)) for _ in range(3))
    q += mid
    for k in range(1, harmonics + 1):
        w = 2 * np.pi * f0 * k
        c, s = rng.standard_normal((2, model.nv)) * amp
        sn, cs = np.sin(w * np.outer(t, np.ones(model.nv))), np.cos(w * np.outer(t, np.ones(model.nv)))
        q += c * sn + s * cs
        v += w * (c * cs - s * sn)
        a -= w * w * (c * sn + s * cs)
    return q, v, a


def measured(true, q, v, a, rng, noise=0.01):
    tau = ldr.inverse_dynamics(true, q, v, a) + ldr.friction_torques(true, v)
    return tau + noise * np.sqrt(np.mean(tau ** 2, axis=0)) * rng.standard_normal(tau.shape)


@pytest.fixture(scope="module", params=sorted(ROBOTS))
def case(request):
    path = ROBOTS[request.param]
    cad = ldr.load_urdf(path)
    rng = np.random.default_rng(7)
    true = perturbed(cad, rng)
    q, v, a = sines(cad, 3000, 60.0, seed=1)
    res = ldr.identify(cad, q, v, a, measured(true, q, v, a, rng), urdf=path)
    return request.param, path, cad, true, res


def test_held_out_torques_friction_and_physical_inertias(case):
    name, _, cad, true, res = case
    q, v, a = sines(cad, 1000, 20.0, seed=2)                   # another trajectory
    tau = ldr.inverse_dynamics(true, q, v, a) + ldr.friction_torques(true, v)
    rms = np.sqrt(np.mean((res.predict(q, v, a) - tau) ** 2, axis=0))
    peak = np.abs(tau).max(axis=0)
    assert np.all(rms <= 0.005 * peak), f"{name}: held-out RMS % of peak {100 * rms / peak}"
    cad_rms = np.sqrt(np.mean((ldr.inverse_dynamics(cad, q, v, a) - tau) ** 2, axis=0))
    assert np.all(cad_rms > 2 * rms)                   # the identification did something
    np.testing.assert_allclose(res.model.joint_damping, true.joint_damping, rtol=0.1)
    np.testing.assert_allclose(res.model.joint_friction, true.joint_friction, rtol=0.1)
    for body, th in zip(res.model.body_names, ldr.inertial_parameters(res.model).reshape(-1, 10)):
        assert np.linalg.eigvalsh(C.pseudo_inertia(th)).min() >= 0, body
    rep = res.report
    assert rep.rank == rep.n_base and not rep.undetermined and rep.converged
    assert np.isfinite(rep.condition_number) and rep.condition_number >= 1
    assert rep.rms_residual.shape == (cad.nv,) and np.all(rep.relative_rms < 0.01)


def test_base_parameter_standard_deviations_cover_the_truth(case):
    """The truth's base parameters lie within a few reported standard deviations."""
    _, _, cad, true, res = case
    rep = res.report
    names = rep.base_names
    from lie_dynamics_ros.identification.regressors import base_columns, column_names
    B, D, K = base_columns(cad, True, False)
    x_true = np.concatenate([ldr.inertial_parameters(true)] + [
        [true.joint_damping[vi], true.joint_friction[vi]] for vi in cad.joint_v_index])
    beta_true = x_true[B] + K @ x_true[D]
    assert tuple(column_names(cad, True, False)[c] for c in B) == names
    z = (rep.base_values - beta_true) / rep.base_std
    assert np.all(np.isfinite(rep.base_std)) and np.all(rep.base_std > 0)
    assert np.abs(z).max() < 6, dict(zip(names, np.round(z, 1)))
    assert np.mean(np.abs(z) < 3) > 0.9


def test_written_urdf_loads_in_pinocchio_and_agrees_with_predict(case, tmp_path):
    name, path, cad, _, res = case
    out = str(tmp_path / f"{name}_identified.urdf")
    res.write_urdf(out)
    pm = build_pin_model(out)
    oracle = Oracle(ldr.load_urdf(out), out, floating_base=False)
    q, v, a = sines(cad, 20, 5.0, seed=3)
    idx = [pm.joints[pm.getJointId(n)].idx_v for n in cad.joint_names]
    damping, friction = np.asarray(pm.damping)[idx], np.asarray(pm.friction)[idx]
    for k in range(len(q)):
        pin_tau = oracle.rnea(q[k], v[k], a[k]) + damping * v[k] + friction * np.sign(v[k])
        np.testing.assert_allclose(pin_tau, res.predict(q[k], v[k], a[k]), rtol=1e-9,
                                   atol=1e-9 * np.abs(pin_tau).max())
    # our loader reads back the same model (links merged by fixed joints included)
    back = ldr.load_urdf(out)
    np.testing.assert_allclose(ldr.inertial_parameters(back), ldr.inertial_parameters(res.model),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(back.joint_damping, res.model.joint_damping, rtol=1e-12)


def test_written_urdf_loads_in_mujoco_with_the_same_dynamics(case, tmp_path):
    """MuJoCo (welded links fused, geometry dropped) reads the identified inertias, damping
    and frictionloss: its inverse dynamics without the frictionloss constraint equals our
    rigid-body torque plus damping * v."""
    mujoco = pytest.importorskip("mujoco")
    import xml.etree.ElementTree as ET
    name, _, cad, _, res = case
    out = str(tmp_path / f"{name}_identified.urdf")
    res.write_urdf(out)
    root = ET.parse(out).getroot()
    for link in root.findall("link"):
        for tag in ("visual", "collision"):
            for e in link.findall(tag):
                link.remove(e)
    ET.SubElement(ET.SubElement(root, "mujoco"), "compiler", discardvisual="true",
                  fusestatic="true", inertiafromgeom="false")
    m = mujoco.MjModel.from_xml_string(ET.tostring(root, encoding="unicode"))
    m.opt.gravity[:] = cad.gravity
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS)
    np.testing.assert_allclose(m.dof_damping, res.model.joint_damping, rtol=1e-12)
    np.testing.assert_allclose(m.dof_frictionloss, res.model.joint_friction, rtol=1e-12)
    d = mujoco.MjData(m)
    q, v, a = sines(cad, 10, 5.0, seed=3)
    for k in range(len(q)):
        d.qpos[:], d.qvel[:], d.qacc[:] = q[k], v[k], a[k]
        mujoco.mj_inverse(m, d)
        ours = ldr.inverse_dynamics(res.model, q[k], v[k], a[k]) + res.model.joint_damping * v[k]
        np.testing.assert_allclose(d.qfrc_inverse, ours, rtol=0, atol=1e-10 * np.abs(ours).max())


def test_write_urdf_keeps_the_rest_of_the_file_and_zeroes_merged_links(tmp_path):
    """arm7's hand is welded to link 7 by fixed joints: the identified body inertia goes into
    the moving joint's child link (panda_link7), the welded links get mass 0."""
    import xml.etree.ElementTree as ET
    path = ROBOTS["arm7"]
    cad = ldr.load_urdf(path)
    src = ET.parse(path).getroot()
    merged = [ln for ln, (row, _) in cad.frames.items()
              if row > 0 and ln != cad.body_names[row - 1]]
    heavy = [ln for ln in merged if src.find(f"link[@name='{ln}']/inertial/mass") is not None
             and float(src.find(f"link[@name='{ln}']/inertial/mass").get("value")) > 0]
    assert "panda_hand" in heavy
    rng = np.random.default_rng(3)
    true = perturbed(cad, rng)
    q, v, a = sines(cad, 600, 30.0, seed=4)
    res = ldr.identify(cad, q, v, a, measured(true, q, v, a, rng, noise=0.0), urdf=path)
    out = str(tmp_path / "arm7.urdf")
    res.write_urdf(out)
    new = ET.parse(out).getroot()
    for ln in heavy:
        assert float(new.find(f"link[@name='{ln}']/inertial/mass").get("value")) == 0.0
    for tag in ("visual", "collision", "transmission", "gazebo"):
        assert len(list(new.iter(tag))) == len(list(src.iter(tag))), tag
    assert [j.get("name") for j in new.iter("joint")] == [j.get("name") for j in src.iter("joint")]
    with open(path) as f, open(out) as g:
        assert f.read().count("<!--") == g.read().count("<!--") > 0          # comments kept
    assert float(new.find("link[@name='panda_link7']/inertial/mass").get("value")) == \
        pytest.approx(ldr.inertial_parameters(res.model)[60])


def test_noise_free_rich_data_are_fitted_exactly_and_never_by_a_non_physical_body():
    cad = ldr.load_urdf(ROBOTS["arm7"])
    rng = np.random.default_rng(5)
    true = perturbed(cad, rng)
    q, v, a = sines(cad, 400, 40.0, seed=6)
    tau = measured(true, q, v, a, rng, noise=0.0)
    res = ldr.identify(cad, q, v, a, tau)
    np.testing.assert_allclose(res.predict(q, v, a), tau, rtol=0, atol=1e-6 * np.abs(tau).max())
    np.testing.assert_allclose(res.model.joint_friction, true.joint_friction, rtol=1e-5)
    # ordinary least squares moves the parameters the data do not see by the minimum-norm
    # step from CAD, which here leaves a body non-physical: refused, never returned
    with pytest.raises(ldr.InputError, match="not physical"):
        ldr.identify(cad, q, v, a, tau, consistent=False)
    # from data of the CAD model itself it stays at CAD and fits exactly
    tau_cad = ldr.inverse_dynamics(cad, q, v, a)
    ols = ldr.identify(cad, q, v, a, tau_cad, friction=False, consistent=False)
    np.testing.assert_allclose(ols.predict(q, v, a), tau_cad, rtol=0,
                               atol=1e-8 * np.abs(tau_cad).max())


def test_armature_columns_recover_the_armature_base_parameters():
    """armature=True: the base parameters (armature columns included; the first joint's
    armature is inseparable from link 1's inertia about its axis) are recovered from
    noise-free data. Only the regressor side is checked: res.predict adds the armature once
    the algorithms put model.armature on M's diagonal."""
    from lie_dynamics_ros.identification.regressors import base_columns, column_names
    cad = ldr.load_urdf(ROBOTS["arm7"])
    rng = np.random.default_rng(2)
    true = perturbed(cad, rng)
    arm = rng.uniform(0.05, 0.3, cad.nv)
    q, v, a = sines(cad, 800, 40.0, seed=3)
    tau = ldr.inverse_dynamics(true, q, v, a) + ldr.friction_torques(true, v) + arm * a
    rep = ldr.identify(cad, q, v, a, tau, armature=True).report
    B, D, K = base_columns(cad, True, True)
    x = np.concatenate([ldr.inertial_parameters(true)] + [
        [true.joint_damping[vi], true.joint_friction[vi], arm[vi]] for vi in cad.joint_v_index])
    names = column_names(cad, True, True)
    assert "panda_joint1/armature" not in rep.base_names
    assert "panda_joint7/armature" in rep.base_names
    assert rep.base_names == tuple(names[c] for c in B)
    seen = np.array([n not in rep.undetermined for n in rep.base_names])
    assert seen.sum() >= len(B) - 2
    np.testing.assert_allclose(rep.base_values[seen], (x[B] + K @ x[D])[seen], rtol=1e-5,
                               atol=1e-7 * np.abs(x).max())


def test_rows_of_a_joint_at_rest_are_left_out():
    """A joint that sticks: at rest its Coulomb friction is anything within +-F_c (here the
    torque that holds it, drawn in [0, F_c], one-sided as against a load), which F_c sign(v)
    of a velocity estimate near zero (noise of 1e-3 rad/s) cannot predict. Left out (the
    default ``rest_speed``), friction and the fit are as good as without sticking; kept
    (``rest_speed=0``), the Coulomb friction of the sticking joints is biased."""
    cad = ldr.load_urdf(ROBOTS["arm7"])
    rng = np.random.default_rng(11)
    true = perturbed(cad, rng)
    q, v, a = sines(cad, 2000, 40.0, seed=12)
    stick = [4, 5, 6]
    rest = np.zeros(v.shape, dtype=bool)
    for j in stick:                              # a stuck stretch every few seconds
        for start in rng.integers(0, len(v) - 60, 12):
            rest[start:start + 50, j] = True
    v = np.where(rest, 1e-3 * rng.standard_normal(v.shape), v)
    a = np.where(rest, 0.0, a)
    tau = ldr.inverse_dynamics(true, q, v, a) + ldr.friction_torques(true, v)
    held = rng.uniform(0.0, 1.0, v.shape) * true.joint_friction
    tau = np.where(rest, tau - ldr.friction_torques(true, v) + held, tau)
    tau += 0.005 * np.sqrt(np.mean(tau ** 2, axis=0)) * rng.standard_normal(tau.shape)

    res = ldr.identify(cad, q, v, a, tau)
    from lie_dynamics_ros.identification.reduction import REST_SPEED
    slow = np.abs(v) < REST_SPEED                  # the stuck stretches, and reversals
    assert np.all(slow[rest])
    np.testing.assert_array_equal(res.report.at_rest, slow.sum(axis=0))
    np.testing.assert_allclose(res.model.joint_friction, true.joint_friction, rtol=0.03)
    assert "rows at rest left out" in str(res.report)
    kept = ldr.identify(cad, q, v, a, tau, rest_speed=0.0)
    assert not kept.report.at_rest.any()
    err = np.abs(kept.model.joint_friction / true.joint_friction - 1.0)
    assert err[stick].max() > 0.1, err
    assert err[stick].max() > 3 * np.abs(res.model.joint_friction / true.joint_friction
                                         - 1.0)[stick].max()


@pytest.mark.parametrize("seed", range(4))
def test_geometric_prior_keeps_unexcited_parameters_nearer_the_truth(seed):
    """Static data (the arm held in 300 poses: v = a = 0) show gravity only: masses and first
    moments, never the second moments. The truth has wrong CAD densities (and COM shifts up
    to 1 cm), so its second moments scale with its masses. Each prior with the same
    documented weight (default, 1 / s^2 with s = 0.3); the unexcited parameters are judged by
    the inertial torques M(q) a + C(q, v) v of a dynamic trajectory."""
    cad = ldr.load_urdf(ROBOTS["arm7"])
    rng = np.random.default_rng(seed)
    true = perturbed(cad, rng).with_joint_dynamics(damping=0.0, friction=0.0)
    q = np.array([ldr.random_configuration(cad, rng=rng) for _ in range(300)])
    v = a = np.zeros_like(q)
    tau = measured(true, q, v, a, rng)
    qh, vh, ah = sines(cad, 500, 20.0, seed=7)

    def inertial(m):
        return ldr.inverse_dynamics(m, qh, vh, ah) - ldr.gravity_torques(m, qh)

    ref = inertial(true)
    err = {}
    for prior in ("geometric", "euclidean"):
        res = ldr.identify(cad, q, v, a, tau, friction=False, prior=prior)
        rep = res.report
        assert len(rep.undetermined) > 10                     # the data leave these free
        assert all(np.isinf(sd) == (n in rep.undetermined)
                   for n, sd in zip(rep.base_names, rep.base_std))
        err[prior] = np.sqrt(np.mean((inertial(res.model) - ref) ** 2))
    err["cad"] = np.sqrt(np.mean((inertial(cad) - ref) ** 2))
    assert err["geometric"] < err["euclidean"] < err["cad"], err


def test_riemannian_distance_is_frame_and_unit_invariant():
    rng = np.random.default_rng(0)
    cad = ldr.load_urdf(ROBOTS["arm7"])
    a, b = ldr.inertial_parameters(cad).reshape(-1, 10)[2:4]
    d = C.riemannian_distance(a, b)
    A = np.eye(4)
    A[:3, :3] = np.linalg.qr(rng.standard_normal((3, 3)))[0] * 100.0     # rotate, m -> cm
    A[:3, 3] = rng.standard_normal(3)                                   # and move the frame
    moved = [C.pseudo_inertia_to_parameters(A @ C.pseudo_inertia(t) @ A.T) for t in (a, b)]
    assert d > 0.1
    assert C.riemannian_distance(*moved) == pytest.approx(d, rel=1e-9)
    eu = np.linalg.norm(a - b)
    assert abs(np.linalg.norm(moved[0] - moved[1]) - eu) > 0.1 * eu     # Euclidean is not


def test_log_cholesky_round_trip_and_always_physical():
    rng = np.random.default_rng(1)
    for t in ldr.inertial_parameters(ldr.load_urdf(ROBOTS["arm7"])).reshape(-1, 10):
        np.testing.assert_allclose(
            C.log_cholesky_to_parameters(C.parameters_to_log_cholesky(t)), t, rtol=1e-6,
            atol=1e-8 * np.abs(t).max())
    for _ in range(200):
        assert C.is_physical(C.log_cholesky_to_parameters(rng.standard_normal(10) * 3))


def test_with_inertial_parameters():
    cad = ldr.load_urdf(ROBOTS["arm7"])
    th = ldr.inertial_parameters(cad)
    m2 = cad.with_inertial_parameters(1.5 * th)
    np.testing.assert_allclose(ldr.inertial_parameters(m2), 1.5 * th, rtol=1e-14, atol=1e-15)
    q, v, a = (x[0] for x in sines(cad, 1, 1.0, seed=0))
    np.testing.assert_allclose(ldr.inverse_dynamics(m2, q, v, a),
                               1.5 * ldr.inverse_dynamics(cad, q, v, a), rtol=1e-12)
    assert m2.total_mass == pytest.approx(cad.total_mass + 0.5 * th[0::10].sum())
    bad = th.copy()
    bad[10 * 3] = -1.0                                 # negative mass of the 4th body
    with pytest.raises(ldr.InputError, match=cad.body_names[3]):
        cad.with_inertial_parameters(bad)
    with pytest.raises(ldr.InputError, match="70 finite numbers"):
        cad.with_inertial_parameters(th[:-1])


@pytest.fixture(scope="module")
def small():
    cad = ldr.load_urdf(ROBOTS["arm7"])
    q, v, a = sines(cad, 200, 20.0, seed=8)
    return cad, q, v, a, measured(cad, q, v, a, np.random.default_rng(0))


@pytest.mark.parametrize("change, match", [
    (lambda q, v, a, t: (q[:, :6], v, a, t), r"q must have shape \(N, 7\)"),
    (lambda q, v, a, t: (q, v[:-1], a, t), "same number of samples"),
    (lambda q, v, a, t: (q, v, a, np.where(np.arange(7) == 3, np.nan, t)),
     r"tau has 200 non-finite values \(first: sample 0, column 3\)"),
    (lambda q, v, a, t: (q[:8], v[:8], a[:8], t[:8]), "too few samples"),
    (lambda q, v, a, t: (q, 0 * v, 0 * a, t), "does not excite .*condition number"),
    (lambda q, v, a, t: (q, 1e-3 * v, 0 * a, t), "1400 of them at rest"),
])
def test_bad_inputs_name_the_cause(small, change, match):
    cad, *data = small
    # gravity only (v = 0): without friction columns no row is at rest, and the second
    # moments are not excited
    friction = "excite" not in match
    with pytest.raises(ldr.InputError, match=match):
        ldr.identify(cad, *change(*data), prior=None, friction=friction)


def test_bad_options_and_missing_source(small):
    cad, q, v, a, tau = small
    with pytest.raises(ldr.InputError, match="prior must be one of"):
        ldr.identify(cad, q, v, a, tau, prior="flat")
    with pytest.raises(ldr.InputError, match="prior_weight"):
        ldr.identify(cad, q, v, a, tau, prior_weight=-1)
    for bad in (-0.1, np.nan, "slow"):
        with pytest.raises(ldr.InputError, match="rest_speed"):
            ldr.identify(cad, q, v, a, tau, rest_speed=bad)
    res = ldr.identify(cad, q, v, a, tau, friction=False)
    with pytest.raises(ldr.InputError, match="source URDF"):
        res.write_urdf("/tmp/never_written.urdf")
