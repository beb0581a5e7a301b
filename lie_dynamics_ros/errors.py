"""Typed exceptions of the library, all in one place and all exported by the package.

``URDFError``, ``SDFError`` and ``InputError`` are ValueErrors and ``SimulationDiverged`` a
FloatingPointError, so callers that catch the builtin types keep working.
"""


class URDFError(ValueError):
    """A robot description that cannot be turned into a model.

    The message names the link or joint at fault when there is one (``.element``).
    """

    def __init__(self, message, element=None):
        super().__init__(message)
        self.element = element


class SDFError(URDFError):
    """An SDFormat file that cannot be turned into a model; ``.element`` names the element."""


class InputError(ValueError):
    """An argument with the wrong shape, a NaN/Inf, an unknown name or a value out of range."""


class SimulationDiverged(FloatingPointError):
    """A step left the trusted range: a non-finite value, or a joint faster than its bound.

    ``t_s`` is the simulation time of the step (s from the start), ``joint`` the first joint
    at fault, ``reason`` what was seen and ``advice`` what helps (by default a smaller step;
    the caller says otherwise when it knows the cause, e.g. a free fall through the joint
    limits); the state is left unchanged."""

    STEP_ADVICE = "reduce dt (raise the rate) or use rkmk4"

    def __init__(self, t_s, joint, reason, advice=None):
        self.t_s, self.joint, self.reason = t_s, joint, reason
        self.advice = self.STEP_ADVICE if advice is None else advice
        super().__init__("simulation diverged at t = %.4f s: joint %s %s; %s"
                         % (t_s, joint, reason, self.advice))


class GeodesicError(InputError):
    """No minimum-energy motion between the given configurations within tolerance: the
    boundary-value solve did not converge, or a conjugate point lies before the end."""
