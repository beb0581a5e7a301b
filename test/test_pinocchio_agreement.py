"""Cross-check of every public dynamics quantity against Pinocchio (the test oracle).

Robots: the bundled URDFs (``urdf/arm7.urdf``, ``urdf/double_pendulum.urdf``,
``urdf/planar_2r.urdf``), a synthetic robot with every URDF joint kind (planar, continuous,
prismatic, unaligned axes, mimic with offset, merged fixed links) and real example-robot-data
robots -- arms, quadrupeds, humanoids, mobile manipulators (continuous, prismatic and mimic
joints; talos_full_v2/romeo through Pinocchio's extended model) -- each fixed AND floating base,
at several seeded random states.  Tolerance: ``||ours - ref|| / max(1, ||ref||) <= 1e-8``.
Forward/hybrid dynamics are skipped where M is singular (massless subtrees: romeo's fingers; a
massless base on a floating arm7/double_pendulum/planar_2r).

Coordinates are mapped by joint name in ``test/oracle.py``.  The largest deviation seen per robot
and quantity is printed at the end of the module (run with ``-s``) and written as JSON to the
path in ``$LDR_ORACLE_REPORT`` when that variable is set.
"""
from __future__ import annotations

import json
import os
import sys
import zlib

import numpy as np
import pytest

import pinocchio as pin  # noqa: E402  (a test dependency: make test installs it)

import lie_dynamics_ros as ldr  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from oracle import TOL, Oracle, bundled, erd, rel_err, urdf_joints, urdf_links  # noqa: E402

N_STATES = 3


def _inertial(m, xyz, rpy="0 0 0"):
    return ('<inertial><origin xyz="%s" rpy="%s"/><mass value="%g"/><inertia ixx="0.021" ixy="0.002" '
            'ixz="-0.001" iyy="0.032" iyz="0.003" izz="0.043"/></inertial>' % (xyz, rpy, m))


# every joint kind the URDF loader knows, unaligned axes, a mimic with multiplier and offset, links
# merged through fixed joints (with and without inertia); the planar joint checks v = dq/dt
MIXED_URDF = """<?xml version="1.0"?>
<robot name="mixed">
  <link name="base">%(ib)s</link>
  <link name="l1">%(i1)s</link> <link name="l2">%(i2)s</link> <link name="l3">%(i3)s</link>
  <link name="l4">%(i4)s</link> <link name="l5">%(i5)s</link> <link name="tool">%(it)s</link>
  <link name="marker"/>
  <joint name="plane" type="planar"><parent link="base"/><child link="l1"/>
    <origin xyz="0.1 -0.2 0.3" rpy="0.2 -0.1 0.4"/><axis xyz="0 0 1"/></joint>
  <joint name="r1" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.3 0.05 0.1" rpy="0.5 0.2 -0.3"/><axis xyz="0 0.6 0.8"/>
    <limit lower="-2" upper="2" effort="50" velocity="3"/></joint>
  <joint name="c1" type="continuous"><parent link="l2"/><child link="l3"/>
    <origin xyz="0 0.25 0" rpy="0 0 0.7"/><axis xyz="1 0 0"/><limit effort="20" velocity="4"/></joint>
  <joint name="s1" type="prismatic"><parent link="l3"/><child link="l4"/>
    <origin xyz="0.2 0 -0.1"/><axis xyz="0.6 0 -0.8"/>
    <limit lower="-0.3" upper="0.4" effort="100" velocity="1"/></joint>
  <joint name="m1" type="revolute"><parent link="l2"/><child link="l5"/>
    <origin xyz="-0.1 0.1 0.2" rpy="-0.4 0 0.1"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="3"/>
    <mimic joint="r1" multiplier="0.7" offset="0.2"/></joint>
  <joint name="tool_joint" type="fixed"><parent link="l4"/><child link="tool"/>
    <origin xyz="0 0 0.15" rpy="1.0 0.3 0"/></joint>
  <joint name="marker_joint" type="fixed"><parent link="l5"/><child link="marker"/>
    <origin xyz="0.05 0 0" rpy="0 0.5 0"/></joint>
</robot>
""" % dict(ib=_inertial(2.0, "0 0 0.05"), i1=_inertial(1.5, "0.1 0 0", "0.1 0.2 0.3"),
           i2=_inertial(1.2, "0 0.1 0.02", "-0.3 0 0.1"), i3=_inertial(0.8, "0.05 0 0"),
           i4=_inertial(0.6, "0 0 -0.05", "0 0.4 0"), i5=_inertial(0.4, "0.02 0.03 0"),
           it=_inertial(0.3, "0.01 0 0.02", "0.2 0 0"))


