"""Geodesics of the kinetic-energy metric: minimum-energy point-to-point motions (Park, Bobrow &
Ploen 1995, §6: the objective J = int sum m_ij qd_i qd_j dt, whose minimizers are the geodesics
of the metric M(q)).

``geodesic(model, q0, q1, duration)`` solves the boundary-value problem

    M(q) qdd + C(q, qd) qd = 0,   q(0) = q0,   q(duration) = q1

(no gravity, no torque, no joint friction) by collocation (scipy's ``solve_bvp``, a 4th-order
Lobatto IIIa method on an adaptive mesh), with the analytic Jacobians of forward dynamics
(Kim 2012, Table 6). ``tol`` bounds the collocation residual relative to 1 + |f| on every
interval, ``bc_tol`` the end-point error (rad or m). A solution is then checked for conjugate
points: the Jacobi field J(t) = dq(t)/dqd(0) (the variational equation along the solution,
the same Jacobians) must stay regular on (0, duration]; where det J(t) changes sign the motion
is a geodesic but no longer a minimum of the energy (do Carmo 1992, ch. 5), and
``GeodesicError`` says so. A failed solve is retried with the goal moved part of the way
(continuation, each solution seeding the next); ``GeodesicError`` also says when that fails.

``path_action(model, t, q, v)`` is Park's objective for any sampled motion (Simpson's rule).
"""
from dataclasses import dataclass

import numpy as np

from ..errors import GeodesicError, InputError
from .curvature import finite_vector, require_coordinates
from .derivatives import forward_dynamics_derivatives
from .dynamics import forward_dynamics, inverse_dynamics, mass_matrix


@dataclass(frozen=True)
class Geodesic:
    """A geodesic sampled at ``t`` (N,): ``q``, ``v``, ``a`` (N, nv) with a = FD(q, v, 0)
    without gravity. ``energy`` (N,) is 1/2 v^T M v (constant in theory), ``action`` Park's
    int v^T M v dt. ``endpoint_error`` = max |q(0) - q0|, |q(T) - q1|; ``residual`` the largest
    |M qdd + C qd| (N m) on the grid, qdd the derivative of the interpolated v;
    ``collocation_residual`` the solver's largest relative residual (<= tol);
    ``energy_drift`` = (max - min) / mean of ``energy``."""
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    energy: np.ndarray
    action: float
    endpoint_error: float
    residual: float
    collocation_residual: float
    energy_drift: float
    nodes: int


def path_action(model, t, q, v):
    """int_0^T v^T M(q) v dt (Park's minimum-energy objective) by Simpson's rule on the samples
    t (N,), q (N, nq), v (N, nv); N odd for Simpson's order (else the last interval is
    trapezoidal)."""
    from scipy.integrate import simpson
    t = np.asarray(t, dtype=float)
    q, v = np.atleast_2d(np.asarray(q, float)), np.atleast_2d(np.asarray(v, float))
    if t.ndim != 1 or q.shape != (len(t), model.nq) or v.shape != (len(t), model.nv):
        raise InputError(f"t (N,), q (N, {model.nq}), v (N, {model.nv}) expected, got "
                         f"{t.shape}, {q.shape}, {v.shape}")
    M = mass_matrix(model, q)
    return float(simpson(np.einsum("ni,nij,nj->n", v, M, v), x=t))


def _metric_model(model):
    return model.with_gravity((0.0, 0.0, 0.0))


