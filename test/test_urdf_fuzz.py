"""URDF fuzzing: a mutated real URDF loads into a model whose dynamics are finite at its
neutral state, or raises ``ldr.URDFError`` naming the link or joint at fault. Never another
exception, never NaN.

The mutations (``urdf_mutations.py``) start from the bundled URDFs and six example-robot-data
robots: attribute values NaN, inf, 1e308, empty, garbage; deleted, duplicated, moved and
retagged elements; dangling and cyclic links; mimics of anything with any multiplier;
truncated text; each loaded with a fixed or floating base, ``inertia_check`` "error" or "warn".
Hypothesis runs derandomized (the same cases on every run), without an example database.

The default run tries 10^4 cases (about 45 s of CPU on one core). A longer run, opt-in:
``LDR_FUZZ_SCALE=20 LDR_FUZZ_SEED=1 pytest -s test/test_urdf_fuzz.py`` multiplies every
budget by 20 (2*10^5 cases, ~15 min) and draws other cases than the default run (with
``LDR_FUZZ_SEED`` set, ``derandomize`` is off and the value seeds hypothesis). ``-s`` prints
the counts of loaded and rejected files and the CPU time of each group.
"""
import collections
import os
import time

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings

from urdf_mutations import mutated_urdf, outcome

SCALE = float(os.environ.get("LDR_FUZZ_SCALE", "1"))
SEED = os.environ.get("LDR_FUZZ_SEED")

GROUPS = {   # name: (mutations, cases in the default run, truncate the text)
    "values": (["value"], 4000, False),
    "structure": (["delete", "duplicate", "move", "retag", "rewire"], 2500, False),
    "mimic": (["mimic", "mimic", "value"], 2000, False),
    "truncated": ([], 1500, True),          # parse errors only: cheap
}


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_mutated_urdf_loads_finite_or_names_the_culprit(group):
    ops, n, truncate = GROUPS[group]
    n = max(1, round(n * SCALE))
    counts = collections.Counter()

    @settings(max_examples=n, derandomize=SEED is None, database=None, deadline=None,
              phases=(Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck))
    @given(mutated_urdf(ops, truncate=truncate))
    def check(case):
        result = outcome(case)
        counts[result.split(":")[0]] += 1
        assert not result.startswith("bad"), result

    if SEED is not None:
        check = seed(int(SEED))(check)
    t = time.process_time()
    check()
    print(f"\nURDF fuzz {group}: {sum(counts.values())} cases, {dict(counts)}, "
          f"{time.process_time() - t:.1f} s CPU")
    assert sum(counts.values()) >= n
    # both ways out are exercised, or the mutations have stopped reaching the loader
    assert counts["rejected"] >= 0.05 * n, counts
    assert truncate or counts["loaded"] >= 0.05 * n, counts