def _mixed_path():
    import tempfile

    path = os.path.join(tempfile.gettempdir(), "ldr_oracle_mixed_%d.urdf" % os.getpid())
    if not os.path.exists(path):
        with open(path, "w") as fh:
            fh.write(MIXED_URDF)
    return path


# (id, path, what it exercises); every robot runs fixed AND floating base
ROBOTS = [
    ("mixed_joints", _mixed_path, "planar, continuous, prismatic, unaligned axes, mimic w/ offset"),
    ("arm7", lambda: bundled("arm7.urdf"), "bundled 7-DOF arm"),
    ("double_pendulum", lambda: bundled("double_pendulum.urdf"), "bundled"),
    ("planar_2r", lambda: bundled("planar_2r.urdf"), "bundled"),
    ("panda", lambda: erd("panda_description/urdf/panda.urdf"), "arm, prismatic fingers, mimic"),
    ("ur5", lambda: erd("ur_description/urdf/ur5_robot.urdf"), "arm"),
    ("kinova", lambda: erd("kinova_description/robots/kinova.urdf"), "arm, continuous joints"),
    ("xarm7", lambda: erd("xarm_description/urdf/xarm7.urdf"), "arm"),
    ("z1", lambda: erd("z1_description/urdf/z1.urdf"), "arm"),
    ("solo12", lambda: erd("solo_description/robots/solo12.urdf"), "quadruped"),
    ("anymal_b", lambda: erd("anymal_b_simple_description/robots/anymal.urdf"), "quadruped"),
    ("hyq", lambda: erd("hyq_description/robots/hyq_no_sensors.urdf"), "quadruped"),
    ("go1", lambda: erd("go1_description/urdf/go1.urdf"), "quadruped"),
    ("talos_reduced", lambda: erd("talos_data/robots/talos_reduced.urdf"), "humanoid 32 DOF"),
    ("g1_29dof", lambda: erd("g1_description/urdf/g1_29dof_rev_1_0.urdf"), "humanoid 29 DOF"),
    ("talos_full", lambda: erd("talos_data/robots/talos_full_v2.urdf"), "humanoid, 12 mimic (extended-model oracle)"),
    ("romeo", lambda: erd("romeo_description/urdf/romeo.urdf"), "humanoid, mimic, massless fingers (M singular)"),
    ("baxter", lambda: erd("baxter_description/urdf/baxter.urdf"), "dual arm, mimic multiplier -1"),
    ("pr2", lambda: erd("pr2_description/urdf/pr2.urdf"), "mobile manip., continuous, prismatic, mimic"),
    ("tiago_no_hand", lambda: erd("tiago_description/robots/tiago_no_hand.urdf"), "continuous + prismatic"),
]

CASES = [pytest.param(rid, getter, fb, id="%s-%s" % (rid, "floating" if fb else "fixed"))
         for rid, getter, _ in ROBOTS for fb in (False, True)]

# ---------------------------------------------------------------------------- shared state
_CACHE: dict = {}
DEVIATIONS: dict = {}  # (case id, quantity) -> largest relative deviation


def _setup(rid, getter, fb):
    key = (rid, fb)
    if key not in _CACHE:
        path = getter()
        assert os.path.exists(path), path
        try:
            model = ldr.load_urdf(path, floating_base=fb)
        except ldr.URDFError as exc:
            # whether such a URDF must load by default is test_example_robot_data's business;
            # here only the numbers are compared
            if "positive semi-definite" not in str(exc):
                raise
            model = ldr.load_urdf(path, floating_base=fb, inertia_check="warn")
        _CACHE[key] = (path, model, Oracle(model, path, fb))
    return _CACHE[key]


def _rng(rid, fb, salt=""):
    return np.random.default_rng(zlib.crc32(("%s-%d-%s" % (rid, fb, salt)).encode()))


