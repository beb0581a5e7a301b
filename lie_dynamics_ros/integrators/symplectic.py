"""The θ-family of symplectic Lie group integrators on T*G (Celledoni et al. 2021, §3.1–3.2,
eqs. 11–17; the step is implicit and dexp* is the transpose of dexp).

T*G is identified with G ⋉ g* by right trivialisation, (g1, mu1)(g2, mu2) = (g1 g2,
mu1 + Ad*_{g1^-1} mu2) (11).  A Hamiltonian vector field is F(g, mu) = (R_g* f1, f2 - ad*_{f1} mu)
with f = (dH/dmu, -R_g^* dH/dg) (12, 14).  ``f(g, mu)`` below returns that pair (f1, f2).

One step (15)–(17), implicit in (xi, nbar):

    M_theta = dexp*_{-xi}(mu0 + Ad*_{exp(theta xi)} nbar)
              - theta dexp*_{-theta xi} Ad*_{exp(theta xi)} nbar
    (xi, nbar) = h f(exp(theta xi) g0, M_theta)
    g1 = exp(xi) g0,   mu1 = Ad*_{exp((theta-1) xi)} nbar + Ad*_{exp(-xi)} mu0

Ad*_g := (Ad_g)^T and dexp*_u := (dexp_u)^T with the dot-product pairing (paper eq. 10).
theta = 1/2 is second order; theta = 0 and 1 first order.

The nonlinear equations are solved by a quasi-Newton method (``solver="newton"``: Jacobian by
forward differences, carried over from the previous step and improved by Broyden rank-one
updates while the iteration contracts by a factor 2 or better, recomputed at the current
iterate otherwise, or every ``jac_every`` iterations if given) or by fixed-point iteration
(``solver="fixed_point"``, only for small h), until the correction satisfies
|delta| <= tol * max(1, |(xi, nbar)|) (default tol = 1e-13); ``RuntimeError`` if it does not
within ``max_iter`` iterations.  ``solve_symplectic`` seeds each step with the linear
extrapolation of the last two solutions.
"""
from dataclasses import dataclass

import numpy as np

from ..errors import InputError

__all__ = ["ThetaStepper", "SymplecticResult", "solve_symplectic"]


@dataclass
class SymplecticResult:
    t: np.ndarray
    g: list                    # group elements
    mu: np.ndarray             # (k, dim) momenta
    iterations: np.ndarray     # nonlinear iterations per step
    nfev: int


class ThetaStepper:
    """One step of (15)–(17) on ``group`` (a ``spaces.LieGroup``) for f(g, mu) -> (f1, f2)."""

    def __init__(self, group, f, theta=0.5, tol=1e-13, max_iter=50, solver="newton",
                 jac_every=None, fd_eps=1e-7, broyden=True, reuse_jacobian=True):
        if solver not in ("newton", "fixed_point"):
            raise InputError("solver must be 'newton' or 'fixed_point'")
        self.G, self.f, self.theta = group, f, float(theta)
        self.tol, self.max_iter, self.solver = float(tol), int(max_iter), solver
        self.jac_every = jac_every
        self.fd_eps = fd_eps
        self.broyden = bool(broyden)
        self.reuse_jacobian = bool(reuse_jacobian)
        self._J = None
        self.nfev = 0
        self.njac = 0

    def _M(self, xi, nbar, mu0, E=None):
        G, th = self.G, self.theta
        if E is None:
            E = G.exp(th * xi)
        Ad_s = G.Ad_star(E) @ nbar
        if th == 0.0:
            return G.dexp_star(-xi) @ (mu0 + Ad_s)
        return G.dexp_star(-xi) @ (mu0 + Ad_s) - th * (G.dexp_star(-th * xi) @ Ad_s)

    def _phi(self, z, g0, mu0, h):
        """h f(exp(theta xi) g0, M_theta(xi, nbar)) as one vector."""
        G, d = self.G, self.G.dim
        xi, nbar = z[:d], z[d:]
        E = G.exp(self.theta * xi)
        f1, f2 = self.f(G.mul(E, g0), self._M(xi, nbar, mu0, E))
        self.nfev += 1
        return h * np.concatenate([f1, f2])

    def _jacobian(self, z, phi, g0, mu0, h):
        n = z.size
        J = np.eye(n)
        for k in range(n):
            e = self.fd_eps * max(1.0, abs(z[k]))
            zk = z.copy()
            zk[k] += e
            J[:, k] -= (self._phi(zk, g0, mu0, h) - phi) / e
        self.njac += 1
        return J

    def solve_stage(self, g0, mu0, h, z0=None):
        """Solve (15)–(16) for z = (xi, nbar) (see the module docstring for the iteration)."""
        if z0 is None:
            f1, f2 = self.f(g0, mu0)
            self.nfev += 1
            z = h * np.concatenate([f1, f2])
        else:
            z = np.array(z0, dtype=float)
        J = self._J if self.reuse_jacobian else None
        prev = None
        r_old = dz = None
        for it in range(1, self.max_iter + 1):
            phi = self._phi(z, g0, mu0, h)
            r = z - phi
            if self.solver == "fixed_point":
                dz = -r
            else:
                if J is None or (self.jac_every is not None and (it - 1) % self.jac_every == 0):
                    J = self._jacobian(z, phi, g0, mu0, h)
                elif self.broyden and r_old is not None:
                    # Broyden's rank-one update: J dz = r - r_old afterwards
                    J = J + np.outer((r - r_old) - J @ dz, dz) / (dz @ dz)
                dz = -np.linalg.solve(J, r)
            r_old = r
            nd = float(np.linalg.norm(dz))
            z = z + dz
            if nd <= self.tol * max(1.0, float(np.linalg.norm(z))):
                self._J = J
                return z, it
            if self.solver == "newton" and prev is not None and nd > 0.5 * prev:
                J = None              # slow contraction: new Jacobian at the next iterate
            prev = nd
        raise RuntimeError(f"theta method: no convergence in {self.max_iter} iterations "
                           f"(|delta| = {nd:.3g}); reduce h")

    def step(self, g0, mu0, h, z0=None):
        """(g1, mu1, z, iterations); z = (xi, nbar) can seed the next step's iteration."""
        G, d, th = self.G, self.G.dim, self.theta
        z, it = self.solve_stage(g0, mu0, h, z0)
        xi, nbar = z[:d], z[d:]
        g1 = G.mul(G.exp(xi), g0)
        mu1 = G.Ad_star(G.exp((th - 1.0) * xi)) @ nbar + G.Ad_star(G.exp(-xi)) @ mu0
        return g1, mu1, z, it


def solve_symplectic(group, f, g0, mu0, h, n_steps, theta=0.5, t0=0.0, **kwargs):
    """n_steps of the θ-method with step h from (g0, mu0); kwargs go to ``ThetaStepper``."""
    st = ThetaStepper(group, f, theta, **kwargs)
    g, mu = g0, np.array(mu0, dtype=float)
    gs, mus, its = [g], [mu], []
    z = z_prev = None
    for _ in range(int(n_steps)):
        # initial guess: linear extrapolation of the last two solutions (xi, nbar)
        guess = z if z_prev is None else 2.0 * z - z_prev
        z_prev = z
        g, mu, z, it = st.step(g, mu, h, guess)
        gs.append(g)
        mus.append(mu)
        its.append(it)
    return SymplecticResult(t0 + h * np.arange(int(n_steps) + 1), gs, np.array(mus),
                            np.array(its), st.nfev)
