"""Rules of the schema tables that ``min``/``max``/``choices`` cannot say (``Param.check``).

Each takes the typed value and returns None or the reason; the first line of its docstring
is the rule as the docs tables and ``ros2 param describe`` show it. Imports nothing of the
node machinery, so every schema module can use them.
"""


def three_values(values):
    """3 values (a vector in R^3)."""
    return None if len(values) == 3 else "needs 3 values, got %d" % len(values)


def positive_number(x):
    """> 0."""
    return None if x > 0 else "must be > 0"


def positive_values(values):
    """At least one value, each > 0."""
    return (None if len(values) and all(x > 0 for x in values)
            else "values must be > 0 (at least one)")


def empty_or_positive_values(values):
    """Empty (unset), or each value > 0."""
    return None if all(x > 0 for x in values) else "values must be > 0"
