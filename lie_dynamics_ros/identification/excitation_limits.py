"""The joint limits an excitation keeps (Swevers, Ganseman, Tukel, De Schutter & Van Brussel
1997 optimise under the same constraints): the model's position and velocity limits, an
acceleration limit (URDF has none), margins, and the two ways they act on a Fourier series:
linear constraints at sample times for the optimiser, and a certified shrink afterwards."""
from typing import NamedTuple

import numpy as np

from ..errors import InputError
from .fourier_series import FourierSeries, basis

#: used when no acceleration limit is given, rad/s^2 (m/s^2 for prismatic joints); URDF has no
#: acceleration limit. About 2/3 of a Franka arm's smallest one (7.5 rad/s^2).
DEFAULT_ACCELERATION_LIMIT = 5.0
#: share of each limit kept free: position as a fraction of the range at each end, velocity and
#: acceleration as a fraction of the limit
DEFAULT_MARGINS = {"position": 0.05, "velocity": 0.1, "acceleration": 0.1}


class JointLimits(NamedTuple):
    """The limits the trajectory keeps, margins applied, each (nv,) (inf where none)."""
    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray


def _readonly(x):
    x = np.array(x, dtype=float)
    x.flags.writeable = False
    return x


def positive_number(x, name):
    try:
        val = float(x)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a positive number, got {x!r}") from None
    if not (np.isfinite(val) and val > 0.0):
        raise InputError(f"{name} must be a positive finite number, got {x!r}")
    return val


def _acceleration_limits(model, x, name):
    """A number, an (nv,) array or {joint name: value} (others: the default) as (nv,)
    positive finite values."""
    if isinstance(x, dict):
        out = np.full(model.nv, DEFAULT_ACCELERATION_LIMIT)
        for joint, val in x.items():
            if joint not in model.joint_names:
                raise InputError(f"{name}: unknown joint {joint!r}; joints: {model.joint_names}")
            out[model.joint_v_index[model.joint_names.index(joint)]] = positive_number(
                val, f"{name}[{joint!r}]")
        return out
    arr = np.asarray(x, dtype=float) if np.ndim(x) else np.full(model.nv, positive_number(x, name))
    if arr.shape != (model.nv,):
        raise InputError(f"{name} must be a number, ({model.nv},) or a dict by joint name, "
                         f"got shape {arr.shape}")
    for joint, k in zip(model.joint_names, model.joint_v_index):
        positive_number(arr[k], f"{name} of joint {joint!r}")
    return arr


def _margins(margins):
    out = dict(DEFAULT_MARGINS)
    if margins is None:
        return out
    if isinstance(margins, dict):
        extra = set(margins) - set(out)
        if extra:
            raise InputError(f"margins: unknown keys {sorted(extra)}; known: {sorted(out)}")
        out.update(margins)
    else:
        out = dict.fromkeys(out, margins)
    for key, val in out.items():
        top = 0.5 if key == "position" else 1.0
        try:
            ok = 0.0 <= float(val) < top
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise InputError(f"margins[{key!r}] must be a fraction in [0, {top}), got {val!r}")
        out[key] = float(val)
    return out


def joint_limits(model, margins=None, acceleration_limit=None) -> JointLimits:
    """The limits an excitation keeps: the model's position and velocity limits and
    ``acceleration_limit`` (default ``DEFAULT_ACCELERATION_LIMIT``), narrowed by ``margins``."""
    m = _margins(margins)
    lo, hi = np.array(model.lower_limits), np.array(model.upper_limits)
    span = np.where(np.isfinite(hi - lo), hi - lo, 0.0)
    acc = _acceleration_limits(model, DEFAULT_ACCELERATION_LIMIT if acceleration_limit is None
                   else acceleration_limit, "acceleration_limit")
    vel = np.array(model.velocity_limits)
    for name, k in zip(model.joint_names, model.joint_v_index):
        if not vel[k] > 0.0:
            raise InputError(f"joint {name!r}: velocity limit {vel[k]} leaves no motion")
        if np.isfinite(lo[k]) != np.isfinite(hi[k]) or not hi[k] > lo[k]:
            raise InputError(f"joint {name!r}: position limits [{lo[k]}, {hi[k]}] leave no "
                             "range to move in")
    return JointLimits(_readonly(lo + m["position"] * span), _readonly(hi - m["position"] * span),
                       _readonly(vel * (1.0 - m["velocity"])),
                       _readonly(acc * (1.0 - m["acceleration"])))


def fit_to_limits(series, limits, shrink_only):
    """The series with each joint's a, b scaled so that its certified extremes meet the limits
    (scaled by <= 1 only when ``shrink_only``); the motion about q0 scales linearly."""
    qmin, qmax, vmax, amax = series.extremes()
    q0 = series.q0
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.min([np.where(qmax - q0 > 0, (limits.upper - q0) / (qmax - q0), np.inf),
                    np.where(q0 - qmin > 0, (q0 - limits.lower) / (q0 - qmin), np.inf),
                    np.where(vmax > 0, limits.velocity / vmax, np.inf),
                    np.where(amax > 0, limits.acceleration / amax, np.inf)], axis=0)
    s = np.where(np.isfinite(s), s, 1.0)
    if shrink_only:
        s = np.minimum(s, 1.0)
    return FourierSeries(series.a * s[:, None], series.b * s[:, None], q0,
                         series.base_frequency)


def limit_constraints(L, base_frequency, limits, q0, q0_fixed, points):
    """G x + h >= 0 for the limits at ``points`` times per period, x = (C ravelled, [q0])."""
    nv = len(limits.lower)
    t = np.arange(points) / points / base_frequency
    Bq, Bv, Ba = basis(t, L, base_frequency)
    rows, rhs = [], []
    for B, lim, with_q0 in ((Bq, limits.upper, True), (Bv, limits.velocity, False),
                            (Ba, limits.acceleration, False)):
        A = np.kron(B, np.eye(nv))
        if not q0_fixed:
            A = np.hstack([A, np.kron(np.ones((points, 1)), np.eye(nv)) if with_q0
                           else np.zeros((A.shape[0], nv))])
        const = np.tile(q0, points) if (with_q0 and q0_fixed) else np.zeros(points * nv)
        hi = np.tile(lim, points)
        lo = np.tile(limits.lower, points) if with_q0 else -hi
        up, dn = np.isfinite(hi), np.isfinite(lo)
        rows += [-A[up], A[dn]]                       # hi - q >= 0 and q - lo >= 0
        rhs += [(hi - const)[up], (const - lo)[dn]]
    return np.vstack(rows), np.concatenate(rhs)
