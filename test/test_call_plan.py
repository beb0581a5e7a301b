"""The call plan: single-state ID, FD and M dispatch one compiled entry with the Data's packed
buffer (kernels/plan.py); everything else takes the checked path. Both must give the same
numbers, a Data must follow the model it is used with, and no array is ever reinterpreted."""
import numpy as np
import pytest

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms import _inputs
from lie_dynamics_ros.algorithms.tree_plan import tree_plan
from lie_dynamics_ros.kernels import plan as P
from models import bundled, general_twin, zoo


def _state(model, seed):
    rng = np.random.default_rng(seed)
    return (np.asarray(ldr.random_configuration(model, rng), dtype=float),
            rng.normal(size=model.nv), rng.normal(size=model.nv))


def _round_off(x, ref):
    """Equal to 1e-12 relative: the tree kernel and the general one sum in another order."""
    return np.allclose(x, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())


@pytest.fixture(params=["arm7", "zoo"])
def model(request):
    return bundled("arm7.urdf") if request.param == "arm7" else zoo(1, mimic=False)


def test_the_entry_and_the_checked_path_give_the_same_bits(model):
    """f_ext of zeros and lists force the checked path (same kernels, argument by argument).
    On a model of revolute and prismatic joints (arm7) ID, g and C v + g take the tree entries
    of kernels/tree_rnea.py on both paths, and f_ext the general kernel: equal to round-off."""
    zero_f = np.zeros((model.njoints, 6))
    tree = tree_plan(model) is not None

    def same(x, y):
        if tree:
            return np.allclose(x, y, rtol=0, atol=1e-12 * np.abs(y).max())
        return np.array_equal(x, y)

    for seed in range(5):
        q, v, a = _state(model, seed)
        tau = ldr.inverse_dynamics(model, q, v, a)
        assert np.array_equal(tau, ldr.inverse_dynamics(model, list(q), v, a))
        assert same(tau, ldr.inverse_dynamics(model, q, v, a, f_ext=zero_f))
        # without data= a served model takes the tree kernel (kernels/tree_aba.py): round-off
        acc = ldr.forward_dynamics(model, q, v, tau)
        acc_d = ldr.forward_dynamics(model, q, v, tau, data=model.create_data())
        assert np.array_equal(acc_d, ldr.forward_dynamics(model, q, v, tau, f_ext=zero_f))
        assert _round_off(acc, acc_d)
        assert np.array_equal(ldr.mass_matrix(model, q), ldr.mass_matrix(model, list(q)))
        g = ldr.gravity_torques(model, q)
        assert np.array_equal(g, ldr.gravity_torques(model, list(q)))
        assert same(g, ldr.inverse_dynamics(model, q, 0 * v, 0 * a, f_ext=zero_f))
        assert np.array_equal(ldr.nonlinear_effects(model, q, v),
                              ldr.nonlinear_effects(model, list(q), v))
        assert same(ldr.nonlinear_effects(model, q, v),
                    ldr.inverse_dynamics(model, q, v, 0 * a, f_ext=zero_f))
        assert np.allclose(acc, a, atol=1e-8 * (1 + np.abs(a).max()))
        for fn, x in ((ldr.inverse_dynamics_derivatives, a),
                      (ldr.forward_dynamics_derivatives, tau)):
            fast, checked = fn(model, q, v, x), fn(model, list(q), v, x)
            assert all(np.array_equal(f, c) for f, c in zip(fast, checked))


def test_the_entry_equals_the_python_joint_path():
    """The twin with General joints (Python kinematics, never the entry) agrees to round-off."""
    builtin, general = general_twin(3)
    for seed in range(4):
        q, v, a = _state(builtin, seed)
        tau = ldr.inverse_dynamics(builtin, q, v, a)
        assert np.allclose(tau, ldr.inverse_dynamics(general, q, v, a), atol=1e-10)
        assert np.allclose(ldr.forward_dynamics(builtin, q, v, tau),
                           ldr.forward_dynamics(general, q, v, tau), atol=1e-9)
        assert np.allclose(ldr.mass_matrix(builtin, q), ldr.mass_matrix(general, q), atol=1e-10)


def test_a_data_follows_the_model_it_is_used_with():
    """The Data's buffer holds a copy of its model's arrays: used with another model of the same
    sizes (other gravity, armature, inertias) it answers for that model, and back."""
    arm = bundled("arm7.urdf")
    others = [arm.with_gravity((0.0, 0.3, -1.62)), arm.with_joint_dynamics(armature=0.05),
              arm.with_inertial_parameters(1.5 * ldr.inertial_parameters(arm))]
    d = arm.create_data()
    q, v, a = _state(arm, 7)
    for m in [arm] + others + [arm]:
        tau = ldr.inverse_dynamics(m, q, v, a, data=d)
        assert np.array_equal(tau, ldr.inverse_dynamics(m, q, v, a))
        assert _round_off(ldr.forward_dynamics(m, q, v, tau, data=d),
                          ldr.forward_dynamics(m, q, v, tau))
        assert np.array_equal(ldr.mass_matrix(m, q, data=d), ldr.mass_matrix(m, q))
    assert len({tuple(ldr.inverse_dynamics(m, q, v, a)) for m in others}) == len(others)


def test_other_arrays_are_converted_never_reinterpreted():
    """int64, strided, read-only, float32 arrays and lists: numba's dispatch refuses them at the
    entry and the checked path converts them; the result is that of the converted float64."""
    arm = bundled("arm7.urdf")
    q, v, a = _state(arm, 4)
    ldr.inverse_dynamics(arm, q, v, a)
    ldr.forward_dynamics(arm, q, v, a)
    ldr.mass_matrix(arm, q)
    for name in ("inverse_dynamics", "forward_dynamics", "mass_matrix"):
        fn, sig = P.SIGNATURES[name]
        assert getattr(_inputs.ready, name) and fn.signatures == [sig]
    with pytest.raises(TypeError):
        P.inverse_dynamics(arm.default_data().buf, np.arange(arm.nq), v, a, np.empty(arm.nv))
    qi = np.arange(arm.nq) % 2                       # int64 angles
    strided = np.repeat(q, 2)[::2]
    ro = q.copy()
    ro.flags.writeable = False
    for qq, ref in ((qi, qi.astype(float)), (strided, q), (ro, q), (list(q), q),
                    (q.astype(np.float32), q.astype(np.float32).astype(float))):
        assert np.array_equal(ldr.inverse_dynamics(arm, qq, v, a),
                              ldr.inverse_dynamics(arm, ref, v, a))
        assert np.array_equal(ldr.mass_matrix(arm, qq), ldr.mass_matrix(arm, ref))
        # bit for bit but read-only q, which the tree entry refuses (general kernel)
        assert _round_off(ldr.forward_dynamics(arm, qq, v, a),
                          ldr.forward_dynamics(arm, ref, v, a))


@pytest.mark.parametrize("which", ["q", "v", "a"])
def test_a_wrong_length_is_named(which):
    arm = bundled("arm7.urdf")
    args = dict(zip("qva", _state(arm, 5)))
    args[which] = args[which][:-1]
    with pytest.raises(ldr.InputError, match=rf"^{which} must have shape"):
        ldr.inverse_dynamics(arm, args["q"], args["v"], args["a"])
    with pytest.raises(ldr.InputError, match=rf"^{'tau' if which == 'a' else which} must have"):
        ldr.forward_dynamics(arm, args["q"], args["v"], args["a"])
