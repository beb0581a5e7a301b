"""Orders of the Lie group integrators (Celledoni et al. 2021, §2, §4, §5).

Measured convergence slopes must be within +-0.3 of the theoretical order; every fit uses step
sizes where the error is far above round-off (checked).
"""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from examples import heavy_top, quadrotors, spherical_pendulum as pend  # noqa: E402
from lie_dynamics_ros.integrators import (  # noqa: E402
    CF3, CF4, CF32A, CF32B, CF43, TABLEAUS, CoadjointSO3, ProductSpace, S2Space, SE3Space,
    SO3Space, Tableau, TS2Space, VectorSpace, get_method, solve)
from lie_dynamics_ros.integrators import spaces as S  # noqa: E402
from lie_dynamics_ros.conventions import to_internal, to_public  # noqa: E402
from lie_dynamics_ros.lie import se3, so3  # noqa: E402


def slope(hs, errs):
    return float(np.polyfit(np.log(hs), np.log(errs), 1)[0])


# ----------------------------------------------------------------------------- tableaus
@pytest.mark.parametrize("name", sorted(TABLEAUS))
def test_tableau_order_conditions(name):
    t = TABLEAUS[name]
    assert t.check_order_conditions()
    # and not of the next order (the orders are sharp), except DOPRI5 checked up to 5 only
    if t.order < 5:
        assert t.order_conditions()[t.order + 1] > 1e-3


@pytest.mark.parametrize("scheme", [CF3, CF4, CF32A, CF32B, CF43], ids=lambda s: s.name)
def test_cf_underlying_classical_method(scheme):
    """a_r^k = sum_j alpha^k_{r,j}, b_r = sum_j beta^r_j give a classical method of the order."""
    a, b, bh = scheme.classical()
    tab = Tableau(scheme.name, a, b, a.sum(axis=1), scheme.order, bh, scheme.order_hat)
    assert tab.check_order_conditions()
    assert np.allclose(scheme.nodes[:len(b)], a.sum(axis=1))


# ----------------------------------------------------------------------------- spaces
def _random_state(sp, rng):
    if isinstance(sp, TS2Space):
        return sp.project(rng.normal(size=sp.size))
    if isinstance(sp, SO3Space):
        return so3.exp(rng.normal(size=3)).ravel()
    if isinstance(sp, SE3Space):
        return se3.exp(rng.normal(size=6)).ravel()
    if isinstance(sp, (S2Space,)):
        x = rng.normal(size=3)
        return x / np.linalg.norm(x)
    if isinstance(sp, ProductSpace):
        return np.concatenate([_random_state(s, rng) for s in sp.spaces])
    return rng.normal(size=sp.size)


SPACES = {
    "R4": lambda: VectorSpace(4),
    "SO3": SO3Space,
    "SE3": SE3Space,
    "S2": S2Space,
    "TS2x3": lambda: TS2Space(3),
    "coadjoint": CoadjointSO3,
    "product": lambda: ProductSpace(VectorSpace(6), SO3Space(), VectorSpace(3), SE3Space(),
                                    TS2Space(2)),
}


@pytest.mark.parametrize("name", sorted(SPACES))
def test_space_action_and_generator(name):
    """exp_act is an action (exp(0) = id, exp(s u) exp(t u) = exp((s+t) u)) whose derivative at
    0 is the generator, and it stays on the manifold."""
    sp = SPACES[name]()
    rng = np.random.default_rng(0)
    y = _random_state(sp, rng)
    u = rng.normal(size=sp.dim)
    assert np.allclose(sp.exp_act(np.zeros(sp.dim), y), y, atol=1e-15)
    assert np.allclose(sp.exp_act(0.3 * u, sp.exp_act(0.4 * u, y)), sp.exp_act(0.7 * u, y),
                       atol=1e-13)
    eps = 1e-6
    fd = (sp.exp_act(eps * u, y) - sp.exp_act(-eps * u, y)) / (2 * eps)
    assert np.allclose(fd, sp.generator(u, y), atol=1e-8)
    z = sp.exp_act(u, y)
    assert np.allclose(sp.project(z), z, atol=1e-13)


