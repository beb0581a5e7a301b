"""The inverse-dynamics runtime: the model a state is answered with (gravity, the closures of
``loops_file``, the actuated joints of a closed loop) and the torques of each state, with the
accelerations of the reference and, with ``compensate_friction``, the joints' damping and
friction. inverse_dynamics_node converts messages around it.

The friction feedforward is evaluated at the reference's velocity on the joints it gives one
for, at the measured velocity elsewhere. The reference's sign leads the motion: at a reversal
it turns before the joint moves and breaks the stick, where a measured velocity stays zero
and its feedforward with it while the joint sticks (test_inverse_dynamics_runtime's closed
loop: arm7's light wrist joints stick with the measured velocity, not with the reference's).

``p`` is a namespace of the node's parameter values (ros/schemas/inverse_dynamics.py).
"""
import numpy as np

import lie_dynamics_ros as ldr
from ..control import friction_feedforward, has_joint_friction
from .commanding import command_columns, rest_pose, torque_guard
from .robot import joint_state_reason, unknown_joints_reason, with_loops_file

#: parameters whose change rebuilds the per-model state (checked before it is applied)
REBUILD = {"compensate_gravity", "gravity", "robot_description", "urdf_path", "source_list",
           "loops_file", "actuated_joints",
           "missing_joints", "hold_positions", "unmeasured_velocity", "velocity_cutoff_hz",
           "position_limit_margin", "compensate_friction", "friction_velocity_epsilon"}


def closed_loops(model, loops_file, actuated_joints):
    """(model with the closures of ``loops_file``, actuated joints or None for a tree), or
    ValueError with a reason. A model with closures needs ``actuated_joints``; a tree
    refuses them."""
    model = with_loops_file(model, loops_file)
    if not model.nc:
        if actuated_joints:
            raise ValueError("actuated_joints is for closed-loop models; this one has no "
                             "loop closures (give loops_file or <loop_joint> elements)")
        return model, None
    if not actuated_joints:
        raise ValueError("the model has %d loop closure(s) (%s): set actuated_joints"
                         % (len(model.loops), ", ".join(lp.name for lp in model.loops)))
    reason = unknown_joints_reason(model, "actuated_joints", actuated_joints)
    if reason:
        raise ValueError(reason)
    return model, list(actuated_joints)


def friction_compensation(model, p, actuated):
    """The Coulomb smoothing of the friction feedforward, or None when there is none to add.
    On a closed loop a passive joint's friction would have to be carried through the closures;
    the feedforward covers the actuated joints only, so a passive joint with friction is
    refused (ValueError naming it)."""
    if not (p.compensate_friction and has_joint_friction(model)):
        return None
    for name, i, n in zip(model.joint_names, model.joint_v_index, model.joint_nv):
        if actuated and name not in actuated and (
                model.joint_damping[i:i + n].any() or model.joint_friction[i:i + n].any()):
            raise ValueError("compensate_friction: the passive joint %r has damping or friction, "
                             "which the feedforward of the actuated joints does not cover; "
                             "set compensate_friction false" % name)
    return p.friction_velocity_epsilon


class InverseDynamicsSetup:
    """Everything that depends on the model, replaced as a whole: ``base`` (as loaded),
    ``model`` (gravity, closures), ``actuated`` (None for a tree), ``guard``, ``inputs`` (the
    node's state pipeline), ``cmd_cols`` (command array order) and ``friction_epsilon`` (None:
    no friction feedforward)."""

    def __init__(self, base, p, config, make_inputs):
        reason = joint_state_reason(base)
        if reason:
            raise ValueError(reason)
        self.cmd_cols = command_columns(base, p.joints)
        self.base = base
        model = base.with_gravity(np.array(p.gravity if p.compensate_gravity else [0.0] * 3))
        self.model, self.actuated = closed_loops(model, p.loops_file, p.actuated_joints)
        self.friction_epsilon = friction_compensation(self.model, p, self.actuated)
        self.inputs = make_inputs(self.model, p)
        self.guard = torque_guard(self.model, self.model.effort_limits, config)

    def warm_up(self):
        """First calls of the kernels, the gravity fallback's too: it must not compile when
        states are lost."""
        q0 = rest_pose(self.model)
        ldr.inverse_dynamics(self.model, q0, q0 * 0, q0 * 0)
        ldr.gravity_torques(self.model, q0)

    def torques(self, q, v, a, v_friction=None):
        """tau for the motion (q, v, a), plus the friction feedforward at ``v_friction``
        (default v); on a closed loop,
        Kim (2012) eqs. (56)-(66) from the actuated joints' values, zero on the passive
        joints. ValueError for a state the dynamics refuse."""
        if self.actuated:
            q, v, a = ldr.complete_motion(self.model, q, v, a, self.actuated)
            tau = ldr.constrained_inverse_dynamics(self.model, q, v, a, self.actuated)[0]
        else:
            tau = ldr.inverse_dynamics(self.model, q, v, a)
        if self.friction_epsilon is None:
            return tau
        # passive joints carry none (friction_compensation): their entries stay zero
        v_f = v if v_friction is None else v_friction
        return tau + friction_feedforward(self.model, v_f, self.friction_epsilon)


class InverseDynamicsRuntime:
    """The current setup and the reference whose accelerations the torques include."""

    def __init__(self):
        self.setup = None
        self.reference = None

    @staticmethod
    def prepare(base, p, config, make_inputs):
        """(reason, setup) for model ``base`` and parameter values ``p``; nothing is
        installed."""
        try:
            return None, InverseDynamicsSetup(base, p, config, make_inputs)
        except ValueError as e:
            return str(e), None

    def install(self, setup, new_model):
        """Make ``setup`` current; a new robot forgets the reference."""
        if new_model:
            self.reference = None
        self.setup = setup

    def set_reference(self, ref):
        """The reference (``sample(t_ns) -> (q, v, a)``) whose accelerations the next states
        use."""
        self.reference = ref

    def torques(self, stamp_ns, q, v, now_ns):
        """tau answering the state (q, v) stamped ``stamp_ns`` (0: at ``now_ns``), with the
        reference's accelerations at that time (zero without them) and the friction
        feedforward at its velocities where it has them. ValueError naming the cause when
        the dynamics refuse the state."""
        a, v_friction = np.zeros(self.setup.model.nv), v
        if self.reference is not None:
            _, v_ref, a_ref = self.reference.sample(stamp_ns or now_ns)
            if a_ref is not None:
                a = a_ref
            if v_ref is not None:
                v_friction = np.where(self.reference.mask, v_ref, v)
        try:
            return self.setup.torques(q, v, a, v_friction)
        except ValueError as e:
            raise ValueError("inverse dynamics refused the state: %s" % e) from None
