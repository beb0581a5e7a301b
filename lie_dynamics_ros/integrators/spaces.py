"""Lie groups, and homogeneous spaces with a Lie group action, for the Lie group integrators.

The framework of Celledoni et al. (2021, §2.1, eqs. 1–3): a manifold M with a transitive action
psi: G x M -> M, and a map f: M -> g with  y' = psi_*(f(y))|_y,  i.e. "y' = f(y) . y".
The integrators only need, from a space,

* ``exp_act(xi, y)``      = psi(exp(xi), y)
* ``dexp_inv(u, v, order)`` = dexp_u^{-1} v  (right-trivialised, eq. 7; ``order=None``
  exact, ``order=k`` the Bernoulli series truncated after ad_u^k, coefficients 1, -1/2, 1/12, 0,
  -1/720, ...)
* ``bracket(u, v)``       = [u, v]      (for the Casas–Owren RKMK4 and truncated series)
* ``dist(y1, y2)``        a metric on M (error estimates of the commutator-free pairs, §4)

States are flat float arrays and Lie algebra elements are flat vectors, so that direct
products are concatenations.  se(3) is linear first, xi = (v, w), as ``lie.se3`` and the
public API (``TS2Space`` keeps Celledoni's angular-first copies).

Groups (``LieGroup``): ``Rn``, ``SO3``, ``SE3``, ``ProductGroup``.  They also provide what the
symplectic T*G integrator needs: ``mul``, ``inv``, ``Ad`` (matrix), ``dexp`` (matrix) and the
duals ``Ad_star(g) = Ad_g^T`` and ``dexp_star(u) = dexp_u^T``.

Spaces (``HomogeneousSpace``):

=====================  ===================  ========================================================
space                  group (algebra dim)  action / state
=====================  ===================  ========================================================
``VectorSpace(n)``     (R^n, +)  (n)        y + a
``GroupSpace(G)``      G acting on itself   left multiplication g . y, state = flattened element
``SO3Space()``         SO(3) (3)            R -> B R, state = R.ravel() (9)
``SE3Space()``         SE(3) (6)            T -> B T, state = T.ravel() (16)
``S2Space()``          SO(3) (3)            q -> A q, state q (3)
``TS2Space(count)``    SE(3)^count (6 each) (q, w) -> (A q, A w + a x A q): the SE(3) adjoint
                                            action restricted to TS^2 (Celledoni §5.1)
``CoadjointSO3()``     SO(3) (3)            mu -> A mu on so(3)* (Lie–Poisson, Example 1)
``ProductSpace(...)``  direct product       componentwise
=====================  ===================  ========================================================
"""
from math import factorial

import numpy as np

from ..errors import InputError
from ..kernels import integrate as KI
from ..lie import se3, so3

__all__ = [
    "LieGroup", "Rn", "SO3", "SE3", "ProductGroup",
    "HomogeneousSpace", "VectorSpace", "GroupSpace", "SO3Space", "SE3Space", "S2Space",
    "TS2Space", "CoadjointSO3", "ProductSpace", "BERNOULLI_COEFFS", "dexp_inv_series", "cross3",
]

#: B_k / k!  (B_1 = -1/2) for k = 0..10: the coefficients of dexp^-1 = sum B_k/k! ad^k (eq. 8)
BERNOULLI_COEFFS = np.array([float(b / factorial(k)) for k, b in enumerate(so3.bernoulli(10))])


def dexp_inv_series(bracket, u, v, order):
    """sum_{k<=order} B_k/k! ad_u^k v using only the bracket (any Lie algebra)."""
    order = int(order)
    if order < 0 or order >= len(BERNOULLI_COEFFS):
        raise InputError(f"dexp_inv order must be in [0, {len(BERNOULLI_COEFFS) - 1}]")
    out = np.array(v, dtype=float, copy=True)
    w = out
    for k in range(1, order + 1):
        w = bracket(u, w)
        c = BERNOULLI_COEFFS[k]
        if c != 0.0:
            out = out + c * w
    return out


