"""runtime.adaptive without ROS: where the gains come from, the controller and its limits,
enable/disable, the reference merged over the held position, the adaptation's clock, which
parameter changes keep theta_hat, and the friction feedforward at the reference velocity v_r.
Each expectation is rebuilt from the library controller (lie_dynamics_ros.control) or read
from the config file, never copied from a run."""
import os
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

import lie_dynamics_ros as ldr
from lie_dynamics_ros.control import AdaptiveGains, AdaptiveSlotineLiController
from lie_dynamics_ros.runtime.adaptive import (BUILT_IN_GAINS, AdaptiveRuntime, effort_limits,
                                               resolve_gains)
from lie_dynamics_ros.safety import GuardConfig

from models import URDF_DIR, bundled

REPO = os.path.dirname(URDF_DIR)
ARM7 = os.path.join(URDF_DIR, "arm7.urdf")
ARM7_ORIGIN = "urdf_path " + ARM7
PEND = os.path.join(URDF_DIR, "double_pendulum.urdf")


def params(**kw):
    """The values the runtime reads (the node's parameters with their defaults)."""
    p = dict(lambda_gains=[], kd_gains=[], gamma_gains=[], gains_file="", adapt=True,
             payload_only=True, adapt_body="", projection=True, initial_parameters=[],
             effort_limits=[], compensate_gravity=True, gravity=[0.0, 0.0, -9.81],
             max_dt=0.05, joints=[], monitor_decimation=1, start_enabled=True,
             compensate_friction=True, friction_velocity_epsilon=0.02)
    p.update(kw)
    return SimpleNamespace(**p)


class Inputs:
    """Stand-in for the node's state pipeline: records the stamps it is told to accept."""

    def __init__(self, model, p):
        self.accepted = []

    def accept(self, stamp_ns):
        self.accepted.append(stamp_ns)


def runtime(base, p, origin=None, config=GuardConfig()):
    rt = AdaptiveRuntime(p)
    reason, setup = rt.prepare(base, p, origin, config, Inputs)
    assert reason is None, reason
    rt.install(setup, new_model=True)
    return rt


class Reference:
    """A reference on the joints of ``mask``: q = q0 + t, v = 1, a = 0 (t in s)."""

    def __init__(self, q0, mask):
        self.q0, self.mask = np.asarray(q0, float), np.asarray(mask, bool)
        self.q = self.q0

    def sample(self, t_ns):
        t = t_ns * 1e-9
        return self.q0 + t, np.ones_like(self.q0), np.zeros_like(self.q0)


@pytest.fixture(scope="module")
def pend():
    return ldr.load_urdf(PEND)


def reference_controller(model, p):
    """The library controller the runtime must reproduce."""
    g = resolve_gains(p, None)[0]
    n = model.nv
    gains = AdaptiveGains(np.full(n, g.lambda_gains[0]), np.full(n, g.kd_gains[0]),
                          g.gamma_gains[0] if len(g.gamma_gains) == 1 else g.gamma_gains)
    return AdaptiveSlotineLiController(model, gains, payload_only=True)


# -- gains and limits ---------------------------------------------------------------------------
def test_gains_come_from_the_parameters_else_the_robots_file_else_built_in(tmp_path):
    with open(os.path.join(REPO, "config", "arm7_adaptive_gains.yaml")) as f:
        doc = yaml.safe_load(f)
    from_file = next(iter(doc.values()))["ros__parameters"]
    filled, source = resolve_gains(params(), ARM7_ORIGIN)
    assert source.endswith("arm7_adaptive_gains.yaml")
    assert filled.kd_gains == from_file["kd_gains"]
    assert filled.gamma_gains == from_file["gamma_gains"]
    filled, source = resolve_gains(params(), None)     # robot_description: no file name
    assert source == "built-in" and filled.kd_gains == BUILT_IN_GAINS["kd_gains"]
    filled, source = resolve_gains(params(kd_gains=[5.0]), ARM7_ORIGIN)
    assert source.startswith("parameters + ") and filled.kd_gains == [5.0]
    assert filled.lambda_gains == from_file["lambda_gains"]
    mine = tmp_path / "gains.yaml"
    mine.write_text("/**:\n  ros__parameters:\n    lambda_gains: [3.0]\n")
    filled, source = resolve_gains(params(gains_file=str(mine)), ARM7_ORIGIN)
    assert source == "%s + built-in" % mine and filled.lambda_gains == [3.0]
    assert filled.kd_gains == BUILT_IN_GAINS["kd_gains"]
    every = params(lambda_gains=[1.0], kd_gains=[2.0], gamma_gains=[3.0])
    assert resolve_gains(every, ARM7_ORIGIN) == (every, "parameters")


def test_an_unreadable_gains_file_is_refused_with_its_name(tmp_path, pend):
    missing = str(tmp_path / "none.yaml")
    with pytest.raises(ValueError, match="gains_file .*none.yaml"):
        resolve_gains(params(gains_file=missing), None)
    bad = tmp_path / "bad.yaml"
    bad.write_text("/**:\n  ros__parameters:\n    kd_gains: [a, b]\n")
    reason, setup = AdaptiveRuntime(params()).prepare(
        pend, params(gains_file=str(bad)), None, GuardConfig(), Inputs)
    assert setup is None and "bad.yaml" in reason and "kd_gains must be numbers" in reason


