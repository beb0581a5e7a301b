"""Typed exceptions of the library. Both are ValueErrors, so callers may catch either."""


class URDFError(ValueError):
    """A robot description that cannot be turned into a model.

    The message names the link or joint at fault when there is one (``.element``).
    """

    def __init__(self, message, element=None):
        super().__init__(message)
        self.element = element


class InputError(ValueError):
    """An argument with the wrong shape, a NaN/Inf, or an unknown name."""
