"""The integrators a simulator can be configured with, by name: the fixed-step methods of
``integrators.simulate`` (an adaptive method cannot keep a fixed simulation rate)."""
from .simulate import SIMULATE_ADAPTIVE_METHODS, SIMULATE_METHODS, make_stepper


def available_integrators():
    """Names ``resolve_integrator`` accepts (semi_implicit, rkmk4, cf4, heun, ...), sorted."""
    return sorted(set(SIMULATE_METHODS) - set(SIMULATE_ADAPTIVE_METHODS))


def unknown_integrator_reason(name):
    """None if ``name`` is an available integrator, else the reason listing the names."""
    names = available_integrators()
    return None if name in names else "unknown integrator '%s' (available: %s)" % (
        name, ", ".join(names))


def resolve_integrator(name, model):
    """``make_stepper(model, name, joint_friction=False)``: ``step(q, v, dt, tau=None, t=0.0,
    accel=None) -> (q, v)`` with ``accel(t, q, v)`` the acceleration at time ``t`` into the
    step (forward or hybrid dynamics), evaluated once per stage. The step is rigid-body: the
    ``Simulator`` adds joint damping and friction itself. Raises ValueError for an unknown
    name."""
    reason = unknown_integrator_reason(name)
    if reason:
        raise ValueError(reason)
    return make_stepper(model, name, joint_friction=False)
