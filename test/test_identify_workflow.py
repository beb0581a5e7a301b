"""The identification workflow in the simulator (examples/identify_arm.py at a small size):
a perturbed arm7 with friction tracks an excitation through ``ldr_bringup
sim_with_adaptive_controller --offline --reference --record``, ``ldr_identify`` reads the bag,
and the identified URDF holds the true arm better than the nominal one. Also
``ldr_bringup --reference``'s file checks."""
import os
import sys

import numpy as np
import pytest
import yaml

from ros_fixtures import REPO  # noqa: F401  (isolates DDS before rclpy starts)

sys.path.insert(0, os.path.join(REPO, "examples"))


def _write(path, doc):
    with open(path, "w") as f:
        yaml.safe_dump(doc, f)
    return str(path)


GOOD = {"joint_names": ["a", "b"], "times": [0.0, 0.5, 1.0],
        "positions": [[0, 0], [0.1, 0.2], [0.2, 0.4]],
        "velocities": [[0, 0], [0.2, 0.4], [0.2, 0.4]]}


def test_load_reference_reads_a_trajectory_file(tmp_path):
    from lie_dynamics_ros.ros.bringup import load_reference
    names, t, q, v, a = load_reference(_write(tmp_path / "r.yaml", GOOD))
    assert names == ["a", "b"] and a is None
    np.testing.assert_array_equal(t, GOOD["times"])
    np.testing.assert_array_equal(q, GOOD["positions"])
    np.testing.assert_array_equal(v, GOOD["velocities"])


@pytest.mark.parametrize("change, words", [
    ({"joint_names": ["a", "a"]}, "joint_names"),
    ({"times": [0.0, 1.0, 0.5]}, "increasing"),
    ({"positions": [[0, 0], [0.1, 0.2]]}, "positions must be 3 x 2"),
    ({"velocities": [[0, 0], [0.1, "x"], [0, 0]]}, "velocities must be numbers"),
    ({"positions": None}, "positions"),
])
def test_load_reference_names_what_is_wrong(tmp_path, change, words):
    from lie_dynamics_ros.ros.bringup import load_reference
    doc = dict(GOOD, **change)
    path = _write(tmp_path / "r.yaml", doc)
    with pytest.raises(ValueError) as e:
        load_reference(path)
    assert words in str(e.value) and path in str(e.value)


def test_reference_needs_a_graph_with_a_controller(tmp_path):
    from lie_dynamics_ros.ros import bringup
    path = _write(tmp_path / "r.yaml", GOOD)
    with pytest.raises(SystemExit, match="--reference needs a graph with a controller"):
        bringup.run(["simulator", "--offline", "--duration", "0.1", "--reference", path])


def test_identified_urdf_holds_the_true_arm_better_than_the_nominal(tmp_path, capsys):
    import identify_arm
    from lie_dynamics_ros.ros.bag_reader import read_joint_states
    duration = 4.0
    res = identify_arm.run(str(tmp_path), duration=duration, harmonics=3,
                           base_frequency=0.25, iterations=5, hold=1.0,
                           figure=str(tmp_path / "fig.png"), stream=open(os.devnull, "w"))
    assert res["steps"] == int(round(duration * 1000))     # 1 kHz, every step answered

    # the recorded motion is the excitation, played through the controller: the tracking
    # error is a small part of the motion (the controller's model is the nominal one)
    exc = res["excitation"]
    rec = read_joint_states(res["bag"], exc.model.joint_names, progress=False)
    q_ref = exc.sample(rec.t)[0]        # the reference starts with the simulated time
    motion = np.sqrt(np.mean((q_ref - q_ref.mean(axis=0)) ** 2, axis=0))
    err = np.sqrt(np.mean((rec.position - q_ref) ** 2, axis=0))
    assert np.all(err < 0.1 * motion), (err, motion)
    assert np.all(np.isfinite(rec.effort)) and np.abs(rec.effort).max() > 1.0

    # the identified model holds the true arm better than the nominal one
    assert res["hold_rms_identified"] < res["hold_rms_nominal"]
    assert res["hold_max_identified"] < res["hold_max_nominal"]
    # friction found within 10 % (rows at rest left out), and written into the URDF
    np.testing.assert_allclose(res["friction_identified"], res["friction_true"], rtol=0.1)
    # ldr_identify's table: held-out torque RMS <= 2 % of each joint's peak where it moves
    rows = [ln.split() for ln in capsys.readouterr().out.splitlines()
            if ln.startswith("panda_joint")]
    assert len(rows) == 7 and all(float(r[3]) <= 2.0 for r in rows), rows
    assert os.path.getsize(res["figure"]) > 0 and os.path.getsize(res["report"]) > 0
