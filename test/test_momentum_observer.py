"""The generalized-momentum observer (lie_dynamics_ros.estimation) in the loop with the
ROS-free Simulator: the estimate converges to J^T f for a wrench on a link, contact is detected
within 20 ms, free motion gives no false contact, and states taken with gaps up to 0.6 s (a
subscriber on a loaded machine) give a bounded estimate close to the every-state one. No DDS
here (the node: launch_test/)."""
import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.estimation import MomentumObserver
from lie_dynamics_ros.integrators.simulate import make_stepper
from lie_dynamics_ros.integrators.simulator import Simulator

from ros_fixtures import ARM7, DOUBLE_PENDULUM

READY = np.array([0.0, -0.785398163, 0.0, -2.356194490, 0.0, 1.570796327, 0.785398163])
DT_NS = 1_000_000
GAIN = 100.0
THRESHOLD = 2.0


def run(model, q0, steps, wrench_at=None, link=None, wrench=None, torque=None, gain=GAIN):
    sim = Simulator(model, DT_NS, make_stepper(model, "semi_implicit"),
                    np.zeros(model.nv, bool), q0, np.zeros(model.nv))
    obs = MomentumObserver(model, gain=gain, threshold=THRESHOLD)
    obs.update(sim.q, sim.v, None, None)
    rs, contact = [], []
    for k in range(steps):
        if wrench_at is not None and k == wrench_at:
            sim.set_external_wrench(link, wrench)
        tau = torque(sim.q) if torque else np.zeros(model.nv)
        sim.step(tau)
        rs.append(obs.update(sim.q, sim.v, sim.tau, sim.dt).copy())
        contact.append(obs.contact)
    return sim, np.array(rs), np.array(contact)


def test_estimate_converges_to_the_external_torque_and_contact_is_detected_within_20_ms():
    model = ldr.load_urdf(ARM7)
    wrench = np.array([0.0, 15.0, -10.0, 0.0, 0.5, 0.0])     # (force, torque) in panda_link7
    start = 200
    sim, r, contact = run(model, READY, 300, start, "panda_link7", wrench,
                          torque=lambda q: ldr.gravity_torques(model, q))
    assert not contact[:start].any()                         # held pose, no contact
    assert np.abs(r[:start]).max() < 1e-6
    # after 5 time constants (50 ms) the estimate is J^T w at the current q
    tau_ext = ldr.body_jacobian(model, sim.q, "panda_link7").T @ wrench
    assert np.abs(tau_ext).max() > 3 * THRESHOLD
    np.testing.assert_allclose(r[-1], tau_ext, atol=0.02 * np.abs(tau_ext).max())
    # first-order response: after one time constant about 63 % of the step
    tau0 = ldr.body_jacobian(model, READY, "panda_link7").T @ wrench
    k = int(np.argmax(np.abs(tau0)))
    tc = start + int(round(1.0 / GAIN / (DT_NS * 1e-9))) - 1
    assert 0.55 < r[tc, k] / tau0[k] < 0.70, r[tc, k] / tau0[k]
    delay_ms = (int(np.argmax(contact)) - start + 1) * DT_NS * 1e-6
    assert contact[start:].any() and delay_ms <= 20.0, delay_ms


def test_no_false_contact_in_free_motion():
    """The arm falls freely (zero torque) for 0.3 s: coupled motion up to 8 rad/s, no
    contact. (The residual also holds the mismatch between the simulator's semi-implicit
    step and the observer's quadrature, O(dt) times the rate of change of dM/dt qd: at
    1 kHz it stays near 0.25 N m up to 8 rad/s, 1.5 N m at 15 rad/s after 0.45 s, and
    passes the threshold in the faster tumbling that follows.)"""
    model = ldr.load_urdf(ARM7)
    sim, r, contact = run(model, READY, 300)
    assert np.abs(sim.v).max() > 5.0                       # it really moves
    assert not contact.any(), np.abs(r).max(axis=0)
    assert np.abs(r).max() < 0.15 * THRESHOLD