#: a x b for two 3-vectors (lie.so3.cross)
cross3 = so3.cross
_hat = so3.hat


# ============================================================================= groups
class LieGroup:
    """A matrix Lie group with algebra R^dim.  Subclasses implement the abstract methods."""
    dim = 0

    def identity(self):
        raise NotImplementedError

    def exp(self, xi):
        raise NotImplementedError

    def log(self, g):
        raise NotImplementedError

    def mul(self, g, h):
        raise NotImplementedError

    def inv(self, g):
        raise NotImplementedError

    def Ad(self, g):
        """Matrix of Ad_g on the algebra."""
        raise NotImplementedError

    def ad(self, xi):
        """Matrix of ad_xi (ad_xi y = [xi, y])."""
        raise NotImplementedError

    def bracket(self, u, v):
        return self.ad(u) @ v

    def dexp(self, u):
        """Matrix of the right-trivialised dexp_u (d/dt exp(u) = dexp_u(u') exp(u))."""
        raise NotImplementedError

    def dexp_inv(self, u, order=None):
        """Matrix of dexp_u^-1 (exact for order=None, else the truncated Bernoulli series)."""
        raise NotImplementedError

    def Ad_star(self, g):
        """Ad*_g := (Ad_g)^T acting on the dual g* (paper eq. 10, pairing = dot product)."""
        return self.Ad(g).T

    def ad_star(self, xi):
        return self.ad(xi).T

    def dexp_star(self, u):
        """dexp*_u := (dexp_u)^T, the dual of dexp (Celledoni et al. 2021, eq. 15)."""
        return self.dexp(u).T

    def flatten(self, g):
        return np.asarray(g, dtype=float).ravel()

    def unflatten(self, y):
        raise NotImplementedError

    @property
    def size(self):
        return self.flatten(self.identity()).size


class Rn(LieGroup):
    """The additive group R^n (abelian: ad = 0, dexp = identity)."""

    def __init__(self, n):
        self.dim = int(n)

    def identity(self):
        return np.zeros(self.dim)

    def exp(self, xi):
        return np.array(xi, dtype=float)

    def log(self, g):
        return np.array(g, dtype=float)

    def mul(self, g, h):
        return g + h

    def inv(self, g):
        return -g

    def Ad(self, g):
        return np.eye(self.dim)

    def ad(self, xi):
        return np.zeros((self.dim, self.dim))

    def bracket(self, u, v):
        return np.zeros(self.dim)

    def dexp(self, u):
        return np.eye(self.dim)

    def dexp_inv(self, u, order=None):
        return np.eye(self.dim)

    def unflatten(self, y):
        return np.asarray(y, dtype=float)

    def __repr__(self):
        return f"Rn({self.dim})"


class SO3(LieGroup):
    """SO(3) as 3x3 matrices, algebra R^3 via hat (lie.so3)."""
    dim = 3

    def identity(self):
        return np.eye(3)

    def exp(self, xi):
        return so3.exp(xi)

    def log(self, g):
        return so3.log(g)

    def mul(self, g, h):
        return g @ h

    def inv(self, g):
        return g.T

    def Ad(self, g):
        return np.asarray(g, dtype=float)

    def ad(self, xi):
        return _hat(xi)

    def bracket(self, u, v):
        return cross3(u, v)

    def dexp(self, u):
        return so3.dexp(u)

    def dexp_inv(self, u, order=None):
        return so3.dexp_inv(u, order)

    def unflatten(self, y):
        return np.asarray(y, dtype=float).reshape(3, 3)

    def __repr__(self):
        return "SO3()"