@pytest.mark.parametrize("name", sorted(SPACES))
def test_dexp_inv_exact_vs_series(name):
    """Exact dexp^-1 agrees with the 10-term Bernoulli series for small u, and the truncated
    series is the one of lie.so3 / lie.se3 (coefficients 1, -1/2, 1/12)."""
    sp = SPACES[name]()
    rng = np.random.default_rng(1)
    u, v = 0.05 * rng.normal(size=sp.dim), rng.normal(size=sp.dim)
    assert np.allclose(sp.dexp_inv(u, v), sp.dexp_inv(u, v, order=10), atol=1e-15, rtol=1e-13)
    if name == "SE3":
        U = rng.normal(size=6)
        for k in (0, 1, 2, 4):
            assert np.allclose(sp.dexp_inv(U, v, k), se3.dexp_inv(U, order=k) @ v, atol=1e-13)
        assert np.allclose(sp.dexp_inv(U, v), se3.dexp_inv(U) @ v, atol=1e-13)


def test_ts2_space_uses_lie_se3_copy_by_copy():
    """TS2Space's action and dexp^-1 (the compiled twin of lie.se3) are lie.se3's, per copy."""
    rng = np.random.default_rng(2)
    sp = TS2Space(7)
    for scale in (1e-4, 0.3, 0.6, 2.0, 3.0):
        X = scale * rng.normal(size=(7, 6))
        V = rng.normal(size=(7, 6))
        Y = _random_state(sp, rng).reshape(7, 6)
        act = sp.exp_act(X.ravel(), Y.ravel()).reshape(7, 6)
        D = sp.dexp_inv(X.ravel(), V.ravel()).reshape(7, 6)
        for k in range(7):   # TS2Space's copies are (angular, linear): to_public for lie.se3
            T = se3.exp(to_public(X[k]))
            A, a = T[:3, :3], T[:3, 3]
            q, w = A @ Y[k, :3], A @ Y[k, 3:]
            assert np.allclose(act[k], np.r_[q, w + np.cross(a, q)], atol=1e-13)
            assert np.allclose(D[k], to_internal(se3.dexp_inv(to_public(X[k])) @ to_public(V[k])),
                               atol=1e-12)


def test_ts2_action_is_adjoint_action():
    """psi((A, a), (q, w)) = (A q, A w + a x A q) is Ad of SE(3) on se(3) = R^6."""
    rng = np.random.default_rng(3)
    sp = TS2Space(1)
    y, u = _random_state(sp, rng), rng.normal(size=6)
    T = se3.exp(to_public(u))
    # the (q, w) pair plays (angular, linear): Ad_T in lie.se3's (linear, angular) order
    assert np.allclose(sp.exp_act(u, y), to_internal(se3.Ad(T) @ to_public(y)), atol=1e-13)


# ----------------------------------------------------------------------------- pendulum
@pytest.fixture(scope="module")
def pendulum_ref():
    p = pend.PendulumParams.uniform(2)
    y0 = pend.initial_condition(2)
    T = 1.0
    return p, y0, T, pend.reference_solution(p, y0, T).sol(T)


ORDER_CASES = [("lie_euler", 1, (200, 400, 800)), ("lie_euler_heun", 2, (200, 400, 800)),
               ("rkmk4", 4, (100, 200, 400)), ("rkmk4_trunc", 4, (100, 200, 400)),
               ("rkmk4_2c", 4, (100, 200, 400)), ("rkmk3", 3, (100, 200, 400)),
               ("cf3", 3, (100, 200, 400)), ("cf4", 4, (100, 200, 400)),
               ("rkmk5", 5, (50, 100, 200))]


@pytest.mark.parametrize("method,order,steps", ORDER_CASES, ids=[c[0] for c in ORDER_CASES])
def test_pendulum_orders(pendulum_ref, method, order, steps):
    """N = 2 spherical pendulum on (TS^2)^2, error at T = 1 vs strict DOP853 (Fig. 5)."""
    p, y0, T, ref = pendulum_ref
    hs, errs = [], []
    for n in steps:
        sol = solve(pend.space(2), pend.make_f(p), y0, (0.0, T), h=T / n, method=method)
        hs.append(T / n)
        errs.append(np.linalg.norm(sol.y[-1] - ref))
    assert min(errs) > 1e-10          # far above round-off and the reference's own error
    s = slope(hs, errs)
    assert abs(s - order) <= 0.3, (method, s, errs)


def test_embedded_error_estimates_have_their_order():
    """Local error estimate e(h) of each pair ~ h^(p~ + 1) (the controller relies on it)."""
    p = pend.PendulumParams.uniform(2)
    y0 = pend.initial_condition(2)
    sp, f = pend.space(2), pend.make_f(p)
    hs = np.array([0.04, 0.02, 0.01])
    for name in ("rkmk45", "cf32a", "cf32b", "cf43"):
        m = get_method(name)
        e = [np.linalg.norm(m.step(sp, f, 0.0, y0, h, embedded=True).err) for h in hs]
        assert abs(slope(hs, e) - (m.order_hat + 1)) <= 0.35, (name, slope(hs, e))


