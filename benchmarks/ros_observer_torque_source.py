"""Which torque the external-torque observer uses, measured where users run it: observer.launch.py
(the flagship graph, not in lockstep, with the observer on ``torque_source: joint_states``) and a
second observer on ``torque_source: command`` (the last joint_torques before each state) next to
it. A 15 N push on the flange for 0.3 s of simulation sets the gravity-compensated arm swinging;
once released, nothing external acts, so each observer's |r| is its error. Not a test.

Needs ``ros2 launch`` and the package built with colcon (the environment of ``make
launch-test``, whose helpers it uses):

    . build/launch_ws/install/setup.bash && python -P benchmarks/ros_observer_torque_source.py
"""
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "launch_test"))

import numpy as np  # noqa: E402
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from test_ros2_launch import Launch, Observer, stamp_s  # noqa: E402
from test_observer_launch import Stream, wrench_msg  # noqa: E402

THRESHOLD = 2.0      # the observer's default contact_threshold, N m
PUSH_S = 0.3         # simulation seconds of the push, from its first effect
FREE_S = 3.0         # simulation seconds of free swing recorded after it


def record(ros, streams, seconds):
    wait(streams, lambda: False, seconds)


def wait(streams, cond, seconds=120.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end and not cond():
        for s in streams:
            s.take()
        time.sleep(0.005)


def main():
    ros = Observer()
    try:
        with Launch("observer.launch.py") as graph, Launch(
                "external_torque_observer_node", "--ros-args", "-r",
                "__node:=observer_command", "-p", "urdf_path:=arm7.urdf", "-p",
                "torque_source:=command", "-r", "external_torque_estimate:=/estimate_command",
                "-r", "contact:=/contact_command", verb="run") as second:
            assert graph.wait_for_log("first command received", 90), graph.output()
            assert second.wait_for_log("robot model loaded", 90), second.output()
            streams = {"joint_states": Stream(ros.node, "/external_torque_estimate", JointState),
                       "command": Stream(ros.node, "/estimate_command", JointState)}
            pub = ros.node.create_publisher(WrenchStamped, "/external_wrench", 10)
            exact = streams["joint_states"]
            record(ros, streams.values(), 3.0)
            pub.publish(wrench_msg([0.0, 15.0, 0.0, 0.0, 0.0, 0.0]))
            wait(streams.values(), lambda: np.abs(exact.box[-1].effort).max() > 1.0)
            t_felt = stamp_s(exact.box[-1])
            wait(streams.values(), lambda: stamp_s(exact.box[-1]) > t_felt + PUSH_S)
            pub.publish(wrench_msg(np.zeros(6)))
            t_free = stamp_s(exact.box[-1])
            wait(streams.values(), lambda: stamp_s(exact.box[-1]) > t_free + FREE_S)
            second.stop()
            graph.stop()
    finally:
        ros.close()
    data = {k: (np.array([stamp_s(m) for m in s.box]), np.array([m.effort for m in s.box]))
            for k, s in streams.items()}
    # the push ends where the applied-torque estimate (exact up to the discretization) last
    # exceeds 1 N m; from 0.2 s (10 time constants) later the arm swings free
    t, r = data["joint_states"]
    free_from = t[(np.abs(r) > 1.0).any(axis=1)].max() + 0.2
    for name, (t, r) in data.items():
        w = t > free_from
        print("torque_source %-12s free swing %.2f-%.2f s: max |r| per joint %s N m; "
              "contact on %d of %d states" % (
                  name, t[w].min(), t[w].max(), np.round(np.abs(r[w]).max(axis=0), 3),
                  int((np.abs(r[w]) > THRESHOLD).any(axis=1).sum()), int(w.sum())))


if __name__ == "__main__":
    main()
