"""runtime.observer without ROS: which torques the momentum observer is given, the contact flag
and its rising edges, the checks naming what is wrong, and the subtraction of the joints' own
damping and friction. A held pose makes the external torque known exactly: with q fixed and
v = 0, tau + tau_ext = g(q)."""
import os
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.estimation import MomentumObserver
from lie_dynamics_ros.runtime.observer import ObserverRuntime

from models import bundled

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # examples

Q = np.array([0.4, -0.7])
DT_NS = 1_000_000


def params(**kw):
    p = dict(observer_gain=[50.0], contact_threshold=[2.0], joints=[],
             gravity=[0.0, 0.0, -9.81], compensate_friction=True)
    p.update(kw)
    return SimpleNamespace(**p)


@pytest.fixture(scope="module")
def pend():
    return bundled("double_pendulum.urdf")


def observed(source, pend, **kw):
    rt = ObserverRuntime(source)
    assert rt.set_model(pend, params(**kw)) is None
    return rt


def test_a_held_pose_reports_the_external_torque_and_one_contact(pend):
    rt = observed("command", pend, joints=["joint2", "joint1"], observer_gain=[200.0])
    g = ldr.gravity_torques(pend, Q)
    tau_ext = np.array([0.0, 3.0])                 # above the threshold on joint2 only
    rt.commanded((g - tau_ext)[::-1])              # in `joints` order
    news = []
    for k in range(200):
        r, contact, new = rt.update((k + 1) * DT_NS, Q, np.zeros(2))
        news += [new] if new is not None else []
    np.testing.assert_allclose(r, tau_ext, atol=1e-6)
    assert contact and news == [["joint2"]] and rt.contacts == 1 and rt.estimates == 200
    rt.commanded(g[::-1])                          # released: the estimate decays
    for k in range(200, 400):
        r, contact, new = rt.update((k + 1) * DT_NS, Q, np.zeros(2))
    assert not contact and np.abs(r).max() < 1e-3
    warn, message, values = rt.status(dropped=4)
    assert not warn and message == "no contact"
    assert dict(values)["contacts"] == 1 and dict(values)["dropped"] == 4


def test_joint_states_source_uses_the_states_effort_and_ignores_commands(pend):
    rt = observed("joint_states", pend, gravity=[0.0, 0.0, -5.0])
    assert rt.state_fields == ("position", "velocity", "effort")
    ref = MomentumObserver(pend.with_gravity(np.array([0.0, 0.0, -5.0])), gain=50.0,
                           threshold=2.0)
    rng = np.random.default_rng(2)
    for k in range(5):
        q, v, tau = rng.normal(size=2), rng.normal(size=2), rng.normal(size=2)
        rt.applied(tau + 100.0)
        rt.commanded(tau + 100.0)
        r, _, _ = rt.update((k + 1) * 2 * DT_NS, q, v, tau)
        np.testing.assert_allclose(r, ref.update(q, v, tau, None if k == 0 else 2e-3),
                                   atol=1e-12)


def test_command_source_uses_the_last_command_before_each_state(pend):
    rt = observed("command", pend)
    assert rt.state_fields == ("position", "velocity")
    ref = MomentumObserver(pend.with_gravity(np.array([0.0, 0.0, -9.81])), gain=50.0,
                           threshold=2.0)
    rng = np.random.default_rng(4)
    for k in range(5):
        q, v, tau = rng.normal(size=2), rng.normal(size=2), rng.normal(size=2)
        rt.applied(tau + 1.0)
        rt.commanded(tau)                          # the later message wins
        r, _, _ = rt.update((k + 1) * DT_NS, q, v)
        np.testing.assert_allclose(r, ref.update(q, v, tau, None if k == 0 else 1e-3),
                                   atol=1e-12)


