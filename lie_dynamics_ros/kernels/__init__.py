"""numba-compiled recursions over the flat model arrays (see layout.py)."""
