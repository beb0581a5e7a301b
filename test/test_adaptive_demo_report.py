"""What the demo shows and prints (ros/adaptive_demo.py), from a synthetic run, without DDS:
the figure's panels and axis labels and the console summary's labelled numbers."""
import numpy as np
import pytest

from lie_dynamics_ros.ros import adaptive_demo as demo

NAMES = ["panda_joint%d" % k for k in range(1, 8)]


def synthetic(misses=0):
    """A summary shaped like ``demo.run``'s: joint 3 (index 2) carries the largest error
    without adaptation."""
    t = np.linspace(0.0, 2.0, 201)
    n = t.size
    decay = np.exp(-t)[:, None]
    fixed_e = 0.01 * np.ones((n, 7))
    fixed_e[:, 2] = 0.05
    q_d = demo.READY + 0.1 * np.sin(t)[:, None]
    nominal = np.zeros(10)
    true = np.r_[2.0, 0.06, 0.0, 0.32, np.zeros(6)]
    theta = true * (1 - decay)
    return dict(
        names=NAMES, adaptive_t=t, fixed_t=t, adaptive_e=0.01 * decay * np.ones((n, 7)),
        fixed_e=fixed_e, adaptive_q=q_d + 0.01 * decay, fixed_q=q_d + fixed_e,
        adaptive_q_d=q_d, fixed_q_d=q_d, adaptive_theta=theta, theta_hat=true.copy(),
        theta_true=true, theta_nominal=nominal, adaptive_V=np.exp(-t), adapted_body="panda_link7",
        rms_per_second=np.array([[0.03, 0.04], [0.001, 0.035]]), ratio_adaptive=1 / 30,
        ratio_fixed=0.875, V_max_increase=-1e-7, steps=2000, wall_loop=10.0,
        realtime_factor=0.2, wall_total=12.0, lockstep_misses=misses)


def test_the_figure_shows_reference_against_actual_and_each_loops_errors_with_units():
    pytest.importorskip("matplotlib")
    fig = demo.figure(synthetic())
    labels = [a.get_ylabel() for a in fig.axes]
    titles = [a.get_title() for a in fig.axes]
    assert demo.disturbed_joint(synthetic()) == 2
    ref = next(a for a in fig.axes if a.get_title().startswith("reference against actual"))
    assert "panda_joint3" in ref.get_title() and "[rad]" in ref.get_ylabel()
    assert {line.get_label() for line in ref.get_lines()} >= {
        "reference q_d", "actual q, adaptive", "actual q, no adaptation"}
    per_joint = [a for a in fig.axes if "error of each joint" in a.get_title()]
    assert sorted(a.get_title().split(":")[0] for a in per_joint) == ["adaptive",
                                                                    "no adaptation"]
    for a in per_joint:
        assert len(a.get_lines()) == 7 and a.get_legend() is not None
    # kg and kg m on separate axes, every axis labelled with its unit
    assert sum("[kg]" in lb for lb in labels) == 1 and sum("[kg m]" in lb for lb in labels) == 1
    assert not any("[kg]" in lb and "kg m" in lb for lb in labels)
    assert all(lb and a.get_xlabel() == "simulated time [s]" for a, lb in zip(fig.axes, labels))
    assert any("Lyapunov" in lb for lb in labels) and len(titles) == 7


def test_the_console_summary_labels_its_numbers_and_explains_lockstep_timeouts():
    lines = demo.summary_lines(synthetic())
    text = "\n".join(lines)
    assert "payload mass: estimated 2.000 kg, true 2.000 kg" in text
    assert "first second -> last second: adaptive 0.0300 -> 0.0010 rad" in text
    assert "no adaptation 0.0400 -> 0.0350 rad" in text
    assert "lockstep timeouts: none" in text
    late = "\n".join(demo.summary_lines(synthetic(misses=3)))
    assert "lockstep timeouts: 3 of 2001 steps went ahead without the controller's answer" in late
    assert "reused the previous command" in late
