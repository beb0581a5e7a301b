"""The parameter tables (ros/parameters.py, ros/schemas/common.py) and the docs renderer
(ros/parameter_docs.py), without a ROS graph: typing, constraints, descriptors, markdown."""
import math

import pytest

from lie_dynamics_ros.ros import parameter_docs as pd
from lie_dynamics_ros.ros.schemas.checks import positive_number, three_values
from lie_dynamics_ros.ros.parameters import Param, descriptor, typed_value
from lie_dynamics_ros.ros.schemas.common import GUARD, INPUTS, MODEL_SOURCE, SPIN

COMMON = MODEL_SOURCE + SPIN + GUARD + INPUTS


# -- a table is checked when it is written ---------------------------------------------------

@pytest.mark.parametrize("kwargs, says", [
    (dict(kind="float"), "rate: kind 'float' is not one of"),
    (dict(description="  "), "rate has no description"),
    (dict(min=2000.0), "rate: 1000.0 is not >= 2000"),
    (dict(choices=(1.0, 2.0)), "rate: choices need kind string"),
    (dict(check=positive_number, default=-1.0), "rate: must be > 0"),
])
def test_a_bad_table_entry_fails_where_it_is_written(kwargs, says):
    spec = dict(name="rate", default=1000.0, kind="double", description="Steps per second.")
    spec.update(kwargs)
    with pytest.raises(ValueError, match=says):
        Param(**spec)


def test_min_max_need_a_number_and_int_bounds_are_ints():
    with pytest.raises(ValueError, match="s: min/max need a numeric kind"):
        Param("s", "a", "string", "A string.", min=0)
    with pytest.raises(ValueError, match="n: the bounds of an int are ints"):
        Param("n", 1, "int", "A count.", max=2.5)


def test_the_shared_tables_have_unique_names_and_descriptions():
    names = [p.name for p in COMMON]
    assert len(names) == len(set(names)), names
    assert all(p.description.strip() for p in COMMON)


# -- typed values -----------------------------------------------------------------------------

def test_values_are_typed_as_the_table_says():
    gravity = Param("gravity", [0.0, 0.0, -9.81], "double_array", "g.", check=three_values)
    assert typed_value(gravity, [0, 0, -10]) == [0.0, 0.0, -10.0]       # YAML integers
    assert all(isinstance(x, float) for x in typed_value(gravity, [0, 0, -10]))
    assert typed_value(gravity, None) == [0.0, 0.0, -9.81]              # not set: default
    gains = Param("gains", [], "double_array", "Gains.", min=0.0)
    assert typed_value(gains, 5) == [5.0]                                # one for every joint
    assert typed_value(gains, b"") == []                                 # rclpy's empty list
    timeout = Param("timeout", 0.5, "double", "Seconds.")
    assert typed_value(timeout, 2) == 2.0 and isinstance(typed_value(timeout, 2), float)
    count = Param("count", 1, "int", "Count.", min=0, max=10)
    assert typed_value(count, 10) == 10
    names = Param("names", [], "string_array", "Names.")
    assert typed_value(names, ("a", "b")) == ["a", "b"]


@pytest.mark.parametrize("spec, value, says", [
    (Param("timeout", 0.5, "double", "Seconds."), "1", "timeout: '1' is not of type double"),
    (Param("timeout", 0.5, "double", "Seconds."), True, "timeout: True is not of type double"),
    (Param("count", 1, "int", "Count."), 1.0, "count: 1.0 is not of type int"),
    (Param("flag", True, "bool", "Flag."), 1, "flag: 1 is not of type bool"),
    (Param("names", [], "string_array", "Names."), ["a", 1], "names: .* is not of type"),
    (Param("timeout", 0.5, "double", "Seconds."), math.nan, "timeout: nan is not finite"),
    (Param("gains", [], "double_array", "Gains."), [1.0, math.inf], "gains: .* is not finite"),
    (Param("count", 1, "int", "Count.", min=0, max=10), 11, "count: 11 is not in 0..10"),
    (Param("count", 1, "int", "Count.", min=0, max=10), -1, "count: -1 is not in 0..10"),
    (Param("timeout", 0.5, "double", "Seconds.", min=0.0), -0.1,
     r"timeout: -0.1 is not >= 0"),
    (Param("gains", [], "double_array", "Gains.", min=0.0), [1.0, -2.0],
     r"gains: value 1 \(-2.0\) is not >= 0"),
    (Param("mode", "a", "string", "Mode.", choices=("a", "b")), "c",
     "mode: 'c' is not one of a, b"),
    (Param("modes", [], "string_array", "Modes.", choices=("a", "b")), ["a", "x"],
     "modes: 'x' is not one of a, b"),
    (Param("gravity", [0.0, 0.0, -9.81], "double_array", "g.", check=three_values), [1.0],
     "gravity: needs 3 values, got 1"),
])
def test_a_bad_value_is_refused_naming_the_parameter_and_the_rule(spec, value, says):
    with pytest.raises(ValueError, match="^parameter " + says):
        typed_value(spec, value)