def geodesic(model, q0, q1, duration, num=101, tol=1e-6, bc_tol=1e-9, nodes=21,
             max_nodes=5000, check_conjugate=True, guess=None, continuation=6):
    """The geodesic from q0 to q1 in ``duration`` s, sampled at ``num`` uniform times; a
    ``Geodesic``. The first guess is ``guess`` (a Geodesic or (t, q, v) samples over
    [0, duration]) or the straight joint-space line. When a solve fails, the goal is first
    moved part of the way (halving the step, at most ``continuation`` times in all) and each
    solution seeds the next. Raises ``GeodesicError`` when the collocation does not converge
    within ``tol``/``bc_tol`` and ``max_nodes`` or when a conjugate point lies before the end
    (``check_conjugate``), ``InputError`` on bad input (free, ball or General joints and loop
    closures included)."""
    require_coordinates(model, "a geodesic")
    n = model.nv
    q0, q1 = finite_vector(q0, model.nq, "q0"), finite_vector(q1, model.nq, "q1")
    T = float(duration) if np.ndim(duration) == 0 else np.nan
    if not (np.isfinite(T) and T > 0):
        raise InputError(f"duration must be a finite number > 0, got {duration!r}")
    if int(num) < 2 or int(nodes) < 2 or int(continuation) < 0:
        raise InputError("num and nodes must be at least 2, continuation at least 0")
    if not (0 < tol < 1 and 0 < bc_tol < 1):
        raise InputError("tol and bc_tol must lie in (0, 1)")
    m0 = _metric_model(model)
    # continuation on the goal q0 + s (q1 - q0): solved up to s = `done` (s = 0: resting at
    # q0); each try shifts the last solution (or the given guess) linearly onto its goal
    tm = np.linspace(0.0, T, int(nodes))
    y = np.vstack([np.repeat(q0[:, None], len(tm), axis=1), np.zeros((n, len(tm)))])
    first = None if guess is None else _initial_guess(guess, model, T)
    done, s, halvings = 0.0, 1.0, 0
    while True:
        goal = q0 + s * (q1 - q0)
        t_try, y_try = first if first is not None else (tm, y)
        shift = goal - y_try[:n, -1]
        y_try = y_try + np.vstack([np.outer(shift, t_try / T),
                                   np.repeat((shift / T)[:, None], len(t_try), axis=1)])
        first = None
        try:
            sol = _collocate(m0, q0, goal, t_try, y_try, T, tol, bc_tol, max_nodes)
        except GeodesicError:
            halvings += 1
            if halvings > int(continuation):
                raise
            s = 0.5 * (done + s)
            continue
        if s == 1.0:
            break
        done, tm, y, s = s, sol.x, sol.y, 1.0
    return _result(model, m0, sol, q0, q1, T, int(num), bc_tol, check_conjugate)


def _collocate(m0, q0, q1, tm, y0, T, tol, bc_tol, max_nodes):
    """scipy's solve_bvp on y = (q, v), f = (v, FD(q, v, 0)) with the analytic Jacobians."""
    from scipy.integrate import solve_bvp
    n = m0.nv

    def fun(t, y):
        Q, V = np.ascontiguousarray(y[:n].T), np.ascontiguousarray(y[n:].T)
        return np.vstack([y[n:], forward_dynamics(m0, Q, V, np.zeros_like(V)).T])

    def fun_jac(t, y):
        Q, V = np.ascontiguousarray(y[:n].T), np.ascontiguousarray(y[n:].T)
        dq, dv, _ = forward_dynamics_derivatives(m0, Q, V, np.zeros_like(V))
        out = np.zeros((2 * n, 2 * n, y.shape[1]))
        out[:n, n:] = np.eye(n)[:, :, None]
        out[n:, :n], out[n:, n:] = dq.transpose(1, 2, 0), dv.transpose(1, 2, 0)
        return out

    def bc(ya, yb):
        return np.r_[ya[:n] - q0, yb[:n] - q1]

    def bc_jac(ya, yb):
        Ja, Jb = np.zeros((2 * n, 2 * n)), np.zeros((2 * n, 2 * n))
        Ja[:n, :n], Jb[n:, :n] = np.eye(n), np.eye(n)
        return Ja, Jb

    try:
        sol = solve_bvp(fun, bc, tm, y0, fun_jac=fun_jac, bc_jac=bc_jac, tol=tol,
                        bc_tol=bc_tol, max_nodes=max_nodes)
    except (FloatingPointError, InputError, np.linalg.LinAlgError) as e:
        raise GeodesicError(f"the geodesic from q0 to q1 in {T:g} s diverged ({e}); a shorter "
                            "motion or a via point may help") from e
    if sol.status != 0:
        raise GeodesicError(f"no geodesic from q0 to q1 in {T:g} s within tol={tol:g}: "
                            f"{sol.message} (residual {np.max(sol.rms_residuals):.3g}, "
                            f"{sol.x.size} nodes)")
    return sol


