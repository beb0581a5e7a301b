"""inverse_dynamics_node on a closed-loop mechanism (the four-bar): with ``actuated_joints`` it
publishes Kim's constrained inverse dynamics, zero on the passive joints."""
import os

import numpy as np
import pytest

from ros_fixtures import REPO, ros, wait_matched  # noqa: F401

from rclpy.parameter import Parameter  # noqa: E402

import lie_dynamics_ros as ldr  # noqa: E402
from lie_dynamics_ros.ros.inverse_dynamics_node import InverseDynamicsNode  # noqa: E402
from test_ros_inverse_dynamics_node import Exchange  # noqa: E402

FOUR_BAR = os.path.join(REPO, "urdf", "loops", "four_bar.urdf")
TREE = os.path.join(REPO, "urdf", "loops", "four_bar_tree.urdf")
CLOSURES = os.path.join(REPO, "urdf", "loops", "four_bar_closures.yaml")


def _node(session, **params):
    return session.add(InverseDynamicsNode(
        context=session.context, parameter_overrides=[Parameter(k, value=v)
                                                      for k, v in params.items()]))


@pytest.mark.parametrize("source", ["urdf", "yaml"])
def test_four_bar_torques_are_the_constrained_inverse_dynamics(ros, source):
    params = dict(urdf_path=FOUR_BAR) if source == "urdf" else dict(urdf_path=TREE,
                                                                      loops_file=CLOSURES)
    node = _node(ros, actuated_joints=["crank_joint"], **params)
    model = ldr.load_urdf(FOUR_BAR)
    assert node.model.nc == model.nc > 0
    ex = Exchange(ros)
    assert wait_matched(ros, pub=ex.pub, sub=ex.sub)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = ldr.assemble(model, np.full(model.nq, rng.uniform(0.2, 0.6)), locked=["crank_joint"])
        v = np.zeros(model.nv)
        v[0] = rng.normal()
        q, v, a = ldr.complete_motion(model, q, v, np.zeros(model.nv), ["crank_joint"])
        out = ex.ask(model.joint_names, q, v)
        tau, _ = ldr.constrained_inverse_dynamics(model, q, v, a, ["crank_joint"])
        np.testing.assert_allclose(out.effort, tau, atol=1e-9)
        assert np.all(np.array(out.effort)[1:] == 0.0) and abs(out.effort[0]) > 1e-6


def test_closed_loop_model_without_actuated_joints_is_refused(ros):
    with pytest.raises(ValueError, match="actuated_joints"):
        _node(ros, urdf_path=FOUR_BAR)


def test_simulator_core_keeps_the_four_bar_closed():
    from lie_dynamics_ros.integrators.simulate import make_stepper
    model = ldr.load_sdf(os.path.join(REPO, "urdf", "loops", "four_bar.sdf"))
    q0 = ldr.assemble(model, np.full(model.nq, 0.4), locked=["crank_joint"])
    sim = ldr.Simulator(model, 1_000_000, make_stepper(model, "rkmk4"),
                        np.zeros(model.nv, bool), q0, np.zeros(model.nv))
    e0 = ldr.kinetic_energy(model, sim.q, sim.v) + ldr.potential_energy(model, sim.q)
    for _ in range(500):
        sim.step(np.zeros(model.nv))
    assert np.abs(ldr.constraint_residual(model, sim.q)).max() < 1e-10
    assert np.abs(ldr.constraint_jacobian(model, sim.q) @ sim.v).max() < 1e-10
    e1 = ldr.kinetic_energy(model, sim.q, sim.v) + ldr.potential_energy(model, sim.q)
    assert abs(e1 - e0) < 1e-6 * (1 + abs(e0)) and np.abs(sim.v).max() > 1e-3   # it moved


def test_simulator_node_runs_an_sdf_mechanism(ros):
    from sensor_msgs.msg import JointState
    from lie_dynamics_ros.ros.forward_dynamics_node import ForwardDynamicsNode
    sdf = os.path.join(REPO, "urdf", "loops", "four_bar.sdf")
    node = ros.add(ForwardDynamicsNode(context=ros.context, parameter_overrides=[
        Parameter("urdf_path", value=sdf), Parameter("start_mode", value="immediate"),
        Parameter("integrator", value="rkmk4")]))
    model = node.sim.model
    assert model.nc > 0
    got = []
    ros.node.create_subscription(JointState, "joint_states", got.append, 50)
    assert ros.spin_until(lambda: len(got) >= 50, 30.0)
    q = np.array(got[-1].position)
    assert np.abs(ldr.constraint_residual(model, q)).max() < 1e-9
    assert np.abs(q - np.array(got[0].position)).max() > 1e-6        # it falls, closed