def _states(model, rid, fb, n=N_STATES):
    rng = _rng(rid, fb)
    out = []
    for _ in range(n):
        q = np.asarray(ldr.random_configuration(model, rng), dtype=float)
        v = rng.uniform(-1.0, 1.0, model.nv)
        a = rng.uniform(-2.0, 2.0, model.nv)
        out.append((q, v, a))
    return out


def _singular(oracle, q):
    """Pinocchio's M is singular (e.g. romeo's massless finger chains): no forward dynamics."""
    return np.linalg.cond(oracle.crba(q)) > 1e12


def _record(rid, fb, quantity, err):
    key = ("%s-%s" % (rid, "floating" if fb else "fixed"), quantity)
    DEVIATIONS[key] = max(DEVIATIONS.get(key, 0.0), float(err))


def _check(rid, fb, quantity, ours, ref, what=""):
    err = rel_err(ours, ref)
    _record(rid, fb, quantity, err)
    assert err <= TOL, "%s %s: relative deviation %.3e > %.0e %s" % (rid, quantity, err, TOL, what)


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    mixed = os.path.join(__import__("tempfile").gettempdir(), "ldr_oracle_mixed_%d.urdf" % os.getpid())
    if os.path.exists(mixed):
        os.remove(mixed)
    if not DEVIATIONS:
        return
    cases = sorted({c for c, _ in DEVIATIONS})
    quantities = []
    for _, qn in DEVIATIONS:
        if qn not in quantities:
            quantities.append(qn)
    w = max(len(c) for c in cases)
    lines = ["", "largest relative deviation from Pinocchio per robot and quantity",
             "case".ljust(w) + " " + " ".join(qn[:9].rjust(9) for qn in quantities)]
    for c in cases:
        row = [("%9.1e" % DEVIATIONS[(c, qn)]) if (c, qn) in DEVIATIONS else "        -" for qn in quantities]
        lines.append(c.ljust(w) + " " + " ".join(row))
    print("\n".join(lines))
    path = os.environ.get("LDR_ORACLE_REPORT")
    if path:
        with open(path, "w") as fh:
            json.dump({"%s|%s" % k: v for k, v in DEVIATIONS.items()}, fh, indent=1, sort_keys=True)


# ---------------------------------------------------------------------------- structure
@pytest.mark.parametrize("rid,getter,fb", CASES)
def test_structure(rid, getter, fb):
    path, model, oracle = _setup(rid, getter, fb)
    T = oracle.map.T(ldr.neutral_configuration(model))
    assert T.shape == (oracle.pm.nv, model.nv)
    if not oracle.map.has_mimic_rows:
        assert model.nv == oracle.pm.nv
    assert model.nq == len(ldr.neutral_configuration(model))
    if fb:
        assert model.joint_names[0] == "root_joint"
        assert (model.joint_nq[0], model.joint_nv[0]) == (7, 6)
    assert set(urdf_links(path)) <= set(model.frame_names)
    mass_ref = float(sum(oracle.pm.inertias[i].mass for i in range(oracle.pm.njoints)))
    assert abs(model.total_mass - mass_ref) <= 1e-9 * max(1.0, mass_ref)
    np.testing.assert_allclose(model.gravity, [0.0, 0.0, -9.81])


# ---------------------------------------------------------------------------- dynamics
@pytest.mark.parametrize("rid,getter,fb", CASES)
def test_inverse_dynamics(rid, getter, fb):
    path, model, oracle = _setup(rid, getter, fb)
    for q, v, a in _states(model, rid, fb):
        _check(rid, fb, "rnea", ldr.inverse_dynamics(model, q, v, a), oracle.rnea(q, v, a))


@pytest.mark.parametrize("rid,getter,fb", CASES)
def test_mass_matrix(rid, getter, fb):
    path, model, oracle = _setup(rid, getter, fb)
    for q, v, a in _states(model, rid, fb):
        M = ldr.mass_matrix(model, q)
        assert M.shape == (model.nv, model.nv)
        np.testing.assert_allclose(M, M.T, atol=1e-12 * max(1.0, np.abs(M).max()))
        _check(rid, fb, "crba", M, oracle.crba(q))


