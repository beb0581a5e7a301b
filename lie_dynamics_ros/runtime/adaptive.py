"""The adaptive Slotine-Li controller's runtime (the law: ``lie_dynamics_ros.control``,
Slotine & Li 1987): where its gains come from, the controller and its effort limits,
enable/disable, the reference merged over the held position, the joint-friction feedforward,
and which parameter changes rebuild what (theta_hat carried over).
adaptive_controller_node converts messages around it.

The friction feedforward is evaluated at Slotine-Li's reference velocity v_r = v - s, not at
the measured v: the plant's damping D v then leaves D s, which adds to K_D in the closed loop
M s_dot + (C + K_D + D) s = Y theta_tilde - F_c (sign(v) - sign(v_r)), and since sign is
monotone, s^T F_c (sign(v) - sign(v_r)) >= 0: the Lyapunov function of Slotine & Li (1987)
still decreases, up to the boundary layer |v_r| < epsilon. v_r carries the position error,
not the noisy velocity.

``p`` is a namespace of the node's parameter values (ros/schemas/adaptive_controller.py).
"""
from types import SimpleNamespace

import numpy as np

import lie_dynamics_ros as ldr
from ..control import (AdaptiveGains, AdaptiveSlotineLiController, friction_feedforward,
                       has_joint_friction)
from ..safety import TorqueGuard
from ..safety.inputs import broadcast_values
from .commanding import command_columns, rest_pose, torque_guard
from .config_files import read_parameters, robot_config_file
from .robot import joint_state_reason

#: parameters whose change rebuilds the controller (checked on the model they will meet)
GAIN_PARAMS = ("lambda_gains", "kd_gains", "gamma_gains", "gains_file", "adapt_body",
               "payload_only", "projection", "initial_parameters", "effort_limits",
               "compensate_gravity", "gravity")
REBUILD = set(GAIN_PARAMS) | {"robot_description", "urdf_path", "missing_joints",
                              "hold_positions", "unmeasured_velocity", "velocity_cutoff_hz",
                              "position_limit_margin"}
#: changes after which the old theta_hat no longer estimates the adapted parameters
RESTART_ESTIMATE = {"payload_only", "adapt_body", "initial_parameters"}

#: the gains when neither the parameters nor a gains file set them
BUILT_IN_GAINS = {"lambda_gains": [10.0], "kd_gains": [20.0],
                  "gamma_gains": [1.0, 0.1, 0.1, 0.1, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01]}


def resolve_gains(p, origin):
    """(``p`` with every gain set, where the gains come from): the parameters, else
    ``gains_file``, else config/<urdf stem>_adaptive_gains.yaml for a model from ``urdf_path``
    (``origin``), else BUILT_IN_GAINS. ValueError naming an unreadable gains file."""
    unset = [k for k in BUILT_IN_GAINS if not len(getattr(p, k))]
    if not unset:
        return p, "parameters"
    path = p.gains_file or robot_config_file(origin, "_adaptive_gains.yaml")
    found = {}
    if path:
        try:
            found = read_parameters(path, unset)
        except (OSError, ValueError) as e:
            raise ValueError("gains_file %s: %s" % (path, e)) from None
    filled = SimpleNamespace(**vars(p))
    for k in unset:
        setattr(filled, k, found.get(k, BUILT_IN_GAINS[k]))
    sources = ["parameters"] if len(unset) < len(BUILT_IN_GAINS) else []
    sources += [path] if found else []
    sources += ["built-in"] if len(found) < len(unset) else []
    return filled, " + ".join(sources)


def build_controller(base, p, theta_hat=None):
    """AdaptiveSlotineLiController on ``base`` with the gravity of compensate_gravity, from
    ``p`` with its gains set (ValueError with a reason on bad gains or sizes). ``theta_hat``
    of the same size is carried over."""
    n = base.nv
    model = base.with_gravity(np.array(p.gravity if p.compensate_gravity else [0.0] * 3))
    gains = AdaptiveGains(broadcast_values("lambda_gains", p.lambda_gains, n, 0.0),
                          broadcast_values("kd_gains", p.kd_gains, n, 0.0),
                          p.gamma_gains[0] if len(p.gamma_gains) == 1 else p.gamma_gains)
    ctrl = AdaptiveSlotineLiController(model, gains, payload_only=p.payload_only,
                                       adapt_body=p.adapt_body or None,
                                       theta0=p.initial_parameters or None,
                                       projection=p.projection, adapt=p.adapt)
    if theta_hat is not None and theta_hat.shape == ctrl.theta0.shape:
        ctrl.set_theta_hat(theta_hat)
    return ctrl