def test_adaptive_error_follows_tolerance():
    """RKMK(5,4) and CF 4(3): the global error decreases with tol, steps adapt, errors are
    within two orders of magnitude of tol."""
    p = pend.PendulumParams.uniform(2)
    y0 = pend.initial_condition(2)
    T = 1.0
    ref = pend.reference_solution(p, y0, T).sol(T)
    for name in ("rkmk45", "cf43", "cf32"):
        errs = []
        for tol in (1e-4, 1e-6):
            sol = solve(pend.space(2), pend.make_f(p), y0, (0, T), method=name, tol=tol)
            assert sol.t[-1] == pytest.approx(T)
            errs.append(np.linalg.norm(sol.y[-1] - ref))
            assert errs[-1] < 100 * tol, (name, tol, errs[-1])
        assert errs[1] < errs[0] / 5


# ----------------------------------------------------------------------------- heavy top
def test_heavy_top_symplectic_order_two():
    """SLGI theta = 1/2 on T*SO(3) converges with order 2 on [0, 1] (Fig. 2).

    The top spins at |w| ~ 150 rad/s, so the asymptotic regime needs h |w| << 1: h = 1/1000 ..
    1/4000 (errors 2e-2 .. 1.5e-3)."""
    top = heavy_top.HeavyTop()
    errs, hs, slopes = heavy_top.order_study(top, steps=(1000, 2000, 4000), thetas=(0.5,),
                                             kk=False)
    s = slopes["SLGI theta=0.5"]
    assert abs(s - 2.0) <= 0.3, (s, errs)


def test_heavy_top_theta_family_consistency():
    """theta = 0 and 1 are first-order, SLGIKK (T*(SO(3) x R^3)) matches SLGI to solver
    tolerance, and the free rigid body keeps its spatial momentum exactly (momentum map)."""
    top = heavy_top.HeavyTop()
    ref = heavy_top.reference(top, 0.05)
    Qr, pir = ref.y[:9, -1].reshape(3, 3), ref.y[9:, -1]
    for th in (0.0, 1.0):
        e = []
        for n in (400, 800):
            r = heavy_top.run_slgi(top, 0.05 / n, n, theta=th)
            e.append(heavy_top.state_error(r.g[-1], r.mu[-1], Qr, pir))
        assert abs(np.log2(e[0] / e[1]) - 1.0) <= 0.3, (th, e)
    a = heavy_top.run_slgi(top, 0.01, 20)
    b = heavy_top.run_slgikk(top, 0.01, 20)
    assert np.allclose(a.g[-1], b.g[-1][0], atol=1e-11)
    assert np.allclose(a.mu[-1], b.mu[-1][:3], atol=1e-9)
    free = heavy_top.HeavyTop(M=0.0)
    r = heavy_top.run_slgi(free, 0.01, 100)
    assert np.abs(r.mu - r.mu[0]).max() < 1e-11


def test_lie_poisson_sign():
    """Free rigid body on so(3)* with g.mu = g mu: f = -II^-1 mu reproduces Euler's equation
    Pi' = Pi x II^-1 Pi (Celledoni et al. 2021, Example 1) and keeps |Pi| to round-off."""
    from scipy.integrate import solve_ivp
    II_inv = np.diag([1.0, 0.5, 1 / 3])
    mu0 = np.array([1.0, 0.5, -0.3])
    sol = solve(CoadjointSO3(), lambda t, m: -II_inv @ m, mu0, (0, 2), h=0.01, method="rkmk4")
    ref = solve_ivp(lambda t, m: np.cross(m, II_inv @ m), (0, 2), mu0, rtol=1e-12, atol=1e-12)
    assert np.linalg.norm(sol.y[-1] - ref.y[:, -1]) < 1e-8
    assert np.ptp(np.linalg.norm(sol.y, axis=1)) < 1e-13


# ----------------------------------------------------------------------------- quadrotors
def test_quadrotor_orders():
    """RKMK4 (both variants) order 4, RKMK3 order 3 on R^6 x (TSO(3))^2 x (TS^2)^2 (Fig. 13)."""
    hs, errs, slopes = quadrotors.convergence(steps=(20, 40, 80),
                                              methods=("rkmk4", "rkmk4_2c", "rkmk3"))
    for m, p in (("rkmk4", 4), ("rkmk4_2c", 4), ("rkmk3", 3)):
        assert min(errs[m]) > 1e-10
        assert abs(slopes[m] - p) <= 0.3, (m, slopes[m], errs[m])
