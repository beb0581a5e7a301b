"""inverse_dynamics_node: joint_states -> joint_torques (RNEA), for ros2_control arms.

Subscribes ``joint_states`` (sensor-data QoS, overridable with ``qos_overrides``) and the
optional ``reference`` (trajectory_msgs/JointTrajectory, desired accelerations). For every
accepted state it publishes ``joint_torques`` (sensor_msgs/JointState: the model's joint
names, ``effort`` = tau, header stamp copied) and, when ``command_topic`` is set, a
std_msgs/Float64MultiArray in ``joints`` order for forward_command_controller. Every command
passes the torque guard (timeout + fallback, slew limit, clamping; docs/safety.md), and
``/diagnostics`` reports it. Parameters and topics: docs/ros.md, docs/safety.md.
"""
import sys
from types import SimpleNamespace

import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

import lie_dynamics_ros as ldr
from lie_dynamics_ros.ros import conversions as cv
from lie_dynamics_ros.ros.command_guard import (COMMAND_QOS, GUARD_PARAMS, INPUT_PARAMS,
                                                GuardedCommands, StatePipeline, carry_over,
                                                guard_config, make_guard)
from lie_dynamics_ros.ros.model_source import Param, Parameters
from lie_dynamics_ros.ros.node_common import ThrottledWarnings, run_node, three_values, warm_up

PARAMS = [
    Param("compensate_gravity", True, "bool",
          "Include gravity in the torques. Set false for arms whose firmware already "
          "compensates gravity (Franka FCI, KUKA FRI)."),
    Param("gravity", [0.0, 0.0, -9.81], "double_array",
          "Gravity in the world frame, m/s^2.", check=three_values),
    Param("command_topic", "", "string",
          "If set, also publish the torques as std_msgs/Float64MultiArray in `joints` order "
          "(forward_command_controller with interface_name: effort), e.g. "
          "/effort_controller/commands. Reliable QoS.", read_only=True),
    Param("joints", [], "string_array",
          "Joint order of command_topic; default: the model's joint order.", read_only=True),
    Param("log_throttle_sec", 2.0, "double",
          "Minimum period of repeated warnings about dropped or clamped messages."),
    Param("loops_file", "", "string",
          "YAML file of loop closures added to the URDF's own <loop_joint> elements "
          "(docs/loops.md)."),
    Param("actuated_joints", [], "string_array",
          "Closed-loop mechanisms: the actuated joints. The node then publishes the torques of "
          "Kim's constrained inverse dynamics (zero on passive joints); the passive joints' "
          "velocities and accelerations follow from the closures."),
] + GUARD_PARAMS + INPUT_PARAMS

#: parameters whose change rebuilds the per-model state (checked before it is applied)
REBUILD = {"compensate_gravity", "gravity", "robot_description", "urdf_path", "source_list",
           "loops_file", "actuated_joints",
           "missing_joints", "hold_positions", "unmeasured_velocity", "velocity_cutoff_hz",
           "position_limit_margin"}


