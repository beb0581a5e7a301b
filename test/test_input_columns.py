"""Issue 21, item 7: public input vectors accept (n, 1) columns (Pinocchio's examples pass
those) and treat them as (n,): each call gives the same numbers as with flat vectors. (N, n)
stays batched; a column of length n is one state, also where n == 1 makes (1, 1) ambiguous.
A q of Pinocchio's length on a model with continuous joints names JointOrder(continuous=
"cos_sin") in its error, and the conversion it names then works."""
import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.integrators.simulate import make_stepper
from lie_dynamics_ros.resources import bundled_urdf


def col(x):
    return np.asarray(x, dtype=float).reshape(-1, 1)


@pytest.fixture(scope="module")
def arm():
    model = ldr.load_urdf("arm7")
    rng = np.random.default_rng(3)
    q = ldr.random_configuration(model, rng=1)
    v, a, tau = (rng.standard_normal(model.nv) for _ in range(3))
    return model, q, v, a, tau


CALLS = {
    "inverse_dynamics": lambda m, q, v, a, t: ldr.inverse_dynamics(m, q, v, a),
    "forward_dynamics": lambda m, q, v, a, t: ldr.forward_dynamics(m, q, v, t),
    "mass_matrix": lambda m, q, v, a, t: ldr.mass_matrix(m, q),
    "gravity_torques": lambda m, q, v, a, t: ldr.gravity_torques(m, q),
    "coriolis_matrix": lambda m, q, v, a, t: ldr.coriolis_matrix(m, q, v),
    "nonlinear_effects": lambda m, q, v, a, t: ldr.nonlinear_effects(m, q, v),
    "kinetic_energy": lambda m, q, v, a, t: ldr.kinetic_energy(m, q, v),
    "inverse_dynamics_derivatives":
        lambda m, q, v, a, t: ldr.inverse_dynamics_derivatives(m, q, v, a),
    "forward_dynamics_derivatives":
        lambda m, q, v, a, t: ldr.forward_dynamics_derivatives(m, q, v, t),
    "regressor": lambda m, q, v, a, t: ldr.regressor(m, q, v, v, a),
    "center_of_mass": lambda m, q, v, a, t: ldr.center_of_mass(m, q, v, a),
    "centroidal_momentum": lambda m, q, v, a, t: ldr.centroidal_momentum(m, q, v),
    "integrate": lambda m, q, v, a, t: ldr.integrate(m, q, v, 0.01),
    "friction_torques": lambda m, q, v, a, t: ldr.friction_torques(m, v),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_columns_give_the_numbers_of_flat_vectors(arm, name):
    model, q, v, a, tau = arm
    flat = CALLS[name](model, q, v, a, tau)
    column = CALLS[name](model, col(q), col(v), col(a), col(tau))
    flat, column = (r if isinstance(r, tuple) else (r,) for r in (flat, column))
    assert len(flat) == len(column)
    for x, y in zip(flat, column):
        assert np.shape(x) == np.shape(y)
        np.testing.assert_array_equal(x, y)


def test_hybrid_dynamics_takes_columns_and_a_column_mask(arm):
    model, q, v, a, tau = arm
    mask = np.zeros(model.nv, dtype=bool)
    mask[-2:] = True
    flat = ldr.hybrid_dynamics(model, q, v, a, tau, mask)
    column = ldr.hybrid_dynamics(model, col(q), col(v), col(a), col(tau), mask.reshape(-1, 1))
    for x, y in zip(flat, column):
        assert x.shape == (model.nv,)
        np.testing.assert_array_equal(x, y)


def test_difference_of_columns_and_joint_order(arm):
    model, q, v, a, tau = arm
    q1 = ldr.integrate(model, q, v, 0.1)
    np.testing.assert_array_equal(ldr.difference(model, col(q), col(q1)),
                                  ldr.difference(model, q, q1))
    order = ldr.JointOrder(model, list(reversed(model.joint_names)))
    np.testing.assert_array_equal(order.q_to_model(col(order.q_from_model(q))), q)


def test_simulate_and_the_stepper_take_a_column_as_one_state(arm):
    model, q, v, a, tau = arm
    flat = ldr.simulate(model, q, v, 2e-3, 1e-3, method="semi_implicit", tau=tau)
    column = ldr.simulate(model, col(q), col(v), 2e-3, 1e-3, method="semi_implicit",
                          tau=col(tau))
    assert column.q.shape == flat.q.shape     # one trajectory, not a rollout of nq states
    np.testing.assert_array_equal(column.q, flat.q)
    step = make_stepper(model, "semi_implicit")
    for x, y in zip(step(q, v, 1e-3, tau=tau), step(col(q), col(v), 1e-3, tau=col(tau))):
        np.testing.assert_array_equal(x, y)


def test_rows_stay_batched_and_a_column_is_never_read_as_rows(arm):
    model, q, v, a, tau = arm
    Q = np.array([ldr.random_configuration(model, rng=k) for k in range(3)])
    V = np.tile(v, (3, 1))
    TAU = ldr.inverse_dynamics(model, Q, V, V)
    assert TAU.shape == (3, model.nv)
    one = ldr.inverse_dynamics(model, Q[1], v, v)    # the tree entry, the rows the general one
    np.testing.assert_allclose(TAU[1], one, rtol=0, atol=1e-13 * np.abs(one).max())
    res = ldr.rollout(model, Q, V, 2e-3, 1e-3, method="semi_implicit", tau=col(tau))
    one = ldr.simulate(model, Q[2], v, 2e-3, 1e-3, method="semi_implicit", tau=tau)
    np.testing.assert_allclose(res.q[2, -1], one.q[-1], rtol=0, atol=1e-12)


def test_a_one_joint_model_reads_a_1_by_1_array_as_one_state():
    b = ldr.ModelBuilder("one")
    b.add_link("base")
    b.add_link("bob", mass=1.0, com=(0, 0, -1), inertia=np.eye(3) * 1e-3)
    b.add_joint("hinge", ldr.Revolute((0, 1, 0)), "base", "bob")
    model = b.build()
    tau = ldr.inverse_dynamics(model, [[0.3]], [[0.1]], [[0.2]])
    assert tau.shape == (1,)
    np.testing.assert_array_equal(tau, ldr.inverse_dynamics(model, [0.3], [0.1], [0.2]))
    rows = ldr.inverse_dynamics(model, [[0.3], [0.4]], [[0.1], [0.1]], [[0.2], [0.2]])
    assert rows.shape == (2, 1)                # (N, 1) with N != 1: N states


def test_a_column_of_the_wrong_length_is_an_input_error_naming_the_argument(arm):
    model, q, v, a, tau = arm
    with pytest.raises(ldr.InputError, match=r"^v must have shape \(7,\) or \(N, 7\), got \(6, 1\)"):
        ldr.inverse_dynamics(model, q, col(v[:6]), a)
    with pytest.raises(ldr.InputError, match=r"v must have shape \(7,\), got \(7, 2\)"):
        ldr.kinetic_energy(model, q, np.zeros((7, 2)))


@pytest.fixture(scope="module")
def wheels():
    """double_pendulum with its two joints continuous (Pinocchio: nq 4, nv 2)."""
    text = open(bundled_urdf("double_pendulum")).read()
    assert 'type="revolute"' in text
    return ldr.load_urdf(text.replace('type="revolute"', 'type="continuous"'))


def test_pinocchio_q_of_continuous_joints_names_joint_order_cos_sin(wheels):
    model = wheels
    assert (model.nq, model.nv, len(model.continuous_v)) == (2, 2, 2)
    theta = np.array([0.4, -1.1])
    q_pin = np.array([np.cos(0.4), np.sin(0.4), np.cos(-1.1), np.sin(-1.1)])
    z = np.zeros(2)
    calls = [lambda q: ldr.inverse_dynamics(model, q, z, z),
             lambda q: ldr.mass_matrix(model, q),
             lambda q: ldr.forward_dynamics_derivatives(model, q, z, z),
             lambda q: ldr.center_of_mass(model, q),
             lambda q: ldr.kinematics(model, q),
             lambda q: ldr.frame_jacobian(model, q, model.frame_names[-1]),
             lambda q: ldr.kinetic_energy(model, q, z),
             lambda q: ldr.simulate(model, q, z, 2e-3, 1e-3)]
    for call in calls:
        for given in (q_pin, col(q_pin)):
            with pytest.raises(ldr.InputError) as err:
                call(given)
            msg = str(err.value)
            assert 'JointOrder(model, pin_model.names[1:], continuous="cos_sin")' in msg, msg
            assert "4 is Pinocchio's nq" in msg and "2 continuous joints" in msg
    with pytest.raises(ldr.InputError, match="cos_sin"):
        ldr.rollout(model, np.tile(q_pin, (2, 1)), np.zeros((2, 2)), 2e-3, 1e-3)
    # the conversion the message names gives the model's q
    order = ldr.JointOrder(model, model.joint_names, continuous="cos_sin")
    np.testing.assert_allclose(order.q_to_model(q_pin), theta, rtol=0, atol=1e-15)


def test_other_wrong_lengths_get_no_continuous_hint(wheels, arm):
    with pytest.raises(ldr.InputError) as err:
        ldr.mass_matrix(wheels, np.zeros(3))
    assert "cos_sin" not in str(err.value)
    model = arm[0]                               # no continuous joints
    with pytest.raises(ldr.InputError) as err:
        ldr.mass_matrix(model, np.zeros(model.nq + 1))
    assert "cos_sin" not in str(err.value)


def test_controllers_take_columns_without_broadcasting_to_a_matrix(arm):
    """v - v_d of a column and a vector once broadcast to (n, n)."""
    from lie_dynamics_ros.control.controllers import ComputedTorqueController, PDGains
    model, q, v, a, tau = arm
    q_d = ldr.integrate(model, q, v, 0.05)
    ctrl = ComputedTorqueController(model, PDGains())
    flat = ctrl.step(0.0, q, v, q_d, 0.5 * v, a)
    column = ctrl.step(0.0, col(q), col(v), q_d, 0.5 * v, col(a))
    assert column.shape == (model.nv,)
    np.testing.assert_array_equal(column, flat)