@pytest.mark.parametrize("rid,getter,fb", CASES)
def test_gravity_torques(rid, getter, fb):
    path, model, oracle = _setup(rid, getter, fb)
    for q, v, a in _states(model, rid, fb):
        _check(rid, fb, "gravity", ldr.gravity_torques(model, q), oracle.gravity(q))


@pytest.mark.parametrize("rid,getter,fb", CASES)
def test_forward_dynamics(rid, getter, fb):
    path, model, oracle = _setup(rid, getter, fb)
    for q, v, a in _states(model, rid, fb):
        tau = oracle.rnea(q, v, a)
        if _singular(oracle, q):
            # a massless subtree (e.g. a massless floating base): accelerations are undefined,
            # and we say so instead of returning a number
            with pytest.raises(ldr.InputError, match="singular"):
                ldr.forward_dynamics(model, q, v, tau)
            continue
        _check(rid, fb, "aba", ldr.forward_dynamics(model, q, v, tau), oracle.aba(q, v, tau))


@pytest.mark.parametrize("rid,getter,fb", CASES)
def test_nonlinear_effects_and_coriolis_times_v(rid, getter, fb):
    path, model, oracle = _setup(rid, getter, fb)
    for q, v, a in _states(model, rid, fb):
        h_ref = oracle.nle(q, v)
        g_ref = oracle.gravity(q)
        _check(rid, fb, "nle", ldr.nonlinear_effects(model, q, v), h_ref)
        _check(rid, fb, "C v", ldr.coriolis_matrix(model, q, v) @ v, h_ref - g_ref)


@pytest.mark.parametrize("rid,getter,fb", CASES)
def test_coriolis_matrix(rid, getter, fb):
    """C against computeCoriolisMatrix (both the Christoffel-consistent C) and dM/dt = C + C^T."""
    path, model, oracle = _setup(rid, getter, fb)
    for q, v, a in _states(model, rid, fb):
        C = ldr.coriolis_matrix(model, q, v)
        C_ref = oracle.coriolis(q, v)
        _check(rid, fb, "C+C^T", C + C.T, C_ref + C_ref.T)
        _check(rid, fb, "C", C, C_ref)


@pytest.mark.parametrize("rid,getter,fb", CASES)
def test_energies(rid, getter, fb):
    path, model, oracle = _setup(rid, getter, fb)
    states = _states(model, rid, fb)
    q0 = states[0][0]
    pe0, pe0_ref = ldr.potential_energy(model, q0), oracle.potential(q0)
    for q, v, a in states:
        ke = ldr.kinetic_energy(model, q, v)
        _check(rid, fb, "kinetic", np.atleast_1d(ke), np.atleast_1d(oracle.kinetic(q, v)))
        M = ldr.mass_matrix(model, q)
        assert abs(ke - 0.5 * v @ M @ v) <= TOL * max(1.0, abs(ke))
        dpe = ldr.potential_energy(model, q) - pe0
        _check(rid, fb, "potential", np.atleast_1d(dpe), np.atleast_1d(oracle.potential(q) - pe0_ref))


@pytest.mark.parametrize("rid,getter,fb", CASES)
def test_hybrid_dynamics(rid, getter, fb):
    """Kim Table 4: the returned (a, tau) satisfy Pinocchio's RNEA and keep the given entries."""
    path, model, oracle = _setup(rid, getter, fb)
    rng = _rng(rid, fb, "hybrid")
    for q, v, a in _states(model, rid, fb):
        tau = oracle.rnea(q, v, rng.uniform(-2.0, 2.0, model.nv))
        # one choice per joint: a multi-DOF joint (free flyer, planar) is prescribed as a whole
        prescribed = np.zeros(model.nv, dtype=bool)
        for iv, nv in zip(model.joint_v_index, model.joint_nv):
            prescribed[iv:iv + nv] = rng.random() < 0.5
        if _singular(oracle, q):
            prescribed[:] = True     # undefined accelerations: check the inverse-dynamics end
        a_full, tau_full = ldr.hybrid_dynamics(model, q, v, a, tau, prescribed)
        assert a_full.shape == tau_full.shape == (model.nv,)
        # the given entries come back (up to rounding: an implementation may recompute them)
        assert rel_err(a_full[prescribed], a[prescribed]) <= 1e-12
        assert rel_err(tau_full[~prescribed], tau[~prescribed]) <= 1e-12
        _check(rid, fb, "hybrid", tau_full, oracle.rnea(q, v, a_full))


