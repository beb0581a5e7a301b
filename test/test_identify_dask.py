"""``identify`` past one process: the chunked path (an iterable of chunks, bounded memory)
and the Dask path (dask arrays or ``client=``, regressor blocks per row chunk reduced by
``dask.array.linalg.tsqr``) give the parameters of the one-shot fit, and the same errors.

The one-shot fit is the in-memory ``identify`` with a single chunk, i.e. one QR of all the
rows; the others reduce the same rows in other groupings, so the reduced problems agree to
round-off and the base parameters (what the data determine) to 1e-8 (measured: 3e-11). The
physical parameters agree to 1e-8 absolute or 1e-7 relative (measured: 1.4e-8 at most, on a
product of inertia of 1.4e-5 kg m^2): along the combinations no torque shows (a base body's
mass), only the prior's curvature (~prior_weight, against the data's ~N) holds them, so
round-off in the data term moves the minimum there by ~1e-8; the solver's tolerances are
near round-off (``identify.SOLVER_TOL``) so that it stops at that minimum (with the earlier
1e-10 it stopped up to 5e-7 away).
"""
import numpy as np
import pytest

import lie_dynamics_ros as ldr
import dask.array as da                 # setup.py's "test" extra: never skipped
from distributed import Client, LocalCluster
from lie_dynamics_ros.identification.reduction import REST_SPEED, reduce_block
from lie_dynamics_ros.identification.regressors import stacked_regressor
from test_identify import ROBOTS, measured, perturbed, sines

TOL = 1e-8
N = 1200


@pytest.fixture(scope="module")
def client():
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None, memory_limit="1GiB")
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def data():
    cad = ldr.load_urdf(ROBOTS["arm7"])
    rng = np.random.default_rng(3)
    true = perturbed(cad, rng)
    q, v, a = sines(cad, N, 30.0, seed=4)
    return cad, q, v, a, measured(true, q, v, a, rng)


@pytest.fixture(scope="module")
def one_shot(data):
    cad, *arrays = data
    return ldr.identify(cad, *arrays, chunk=N)


def _theta(res):
    return np.concatenate([ldr.inertial_parameters(res.model), res.model.joint_damping,
                           res.model.joint_friction])


def _same(res, ref):
    np.testing.assert_allclose(res.report.base_values, ref.report.base_values, rtol=0,
                               atol=TOL)
    np.testing.assert_allclose(_theta(res), _theta(ref), rtol=1e-7, atol=TOL)
    # the residual follows the physical parameters: 2e-9 relative seen
    np.testing.assert_allclose(res.report.rms_residual, ref.report.rms_residual, rtol=1e-8)
    assert res.report.rank == ref.report.rank and res.report.n_samples == N
    np.testing.assert_array_equal(res.report.at_rest, ref.report.at_rest)


def test_the_fit_is_a_real_one(data, one_shot):
    cad, q, v, a, tau = data
    rms = np.sqrt(np.mean((one_shot.predict(q, v, a) - tau) ** 2, axis=0))
    cad_rms = np.sqrt(np.mean((ldr.inverse_dynamics(cad, q, v, a) - tau) ** 2, axis=0))
    assert np.all(rms < 0.2 * cad_rms), (rms, cad_rms)


def test_factors_give_each_joints_least_squares_function(data):
    cad, q, v, a, tau = data
    W = stacked_regressor(cad, q[:300], v[:300], a[:300], True, False)
    x = np.random.default_rng(0).standard_normal(W.shape[1])
    err2 = ((W @ x).reshape(300, -1) - tau[:300]) ** 2
    red = reduce_block(cad, q[:300], v[:300], a[:300], tau[:300], True, False, rest_speed=0)
    np.testing.assert_allclose(red.joint_residuals(x), err2.sum(axis=0), rtol=1e-9)
    # the rows of joints at rest are out of the function, and counted
    slow = np.abs(v[:300]) < REST_SPEED
    assert slow.any()
    red = reduce_block(cad, q[:300], v[:300], a[:300], tau[:300], True, False)
    np.testing.assert_allclose(red.joint_residuals(x), np.where(slow, 0, err2).sum(axis=0),
                               rtol=1e-9)
    np.testing.assert_array_equal(red.n_rows, 300 - slow.sum(axis=0))


@pytest.mark.parametrize("chunk", [97, 500])
def test_chunked_in_memory_equals_one_shot(data, one_shot, chunk):
    cad, *arrays = data
    _same(ldr.identify(cad, *arrays, chunk=chunk), one_shot)


def test_an_iterable_of_chunks_equals_one_shot(data, one_shot):
    cad, *arrays = data
    bounds = [0, 1, 250, 700, 701, N]                   # uneven, one of a single sample
    chunks = ([x[lo:hi] for x in arrays] for lo, hi in zip(bounds, bounds[1:]))
    _same(ldr.identify_chunks(cad, chunks), one_shot)


def test_dask_arrays_on_a_local_cluster_equal_one_shot(client, data, one_shot):
    cad, *arrays = data
    dq, dv, dA, dt = (da.from_array(x, chunks=(300, -1)) for x in arrays)
    _same(ldr.identify(cad, dq, dv, dA, dt), one_shot)    # the client is the default


