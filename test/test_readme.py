"""The README's Python snippets run as printed (a newcomer pastes them)."""
import os
import re
import textwrap

import pytest

README = os.path.join(os.path.dirname(__file__), "..", "README.md")


def _snippets():
    text = open(README, encoding="utf-8").read()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    return [textwrap.dedent(b) for b in blocks if "ldr." in b]


def test_there_are_snippets():
    assert len(_snippets()) >= 4


@pytest.mark.parametrize("k", range(len(_snippets())))
def test_snippet_runs(k, monkeypatch, tmp_path):
    monkeypatch.chdir(os.path.dirname(README))
    namespace = {}
    # later snippets continue the first one, as a reader would in one session
    for code in _snippets()[:k + 1]:
        exec(compile(code, f"README snippet {k}", "exec"), namespace)
