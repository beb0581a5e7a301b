"""Streamed identification (identification/streaming.py, ldr_identify's single-machine
path): the fit chunks and the held-out part equal ``prepare(...).split_holdout`` (gaps, a bad
row, a repeated stamp, a measured velocity, chunked filtering), the command's URDF equals the
in-memory identification's, and the peak memory does not grow with the bag's length."""
import tracemalloc

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from bag_writer import write_recording
from lie_dynamics_ros.identification.signals import JointSamples, prepare
from lie_dynamics_ros.identification.streaming import stream
from lie_dynamics_ros.resources import bundled_urdf
from lie_dynamics_ros.ros.bag_reader import iter_joint_states, read_bags
from test_identify_cli import NAMES, motion, record, run, truth  # noqa: F401


def _recording(seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, 60.0, 0.002) + 100.0 + rng.uniform(-2e-4, 2e-4, 30000)
    t = np.delete(t, np.s_[10000:10300])                   # a gap: two segments
    q = np.column_stack([np.sin(t), np.cos(0.7 * t)]) + 1e-4 * rng.standard_normal((len(t), 2))
    vm = np.column_stack([np.cos(t), np.full(len(t), np.nan)])    # joint a's velocity measured
    tau = np.column_stack([np.sin(2 * t), np.cos(t)])
    q[20000, 1] = np.nan                                   # a bad row: a third segment
    t[5000] = t[4999]                                      # a repeated stamp: the last wins
    return JointSamples(["a", "b"], t, q, vm, tau, "rec")


def _pieces(rec, size):
    def read(show):
        for s in range(0, len(rec.t), size):
            yield JointSamples(rec.names, rec.t[s:s + size], rec.position[s:s + size],
                               rec.velocity[s:s + size], rec.effort[s:s + size], rec.source)
    return read


@pytest.mark.parametrize("chunk", [2000, 100_000])
def test_streamed_equals_prepare(chunk):
    rec = _recording()
    train, held = prepare(rec, chunk_samples=chunk).split_holdout(0.2)
    assert len(train.segments) == 3
    chunks, info = stream([("rec", _pieces(rec, 777))], rec.names, 0.2, chunk_samples=chunk)
    got = [np.concatenate(x) for x in zip(*list(chunks))]
    for g, r in zip(got, train.stacked()):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)
    for g, r in zip(info.held.stacked(), held.stacked()):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(np.concatenate([s.t for s in info.held.segments]),
                                  np.concatenate([s.t for s in held.segments]))
    assert info.n_segments == 3 and info.n_fit == len(train)


def test_stamps_going_backwards_are_prepared_in_memory():
    rec = _recording()
    t = rec.t.copy()
    t[[7000, 7001]] = t[[7001, 7000]]
    rec = JointSamples(rec.names, t, rec.position, rec.velocity, rec.effort, "rec")
    train, _ = prepare(rec).split_holdout(0.2)
    chunks, info = stream([("rec", _pieces(rec, 1000))], rec.names, 0.2)
    got = [np.concatenate(x) for x in zip(*list(chunks))]
    np.testing.assert_allclose(got[3], train.stacked()[3], rtol=1e-12, atol=1e-12)


def test_the_held_out_part_is_capped():
    rec = _recording()
    chunks, info = stream([("rec", _pieces(rec, 777))], rec.names, 0.2,
                          holdout_max_samples=1000)
    n_fit = sum(len(c[0]) for c in chunks)
    _, held = prepare(rec).split_holdout(0.2)
    assert len(info.held) == 1000 and info.n_held_dropped == len(held) - 1000
    assert n_fit == info.n_fit > 0


def test_missing_effort_is_named():
    rec = _recording()
    eff = rec.effort.copy()
    eff[:, 1] = np.nan
    rec = JointSamples(rec.names, rec.t, rec.position, rec.velocity, eff, "rec")
    chunks, _ = stream([("rec", _pieces(rec, 777))], rec.names, 0.2)
    with pytest.raises(ldr.InputError, match="rec: no effort for joint.s. b"):
        list(chunks)


def _values(model):
    return np.concatenate([ldr.inertial_parameters(model), model.joint_damping,
                           model.joint_friction])


def _gappy_bag(path, truth, pieces, rate=500.0, storage="mcap"):
    """One bag of ``pieces`` stretches of 8 s with 1 s pauses between them."""
    ts = [np.arange(0.0, 8.0, 1.0 / rate) + 9.0 * k for k in range(pieces)]
    t = np.concatenate(ts)
    q, v, a = motion(t)
    tau = ldr.inverse_dynamics(truth, q, v, a) + ldr.friction_torques(truth, v)
    write_recording(str(path), t + 1000.0, NAMES, q, None, tau, storage)
    return str(path)


def test_the_command_streams_to_the_in_memory_result(tmp_path, capsys, truth):
    bag = _gappy_bag(tmp_path / "gappy", truth, 4)
    other = record(tmp_path / "other", truth, 10.0, storage="sqlite3", noise=0.01, seed=2)
    code, stdout, err, out = run(tmp_path, capsys, "--bag", bag, "--bag", other)
    assert code == 0, err
    assert "5 segment(s)" in stdout
    cad = ldr.load_urdf(bundled_urdf("double_pendulum.urdf"))
    data = prepare(read_bags([bag, other], cad.joint_names, progress=False))
    train, _ = data.split_holdout(0.2)
    ref = ldr.identify(cad, *train.stacked(), friction=True, consistent=True)
    np.testing.assert_allclose(_values(ldr.load_urdf(str(out))), _values(ref.model),
                               rtol=1e-7, atol=1e-9)
    assert np.allclose(ref.model.joint_friction, [2.0, 1.0], rtol=0.1)    # a real fit


def _peak(bag, names, streamed):
    tracemalloc.start()
    try:
        if streamed:
            read = lambda show: iter_joint_states(bag, names, progress=False)  # noqa: E731
            chunks, info = stream([(bag, read)], names, 0.2, chunk_samples=4000,
                                  holdout_max_samples=500)
            for _ in chunks:
                pass
        else:
            train, _ = prepare(read_bags([bag], names, progress=False),
                               chunk_samples=4000).split_holdout(0.2)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_peak_memory_does_not_grow_with_the_length(tmp_path, truth):
    # sqlite3: its reader holds one message at a time (an MCAP reader holds a whole chunk)
    bags = [_gappy_bag(tmp_path / ("b%d" % k), truth, k, storage="sqlite3")
            for k in (3, 12)]                                       # 12 000 and 48 000 rows
    _peak(bags[0], NAMES, True)            # first imports and caches (scipy, mcap) aside
    _peak(bags[0], NAMES, False)
    streamed = [_peak(b, NAMES, True) for b in bags]
    in_memory = [_peak(b, NAMES, False) for b in bags]
    assert in_memory[1] > 2.5 * in_memory[0], in_memory    # the measure sees growth
    assert streamed[1] < 1.3 * streamed[0], streamed
    assert streamed[1] < 0.5 * in_memory[1], (streamed, in_memory)


def test_the_command_caps_the_held_out_part_and_shows_progress(tmp_path, capsys, truth):
    bag = record(tmp_path / "bag", truth, 20.0)
    code, stdout, err, _ = run(tmp_path, capsys, "--bag", bag, "--holdout-max-samples", "300",
                               "--progress")
    assert code == 0, err
    assert "300 held out" in stdout
    assert "held-out samples beyond --holdout-max-samples 300 are not validated" in err
    # the segments pass and the fit pass each read the bag with a progress line
    assert err.count("reading ") >= 2 and "100.0%" in err, err
