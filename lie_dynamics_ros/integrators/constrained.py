"""Fixed-step simulation of mechanisms with closed loops (Kim 2012, section 3; docs/loops.md)
and of robots held by rigid contacts (docs/contacts.md).

Every stage evaluates constrained forward dynamics (``algorithms/constrained.py``, or
``contact_dynamics`` with contacts); after every step ``project`` puts (q, v) back on the
constraint manifold. The step is the Python path of ``simulate``'s fixed-step methods
(``integrators/multibody.py``).
"""
import numpy as np

from ..algorithms._inputs import data_for
from ..algorithms.constrained import constrained_forward_dynamics, project, project_on
from ..algorithms.contacts import contact_dynamics, place_contacts, tables_for
from ..errors import InputError
from .multibody import SimulationResult, fixed_method, python_stepper


def _tau(model, tau):
    try:
        a = np.ascontiguousarray(tau, dtype=float)
    except (TypeError, ValueError):
        a = None
    if a is None or a.shape != (model.nv,) or not np.all(np.isfinite(a)):
        raise InputError(f"tau must be {model.nv} finite numbers")
    return a


def make_constrained_stepper(model, method="rkmk4", projection=True, baumgarte=None, data=None,
                             contacts=None):
    """One fixed step at a time for loops that own the clock (the simulator node), like
    ``integrators.simulate.make_stepper``: ``step(q, v, dt, tau=None, t=0.0) -> (q, v)`` with
    constrained forward dynamics at every stage and ``project`` after the step.

    ``contacts``: ldr.RigidContact list, each with a placement (``ldr.place_contacts``);
    ``baumgarte`` is then (Kp, Kd) as ``contact_dynamics`` takes it."""
    base = python_stepper(model, fixed_method(method, "make_constrained_stepper"))
    zero = np.zeros(model.nv)
    d = data_for(model, data)
    if contacts is not None:
        ct = tables_for(model, d, contacts)
        if not ct.placed:
            raise InputError("every contact of a simulation needs a placement: "
                             "ldr.place_contacts(model, q0, contacts) holds them where they are")
        return _contact_stepper(model, base, zero, d, ct, projection, baumgarte)

    def step(q, v, dt, tau=None, t=0.0):
        tau_f = (lambda t_, q_, v_: zero) if tau is None else (
            tau if callable(tau) else (lambda t_, q_, v_, _t=_tau(model, tau): _t))

        def accel(t_, q_, v_):
            return constrained_forward_dynamics(model, q_, v_, tau_f(t_, q_, v_),
                                                baumgarte=baumgarte, data=d)[0]
        q, v = base(q, v, dt, t=t, accel=accel)
        return project(model, q, v, data=d) if projection else (q, v)
    return step


def _contact_stepper(model, base, zero, d, ct, projection, baumgarte):
    contacts = ct.contacts

    def step(q, v, dt, tau=None, t=0.0):
        tau_f = (lambda t_, q_, v_: zero) if tau is None else (
            tau if callable(tau) else (lambda t_, q_, v_, _t=_tau(model, tau): _t))

        def accel(t_, q_, v_):
            return contact_dynamics(model, q_, v_, tau_f(t_, q_, v_), contacts,
                                    baumgarte=baumgarte, data=d)[0]
        q, v = base(q, v, dt, t=t, accel=accel)
        return project_on(model, d, q, v, ct.tables) if projection else (q, v)
    return step


def simulate_constrained(model, q0, v0, duration, dt, method="rkmk4", tau=None, projection=True,
                         baumgarte=None, callback=None, data=None, contacts=None):
    """Integrate constrained forward dynamics with a fixed step (any fixed-step method of
    ``ldr.simulate``), then ``project`` (q, v) back onto the constraint manifold after every
    step when ``projection`` is True. ``baumgarte=(alpha, beta)`` adds Baumgarte stabilisation
    to the acceleration constraint. (q0, v0) are projected first. ``callback(t, q, v)`` after
    every step; returning True stops. Returns a SimulationResult.

    ``contacts`` (ldr.RigidContact list) hold frames in the world (docs/contacts.md); a contact
    without a placement is held where its frame is at q0. ``baumgarte`` is then (Kp, Kd).
    """
    n = int(round(duration / dt)) if np.isfinite(dt) and dt > 0 else 0
    if n < 1:
        raise InputError("duration and dt must give at least one step of positive length")
    d = data_for(model, data)
    if contacts is not None:
        ct = tables_for(model, d, contacts)
        if not ct.placed:
            contacts = place_contacts(model, q0, contacts, data=d)
            ct = tables_for(model, d, contacts)
        step = make_constrained_stepper(model, method, projection, baumgarte, d, contacts)
        q, v = project_on(model, d, q0, v0, ct.tables)
    else:
        step = make_constrained_stepper(model, method, projection, baumgarte, data=d)
        q, v = project(model, q0, v0, data=d)
    T, Q, V = [0.0], [q], [v]
    for i in range(1, n + 1):
        q, v = step(q, v, dt, tau, (i - 1) * dt)
        T.append(i * dt)
        Q.append(q)
        V.append(v)
        if callback is not None and callback(i * dt, q, v):
            break
    return SimulationResult(np.array(T), np.array(Q), np.array(V), method=method)