def test_effort_limits_broadcast_and_nonpositive_means_none(arm):
    np.testing.assert_array_equal(effort_limits(arm, [5.0]), np.full(arm.nv, 5.0))
    urdf = np.asarray(arm.effort_limits, float)
    expected = np.where(urdf > 0, urdf, np.inf)
    np.testing.assert_array_equal(effort_limits(arm, []), expected)
    lim = effort_limits(arm, [0.0, -1.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    assert np.isinf(lim[:2]).all() and lim[2] == 3.0
    with pytest.raises(ValueError, match="effort_limits has 2 values"):
        effort_limits(arm, [1.0, 2.0])


def test_prepare_refuses_what_the_node_cannot_serve_and_names_it(arm, floating, pend):
    rt = AdaptiveRuntime(params())

    def reason(base, **kw):
        return rt.prepare(base, params(**kw), None, GuardConfig(), Inputs)[0]
    assert "1-DOF" in reason(floating)
    assert "nope" in reason(pend, joints=["joint1", "nope"])
    assert "every model joint once" in reason(pend, joints=["joint1"])
    assert "kd_gains" in reason(pend, kd_gains=[1.0, 2.0, 3.0])
    assert "state_timeout" in rt.prepare(pend, params(), None,
                                         GuardConfig(state_timeout=-1.0), Inputs)[0]
    assert rt.setup is None                      # nothing installed


# -- per state ----------------------------------------------------------------------------------
def test_without_a_reference_the_first_position_is_held(pend):
    p = params()
    rt = runtime(pend, p)
    ref = reference_controller(rt.setup.model, p)
    q1, v1 = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    q2, v2 = np.array([0.35, -0.1]), np.array([0.0, 0.2])
    tau = rt.torques(1_000_000, q1, v1, 0)
    np.testing.assert_allclose(tau, ref.step(1e-3, q1, v1, q1, 0 * v1, 0 * v1, 0.0), atol=1e-12)
    assert rt.commanded(1_000_000, 0)
    tau = rt.torques(2_000_000, q2, v2, 0)        # still holds q1; adapts over dt = 1 ms
    np.testing.assert_allclose(tau, ref.step(2e-3, q2, v2, q1, 0 * v2, 0 * v2, 1e-3),
                               atol=1e-12)
    theta, errors = rt.monitors()
    np.testing.assert_allclose(theta, ref.theta_hat, atol=1e-12)
    np.testing.assert_allclose(errors, [q2 - q1, v2, ref.state.s], atol=1e-12)
    assert rt.setup.inputs.accepted == [1_000_000]


def test_the_reference_overrides_the_held_position_on_its_joints_only(pend):
    p = params()
    rt = runtime(pend, p)
    ref = reference_controller(rt.setup.model, p)
    assert rt.set_reference(SimpleNamespace(q=None, mask=None)) == "the reference needs positions"
    q, v = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    rt.torques(1_000_000, q, v, 0)                # holds q
    r = Reference([1.0, 2.0], [False, True])
    assert rt.set_reference(r) is None
    t_ns = 500_000_000
    tau = rt.torques(0, q, v, t_ns)               # unstamped: sampled at the receive time
    q_d = np.array([q[0], 2.5])
    v_d = np.array([0.0, 1.0])
    np.testing.assert_allclose(tau, ref.step(0.5, q, v, q_d, v_d, 0 * v, 0.0), atol=1e-12)


def test_adaptation_integrates_only_short_steps_and_not_across_a_timeout(pend):
    p = params(max_dt=0.01)
    config = GuardConfig(state_timeout=0.05)
    rt = runtime(pend, p, config=config)
    q, v = np.array([0.3, -0.2]), np.array([0.5, 0.4])
    theta0 = rt.setup.controller.theta_hat.copy()
    stamps = [1_000_000, 21_000_000]              # 20 ms > max_dt: no adaptation
    for s in stamps:
        tau = rt.torques(s, q, v, s)
        assert rt.setup.guard.command(tau, s, q, s) is not None
        rt.commanded(s, s)
    np.testing.assert_array_equal(rt.setup.controller.theta_hat, theta0)
    tau = rt.torques(26_000_000, q, v, 26_000_000)   # 5 ms: adapts
    assert not np.array_equal(rt.setup.controller.theta_hat, theta0)
    rt.setup.guard.command(tau, 26_000_000, q, 26_000_000)
    rt.commanded(26_000_000, 26_000_000)
    assert rt.setup.guard.poll(200_000_000) is not None and rt.setup.guard.in_timeout
    before = rt.setup.controller.theta_hat.copy()
    rt.torques(27_000_000, q, v, 201_000_000)        # 1 ms after, but across the timeout
    np.testing.assert_array_equal(rt.setup.controller.theta_hat, before)


def test_disabled_it_answers_zero_and_enabling_starts_over(pend):
    rt = runtime(pend, params(monitor_decimation=2))
    q, v = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    rt.torques(1_000_000, q, v, 0)
    assert not rt.commanded(1_000_000, 0) and rt.commanded(1_000_000, 0)   # every 2nd
    message, zero = rt.set_enabled(False)
    assert message == "disabled: zero torque sent" and (zero == 0.0).all()
    assert rt.set_enabled(False) == ("already disabled", None)
    assert rt.torques(3_000_000, q, v, 0) is None
    assert rt.disabled_answer().tolist() == [0.0, 0.0]     # what the node answers instead
    assert rt.setup.inputs.accepted[-1] == 3_000_000     # the stamp still moves on
    old_guard = rt.setup.guard
    rt.set_reference(Reference([1.0, 2.0], [True, True]))
    assert rt.set_enabled(True) == ("enabled", None)
    assert rt.reference is None and rt.hold is None and rt.setup.guard is not old_guard
    q2 = q + 0.1
    rt.torques(4_000_000, q2, v, 0)
    np.testing.assert_array_equal(rt.hold, q2)


def test_a_rebuild_keeps_theta_hat_unless_it_changes_what_adapts(pend):
    p = params()
    rt = runtime(pend, p)
    q, v = np.array([0.3, -0.2]), np.array([0.5, 0.4])
    for s in (1_000_000, 2_000_000):
        rt.torques(s, q, v, s)
        rt.commanded(s, s)
    theta = rt.setup.controller.theta_hat.copy()
    assert not np.array_equal(theta, rt.setup.controller.theta0)

    def rebuilt(changed, **kw):
        reason, setup = rt.prepare(pend, params(**kw), None, GuardConfig(), Inputs, changed)
        assert reason is None, reason
        return setup.controller
    new = rebuilt({"kd_gains"}, kd_gains=[3.0])
    np.testing.assert_array_equal(new.theta_hat, theta)
    assert (new.gains.K_D == 3.0).all()
    assert np.array_equal(rebuilt({"initial_parameters", "kd_gains"}).theta_hat, new.theta0)
    assert np.array_equal(rebuilt(None).theta_hat, new.theta0)      # another robot
    rt.configure(params(adapt=False))
    assert rt.setup.controller.adapt is False


def test_a_new_robot_forgets_reference_and_hold(pend):
    rt = runtime(pend, params())
    rt.torques(1_000_000, np.zeros(2), np.zeros(2), 0)
    rt.set_reference(Reference([0.0, 0.0], [True, True]))
    _, setup = rt.prepare(bundled("double_pendulum.urdf"), params(), None, GuardConfig(),
                          Inputs)
    rt.install(setup, new_model=False)                   # same robot: kept
    assert rt.reference is not None and rt.hold is not None
    rt.install(setup, new_model=True)
    assert rt.reference is None and rt.hold is None and rt.last_t_ns is None


def test_friction_feedforward_is_added_at_the_reference_velocity(pend):
    real = pend.with_joint_dynamics(damping=[0.6, 0.3], friction=[0.9, 0.5])
    p = params()
    rt = runtime(real, p)
    ref = reference_controller(rt.setup.model, p)
    lam = resolve_gains(p, None)[0].lambda_gains[0]
    q0 = np.array([0.2, -0.4])
    rt.set_reference(Reference(q0, [True, True]))     # q_d = q0 + t, v_d = 1
    t_ns = 100_000_000
    q_d = q0 + 0.1
    q = q_d + np.array([0.0995, 0.3])                  # v_r = 1 - lam e: 0.005 and -2
    v = np.array([-0.4, 0.7])
    v_r = 1.0 - lam * (q - q_d)
    assert abs(v_r[0]) < 0.02 < abs(v_r[1])           # one inside the boundary layer
    sat = np.clip(v_r / 0.02, -1.0, 1.0)
    expected = ref.step(0.1, q, v, q_d, np.ones(2), np.zeros(2), 0.0) + (
        real.joint_damping * v_r + real.joint_friction * sat)
    np.testing.assert_allclose(rt.torques(t_ns, q, v, 0), expected, atol=1e-12)
    rt.configure(params(compensate_friction=False))    # acts without a rebuild
    np.testing.assert_allclose(rt.torques(t_ns, q, v, 0),
                               ref.step(0.1, q, v, q_d, np.ones(2), np.zeros(2), 0.0),
                               atol=1e-12)


def test_the_summary_says_whether_it_adapts(pend):
    """adapt: false is computed torque with fixed parameters: the start-up line must not say
    it adapts them."""
    for adapt, words in ((True, "adapting 10 parameters"), (False, "not adapting")):
        rt = AdaptiveRuntime(params(adapt=adapt))
        reason, setup = rt.prepare(pend, params(adapt=adapt), None, GuardConfig(), Inputs)
        assert reason is None and words in setup.summary(), setup.summary()
        assert ("adapting 10" in setup.summary()) == adapt
