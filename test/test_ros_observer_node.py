"""external_torque_observer_node in the loop with forward_dynamics_node over real DDS.

The simulator (stepped in lockstep by the test) holds arm7 with gravity torques; a
geometry_msgs/WrenchStamped on its ``external_wrench`` topic pushes the flange. The observer
reads joint_states (with the applied torques in the effort field) and must report J^T f
within its time constant, flag the contact within 20 ms, and flag nothing before. A damped
pendulum's free fall, fed as joint states, is no contact with compensate_friction and is one
without. A burst of states far faster than the node serves them is taken whole (the deep
reliable queue), and states missing from the stream are counted in the diagnostics.
"""
import numpy as np

from ros_fixtures import ARM7, ros  # noqa: F401

from geometry_msgs.msg import WrenchStamped  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Bool  # noqa: E402

import lie_dynamics_ros as ldr  # noqa: E402
from models import bundled, damped_pendulum_xml  # noqa: E402
from lie_dynamics_ros.ros import conversions as cv  # noqa: E402
from lie_dynamics_ros.ros.external_torque_observer_node import \
    ExternalTorqueObserverNode  # noqa: E402
from lie_dynamics_ros.ros.forward_dynamics_node import ForwardDynamicsNode  # noqa: E402

READY = [0.0, -0.785398163, 0.0, -2.356194490, 0.0, 1.570796327, 0.785398163]
GAIN = 100.0
THRESHOLD = 2.0


def _params(**kw):
    return [Parameter(k, value=v) for k, v in kw.items()]


def test_observer_estimates_an_external_wrench_and_detects_contact_within_20_ms(ros):
    model = ldr.load_urdf(ARM7)
    sim = ros.add(ForwardDynamicsNode(context=ros.context, drive="external",
                                      parameter_overrides=_params(
                                          urdf_path=ARM7, initial_positions=READY,
                                          start_mode="immediate", command_timeout=0.0)))
    obs = ros.add(ExternalTorqueObserverNode(context=ros.context, parameter_overrides=_params(
        urdf_path=ARM7, observer_gain=[GAIN], contact_threshold=[THRESHOLD])))
    assert obs.p.torque_source == "joint_states"          # the default: the applied torque
    estimates, contact = [], []
    qos = QoSProfile(depth=1000)
    ros.node.create_subscription(JointState, "external_torque_estimate", estimates.append, qos)
    ros.node.create_subscription(Bool, "contact", contact.append, qos)
    wrench_pub = ros.node.create_publisher(WrenchStamped, "external_wrench", 10)
    assert ros.spin_until(lambda: wrench_pub.get_subscription_count() > 0
                          and sim.pub.get_subscription_count() > 0
                          and obs.est_pub.get_subscription_count() > 0, 20)
    wrench = np.array([0.0, 15.0, -10.0, 0.0, 0.5, 0.0])
    start, total = 100, 200
    for k in range(total):
        if k == start:
            msg = WrenchStamped()
            msg.header.frame_id = "panda_link7"
            (msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z,
             msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z) = wrench
            wrench_pub.publish(msg)
            assert ros.spin_until(lambda: sim.sim.f_ext is not None, 10)
        sim._on_array_command(cv.make_command_array(ldr.gravity_torques(model, sim.sim.q)))
        sim.tick()
        assert ros.spin_until(lambda: len(contact) == k + 1 and len(estimates) == k + 1, 10), k
    flags = np.array([c.data for c in contact])
    r = np.array([e.effort for e in estimates])
    # state 0 is the initial one; the wrench acts from the step after state `start`
    assert not flags[:start + 1].any()
    first = int(np.argmax(flags))
    delay_ms = (first - start) * sim.dt_ns * 1e-6
    assert flags[start + 1:].any() and 0 < delay_ms <= 20.0, delay_ms
    tau_ext = ldr.body_jacobian(model, sim.sim.q, "panda_link7").T @ wrench
    np.testing.assert_allclose(r[-1], tau_ext, atol=0.02 * np.abs(tau_ext).max())
    assert obs.contacts == 1 and obs.dropped == 0
    print("contact detected %.0f ms after the wrench (K_O %.0f /s, threshold %.1f N m)"
          % (delay_ms, GAIN, THRESHOLD))


