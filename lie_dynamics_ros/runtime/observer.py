"""The external-torque observer's runtime around ``estimation.MomentumObserver`` (De Luca et
al. 2006, eq. (6)): which torques were applied between two states, the contact flag and its
rising edges, the states the stream skipped, and what the diagnostics report.
external_torque_observer_node converts messages around it.

Skipped states: the publisher's period is the median of the intervals between stamps that are
within 1.5 times the smallest one (over windows of ``PERIOD_WINDOW`` intervals; the smallest
one before the first window), which holds with most states lost and with stamp jitter below a
quarter period; an interval of n periods skipped n - 1 states. The estimate stays right
across them (the observer's update is exact for any gap), but a contact shorter than a gap is
seen only as the gap's mean.

Waiting for the torque (``wait_for_torque``): a robot not yet actuated is held by something
outside the dynamics (brakes, the simulator's start-up hold), whose holding torque g(q) the
observer would report as a contact. Waiting, it starts at the first state whose applied torque
is known to act: a non-zero effort (``joint_states``), or after the first command
(``command``).

``p`` is a namespace of the node's parameter values (ros/schemas/external_torque_observer.py).
"""
import numpy as np

from ..estimation import MomentumObserver
from .commanding import command_columns, rest_pose
from .robot import joint_state_reason

#: where the applied torques come from: the state's own effort field (a driver or simulator
#: that reports the applied torque there, as forward_dynamics_node does: after its clamp), or
#: the last command received before a state
TORQUE_SOURCES = ("joint_states", "command")

#: intervals between states over which the publisher's period is taken (their median)
PERIOD_WINDOW = 100

#: parameters whose change rebuilds the observer
REBUILD = {"observer_gain", "contact_threshold", "gravity", "compensate_friction"}


def build_observer(model, p):
    """MomentumObserver of ``model`` with the gravity, gain, threshold and friction
    subtraction of ``p`` (ValueError naming a bad gain or threshold)."""
    return MomentumObserver(model.with_gravity(np.array(p.gravity, dtype=float)),
                            gain=p.observer_gain, threshold=p.contact_threshold,
                            friction=p.compensate_friction)


class ObserverRuntime:
    """Observer, applied torques and contact of one robot (``observer`` None before one)."""

    def __init__(self, torque_source, wait_for_torque=False):
        if torque_source not in TORQUE_SOURCES:
            raise ValueError("torque_source must be one of %s, got %r"
                             % (TORQUE_SOURCES, torque_source))
        self.from_states = torque_source == "joint_states"
        self.waiting = bool(wait_for_torque)    # no estimate before the robot is actuated
        self.waited = 0             # states passed over while waiting
        self.commands = 0           # torque messages received (torque_source command)
        self.observer = None
        self.cmd_cols = None
        self.tau = None             # last applied torques (model order)
        self.last_stamp_ns = None
        self.in_contact = False
        self.contacts = 0           # rising edges of the contact flag
        self.estimates = 0
        self.skipped = 0            # states missing from the stream (stamp gaps)
        self.just_skipped = 0       # ... before the last state taken
        self.largest_gap_ns = 0
        self.period_ns = None       # the publisher's period, from the stamps
        self._intervals = []
        self._median_known = False

    @property
    def state_fields(self):
        """What a joint_states message must carry."""
        return ("position", "velocity") + (("effort",) if self.from_states else ())

    def set_model(self, model, p):
        """Observe ``model`` (kernels compiled now, not on the first state) -> reason or
        None; nothing changes on a reason."""
        reason = joint_state_reason(model)
        if reason:
            return reason
        try:
            cols = command_columns(model, p.joints)
            observer = build_observer(model, p)
        except ValueError as e:
            return str(e)
        q0, z = rest_pose(model), np.zeros(model.nv)
        observer.update(q0, z, None, None)
        observer.update(q0, z, z, 1e-3)
        observer.reset()
        self.observer, self.cmd_cols = observer, cols
        self.tau = np.zeros(model.nv)
        self.last_stamp_ns = None
        return None

    def rebuild(self, p):
        """(reason, observer) with the gains of ``p`` on the current model; (None, None)
        without a model."""
        if self.observer is None:
            return None, None
        try:
            return None, build_observer(self.observer.model, p)
        except ValueError as e:
            return str(e), None

    def install(self, observer):
        """A rebuilt observer starts over at the next state."""
        self.observer = observer
        self.last_stamp_ns = None

    # -- inputs -------------------------------------------------------------------------------
    def applied(self, tau):
        """Torques by joint (model order) from joint_torques; ignored when the states carry
        them."""
        if not self.from_states:
            self.tau = np.array(tau, dtype=float)
            self.commands += 1

    def commanded(self, values):
        """Torques in ``joints`` order from the command array; ignored when the states carry
        them."""
        if not self.from_states:
            self.tau[self.cmd_cols] = values
            self.commands += 1

    def actuated(self, effort):
        """Whether the applied torque is known to act: a non-zero ``effort`` (joint_states),
        or a command received (command)."""
        if self.from_states:
            return effort is not None and bool(np.any(np.asarray(effort) != 0.0))
        return self.commands > 0

    def update(self, stamp_ns, q, v, effort=None):
        """The state at ``stamp_ns`` (its ``effort``: the applied torques with torque_source
        joint_states) -> (r, contact, the joints of a new contact or None); (None, False,
        None) while waiting for the torque. ValueError for a state the observer refuses
        (nothing changes)."""
        if self.waiting:
            if not self.actuated(effort):
                self.waited += 1
                return None, False, None
            self.waiting = False
        tau = effort if self.from_states else self.tau
        gap = None if self.last_stamp_ns is None else stamp_ns - self.last_stamp_ns
        r = self.observer.update(q, v, tau, None if gap is None else gap * 1e-9)
        self.last_stamp_ns = stamp_ns
        self.just_skipped = 0 if gap is None else self._count_skipped(gap)
        contact = self.observer.contact
        new = None
        if contact and not self.in_contact:
            self.contacts += 1
            new = self.observer.contact_joints()
        self.in_contact = contact
        self.estimates += 1
        return r, contact, new

    def _count_skipped(self, gap_ns):
        """States missing in an interval of ``gap_ns`` (counted in ``skipped``)."""
        self.largest_gap_ns = max(self.largest_gap_ns, gap_ns)
        self._intervals.append(gap_ns)
        if len(self._intervals) >= PERIOD_WINDOW:
            gaps = np.array(self._intervals, dtype=float)
            self.period_ns = float(np.median(gaps[gaps < 1.5 * gaps.min()]))
            self._intervals = []
            self._median_known = True
        elif not self._median_known:
            self.period_ns = float(gap_ns if self.period_ns is None
                                   else min(self.period_ns, gap_ns))
        missing = max(0, int(round(gap_ns / self.period_ns)) - 1)
        self.skipped += missing
        return missing

    def status(self, dropped):
        """(warn, message, [(key, value)]) for the diagnostics."""
        if self.observer is None:
            return True, "no robot model", []
        message = ("waiting for the applied torque (%d states so far)" % self.waited
                   if self.waiting else "contact" if self.observer.contact else "no contact")
        return False, message, [
            ("estimates", self.estimates), ("contacts", self.contacts), ("dropped", dropped),
            ("skipped states", self.skipped),
            ("largest gap (ms)", "%.1f" % (self.largest_gap_ns * 1e-6)),
            ("torque source", "joint_states effort" if self.from_states else "commands"),
            ("max |r|", "%.4g" % float(np.abs(self.observer.r).max()))]
