"""The torque guard in the commanding nodes over real DDS (in-process nodes, the test's
executor): parameters (validated before applied, atomically), reliable commands, one command
per valid state, the fallback, /diagnostics, NaN velocities, merged sources, limit warnings.
"""
import numpy as np

from ros_fixtures import ARM7, DOUBLE_PENDULUM, ros, wait_matched  # noqa: F401

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

import lie_dynamics_ros as ldr  # noqa: E402
from lie_dynamics_ros.ros import conversions as cv  # noqa: E402
from lie_dynamics_ros.ros.adaptive_controller_node import AdaptiveControllerNode  # noqa: E402
from lie_dynamics_ros.ros.inverse_dynamics_node import InverseDynamicsNode  # noqa: E402
from lie_dynamics_ros.safety import VelocityEstimator  # noqa: E402

MODEL = ldr.load_urdf(ARM7)
NAMES = list(MODEL.joint_names)
Q0 = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8])
CMD = "/effort_controller/commands"


def id_node(ros, **params):
    params.setdefault("urdf_path", ARM7)
    params.setdefault("command_topic", CMD)
    return ros.add(InverseDynamicsNode(context=ros.context, parameter_overrides=[
        Parameter(k, value=v) for k, v in params.items()]))


def adaptive_node(ros, **params):
    params.setdefault("urdf_path", ARM7)
    return ros.add(AdaptiveControllerNode(context=ros.context, parameter_overrides=[
        Parameter(k, value=v) for k, v in params.items()]))


class Rig:
    """Reliable joint_states publisher, recorders of joint_torques, commands, diagnostics."""

    def __init__(self, ros, cmd_topic=CMD):
        self.ros = ros
        n = ros.node
        self.pub = n.create_publisher(JointState, "joint_states", 100)
        self.torques, self.cmds, self.diag = [], [], []
        self.sub = n.create_subscription(JointState, "joint_torques", self.torques.append, 1000)
        self.cmd_sub = n.create_subscription(Float64MultiArray, cmd_topic, self.cmds.append,
                                             1000)
        n.create_subscription(DiagnosticArray, "/diagnostics", self.diag.append, 100)
        self.stamp = 5_000_000_000

    def ready(self):
        return wait_matched(self.ros, pub=self.pub, sub=self.sub) and wait_matched(
            self.ros, sub=self.cmd_sub)

    def send(self, q, v, names=NAMES, step_ns=1_000_000, pub=None):
        self.stamp += step_ns
        (pub or self.pub).publish(cv.make_joint_state(names, self.stamp, q, v))
        return self.stamp

    def answer(self, stamp, timeout_s=10.0):
        def find():
            return next((m for m in self.torques if cv.stamp_to_ns(m.header.stamp) == stamp),
                        None)
        self.ros.spin_until(find, timeout_s)
        return find()


