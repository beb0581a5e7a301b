"""A fixed-step simulation of a robot with 1-DOF joints, without ROS: the state, one step with
commanded torques (forward dynamics, or Kim's hybrid dynamics for prescribed joints), external
wrenches on links, joint damping and Coulomb friction (``integrators/passive.py``: solved
at the velocity level before each step and held over it), and the checks that keep a diverging
run from producing garbage.

``forward_dynamics_node`` feeds it commands and publishes its state; nothing here needs rclpy.
"""
import numpy as np

from ..algorithms.constrained import constrained_forward_dynamics, project
from ..algorithms.dynamics import forward_dynamics, hybrid_dynamics
from ..errors import InputError, SimulationDiverged
from .passive import has_passive, passive_torques


def velocity_bounds(model, factor=100.0, default=1000.0):
    """Per-joint speed above which a step counts as diverged: ``factor`` times the URDF
    ``<limit velocity>``, or ``default`` (rad/s or m/s) for joints without a finite, positive
    limit. ``factor <= 0`` disables the check (all infinite)."""
    if factor <= 0:
        return np.full(model.nv, np.inf)
    lim = np.asarray(model.velocity_limits, dtype=float)
    ok = np.isfinite(lim) & (lim > 0)
    return np.where(ok, factor * np.where(ok, lim, 1.0), default)


