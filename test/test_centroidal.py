"""Centre of mass (position, velocity, acceleration), its Jacobian, the centroidal momentum h_G,
the centroidal momentum matrix A_G and its time variation.

Oracle: Pinocchio's ``centerOfMass``, ``jacobianCenterOfMass``, ``ccrba`` (data.hg, a Force
(linear, angular) about the COM in world axes, the same order as ours) and ``dccrba`` at random
states of five example-robot-data robots, three floating (solo12, talos_reduced, go2, whose feet
are points). Identities on the same robots and on the joint zoo (every joint kind, a mimic
joint, General joints): A_G v = h_G, J_c = A_G's linear rows / m, dA_G/dt against central
differences of A_G along the motion, J_c against central differences of c, and
dh_G/dt = A_G a + dA_G/dt v against differences of h_G along a trajectory.
"""
import numpy as np
import pytest

import pinocchio as pin

import lie_dynamics_ros as ldr
from models import general_twin, zoo
from oracle import Oracle, erd, rel_err

TOL = 1e-10

ROBOTS = [("ur5", "ur_description/urdf/ur5_robot.urdf", False),
          ("xarm7", "xarm_description/urdf/xarm7.urdf", False),
          ("solo12", "solo_description/robots/solo12.urdf", True),
          ("talos_reduced", "talos_data/robots/talos_reduced.urdf", True),
          ("go2", "go2_description/urdf/go2.urdf", True)]
IDS = [r[0] for r in ROBOTS]
_CACHE = {}


def _setup(rid):
    if rid not in _CACHE:
        rel, fb = next((p, f) for r, p, f in ROBOTS if r == rid)
        path = erd(rel)
        model = ldr.load_urdf(path, floating_base=fb)
        _CACHE[rid] = (model, Oracle(model, path, fb))
    return _CACHE[rid]


def _states(model, n=3, seed=7):
    rng = np.random.default_rng(seed)
    return [(np.asarray(ldr.random_configuration(model, rng)), rng.uniform(-1, 1, model.nv),
             rng.uniform(-2, 2, model.nv)) for _ in range(n)]


def _check(what, ours, ref, tol=TOL):
    err = rel_err(ours, ref)
    assert err <= tol, f"{what}: relative deviation {err:.2e}"


def _mass(model):
    return float(model.mI[1:, 5, 5].sum())


@pytest.mark.parametrize("rid", IDS)
def test_center_of_mass_equals_pinocchio(rid):
    model, o = _setup(rid)
    for q, v, a in _states(model):
        qp, vp, ap = o._qva(q, v, a)
        pin.centerOfMass(o.pm, o.pd, qp, vp, ap)
        c, cd, cdd = ldr.center_of_mass(model, q, v, a)
        _check("com", c, o.pd.com[0])
        _check("vcom", cd, o.pd.vcom[0])
        _check("acom", cdd, o.pd.acom[0])
        _check("com (q only)", ldr.center_of_mass(model, q), o.pd.com[0])
        c1, cd1 = ldr.center_of_mass(model, q, v)
        _check("vcom (q, v)", cd1, o.pd.vcom[0])


@pytest.mark.parametrize("rid", IDS)
def test_center_of_mass_jacobian_equals_pinocchio(rid):
    model, o = _setup(rid)
    for q, v, _ in _states(model):
        Jp = pin.jacobianCenterOfMass(o.pm, o.pd, o.map.q_to_pin(q))
        J = ldr.center_of_mass_jacobian(model, q)
        _check("Jcom", J, o.map.jac_from_pin(Jp, q))
        _check("Jcom v = vcom", J @ v, ldr.center_of_mass(model, q, v)[1])


@pytest.mark.parametrize("rid", IDS)
def test_centroidal_momentum_and_matrix_equal_pinocchio(rid):
    model, o = _setup(rid)
    for q, v, _ in _states(model):
        qp, vp, _ = o._qva(q, v)
        Agp = pin.ccrba(o.pm, o.pd, qp, vp)
        A = ldr.centroidal_momentum_matrix(model, q)
        h = ldr.centroidal_momentum(model, q, v)
        _check("A_G", A, o.map.jac_from_pin(Agp, q))
        _check("h_G", h, o.pd.hg.vector)
        _check("A_G v = h_G", A @ v, h)
        _check("J_c = A_G linear / m", A[:3] / _mass(model), ldr.center_of_mass_jacobian(model, q))


@pytest.mark.parametrize("rid", IDS)
def test_centroidal_momentum_matrix_time_variation_equals_pinocchio(rid):
    model, o = _setup(rid)
    for q, v, _ in _states(model):
        qp, vp, _ = o._qva(q, v)
        dAgp = pin.dccrba(o.pm, o.pd, qp, vp)
        dA = ldr.centroidal_momentum_matrix_time_variation(model, q, v)
        _check("dA_G", dA, o.map.jac_from_pin(dAgp, q))


def _identity_models():
    out = [(rid, _setup(rid)[0]) for rid in IDS]
    out.append(("zoo", zoo(seed=4, floating=True, mimic=True)))
    out.append(("zoo_two_roots", zoo(seed=4, floating=False, mimic=False)))  # chains on the world
    out.append(("general_twin", general_twin(seed=2)[1]))
    return [pytest.param(rid, m, id=rid) for rid, m in out]


