"""Every error type of the library lives in errors.py, is exported, and bad arguments raise
InputError (a ValueError) across the core: simulate, the Lie primitives, control, safety."""
import ast
import inspect
import os

import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros import errors
from lie_dynamics_ros.control import PDGains
from lie_dynamics_ros.integrators.simulate import make_stepper
from lie_dynamics_ros.lie import se3, so3
from lie_dynamics_ros.safety import GuardConfig, JointStateMerger, TorqueGuard
from lie_dynamics_ros.safety.inputs import broadcast_values

ROOT = os.path.dirname(os.path.abspath(ldr.__file__))
ERRORS = [c for _, c in inspect.getmembers(errors, inspect.isclass)
          if issubclass(c, Exception) and c.__module__ == errors.__name__]


def test_errors_py_defines_the_five_public_errors():
    assert {c.__name__ for c in ERRORS} == {"URDFError", "SDFError", "InputError",
                                            "SimulationDiverged", "GeodesicError"}


@pytest.mark.parametrize("cls", ERRORS, ids=lambda c: c.__name__)
def test_each_error_is_exported(cls):
    assert getattr(ldr, cls.__name__) is cls
    assert cls.__name__ in ldr.__all__


def test_builtin_bases_kept_for_callers_that_catch_them():
    for cls in (ldr.URDFError, ldr.SDFError, ldr.InputError):
        assert issubclass(cls, ValueError)
    assert issubclass(ldr.SDFError, ldr.URDFError)
    assert issubclass(ldr.GeodesicError, ldr.InputError)
    assert issubclass(ldr.SimulationDiverged, FloatingPointError)