class Simulator:
    """State and step of the simulation; the node only feeds commands and publishes.

    Args:
        model: ldr model (1-DOF joints).
        dt_ns: step in nanoseconds.
        stepper: rigid-body integrator step ``step(q, v, dt, tau=None, t=0.0, accel=None)
            -> (q, v)`` (``integrators.simulate.make_stepper(..., joint_friction=False)``); a
            step with constant torques and no prescribed joints, loops or external wrenches
            passes ``tau`` (one compiled call).
        prescribed: (nv,) bool mask of joints that follow the reference.
        q0, v0: initial state (nv,), model order.
        t0_ns: simulation time of the initial state.
        velocity_bound: (nv,) speeds above which a step raises ``SimulationDiverged``
            (``velocity_bounds``); None: only non-finite values do.
        position_limits: None, or (lower, upper) (nv,) arrays: a joint reaching a limit stops
            there (its velocity into the limit is set to zero, an inelastic stop).
        joint_friction: apply the model's joint damping and Coulomb friction on the joints
            that are not prescribed (default True; nothing to do on a model without them;
            not on a model with loop closures). ``tau`` (published efforts) stays the
            commanded torque, without them.
    """

    def __init__(self, model, dt_ns, stepper, prescribed, q0, v0, t0_ns=0, velocity_bound=None,
                 position_limits=None, joint_friction=True):
        self.model, self.stepper = model, stepper
        self.joint_friction = bool(joint_friction) and has_passive(model)
        if self.joint_friction and getattr(stepper, "joint_friction", False):
            raise InputError("the Simulator applies joint damping and friction itself: give it "
                             "a stepper made with joint_friction=False")
        if self.joint_friction and model.nc:
            raise InputError("joint damping and friction are not applied on a model with loop "
                             "closures; pass joint_friction=False")
        self.dt_ns, self.dt = int(dt_ns), int(dt_ns) * 1e-9
        self.prescribed = np.asarray(prescribed, dtype=bool)
        self.free = ~self.prescribed
        self.hybrid = bool(self.prescribed.any())
        self.q, self.v = np.array(q0, dtype=float), np.array(v0, dtype=float)
        self.t0_ns = self.t_ns = int(t0_ns)
        self.tau = np.zeros(model.nv)    # torques applied in the last step
        self.hold = self.q[self.prescribed].copy()
        self.reference = None            # conversions.TrajectoryReference
        self.steps = 0
        self.velocity_bound = None if velocity_bound is None else np.asarray(velocity_bound,
                                                                             dtype=float)
        self.position_limits = position_limits
        self.limit_stops = 0             # steps in which a position limit acted
        self.f_ext = None                # {link: (6,) wrench (force, torque) in the link frame}
        # per-step inputs of the acceleration callback (bound once, no closure per step)
        self._tau_cmd = np.zeros(model.nv)
        self._applied = None
        self._a_given = np.zeros(model.nv)
        self._passive = np.zeros(model.nv)      # damping and friction held over this step
        self._accel = self._accel_hybrid if self.hybrid else self._accel_free

    def set_external_wrench(self, link, wrench):
        """Apply ``wrench`` (6,) = (force, torque) in the frame of ``link`` from now on; a zero
        or None wrench removes it. Raises InputError for an unknown link or non-finite values."""
        self.model.frame(link)   # InputError/KeyError for an unknown link, before any change
        w = None if wrench is None else np.asarray(wrench, dtype=float).reshape(-1)
        if w is not None and (w.shape != (6,) or not np.isfinite(w).all()):
            raise InputError("external wrench on %r must be 6 finite numbers" % link)
        f_ext = dict(self.f_ext or {})
        if w is None or not w.any():
            f_ext.pop(link, None)
        else:
            f_ext[link] = w
        self.f_ext = f_ext or None

    def prescribed_motion(self, t_ns):
        """(q, v, a) of the prescribed joints at ``t_ns`` (each (k,)); q or v may be None
        when the reference gives only accelerations. Without a reference: hold still."""
        m = self.prescribed
        q, v, a = self.hold.copy(), np.zeros(m.sum()), np.zeros(m.sum())
        if self.reference is not None:
            rq, rv, ra = self.reference.sample(t_ns)
            covered = self.reference.mask[m]
            if rq is None:  # acceleration-only reference: integrate it, no override
                q = v = None
            else:
                q[covered] = rq[m][covered]
            if rv is not None and v is not None:
                v[covered] = rv[m][covered]
            if ra is not None:
                a[covered] = ra[m][covered]
        return q, v, a

    def _override(self, q, v, t_ns):
        """q, v with the prescribed joints set to the reference at ``t_ns``."""
        m = self.prescribed
        if self.hybrid:
            qp, vp, _ = self.prescribed_motion(t_ns)
            q, v = q.copy(), v.copy()
            if qp is not None:
                q[m] = qp
            if vp is not None:
                v[m] = vp
        return q, v

    def apply_prescribed(self):
        """Put the prescribed joints where the reference says they are now."""
        self.q, self.v = self._override(self.q, self.v, self.t_ns)

    def _accel_free(self, s, q, v):
        """Forward dynamics with the commanded torques (``s``: time into the step)."""
        if self._applied is None:
            self._applied = self._tau_cmd
        if self.model.nc:      # closed loops: Kim (2012) eqs. (67)-(69)
            return constrained_forward_dynamics(self.model, q, v, self._tau_cmd,
                                                    f_ext=self.f_ext)[0]
        return forward_dynamics(self.model, q, v, self._torques(), f_ext=self.f_ext)

    def _accel_hybrid(self, s, q, v):
        """Hybrid dynamics: the prescribed joints follow the reference at ``t + s``."""
        a_given = self._a_given
        a_given[self.prescribed] = self.prescribed_motion(self.t_ns + int(s * 1e9))[2]
        a_full, tau_full = hybrid_dynamics(self.model, q, v, a_given, self._torques(),
                                           self.prescribed, f_ext=self.f_ext)
        if self._applied is None:
            self._applied = tau_full - self._passive if self.joint_friction else tau_full
        return a_full

    def _torques(self):
        """The commanded torques, plus damping and friction when they are on."""
        return self._tau_cmd + self._passive if self.joint_friction else self._tau_cmd

    def _check(self, q, v, tau):
        """Raise SimulationDiverged naming the first joint at fault (state unchanged)."""
        names = self.model.joint_names
        t_s = (self.t_ns + self.dt_ns - self.t0_ns) * 1e-9
        for what, x in (("position", q), ("velocity", v), ("torque", tau)):
            bad = ~np.isfinite(x)
            if bad.any():
                raise SimulationDiverged(t_s, names[int(np.argmax(bad))],
                                         "has a non-finite %s" % what)
        if self.velocity_bound is not None:
            over = np.abs(v) > self.velocity_bound
            if over.any():
                k = int(np.argmax(over))
                raise SimulationDiverged(t_s, names[k], "moves at %.3g, above the bound %.3g "
                                         "(velocity_bound_factor x URDF velocity limit)"
                                         % (abs(v[k]), self.velocity_bound[k]),
                                         self._fall_advice(q, tau))

    def _fall_advice(self, q, tau):
        """What helps when joints are past their URDF limits and the limits are not enforced;
        None otherwise (the step-size advice). With no torque applied that is a fall through
        the limits, which a smaller step would not stop; with torques it may be a loop too
        stiff for the step, so both are said."""
        if self.position_limits is not None:
            return None
        lo, hi = self.model.lower_limits, self.model.upper_limits
        past = (q < lo) | (q > hi)
        if not past.any():
            return None
        names = [n for n, x in zip(self.model.joint_names, past) if x]
        if np.any(tau):
            return ("%s; %s are past their URDF position limits, which are not enforced "
                    "(enforce_position_limits)" % (SimulationDiverged.STEP_ADVICE, names))
        return ("%s are past their URDF position limits, which are not enforced, with no "
                "torque applied: a fall through the joint limits, which a smaller step would "
                "not stop; command torques that hold the arm, or set enforce_position_limits "
                "(if a controller commanded large torques just before, reduce dt or its "
                "gains)" % names)

    def _limit_positions(self, q, v):
        lo, hi = self.position_limits
        below, above = q < lo, q > hi
        if below.any() or above.any():
            q, v = np.clip(q, lo, hi), v.copy()
            v[below & (v < 0)] = 0.0
            v[above & (v > 0)] = 0.0
            self.limit_stops += 1
        return q, v

    def step(self, tau_cmd):
        """One step with commanded torques ``tau_cmd`` (nv,) on the free joints.

        Raises SimulationDiverged (a FloatingPointError; state unchanged) if the step is not
        finite or a joint exceeds its velocity bound.
        """
        self._tau_cmd = np.array(tau_cmd, dtype=float)   # a copy: the caller may reuse it
        self._applied = None
        self.apply_prescribed()
        try:
            if self.joint_friction:
                self._passive = np.zeros(self.model.nv)
                a = self._accel(0.0, self.q, self.v)
                self._applied = None
                self._passive = passive_torques(self.model, self.q, self.v, a, self.dt,
                                                self.free)
            if self.hybrid or self.model.nc or self.f_ext is not None:
                q, v = self.stepper(self.q, self.v, self.dt, accel=self._accel, t=0.0)
            else:   # torque held over the step: make_stepper's one compiled call
                q, v = self.stepper(self.q, self.v, self.dt, tau=self._torques(), t=0.0)
        except InputError as e:   # the kernels refuse non-finite states
            raise SimulationDiverged((self.t_ns + self.dt_ns - self.t0_ns) * 1e-9,
                                     "(unknown)", "left the finite range (%s)" % e) from e
        t_next = self.t_ns + self.dt_ns
        if self.model.nc:      # back onto the constraint manifold: no drift
            try:
                q, v = project(self.model, q, v)
            except InputError as e:
                raise SimulationDiverged((t_next - self.t0_ns) * 1e-9, "(closure)",
                                         "left the constraint manifold (%s)" % e) from e
        tau = self._tau_cmd if self._applied is None else np.asarray(self._applied, dtype=float)
        q, v = self._override(q, v, t_next)
        self._check(q, v, tau)
        if self.position_limits is not None:
            q, v = self._limit_positions(q, v)
        self.q, self.v, self.tau, self.t_ns = q, v, tau, t_next
        self.steps += 1

    def hold_step(self):
        """Advance the time by one step without moving (start-up hold): the state stays."""
        self.apply_prescribed()
        self.tau = np.zeros_like(self.tau)
        self.t_ns += self.dt_ns
