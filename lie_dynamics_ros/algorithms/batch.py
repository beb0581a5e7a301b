"""Batched evaluation: N states in one call, split over all cores.

The public dynamics functions come here when given (N, nq) / (N, nv) arrays. The rows are cut
into one chunk per core; each chunk is one compiled call (``kernels/batch.py``) on the worker
thread's own Data, with the GIL released (the kernels are ``nogil``). Plain Python threads, not
numba's parallel threading layers: those abort or serialise when two Python threads (a ROS
MultiThreadedExecutor) run parallel kernels at once, while this pool is safe for any number of
concurrent callers.

A row with bad values (NaN, a non-unit quaternion, ...) raises ``InputError`` naming the row
index; no partial result is returned.
"""
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..errors import InputError
from ..kernels import batch as KB
from ._inputs import rows

#: worker threads of the batch pool (the cores this process may run on)
WORKERS = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
              else (os.cpu_count() or 1))
#: below this many joint-rows of work (N * nv) a batch runs on the calling thread alone
MIN_PARALLEL_WORK = 512

_pool = None
_pool_lock = threading.Lock()


def executor():
    """The shared worker pool (created on first use)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="ldr-batch")
    return _pool


def evaluate(model, alg, arrays, f_ext, row, mask=None):
    """Evaluate kernel ``alg`` ('rnea', 'aba', 'crba', 'hybrid') on every row of ``arrays``.

    ``row(q, *rest)`` is the per-state public function: it serves models the row kernels do not
    (General joints, mimic joints solved through M) and names the error of a failed row.
    """
    if f_ext is not None:
        raise InputError("f_ext is per state: batched calls take f_ext=None (call the function "
                         "per state to apply external wrenches)")
    Q = rows(arrays[0], model.nq, "q", model=model)
    N = Q.shape[0]
    names = {"rnea": ("v", "a"), "aba": ("v", "tau"), "crba": (), "hybrid": ("v", "a", "tau")}
    rest = [rows(x, model.nv, name, N) for x, name in zip(arrays[1:], names[alg])]
    if model.has_general or (model.has_mimic and alg in ("aba", "hybrid")):
        return _python_rows(model, alg, Q, rest, row)
    nv = model.nv
    if alg == "crba":
        out = (np.empty((N, nv, nv)),)
    elif alg == "hybrid":
        out = (np.empty((N, nv)), np.empty((N, nv)))
    else:
        out = (np.empty((N, nv)),)
    status = np.zeros(N, dtype=np.int64)

    def run(lo, hi):
        d = model.default_data()
        head = (model.mi, model.mc, model.mI, d.dv, d.dm, Q)
        if alg == "rnea":
            KB.rnea_rows(*head, rest[0], rest[1], out[0], status, lo, hi)
        elif alg == "aba":
            KB.aba_rows(*head, rest[0], rest[1], d.prescribed_body, out[0], d.tau_out,
                        d.failed_row, status, lo, hi)
        elif alg == "crba":
            KB.crba_rows(*head, d.zero_v, out[0], status, lo, hi)
        else:
            KB.hybrid_rows(*head, rest[0], rest[1], rest[2], np.ascontiguousarray(mask),
                           d.prescribed_body, out[0], out[1], d.failed_row, status, lo, hi)

    split(N, N * nv, run)
    if status.any():
        raise_for_row(int(np.flatnonzero(status)[0]), Q, rest, row)
    return out if alg == "hybrid" else out[0]


def split(N, work, run):
    """``run(lo, hi)`` over range(N) cut into one chunk per core, the first on the calling
    thread; one chunk when ``work`` (joint-rows) is below MIN_PARALLEL_WORK. ``run`` takes this
    thread's Data (``model.default_data()``) for its work memory."""
    chunks = 1 if work < MIN_PARALLEL_WORK else min(WORKERS, N)
    bounds = np.linspace(0, N, chunks + 1).astype(int)
    futures = [executor().submit(run, lo, hi) for lo, hi in zip(bounds[1:-1], bounds[2:])]
    run(bounds[0], bounds[1])
    for f in futures:
        f.result()


def raise_for_row(r, Q, rest, row):
    try:
        row(Q[r], *[x[r] for x in rest])
    except InputError as e:
        raise InputError(f"row {r}: {e}") from None
    raise InputError(f"row {r}: the kernel failed")   # pragma: no cover - status without error


def _python_rows(model, alg, Q, rest, row):
    """Models with Python-defined (General) joints, or mimic joints solved through M."""
    res = []
    for r in range(Q.shape[0]):
        try:
            res.append(row(Q[r], *[x[r] for x in rest]))
        except InputError as e:
            raise InputError(f"row {r}: {e}") from None
    if alg == "hybrid":
        return (np.array([x[0] for x in res]).reshape(len(res), model.nv),
                np.array([x[1] for x in res]).reshape(len(res), model.nv))
    shape = (len(res), model.nv, model.nv) if alg == "crba" else (len(res), model.nv)
    return np.array(res).reshape(shape)