def test_commands_are_reliable_and_one_per_valid_state_none_for_malformed(ros):
    node = id_node(ros, state_timeout=0.0)
    rig = Rig(ros)
    assert rig.ready()
    infos = ros.node.get_publishers_info_by_topic(CMD)
    assert infos and all(i.qos_profile.reliability == ReliabilityPolicy.RELIABLE for i in infos)
    good = bad = 0
    rng = np.random.default_rng(1)
    for k in range(60):     # one at a time: the sensor-data subscription keeps only 5
        if k % 3 == 2:       # NaN position, missing joint, backwards stamp
            kind = (k // 3) % 3
            if kind == 0:
                rig.send(np.r_[Q0[:6], np.nan], np.zeros(7))
            elif kind == 1:
                rig.send(Q0[:6], np.zeros(6), names=NAMES[:6])
            else:
                rig.stamp -= 3_000_000
                rig.send(Q0, np.zeros(7))
                rig.stamp += 3_000_000
            bad += 1
            assert ros.spin_until(lambda: node.dropped == bad, 10)
        else:
            assert rig.answer(rig.send(Q0 + 0.01 * rng.normal(size=7), rng.normal(size=7)))
            good += 1
    assert ros.spin_until(lambda: len(rig.cmds) >= good, 10)
    ros.spin_for(0.3)
    assert len(rig.cmds) == good and len(rig.torques) == good, (len(rig.cmds), good)
    assert all(np.isfinite(m.data).all() for m in rig.cmds)


def test_invalid_parameters_are_refused_with_a_reason_and_the_old_values_stay(ros):
    node = id_node(ros)
    ada = adaptive_node(ros, kd_gains=20.0)      # a scalar gain applies to every joint
    np.testing.assert_array_equal(ada.controller.gains.K_D, 20.0)
    # a scalar out of its range is refused by rclpy (descriptor), the rest by Parameters
    cases = [("state_timeout", -0.1, "state_timeout"),
             ("state_timeout", float("nan"), "state_timeout"),
             ("hold_positions", [float("nan")], "finite"),
             ("max_torque_rate", -5.0, "max_torque_rate"), ("fallback", "brake", "fallback"),
             ("fallback_period", 0.0, "fallback_period"),
             ("missing_joints", "ignore", "missing_joints"),
             ("hold_positions", [1.0, 2.0], "hold_positions")]
    for n in (node, ada):
        for name, value, word in cases:
            before = getattr(n.p, name)
            res = n.set_parameters([Parameter(name, value=value)])[0]
            assert not res.successful and word in res.reason, (name, value, res.reason)
            assert getattr(n.p, name) == before
    res = ada.set_parameters([Parameter("kd_gains", value=[1.0, 2.0])])[0]
    assert not res.successful and "kd_gains has 2 values" in res.reason
    # valid changes reach the guard
    assert node.set_parameters([Parameter("max_torque_rate", value=50.0),
                                Parameter("fallback", value="gravity")])[1].successful
    assert node.rt.guard.config.max_torque_rate == 50.0
    assert node.rt.guard.config.fallback == "gravity"


def test_rejected_atomic_update_of_urdf_path_and_gains_changes_nothing(ros):
    node = adaptive_node(ros)
    controller = node.controller
    res = node.set_parameters_atomically([Parameter("urdf_path", value=DOUBLE_PENDULUM),
                                          Parameter("kd_gains", value=[-1.0])])
    assert not res.successful and "kd_gains" in res.reason
    assert node.controller is controller and node.model.nv == 7
    assert node.p.urdf_path == ARM7 and node.get_parameter("urdf_path").value == ARM7
    # gains that fit the NEW model only: checked against it, accepted with it
    res = node.set_parameters_atomically([Parameter("urdf_path", value=DOUBLE_PENDULUM),
                                          Parameter("kd_gains", value=[3.0, 4.0])])
    assert res.successful, res.reason
    assert node.model.nv == 2 and node.source.origin.startswith("urdf_path")
    np.testing.assert_array_equal(node.controller.gains.K_D, [3.0, 4.0])
    # and gains that fit only the old model are refused with the new one
    res = node.set_parameters_atomically([Parameter("urdf_path", value=ARM7),
                                          Parameter("kd_gains", value=[1.0, 1.0])])
    assert not res.successful and node.model.nv == 2


def test_gravity_fallback_and_diagnostics_levels(ros):
    node = id_node(ros, fallback="gravity", state_timeout=0.2, diagnostics_period=0.1,
                   max_torque_rate=100.0)
    rig = Rig(ros)
    assert rig.ready()
    s1 = rig.send(Q0, np.zeros(7))
    assert rig.answer(s1) is not None
    # a big jump of torque is slew-limited: 100 N m/s over 1 ms -> 0.1 N m per joint
    s2 = rig.send(Q0 + 1.0, np.full(7, 3.0))
    out = rig.answer(s2)
    tau1 = ldr.gravity_torques(MODEL, Q0)
    raw = ldr.inverse_dynamics(MODEL, Q0 + 1.0, np.full(7, 3.0), np.zeros(7))
    np.testing.assert_allclose(out.effort, np.clip(raw, tau1 - 0.1, tau1 + 0.1), atol=1e-9)
    assert ros.spin_until(lambda: any(
        s.level == DiagnosticStatus.WARN and "rate_limited_commands" in s.message
        for a in rig.diag for s in a.status), 5)
    # states stop: g(q) of the last valid state (Q0 + 1), exactly, repeated, ERROR
    n = len(rig.torques)
    assert ros.spin_until(lambda: len(rig.torques) >= n + 2, 5)
    g_last = np.clip(ldr.gravity_torques(MODEL, Q0 + 1.0), -MODEL.effort_limits,
                     MODEL.effort_limits)
    for m in rig.torques[n:n + 2]:
        np.testing.assert_allclose(m.effort, g_last, rtol=0, atol=1e-12)
    assert ros.spin_until(lambda: len(rig.cmds) >= 4, 5)
    np.testing.assert_array_equal(rig.cmds[2].data, rig.cmds[3].data)
    np.testing.assert_allclose(rig.cmds[2].data, g_last, rtol=0, atol=1e-12)
    def error_report():
        for a in reversed(rig.diag):
            st = a.status[0]
            vals = {kv.key: kv.value for kv in st.values}
            if st.level == DiagnosticStatus.ERROR and int(vals["fallbacks"]) >= 2:
                return st, vals
    assert ros.spin_until(error_report, 5)
    st, values = error_report()
    assert st.name.endswith("inverse_dynamics: torque guard") and st.hardware_id == "panda"
    assert "gravity fallback" in st.message
    assert int(values["timeouts"]) == 1 and int(values["rate_limited_commands"]) == 1
    assert "dropped" in values and "clamped_elements" in values


def test_nan_velocities_are_estimated_from_positions(ros):
    node = id_node(ros, velocity_cutoff_hz=30.0)
    rig = Rig(ros)
    assert rig.ready()
    est = VelocityEstimator(7, cutoff_hz=30.0, max_gap=0.1)
    nan = np.full(7, np.nan)
    for k in range(5):
        q = Q0 + 0.002 * k
        stamp = rig.send(q, nan if k % 2 else None, step_ns=2_000_000)   # NaN, then absent
        out = rig.answer(stamp)
        assert out is not None, k
        v = est.update(q, stamp)
        np.testing.assert_allclose(out.effort, ldr.inverse_dynamics(MODEL, q, v, np.zeros(7)),
                                   rtol=0, atol=1e-9)
    assert np.abs(v).max() > 0.5                       # 1 rad/s, filtered
    assert "velocity" in node.rt.inputs._told          # said once in the log
    # a mixed message: measured velocities are used as they are
    q, v_meas = Q0 + 0.01, np.r_[0.3, np.full(6, np.nan)]
    out = rig.answer(rig.send(q, v_meas, step_ns=2_000_000))
    v = est.update(q, rig.stamp)
    v[0] = 0.3
    np.testing.assert_allclose(out.effort, ldr.inverse_dynamics(MODEL, q, v, np.zeros(7)),
                               atol=1e-9)


def test_joints_from_another_source_are_merged_or_held(ros):
    node = id_node(ros, source_list=["/gripper/joint_states"], state_timeout=0.5)
    rig = Rig(ros)
    grip = ros.node.create_publisher(JointState, "/gripper/joint_states", 100)
    assert rig.ready() and wait_matched(ros, pub=grip)
    arm, last = NAMES[:6], NAMES[6:]
    s = rig.send(Q0[:6], np.zeros(6), names=arm)          # joint 7 unknown yet: dropped
    assert ros.spin_until(lambda: node.dropped == 1, 5) and rig.answer(s, 0.3) is None
    grip.publish(cv.make_joint_state(last, 0, [0.4], [0.0]))
    ros.spin_for(0.2)
    s = rig.send(Q0[:6], np.zeros(6), names=arm)
    out = rig.answer(s)
    q = np.r_[Q0[:6], 0.4]
    np.testing.assert_allclose(out.effort, ldr.gravity_torques(MODEL, q), atol=1e-9)
    # hold: a joint nobody measures is held at hold_positions
    node2 = InverseDynamicsNode("id_hold", context=ros.context, parameter_overrides=[
        Parameter("urdf_path", value=ARM7), Parameter("missing_joints", value="hold"),
        Parameter("hold_positions", value=[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0.3])])
    ros.add(node2)
    assert wait_matched(ros, pub=rig.pub, count=2)
    n = len(rig.torques)
    s = rig.send(Q0[:6], np.zeros(6), names=arm)
    assert ros.spin_until(lambda: len(rig.torques) >= n + 2, 10)
    efforts = [np.array(m.effort) for m in rig.torques[n:] if cv.stamp_to_ns(m.header.stamp) == s]
    expect = ldr.gravity_torques(MODEL, np.r_[Q0[:6], -0.3])
    assert any(np.allclose(e, expect, atol=1e-9) for e in efforts)


def test_positions_outside_the_limits_warn_once_naming_the_joint(ros):
    node = id_node(ros)
    rig = Rig(ros)
    assert rig.ready()
    q = Q0.copy()
    q[3] = -115.0                            # degrees sent as radians
    assert rig.answer(rig.send(q, np.zeros(7))) is not None
    assert node.rt.inputs.limits.warned.tolist() == [False, False, False, True, False, False,
                                                     False]
    assert node.rt.inputs.limits.check(q) == []         # once
