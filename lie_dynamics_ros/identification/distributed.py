"""``identify`` past one machine: the regressor blocks built per row chunk on a Dask cluster
and reduced by Dask's tall-skinny QR (``dask.array.linalg.tsqr``; Demmel, Grigori, Hoemmen &
Langou 2012), so that only each DOF's (p + 1) x (p + 1) factor comes back (``reduction.py``).
Dask is imported here only: ``pip install 'lie_dynamics_ros[cluster]'``.
"""
import numpy as np

from ..errors import InputError
from .regressors import column_names
from .reduction import (CHUNK_SAMPLES, REST_SPEED, Reduction, at_rest, augmented_rows,
                        triangular)
from .samples import NAMES, check_shapes, nonfinite_error, widths


def dask_array_module():
    try:
        import dask.array as da
    except ImportError:
        raise InputError("identify on dask arrays or with client= needs Dask: pip install "
                         "'lie_dynamics_ros[cluster]' (dask[distributed])") from None
    return da


def is_dask(*xs):
    """True when any of ``xs`` is a Dask collection (without importing Dask)."""
    return any(hasattr(x, "__dask_graph__") for x in xs)


def _block(q, v, a, tau, model, friction, armature, rest_speed):
    """(n, nv (p + 1)) augmented rows of one row block; a block with a non-finite value gives
    zeros (the count over the whole input names it, see ``reduce_dask``)."""
    ok = all(np.isfinite(x).all() for x in (q, v, a, tau))
    p1 = _width(model, friction, armature)
    if not ok or len(v) == 0:
        return np.zeros((len(v), model.nv * p1))
    return augmented_rows(model, q, v, a, tau, friction, armature,
                          rest_speed).reshape(len(v), -1)


def _width(model, friction, armature):
    return len(column_names(model, friction, armature)) + 1


def reduce_dask(model, q, v, a, tau, friction, armature, client=None, chunk=CHUNK_SAMPLES,
                rest_speed=REST_SPEED):
    """The Reduction of (N, n) arrays (dask arrays, or numpy ones split into ``chunk`` rows),
    computed on ``client`` (a ``distributed.Client``) or Dask's current scheduler."""
    da = dask_array_module()
    arrays = []
    for name, x, n in zip(NAMES, (q, v, a, tau), widths(model)):
        if not is_dask(x):
            try:
                x = np.asarray(x, dtype=float)
            except (TypeError, ValueError):
                raise InputError(f"{name} must be a numeric (N, {n}) array") from None
            x = da.from_array(x, chunks=(chunk,) + x.shape[1:])
        elif not np.issubdtype(x.dtype, np.number):
            raise InputError(f"{name} must be a numeric (N, {n}) array")
        arrays.append(x)
    check_shapes(model, [x.shape for x in arrays])
    rows = arrays[0].chunks[0]
    q, v, a, tau = (x.astype(float).rechunk((rows, -1)) for x in arrays)
    p1 = _width(model, friction, armature)
    X = da.map_blocks(_block, q, v, a, tau, model=model, friction=friction,
                      armature=armature, rest_speed=rest_speed, dtype=float,
                      chunks=(rows, (model.nv * p1,)))
    Rs = [da.linalg.tsqr(X[:, j * p1:(j + 1) * p1])[1] for j in range(model.nv)]
    checks = []
    for x in (q, v, a, tau):
        bad = ~da.isfinite(x)
        checks += [bad.sum(), da.argmax(bad.ravel())]
    peak = da.abs(tau).max(axis=0) if tau.shape[0] else da.zeros(model.nv)
    # the DOFs that can be at rest: at_rest on a speed of 0
    coulomb = at_rest(model, np.zeros((1, model.nv)), friction, rest_speed)[0]
    resting = ((da.fabs(v) < rest_speed) & coulomb).sum(axis=0)
    todo = Rs + checks + [peak, resting]
    if client is not None:
        out = client.compute(todo, sync=True)
    else:
        import dask
        out = dask.compute(*todo)
    Rs, checks, peak, resting = out[:model.nv], out[model.nv:-2], out[-2], out[-1]
    for name, x, (count, first) in zip(NAMES, (q, v, a, tau), zip(checks[::2], checks[1::2])):
        if count:
            k, j = divmod(int(first), x.shape[1])
            raise nonfinite_error(name, count, k, j)
    return Reduction(triangular(np.stack([np.asarray(R) for R in Rs])), int(v.shape[0]),
                     np.asarray(peak, dtype=float), bool(friction), bool(armature),
                     int(v.shape[0]) - np.asarray(resting, dtype=np.int64))


def connect(address, timeout=10.0):
    """A ``distributed.Client`` on the scheduler at ``address`` (e.g. tcp://host:8786), or an
    InputError naming the address when Dask is missing or nothing answers within
    ``timeout`` seconds."""
    try:
        from distributed import Client
    except ImportError:
        raise InputError("--dask needs Dask: pip install 'lie_dynamics_ros[cluster]' "
                         "(dask[distributed])") from None
    try:
        return Client(address, timeout=timeout)
    except (OSError, ValueError, TypeError) as e:    # TimeoutError is an OSError
        raise InputError("no Dask scheduler answered at %s within %g s (%s)"
                         % (address, timeout, type(e).__name__)) from None
