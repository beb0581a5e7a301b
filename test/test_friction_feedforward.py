"""control.friction_feedforward: the model's damping and Coulomb friction with the sign
smoothed in a boundary layer |v| < epsilon; equal to ldr.friction_torques outside it and for
epsilon = 0, continuous inside, and a bad epsilon refused by name."""
import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.control import friction_feedforward, has_joint_friction

from models import bundled


@pytest.fixture(scope="module")
def pend():
    return bundled("double_pendulum.urdf").with_joint_dynamics(damping=[0.5, 0.2],
                                                               friction=[1.0, 0.4])


def test_outside_the_layer_and_with_zero_epsilon_it_is_the_model(pend):
    rng = np.random.default_rng(0)
    V = rng.normal(size=(50, 2))
    V[np.abs(V) < 0.1] = 0.1
    np.testing.assert_allclose(friction_feedforward(pend, V, 0.1), ldr.friction_torques(pend, V),
                               atol=1e-15)
    V[:5] = 0.0
    np.testing.assert_allclose(friction_feedforward(pend, V, 0.0), ldr.friction_torques(pend, V),
                               atol=1e-15)


def test_inside_the_layer_the_coulomb_part_is_linear_and_continuous(pend):
    eps = 0.05
    v = np.linspace(-2 * eps, 2 * eps, 401)
    tau = friction_feedforward(pend, np.column_stack([v, v]), eps)
    coulomb = tau - pend.joint_damping * np.column_stack([v, v])
    inside = np.abs(v) <= eps
    np.testing.assert_allclose(coulomb[inside], np.outer(v[inside] / eps, pend.joint_friction),
                               atol=1e-12)
    assert np.abs(np.diff(tau, axis=0)).max() < 2 * (v[1] - v[0]) * (1.0 / eps + 0.5)


def test_a_model_without_friction_gets_none_and_bad_input_is_named(pend):
    rigid = bundled("double_pendulum.urdf")
    assert has_joint_friction(pend) and not has_joint_friction(rigid)
    assert not friction_feedforward(rigid, [0.3, -0.1], 0.02).any()
    with pytest.raises(ldr.InputError, match="friction_velocity_epsilon"):
        friction_feedforward(pend, [0.0, 0.0], -1.0)
    with pytest.raises(ldr.InputError, match="v must have shape"):
        friction_feedforward(pend, [0.0, 0.0, 0.0], 0.02)