def test_compensate_friction_is_declared_and_keeps_a_damped_free_fall_from_a_contact(ros):
    obs = ros.add(ExternalTorqueObserverNode(context=ros.context, parameter_overrides=_params(
        robot_description=damped_pendulum_xml(2.0, 0.3), torque_source="joint_states",
        observer_gain=[50.0], contact_threshold=[1.0])))
    assert obs.p.compensate_friction
    real = bundled("double_pendulum.urdf").with_joint_dynamics(damping=2.0, friction=0.3)
    fall = ldr.simulate(real, np.array([1.2, -0.5]), np.zeros(2), 0.3, dt=2e-3)
    contact = []
    ros.node.create_subscription(Bool, "contact", contact.append, QoSProfile(depth=1000))
    pub = ros.node.create_publisher(JointState, "joint_states", 10)
    assert ros.spin_until(lambda: pub.get_subscription_count() > 0
                          and obs.contact_pub.get_subscription_count() > 0, 20)
    stamp = 1_000_000_000

    def feed():
        nonlocal stamp
        flags = []
        for q, v in zip(fall.q, fall.v):
            stamp += 2_000_000
            n = len(contact)
            msg = cv.make_joint_state(list(real.joint_names), stamp, q, v, np.zeros(2))
            assert ros.request(lambda: pub.publish(msg), lambda: len(contact) > n, 10)
            flags.append(contact[-1].data)
        return np.array(flags)
    assert not feed().any()
    assert all(r.successful for r in obs.set_parameters(
        [Parameter("compensate_friction", value=False)]))
    assert feed().any()


def test_a_burst_of_states_is_taken_whole_and_gaps_are_counted(ros):
    """600 held-pose states published at once (far faster than the node serves them), with
    one stamp gap of 50 periods: one estimate per state, none lost, and the 49 missing
    states in the diagnostics. The held pose with zero applied torque makes the estimate
    g(q) (1 - e^{-K_O t}) on the states' stamps."""
    model = bundled("double_pendulum.urdf")
    obs = ros.add(ExternalTorqueObserverNode(context=ros.context, parameter_overrides=_params(
        urdf_path="double_pendulum.urdf",
        observer_gain=[20.0], contact_threshold=[1e3])))
    qos = obs.hot_subscription.qos_profile
    assert qos.reliability == ReliabilityPolicy.RELIABLE and qos.depth >= 600
    estimates, diags = [], []
    ros.node.create_subscription(JointState, "external_torque_estimate", estimates.append,
                                 QoSProfile(depth=1000))
    ros.node.create_subscription(DiagnosticArray, "/diagnostics", diags.append, 10)
    pub = ros.node.create_publisher(JointState, "joint_states", QoSProfile(depth=1000))
    assert ros.spin_until(lambda: pub.get_subscription_count() > 0
                          and obs.est_pub.get_subscription_count() > 0, 20)
    q, period = [0.4, -0.7], 1_000_000
    stamps = [10**9 + period * (k + (49 if k >= 300 else 0)) for k in range(600)]
    for t in stamps:
        pub.publish(cv.make_joint_state(list(model.joint_names), t, q, [0.0, 0.0], [0.0, 0.0]))
    assert ros.spin_until(lambda: len(estimates) == 600, 60), len(estimates)
    got = [e.header.stamp.sec * 10**9 + e.header.stamp.nanosec for e in estimates]
    assert got == stamps
    g = ldr.gravity_torques(model, q)
    t = (np.array(stamps) - stamps[0]) * 1e-9
    np.testing.assert_allclose([e.effort for e in estimates],
                               g * (1 - np.exp(-20.0 * t))[:, None], atol=1e-9)

    def skipped():
        vals = [{kv.key: kv.value for kv in st.values} for d in diags for st in d.status
                if st.name.endswith("external torque observer")]
        return vals and vals[-1].get("skipped states")
    assert ros.spin_until(lambda: skipped() == "49", 5), skipped()
    assert obs.runtime.largest_gap_ns == 50 * period and obs.dropped == 0
