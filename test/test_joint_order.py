"""ldr.JointOrder maps q and v between our joint order and Pinocchio's (or a driver's)."""
import numpy as np
import pytest

import pinocchio as pin  # a test oracle only

import lie_dynamics_ros as ldr
from oracle import PinMap, build_pin_model, erd


@pytest.mark.parametrize("rel,fb", [("solo_description/robots/solo12.urdf", True),
                                    ("tiago_description/robots/tiago_no_hand.urdf", False)])
def test_pinocchio_vectors_map_by_name(rel, fb):
    path = erd(rel)
    model = ldr.load_urdf(path, floating_base=fb, inertia_check="warn")
    pm = build_pin_model(path, fb)
    ref = PinMap(model, pm, path)
    order = ldr.JointOrder(model, list(pm.names)[1:], continuous="cos_sin")
    assert (order.nq_other, order.nv_other) == (pm.nq, pm.nv)
    rng = np.random.default_rng(0)
    for _ in range(3):
        q, v = ldr.random_configuration(model, rng), rng.normal(size=model.nv)
        qp = order.q_from_model(q)
        np.testing.assert_allclose(qp, ref.q_to_pin(q), atol=1e-15)
        np.testing.assert_allclose(order.q_to_model(qp), q, atol=1e-12)
        np.testing.assert_allclose(order.v_from_model(v), ref.v_to_pin(v, q), atol=1e-15)
        np.testing.assert_allclose(order.v_to_model(order.v_from_model(v)), v, atol=0)
        # the point of it: Pinocchio's torques, mapped back, are ours
        pd = pm.createData()
        tau_pin = pin.rnea(pm, pd, qp, order.v_from_model(v), np.zeros(pm.nv))
        np.testing.assert_allclose(order.v_to_model(tau_pin),
                                   ldr.inverse_dynamics(model, q, v, np.zeros(model.nv)),
                                   atol=1e-9 * (1 + np.abs(tau_pin).max()))


def test_driver_order_with_extra_joints_and_errors():
    model = ldr.load_urdf("arm7")
    names = list(reversed(model.joint_names)) + ["panda_finger_joint1"]
    with pytest.raises(ldr.InputError, match="panda_finger_joint1"):
        ldr.JointOrder(model, names)
    order = ldr.JointOrder(model, names, extra="ignore", fill=np.nan)
    q = np.arange(7.0)
    out = order.q_from_model(q)
    assert np.array_equal(out[:7], q[::-1]) and np.isnan(out[7])
    assert np.array_equal(order.q_to_model(out), q)
    with pytest.raises(ldr.InputError, match="lacks"):
        ldr.JointOrder(model, model.joint_names[:-1])
    with pytest.raises(ldr.InputError, match="twice"):
        ldr.JointOrder(model, model.joint_names + model.joint_names[:1])
    with pytest.raises(ldr.InputError, match=r"\(8,\)"):
        order.q_to_model(q)
