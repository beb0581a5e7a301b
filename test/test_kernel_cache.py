"""numba's cache follows calls across kernel modules (kernels/jit.py): after a callee's module
changes, a cached caller in another module runs the new code in the next process, and a change
to a module it does not import leaves its cache in use."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from lie_dynamics_ros import precompile
from lie_dynamics_ros.kernels import jit

ROOT = pathlib.Path(__file__).resolve().parents[1]
PKG = ROOT / "lie_dynamics_ros"

# spatial.congruence_add calls lie.se3_Ad_inv: X^T X summed over the 6x6 identity inertia at the
# identity pose is 6; the edited callee adds 1 to one output, which the sum sees.
PROBE = """
import numpy as np
from lie_dynamics_ros.kernels.spatial import congruence_add
out = np.zeros((6, 6))
congruence_add(np.eye(3).ravel(), np.zeros(3), np.eye(6), out, np.zeros(6), np.zeros(6))
print(out.sum(), sum(congruence_add.stats.cache_hits.values()),
      sum(congruence_add.stats.cache_misses.values()))
"""
CALLEE_LINE = "    out[5] = R[2] * u0 + R[5] * u1 + R[8] * u2\n"


def _run(root, cache):
    env = dict(os.environ, PYTHONPATH=str(root), NUMBA_CACHE_DIR=str(cache))
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd=str(root),
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    total, hits, misses = out.stdout.split()
    return float(total), int(hits), int(misses)


def _edit(path, old, new):
    text = path.read_text()
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new))


def test_an_edited_callee_in_another_module_reaches_its_cached_caller(tmp_path):
    root, cache = tmp_path / "src", tmp_path / "cache"
    shutil.copytree(PKG, root / "lie_dynamics_ros",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    first = _run(root, cache)
    assert first[0] == pytest.approx(6.0) and first[2] == 1          # compiled
    assert _run(root, cache) == (first[0], 1, 0)                       # loaded, same code

    # a kernel module the caller does not import: its cache stays valid
    deriv = root / "lie_dynamics_ros" / "kernels" / "derivatives.py"
    deriv.write_text(deriv.read_text() + "\n# an unrelated edit\n")
    assert _run(root, cache) == (first[0], 1, 0)

    # the callee's module (kernels/lie.py): the caller recompiles and runs the new code
    _edit(root / "lie_dynamics_ros" / "kernels" / "lie.py", CALLEE_LINE,
          CALLEE_LINE + "    out[5] += 1.0\n")
    total, hits, misses = _run(root, cache)
    assert (hits, misses) == (0, 1)
    assert total != pytest.approx(first[0])
    assert _run(root, cache) == (total, 1, 0)                          # and that is cached


def test_the_salt_follows_imports_between_kernel_files_only():
    spatial, lie = str(PKG / "kernels" / "spatial.py"), str(PKG / "kernels" / "lie.py")
    reached = jit.kernel_files(spatial)
    assert lie in reached and spatial in reached
    assert str(PKG / "kernels" / "derivatives.py") not in reached
    controllers = jit.kernel_files(str(PKG / "control" / "controllers.py"))
    assert str(PKG / "algorithms" / "regressor.py") in controllers
    assert str(PKG / "algorithms" / "dynamics.py") not in controllers      # no kernel code


@pytest.mark.parametrize("module", precompile.KERNEL_MODULES)
def test_every_cached_kernel_uses_the_salted_cache(module):
    disps = precompile.kernel_dispatchers((module,))
    assert disps
    bad = [d.__name__ for d in disps if type(precompile.kernel_cache(d)) is not jit.KernelCache]
    assert not bad, bad