class SE3(LieGroup):
    """SE(3) as 4x4 matrices, algebra R^6 = (v, w) linear first (lie.se3)."""
    dim = 6

    def identity(self):
        return np.eye(4)

    def exp(self, xi):
        return se3.exp_unchecked(np.asarray(xi, dtype=float))

    def log(self, g):
        return se3.log_unchecked(np.asarray(g, dtype=float))

    def mul(self, g, h):
        return g @ h

    def inv(self, g):
        return se3.inv_unchecked(np.asarray(g, dtype=float))

    def Ad(self, g):
        return se3.Ad_unchecked(np.asarray(g, dtype=float))

    def ad(self, xi):
        return se3.ad_unchecked(np.asarray(xi, dtype=float))

    def bracket(self, u, v):
        return se3.bracket_unchecked(np.asarray(u, dtype=float), np.asarray(v, dtype=float))

    def dexp(self, u):
        return se3.dexp_unchecked(np.asarray(u, dtype=float))

    def dexp_inv(self, u, order=None):
        return se3.dexp_inv_unchecked(np.asarray(u, dtype=float), order)

    def unflatten(self, y):
        return np.asarray(y, dtype=float).reshape(4, 4)

    def __repr__(self):
        return "SE3()"


def _block_diag(mats):
    n = sum(m.shape[0] for m in mats)
    out = np.zeros((n, n))
    i = 0
    for m in mats:
        k = m.shape[0]
        out[i:i + k, i:i + k] = m
        i += k
    return out


class ProductGroup(LieGroup):
    """Direct product G1 x ... x Gk; elements are tuples, algebra elements concatenations."""

    def __init__(self, *groups):
        if len(groups) == 1 and isinstance(groups[0], (list, tuple)):
            groups = tuple(groups[0])
        self.groups = tuple(groups)
        self.offsets = np.cumsum([0] + [G.dim for G in self.groups])
        self.dim = int(self.offsets[-1])
        sizes = [G.size for G in self.groups]
        self._soff = np.cumsum([0] + sizes)

    def _split(self, xi):
        o = self.offsets
        return [xi[o[i]:o[i + 1]] for i in range(len(self.groups))]

    def identity(self):
        return tuple(G.identity() for G in self.groups)

    def exp(self, xi):
        return tuple(G.exp(x) for G, x in zip(self.groups, self._split(xi)))

    def log(self, g):
        return np.concatenate([G.log(x) for G, x in zip(self.groups, g)])

    def mul(self, g, h):
        return tuple(G.mul(a, b) for G, a, b in zip(self.groups, g, h))

    def inv(self, g):
        return tuple(G.inv(a) for G, a in zip(self.groups, g))

    def Ad(self, g):
        return _block_diag([G.Ad(a) for G, a in zip(self.groups, g)])

    def ad(self, xi):
        return _block_diag([G.ad(x) for G, x in zip(self.groups, self._split(xi))])

    def bracket(self, u, v):
        return np.concatenate([G.bracket(a, b) for G, a, b in
                               zip(self.groups, self._split(u), self._split(v))])

    def dexp(self, u):
        return _block_diag([G.dexp(x) for G, x in zip(self.groups, self._split(u))])

    def dexp_inv(self, u, order=None):
        return _block_diag([G.dexp_inv(x, order) for G, x in zip(self.groups, self._split(u))])

    def flatten(self, g):
        return np.concatenate([G.flatten(a) for G, a in zip(self.groups, g)])

    def unflatten(self, y):
        s = self._soff
        return tuple(G.unflatten(y[s[i]:s[i + 1]]) for i, G in enumerate(self.groups))

    def __repr__(self):
        return "ProductGroup(" + ", ".join(map(repr, self.groups)) + ")"