@pytest.mark.parametrize("rid,getter,fb", CASES)
def test_external_wrenches(rid, getter, fb):
    path, model, oracle = _setup(rid, getter, fb)
    rng = _rng(rid, fb, "fext")
    links = list(urdf_links(path))
    joints = urdf_joints(path)
    merged = [j["child"] for j in joints.values() if j["type"] == "fixed"]
    roots = [l for l in links if l not in {j["child"] for j in joints.values()}]
    for q, v, a in _states(model, rid, fb):
        # dict form: a few links (moving, merged through fixed joints, the root) in their own frame
        pick = [links[i] for i in rng.choice(len(links), size=min(len(links), 6), replace=False)]
        pick += roots + merged[:1] + merged[-1:]  # the root link and links merged through fixed joints
        f_dict = {l: rng.normal(size=6) * [10, 10, 10, 1, 1, 1] for l in pick}
        _check(rid, fb, "fext dict", ldr.inverse_dynamics(model, q, v, a, f_ext=f_dict),
               oracle.rnea(q, v, a, f_dict))
        # array form: one (force, torque) row per body, in each body's frame
        F = rng.normal(size=(len(model.body_names), 6))
        f_arr = {name: F[i] for i, name in enumerate(model.body_names)}
        tau_arr = ldr.inverse_dynamics(model, q, v, a, f_ext=F)
        _check(rid, fb, "fext array", tau_arr, oracle.rnea(q, v, a, f_arr))
        # forward dynamics with the same wrenches inverts inverse dynamics
        if _singular(oracle, q):
            continue
        a_back = ldr.forward_dynamics(model, q, v, tau_arr, f_ext=F)
        _check(rid, fb, "aba fext", a_back, a)


@pytest.mark.parametrize("rid,getter,fb", CASES)
def test_other_gravity(rid, getter, fb):
    path, base, oracle = _setup(rid, getter, fb)
    model = base.with_gravity([0.3, -1.2, -3.71])
    oracle.pm.gravity = pin.Motion(model.gravity, np.zeros(3))
    try:
        for q, v, a in _states(model, rid, fb, n=1):
            _check(rid, fb, "rnea g'", ldr.inverse_dynamics(model, q, v, a), oracle.rnea(q, v, a))
            _check(rid, fb, "gravity g'", ldr.gravity_torques(model, q), oracle.gravity(q))
    finally:
        oracle.sync_gravity()
    # the original model is untouched
    assert np.array_equal(base.gravity, [0.0, 0.0, -9.81])


# ---------------------------------------------------------------------------- kinematics
@pytest.mark.parametrize("rid,getter,fb", CASES)
def test_frame_poses(rid, getter, fb):
    path, model, oracle = _setup(rid, getter, fb)
    links = list(urdf_links(path))
    for q, v, a in _states(model, rid, fb):
        poses = ldr.forward_kinematics(model, q)
        ref = oracle.frame_poses(q, links)
        worst = max(((rel_err(poses[l], ref[l]), l) for l in links), key=lambda t: t[0])
        _record(rid, fb, "frame pose", worst[0])
        assert worst[0] <= TOL, "%s frame %r: pose deviation %.3e" % (rid, worst[1], worst[0])
        # frame_pose agrees with forward_kinematics
        l = links[-1]
        np.testing.assert_allclose(ldr.frame_pose(model, q, l), poses[l], rtol=0, atol=1e-12)


@pytest.mark.parametrize("rid,getter,fb", CASES)
def test_body_jacobian(rid, getter, fb):
    path, model, oracle = _setup(rid, getter, fb)
    links = list(urdf_links(path))
    for q, v, a in _states(model, rid, fb, n=2):
        worst, wl = 0.0, None
        for l in links:
            err = rel_err(ldr.body_jacobian(model, q, l), oracle.body_jacobian(q, l))
            if err > worst:
                worst, wl = err, l
        _record(rid, fb, "jacobian", worst)
        assert worst <= TOL, "%s frame %r: LOCAL Jacobian deviation %.3e" % (rid, wl, worst)
