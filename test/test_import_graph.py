"""The package's import graph: no cycle and a layered core.

Every import counts, at module level and inside functions alike: a function-level import only
hides a cycle until the function runs. Parent packages imported implicitly by Python are not
edges (else every module would sit in a cycle with its package's ``__init__``).
"""
import ast
import os

import lie_dynamics_ros

PKG = "lie_dynamics_ros"
ROOT = os.path.dirname(os.path.abspath(lie_dynamics_ros.__file__))


def _modules():
    """{dotted module name: file path}; a package is named by its folder (its __init__)."""
    mods = {}
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
        rel = os.path.relpath(folder, ROOT)
        base = PKG if rel == "." else PKG + "." + rel.replace(os.sep, ".")
        for f in sorted(files):
            if f.endswith(".py"):
                mods[base if f == "__init__.py" else f"{base}.{f[:-3]}"] = os.path.join(folder, f)
    return mods


MODULES = _modules()


def _imports(name, path):
    """[(imported dotted name, line)] of every import statement in the module ``name``."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    is_pkg = path.endswith("__init__.py")
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:                       # relative: resolve against this module
                parts = name.split(".")
                keep = len(parts) - node.level + (1 if is_pkg else 0)
                base = ".".join(parts[:keep] + ([node.module] if node.module else []))
            else:
                base = node.module
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.append((sub if sub in MODULES else base, node.lineno))
    return out


IMPORTS = {m: _imports(m, p) for m, p in MODULES.items()}


def _graph():
    """Edges between the package's own modules: {module: {imported module: first line}}."""
    g = {m: {} for m in MODULES}
    for m, imps in IMPORTS.items():
        for target, line in imps:
            while target and target not in MODULES and target.startswith(PKG + "."):
                target = target.rsplit(".", 1)[0]     # `import pkg.mod.attr` style: the module
            if target in MODULES and target != m:
                g[m].setdefault(target, line)
    return g


def _find_cycle(g):
    """One cycle as [m0, m1, ..., m0], or None (iterative depth-first search)."""
    state = {}                                    # 1 = on the current path, 2 = finished
    for start in sorted(g):
        if state.get(start):
            continue
        path, its = [start], [iter(sorted(g[start]))]
        state[start] = 1
        while path:
            nxt = next(its[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                its.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                its.append(iter(sorted(g[nxt])))
    return None


def _short(m):
    return m[len(PKG) + 1:] if m.startswith(PKG + ".") else m


def test_the_graph_sees_function_level_and_relative_imports():
    # guards the parser itself: algorithms/dynamics imports ``from ..errors import InputError``
    # at module level; precompile imports numba's registry inside a function
    g = _graph()
    assert f"{PKG}.errors" in g[f"{PKG}.algorithms.dynamics"]
    assert "numba.core.registry" in {t for t, _ in IMPORTS[f"{PKG}.precompile"]}
    assert f"{PKG}.model.model" in g[PKG]           # an __init__ resolves `.model.model`


def test_no_import_cycle():
    g = _graph()
    found = []
    for _ in range(50):              # every cycle: cut the closing edge of each one found
        cycle = _find_cycle(g)
        if not cycle:
            break
        found.append(" -> ".join(f"{_short(a)} (line {g[a][b]})" for a, b in zip(cycle, cycle[1:]))
                     + f" -> {_short(cycle[0])}")
        del g[cycle[-2]][cycle[-1]]
    assert not found, "import cycles:\n" + "\n".join(found)


def _folder(m):
    """The package folder of a module ('ros', 'lie', ...), '' for top-level modules."""
    parts = m.split(".")
    if m in MODULES and MODULES[m].endswith("__init__.py"):
        return parts[1] if len(parts) > 1 else ""
    return parts[1] if len(parts) > 2 else ""


FOLDERS = sorted({_folder(m) for m in MODULES} - {""})
ROS_TOP = {"rclpy", "rosidl_runtime_py", "rosbag2_py", "launch", "launch_ros",
           "builtin_interfaces", "rcl_interfaces"}


def _is_ros(target):
    top = target.split(".")[0]
    return top in ROS_TOP or top.endswith("_msgs") or _folder(target) == "ros" and \
        target.startswith(PKG)


def _violations(rule, modules, bad):
    out = []
    for m in modules:
        for target, line in IMPORTS[m]:
            if bad(target):
                out.append(f"{_short(m)} line {line} imports {target} ({rule})")
    return out


def _in(*folders):
    return [m for m in MODULES if _folder(m) in folders]


def _internal_folder(target):
    """The package folder an import reaches, or None when it leaves the package."""
    if target != PKG and not target.startswith(PKG + "."):
        return None
    while target not in MODULES and "." in target:
        target = target.rsplit(".", 1)[0]
    return _folder(target) if target != PKG else ""


def test_layering():
    errors = []
    errors += _violations("the core is ROS-free", [m for m in MODULES if _folder(m) != "ros"],
                          _is_ros)
    upper = {"integrators", "control", "runtime", "ros"}
    errors += _violations("a lower layer imports an upper one",
                          _in("algorithms", "kernels", "lie", "model"),
                          lambda t: _internal_folder(t) in upper)
    jit = f"{PKG}.kernels.jit"     # the compile options and the cache key (hashes source files)
    for modules, also in (([m for m in _in("kernels") if m != jit], ()),
                          ([jit], ("ast", "functools", "hashlib", "os", "re"))):
        errors += _violations("kernels import only kernels, numpy and numba", modules,
                              lambda t, also=also: (
                                  _internal_folder(t) not in (None, "kernels")
                                  or (_internal_folder(t) is None and t.split(".")[0] not in
                                      ("numpy", "numba", "math") + also)))
    # lie's compiled fronts call kernels/se3_public.py; kernels import only kernels: no cycle
    errors += _violations("lie imports no other package folder but kernels", _in("lie"),
                          lambda t: _internal_folder(t) in set(FOLDERS) - {"lie", "kernels"}
                          or _internal_folder(t) == "" and t == PKG)
    assert not errors, "layering broken:\n" + "\n".join(errors)


def test_the_layer_rules_catch_a_violation():
    # the rules above must be able to fail: a made-up kernel importing the model
    assert _internal_folder(f"{PKG}.model.model") == "model"
    assert _internal_folder(f"{PKG}.ros.spin") == "ros"
    assert _internal_folder("numpy.linalg") is None
    assert _is_ros("sensor_msgs.msg") and _is_ros("rclpy.node") and not _is_ros("numpy")
    assert _find_cycle({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b": 1}, "b": {}, "c": {"a": 1}}) is None