# ============================================================================= spaces
class HomogeneousSpace:
    """A manifold with a (left) Lie group action, states as flat arrays of length ``size``.

    Subclasses set ``dim`` (algebra dimension), ``size`` and implement ``exp_act``,
    ``generator``; the default ``dexp_inv`` uses ``dexp_inv_exact`` (exact) or the bracket
    series (truncated).
    """
    dim = 0
    size = 0

    def exp_act(self, xi, y):
        """psi(exp(xi), y)."""
        raise NotImplementedError

    def generator(self, xi, y):
        """psi_*(xi)|_y = d/dt psi(exp(t xi), y) at t = 0 (the vector field in the embedding)."""
        raise NotImplementedError

    def bracket(self, u, v):
        raise NotImplementedError

    def dexp_inv_exact(self, u, v):
        raise NotImplementedError

    def dexp_inv(self, u, v, order=None):
        """dexp_u^{-1} v; order=None exact, int k: series truncated after ad_u^k."""
        if order is None:
            return self.dexp_inv_exact(u, v)
        return dexp_inv_series(self.bracket, u, v, order)

    def dist(self, y1, y2):
        """A metric on the manifold (default: Euclidean distance in the embedding)."""
        return float(np.linalg.norm(np.asarray(y1) - np.asarray(y2)))

    def scale(self, y):
        """Per-algebra-component magnitudes for relative tolerances (default: ones)."""
        return np.ones(self.dim)

    def project(self, y):
        """Nearest point on the manifold (used only by classical comparison methods)."""
        return np.asarray(y, dtype=float)


class VectorSpace(HomogeneousSpace):
    """R^n acting on itself by translation: exp_act(a, y) = y + a (classical RK is recovered)."""

    def __init__(self, n):
        self.dim = self.size = int(n)

    def exp_act(self, xi, y):
        return y + xi

    def generator(self, xi, y):
        return np.array(xi, dtype=float)

    def bracket(self, u, v):
        return np.zeros(self.dim)

    def dexp_inv(self, u, v, order=None):
        return np.array(v, dtype=float)

    def dexp_inv_exact(self, u, v):
        return np.array(v, dtype=float)

    def scale(self, y):
        return np.abs(y)

    def __repr__(self):
        return f"VectorSpace({self.dim})"


class GroupSpace(HomogeneousSpace):
    """A Lie group acting on itself by left multiplication: y' = f(y) y (f = spatial velocity)."""

    def __init__(self, group):
        self.group = group
        self.dim = group.dim
        self.size = group.size

    def exp_act(self, xi, y):
        G = self.group
        return G.flatten(G.mul(G.exp(xi), G.unflatten(y)))

    def generator(self, xi, y):
        if isinstance(self.group, Rn):
            return np.array(xi, dtype=float)
        return (self._lie_mat(xi) @ self.group.unflatten(y)).ravel()

    def _lie_mat(self, xi):
        if isinstance(self.group, SO3):
            return _hat(xi)
        if isinstance(self.group, SE3):
            return se3.hat_unchecked(np.asarray(xi, dtype=float))
        raise NotImplementedError

    def bracket(self, u, v):
        return self.group.bracket(u, v)

    def dexp_inv_exact(self, u, v):
        return self.group.dexp_inv(u) @ v

    def dist(self, y1, y2):
        """Geodesic-type distance |log(y1^-1 y2)| (for the CF error estimates, Celledoni §4)."""
        G = self.group
        return float(np.linalg.norm(G.log(G.mul(G.inv(G.unflatten(y1)), G.unflatten(y2)))))

    def __repr__(self):
        return f"GroupSpace({self.group!r})"


class SO3Space(GroupSpace):
    """SO(3) acting on itself; state R.ravel() (9 numbers)."""

    def __init__(self):
        super().__init__(SO3())

    def generator(self, xi, y):
        return (_hat(xi) @ y.reshape(3, 3)).ravel()

    def exp_act(self, xi, y):
        return (so3.exp(xi) @ y.reshape(3, 3)).ravel()

    def project(self, y):
        U, _, Vt = np.linalg.svd(np.asarray(y).reshape(3, 3))
        R = U @ Vt
        if np.linalg.det(R) < 0:
            R = U @ np.diag([1, 1, -1]) @ Vt
        return R.ravel()


