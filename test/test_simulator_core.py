"""The ROS-free Simulator (integrators/simulator.py): divergence stops with the time and the
joint, position limits hold when enforced, external wrenches on links. No DDS."""
import math

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.integrators.simulate import make_stepper
from lie_dynamics_ros.integrators.simulator import (SimulationDiverged, Simulator,
                                                    velocity_bounds)

from ros_fixtures import ARM7, DOUBLE_PENDULUM

READY = np.array([0.0, -0.785398163, 0.0, -2.356194490, 0.0, 1.570796327, 0.785398163])


def make(model, q0, v0=None, dt_ns=1_000_000, **kw):
    return Simulator(model, dt_ns, make_stepper(model, "semi_implicit"),
                     np.zeros(model.nv, bool), q0,
                     np.zeros(model.nv) if v0 is None else v0, **kw)


def test_a_joint_faster_than_its_bound_stops_the_run_naming_time_and_joint():
    model = ldr.load_urdf(DOUBLE_PENDULUM)
    sim = make(model, [math.pi / 2, 0.0], velocity_bound=[3.0, 1e9])
    with pytest.raises(SimulationDiverged) as err:
        for _ in range(5000):
            sim.step(np.zeros(2))
    e = err.value
    assert e.joint == model.joint_names[0] and 0 < e.t_s < 5.0
    assert "reduce dt" in str(e) and "rkmk4" in str(e) and model.joint_names[0] in str(e)
    assert abs(sim.v[0]) <= 3.0          # the state is the last one within bounds
    assert e.t_s == pytest.approx((sim.steps + 1) * 1e-3)


def test_a_non_finite_step_is_refused_and_the_state_kept():
    model = ldr.load_urdf(DOUBLE_PENDULUM)
    sim = make(model, [1.0, 0.0])
    sim.step(np.zeros(2))
    q, v = sim.q.copy(), sim.v.copy()
    sim.stepper = lambda q, v, dt, tau=None, t=0.0, accel=None: (q, v * np.nan)
    with pytest.raises(SimulationDiverged, match="non-finite velocity"):
        sim.step(np.zeros(2))
    np.testing.assert_array_equal(sim.q, q)
    np.testing.assert_array_equal(sim.v, v)


def test_velocity_bounds_use_the_urdf_limits():
    model = ldr.load_urdf(ARM7)
    b = velocity_bounds(model, factor=10.0)
    np.testing.assert_allclose(b, 10.0 * model.velocity_limits)
    assert np.isinf(velocity_bounds(model, factor=0.0)).all()


def test_enforced_position_limits_hold_a_falling_arm_inside_them():
    model = ldr.load_urdf(ARM7)
    lo, hi = model.lower_limits, model.upper_limits
    free = make(model, READY)
    held = make(model, READY, position_limits=(lo, hi))
    outside = False
    for _ in range(1500):
        free.step(np.zeros(7))
        held.step(np.zeros(7))
        outside |= bool(((free.q < lo - 1e-9) | (free.q > hi + 1e-9)).any())
        assert ((held.q >= lo) & (held.q <= hi)).all()
    assert outside                      # without enforcement the arm leaves its limits
    assert held.limit_stops > 0


def test_an_external_wrench_on_a_link_is_the_torque_jt_f():
    model = ldr.load_urdf(ARM7)
    sim = make(model, READY)
    w = np.array([0.0, 0.0, -20.0, 0.0, 0.0, 0.0])
    sim.set_external_wrench("panda_link7", w)
    g = ldr.gravity_torques(model, READY)
    sim.step(g)     # gravity compensated: the wrench alone accelerates the arm
    a = sim.v / sim.dt
    J = ldr.body_jacobian(model, READY, "panda_link7")
    M = ldr.mass_matrix(model, READY)
    np.testing.assert_allclose(M @ a, J.T @ w, atol=1e-9)
    sim.set_external_wrench("panda_link7", np.zeros(6))
    assert sim.f_ext is None
    with pytest.raises((ldr.InputError, KeyError)):
        sim.set_external_wrench("no_such_link", w)
    with pytest.raises(ldr.InputError):
        sim.set_external_wrench("panda_link7", [np.nan] * 6)


def inverted_pendulum(lower=-0.5, upper=0.5, velocity=0.03):
    """A 1 m inverted pendulum (1 kg) whose joint limits keep it near the top; without
    torque it falls through them."""
    b = ldr.ModelBuilder("inverted")
    b.add_link("base")
    b.add_link("bob", mass=1.0, com=(0, 0, 1.0), inertia=np.eye(3) * 1e-3)
    b.add_joint("hinge", ldr.Revolute((0, 1, 0)), "base", "bob", lower=lower, upper=upper,
                effort=100.0, velocity=velocity)
    return b.build()


def test_a_fall_through_unenforced_limits_is_named_as_such_not_as_a_step_size_problem():
    model = inverted_pendulum()
    sim = make(model, [0.3], velocity_bound=[3.0])
    with pytest.raises(SimulationDiverged) as err:
        for _ in range(5000):
            sim.step(np.zeros(1))
    msg = str(err.value)
    assert sim.q[0] > 0.5                               # it did fall through the limit
    assert "a fall through the joint limits" in msg and "no torque applied" in msg
    assert "enforce_position_limits" in msg and SimulationDiverged.STEP_ADVICE not in msg
    # a torque that did not hold it: the step-size advice, and the limits named
    sim = make(model, [0.3], velocity_bound=[3.0])
    with pytest.raises(SimulationDiverged) as err:
        for _ in range(5000):
            sim.step(np.full(1, 0.5))
    assert str(err.value).count(SimulationDiverged.STEP_ADVICE) == 1
    assert "['hinge'] are past their URDF position limits" in str(err.value)
    # within its limits the same speed keeps the step-size advice
    sim = make(inverted_pendulum(-3.0, 3.0), [0.3], velocity_bound=[3.0])
    with pytest.raises(SimulationDiverged, match="reduce dt"):
        for _ in range(5000):
            sim.step(np.zeros(1))
