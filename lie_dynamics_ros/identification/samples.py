"""Checks of the measured samples (q, v, a, tau) that ``identify`` takes, shared by the
in-memory, chunked and Dask paths so that each names a bad input the same way."""
import numpy as np

from ..errors import InputError

NAMES = ("q", "v", "a", "tau")


def widths(model):
    return (model.nq, model.nv, model.nv, model.nv)


def shape_error(model, name, n, shape):
    return InputError(f"{name} must have shape (N, {n}) (samples x the model's joints "
                      f"{model.joint_names}), got {tuple(shape)}")


def check_shapes(model, shapes):
    """``shapes``: the four arrays' shapes; the same sample count and the model's widths."""
    for name, n, s in zip(NAMES, widths(model), shapes):
        if len(s) != 2 or s[1] != n:
            raise shape_error(model, name, n, s)
    if len({s[0] for s in shapes}) != 1:
        raise InputError("q, v, a and tau must have the same number of samples, got "
                         + ", ".join(f"{k}: {s[0]}" for k, s in zip(NAMES, shapes)))


def nonfinite_error(name, count, sample, column, where=""):
    return InputError(f"{name} has {int(count)} non-finite values{where} (first: sample "
                      f"{int(sample)}, column {int(column)}); drop or fill those samples")


def check_samples(model, q, v, a, tau, offset=0, where=""):
    """The four arrays as float (N, n) arrays; an InputError names the first bad one
    (``offset``: the global index of the first sample, for chunks)."""
    arrays = []
    for name, x, n in zip(NAMES, (q, v, a, tau), widths(model)):
        try:
            x = np.asarray(x, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"{name} must be a numeric (N, {n}) array") from None
        if x.ndim != 2 or x.shape[1] != n:
            raise shape_error(model, name, n, x.shape)
        arrays.append(x)
    check_shapes(model, [x.shape for x in arrays])
    for name, x in zip(NAMES, arrays):
        bad = ~np.isfinite(x)
        if bad.any():
            k, j = np.argwhere(bad)[0]
            raise nonfinite_error(name, bad.sum(), offset + k, j, where)
    return arrays