def effort_limits(model, values):
    """Effort limits (n,), inf = none: the URDF's, or one value / one per joint; 0 or
    negative means none."""
    lim = (np.array(model.effort_limits, dtype=float) if not len(values)
           else broadcast_values("effort_limits", values, model.nv, 0.0))
    lim[~(lim > 0)] = np.inf
    return lim


class AdaptiveSetup:
    """Everything that depends on the model or the gains, replaced as a whole: ``base`` (the
    model as loaded), ``model`` (with the gravity used), ``controller``, ``guard``,
    ``inputs`` (the node's state pipeline), ``cmd_cols`` (command array order) and
    ``gains_source``."""

    def __init__(self, base, p, origin, config, make_inputs, theta_hat=None):
        reason = joint_state_reason(base)
        if reason:
            raise ValueError(reason)
        self.cmd_cols = command_columns(base, p.joints, every=True)
        p, self.gains_source = resolve_gains(p, origin)
        self.base = base
        self.controller = build_controller(base, p, theta_hat)
        self.model = self.controller.model
        self.inputs = make_inputs(self.model, p)
        self.guard = torque_guard(self.model, effort_limits(self.model, p.effort_limits), config)

    def warm_up(self):
        """First calls of every kernel the node needs (the gravity fallback's too), then a
        fresh controller."""
        q0 = rest_pose(self.model)
        self.controller.step(0.0, q0, q0 * 0, q0, q0 * 0, q0 * 0, 1e-3)
        ldr.gravity_torques(self.model, q0)
        self.controller.reset()

    def summary(self):
        ctrl = self.controller
        bodies = ctrl.adapted_bodies
        which = ", ".join(bodies) if len(bodies) < 4 else "%d bodies" % len(bodies)
        if ctrl.adapt:
            law = "adapting %d parameters (%s)" % (ctrl.theta0.size, which)
        else:   # adapt: false is computed torque with the model's parameters, held fixed
            law = "not adapting (adapt: false): %d parameters (%s) held at the model's" % (
                ctrl.theta0.size, which)
        return "adaptive Slotine-Li on %d joints, %s; gains from %s" % (
            self.model.nv, law, self.gains_source)