class SE3Space(GroupSpace):
    """SE(3) acting on itself; state T.ravel() (16 numbers)."""

    def __init__(self):
        super().__init__(SE3())

    def generator(self, xi, y):
        return (se3.hat_unchecked(np.asarray(xi, dtype=float)) @ y.reshape(4, 4)).ravel()

    def exp_act(self, xi, y):
        return (se3.exp_unchecked(np.asarray(xi, dtype=float)) @ y.reshape(4, 4)).ravel()


class S2Space(HomogeneousSpace):
    """The sphere S^2 under SO(3): exp_act(u, q) = exp(u) q; f(q) = q x q' gives q' = f x q."""
    dim, size = 3, 3

    def exp_act(self, xi, y):
        return so3.exp(xi) @ y

    def generator(self, xi, y):
        return cross3(xi, y)

    def bracket(self, u, v):
        return cross3(u, v)

    def dexp_inv_exact(self, u, v):
        return so3.dexp_inv(u) @ v

    def dist(self, y1, y2):
        """Great-circle distance."""
        return float(np.arctan2(np.linalg.norm(np.cross(y1, y2)), np.dot(y1, y2)))

    def project(self, y):
        return y / np.linalg.norm(y)


class CoadjointSO3(HomogeneousSpace):
    """so(3)* under SO(3) by g . mu = g mu (coadjoint orbits = spheres |mu| = const).

    The generator is xi x mu.  For a left-invariant Hamiltonian the Lie–Poisson equation reads
    mu' = mu x dH/dmu (Celledoni et al. 2021, Example 1 and eq. 18, whose printed sign is that
of the body equation), so use f(mu) = -dH/dmu.
    """
    dim, size = 3, 3

    def exp_act(self, xi, y):
        return so3.exp(xi) @ y

    def generator(self, xi, y):
        return cross3(xi, y)

    def bracket(self, u, v):
        return cross3(u, v)

    def dexp_inv_exact(self, u, v):
        return so3.dexp_inv(u) @ v


class TS2Space(HomogeneousSpace):
    """(TS^2)^count under SE(3)^count with the adjoint action (Celledoni et al. 2021, §5.1).

    State per copy: (q, w) with |q| = 1, q.w = 0 (6 numbers); algebra per copy: (u, v) in se(3)
    (angular first, as Celledoni writes it and as the kernels take it; ``lie.se3`` is linear
    first).  psi((A, a), (q, w)) = (A q, A w + a x A q) with (A, a) = exp(u, v) the full
    SE(3) exponential (a = J_l(u) v, translation included); generator (u x q, u x w + v x q).
    For the N-fold pendulum f = (w_i, q_i x h_i)_i gives q_i' = w_i x q_i, w_i' = h_i.
    The action and dexp^-1 run over all copies in one call of ``kernels/integrate.py`` (over
    the compiled twins of ``lie.se3`` in ``kernels/lie.py``).
    """

    def __init__(self, count=1):
        self.count = int(count)
        self.dim = self.size = 6 * self.count

    def exp_act(self, xi, y):
        X = np.ascontiguousarray(xi, dtype=float).reshape(-1, 6)
        Y = np.ascontiguousarray(y, dtype=float).reshape(-1, 6)
        out = np.empty_like(Y)
        KI.ts2_exp_act(X, Y, out)
        return out.ravel()

    def generator(self, xi, y):
        X = np.asarray(xi, dtype=float).reshape(-1, 6)
        Y = np.asarray(y, dtype=float).reshape(-1, 6)
        out = np.empty_like(Y)
        out[:, :3] = _cross(X[:, :3], Y[:, :3])
        out[:, 3:] = _cross(X[:, :3], Y[:, 3:]) + _cross(X[:, 3:], Y[:, :3])
        return out.ravel()

    def bracket(self, u, v):
        U, V = np.asarray(u).reshape(-1, 6), np.asarray(v).reshape(-1, 6)
        out = np.empty_like(U)
        out[:, :3] = _cross(U[:, :3], V[:, :3])
        out[:, 3:] = _cross(U[:, :3], V[:, 3:]) - _cross(V[:, :3], U[:, 3:])
        return out.ravel()

    def dexp_inv_exact(self, u, v):
        U = np.ascontiguousarray(u, dtype=float).reshape(-1, 6)
        out = np.empty_like(U)
        KI.se3_dexp_inv_rows(U, np.ascontiguousarray(v, dtype=float).reshape(-1, 6), out)
        return out.ravel()

    def project(self, y):
        Y = np.array(y, dtype=float).reshape(-1, 6)
        q = Y[:, :3] / np.linalg.norm(Y[:, :3], axis=1, keepdims=True)
        w = Y[:, 3:] - np.sum(Y[:, 3:] * q, axis=1, keepdims=True) * q
        return np.concatenate([q, w], axis=1).ravel()

    def __repr__(self):
        return f"TS2Space({self.count})"


