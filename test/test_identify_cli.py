"""ldr_identify (ros/identify_cli.py): bags written by rosbags, every refusal with status 1, one
line on stderr naming the reason and no file written; the happy path on a simulated double
pendulum with friction."""
import os
import subprocess
import sys

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from bag_writer import write_recording
from lie_dynamics_ros.resources import bundled_urdf
from lie_dynamics_ros.ros.identify_cli import main

NAMES = ["joint1", "joint2"]
# per joint (amplitude rad, frequency Hz, phase): the joints move together and cross zero
# velocity often, so inertias, damping and Coulomb friction are all excited
WAVES = [[(0.8, 0.2, 0.0), (0.4, 0.55, 1.0), (0.15, 1.3, 2.0)],
         [(0.9, 0.3, 0.5), (0.3, 0.8, 0.2), (0.1, 1.7, 1.1)]]
# Coulomb friction a few % of the peak torque, damping comparable at the peak velocity
DAMPING, FRICTION = np.array([0.5, 0.3]), np.array([2.0, 1.0])


def motion(t):
    q, v, a = (np.zeros((len(t), 2)) for _ in range(3))
    for j, waves in enumerate(WAVES):
        for amp, f, ph in waves:
            w = 2 * np.pi * f
            q[:, j] += amp * np.sin(w * t + ph)
            v[:, j] += amp * w * np.cos(w * t + ph)
            a[:, j] -= amp * w * w * np.sin(w * t + ph)
    return q, v, a


@pytest.fixture(scope="module")
def truth():
    return ldr.load_urdf(bundled_urdf("double_pendulum.urdf")).with_joint_dynamics(
        damping=DAMPING, friction=FRICTION)


def record(path, truth, duration, rate=500.0, effort=True, names=NAMES, storage="mcap",
           noise=0.0, seed=0):
    t = np.arange(0.0, duration, 1.0 / rate)
    q, v, a = motion(t)
    tau = ldr.inverse_dynamics(truth, q, v, a) + ldr.friction_torques(truth, v)
    tau += noise * np.abs(tau).max(axis=0) * np.random.default_rng(seed).standard_normal(tau.shape)
    cols = [NAMES.index(n) for n in names]
    write_recording(str(path), t + 1000.0, names, q[:, cols], None,
                    tau[:, cols] if effort else None, storage)
    return str(path)


def run(tmp_path, capsys, *args):
    out = tmp_path / "out" / "identified.urdf"
    out.parent.mkdir(exist_ok=True)
    code = main(["--urdf", bundled_urdf("double_pendulum.urdf"), "--out", str(out),
                 "--report", str(out.parent / "report.png"), *args])
    cap = capsys.readouterr()
    return code, cap.out, cap.err, out


def assert_refused(code, err, out, reason):
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ldr_identify: error: "), err
    assert reason in lines[0], (reason, lines[0])
    assert os.listdir(out.parent) == []                     # no URDF, no figure, no temporary


def test_no_effort(tmp_path, capsys, truth):
    bag = record(tmp_path / "bag", truth, 10.0, effort=False)
    code, _, err, out = run(tmp_path, capsys, "--bag", bag)
    assert_refused(code, err, out, "no effort for joint(s) joint1, joint2")


def test_missing_joint(tmp_path, capsys, truth):
    bag = record(tmp_path / "bag", truth, 10.0, names=["joint1"], storage="sqlite3")
    code, _, err, out = run(tmp_path, capsys, "--bag", bag)
    assert_refused(code, err, out, "no position for joint(s) joint2")


def test_too_little_data(tmp_path, capsys, truth):
    bag = record(tmp_path / "bag", truth, 0.5)
    code, _, err, out = run(tmp_path, capsys, "--bag", bag)
    assert_refused(code, err, out, "too little data")


def test_not_a_bag(tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    code, _, err, out = run(tmp_path, capsys, "--bag", str(notes))
    assert_refused(code, err, out, "not a rosbag2 bag")


def test_wrong_topic_and_bad_holdout(tmp_path, capsys, truth):
    bag = record(tmp_path / "bag", truth, 2.0)
    code, _, err, out = run(tmp_path, capsys, "--bag", bag, "--topic", "/arm/joint_states")
    assert_refused(code, err, out, "no sensor_msgs/msg/JointState messages on topic "
                   "/arm/joint_states; the bag's topics: /joint_states")
    code, _, err, out = run(tmp_path, capsys, "--bag", bag, "--holdout", "1.5")
    assert_refused(code, err, out, "--holdout must be in (0, 1)")


def test_console_script_exit_status(tmp_path):
    """The module as a program (what the console script runs) exits 1 with the one line."""
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    out = tmp_path / "x.urdf"
    p = subprocess.run([sys.executable, "-m", "lie_dynamics_ros.ros.identify_cli", "--urdf",
                        bundled_urdf("double_pendulum.urdf"), "--bag", str(notes), "--out",
                        str(out)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and "not a rosbag2 bag" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and not out.exists()


def test_setup_declares_the_console_script():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "setup.py")) as f:
        assert "'ldr_identify = lie_dynamics_ros.ros.identify_cli:main'" in f.read()


def test_identifies_a_pendulum_from_two_bags(tmp_path, capsys, truth):
    """Needs ldr.identify (lie_dynamics_ros/identification/identify.py). Positions and
    efforts only (1 % torque noise), an MCAP and a sqlite3 bag: held-out RMS <= 2 % of each
    joint's peak, friction within 10 %, and the written URDF loads with it."""
    a = record(tmp_path / "a", truth, 40.0, noise=0.01, seed=1)
    b = record(tmp_path / "b", truth, 40.0, storage="sqlite3", noise=0.01, seed=2)
    code, stdout, err, out = run(tmp_path, capsys, "--bag", a, "--bag", b)
    assert code == 0, err
    assert "2 segment(s)" in stdout
    rows = {ln.split()[0]: ln.split() for ln in stdout.splitlines() if ln.startswith("joint")}
    for name in NAMES:
        assert float(rows[name][3]) <= 2.0, rows[name]             # RMS % of peak
    ident = ldr.load_urdf(str(out))
    assert np.allclose(ident.joint_friction, FRICTION, rtol=0.1), ident.joint_friction
    assert (out.parent / "report.png").stat().st_size > 1000


def test_a_motion_that_does_not_excite_is_refused(tmp_path, capsys, truth, monkeypatch):
    """Needs ldr.identify. Joint 2 held still: its link's parameters and friction are not
    excited, so the command refuses, naming the rank and the condition number; with
    --allow-unexcited it keeps their CAD values and writes the URDF."""
    monkeypatch.setattr(sys.modules[__name__], "WAVES", [WAVES[0], [(0.0, 0.3, 0.5)]])
    bag = record(tmp_path / "bag", truth, 20.0)
    code, _, err, out = run(tmp_path, capsys, "--bag", bag)
    assert_refused(code, err, out, "the motion does not excite")
    assert "condition number" in err and "--allow-unexcited" in err
    code, _, err, out = run(tmp_path, capsys, "--bag", bag, "--allow-unexcited")
    assert code == 0, err
    assert out.exists()