def test_client_with_numpy_arrays_equals_one_shot(client, data, one_shot):
    cad, *arrays = data
    _same(ldr.identify(cad, *arrays, client=client, chunk=400), one_shot)


def test_without_friction_columns_the_paths_agree_too(client, data):
    cad, *arrays = data
    ref = ldr.identify(cad, *arrays, friction=False, chunk=N)
    dask_arrays = [da.from_array(x, chunks=(600, -1)) for x in arrays]
    _same(ldr.identify(cad, *dask_arrays, friction=False), ref)
    np.testing.assert_array_equal(ref.model.joint_friction, cad.joint_friction)


@pytest.fixture(scope="module")
def small(data):
    cad, q, v, a, tau = data
    return cad, q[:200], v[:200], a[:200], tau[:200]


BAD = [
    (lambda q, v, a, t: (q[:, :6], v, a, t), r"q must have shape \(N, 7\)"),
    (lambda q, v, a, t: (q, v[:-1], a, t), "same number of samples"),
    (lambda q, v, a, t: (q, v, a, np.where(np.arange(7) == 3, np.nan, t)),
     r"tau has 200 non-finite values \(first: sample 0, column 3\)"),
    (lambda q, v, a, t: (q, np.where(np.arange(200)[:, None] == 150, np.inf, v), a, t),
     r"v has 7 non-finite values \(first: sample 150, column 0\)"),
    (lambda q, v, a, t: (q[:8], v[:8], a[:8], t[:8]), "too few samples"),
    (lambda q, v, a, t: (q, 0 * v, 0 * a, t), "does not excite .*condition number"),
]


@pytest.mark.parametrize("change, match", BAD)
def test_bad_inputs_give_the_same_errors_on_every_path(client, small, change, match):
    cad, *arrays = small
    bad = change(*arrays)
    opts = dict(prior=None, friction="excite" not in match)   # gravity only: none at rest
    with pytest.raises(ldr.InputError, match=match):
        ldr.identify(cad, *bad, **opts)
    with pytest.raises(ldr.InputError, match=match):
        ldr.identify(cad, *bad, client=client, chunk=64, **opts)
    with pytest.raises(ldr.InputError, match=match):
        ldr.identify(cad, *(da.from_array(x, chunks=(64, -1)) for x in bad), **opts)


def test_bad_chunks_name_the_global_sample_and_bad_chunk_sizes(small):
    cad, q, v, a, tau = small
    tau = tau.copy()
    tau[130, 2] = np.nan
    chunks = ([x[lo:lo + 100] for x in (q, v, a, tau)] for lo in (0, 100))
    with pytest.raises(ldr.InputError, match=r"tau has 1 non-finite values in the chunk from "
                                             r"sample 100 \(first: sample 130, column 2\)"):
        ldr.identify_chunks(cad, chunks)
    for chunk in (0, 2.5, True):
        with pytest.raises(ldr.InputError, match="chunk must be a positive number"):
            ldr.identify(cad, q, v, a, tau, chunk=chunk)
    with pytest.raises(ldr.InputError, match="too few samples: 0 samples"):
        ldr.identify_chunks(cad, iter(()))


def test_a_model_pickles_for_workers_in_other_processes(data):
    import pickle
    cad, q, v, a, _ = data
    m = pickle.loads(pickle.dumps(cad.with_joint_dynamics(damping=np.arange(7.0))))
    np.testing.assert_array_equal(m.joint_damping, np.arange(7.0))
    np.testing.assert_array_equal(ldr.inverse_dynamics(m, q[:5], v[:5], a[:5]),
                                  ldr.inverse_dynamics(cad, q[:5], v[:5], a[:5]))
    assert not m.joint_damping.flags.writeable
    assert not m.frames[m.frame_names[0]][1].flags.writeable
    with pytest.raises(AttributeError, match="frozen"):
        m.nv = 3


def test_without_dask_the_error_names_the_extra(small, monkeypatch):
    import builtins
    real = builtins.__import__

    def no_dask(name, *args, **kwargs):
        if name.split(".")[0] == "dask":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_dask)
    cad, *arrays = small
    with pytest.raises(ldr.InputError, match=r"lie_dynamics_ros\[cluster\]"):
        ldr.identify(cad, *arrays, client=object())


def test_log_cholesky_jacobian_is_the_derivative():
    """The consistent solve's exact d theta / d phi (its accuracy is what lets differently
    reduced data land on the same parameters) against a difference quotient."""
    from lie_dynamics_ros.identification import consistency as C
    rng = np.random.default_rng(5)
    for _ in range(5):
        phi = 0.5 * rng.standard_normal(10)
        h = 1e-6
        fd = np.array([(C.log_cholesky_to_parameters(phi + h * e)
                        - C.log_cholesky_to_parameters(phi - h * e)) / (2 * h)
                       for e in np.eye(10)]).T
        J = C.log_cholesky_jacobian(phi)
        np.testing.assert_allclose(J, fd, rtol=0, atol=1e-7 * np.abs(fd).max())
        assert np.linalg.matrix_rank(J) == 10        # a local diffeomorphism onto theta
