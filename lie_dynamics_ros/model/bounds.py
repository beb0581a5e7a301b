"""What a robot description may hold: finite numbers within bounds no real robot comes near.

A value beyond them is a typo or a corrupted file (1e308 kg, an offset of 1e300 m), and it
would turn the dynamics into Inf/NaN far from where it was read. With every bound met, the
products the algorithms form (m r^2, multiplier^2 I over a tree of many bodies) stay finite.
Published URDFs (example-robot-data) stay below 1e-2 of each bound.
"""
import math

from ..errors import URDFError

MAX_MASS = 1e6          # kg, one link (a large excavator arm is ~1e4 kg)
MAX_INERTIA = 1e6       # kg m^2, each entry of the inertia tensor about the centre of mass
MAX_LENGTH = 1e4        # m, any offset: joint origin, centre of mass
MAX_ANGLE = 1e4         # rad, URDF rpy angles (published files stay within 2 pi)
MAX_MIMIC = 1e4         # |multiplier| and |offset| of a mimic joint, chains composed
MAX_GRAVITY = 1e4       # m/s^2, |gravity| (a neutron star's surface is ~1e12; no robot is there)
MAX_DAMPING = 1e6       # N m s/rad (N s/m), viscous joint damping
MAX_FRICTION = 1e6      # N m (N), Coulomb joint friction
MAX_ARMATURE = 1e6      # kg m^2 (kg), reflected rotor inertia (gear ratio^2 x rotor inertia)


def check_range(value, lo, hi, what, element, unit=""):
    """``value`` as a float within [lo, hi]; URDFError naming ``element`` otherwise."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise URDFError(f"{what} must be a number, got {value!r}", element) from None
    if not math.isfinite(x):
        raise URDFError(f"{what} must be finite, got {x}", element)
    if not lo <= x <= hi:
        raise URDFError(f"{what} = {x:g}{unit} is outside the sane range [{lo:g}, {hi:g}]{unit}",
                        element)
    return x
