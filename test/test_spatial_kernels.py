"""The compiled 6x6 congruences X^T I X (X = Ad_{T^-1}) against the explicit matrix product."""
import numpy as np
import pytest

from lie_dynamics_ros.kernels.spatial import (block_congruence_add, congruence_add,
                                              rigid_congruence_add)
from lie_dynamics_ros.conventions import matrix_to_internal
from lie_dynamics_ros.lie import se3, so3


def _case(seed, rigid):
    rng = np.random.default_rng(seed)
    if rigid:
        A = rng.normal(size=(3, 3))
        I = matrix_to_internal(se3.spatial_inertia(rng.uniform(0.5, 2), rng.normal(size=3),
                                                   A @ A.T, so3.exp(rng.normal(size=3))))
    else:                                   # a general symmetric (articulated) inertia
        A = rng.normal(size=(6, 6))
        I = A @ A.T
    T = se3.make(so3.exp(rng.normal(size=3)), rng.normal(size=3))
    X = matrix_to_internal(se3.Ad_inv(T))                 # the kernels' order
    return T[:3, :3].ravel().copy(), T[:3, 3].copy(), I, X.T @ I @ X


@pytest.mark.parametrize("seed", range(5))
def test_congruences_equal_the_matrix_product(seed):
    R, p, I, ref = _case(seed, rigid=False)
    out = np.full((6, 6), 0.5)
    block_congruence_add(R, p, I, out, np.empty((6, 6)), np.empty((6, 6)))
    assert np.allclose(out - 0.5, ref, atol=1e-12)
    out = np.zeros((6, 6))
    congruence_add(R, p, I, out, np.empty(6), np.empty(6))
    assert np.allclose(out, ref, atol=1e-12)
    R, p, I, ref = _case(seed, rigid=True)
    out = np.zeros((6, 6))
    rigid_congruence_add(R, p, I, out)
    assert np.allclose(out, ref, atol=1e-12)
