"""How a batch is cut over the pool (``algorithms/batch.run_split``): a probe on the calling
thread, timed, then one chunk per core only when the rest would take longer on one thread
than SPLIT_HANDOFFS round trips of the pool. Every unit runs exactly once, and the cut never
changes a bit of a result."""
import threading
import time

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms import batch
import test_batch_soa as S
import test_batch_soa_free as F


def record(n, delay=0.0):
    """A run(lo, hi) that notes each unit and the thread it ran on (sleeping ``delay`` s per
    unit, the GIL released, as the compiled kernels release it)."""
    seen, threads, lock = [], set(), threading.Lock()

    def run(lo, hi):
        if delay:
            time.sleep(delay * (hi - lo))
        with lock:
            seen.extend(range(lo, hi))
            threads.add(threading.get_ident())
    return run, seen, threads


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 100])
def test_every_unit_runs_once(n):
    run, seen, _ = record(n)
    batch.run_split(n, run)
    assert sorted(seen) == list(range(n))


def test_the_pools_round_trip_is_measured():
    assert 0.0 < batch.handoff() < 0.05


def test_short_work_stays_on_the_calling_thread(monkeypatch):
    """Work below SPLIT_HANDOFFS round trips (a round trip of 1 s here) is not cut."""
    monkeypatch.setattr(batch, "_handoff", 1.0)
    run, seen, threads = record(200)
    assert batch.run_split(200, run) == 1
    assert threads == {threading.get_ident()} and sorted(seen) == list(range(200))


@pytest.mark.skipif(batch.WORKERS < 2, reason="one core: the pool never cuts")
def test_long_work_is_cut_over_the_cores(monkeypatch):
    """Units of 2 ms, far above a round trip of 10 us, run on every worker."""
    monkeypatch.setattr(batch, "_handoff", 1e-5)
    run, seen, threads = record(40, delay=2e-3)
    assert batch.run_split(40, run) == batch.WORKERS
    assert len(threads) == batch.WORKERS and sorted(seen) == list(range(40))
    assert batch.threads_for(1e-9, 40) == 1
    assert batch.threads_for(1.0, 40) == batch.WORKERS
    assert batch.threads_for(1.0, 1) == 1


@pytest.mark.parametrize("name", ["xarm7", "go2"])
def test_the_cut_does_not_change_a_bit(name, monkeypatch):
    """SoA ID, FD and M and the batched derivatives, cut at every opportunity and never."""
    m = F.model(name) if name in F.PATHS else S.model(name)
    Q, V, A = S.states(m, 300, seed=4)
    calls = (lambda: ldr.inverse_dynamics(m, Q, V, A),
             lambda: ldr.forward_dynamics(m, Q, V, A),
             lambda: ldr.mass_matrix(m, Q),
             lambda: ldr.inverse_dynamics_derivatives(m, Q[:40], V[:40], A[:40]))
    results = {}
    for split in (0.0, np.inf):
        monkeypatch.setattr(batch, "SPLIT_HANDOFFS", split)
        results[split] = [np.asarray(f()) for f in calls]
    for cut, whole in zip(results[0.0], results[np.inf]):
        np.testing.assert_array_equal(cut, whole)