class InverseDynamicsNode(GuardedCommands, ThrottledWarnings, Node):
    """Thin node: validate -> ldr.inverse_dynamics -> torque guard -> publish.

    Everything that depends on the model lives in ``self.rt`` (model, inputs, guard,
    command columns), replaced as a whole: a message is served by one model only.
    """

    def __init__(self, node_name="inverse_dynamics", **kwargs):
        super().__init__(node_name, **kwargs)
        self.params = Parameters(self)
        self.p = self.params.declare(PARAMS)
        self.throttle = cv.Throttle(self.p.log_throttle_sec)
        self.rt = None
        self.reference = None
        self.dropped = 0       # rejected messages, for tests and diagnostics
        self.clamped = 0       # published messages in which clamping acted
        self._subscribed = False
        self.pub = self.create_publisher(JointState, "joint_torques", COMMAND_QOS)
        self.cmd_pub = None
        if self.p.command_topic:
            self.cmd_pub = self.create_publisher(Float64MultiArray, self.p.command_topic,
                                                 COMMAND_QOS)
        self._start_model_source()

    # -- model and parameters ---------------------------------------------------------------
    def _prepare(self, base, p):
        """(reason, runtime) for model ``base`` and parameters ``p``; nothing is installed."""
        if base.nq != base.nv or any(n != 1 for n in base.joint_nq):
            return "JointState needs 1-DOF joints; the model has multi-DOF joints", None
        joints = p.joints or list(base.joint_names)
        unknown = [j for j in joints if j not in base.joint_names]
        if unknown:
            return "parameter joints names %s, not in the model" % unknown, None
        model = base.with_gravity(np.array(p.gravity if p.compensate_gravity else [0.0] * 3))
        try:
            model, actuated = _closed_loops(model, p)
        except ValueError as e:
            return str(e), None
        try:
            inputs = StatePipeline(model, p)
            guard = make_guard(model, p, lambda q: ldr.gravity_torques(model, q))
        except ValueError as e:
            return str(e), None
        cols = np.array([model.joint_names.index(j) for j in joints], dtype=np.intp)
        return None, SimpleNamespace(base=base, model=model, inputs=inputs, guard=guard,
                                     cmd_cols=cols, actuated=actuated)

    def _adopt(self, base, origin):
        """A model from the start-up parameters or the topic: prepare, warm up, install."""
        reason, rt = self._prepare(base, self.p)
        if reason:
            return reason
        self._install(rt, new_model=True)
        return None

    def _install(self, rt, new_model):
        if new_model:
            q0 = np.clip(np.zeros(rt.model.nq), rt.model.lower_limits, rt.model.upper_limits)
            # the gravity fallback's kernel too: it must not compile when states are lost
            warm_up(self, lambda: (ldr.inverse_dynamics(rt.model, q0, q0 * 0, q0 * 0),
                                   ldr.gravity_torques(rt.model, q0)))
            self.reference = None
        elif self.rt is not None:          # same robot: its state carries over
            carry_over(rt, self.rt)
        self.rt = rt
        self._subscribe_inputs()          # once the kernels are compiled

    def _check(self, trial, names):
        reason, base, origin = self._staged_model(trial, names, REBUILD)
        if base is None:
            return reason, None
        reason, rt = self._prepare(base, trial)
        return reason, (rt, origin)

    def _apply(self, names, prepared):
        self.throttle.period_s = self.p.log_throttle_sec
        if prepared is not None and prepared[0] is not None:
            rt, origin = prepared
            self._install(rt, new_model=origin is not None)
            if origin is not None:
                self.source.adopted(origin)
        if self.rt is not None:
            self.rt.guard.configure(guard_config(self.p))
        if {"state_timeout", "diagnostics_period"} & set(names):
            self._restart_guard_timers()

    # -- callbacks ----------------------------------------------------------------------------
    def _on_reference(self, msg):
        rt = self.rt
        if rt is None:
            return self._drop("reference", "no robot model yet")
        ref, reason = cv.TrajectoryReference.from_msg(
            msg, rt.inputs.index, self.get_clock().now().nanoseconds)
        if reason:
            return self._drop("reference", reason)
        self.reference = ref

    def _on_source(self, msg):
        rt = self.rt
        reason = rt.inputs.secondary(msg, self.get_clock().now().nanoseconds)
        if reason:
            self._drop("source_list", reason)

    def _on_state(self, msg):
        rt = self.rt
        now = self.get_clock().now().nanoseconds
        st, notes, reason = rt.inputs.state(msg, now)
        if reason:
            return self._drop("joint_states", reason)
        for note in notes:
            self.get_logger().warning(note)
        stamp, q, v = st
        a = np.zeros(rt.model.nv)
        if self.reference is not None:
            _, _, a_ref = self.reference.sample(stamp or now)
            if a_ref is not None:
                a = a_ref
        try:
            if rt.actuated:     # a closed-loop mechanism: Kim (2012) eqs. (56)-(66)
                q, v, a = ldr.complete_motion(rt.model, q, v, a, rt.actuated)
                tau, _ = ldr.constrained_inverse_dynamics(rt.model, q, v, a, rt.actuated)
            else:
                tau = ldr.inverse_dynamics(rt.model, q, v, a)
        except ValueError as e:
            return self._drop("joint_states", "inverse dynamics refused the state: %s" % e)
        if self._guard_command(rt, tau, stamp, q, now) is not None:
            rt.inputs.accept(stamp)

    def _send(self, tau, stamp_ns):
        rt = self.rt
        if stamp_ns is None:
            stamp_ns = max(0, self.get_clock().now().nanoseconds)
        self.pub.publish(cv.make_joint_state(rt.model.joint_names, stamp_ns, effort=tau))
        if self.cmd_pub is not None:
            self.cmd_pub.publish(cv.make_command_array(tau[rt.cmd_cols]))

    def _guard_enabled(self):
        """Timeout, fallback and final zero act only when the node commands a controller
        (``command_topic``); otherwise joint_torques answers the states one for one."""
        return self.cmd_pub is not None

    def on_shutdown(self):
        if self._guard_enabled():
            super().on_shutdown()

    def _command_publishers(self):
        return [p for p in (self.pub, self.cmd_pub) if p is not None]


def _closed_loops(model, p):
    """(model with the closures of ``loops_file``, actuated joints) or ValueError with a reason.
    A model with closures needs ``actuated_joints``; a tree ignores them."""
    if p.loops_file:
        try:
            model = model.with_loops(tuple(model.loops) + tuple(ldr.load_loops_yaml(p.loops_file)))
        except ValueError as e:
            raise ValueError("loops_file %r: %s" % (p.loops_file, e)) from None
    if not model.nc:
        if p.actuated_joints:
            raise ValueError("actuated_joints is for closed-loop models; this one has no "
                             "loop closures (give loops_file or <loop_joint> elements)")
        return model, None
    if not p.actuated_joints:
        raise ValueError("the model has %d loop closure(s) (%s): set actuated_joints"
                         % (len(model.loops), ", ".join(lp.name for lp in model.loops)))
    unknown = [j for j in p.actuated_joints if j not in model.joint_names]
    if unknown:
        raise ValueError("actuated_joints names %s, not in the model" % unknown)
    return model, list(p.actuated_joints)


def main(args=None):
    """Console script ``inverse_dynamics_node``; accepts standard ``--ros-args``."""
    return run_node(InverseDynamicsNode, "inverse_dynamics_node", args)


if __name__ == "__main__":
    sys.exit(main())