class AdaptiveRuntime:
    """The controller between states: its setup, whether it runs, the position it holds
    without a reference, the reference, and the clock of the adaptation.

    ``prepare`` builds a setup and ``install`` makes it current; per state ``torques`` gives
    the torques (None while disabled: the node answers with ``disabled_answer``) and, once
    the guard has published them, ``commanded`` says whether the monitors are due.
    """

    def __init__(self, p):
        self.setup = None
        self.enabled = bool(p.start_enabled)
        self.reference = None       # positions (and rates) over time, with a joint mask
        self.hold = None            # position held where the reference does not say
        self.last_t_ns = None       # time of the last controlled state (None: do not adapt)
        self.controlled = 0         # states answered with a control torque
        self.configure(p)

    def prepare(self, base, p, origin, config, make_inputs, changed=None):
        """(reason, setup) for model ``base`` from ``origin`` and the parameter values ``p``;
        nothing is installed. ``changed``: the changed parameter names when ``base`` is the
        current robot, so theta_hat carries over (unless they change what adapts); None for
        a new robot."""
        keep = None
        if changed is not None and self.setup is not None and not RESTART_ESTIMATE & changed:
            keep = self.setup.controller.theta_hat
        try:
            return None, AdaptiveSetup(base, p, origin, config, make_inputs, keep)
        except ValueError as e:
            return str(e), None

    def install(self, setup, new_model):
        """Make ``setup`` current; a new robot starts over (no reference, nothing held)."""
        if new_model:
            self.reference = self.hold = self.last_t_ns = None
        self.setup = setup

    def configure(self, p):
        """The parameters that act without a rebuild."""
        self.max_dt, self.monitor_every = p.max_dt, p.monitor_decimation
        self.friction_epsilon = p.friction_velocity_epsilon if p.compensate_friction else None
        if self.setup is not None:
            self.setup.controller.adapt = p.adapt

    # -- services ---------------------------------------------------------------------------
    def set_enabled(self, on):
        """Run (``on``) or stop -> (what happened, the zero command to send once or None).
        Enabling holds the position of the next state until a new reference arrives, with a
        fresh guard (no timeout from before the pause)."""
        if on == self.enabled:
            return "already %s" % ("enabled" if on else "disabled"), None
        self.enabled = on
        if not on:
            return "disabled: zero torque sent", (None if self.setup is None
                                                  else self.setup.guard.final())
        self.reference = self.hold = self.last_t_ns = None
        if self.setup is not None:
            old = self.setup.guard
            self.setup.guard = TorqueGuard(old.limits, old.gravity_fn, old.config)
        return "enabled", None

    def reset_estimate(self):
        """theta_hat <- its initial value; False without a model."""
        if self.setup is None:
            return False
        ctrl = self.setup.controller
        ctrl.set_theta_hat(ctrl.theta0)
        return True

    # -- per state --------------------------------------------------------------------------
    def set_reference(self, ref):
        """A reference (``sample(t_ns) -> (q, v, a)`` and a joint ``mask``) -> reason or
        None. It must give positions."""
        if ref.q is None:
            return "the reference needs positions"
        self.reference = ref
        return None

    def desired(self, t_ns, q):
        """(q_d, v_d, a_d): the reference at ``t_ns`` on its joints, the held position at
        rest on the others."""
        if self.hold is None:
            self.hold = q.copy()
        q_d, v_d, a_d = self.hold.copy(), np.zeros_like(q), np.zeros_like(q)
        if self.reference is not None:
            rq, rv, ra = self.reference.sample(t_ns)
            m = self.reference.mask
            q_d[m], v_d[m], a_d[m] = rq[m], rv[m], ra[m]
        return q_d, v_d, a_d

    def torques(self, stamp_ns, q, v, now_ns):
        """Torques answering the state (q, v) stamped ``stamp_ns`` (0: unstamped, the receive
        time ``now_ns`` is used), or None while disabled (the stamp is then accepted as is).
        The adaptation integrates dt only when 0 < dt <= max_dt and not across a state
        timeout. With compensate_friction, plus the friction feedforward at v_r = v - s.
        ValueError if the controller refuses the state."""
        s = self.setup
        if not self.enabled:
            s.inputs.accept(stamp_ns)
            return None
        t_ns = stamp_ns or now_ns
        if s.guard.in_timeout:
            self.last_t_ns = None
        q_d, v_d, a_d = self.desired(t_ns, q)
        dt = 0.0
        if self.last_t_ns is not None:
            dt = (t_ns - self.last_t_ns) * 1e-9
            if not 0.0 < dt <= self.max_dt:
                dt = 0.0
        tau = s.controller.step(t_ns * 1e-9, q, v, q_d, v_d, a_d, dt)
        if self.friction_epsilon is None or not has_joint_friction(s.model):
            return tau
        v_r = v - s.controller.state.s
        return tau + friction_feedforward(s.model, v_r, self.friction_epsilon)

    def disabled_answer(self):
        """The answer to each state while disabled: zero torque (as the zero sent on
        disabling, so nothing changes for the motors). Answering every state keeps a simulator
        in lockstep at its pace instead of stepping on its timeout."""
        return np.zeros(self.setup.model.nv)

    def commanded(self, stamp_ns, now_ns):
        """The torques of ``torques`` went out: the adaptation's clock moves on. True when
        the monitors (theta_hat, tracking errors) are due."""
        self.setup.inputs.accept(stamp_ns)
        self.last_t_ns = stamp_ns or now_ns
        self.controlled += 1
        k = self.monitor_every
        return k > 0 and self.controlled % k == 0

    def monitors(self):
        """(theta_hat, the 3 x n tracking errors e, e_dot, s) of the last step."""
        st = self.setup.controller.state
        return st.theta_hat, np.stack([st.e, st.e_dot, st.s])
