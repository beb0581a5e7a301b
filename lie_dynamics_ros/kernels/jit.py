"""The numba options every kernel compiles with (cached, GIL released, IEEE arithmetic)."""
JIT = dict(cache=True, nogil=True, fastmath=False, error_model="numpy")
