"""The public single-state calls reach their compiled entries (the tree kernels', and those on
the Data's buffer for other models) through numba's raw entry point
(``_inputs.compile_entry`` keeps it), which converts its arguments without checking their
layout: the calls admit float64 ndarrays of ndim 1 only, and the entries return BAD_SIZE for a
strided, reversed or Fortran-ordered array (``kernels.views.c_strides``) instead of reading it
as a contiguous one. Every other form of the same state gives the bits of a contiguous float64
one."""
import numba
import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms import _inputs
from lie_dynamics_ros.algorithms import derivatives as AD
from lie_dynamics_ros.algorithms.tree_plan import tree_plan
from lie_dynamics_ros.kernels import derivatives_plan as KDP
from lie_dynamics_ros.kernels import layout as L
from lie_dynamics_ros.kernels import plan as KP
from lie_dynamics_ros.kernels import tree_aba as TA
from lie_dynamics_ros.kernels import tree_crba as TC
from lie_dynamics_ros.kernels import tree_derivatives as TD
from lie_dynamics_ros.kernels import tree_rnea as KR
from lie_dynamics_ros.kernels.views import c_strides
from models import zoo
import test_batch_soa as S
import test_batch_soa_free as F


def robot(name):
    return F.model(name) if name in F.PATHS else S.model(name)


def state(m, seed=0):
    Q, V, A = S.states(m, 1, seed)
    return Q[0], V[0], A[0]


# entry name -> (ready flags, dispatcher, number of input vectors, output shape, public call)
ENTRIES = {
    "inverse_dynamics": (_inputs.tree_ready, KR.inverse_dynamics, 3, "v",
                         lambda m, q, v, a: ldr.inverse_dynamics(m, q, v, a)),
    "nonlinear": (_inputs.tree_ready, KR.nonlinear, 2, "v",
                  lambda m, q, v, a: ldr.nonlinear_effects(m, q, v)),
    "gravity": (_inputs.tree_ready, KR.gravity, 1, "v",
                lambda m, q, v, a: ldr.gravity_torques(m, q)),
    "mass_matrix": (_inputs.tree_ready, TC.mass_matrix, 1, "vv",
                    lambda m, q, v, a: ldr.mass_matrix(m, q)),
    "forward_dynamics": (_inputs.tree_ready, TA.forward_dynamics, 3, "v",
                         lambda m, q, v, a: ldr.forward_dynamics(m, q, v, a)),
    "inverse_dynamics_derivatives": (AD.tree_ready, TD.inverse_dynamics_derivatives, 3, "3vv",
                                     lambda m, q, v, a: np.stack(
                                         ldr.inverse_dynamics_derivatives(m, q, v, a))),
    "forward_dynamics_derivatives": (AD.tree_ready, TD.forward_dynamics_derivatives, 3, "3vv",
                                     lambda m, q, v, a: np.stack(
                                         ldr.forward_dynamics_derivatives(m, q, v, a))),
}


def out_for(m, kind):
    n = m.nv
    return np.full({"v": (n,), "vv": (n, n), "3vv": (3, n, n)}[kind], -7.0)


def strided(x):
    """x's values in a view with twice the stride."""
    return np.repeat(x, 2)[::2]


def reversed_view(x):
    """x's values in a view with a negative stride."""
    return x[::-1].copy()[::-1]


@pytest.mark.parametrize("name", ["arm7", "go2"])
@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_raw_entry_gives_the_dispatchers_bits_and_refuses_strides(name, entry):
    flags, fn, nin, kind, public = ENTRIES[entry]
    m = robot(name)
    q, v, a = state(m, 3)
    public(m, q, v, a)                          # compiles the entry, keeps its entry point
    raw = getattr(flags, entry)
    assert callable(raw) and raw is not fn
    P = tree_plan(m)
    args = (q, v, a)[:nin]
    ref, got = out_for(m, kind), out_for(m, kind)
    assert fn(P, *args, ref) == L.OK
    assert raw(P, *args, got) == L.OK
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(got, public(m, q, v, a))
    for k in range(nin):
        for view in (strided, reversed_view):
            bad = list(args)
            bad[k] = view(bad[k])
            np.testing.assert_array_equal(bad[k], args[k])
            out = out_for(m, kind)
            assert raw(P, *bad, out) == L.BAD_SIZE, (k, view.__name__)
            assert (out == -7.0).all()          # nothing written
    if kind != "v":                             # an output in Fortran order (or transposed)
        out = np.asfortranarray(out_for(m, kind))
        assert raw(P, *args, out) == L.BAD_SIZE
    short = list(args)
    short[0] = short[0][:-1]
    assert raw(P, *short, out_for(m, kind)) == L.BAD_SIZE


