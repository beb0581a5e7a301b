"""Batched evaluation: N states in one call, split over all cores.

The public dynamics functions come here when given (N, nq) / (N, nv) arrays. The rows are cut
into one chunk per core; each chunk is one compiled call (``kernels/batch.py``) on the worker
thread's own Data, with the GIL released (the kernels are ``nogil``). A batch is cut only where
that pays (``run_split``): handing a chunk to the pool and learning that it is done costs a
thread wake each way, tens of microseconds on a VM, which a small batch does not earn back.
Plain Python threads, not numba's parallel threading layers: those abort or serialise when
two Python threads (a ROS MultiThreadedExecutor) run parallel kernels at once, while this pool
is safe for any number of concurrent callers.

A row with bad values (NaN, a non-unit quaternion, ...) raises ``InputError`` naming the row
index; no partial result is returned.
"""
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..errors import InputError
from ..kernels import batch as KB
from ..kernels import soa as KS
from ._inputs import rows

#: worker threads of the batch pool (the cores this process may run on)
WORKERS = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
              else (os.cpu_count() or 1))
#: a batch is cut over the pool when its estimated time on one thread exceeds this many of
#: the pool's round trips (``handoff``): on this project's 2-core VM two halves side by side
#: ran up to 1.35x slower each than one alone, so a cut pays once T / 2 * 1.35 + R < T,
#: T > 3.1 R (1000 states of a 7-DOF arm's SoA RNEA: 125 us alone, 140-200 us cut in two)
SPLIT_HANDOFFS = 3.0
#: units (rows or SoA blocks) timed on the calling thread before a batch is cut: an eighth of
#: the batch within these bounds, so that the call's fixed cost (a microsecond or two) does not
#: inflate the estimate of a small batch, and a large one is cut early
PROBE_UNITS = (2, 8)
_handoff = None

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

    run_split(N, run)      # run takes this thread's Data for its work memory
    if status.any():
        raise_for_row(int(np.flatnonzero(status)[0]), Q, rest, row)
    return out if alg == "hybrid" else out[0]


def soa_blocks(kernel, N, *args):
    """kernel(*args, lo, hi) on the blocks of ``kernels.soa.B`` states of N (the SoA kernels'
    signature), cut over the cores where that pays (``run_split``)."""
    run_split(-(-N // KS.B), lambda lo, hi: kernel(*args, lo, hi))


def handoff():
    """Seconds the pool takes to run an empty task and report it done (the median of seven
    round trips, measured once per process): what cutting a batch costs beyond its work."""
    global _handoff
    if _handoff is None:
        ex = executor()
        ex.submit(int).result()
        trips = []
        for _ in range(7):
            t0 = time.perf_counter()
            ex.submit(int).result()
            trips.append(time.perf_counter() - t0)
        _handoff = sorted(trips)[3]
    return _handoff


def threads_for(seconds, units):
    """The chunks ``run_split`` cuts ``units`` of work into when they take ``seconds`` on one
    thread: one per core when that exceeds SPLIT_HANDOFFS round trips of the pool, else 1."""
    if WORKERS == 1 or units < 2 or seconds <= SPLIT_HANDOFFS * handoff():
        return 1
    return min(WORKERS, units)


def run_split(n, run):
    """``run(lo, hi)`` over the units range(n) (rows or SoA blocks; each independent of the
    others, so the cut does not change a bit of the result): the first few (n / 8 within
    PROBE_UNITS) on the calling thread, timed, then the rest in as many chunks as
    ``threads_for`` gives for the time the probe predicts for them, the first chunk on the
    calling thread. Returns the number of chunks used after the probe."""
    k = min(max(PROBE_UNITS[0], min(PROBE_UNITS[1], n // 8)), n)
    t0 = time.perf_counter()
    run(0, k)
    if k == n:
        return 1
    chunks = threads_for((time.perf_counter() - t0) * (n - k) / k, n - k)
    bounds = [k + (n - k) * c // chunks for c in range(chunks + 1)]
    futures = [executor().submit(run, lo, hi) for lo, hi in zip(bounds[1:-1], bounds[2:])]
    run(bounds[0], bounds[1])
    for f in futures:
        f.result()
    return chunks


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
