"""The numba options every kernel compiles with (cached, GIL released, IEEE arithmetic), and
``njit``, numba's decorator with a cache that follows calls into other modules.

Two kinds of kernel differ, each saying why in its module: the structure-of-arrays and
single-state tree kernels (``soa*.py``, ``tree_*.py``) let a multiply and an add fuse into an
FMA (``fastmath={'contract'}``, one rounding instead of two), and the sub-microsecond
single-state entries of ``tree_rnea.py`` and ``tree_crba.py`` keep the GIL (releasing and
taking it back cost 0.03-0.05 us, a sixth of their work; the Python caller holds it longer).

numba keys a cached function on its own file's content only, so a kernel that calls a kernel
of another module (or folds another module's constants) would keep the callee's old code after
that module changes. Our cache adds to numba's source stamp a hash of every kernel file the
function's module imports, directly or through other kernel files: editing one invalidates
exactly its dependants. Kernel files are those of ``kernels/`` and every module that imports
this decorator.
"""
import ast
import functools
import hashlib
import os
import re

import numba
from numba.core import caching

JIT = dict(cache=True, nogil=True, fastmath=False, error_model="numpy")

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_KERNELS = os.path.join(_PACKAGE, "kernels")
_PACKAGE_NAME = os.path.basename(_PACKAGE)
#: a module-level import statement
_IMPORT = re.compile(rb"^(?:from[ \t]+[\w.]+[ \t]+import[ \t]+(?:\([^)]*\)|[^\n]*)"
                     rb"|import[ \t][^\n]*)", re.M)


def _module_file(parts):
    """The file of module ``parts`` (names below the package), or None outside it."""
    base = os.path.join(_PACKAGE, *parts)
    for path in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(path):
            return path
    return None


@functools.lru_cache(maxsize=None)
def _is_kernel_file(path):
    text = _read(path)
    return (os.path.dirname(path) == _KERNELS or b"kernels.jit import" in text
            or b"from .jit import" in text)


@functools.lru_cache(maxsize=None)
def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _import_nodes(source):
    """The module-level import statements of ``source`` (parsing whole files costs 0.1 s)."""
    for text in _IMPORT.findall(source):
        try:
            yield ast.parse(text).body[0]
        except SyntaxError:               # a docstring line that starts with "import"
            continue


@functools.lru_cache(maxsize=None)
def _imported_files(path):
    """Files of the package that ``path`` imports (``from . import x`` names x's file too)."""
    rel = os.path.relpath(path, _PACKAGE)[:-3].split(os.sep)
    here = rel[:-1]                                   # the importing module's package
    out = []
    for node in _import_nodes(_read(path)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                mod = here[:len(here) - node.level + 1] + (node.module.split(".") if node.module
                                                           else [])
            elif node.module and node.module.split(".")[0] == _PACKAGE_NAME:
                mod = node.module.split(".")[1:]
            else:
                continue
            out.append(_module_file(mod))
            out.extend(_module_file(mod + [a.name]) for a in node.names)
        elif isinstance(node, ast.Import):
            out.extend(_module_file(a.name.split(".")[1:]) for a in node.names
                       if a.name.split(".")[0] == _PACKAGE_NAME)
    return tuple(p for p in out if p is not None)


def kernel_files(path):
    """The kernel files that ``path`` reaches through imports, itself included."""
    seen, todo = set(), [os.path.abspath(path)]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        todo.extend(q for q in _imported_files(p)
                    if q not in seen and _is_kernel_file(q))
    return seen


@functools.lru_cache(maxsize=None)
def dependency_salt(path):
    """sha256 over ``kernel_files(path)``."""
    h = hashlib.sha256()
    for p in sorted(kernel_files(path)):
        h.update(os.path.relpath(p, _PACKAGE).encode() + b"\0" + _read(p) + b"\0")
    return h.hexdigest()


def _salted(locator):
    """``locator`` whose source stamp also holds the dependency salt."""
    def get_source_stamp(self):
        return locator.get_source_stamp(self), dependency_salt(self._py_file)
    return type("Salted" + locator.__name__, (locator,), {"get_source_stamp": get_source_stamp})


class _KernelCacheImpl(caching.CompileResultCacheImpl):
    _locator_classes = [_salted(c) for c in (caching.UserProvidedCacheLocator,
                                             caching.InTreeCacheLocator,
                                             caching.UserWideCacheLocator)]


class KernelCache(caching.FunctionCache):
    """numba's per-function cache, its index stamped with the dependency salt."""
    _impl_class = _KernelCacheImpl


def njit(*args, **options):
    """``numba.njit`` with ``cache=True`` meaning ``KernelCache`` (same arguments)."""
    cache = options.pop("cache", False)

    def wrap(fn):
        disp = numba.njit(**options)(fn)
        if cache:
            disp._cache = KernelCache(disp.py_func)   # what Dispatcher.enable_caching does
        return disp
    if len(args) == 1 and callable(args[0]):
        return wrap(args[0])
    assert not args, "signatures are not used by the kernels"
    return wrap
