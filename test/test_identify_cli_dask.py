"""ldr_identify --dask ADDRESS: the identification on a Dask cluster writes the URDF of the
single-process command (to round-off: the cluster reduces the same rows in another grouping,
see test_identify_dask.py), and a missing Dask or a scheduler that does not answer is one
line on stderr with status 1."""
import socket
import sys

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from distributed import LocalCluster     # setup.py's "test" extra: never skipped
from test_identify_cli import FRICTION, assert_refused, record, run, truth  # noqa: F401


@pytest.fixture(scope="module")
def address():
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None, memory_limit="1GiB")
    yield cluster.scheduler_address
    cluster.close()


def _values(path):
    m = ldr.load_urdf(str(path))
    return np.concatenate([ldr.inertial_parameters(m), m.joint_damping, m.joint_friction])


def test_the_cluster_writes_the_single_process_urdf(tmp_path, capsys, truth, address):
    bag = record(tmp_path / "bag", truth, 30.0, noise=0.01, seed=1)
    (tmp_path / "one").mkdir()
    (tmp_path / "dask").mkdir()
    code, _, err, one = run(tmp_path / "one", capsys, "--bag", bag)
    assert code == 0, err
    code, stdout, err, on_dask = run(tmp_path / "dask", capsys, "--bag", bag, "--dask", address)
    assert code == 0, err
    assert "wrote" in stdout
    ref, got = _values(one), _values(on_dask)
    assert np.allclose(ldr.load_urdf(str(one)).joint_friction, FRICTION, rtol=0.1)  # a real fit
    np.testing.assert_allclose(got, ref, rtol=1e-7, atol=1e-9)


def test_a_scheduler_that_does_not_answer(tmp_path, capsys, truth):
    with socket.socket() as s:          # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    bag = record(tmp_path / "bag", truth, 2.0)
    code, _, err, out = run(tmp_path, capsys, "--bag", bag, "--dask",
                            "tcp://127.0.0.1:%d" % port, "--dask-timeout", "1")
    assert_refused(code, err, out, "no Dask scheduler answered at tcp://127.0.0.1:%d "
                   "within 1 s" % port)


def test_without_dask(tmp_path, capsys, truth, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)     # import distributed fails
    bag = record(tmp_path / "bag", truth, 2.0)
    code, _, err, out = run(tmp_path, capsys, "--bag", bag, "--dask", "tcp://127.0.0.1:8786")
    assert_refused(code, err, out, "--dask needs Dask: pip install")