def test_bad_configuration_is_refused_and_named(pend, floating):
    with pytest.raises(ValueError, match="torque_source"):
        ObserverRuntime("effort")
    rt = ObserverRuntime("command")
    assert "1-DOF" in rt.set_model(floating, params())
    assert "['nope']" in rt.set_model(pend, params(joints=["nope"]))
    assert "gain" in rt.set_model(pend, params(observer_gain=[1.0, 2.0, 3.0]))
    assert rt.observer is None and rt.status(0)[:2] == (True, "no robot model")
    assert rt.rebuild(params()) == (None, None)            # nothing to rebuild yet
    assert rt.set_model(pend, params()) is None
    reason, obs = rt.rebuild(params(contact_threshold=[1.0, -1.0]))
    assert obs is None and "threshold" in reason
    reason, obs = rt.rebuild(params(observer_gain=[10.0]))
    assert reason is None and (obs.gain == 10.0).all()
    rt.update(DT_NS, Q, np.zeros(2))
    rt.install(obs)
    assert rt.observer is obs and rt.last_stamp_ns is None
    with pytest.raises(ValueError, match="dt must be a positive number"):
        rt.update(DT_NS, Q, np.zeros(2))
        rt.update(DT_NS, Q, np.zeros(2))           # the same stamp again: dt = 0


def observe(rt, res):
    """Feed the simulated states (1 ms apart, torque_source joint_states with zero applied
    torques) -> (r (k, 2), contact flags (k,))."""
    out = [rt.update((k + 1) * DT_NS, q, v, np.zeros(2)) for k, (q, v) in
           enumerate(zip(res.q, res.v))]
    return np.array([r for r, _, _ in out]), np.array([c for _, c, _ in out])


def test_a_damped_robot_in_free_motion_is_not_a_contact_but_a_push_is(pend):
    """The pendulum falls from rest with joint damping and Coulomb friction, simulated with
    them (ldr.simulate, joint_friction=True), nothing applied. Their torques reach about 1.6
    and 1 N m; subtracted, the residual stays below 0.1 N m. A real 2 N m push on joint2 after
    1 s is still flagged, on joint2 only."""
    real = pend.with_joint_dynamics(damping=[0.5, 0.3], friction=[0.3, 0.2])
    q0, threshold = np.array([1.2, -0.5]), 1.0
    free = ldr.simulate(real, q0, np.zeros(2), 2.0, dt=1e-3, joint_friction=True)
    peak = np.abs(ldr.friction_torques(real, free.v)).max(axis=0)
    assert (peak > threshold).any()                   # unmodelled, they would look like contact
    r, flags = observe(observed("joint_states", real, contact_threshold=[threshold]), free)
    assert not flags.any() and np.abs(r).max() < 0.2 * threshold
    r, flags = observe(observed("joint_states", real, contact_threshold=[threshold],
                                compensate_friction=False), free)
    assert flags.any()
    tau_ext = np.array([0.0, 2.0])
    pushed = ldr.simulate(real, q0, np.zeros(2), 2.0, dt=1e-3, joint_friction=True,
                          tau=lambda t, q, v: tau_ext if t >= 1.0 else np.zeros(2))
    rt = observed("joint_states", real, contact_threshold=[threshold])
    r, flags = observe(rt, pushed)
    assert not flags[:1000].any() and flags[1100:].all()
    assert rt.contacts == 1 and rt.observer.contact_joints() == ["joint2"]
    np.testing.assert_allclose(r[-1], tau_ext, atol=0.1 * threshold)


def test_irregular_states_are_exact_and_the_skipped_ones_counted(pend):
    """A held pose with a constant external torque, states at irregular stamps: after any
    sequence of gaps the estimate is tau_ext (1 - e^{-K_O (t - t0)}) (the exact solution of
    ṙ = K_O (tau_ext - r) from r(t0) = 0), and the stamp gaps count as skipped states of the
    publisher's period, though most intervals are gaps."""
    gain = 20.0
    rt = observed("joint_states", pend, observer_gain=[gain])
    tau_ext = np.array([0.5, -1.5])
    tau = ldr.gravity_torques(pend, Q) - tau_ext
    rng = np.random.default_rng(3)
    periods = rng.choice([1, 1, 1, 2, 5, 40, 600], size=300)      # in periods of 1 ms
    periods[0] = 1           # the period is known from the first interval of one period on
    stamps = DT_NS * (1 + np.r_[0, np.cumsum(periods)])
    for s in stamps:
        r, _, _ = rt.update(int(s), Q, np.zeros(2), tau)
        np.testing.assert_allclose(
            r, tau_ext * (1 - np.exp(-gain * (s - stamps[0]) * 1e-9)), atol=1e-9)
    assert rt.period_ns == DT_NS
    assert rt.skipped == int((periods - 1).sum()) and rt.largest_gap_ns == 600 * DT_NS
    values = dict(rt.status(dropped=0)[2])
    assert values["skipped states"] == rt.skipped and values["largest gap (ms)"] == "600.0"
    assert values["torque source"] == "joint_states effort"


