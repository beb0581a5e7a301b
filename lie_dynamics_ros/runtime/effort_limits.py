"""URDF effort limits read as bounds, and torques clamped to them."""
import math
from typing import Tuple

import numpy as np


def finite_limits(limits) -> np.ndarray:
    """URDF effort limits with 0 or negative (meaning "not set" in many URDFs) read as inf."""
    lim = np.asarray(limits, dtype=float).copy()
    lim[~(lim > 0)] = math.inf
    return lim


def clamp_efforts(tau, limits) -> Tuple[np.ndarray, np.ndarray]:
    """Clamp ``tau`` to ``[-limits, limits]`` (inf = no limit); returns (clamped, acted mask)."""
    tau = np.asarray(tau, dtype=float)
    clamped = np.clip(tau, -limits, limits)
    return clamped, clamped != tau