def test_double_pendulum_under_a_force_at_its_tip():
    model = ldr.load_urdf(DOUBLE_PENDULUM)
    link = model.body_names[-1]
    wrench = np.array([3.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    sim, r, contact = run(model, [1.0, 0.0], 200, 0, link, wrench,
                          torque=lambda q: ldr.gravity_torques(model, q))
    tau_ext = ldr.body_jacobian(model, sim.q, link).T @ wrench
    np.testing.assert_allclose(r[-1], tau_ext, atol=0.03 * np.abs(tau_ext).max())


def test_one_gap_of_any_length_relaxes_by_its_exact_exponential():
    """Held pose, constant external torque: over one gap dt from r0, ṙ = K_O (tau_ext - r)
    gives r = tau_ext + e^{-K_O dt} (r0 - tau_ext), whatever K_O dt (the explicit update
    overshoots for K_O dt > 1 and diverges for K_O dt > 2)."""
    model = ldr.load_urdf(DOUBLE_PENDULUM)
    q, z = np.array([0.4, -0.7]), np.zeros(2)
    tau_ext = np.array([1.5, -0.8])
    tau = ldr.gravity_torques(model, q) - tau_ext
    for dt in (1e-3, 0.02, 0.6, 5.0):
        obs = MomentumObserver(model, gain=GAIN)
        obs.update(q, z, tau, None)
        r0 = obs.update(q, z, tau, 0.004).copy()
        r = obs.update(q, z, tau, dt)
        np.testing.assert_allclose(r, tau_ext + np.exp(-GAIN * dt) * (r0 - tau_ext),
                                   rtol=1e-9, atol=1e-12)


def simulated_push(model, steps=3000, push=(1000, 1200)):
    """arm7 held by gravity compensation (torque g(q) of the state before each step), a 5 N
    push on the flange over ``push`` (steps), then free to drift: (q, v, applied torque,
    true tau_ext over the step before each state), one row per state (1 ms)."""
    wrench = np.array([0.0, 5.0, 0.0, 0.0, 0.0, 0.0])
    sim = Simulator(model, DT_NS, make_stepper(model, "semi_implicit"),
                    np.zeros(model.nv, bool), READY, np.zeros(model.nv))
    rows = [(sim.q, sim.v, ldr.gravity_torques(model, sim.q), np.zeros(model.nv))]
    for k in range(steps):
        if k in push:
            sim.set_external_wrench("panda_link7", wrench if k == push[0] else None)
        q = sim.q
        sim.step(ldr.gravity_torques(model, q))
        pushed = push[0] <= k < push[1]
        rows.append((sim.q, sim.v, sim.tau, ldr.body_jacobian(model, q, "panda_link7").T @ wrench
                     if pushed else np.zeros(model.nv)))
    return [np.array(x) for x in zip(*rows)]


def observe(model, states, taken, explicit=False):
    """r at the states ``taken`` (indices), fed only those; ``explicit``: the former update
    r = K_O (p - int(tau + C^T qd - g + r) - p(0)) with an explicit Euler integral."""
    q, v, tau, _ = states
    if explicit:
        r, integral, p0, out = np.zeros(model.nv), np.zeros(model.nv), None, []
        for j, i in enumerate(taken):
            p = ldr.mass_matrix(model, q[i]) @ v[i]
            if p0 is None:
                p0 = p
            else:
                integral += (tau[i] + drift + r) * (i - taken[j - 1]) * 1e-3
                r = GAIN * (p - integral - p0)
            drift = (ldr.coriolis_matrix(model, q[i], v[i]).T @ v[i]
                     - ldr.gravity_torques(model, q[i]))
            out.append(r)
        return np.array(out)
    obs = MomentumObserver(model, gain=GAIN, threshold=THRESHOLD)
    return np.array([obs.update(q[i], v[i], tau[i], None if j == 0 else
                                (i - taken[j - 1]) * 1e-3).copy()
                     for j, i in enumerate(taken)])


def test_states_taken_with_gaps_up_to_0_6_s_keep_the_estimate_bounded_and_close():
    """The same simulated run observed on every state and on irregular subsets: runs of
    consecutive states and gaps of 50-600 ms (K_O dt up to 60), as a subscriber on a busy
    machine takes them. Each subset's estimate stays within the true external torque's range,
    and equals the every-state estimate to 0.02 N m at every state except those within 0.1 s
    (5 time constants) of the first state after the push's start or end (across a gap, the
    estimate is the gap's mean, which the every-state estimate is not). The former explicit
    update on the same states blows up."""
    model = ldr.load_urdf(ARM7)
    push = (1000, 1200)
    states = simulated_push(model, push=push)
    n = len(states[0])
    every = observe(model, states, np.arange(n))
    truth = states[3]
    assert np.abs(every[:push[0]]).max() < 1e-6
    np.testing.assert_allclose(every[push[0] + 100:push[1]], truth[push[0] + 100:push[1]],
                               atol=0.05)
    edges = [e + 1 for e in push]           # first states after a change of the wrench
    peak = np.abs(truth).max()
    rng = np.random.default_rng(7)
    for _ in range(4):
        taken = [0]
        while taken[-1] < n - 1:
            gap = rng.integers(1, 4) if rng.random() < 0.5 else rng.integers(50, 601)
            taken.append(min(n - 1, taken[-1] + int(gap)))
        taken = np.array(taken)
        assert np.diff(taken).max() > 400
        r = observe(model, states, taken)
        assert np.abs(r).max() <= peak + 0.05, (np.abs(r).max(), peak)
        settled = np.ones(len(taken), bool)
        for e in edges:     # 0.1 s past the first state that saw the change
            first = taken[taken >= e].min()
            settled &= (taken < e) | (taken >= first + 100)
        assert settled.sum() > len(taken) // 2
        np.testing.assert_allclose(r[settled], every[taken][settled], atol=0.02)
        assert np.abs(observe(model, states, taken, explicit=True)).max() > 100 * peak


def test_bad_input_is_refused():
    model = ldr.load_urdf(DOUBLE_PENDULUM)
    with pytest.raises(ldr.InputError):
        MomentumObserver(model, gain=[1.0, 2.0, 3.0])
    with pytest.raises(ldr.InputError):
        MomentumObserver(model, threshold=-1.0)
    obs = MomentumObserver(model)
    obs.update([0.0, 0.0], [0.0, 0.0], None, None)
    with pytest.raises(ldr.InputError):
        obs.update([0.0, 0.0], [0.0, 0.0], [np.nan, 0.0], 1e-3)
    with pytest.raises(ldr.InputError):
        obs.update([0.0, 0.0], [0.0, 0.0], [0.0, 0.0], 0.0)