def test_the_period_is_the_typical_interval_not_the_smallest(pend):
    """A publisher at 1 kHz with stamp jitter (0.8-1.2 ms): once a window of intervals is
    seen, only real gaps count as skipped states."""
    rt = observed("joint_states", pend)
    rng = np.random.default_rng(5)
    t = 0
    for k in range(400):
        t += int(DT_NS * (3 if k in (250, 300) else rng.uniform(0.8, 1.2)))
        rt.update(t, Q, np.zeros(2), ldr.gravity_torques(pend, Q))
        if k == 200:
            skipped_before = rt.skipped
    assert abs(rt.period_ns - DT_NS) < 0.1 * DT_NS
    assert rt.skipped - skipped_before == 4


def test_the_hold_and_detect_contact_example_says_what_it_shows(tmp_path, capsys):
    """examples/hold_and_detect_contact.py: the held arm shows no contact before the push, the
    push is flagged on the joint feeling it most within 10 ms, the estimate returns below
    the threshold after the release, and the figure is written."""
    from examples import hold_and_detect_contact as demo
    model = bundled("arm7.urdf")
    run = demo.simulate(model)
    r, flags, news, rt = demo.observe(model, run, np.arange(len(run[0])))
    t = run[0]
    tau_ext = ldr.body_jacobian(model, demo.READY, demo.LINK).T @ demo.PUSH
    right = model.joint_names[int(np.argmax(np.abs(tau_ext)))]
    assert not flags[t <= demo.PUSH_S[0]].any() and rt.skipped == 0
    (when, joints), = news
    assert joints == [right] and 0 < when - demo.PUSH_S[0] <= 0.010
    assert not flags[t > demo.PUSH_S[1] + 0.1].any()
    demo.main([str(tmp_path)])
    assert "contact at" in capsys.readouterr().out
    assert (tmp_path / "hold_and_detect_contact.png").stat().st_size > 10_000


@pytest.mark.parametrize("source", ["joint_states", "command"])
def test_waiting_for_the_torque_passes_over_a_held_start(pend, source):
    """wait_for_torque: the states of a start-up hold (zero effort, or no command yet) give
    no estimate, where without it the holding torque g(q) becomes a contact; the first state
    with an applied torque starts the observer (r = 0), which then reports tau_ext."""
    g = ldr.gravity_torques(pend, Q)
    tau_ext = np.array([0.0, 3.0])
    plain = observed(source, pend)
    rt = ObserverRuntime(source, wait_for_torque=True)
    assert rt.set_model(pend, params()) is None
    for k in range(100):                       # held: nothing applied
        held = rt.update((k + 1) * DT_NS, Q, np.zeros(2), np.zeros(2))
        assert held == (None, False, None)
        plain.update((k + 1) * DT_NS, Q, np.zeros(2), np.zeros(2))
    assert plain.contacts == 1 and rt.waiting and rt.waited == 100 and rt.estimates == 0
    assert rt.status(0)[1] == "waiting for the applied torque (100 states so far)"
    rt.commanded(g - tau_ext)
    for k in range(100, 400):
        r, contact, _ = rt.update((k + 1) * DT_NS, Q, np.zeros(2), g - tau_ext)
        if k == 100:
            np.testing.assert_array_equal(r, 0.0)
    np.testing.assert_allclose(r, tau_ext * (1 - np.exp(-50.0 * 0.299)), atol=1e-9)
    assert contact and not rt.waiting and rt.estimates == 300 and rt.contacts == 1
