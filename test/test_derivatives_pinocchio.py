"""Analytic derivatives against Pinocchio's computeRNEADerivatives / computeABADerivatives.

Robots and states are those of test_pinocchio_agreement.py (fixed AND floating base, joints
matched by name through test/oracle.py). q-derivatives are in the tangent space on both sides
(a free joint perturbed as q exp(delta)), so the comparison is T^T D_pin T with T the name
permutation. Robots whose coordinates Pinocchio maps non-linearly (planar joints) or that have
mimic joints (which Pinocchio's derivatives do not take) are checked against central finite
differences on the manifold instead. Tolerance: 1e-9 relative (``rel_err`` of oracle.py).
"""
from __future__ import annotations

import numpy as np
import pytest

import pinocchio as pin

import lie_dynamics_ros as ldr
from oracle import rel_err
from test_pinocchio_agreement import ROBOTS, _setup, _singular, _states

TOL = 1e-9
FD_TOL = 1e-6
WORST: dict = {}   # quantity -> largest relative deviation from Pinocchio (printed with -s)


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    if WORST:
        print("\nlargest relative deviation from Pinocchio: "
              + ", ".join("%s %.1e" % kv for kv in sorted(WORST.items())))


def _check(name, x, y, what):
    err = np.linalg.norm(x - y) / max(1.0, np.linalg.norm(y))
    WORST[name] = max(WORST.get(name, 0.0), err)
    assert err <= TOL, "%s %s: relative deviation %.2e" % (what, name, err)
NOT_PIN = {"mixed_joints", "panda", "talos_full", "romeo", "baxter", "pr2"}

PIN_CASES = [pytest.param(rid, g, fb, id="%s-%s" % (rid, "floating" if fb else "fixed"))
             for rid, g, _ in ROBOTS if rid not in NOT_PIN for fb in (False, True)]
FD_CASES = [pytest.param(rid, g, fb, id="%s-%s" % (rid, "floating" if fb else "fixed"))
            for rid, g, _ in ROBOTS if rid in NOT_PIN for fb in (False, True)]


def _pin_rnea_derivatives(oracle, q, v, a, fext=None):
    qp, vp, ap = oracle._qva(q, v, a)
    T = oracle.map.T(q)
    if fext is None:
        d = pin.computeRNEADerivatives(oracle.pm, oracle.pd, qp, vp, ap)
    else:
        d = pin.computeRNEADerivatives(oracle.pm, oracle.pd, qp, vp, ap, oracle.fext_pin(fext))
    M = oracle._crba_pin(qp)
    return T.T @ d[0] @ T, T.T @ d[1] @ T, T.T @ M @ T


@pytest.mark.parametrize("rid,getter,fb", PIN_CASES)
def test_inverse_dynamics_derivatives(rid, getter, fb):
    path, model, oracle = _setup(rid, getter, fb)
    for q, v, a in _states(model, rid, fb):
        ours = ldr.inverse_dynamics_derivatives(model, q, v, a)
        ref = _pin_rnea_derivatives(oracle, q, v, a)
        for name, x, y in zip(("dtau_dq", "dtau_dv", "M"), ours, ref):
            _check(name, x, y, rid)


@pytest.mark.parametrize("rid,getter,fb", PIN_CASES[:4])
def test_inverse_dynamics_derivatives_with_external_wrenches(rid, getter, fb):
    path, model, oracle = _setup(rid, getter, fb)
    rng = np.random.default_rng(7)
    q, v, a = _states(model, rid, fb, n=1)[0]
    F = {name: rng.normal(size=6) for name in model.body_names}
    ours = ldr.inverse_dynamics_derivatives(model, q, v, a, f_ext=F)
    ref = _pin_rnea_derivatives(oracle, q, v, a, F)
    for name, x, y in zip(("dtau_dq f_ext", "dtau_dv f_ext", "M f_ext"), ours, ref):
        _check(name, x, y, rid)


@pytest.mark.parametrize("rid,getter,fb", PIN_CASES)
def test_forward_dynamics_derivatives(rid, getter, fb):
    path, model, oracle = _setup(rid, getter, fb)
    for q, v, a in _states(model, rid, fb):
        tau = ldr.inverse_dynamics(model, q, v, a)
        if _singular(oracle, q):
            with pytest.raises(ldr.InputError, match="singular"):
                ldr.forward_dynamics_derivatives(model, q, v, tau)
            continue
        da_dq, da_dv, Minv = ldr.forward_dynamics_derivatives(model, q, v, tau)
        qp, vp, _ = oracle._qva(q, v)
        T = oracle.map.T(q)
        d = pin.computeABADerivatives(oracle.pm, oracle.pd, qp, vp, T @ tau)
        for name, x, y in zip(("da_dq", "da_dv", "Minv"), (da_dq, da_dv, Minv), d):
            _check(name, x, T.T @ np.asarray(y) @ T, rid)


def _fd_tangent(model, f, q, h=1e-6):
    cols = []
    for k in range(model.nv):
        e = np.zeros(model.nv)
        e[k] = h
        cols.append((f(ldr.integrate(model, q, e)) - f(ldr.integrate(model, q, -e))) / (2 * h))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("rid,getter,fb", FD_CASES)
def test_inverse_dynamics_derivatives_finite_differences(rid, getter, fb):
    """Mimic joints and planar joints: central differences on the manifold."""
    path, model, oracle = _setup(rid, getter, fb)
    q, v, a = _states(model, rid, fb, n=1)[0]
    dq, dv, M = ldr.inverse_dynamics_derivatives(model, q, v, a)
    tau = lambda qq: ldr.inverse_dynamics(model, qq, v, a)  # noqa: E731
    scale = max(1.0, np.linalg.norm(dq))
    assert np.linalg.norm(dq - _fd_tangent(model, tau, q)) <= FD_TOL * scale
    h = 1e-6
    fd_v = np.stack([(ldr.inverse_dynamics(model, q, v + h * e, a)
                      - ldr.inverse_dynamics(model, q, v - h * e, a)) / (2 * h)
                     for e in np.eye(model.nv)], axis=1)
    assert np.linalg.norm(dv - fd_v) <= FD_TOL * max(1.0, np.linalg.norm(dv))
    assert rel_err(M, ldr.mass_matrix(model, q)) <= 1e-12
