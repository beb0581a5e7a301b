"""The parameter tables of the docs, written from the schemas (``Param`` lists).

A table sits between two markers; everything between them is generated::

    <!-- parameters: guard -->
    | parameter | type | default | range / choices | read-only | description |
    ...
    <!-- end parameters -->

``python -m lie_dynamics_ros.ros.parameter_docs --write docs/ros.md`` rewrites every table of
the file; ``--check`` changes nothing and exits with status 1 naming the tables that differ.
"""
import argparse
import importlib
import re
import sys

from lie_dynamics_ros.ros.parameters import check_text, range_text

_SCHEMAS = "lie_dynamics_ros.ros.schemas."

#: marker name -> the tables ("module:attribute") it shows, in this order: the shared groups,
#: and each node's own parameters (its SCHEMA adds the groups it uses)
TABLES = {
    "model_source": (_SCHEMAS + "common:MODEL_SOURCE",),
    "spin": (_SCHEMAS + "common:SPIN",),
    "guard": (_SCHEMAS + "common:GUARD",),
    "inputs": (_SCHEMAS + "common:INPUTS",),
    "forward_dynamics": (_SCHEMAS + "simulator:PARAMS",),
    "inverse_dynamics": (_SCHEMAS + "inverse_dynamics:PARAMS",),
    "adaptive_controller": (_SCHEMAS + "adaptive_controller:PARAMS",),
    "external_torque_observer": (_SCHEMAS + "external_torque_observer:PARAMS",),
}

_TYPES = {"bool": "bool", "int": "int", "double": "double", "string": "string",
          "double_array": "double[]", "string_array": "string[]"}

_BLOCK = re.compile(r"(<!-- parameters: ([\w-]+) -->\n)(.*?)(<!-- end parameters -->)",
                    re.DOTALL)
_START = re.compile(r"<!-- parameters: ([^>]*?) -->")


def table(name):
    """The ``Param`` list a marker names; ValueError for an unknown name."""
    if name not in TABLES:
        raise ValueError("unknown parameter table '%s' (known: %s)"
                         % (name, ", ".join(sorted(TABLES))))
    params = []
    for ref in TABLES[name]:
        module, attr = ref.split(":")
        params += getattr(importlib.import_module(module), attr)
    return params


def _value(x):
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, str):
        return '"%s"' % x if x == "" else x
    if isinstance(x, (list, tuple)):
        return "[%s]" % ", ".join(_value(v) for v in x)
    return repr(x)


def _constraints(spec):
    out = []
    each = "each value " if spec.kind.endswith("_array") else ""
    bounds = range_text(spec)
    if bounds:
        out.append(each + (bounds[3:] if bounds.startswith("in ") else bounds))
    if spec.choices is not None:
        out.append("%sone of %s" % (each, ", ".join("`%s`" % c for c in spec.choices)))
    if check_text(spec):
        out.append(check_text(spec))
    return "; ".join(out)


def _cell(text):
    # "<limit effort>" in a description would read as an HTML tag
    return text.replace("|", "\\|").replace("<", "&lt;")


def markdown_table(params) -> str:
    """The markdown table of ``params``: name, type, default, range / choices, read-only,
    description; one row per parameter, in the given order. ValueError for a name listed
    twice."""
    rows = ["| parameter | type | default | range / choices | read-only | description |",
            "|---|---|---|---|---|---|"]
    seen = set()
    for p in params:
        if p.name in seen:
            raise ValueError("parameter %s is listed twice" % p.name)
        seen.add(p.name)
        rows.append("| `%s` | %s | `%s` | %s | %s | %s |" % (
            p.name, _TYPES[p.kind], _value(p.default), _cell(_constraints(p)),
            "yes" if p.read_only else "", _cell(p.description)))
    return "\n".join(rows) + "\n"


def render(text: str) -> str:
    """``text`` with every table between markers written anew. ValueError for a marker
    without its end or with an unknown name."""
    starts = _START.findall(text)
    blocks = _BLOCK.findall(text)
    if len(starts) != len(blocks) or any("<!-- parameters:" in b[2] for b in blocks):
        raise ValueError("a '<!-- parameters: NAME -->' marker without its "
                         "'<!-- end parameters -->' (markers: %s)" % ", ".join(starts))
    return _BLOCK.sub(lambda m: m.group(1) + markdown_table(table(m.group(2))) + m.group(4),
                      text)


def stale_tables(text: str):
    """Names of the tables of ``text`` that differ from their schema."""
    fresh = dict((m.group(2), m.group(3)) for m in _BLOCK.finditer(render(text)))
    return [m.group(2) for m in _BLOCK.finditer(text) if fresh[m.group(2)] != m.group(3)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lie_dynamics_ros.ros.parameter_docs",
                                 description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true",
                      help="exit 1 when a table differs from its schema")
    mode.add_argument("--write", action="store_true", help="rewrite the tables")
    ap.add_argument("files", nargs="+", help="markdown files (e.g. docs/ros.md)")
    args = ap.parse_args(argv)
    code = 0
    for path in args.files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            if args.check:
                stale = stale_tables(text)
                if stale:
                    print("%s: out of date: %s (run python -m "
                          "lie_dynamics_ros.ros.parameter_docs --write %s)"
                          % (path, ", ".join(stale), path), file=sys.stderr)
                    code = 1
            else:
                new = render(text)
                if new != text:
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(new)
        except ValueError as e:
            print("%s: %s" % (path, e), file=sys.stderr)
            code = 1
    return code


if __name__ == "__main__":
    sys.exit(main())