def test_no_exception_class_outside_errors_py():
    found = []
    for folder, _, files in os.walk(ROOT):
        for f in files:
            path = os.path.join(folder, f)
            if not f.endswith(".py") or path == errors.__file__:
                continue
            with open(path) as fh:
                tree = ast.parse(fh.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and any(
                        (isinstance(b, ast.Name) and b.id.endswith(("Error", "Exception")))
                        or (isinstance(b, ast.Attribute) and b.attr.endswith("Error"))
                        for b in node.bases):
                    found.append(f"{os.path.relpath(path, ROOT)}: class {node.name}")
    assert not found, "error types outside errors.py: " + ", ".join(found)


def test_old_import_paths_give_the_same_classes():
    from lie_dynamics_ros.integrators.simulator import SimulationDiverged
    from lie_dynamics_ros.model.sdf import SDFError
    assert SimulationDiverged is ldr.SimulationDiverged and SDFError is ldr.SDFError


@pytest.fixture(scope="module")
def pendulum():
    return ldr.load_urdf("double_pendulum")


@pytest.mark.parametrize("bad", [
    dict(q0=np.zeros(5)), dict(q0=np.full(2, np.nan)), dict(duration=-1.0),
    dict(method="no_such_method"), dict(tau=np.zeros(7)), dict(prescribed=np.zeros(3, bool)),
], ids=["q0 shape", "q0 nan", "duration", "method", "tau shape", "mask shape"])
def test_simulate_raises_input_error(pendulum, bad):
    args = dict(q0=np.zeros(2), v0=np.zeros(2), duration=0.01, dt=1e-3)
    args.update(bad)
    with pytest.raises(ldr.InputError):
        ldr.simulate(pendulum, args.pop("q0"), args.pop("v0"), args.pop("duration"),
                     args.pop("dt"), **args)


def test_rollout_and_make_stepper_raise_input_error(pendulum):
    with pytest.raises(ldr.InputError, match="method must be one of"):
        make_stepper(pendulum, "rkmk45")
    with pytest.raises(ldr.InputError, match="make_constrained_stepper"):
        ldr.make_constrained_stepper(pendulum, "cf43")
    with pytest.raises(ldr.InputError, match="batched q0"):
        ldr.rollout(pendulum, np.zeros((3, 5)), np.zeros((3, 2)), 0.01, 1e-3)


@pytest.mark.parametrize("call", [
    lambda: so3.exp(np.zeros(4)), lambda: so3.log(np.eye(2)),
    lambda: so3.quat_to_rot(np.zeros(4)), lambda: so3.dexp_inv(np.zeros(3), order=-1),
    lambda: se3.exp(np.zeros(5)),
], ids=["so3.exp", "so3.log", "quat zero", "dexp_inv order", "se3.exp"])
def test_lie_raises_input_error(call):
    with pytest.raises(ldr.InputError):
        call()


def test_control_raises_input_error(pendulum):
    with pytest.raises(ldr.InputError, match="K_P"):
        PDGains(K_P=-1.0)
    with pytest.raises(ldr.InputError, match="K_D has 3 entries"):
        ldr.control.PDGravityController(pendulum, PDGains(K_D=[1.0, 2.0, 3.0]))
    with pytest.raises(ldr.InputError, match="theta must have 10 numbers"):
        ldr.control.project_physical(np.zeros(7))


def test_safety_raises_input_error():
    with pytest.raises(ldr.InputError, match="state_timeout"):
        TorqueGuard(np.ones(2), config=GuardConfig(state_timeout=-1.0))
    with pytest.raises(ldr.InputError, match="missing_joints"):
        JointStateMerger(["a"], missing="guess")
    with pytest.raises(ldr.InputError, match="give 1 or 2"):
        broadcast_values("effort_limits", [1.0, 2.0, 3.0], 2, 0.0)


def test_batched_row_error_names_the_row(pendulum):
    Q = np.zeros((4, 2))
    Q[2, 1] = np.nan
    with pytest.raises(ldr.InputError, match="row 2"):
        ldr.inverse_dynamics(pendulum, Q, np.zeros((4, 2)), np.zeros((4, 2)))
    with pytest.raises(ldr.InputError, match="q must be a numeric array"):
        ldr.forward_dynamics(pendulum, "not numbers", np.zeros((4, 2)), np.zeros((4, 2)))
    with pytest.raises(ldr.InputError, match=r"batched v must have shape \(4, 2\)"):
        ldr.forward_dynamics(pendulum, np.zeros((4, 2)), np.zeros((3, 2)), np.zeros((4, 2)))


SIM_MODEL = ldr.load_urdf("double_pendulum")
BAD_RUN_ARGUMENTS = [
    ("tau", np.zeros(3)), ("tau", np.zeros((3, 1))), ("tau", "abc"), ("tau", object()),
    ("tau", np.array([np.nan, 0.0])), ("q0", np.zeros(3)), ("q0", "ab"), ("v0", None),
    ("duration", -1.0), ("duration", "x"), ("duration", None), ("duration", [1.0]),
    ("dt", 0.0), ("dt", "x"), ("dt", float("nan")), ("dt", [1e-3]), ("t0", "x"),
    ("t0", float("nan")), ("max_steps", 0), ("max_steps", "x"), ("method", "foo"),
    ("a_prescribed", "x"), ("a_prescribed", np.zeros(3)), ("prescribed", np.zeros(3, bool))]


@pytest.mark.parametrize("fn", ["simulate", "rollout"])
@pytest.mark.parametrize("arg,value", BAD_RUN_ARGUMENTS,
                         ids=["%s=%r" % (a, v)[:40] for a, v in BAD_RUN_ARGUMENTS])
def test_simulate_and_rollout_refuse_bad_arguments_with_input_error_naming_them(fn, arg, value):
    batched = fn == "rollout"
    args = dict(q0=np.zeros((2, 2)) if batched else np.zeros(2),
                v0=np.zeros((2, 2)) if batched else np.zeros(2), duration=0.01, dt=1e-3)
    if arg == "a_prescribed":
        args["prescribed"] = np.ones(2, bool)
    args[arg] = value
    if batched and arg == "q0" and not isinstance(value, str):
        args[arg] = np.atleast_2d(value)
    with pytest.raises(ldr.InputError) as err:
        getattr(ldr, fn)(SIM_MODEL, args.pop("q0"), args.pop("v0"), args.pop("duration"),
                         **args)
    assert arg in str(err.value)


@pytest.mark.parametrize("arg,value", [("rtol", -1.0), ("rtol", "x"), ("atol", float("nan")),
                                       ("callback", 3)])
def test_the_adaptive_and_callback_arguments_too(arg, value):
    with pytest.raises(ldr.InputError, match=arg):
        ldr.simulate(SIM_MODEL, np.zeros(2), np.zeros(2), 0.01, method="rkmk45", **{arg: value})
