"""lie_dynamics_ros.ros.conversions and recording: validation and conversion without a ROS graph.

Messages are real message objects (sensor_msgs etc.), serialized with rclpy's CDR where it
matters; no DDS traffic, so these tests are fast.
"""
import math
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from ros_fixtures import REPO, NodeProcess, node_env

# test dependencies (make test installs them): a missing one fails, it does not skip
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402

from lie_dynamics_ros.ros import conversions as cv  # noqa: E402

NAMES = ["j1", "j2", "j3"]


def js(names, position=(), velocity=(), effort=(), stamp_ns=0):
    return cv.make_joint_state(names, stamp_ns, position if len(position) else None,
                               velocity if len(velocity) else None,
                               effort if len(effort) else None)


def test_conversions_module_does_not_import_rclpy():
    code = ("import sys, lie_dynamics_ros.ros.conversions as c; "
            "assert 'rclpy' not in sys.modules, 'rclpy imported'; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=node_env(),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr


def test_shuffled_names_and_extra_joints_map_by_name():
    index = cv.JointIndex(NAMES)
    msg = js(["extra", "j3", "j1", "finger", "j2"], [9.0, 3.0, 1.0, 8.0, 2.0],
             [0.9, 0.3, 0.1, 0.8, 0.2], [math.nan, 30.0, 10.0, math.nan, 20.0], 5)
    arr, reason = cv.parse_joint_state(msg, index, optional=("velocity", "effort"))
    assert reason is None
    assert arr.stamp_ns == 5
    np.testing.assert_array_equal(arr.position, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(arr.velocity, [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(arr.effort, [10.0, 20.0, 30.0])
    # the cached index gives the same answer the second time
    arr2, _ = cv.parse_joint_state(msg, index)
    np.testing.assert_array_equal(arr2.position, arr.position)
    assert arr2.effort is None


def test_unused_nan_fields_are_ignored_and_empty_velocity_reads_zero():
    # joint_state_broadcaster publishes NaN for missing interfaces (ros2_controllers #1572)
    index = cv.JointIndex(NAMES)
    msg = js(NAMES, [1.0, 2.0, 3.0], (), [math.nan] * 3)
    arr, reason = cv.parse_joint_state(msg, index)
    assert reason is None
    np.testing.assert_array_equal(arr.velocity, np.zeros(3))


@pytest.mark.parametrize("msg, fragment", [
    (js([]), "empty message"),
    (js([], [1.0]), "no joint names"),
    (js(NAMES, [1.0, 2.0]), "mismatched lengths"),
    (js(NAMES, [1.0, 2.0, 3.0], [0.0]), "mismatched lengths"),
    (js(NAMES, [1.0, 2.0, 3.0], (), [1.0] * 4), "mismatched lengths"),
    (js(["j1", "j2"], [1.0, 2.0]), "missing joints ['j3']"),
    (js(["a", "b", "c"], [1.0, 2.0, 3.0]), "unknown joints ['a', 'b', 'c']"),
    (js(["j1", "j2", "j3", "j1"], [1.0, 2.0, 3.0, 4.0]), "duplicate joint name"),
    (js(NAMES, [1.0, math.nan, 3.0]), "non-finite position"),
    (js(NAMES, [1.0, 2.0, math.inf]), "non-finite position"),
    (js(NAMES, [1.0, 2.0, 3.0], [0.0, -math.inf, 0.0]), "non-finite velocity"),
    (js(NAMES, (), [0.0, 0.0, 0.0]), "no position values"),
])
def test_bad_joint_states_are_rejected_with_a_reason(msg, fragment):
    arr, reason = cv.parse_joint_state(msg, cv.JointIndex(NAMES))
    assert arr is None
    assert fragment in reason


def test_required_joint_mask_allows_absent_joints():
    index = cv.JointIndex(NAMES)
    msg = js(["j3", "j1"], (), (), [3.0, 1.0])
    arr, reason = cv.parse_joint_state(msg, index, need=("effort",), optional=(),
                                       required_joints=[True, False, True])
    assert reason is None
    assert arr.effort[0] == 1.0 and arr.effort[2] == 3.0 and np.isnan(arr.effort[1])
    _, reason = cv.parse_joint_state(msg, index, need=("effort",), optional=())
    assert "missing joints ['j2']" in reason
    # the same names with the mask again: still accepted (the cache is keyed on the mask)
    arr, reason = cv.parse_joint_state(msg, index, need=("effort",), optional=(),
                                       required_joints=np.array([True, False, True]))
    assert reason is None and arr.effort[2] == 3.0


def test_joint_index_caches_lookups_with_and_without_a_required_mask():
    # the simulator looks up every joint_torques message (1 kHz) with its free-joint mask
    index = cv.JointIndex(NAMES)
    names = ["j3", "extra", "j1", "j2"]
    mask = np.array([True, False, True])
    idx, reason = index.lookup(names, mask)
    assert reason is None and list(idx) == [2, 3, 0]
    again, _ = index.lookup(list(names), mask.copy())
    assert again is idx                              # cached, not recomputed
    plain, _ = index.lookup(names)
    assert plain is index.lookup(names)[0] and list(plain) == [2, 3, 0]
    assert not idx.flags.writeable                   # shared: nobody may modify it
    # a different mask is another key: a joint it requires must be present
    _, reason = index.lookup(["j3", "j1"], mask)
    assert reason is None
    _, reason = index.lookup(["j3", "j1"], np.array([True, True, True]))
    assert reason == "missing joints ['j2']"
    _, reason = index.lookup(["j3", "j1"], mask)
    assert reason is None


def test_stamp_monitor_rejects_backwards_and_recovers_from_a_restart():
    mon = cv.StampMonitor(reset_after=3)
    assert mon.check(10) is None
    mon.accept(10)
    assert mon.check(10) is None           # equal is fine
    assert mon.check(0) is None            # unstamped is never rejected
    assert "backwards" in mon.check(9)
    assert mon.check(11) is None
    mon.accept(11)
    assert mon.check(1) and mon.check(2)   # a source restarted ...
    assert mon.check(3) is None            # ... is accepted after reset_after in a row
    assert mon.reset_happened


def test_stamp_helpers_round_trip():
    msg = JointState()
    cv.set_stamp(msg.header.stamp, 12_345_678_901)
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (12, 345_678_901)
    assert cv.stamp_to_ns(msg.header.stamp) == 12_345_678_901


def test_make_joint_state_survives_cdr_round_trip():
    q = np.array([0.1, -0.2, 0.3])
    msg = cv.make_joint_state(NAMES, 7_000_000_001, q, 2 * q, 3 * q)
    back = deserialize_message(serialize_message(msg), JointState)
    assert list(back.name) == NAMES
    assert cv.stamp_to_ns(back.header.stamp) == 7_000_000_001
    np.testing.assert_array_equal(back.position, q)
    np.testing.assert_array_equal(back.effort, 3 * q)
    assert len(cv.make_joint_state(NAMES, 0, q).velocity) == 0


def test_command_array():
    vals, reason = cv.parse_command_array(cv.make_command_array([1.0, 2.0]), 2)
    assert reason is None and list(vals) == [1.0, 2.0]
    assert "mismatched" in cv.parse_command_array(cv.make_command_array([1.0]), 2)[1]
    assert "empty" in cv.parse_command_array(Float64MultiArray(), 2)[1]
    assert "non-finite" in cv.parse_command_array(cv.make_command_array([1.0, math.nan]), 2)[1]
    np.testing.assert_array_equal(cv.reorder([1.0, 2.0, 3.0], ["a", "b", "c"], ["c", "a"]),
                                  [3.0, 1.0])


def _poly(t):
    """A quintic in t, exactly representable by the quintic segments."""
    c = np.array([0.2, -0.5, 0.3, 0.1, -0.05, 0.01])
    q = sum(c[k] * t ** k for k in range(6))
    v = sum(k * c[k] * t ** (k - 1) for k in range(1, 6))
    a = sum(k * (k - 1) * c[k] * t ** (k - 2) for k in range(2, 6))
    return q, v, a


def test_trajectory_quintic_reproduces_a_quintic_and_maps_names():
    times = np.linspace(0.0, 2.0, 5)
    P = np.array([_poly(t) for t in times])      # (5, 3): q, v, a of one joint
    msg = cv.make_trajectory(["j3", "unknown"], times,
                             np.c_[P[:, 0], P[:, 0]], np.c_[P[:, 1], P[:, 1]],
                             np.c_[P[:, 2], P[:, 2]], stamp_ns=1_000_000_000)
    ref, reason = cv.TrajectoryReference.from_msg(msg, cv.JointIndex(NAMES), now_ns=0)
    assert reason is None
    assert list(ref.mask) == [False, False, True]
    for t in [0.0, 0.13, 0.77, 1.5, 1.999]:
        q, v, a = ref.sample(1_000_000_000 + int(round(t * 1e9)))
        tq, tv, ta = _poly(round(t * 1e9) * 1e-9)
        assert abs(q[2] - tq) < 1e-9 and abs(v[2] - tv) < 1e-9 and abs(a[2] - ta) < 1e-9
        assert q[0] == 0.0 and q[1] == 0.0
    # before the start and after the end: hold the first / last point's position at rest,
    # as joint_trajectory_controller does (not the end points' velocity and acceleration)
    assert P[0, 1] != 0.0 and P[-1, 1] != 0.0 and P[-1, 2] != 0.0
    for t_ns, end in ((0, P[0]), (999_999_999, P[0]), (3_000_000_001, P[-1]), (10**10, P[-1])):
        q, v, a = ref.sample(t_ns)
        assert q[2] == pytest.approx(end[0]), t_ns
        assert v[2] == 0.0 and a[2] == 0.0, t_ns
    # exactly at the last point: that point's values
    q, v, a = ref.sample(3_000_000_000)
    assert (q[2], v[2], a[2]) == (pytest.approx(P[-1, 0]), pytest.approx(P[-1, 1]),
                                  pytest.approx(P[-1, 2]))


def test_single_point_position_trajectory_holds_at_rest():
    # one point with a velocity (a "go there" command): after it, hold it with v = a = 0
    index = cv.JointIndex(["a"])
    msg = cv.make_trajectory(["a"], [0.5], [[1.0]], [[2.0]], [[3.0]])
    ref, _ = cv.TrajectoryReference.from_msg(msg, index, now_ns=0)
    for t_ns in (0, 400_000_000, 600_000_000, 10**12):
        q, v, a = ref.sample(t_ns)
        assert (q[0], v[0], a[0]) == (1.0, 0.0, 0.0), t_ns


def test_trajectory_cubic_linear_and_acceleration_only():
    index = cv.JointIndex(["a"])
    cubic = cv.make_trajectory(["a"], [0.0, 1.0], [[0.0], [1.0]], [[0.0], [0.0]])
    ref, _ = cv.TrajectoryReference.from_msg(cubic, index, now_ns=5_000_000_000)
    q, v, a = ref.sample(5_500_000_000)                 # zero stamp = start "now"
    assert q[0] == pytest.approx(0.5) and v[0] == pytest.approx(1.5) and a[0] == 0.0
    lin = cv.make_trajectory(["a"], [0.0, 2.0], [[0.0], [1.0]])
    q, v, a = cv.TrajectoryReference.from_msg(lin, index, 0)[0].sample(1_000_000_000)
    assert (q[0], v[0], a[0]) == (pytest.approx(0.5), pytest.approx(0.5), 0.0)
    # without positions there is nothing to hold: desired accelerations stay in force
    acc = cv.make_trajectory(["a"], [0.0], accelerations=[[2.5]])
    q, v, a = cv.TrajectoryReference.from_msg(acc, index, 0)[0].sample(123)
    assert q is None and v is None and a[0] == 2.5


@pytest.mark.parametrize("msg, fragment", [
    (JointTrajectory(), "empty trajectory"),
    (cv.make_trajectory(["x"], [0.0], [[1.0]]), "no model joint"),
    (cv.make_trajectory(["a"], [1.0, 0.5], [[1.0], [2.0]]), "not increasing"),
    (cv.make_trajectory(["a"], [0.5, 0.5], [[1.0], [2.0]]), "not increasing"),     # equal
    (cv.make_trajectory(["a"], [0.0, 0.2, 0.2], [[1.0], [2.0], [3.0]]), "not increasing"),
    (cv.make_trajectory(["a"], [0.0], [[math.nan]]), "non-finite positions"),
    (cv.make_trajectory(["a", "a"], [0.0], [[1.0, 1.0]]), "duplicate"),
])
def test_bad_trajectories_are_rejected(msg, fragment):
    ref, reason = cv.TrajectoryReference.from_msg(msg, cv.JointIndex(["a"]), 0)
    assert ref is None and fragment in reason


def test_trajectory_point_length_mismatch_is_rejected():
    msg = cv.make_trajectory(["a", "b"], [0.0], [[1.0, 2.0]])
    msg.points[0].velocities = [1.0]
    ref, reason = cv.TrajectoryReference.from_msg(msg, cv.JointIndex(["a", "b"]), 0)
    assert ref is None and "velocities" in reason


def test_throttle_counts_suppressed_reports():
    now = [0.0]
    th = cv.Throttle(1.0, clock=lambda: now[0])
    assert th.ready("x")
    assert not th.ready("x") and not th.ready("x")
    assert th.ready("y")                    # keys are independent
    now[0] = 1.5
    assert th.ready("x") and th.suppressed("x") == 2 and th.suppressed("x") == 0


def test_clamp_and_limits():
    lim = cv.finite_limits([87.0, 0.0, math.inf, -1.0])
    assert list(lim) == [87.0, math.inf, math.inf, math.inf]
    tau, acted = cv.clamp_efforts(np.array([100.0, -1e6, 5.0, 1.0]), lim)
    assert list(tau) == [87.0, -1e6, 5.0, 1.0] and list(acted) == [True, False, False, False]


def test_resolve_urdf_path_uses_the_package_share_directory(tmp_path, monkeypatch):
    """A pip install puts urdf/ under <sys.prefix>/share/lie_dynamics_ros: resolve_urdf_path
    finds bundled robots wherever resources.share_dir() does."""
    from lie_dynamics_ros import resources
    from lie_dynamics_ros.ros.model_source import resolve_urdf_path
    share = tmp_path / "share" / "lie_dynamics_ros"
    (share / "urdf").mkdir(parents=True)
    (share / "urdf" / "only_here.urdf").write_text("<robot name='x'/>")
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    monkeypatch.setattr(resources, "_candidates", lambda: iter(
        [str(tmp_path / "no_checkout"), os.path.join(sys.prefix, "share", "lie_dynamics_ros")]))
    assert resolve_urdf_path("only_here.urdf") == str(share / "urdf" / "only_here.urdf")
    assert resolve_urdf_path("only_here") == str(share / "urdf" / "only_here.urdf")
    assert resolve_urdf_path("urdf/only_here.urdf") == str(share / "urdf" / "only_here.urdf")
    with pytest.raises(FileNotFoundError, match="no_such.urdf"):
        resolve_urdf_path("no_such.urdf")
    monkeypatch.setattr(resources, "_candidates", lambda: iter([]))
    with pytest.raises(FileNotFoundError, match="share directory"):
        resolve_urdf_path("only_here.urdf")


def test_node_process_removes_its_log_file_when_stopped():
    proc = NodeProcess("json.tool", ["--no-such-option"])     # exits at once, with output
    try:
        deadline = time.monotonic() + 30
        while proc.alive() and time.monotonic() < deadline:
            proc.wait_for_log("usage", 1)
        path = proc.log_path
        assert os.path.exists(path)
    finally:
        rc = proc.stop()
    assert rc == 2
    assert not os.path.exists(path)
    assert "usage" in proc.log()                   # the output is still readable
    assert proc.stop() == 2                        # stopping twice is harmless


def test_recording_writes_rosbag2_style_mcap(tmp_path):
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    from lie_dynamics_ros.ros.recording import McapRecorder, message_definition
    text = message_definition(JointTrajectory)
    assert "MSG: trajectory_msgs/msg/JointTrajectoryPoint" in text
    assert "MSG: builtin_interfaces/msg/Duration" in text and "=" * 80 in text
    path = os.path.join(tmp_path, "run.mcap")
    rec = McapRecorder(path, metadata={"graph": "test"})
    for k in range(3):
        msg = cv.make_joint_state(NAMES, k * 1000, [k, 0.0, 0.0])
        rec.write("/joint_states", JointState, serialize_message(msg), k * 1000)
    rec.write("/reference", JointTrajectory,
              serialize_message(cv.make_trajectory(["a"], [0.0], [[1.0]])), 5000)
    rec.close()
    with open(path, "rb") as f:
        reader = make_reader(f)
        assert reader.get_header().profile == "ros2"
        summary = reader.get_summary()
        schemas = {s.name: s.encoding for s in summary.schemas.values()}
        assert schemas == {"sensor_msgs/msg/JointState": "ros2msg",
                           "trajectory_msgs/msg/JointTrajectory": "ros2msg"}
        assert {c.message_encoding for c in summary.channels.values()} == {"cdr"}
    with open(path, "rb") as f:
        msgs = list(make_reader(f, decoder_factories=[DecoderFactory()])
                    .iter_decoded_messages())
    assert [c.topic for _, c, _, _ in msgs] == ["/joint_states"] * 3 + ["/reference"]
    assert [m.log_time for _, _, m, _ in msgs[:3]] == [0, 1000, 2000]
    assert list(msgs[2][3].position) == [2.0, 0.0, 0.0]
    assert msgs[3][3].points[0].positions == [1.0]