@pytest.mark.parametrize("name", ["xarm7", "go2"])
@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_every_form_of_a_state_gives_the_contiguous_bits(name, entry):
    """Strided and reversed views and read-only arrays (the guard lets them reach the raw
    entry, which refuses the views: the checked path copies them), int64, float32 and
    big-endian float64 arrays, (n, 1) columns and lists (the guard sends them to the checked
    path) give the bits of contiguous float64 vectors."""
    _, _, nin, _, public = ENTRIES[entry]
    m = robot(name)
    q, v, a = state(m, 5)
    ref = public(m, q, v, a)

    def readonly(x):
        y = x.copy()
        y.flags.writeable = False
        return y

    forms = (strided, reversed_view, readonly, lambda x: x.reshape(-1, 1), list,
             lambda x: x.astype(">f8"))
    for k in range(nin):
        for form in forms:
            args = [q, v, a]
            args[k] = form(args[k])
            np.testing.assert_array_equal(public(m, *args), ref)
    # integer and single-precision vectors: converted (their values, not their bytes)
    qi = np.round(q).astype(np.int64) if name == "xarm7" else None
    if qi is not None:
        np.testing.assert_array_equal(public(m, qi, v, a), public(m, qi.astype(float), v, a))
        np.testing.assert_array_equal(public(m, q.astype(np.float32), v, a),
                                      public(m, q.astype(np.float32).astype(float), v, a))


@numba.njit(cache=False)
def _c_strides(x):
    return c_strides(x)


def test_c_strides_matches_numpys_c_contiguity():
    """Numpy's flag with relaxed strides: a dimension of one element may have any stride."""
    base = np.arange(48.0)
    cases = [base, base[::2], base[::-1], base[:1], base[::7][:1], base[:0],
             base.reshape(6, 8), base.reshape(6, 8)[:, ::2], base.reshape(6, 8)[::2],
             base.reshape(6, 8).T, np.asfortranarray(base.reshape(6, 8)),
             base.reshape(6, 8)[:1], base.reshape(6, 8)[:, :1], base.reshape(8, 6)[:, 2:3],
             base.reshape(3, 4, 4), base.reshape(3, 4, 4)[:, ::2], base.reshape(3, 4, 4)[1:2],
             base.reshape(3, 4, 4).transpose(1, 0, 2), base.reshape(3, 4, 4)[:, :, ::-1]]
    for x in cases:
        assert _c_strides(x) == x.flags.c_contiguous, (x.shape, x.strides)


# the entries on the Data's buffer (kernels/plan.py, derivatives_plan.py), which models the
# tree kernels do not serve take: entry name -> (ready flags, dispatcher, inputs, output, call)
PLAN_ENTRIES = {
    "inverse_dynamics": (_inputs.ready, KP.inverse_dynamics, 3, "v",
                         lambda m, q, v, a: ldr.inverse_dynamics(m, q, v, a)),
    "forward_dynamics": (_inputs.ready, KP.forward_dynamics, 3, "v",
                         lambda m, q, v, a: ldr.forward_dynamics(m, q, v, a)),
    "mass_matrix": (_inputs.ready, KP.mass_matrix, 1, "vv",
                    lambda m, q, v, a: ldr.mass_matrix(m, q)),
    "inverse_dynamics_derivatives": (AD.ready, KDP.inverse_dynamics_derivatives, 3, "3vv",
                                     ENTRIES["inverse_dynamics_derivatives"][4]),
    "forward_dynamics_derivatives": (AD.ready, KDP.forward_dynamics_derivatives, 3, "3vv",
                                     ENTRIES["forward_dynamics_derivatives"][4]),
}


@pytest.mark.parametrize("entry", sorted(PLAN_ENTRIES))
def test_plan_entries_too(entry):
    """A tree with ball, universal and planar joints under a floating base (no tree plan):
    the raw entry point gives the dispatcher's bits and refuses strided vectors, and every
    form of a state gives the contiguous bits."""
    flags, fn, nin, kind, public = PLAN_ENTRIES[entry]
    m = zoo(1, mimic=False)
    assert tree_plan(m) is None
    rng = np.random.default_rng(2)
    q = np.asarray(ldr.random_configuration(m, rng), dtype=float)
    v, a = rng.normal(size=m.nv), rng.normal(size=m.nv)
    ref = public(m, q, v, a)
    raw, buf = getattr(flags, entry), m.default_data().buf
    assert callable(raw) and raw is not fn
    args = (q, v, a)[:nin]
    got, disp = out_for(m, kind), out_for(m, kind)
    assert fn(buf, *args, disp) == L.OK and raw(buf, *args, got) == L.OK
    np.testing.assert_array_equal(got, disp)
    np.testing.assert_array_equal(got, ref)
    for k in range(nin):
        for view in (strided, reversed_view):
            bad = list(args)
            bad[k] = view(bad[k])
            out = out_for(m, kind)
            assert raw(buf, *bad, out) == L.BAD_SIZE, (k, view.__name__)
            assert (out == -7.0).all()
            full = [q, v, a]
            full[k] = view(full[k])
            np.testing.assert_array_equal(public(m, *full), ref)
    if kind != "v":
        assert raw(buf, *args, np.asfortranarray(out_for(m, kind))) == L.BAD_SIZE
