"""Excitation trajectories for identification: ``ldr.excitation_trajectory``.

A finite Fourier series per joint (Swevers, Ganseman, Tukel, De Schutter & Van Brussel 1997;
``fourier_series.py``) whose coefficients minimise the condition number of the base regressor
over one period, subject to the joint position, velocity and acceleration limits (Swevers et
al. 1997 optimise the same criterion under the same constraints). The regressor is the
identification's (``regressors.stacked_regressor``: ``ldr.regressor(model, q, v, v, a)`` with
a viscous (v_i) and a Coulomb (sign v_i) column per DOF, and with ``armature`` an a_i one),
and so are its base columns (``regressors.base_columns``: QR with column pivoting, Gautier
1991).
"""
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.optimize import minimize

from ..errors import InputError
from ..model.model import Model
from .excitation_limits import (JointLimits, fit_to_limits, joint_limits, limit_constraints,
                                positive_number)
from .fourier_series import FourierSeries, basis
from .regressors import base_columns, stacked_regressor

#: limit constraints per period of the highest harmonic during the optimisation (the final
#: series is then certified at all times and shrunk where a peak fell between them)
POINTS_PER_HARMONIC = 12


class JointTrajectoryArrays(NamedTuple):
    """What a trajectory_msgs/JointTrajectory needs: ``times`` (P,) in seconds from the start,
    ``positions``, ``velocities``, ``accelerations`` (P, len(names))."""
    names: tuple
    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray


def _readonly_index(x):
    x = np.array(x, dtype=np.intp)
    x.flags.writeable = False
    return x


def _readonly(x):
    x = np.array(x, dtype=float)
    x.flags.writeable = False
    return x


@dataclass(frozen=True, eq=False)
class Excitation:
    """A periodic excitation of ``model``, sampled at ``rate`` over ``duration``.

    ``t`` (N,), ``q`` (N, nq), ``v``, ``a`` (N, nv); ``coefficients`` the Fourier series (a, b,
    q0); ``condition_number`` that of the base regressor on these samples, and
    ``initial_condition_number`` that of the starting guess on the same times; ``limits`` the
    limits it keeps (margins applied); ``base_columns`` the regressor columns kept (indices
    into ``regressors.column_names(model, True, armature)``).
    """
    model: Model
    coefficients: FourierSeries
    duration: float
    rate: float
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    condition_number: float
    initial_condition_number: float
    limits: JointLimits
    base_columns: np.ndarray

    @property
    def period(self) -> float:
        return self.coefficients.period

    def __repr__(self):
        c = self.coefficients
        return (f"<Excitation of {self.model.name!r}: {c.harmonics} harmonics of "
                f"{c.base_frequency} Hz, {self.duration} s at {self.rate} Hz, "
                f"condition number {self.condition_number:.4g} "
                f"(start {self.initial_condition_number:.4g})>")

    def sample(self, t):
        """q, v, a at the times ``t`` (a number: (nv,) each; an array (N,): (N, nv) each),
        analytic, periodic in ``period``."""
        ts = np.asarray(t, dtype=float)
        if ts.ndim > 1 or not np.all(np.isfinite(ts)):
            raise InputError(f"t must be a finite number or (N,) array, got shape {ts.shape}")
        q, v, a = self.coefficients.evaluate(ts)
        return (q[0], v[0], a[0]) if ts.ndim == 0 else (q, v, a)

    def extremes(self, points_per_period=None):
        """Certified bounds over all times: (q_min, q_max, |v|_max, |a|_max), each (nv,)
        (``FourierSeries.extremes``); every one lies within ``limits``."""
        return self.coefficients.extremes(points_per_period)

    def to_joint_trajectory(self, names=None, rate=None):
        """``JointTrajectoryArrays`` sampled at ``rate`` (Hz; default the excitation's) over
        ``duration``, for the joints ``names`` (default every joint, in the model's order)."""
        model = self.model
        names = tuple(model.joint_names if names is None else names)
        unknown = [n for n in names if n not in model.joint_names]
        if unknown or len(set(names)) != len(names) or not names:
            raise InputError(f"names: distinct joints of the model {model.joint_names} "
                             f"expected, got {list(names)}")
        cols = [model.joint_v_index[model.joint_names.index(n)] for n in names]
        t = _times(self.duration, self.rate if rate is None else positive_number(rate, "rate"))
        q, v, a = self.coefficients.evaluate(t)
        return JointTrajectoryArrays(names, t, q[:, cols], v[:, cols], a[:, cols])