# ----------------------------------------------------------------------------- rows of se(3)
def _cross(a, b):
    """Row-wise cross product of (n, 3) arrays (faster than np.cross for small n)."""
    a0, a1, a2 = a[:, 0], a[:, 1], a[:, 2]
    b0, b1, b2 = b[:, 0], b[:, 1], b[:, 2]
    out = np.empty(a.shape)
    out[:, 0] = a1 * b2 - a2 * b1
    out[:, 1] = a2 * b0 - a0 * b2
    out[:, 2] = a0 * b1 - a1 * b0
    return out


class ProductSpace(HomogeneousSpace):
    """Direct product of homogeneous spaces, acting componentwise (Celledoni §5.1, §6.1)."""

    def __init__(self, *spaces):
        if len(spaces) == 1 and isinstance(spaces[0], (list, tuple)):
            spaces = tuple(spaces[0])
        self.spaces = tuple(spaces)
        self.aoff = np.cumsum([0] + [s.dim for s in self.spaces])
        self.soff = np.cumsum([0] + [s.size for s in self.spaces])
        self.dim, self.size = int(self.aoff[-1]), int(self.soff[-1])

    def _a(self, x, i):
        return x[self.aoff[i]:self.aoff[i + 1]]

    def _s(self, y, i):
        return y[self.soff[i]:self.soff[i + 1]]

    def component(self, y, i):
        """The i-th factor's part of the state y."""
        return self._s(y, i)

    def algebra_component(self, xi, i):
        return self._a(xi, i)

    def exp_act(self, xi, y):
        return np.concatenate([s.exp_act(self._a(xi, i), self._s(y, i))
                               for i, s in enumerate(self.spaces)])

    def generator(self, xi, y):
        return np.concatenate([s.generator(self._a(xi, i), self._s(y, i))
                               for i, s in enumerate(self.spaces)])

    def bracket(self, u, v):
        return np.concatenate([s.bracket(self._a(u, i), self._a(v, i))
                               for i, s in enumerate(self.spaces)])

    def dexp_inv(self, u, v, order=None):
        return np.concatenate([s.dexp_inv(self._a(u, i), self._a(v, i), order)
                               for i, s in enumerate(self.spaces)])

    def dexp_inv_exact(self, u, v):
        return self.dexp_inv(u, v, None)

    def dist(self, y1, y2):
        return float(np.sqrt(sum(s.dist(self._s(y1, i), self._s(y2, i)) ** 2
                                 for i, s in enumerate(self.spaces))))

    def scale(self, y):
        return np.concatenate([s.scale(self._s(y, i)) for i, s in enumerate(self.spaces)])

    def project(self, y):
        return np.concatenate([s.project(self._s(y, i)) for i, s in enumerate(self.spaces)])

    def __repr__(self):
        return "ProductSpace(" + ", ".join(map(repr, self.spaces)) + ")"