# -- ros2 param describe ----------------------------------------------------------------------

def test_descriptor_carries_description_read_only_range_and_constraints():
    by = {p.name: descriptor(p) for p in COMMON}
    st = by["state_timeout"]
    assert st.description == next(p.description for p in GUARD if p.name == "state_timeout")
    assert not st.read_only and st.dynamic_typing
    assert [(r.from_value, r.to_value, r.step) for r in st.floating_point_range] == [
        (0.0, math.inf, 0.0)]
    assert not st.integer_range and st.additional_constraints == ""
    rt = by["realtime_priority"]
    assert rt.read_only and [(r.from_value, r.to_value) for r in rt.integer_range] == [(0, 99)]
    assert by["executor"].additional_constraints == "one of wait_set, single_threaded"
    assert by["fallback_period"].additional_constraints == "> 0"      # the check's docstring
    assert by["source_list"].read_only
    capped = descriptor(Param("gains", [], "double_array", "Gains.", max=5.0))
    assert capped.additional_constraints == "each value <= 5" and not capped.floating_point_range


# -- the docs tables --------------------------------------------------------------------------

SMALL = [Param("rate", 1000.0, "double", "Steps per second | Hz.", read_only=True,
               min=1.0, max=1e4),
         Param("mode", "a", "string", "Mode.", choices=("a", "b")),
         Param("gravity", [0.0, 0.0, -9.81], "double_array", "g.", check=three_values),
         Param("path", "", "string", "A file.")]


def test_markdown_table_has_one_row_per_parameter_in_order():
    assert pd.markdown_table(SMALL) == (
        "| parameter | type | default | range / choices | read-only | description |\n"
        "|---|---|---|---|---|---|\n"
        "| `rate` | double | `1000.0` | 1..10000 | yes | Steps per second \\| Hz. |\n"
        "| `mode` | string | `a` | one of `a`, `b` |  | Mode. |\n"
        "| `gravity` | double[] | `[0.0, 0.0, -9.81]` | 3 values (a vector in R^3) |  | g. |\n"
        "| `path` | string | `\"\"` |  |  | A file. |\n")
    with pytest.raises(ValueError, match="mode is listed twice"):
        pd.markdown_table(SMALL + SMALL[1:2])


@pytest.mark.parametrize("name, params", [("model_source", MODEL_SOURCE), ("spin", SPIN),
                                          ("guard", GUARD), ("inputs", INPUTS)])
def test_every_shared_table_renders_every_parameter(name, params):
    text = pd.markdown_table(pd.table(name))
    rows = text.splitlines()[2:]
    assert [r.split(" | ")[0] for r in rows] == ["| `%s`" % p.name for p in params]
    assert all(r.count(" | ") == 5 for r in rows)       # six cells: no unescaped '|'


DOC = """# Node

Text before.

<!-- parameters: guard -->
| stale | table |
<!-- end parameters -->

Between.

<!-- parameters: spin -->
<!-- end parameters -->
Text after.
"""


def test_write_fills_the_blocks_and_check_then_passes(tmp_path, capsys):
    path = tmp_path / "ros.md"
    path.write_text(DOC)
    assert pd.main(["--check", str(path)]) == 1
    assert "out of date: guard, spin" in capsys.readouterr().err
    assert path.read_text() == DOC                       # --check changes nothing
    assert pd.main(["--write", str(path)]) == 0
    text = path.read_text()
    assert text == DOC.replace("| stale | table |\n", pd.markdown_table(GUARD)).replace(
        "<!-- parameters: spin -->\n", "<!-- parameters: spin -->\n" + pd.markdown_table(SPIN))
    assert pd.main(["--check", str(path)]) == 0
    assert pd.render(text) == text


@pytest.mark.parametrize("text, says", [
    ("<!-- parameters: nosuch -->\n<!-- end parameters -->\n", "unknown parameter table 'nosuch'"),
    ("<!-- parameters: guard -->\nno end\n", "marker without its"),
    ("<!-- parameters: guard -->\n<!-- parameters: spin -->\n<!-- end parameters -->\n",
     "marker without its"),
])
def test_bad_markers_are_reported(tmp_path, capsys, text, says):
    path = tmp_path / "bad.md"
    path.write_text(text)
    with pytest.raises(ValueError, match=says):
        pd.render(text)
    assert pd.main(["--check", str(path)]) == 1 and says in capsys.readouterr().err
    assert pd.main(["--write", str(path)]) == 1 and path.read_text() == text
