"""The one line of the first compilation (compile_notice.py): said once per process,
only when numba really compiles (a cold cache), never for a cache load. A throwaway kernel
in a temporary module and a temporary NUMBA_CACHE_DIR keep it fast and leave the package's
cache alone."""
import math
import os
import subprocess
import sys
import textwrap

import lie_dynamics_ros

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(lie_dynamics_ros.__file__)))

PROBE = textwrap.dedent('''
    import numba

    @numba.njit(cache=True)
    def add_one(x):
        return x + 1

    @numba.njit(cache=True)
    def twice(x):
        return 2 * x
''')

RUN = textwrap.dedent('''
    import lie_dynamics_ros                                  # registers the notice
    from lie_dynamics_ros.compile_notice import NOTICE
    NOTICE.prefix = "probe_kernels"                          # watch the throwaway module
    import probe_kernels
    print(probe_kernels.add_one(1), probe_kernels.twice(2.0), probe_kernels.add_one(1.5))
''')


def _run(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT]))
    out = subprocess.run([sys.executable, "-c", RUN], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2", "4.0", "2.5"]
    return [line for line in out.stderr.splitlines() if line.strip()]


def test_a_cold_compile_logs_one_line_once_and_a_cache_load_nothing(tmp_path):
    (tmp_path / "probe_kernels.py").write_text(PROBE)
    first = _run(tmp_path)                    # cold: three compilations, one line
    assert len(first) == 1, first
    assert "compiling numba kernels" in first[0] and "add_one" in first[0]
    assert "ldr_precompile" in first[0]
    assert _run(tmp_path) == []               # warm: loaded from the cache, silent


PACKAGE_RUN = textwrap.dedent('''
    import lie_dynamics_ros                                  # the notice as installed
    from lie_dynamics_ros.kernels.lie import exp_coeffs
    print(exp_coeffs(0.3)[0], exp_coeffs(1e-9)[0])
''')


def test_an_uncached_kernel_of_the_package_logs_its_name_once(tmp_path):
    """The package's own prefix (no probe module): a kernel missing from an empty
    NUMBA_CACHE_DIR is compiled and named on stderr once; from then on it loads silently."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=ROOT)

    def notices():
        out = subprocess.run([sys.executable, "-c", PACKAGE_RUN], env=env, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        s0, s1 = (float(x) for x in out.stdout.split())
        assert abs(s0 - math.sin(0.3) / 0.3) < 1e-15 and s1 == 1.0
        return [line for line in out.stderr.splitlines() if "compiling numba kernels" in line]

    first = notices()
    assert len(first) == 1, first
    assert "kernels.lie.exp_coeffs" in first[0], first[0]
    assert notices() == []
