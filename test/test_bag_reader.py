"""ros/bag_reader.py: JointState bags written by rosbags (MCAP and sqlite3) read back exactly."""
import io
import os

import numpy as np
import pytest

from bag_writer import joint_state, write_bag, write_recording
from lie_dynamics_ros.errors import InputError
from lie_dynamics_ros.ros.bag_reader import read_bags, read_joint_states

NAMES = ["shoulder", "elbow", "wrist"]


def _arrays(n, seed=0):
    rng = np.random.default_rng(seed)
    t = 100.0 + np.arange(n) * 2e-3 + rng.uniform(0, 1e-4, n)
    return t, rng.standard_normal((n, 3)), rng.standard_normal((n, 3)), rng.standard_normal((n, 3))


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_read_back_exactly_in_model_order(tmp_path, storage):
    t, p, v, e = _arrays(200)
    bag = str(tmp_path / "bag")
    # the messages list the joints in another order than the model
    write_recording(bag, t, NAMES, p, v, e, storage, order=["wrist", "shoulder", "elbow"])
    s = read_joint_states(bag, NAMES)
    assert list(s.names) == NAMES and s.source == bag
    stamps_ns = np.round(t * 1e9).astype(np.int64)
    assert np.array_equal(s.t, stamps_ns * 1e-9)
    assert np.array_equal(s.position, p) and np.array_equal(s.velocity, v)
    assert np.array_equal(s.effort, e)


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_single_file_empty_velocity_and_a_joint_not_sent(tmp_path, storage):
    t, p, _, e = _arrays(50, seed=1)
    bag = str(tmp_path / "bag")
    write_recording(bag, t, NAMES[:2], p[:, :2], None, e[:, :2], storage)
    (f,) = [x for x in os.listdir(bag) if x.endswith((".mcap", ".db3"))]
    s = read_joint_states(os.path.join(bag, f), NAMES)
    assert np.isnan(s.velocity).all()                       # empty velocity = unknown
    assert np.array_equal(s.position[:, :2], p[:, :2]) and np.isnan(s.position[:, 2]).all()
    assert np.array_equal(s.effort[:, :2], e[:, :2]) and np.isnan(s.effort[:, 2]).all()


def test_several_bags_are_separate_recordings_and_extra_topics_ignored(tmp_path):
    t, p, v, e = _arrays(30, seed=2)
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    write_recording(a, t, NAMES, p, v, e, "mcap")
    write_bag(b, [(int(t[0] * 1e9), joint_state(int(t[0] * 1e9), NAMES, p[0], (), e[0]))],
              "sqlite3", extra_topics=[("/other", "sensor_msgs/msg/JointState",
                                        [(1, joint_state(1, NAMES, p[1], (), e[1]))])])
    ra, rb = read_bags([a, b], NAMES)
    assert len(ra.t) == 30 and len(rb.t) == 1
    assert np.array_equal(rb.position[0], p[0])


def test_header_stamp_zero_takes_the_receive_time(tmp_path):
    bag = str(tmp_path / "bag")
    write_bag(bag, [(5_000_000_000 + k, joint_state(0, NAMES, [k, 0, 0], (), [0, 0, 0]))
                    for k in range(3)], "mcap")
    s = read_joint_states(bag, NAMES)
    assert np.array_equal(s.t, (5_000_000_000 + np.arange(3)) * 1e-9)


def test_progress_line_on_long_reads(tmp_path):
    t, p, v, e = _arrays(20, seed=3)
    bag = str(tmp_path / "bag")
    write_recording(bag, t, NAMES, p, v, e, "mcap")
    out = io.StringIO()
    read_joint_states(bag, NAMES, progress=True, stream=out)
    assert "20/20 messages" in out.getvalue() and "100.0%" in out.getvalue()
    quiet = io.StringIO()
    read_joint_states(bag, NAMES, stream=quiet)             # 20 messages: below the threshold
    assert quiet.getvalue() == ""


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_errors_name_the_bag_and_the_problem(tmp_path, storage):
    t, p, v, e = _arrays(5)
    bag = str(tmp_path / "bag")
    write_recording(bag, t, NAMES, p, v, e, storage, topic="/arm/joint_states")
    with pytest.raises(InputError, match="no sensor_msgs/msg/JointState messages on topic "
                       "/joint_states; the bag's topics: /arm/joint_states"):
        read_joint_states(bag, NAMES)
    assert len(read_joint_states(bag, NAMES, topic="/arm/joint_states").t) == 5
    text = tmp_path / "notes.txt"
    text.write_text("not a bag")
    with pytest.raises(InputError, match="not a rosbag2 bag"):
        read_joint_states(str(text), NAMES)
    with pytest.raises(InputError, match="not a rosbag2 bag: no metadata.yaml"):
        read_joint_states(str(tmp_path / ".."), NAMES)
    with pytest.raises(InputError, match="no such bag"):
        read_joint_states(str(tmp_path / "missing"), NAMES)