def _times(duration, rate):
    n = int(np.floor(duration * rate + 1e-9))
    return np.arange(n + 1) / rate


def condition_number(W, nv):
    """cond(W) = sqrt(lambda_max / lambda_min) of W^T W, summed one sample's nv rows at a time
    (many small products: a large one is slowed down badly by BLAS threads on a busy machine);
    relative accuracy ~ 1e-16 cond^2, ample below cond ~ 1e6. inf when W loses rank."""
    W3 = W.reshape(-1, nv, W.shape[1])
    lam = np.linalg.eigvalsh(np.matmul(W3.transpose(0, 2, 1), W3).sum(axis=0))
    return float(np.sqrt(lam[-1] / lam[0])) if lam[0] > 1e-24 * lam[-1] else np.inf


def _at_rest_projection(x, harmonics):
    """Coefficients (nv, L) pairs with v(0) = sum_l a_l = 0 and a(0) ~ sum_l l b_l = 0."""
    a, b = x
    ell = np.arange(1, harmonics + 1)
    a = a - a.mean(axis=1, keepdims=True)
    b = b - np.outer(b @ ell, ell) / (ell @ ell)
    return a, b


def excitation_trajectory(model, duration, harmonics=5, base_frequency=0.1, q0=None,
                          margins=None, seed=0, acceleration_limit=None, rate=100.0,
                          start_at_rest=True, armature=False, samples=40, starts=4,
                          max_iterations=40):
    """A periodic Fourier-series excitation of ``model`` optimised for identification.

    Args:
        model: an ``ldr.Model`` whose joints are all revolute or prismatic.
        duration: length of the sampled trajectory, s; a whole number of periods
            (1 / ``base_frequency``) lets the data be averaged over periods.
        harmonics: L, the number of harmonics per joint.
        base_frequency: f (Hz); the period is 1 / f, the highest frequency L f.
        q0: (nv,) mean position; default the middle of each joint's range (0 without limits),
            optimised with the coefficients. A given q0 is kept.
        margins: share of each limit kept free, a fraction for all or a dict with keys
            "position" (of the range, at each end), "velocity", "acceleration" (of the
            limit); default ``DEFAULT_MARGINS``.
        seed: seed of the random starting guesses and of the states that find the base
            columns; the same seed gives the same trajectory.
        acceleration_limit: a number, (nv,) or {joint: value}, rad/s^2 or m/s^2; default
            ``DEFAULT_ACCELERATION_LIMIT``.
        rate: sampling rate of ``t, q, v, a`` (Hz).
        start_at_rest: v(0) = a(0) = 0 (linear constraints on the coefficients), so the motion
            starts from rest at q(0) and, being periodic, ends at rest.
        armature: also excite an armature (a_i) column per DOF, for identifying armature.
        samples: number of samples per period in the optimised condition number.
        starts: number of random guesses; the best is the optimiser's start.
        max_iterations: of the optimiser (SLSQP).

    The limits hold at every time, not only at samples: they are constraints at
    ``POINTS_PER_HARMONIC`` L points per period during the optimisation, then certified on the
    final series (``FourierSeries.extremes``), each joint's motion shrunk about q0 where
    needed. The condition numbers are those of the base regressor, unscaled (so they depend on
    the units), as in Swevers et al. 1997.
    """
    if not isinstance(model, Model):
        raise InputError(f"model must be an ldr.Model, got {type(model).__name__}")
    if model.nc:
        raise InputError(f"model {model.name!r} has loop closures {[c.name for c in model.loops]}"
                         ": its joints cannot move independently (excitation of trees only)")
    for name, kind in zip(model.joint_names, model.joint_kinds):
        if kind not in ("revolute", "prismatic"):
            raise InputError(f"joint {name!r} is {kind}: an excitation trajectory moves "
                             "revolute and prismatic joints only")
    duration = positive_number(duration, "duration")
    base_frequency = positive_number(base_frequency, "base_frequency")
    rate = positive_number(rate, "rate")
    counts = {}
    for name, val in (("harmonics", harmonics), ("samples", samples), ("starts", starts),
                      ("max_iterations", max_iterations)):
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < 1:
            raise InputError(f"{name} must be a positive integer, got {val!r}")
        counts[name] = int(val)
    L, nv = counts["harmonics"], model.nv
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise InputError(f"seed must be an integer, got {seed!r}")
    for name, val in (("start_at_rest", start_at_rest), ("armature", armature)):
        if not isinstance(val, (bool, np.bool_)):
            raise InputError(f"{name} must be True or False, got {val!r}")
    limits = joint_limits(model, margins, acceleration_limit)
    q0_fixed = q0 is not None
    q0 = _mean_position(model, limits, q0)
    rng = np.random.default_rng(seed)
    data = model.create_data()
    cols, _, _ = base_columns(model, True, armature)

    period = 1.0 / base_frequency
    t_obj = (np.arange(counts["samples"]) + 0.5) * period / counts["samples"]
    Bq, Bv, Ba = basis(t_obj, L, base_frequency)

    def series_of(x):
        C = x[:2 * L * nv].reshape(2 * L, nv)
        return FourierSeries(C[:L].T, C[L:].T, q0 if q0_fixed else x[2 * L * nv:],
                             base_frequency)

    def log_condition(x):
        s = series_of(x)
        C = s.stacked()
        W = stacked_regressor(model, Bq @ C + s.q0, Bv @ C, Ba @ C, True, armature,
                              data)[:, cols]
        return float(np.log(min(condition_number(W, nv), 1e12)))

    guesses = []
    for _ in range(counts["starts"]):
        ell = np.arange(1, L + 1)
        ab = rng.standard_normal((2, nv, L)) / ell
        if start_at_rest:
            ab = _at_rest_projection(ab, L)
        s = fit_to_limits(FourierSeries(ab[0], ab[1], q0, base_frequency), limits, False)
        x = np.concatenate([s.stacked().ravel(), [] if q0_fixed else q0])
        guesses.append((log_condition(x), x))
    x0 = min(guesses, key=lambda g: g[0])[1]

    G, h = limit_constraints(L, base_frequency, limits, q0, q0_fixed,
                              POINTS_PER_HARMONIC * L)
    cons = [{"type": "ineq", "fun": lambda x: G @ x + h, "jac": lambda x: G}]
    if start_at_rest:
        _, Bv0, Ba0 = basis([0.0], L, base_frequency)
        E = np.hstack([np.kron(np.vstack([Bv0, Ba0]), np.eye(nv)),
                       np.zeros((2 * nv, 0 if q0_fixed else nv))])
        cons.append({"type": "eq", "fun": lambda x: E @ x, "jac": lambda x: E})
    bounds = [(None, None)] * (2 * L * nv) + ([] if q0_fixed else [
        (lo if np.isfinite(lo) else None, hi if np.isfinite(hi) else None)
        for lo, hi in zip(limits.lower, limits.upper)])
    res = minimize(log_condition, x0, method="SLSQP", constraints=cons, bounds=bounds,
                   options={"maxiter": counts["max_iterations"], "ftol": 1e-4})
    initial = fit_to_limits(series_of(x0), limits, True)
    final = series_of(res.x if np.all(np.isfinite(res.x)) else x0)
    if start_at_rest:                    # exactly, not to the optimiser's tolerance
        final = FourierSeries(*_at_rest_projection((final.a, final.b), L), final.q0,
                              base_frequency)
    # SQP iterates may be infeasible between (or at) the constraint points: shrink each joint's
    # a, b until the certified extremes are within the limits (v(0) = a(0) = 0 survive)
    final = fit_to_limits(final, limits, True)

    t = _times(duration, rate)
    cond0 = condition_number(
        stacked_regressor(model, *initial.evaluate(t), True, armature, data)[:, cols], nv)
    q, v, a = final.evaluate(t)
    cond = condition_number(stacked_regressor(model, q, v, a, True, armature, data)[:, cols], nv)
    if not cond <= cond0:                # the optimiser stopped somewhere worse: keep the start
        final, cond = initial, cond0
        q, v, a = final.evaluate(t)
    return Excitation(model, final, duration, rate, _readonly(t), _readonly(q), _readonly(v),
                      _readonly(a), float(cond), float(cond0), limits, _readonly_index(cols))


def _mean_position(model, limits, q0):
    if q0 is None:
        mid = 0.5 * (limits.lower + limits.upper)
        return np.where(np.isfinite(mid), mid, 0.0)
    arr = np.asarray(q0, dtype=float)
    if arr.shape != (model.nq,) or not np.all(np.isfinite(arr)):
        raise InputError(f"q0 must be a finite ({model.nq},) array, got {np.shape(q0)}")
    for name, k in zip(model.joint_names, model.joint_v_index):
        if not limits.lower[k] <= arr[k] <= limits.upper[k]:
            raise InputError(f"q0 of joint {name!r} = {arr[k]} is outside "
                             f"[{limits.lower[k]}, {limits.upper[k]}] (limits with margins)")
    return arr


