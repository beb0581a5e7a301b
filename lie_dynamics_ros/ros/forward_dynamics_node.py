"""forward_dynamics_node: the simulator (standalone, or as a companion next to Gazebo).

Steps the robot model at ``rate`` Hz and publishes ``joint_states`` (name, position, velocity,
effort) after every step, ``/clock`` when ``publish_clock`` is true, and the description of
the model in use on ``robot_description`` (transient local, as robot_state_publisher does;
not when the model came from that topic). Torques come from ``effort_controller/commands``
(in ``joints`` order) and ``joint_torques`` (by name); ``prescribed_joints`` follow
``reference``; ``external_wrench`` pushes a link. Parameters and topics: docs/ros.md.

The node converts messages and publishes; start modes, lockstep, watchdog, clamping, reload
and divergence are ``lie_dynamics_ros.runtime.simulation.SimulationRuntime``.
"""
import sys

from geometry_msgs.msg import WrenchStamped
from rclpy.clock import Clock as RosClock, ClockType
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory

from lie_dynamics_ros.ros import conversions as cv
from lie_dynamics_ros.ros.model_source import (ModelSource, resolve_urdf_path,
                                               transient_local_qos)
from lie_dynamics_ros.ros.node_common import ThrottledWarnings, run_node, warm_up
from lie_dynamics_ros.ros.parameters import Parameters
from lie_dynamics_ros.ros.schemas.simulator import SCHEMA
from lie_dynamics_ros.runtime.simulation import NO_MODEL, SimulationRuntime


class ForwardDynamicsNode(ThrottledWarnings, Node):
    """Simulator node. ``drive="external"`` leaves the stepping to the caller (bringup's
    offline mode calls ``tick()``); the default ``"timer"`` steps on a wall timer."""

    def __init__(self, node_name="forward_dynamics", drive="timer", **kwargs):
        super().__init__(node_name, **kwargs)
        self.params = Parameters(self)
        self.p = self.params.declare(SCHEMA)
        self.throttle = cv.Throttle(self.p.log_throttle_sec)
        self.runtime = SimulationRuntime(
            self.p, log=self._log, clock_ns=lambda: self.get_clock().now().nanoseconds,
            warm_up=lambda fn: warm_up(self, fn), timed=drive == "timer")
        self.dt_ns = self.runtime.dt_ns
        self.index = None                # cv.JointIndex of the model in use
        self.pub = self.create_publisher(JointState, "joint_states", 10)
        self.clock_pub = (self.create_publisher(Clock, "/clock", QoSProfile(depth=10))
                          if self.p.publish_clock else None)
        self.description_pub = self.create_publisher(String, "robot_description",
                                                     transient_local_qos())
        self._origin = self._description = None     # of the model in use
        # the model (and the kernels' compilation) before any subscription
        self.source = ModelSource(self, self._set_model, parameters=self.params, listen=True)
        self._describe()
        self.params.listen(apply=self._on_params)     # after the source's: the model is in
        self.create_subscription(Float64MultiArray, "effort_controller/commands",
                                 self._on_array_command, 10)
        # the answer a lockstep simulation waits for: served straight from a wait set
        self.hot_subscription = self.create_subscription(JointState, "joint_torques",
                                                         self._on_state_command, 10)
        self.create_subscription(JointTrajectory, "reference", self._on_reference, 10)
        self.create_subscription(WrenchStamped, "external_wrench", self._on_wrench, 10)
        if drive == "timer":
            # steady clock: with use_sim_time the node clock would wait for our own /clock
            self.timer = self.create_timer(self.dt_ns * 1e-9 / self.p.real_time_factor, self.tick,
                                           clock=RosClock(clock_type=ClockType.STEADY_TIME))

    # read by ldr_bringup, the demo and the soak test
    sim = property(lambda self: self.runtime.sim, doc="integrators.simulator.Simulator")
    last_cmd_stamp_ns = property(lambda self: self.runtime.last_cmd_stamp_ns)
    watchdog_trips = property(lambda self: self.runtime.watchdog_trips)
    dropped = property(lambda self: self.runtime.dropped)

    def _log(self, level, text, key=None):
        # one call site per severity: rclpy refuses a severity change at a call site
        if key is not None:
            self._warn(key, text)
        elif level == "info":
            self.get_logger().info(text)
        elif level == "warning":
            self.get_logger().warning(text)
        else:
            self.get_logger().error(text)

    def _set_model(self, model, origin):
        reason = self.runtime.set_model(model, origin)
        if reason is None:
            self.index, self._origin = cv.JointIndex(model.joint_names), origin
        return reason

    def _on_params(self, names, _prepared):
        self.throttle.period_s = self.p.log_throttle_sec
        self.runtime.reconfigure(names)
        self._describe()

    def _describe(self):
        """robot_description: the XML or urdf_path file of the model in use; a model from
        the topic is not echoed back to it. ``origin`` is the one handed to ``_set_model``."""
        origin = self._origin or ""
        if origin == "parameter robot_description":
            text = self.get_parameter("robot_description").value
        elif origin.startswith("urdf_path "):
            try:
                with open(resolve_urdf_path(origin[len("urdf_path "):])) as f:
                    text = f.read()
            except OSError as e:    # moved since it was loaded: the model stays in use
                return self._log("warning", "robot_description not published: %s" % e)
        else:
            return
        if text != self._description:
            self._description = text
            self.description_pub.publish(String(data=text))

    # -- messages in ----------------------------------------------------------------------
    def _on_array_command(self, msg):
        vals, why = cv.parse_command_array(msg, self.runtime.n_commands)
        self._publish(self.runtime.command_array(vals, why))

    def _on_state_command(self, msg):
        js, why = (cv.parse_joint_state(msg, self.index, need=("effort",), optional=(),
                                        required_joints=self.runtime.sim.free)
                   if self.index else (None, NO_MODEL))
        self._publish(self.runtime.joint_torques(getattr(js, "effort", None),
                                                 getattr(js, "stamp_ns", 0), why))

    def _on_reference(self, msg):
        ref, why = (cv.TrajectoryReference.from_msg(msg, self.index, self.runtime.sim.t_ns)
                    if self.index else (None, NO_MODEL))
        self.runtime.reference(ref, why)

    def _on_wrench(self, msg):
        """A wrench on the link named by header.frame_id, (force, torque) in its frame."""
        f, t = msg.wrench.force, msg.wrench.torque
        self.runtime.wrench(msg.header.frame_id, [f.x, f.y, f.z, t.x, t.y, t.z])

    # -- messages out ---------------------------------------------------------------------
    def tick(self):
        """One runtime tick (the initial state first, then a step) and its publication."""
        self._publish(self.runtime.tick())

    def _publish(self, state):
        if state is None:
            return
        self.pub.publish(cv.make_joint_state(state.names, state.t_ns, state.q, state.v,
                                             state.tau))
        if self.clock_pub is not None:
            clock = Clock()
            cv.set_stamp(clock.clock, state.t_ns)
            self.clock_pub.publish(clock)


def main(args=None):
    """Console script ``forward_dynamics_node``; accepts standard ``--ros-args``."""
    return run_node(ForwardDynamicsNode, "forward_dynamics_node", args)


if __name__ == "__main__":
    sys.exit(main())
