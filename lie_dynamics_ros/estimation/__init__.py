"""Estimators built on the dynamics: the generalized-momentum observer of external torques."""
from .momentum_observer import MomentumObserver

__all__ = ["MomentumObserver"]