@pytest.mark.parametrize("rid,model", _identity_models())
def test_time_variation_and_jacobian_against_finite_differences(rid, model):
    eps = 1e-6
    for q, v, a in _states(model, n=2, seed=3):
        qp, qm = (ldr.integrate(model, q, v, s * eps) for s in (1.0, -1.0))
        fd = (ldr.centroidal_momentum_matrix(model, qp)
              - ldr.centroidal_momentum_matrix(model, qm)) / (2 * eps)
        dA = ldr.centroidal_momentum_matrix_time_variation(model, q, v)
        _check(f"{rid}: dA_G vs differences", dA, fd, 1e-6)
        J = ldr.center_of_mass_jacobian(model, q)
        for k in range(model.nv):
            e = np.zeros(model.nv)
            e[k] = eps
            col = (ldr.center_of_mass(model, ldr.integrate(model, q, e, 1.0))
                   - ldr.center_of_mass(model, ldr.integrate(model, q, -e, 1.0))) / (2 * eps)
            _check(f"{rid}: J_c column {k} vs differences", J[:, k], col, 1e-6)
        A = ldr.centroidal_momentum_matrix(model, q)
        _check(f"{rid}: A_G v = h_G", A @ v, ldr.centroidal_momentum(model, q, v))


@pytest.mark.parametrize("rid,model", _identity_models())
def test_momentum_rate_and_com_acceleration(rid, model):
    """dh_G/dt = A_G a + dA_G/dt v (differences of h_G along q(t), v(t) = v + a t) and its
    linear part is m times the COM acceleration."""
    eps = 1e-6
    for q, v, a in _states(model, n=2, seed=5):
        def h_at(t):
            # q(t) = q (+) (v t + a t^2 / 2); on a group its velocity is v + a t + O(t^2), an
            # even error that the central difference cancels
            qt = ldr.integrate(model, q, v * t + 0.5 * a * t * t, 1.0)
            return ldr.centroidal_momentum(model, qt, v + a * t)
        A = ldr.centroidal_momentum_matrix(model, q)
        dA = ldr.centroidal_momentum_matrix_time_variation(model, q, v)
        hdot = A @ a + dA @ v
        fd = (h_at(eps) - h_at(-eps)) / (2 * eps)
        _check(f"{rid}: dh_G/dt vs differences", hdot, fd, 1e-6)
        _, _, cdd = ldr.center_of_mass(model, q, v, a)
        _check(f"{rid}: m c'' = linear dh_G/dt", _mass(model) * cdd, hdot[:3])


def test_general_joints_give_the_builtin_numbers():
    """The same robot with its joints as General callables (Python kinematics) and built in."""
    builtin, general = general_twin(seed=2)
    for q, v, a in _states(builtin, n=2, seed=9):
        for f, args in ((ldr.center_of_mass, (q, v, a)), (ldr.center_of_mass_jacobian, (q,)),
                        (ldr.centroidal_momentum, (q, v)), (ldr.centroidal_momentum_matrix, (q,)),
                        (ldr.centroidal_momentum_matrix_time_variation, (q, v))):
            _check(f.__name__, f(general, *args), f(builtin, *args))


def test_inputs_are_checked():
    model, _ = _setup("solo12")
    q = ldr.neutral_configuration(model)
    v = np.zeros(model.nv)
    with pytest.raises(ldr.InputError, match=r"q must have shape \(19,\)"):
        ldr.center_of_mass(model, q[:5])
    with pytest.raises(ldr.InputError, match="needs the velocity v"):
        ldr.center_of_mass(model, q, a=v)
    with pytest.raises(ldr.InputError, match=r"a must have shape"):
        ldr.center_of_mass(model, q, v, np.zeros(3))
    bad = q.copy()
    bad[3:7] = (0.0, 0.0, 0.0, 2.0)
    for f in (ldr.center_of_mass, ldr.center_of_mass_jacobian, ldr.centroidal_momentum_matrix):
        with pytest.raises(ldr.InputError, match="quaternion"):
            f(model, bad)
    nan = v.copy()
    nan[2] = np.nan
    with pytest.raises(ldr.InputError, match=r"NaN or Inf\) in v"):
        ldr.centroidal_momentum(model, q, nan)
    with pytest.raises(ldr.InputError, match=r"NaN or Inf\) in v"):
        ldr.centroidal_momentum_matrix_time_variation(model, q, nan)
    with pytest.raises(ldr.InputError, match=r"NaN or Inf\) in a"):
        ldr.center_of_mass(model, q, v, nan)
    with pytest.raises(ldr.InputError, match=r"v must have shape \(18,\)"):
        ldr.centroidal_momentum(model, q, np.zeros(19))


def test_massless_model_is_refused():
    b = ldr.ModelBuilder("massless")
    b.add_link("base")
    b.add_link("tip", mass=0.0, inertia=np.zeros((3, 3)))
    b.add_joint("j", ldr.Revolute((0, 0, 1)), "base", "tip")
    model = b.build()
    q, v = np.zeros(1), np.zeros(1)
    for call in (lambda: ldr.center_of_mass(model, q),
                 lambda: ldr.center_of_mass_jacobian(model, q),
                 lambda: ldr.centroidal_momentum(model, q, v),
                 lambda: ldr.centroidal_momentum_matrix(model, q),
                 lambda: ldr.centroidal_momentum_matrix_time_variation(model, q, v)):
        with pytest.raises(ldr.InputError, match="no mass"):
            call()
