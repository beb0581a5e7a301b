"""runtime.inverse_dynamics without ROS: the model a state is answered with (gravity, the
closures of loops_file, the actuated joints), the checks naming what is wrong, and the torques
against the library (ldr.inverse_dynamics; Kim's constrained inverse dynamics on a loop)."""
import os
from types import SimpleNamespace

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.runtime.inverse_dynamics import InverseDynamicsRuntime, closed_loops
from lie_dynamics_ros.safety import GuardConfig

from models import URDF_DIR

FOUR_BAR = os.path.join(URDF_DIR, "loops", "four_bar.urdf")
TREE = os.path.join(URDF_DIR, "loops", "four_bar_tree.urdf")
CLOSURES = os.path.join(URDF_DIR, "loops", "four_bar_closures.yaml")


def params(**kw):
    p = dict(compensate_gravity=True, gravity=[0.0, 0.0, -9.81], joints=[], loops_file="",
             actuated_joints=[])
    p.update(kw)
    return SimpleNamespace(**p)


class Inputs:
    def __init__(self, model, p):
        self.model = model


def runtime(base, **kw):
    rt = InverseDynamicsRuntime()
    reason, setup = rt.prepare(base, params(**kw), GuardConfig(), Inputs)
    assert reason is None, reason
    rt.install(setup, new_model=True)
    return rt


class Reference:
    def __init__(self, a):
        self.a = np.asarray(a, float)
        self.times = []

    def sample(self, t_ns):
        self.times.append(t_ns)
        return None, None, self.a


def test_torques_are_rnea_with_the_references_accelerations(arm):
    rng = np.random.default_rng(1)
    q, v, a = rng.normal(size=7), rng.normal(size=7), rng.normal(size=7)
    rt = runtime(arm, gravity=[0.0, 1.0, -9.0])
    g = arm.with_gravity(np.array([0.0, 1.0, -9.0]))
    np.testing.assert_allclose(rt.torques(5, q, v, 9), ldr.inverse_dynamics(g, q, v, 0 * a),
                               atol=1e-12)
    ref = Reference(a)
    rt.set_reference(ref)
    np.testing.assert_allclose(rt.torques(5, q, v, 9), ldr.inverse_dynamics(g, q, v, a),
                               atol=1e-12)
    rt.torques(0, q, v, 9)                       # unstamped: sampled at the receive time
    assert ref.times == [5, 9]
    off = runtime(arm, compensate_gravity=False)
    np.testing.assert_allclose(off.torques(0, q, v, 0),
                               ldr.inverse_dynamics(arm.with_gravity(np.zeros(3)), q, v, 0 * a),
                               atol=1e-12)
    assert off.setup.inputs.model is off.setup.model      # the pipeline sees the used model


def test_a_closed_loop_gets_kims_torques_zero_on_the_passive_joints():
    model = ldr.load_urdf(FOUR_BAR)
    for rt in (runtime(model, actuated_joints=["crank_joint"]),
               runtime(ldr.load_urdf(TREE), loops_file=CLOSURES, actuated_joints=["crank_joint"])):
        assert rt.setup.model.nc == model.nc > 0
        q = ldr.assemble(model, np.full(model.nq, 0.4), locked=["crank_joint"])
        v, a = np.zeros(model.nv), np.zeros(model.nv)
        v[0], a[0] = 0.7, -0.3
        qc, vc, ac = ldr.complete_motion(model, q, v, a, ["crank_joint"])
        expected = ldr.constrained_inverse_dynamics(model, qc, vc, ac, ["crank_joint"])[0]
        rt.set_reference(Reference(a))
        tau = rt.torques(1, q, v, 1)
        np.testing.assert_allclose(tau, expected, atol=1e-9)
        assert np.all(tau[1:] == 0.0) and tau[0] != 0.0


def test_loop_checks_name_the_parameter(arm):
    loops = ldr.load_urdf(FOUR_BAR)
    with pytest.raises(ValueError, match="actuated_joints is for closed-loop models"):
        closed_loops(arm, "", ["panda_joint1"])
    with pytest.raises(ValueError, match="loop closure.*set actuated_joints"):
        closed_loops(loops, "", [])
    with pytest.raises(ValueError, match="actuated_joints names \\['nope'\\]"):
        closed_loops(loops, "", ["nope"])
    with pytest.raises(ValueError, match="loops_file '/no/such.yaml'"):
        closed_loops(arm, "/no/such.yaml", [])
    model, actuated = closed_loops(arm, "", [])
    assert model is arm and actuated is None


def test_prepare_refuses_what_the_node_cannot_serve_and_names_it(arm, floating):
    rt = InverseDynamicsRuntime()

    def reason(base, config=GuardConfig(), **kw):
        return rt.prepare(base, params(**kw), config, Inputs)[0]
    assert "1-DOF" in reason(floating)
    assert "parameter joints names ['nope']" in reason(arm, joints=["panda_joint1", "nope"])
    assert "fallback" in reason(arm, config=GuardConfig(fallback="brake"))
    assert "set actuated_joints" in reason(ldr.load_urdf(FOUR_BAR))
    # a command array may carry a subset of the joints, in any order
    _, setup = rt.prepare(arm, params(joints=["panda_joint3", "panda_joint1"]), GuardConfig(),
                          Inputs)
    assert setup.cmd_cols.tolist() == [2, 0]


def test_a_refused_state_is_named_and_a_new_robot_forgets_the_reference(arm):
    rt = runtime(arm)
    with pytest.raises(ValueError, match="inverse dynamics refused the state"):
        rt.torques(0, np.zeros(3), np.zeros(7), 0)
    rt.set_reference(Reference(np.zeros(7)))
    setup = rt.setup
    rt.install(setup, new_model=False)
    assert rt.reference is not None
    rt.install(setup, new_model=True)
    assert rt.reference is None
