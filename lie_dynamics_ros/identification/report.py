"""The identification report: how well the data determine the parameters and how well the
identified model predicts the torques."""
from dataclasses import dataclass

import numpy as np

from ..errors import InputError


@dataclass(frozen=True)
class IdentificationReport:
    """``condition_number``: of the weighted base regressor, columns normalized (2-norm).
    ``rms_residual`` (nv,): torque residual RMS per joint (N m or N), ``relative_rms`` the same
    divided by each joint's peak |tau|. ``base_names``: each base parameter named by its
    leading standard column; ``base_combinations``: the full linear combination it stands for.
    ``base_values``, ``base_std``: the identified base parameters and their standard deviations
    from the residual covariance sigma^2 (W^T W)^-1 of the weighted problem (inf when
    undetermined). ``undetermined``: names of the base parameters the data do not determine
    (kept near CAD by the prior). ``rank`` of the data against ``n_base``. ``at_rest`` (nv,):
    each DOF's samples left out as at rest (``identify``'s ``rest_speed``); the residuals
    are over the others."""
    condition_number: float
    rms_residual: np.ndarray
    relative_rms: np.ndarray
    base_names: tuple
    base_combinations: tuple
    base_values: np.ndarray
    base_std: np.ndarray
    undetermined: tuple
    rank: int
    n_base: int
    n_samples: int
    prior: object
    prior_weight: float
    consistent: bool
    converged: bool = True
    at_rest: np.ndarray = None

    def require_excited(self, advice):
        """Raise ``unexcited_error`` (ending with ``advice``) when the data leave any base
        parameter undetermined."""
        if self.undetermined:
            raise unexcited_error(self.undetermined, self.rank, self.n_base,
                                  self.condition_number, advice)

    def __str__(self):
        out = [f"identification: {self.n_samples} samples, {self.n_base} base parameters, "
               f"rank {self.rank}, condition number {self.condition_number:.3g}, "
               f"{'consistent' if self.consistent else 'least squares'}, prior {self.prior} "
               f"(weight {self.prior_weight:g})"
               + (f"; rows at rest left out per joint: {list(map(int, self.at_rest))}"
                  if self.at_rest is not None and self.at_rest.any() else ""),
               "RMS residual per joint: " + ", ".join(
                   f"{r:.3g} ({100 * p:.2f} %)" for r, p in zip(self.rms_residual,
                                                               self.relative_rms))]
        for n, val, sd in zip(self.base_names, self.base_values, self.base_std):
            out.append(f"  {n:<32s} {val: .6g} +- {sd:.3g}"
                       + ("  (undetermined)" if n in self.undetermined else ""))
        return "\n".join(out)


def unexcited_error(names, rank, n_base, condition_number, advice):
    """The InputError of a motion that leaves the base parameters ``names`` undetermined."""
    shown = ", ".join(list(names)[:6]) + (", ..." if len(names) > 6 else "")
    return InputError(f"the motion does not excite {len(names)} of the {n_base} base "
                      f"parameters (rank {rank}, condition number {condition_number:.3g}): "
                      f"{shown}; {advice}")


def build_report(names, B, D, K, Ww, yw, x, rank, undetermined, cond, rms, peak, n_samples,
                 rows, prior, prior_weight, consistent, converged=True, at_rest=None):
    """``Ww``, ``yw``: the weighted problem, any rows with its least-squares function (the
    reduced factors of ``reduction.py``); ``rms``, ``peak`` (nv,): each joint's residual RMS
    and largest |tau|; ``rows``: the number of torque rows used (N nv less those at rest);
    ``at_rest`` (nv,): the rows left out per DOF."""
    beta = x[B] + K @ x[D]
    WB = Ww[:, B]
    nb = WB.shape[1]
    r_w = yw - Ww @ x
    s2 = float(r_w @ r_w) / max(rows - rank, 1)
    und = set(undetermined)
    keep = np.array([c not in und for c in B])
    std = np.full(nb, np.inf)
    if keep.any():
        Wk = WB[:, keep]
        cn = np.linalg.norm(Wk, axis=0)          # normalized columns: units do not matter
        cov = s2 * np.linalg.pinv((Wk / cn).T @ (Wk / cn)) / np.outer(cn, cn)
        std[keep] = np.sqrt(np.maximum(np.diag(cov), 0.0))
    combos = []
    for i, c in enumerate(B):
        terms = [names[c]] + [f"{K[i, k]:+.6g} {names[d]}" for k, d in enumerate(D)
                              if abs(K[i, k]) > 1e-10]
        combos.append(" ".join(terms))
    peak = np.maximum(peak, 1e-300)
    return IdentificationReport(float(cond), rms, rms / peak, tuple(names[c] for c in B),
                                tuple(combos), beta, std,
                                tuple(names[c] for c in undetermined), int(rank), int(B.size),
                                int(n_samples), prior, float(prior_weight), bool(consistent),
                                bool(converged),
                                None if at_rest is None else np.asarray(at_rest, dtype=int))
