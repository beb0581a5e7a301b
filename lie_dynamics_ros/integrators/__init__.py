"""Lie group integrators (Celledoni, Çokaj, Leone, Murari, Owren 2021; docs/references.md).

Problems are posed as y' = f(t, y) . y on a homogeneous space (``spaces``), with f returning a
Lie algebra element.  Methods: Lie–Euler, Lie–Euler–Heun, RKMK on any Butcher tableau (exact or
truncated dexp^-1), Casas–Owren RKMK4 with two commutators, commutator-free CF3/CF4, embedded
pairs RKMK(5,4), CF 3(2) A/B, CF 4(3) driven by the paper's step-size controller, and the
θ-family of symplectic integrators on T*G.  ``simulate`` integrates URDF multibody models on
their configuration group.  See docs/integrators.md.
"""
from .spaces import (LieGroup, Rn, SO3, SE3, ProductGroup, HomogeneousSpace, VectorSpace,
                     GroupSpace, SO3Space, SE3Space, S2Space, TS2Space, CoadjointSO3,
                     ProductSpace)
from .tableaus import Tableau, EULER, HEUN, MIDPOINT, RK3, RALSTON3, RK4, DOPRI5, TABLEAUS
from .rkmk import RKMK, RKMK4TwoCommutators
from .cf import CFScheme, CF3, CF4, CF32A, CF32B, CF43
from .adaptive import StepSizeController, solve_adaptive
from .solve import METHODS, ADAPTIVE_METHODS, get_method, solve, solve_fixed, Solution
from .symplectic import ThetaStepper, solve_symplectic


# ``simulate`` (multibody models) lives in ``integrators.simulate`` and is exported by the
# top-level package as ``lie_dynamics_ros.simulate``.

__all__ = [
    "LieGroup", "Rn", "SO3", "SE3", "ProductGroup", "HomogeneousSpace", "VectorSpace",
    "GroupSpace", "SO3Space", "SE3Space", "S2Space", "TS2Space", "CoadjointSO3", "ProductSpace",
    "Tableau", "EULER", "HEUN", "MIDPOINT", "RK3", "RALSTON3", "RK4", "DOPRI5", "TABLEAUS",
    "RKMK", "RKMK4TwoCommutators", "CFScheme", "CF3", "CF4", "CF32A", "CF32B", "CF43",
    "StepSizeController", "solve_adaptive", "METHODS", "ADAPTIVE_METHODS", "get_method", "solve",
    "solve_fixed", "Solution", "ThetaStepper", "solve_symplectic",
]
