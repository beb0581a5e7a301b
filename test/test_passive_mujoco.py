"""A passive xarm7 with its URDF damping, ours (rkmk4, implicit damping) against MuJoCo's RK4
(explicit damping), the model converted as the benchmarks convert it (test/mujoco_oracle.py).
Friction and joint limits are off in both: this compares the damped dynamics."""
import mujoco
import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.integrators.simulate import simulate

from mujoco_oracle import mujoco_model
from oracle import erd

XARM7 = erd("xarm_description/urdf/xarm7.urdf")
Q0 = np.array([0.3, -0.5, 0.2, 0.8, -0.4, 0.6, 0.1])
T = 1.0


@pytest.fixture(scope="module")
def ours():
    return ldr.load_urdf(XARM7).with_joint_dynamics(friction=np.zeros(7))


def run_mujoco(dt):
    """MuJoCo's RK4 from (Q0, 0) for T; (q, steps done): q is None once it blew up."""
    m = mujoco_model(XARM7, False, dt=dt, limits=False)
    m.dof_frictionloss[:] = 0.0
    d = mujoco.MjData(m)
    d.qpos[:] = Q0
    n = int(round(T / dt))
    for k in range(n):
        mujoco.mj_step(m, d)
        if not np.all(np.isfinite(d.qvel)) or np.abs(d.qvel).max() > 1e3:
            return None, k + 1
    return d.qpos.copy(), n


def test_mujoco_reads_the_same_damping(ours):
    m = mujoco_model(XARM7, False, limits=False)
    np.testing.assert_array_equal(m.dof_damping, ours.joint_damping)
    assert m.nv == ours.nv


def test_damped_xarm7_matches_mujoco_rk4_where_both_are_stable(ours):
    # MuJoCo's explicit RK4 needs h |lambda| <= 2.78 with lambda ~ 1.5e4 1/s: dt = 1e-4.
    q_mj, _ = run_mujoco(1e-4)
    assert q_mj is not None
    # ours is first order in the damping: its error at h is C h = 2 |q(h) - q(h/2)| (the
    # Richardson estimate); MuJoCo's RK4 at 1e-4 is far below that. So ours must agree
    # within the error the estimate predicts (3x it: room for the second-order rest)...
    q = {h: simulate(ours, Q0, np.zeros(7), T, h, "rkmk4").q[-1] for h in (1e-4, 5e-5, 2.5e-5)}
    est = np.abs(q[1e-4] - q[5e-5]).max()
    assert np.abs(q[1e-4] - q_mj).max() <= 3.0 * est
    # ...and the extrapolation 2 q(h/2) - q(h), which cancels the first-order term, agrees
    # to second order: (h/2)^2-sized, i.e. well below the estimate at h = 5e-5 / 4.
    extrap = 2.0 * q[2.5e-5] - q[5e-5]
    est_fine = np.abs(q[5e-5] - q[2.5e-5]).max()
    assert np.abs(extrap - q_mj).max() <= 0.1 * est_fine


def test_at_1ms_ours_stays_stable_where_mujoco_rk4_blows_up(ours, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)        # MuJoCo logs its instability warning to ./MUJOCO_LOG.TXT
    q_mj, steps = run_mujoco(1e-3)
    assert q_mj is None and steps <= 10, steps     # the issue: it blows up within a few ms
    fine = simulate(ours, Q0, np.zeros(7), T, 5e-5, "rkmk4").q[-1]
    r = simulate(ours, Q0, np.zeros(7), T, 1e-3, "rkmk4")
    assert np.all(np.isfinite(r.q)) and np.all(np.isfinite(r.v))
    assert np.abs(r.q[-1] - fine).max() < 2e-3      # first order: ~20x the 5e-5 run's error