def _result(model, m0, sol, q0, q1, T, num, bc_tol, check_conjugate):
    n = model.nv
    t = np.linspace(0.0, T, num)
    y, yd = sol.sol(t), sol.sol(t, 1)
    q, v = np.ascontiguousarray(y[:n].T), np.ascontiguousarray(y[n:].T)
    a = forward_dynamics(m0, q, v, np.zeros_like(v))
    M = mass_matrix(model, q)
    energy = 0.5 * np.einsum("ni,nij,nj->n", v, M, v)
    residual = float(np.abs(inverse_dynamics(m0, q, v, np.ascontiguousarray(yd[n:].T))).max())
    endpoint = float(max(np.abs(q[0] - q0).max(), np.abs(q[-1] - q1).max()))
    if endpoint > bc_tol * 10:
        raise GeodesicError(f"the geodesic misses its end points by {endpoint:.3g} (bc_tol "
                            f"{bc_tol:g})")
    if check_conjugate:
        _no_conjugate_point(m0, sol, n, T)
    mean = float(energy.mean())
    drift = float(np.ptp(energy) / mean) if mean > 0 else 0.0
    return Geodesic(t=t, q=q, v=v, a=a, energy=energy, action=path_action(model, t, q, v),
                    endpoint_error=endpoint, residual=residual,
                    collocation_residual=float(np.max(sol.rms_residuals)), energy_drift=drift,
                    nodes=int(sol.x.size))


def _initial_guess(guess, model, T):
    """(mesh, y) from a Geodesic or a (t, q, v) triple spanning [0, T]."""
    t, q, v = (guess.t, guess.q, guess.v) if isinstance(guess, Geodesic) else guess
    t, q, v = np.asarray(t, float), np.asarray(q, float), np.asarray(v, float)
    if (t.ndim != 1 or len(t) < 2 or q.shape != (len(t), model.nq) or v.shape != (len(t), model.nv)
            or not np.all(np.isfinite(q)) or not np.all(np.isfinite(v))):
        raise InputError(f"guess must be a Geodesic or finite (t (N,), q (N, {model.nq}), "
                         f"v (N, {model.nv}))")
    if not (abs(t[0]) <= 1e-9 * T and abs(t[-1] - T) <= 1e-9 * T and np.all(np.diff(t) > 0)):
        raise InputError(f"guess must span t = 0 .. {T:g} with increasing times")
    t = t.copy()
    t[0], t[-1] = 0.0, T
    return t, np.vstack([q.T, v.T])


def _no_conjugate_point(m0, sol, n, T, samples=200):
    """GeodesicError when det dq(t)/dqd(0) changes sign on (0, T] along the solution
    (Jacobi equation: Phi' = Psi, Psi' = A_q Phi + A_v Psi, Phi(0) = 0, Psi(0) = 1)."""
    from scipy.integrate import solve_ivp

    def rhs(t, z):
        y = sol.sol(t)
        dq, dv, _ = forward_dynamics_derivatives(m0, y[:n], y[n:], np.zeros(n))
        Phi, Psi = z[:n * n].reshape(n, n), z[n * n:].reshape(n, n)
        return np.r_[Psi.ravel(), (dq @ Phi + dv @ Psi).ravel()]

    z0 = np.r_[np.zeros(n * n), np.eye(n).ravel()]
    ts = np.linspace(0.0, T, samples + 1)[1:]
    r = solve_ivp(rhs, (0.0, T), z0, t_eval=ts, rtol=1e-8, atol=1e-12)
    if not r.success:
        raise GeodesicError(f"the Jacobi equation along the geodesic failed: {r.message}")
    dets = np.array([np.linalg.det(r.y[:n * n, k].reshape(n, n) / tk)
                     for k, tk in enumerate(ts)])
    bad = np.flatnonzero(dets <= 0)
    if bad.size:
        raise GeodesicError(
            f"conjugate point at t = {ts[bad[0]]:.4g} s of {T:g} s: the geodesic through q0 and "
            "q1 is not a minimum of the kinetic energy (the motion is too long on a positively "
            "curved region); split it with a via point")
