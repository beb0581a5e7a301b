"""The compiled entries of the single-state centroidal calls and of M^-1, on the Data's packed
buffer as those of kernels/plan.py: the model and the work memory travel in ``buf``, so a call
dispatches with the buffer, the inputs and the output only, and the kernels run on views
without reference counts (kernels/views.py).

Each entry checks the lengths against the buffer's header (status BAD_SIZE) before it reads
them, and is compiled for ``SIGNATURES`` alone (C-contiguous arrays): any other argument is a
``TypeError`` of numba's dispatch and the Python caller takes its checked path. ``perm`` is
conventions.PUBLIC_ROWS (read-only), the row order of the public 6-vectors.
"""
import numpy as np
from numba import types

from .layout import H_NB, H_NQ, H_NV, H_ZERO, H_FAIL, BAD_SIZE
from . import centroidal as K
from .inverse_mass import mass_matrix_inverse as _minv
from .jit import JIT, njit
from .plan import unpack
from .views import bare, c_view


@njit(inline="always", **JIT)
def _zero(buf, h):
    return c_view(buf[h[H_ZERO]:], (h[H_NV],))


@njit(**JIT)
def center_of_mass(buf, q, c):
    """c (3,): the centre of mass (kernels/centroidal.center_of_mass); a status code."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    if not ok or q.shape[0] != h[H_NQ] or c.shape[0] != 3:
        return BAD_SIZE
    z = _zero(buf, h)
    return K.center_of_mass(mi, mc, mI, dv, dm, bare(q), z, z, c_view(c, (1, 3)), True)


@njit(**JIT)
def center_of_mass_motion(buf, q, v, a, out):
    """out (2, 3): c, dc/dt (``a`` unread), or (3, 3): c, dc/dt, d2c/dt2."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    nv = h[H_NV]
    if not ok or q.shape[0] != h[H_NQ] or v.shape[0] != nv or a.shape[0] != nv \
            or out.shape[1] != 3 or not (out.shape[0] == 2 or out.shape[0] == 3):
        return BAD_SIZE
    return K.center_of_mass(mi, mc, mI, dv, dm, bare(q), bare(v), bare(a), bare(out), True)


@njit(**JIT)
def center_of_mass_jacobian(buf, q, J):
    """J (3, nv) (kernels/centroidal.com_jacobian)."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    if not ok or q.shape[0] != h[H_NQ] or J.shape[0] != 3 or J.shape[1] != h[H_NV]:
        return BAD_SIZE
    return K.com_jacobian(mi, mc, mI, dv, dm, bare(q), _zero(buf, h), bare(J), True)


@njit(**JIT)
def centroidal_momentum(buf, q, v, hg, perm):
    """h_G (6,) in the public order (kernels/centroidal.centroidal_momentum)."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    if not ok or q.shape[0] != h[H_NQ] or v.shape[0] != h[H_NV] or hg.shape[0] != 6 \
            or perm.shape[0] != 6:
        return BAD_SIZE
    return K.centroidal_momentum(mi, mc, mI, dv, dm, bare(q), bare(v), bare(hg), perm, True)


@njit(**JIT)
def centroidal_momentum_matrix(buf, q, out, perm):
    """A_G (6, nv), rows in the public order (kernels/centroidal.centroidal_map)."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    if not ok or q.shape[0] != h[H_NQ] or out.shape[0] != 6 or out.shape[1] != h[H_NV] \
            or perm.shape[0] != 6:
        return BAD_SIZE
    return K.centroidal_map(mi, mc, mI, dv, dm, bare(q), _zero(buf, h), bare(out), perm, False,
                            True)


@njit(**JIT)
def centroidal_momentum_matrix_time_variation(buf, q, v, out, perm):
    """dA_G/dt (6, nv) along v, rows in the public order (kernels/centroidal.centroidal_map)."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    nv = h[H_NV]
    if not ok or q.shape[0] != h[H_NQ] or v.shape[0] != nv or out.shape[0] != 6 \
            or out.shape[1] != nv or perm.shape[0] != 6:
        return BAD_SIZE
    return K.centroidal_map(mi, mc, mI, dv, dm, bare(q), bare(v), bare(out), perm, True, True)


@njit(**JIT)
def mass_matrix_inverse(buf, q, Minv, F):
    """M^-1 (nv, nv) (kernels/inverse_mass.mass_matrix_inverse); ``F`` (nj + 1, 6, nv) is work
    memory."""
    h, ok, mi, mc, mI, dv, dm = unpack(buf)
    nv, nb = h[H_NV], h[H_NB]
    if not ok or q.shape[0] != h[H_NQ] or Minv.shape[0] != nv or Minv.shape[1] != nv \
            or F.shape[0] != nb or F.shape[1] != 6 or F.shape[2] != nv:
        return BAD_SIZE
    failed = c_view(buf[h[H_FAIL]:].view(np.int64), (1,))
    return _minv(mi, mc, mI, dv, dm, bare(q), _zero(buf, h), bare(Minv), bare(F), failed, True)


_VEC = types.Array(types.float64, 1, "C")
_MAT = types.Array(types.float64, 2, "C")
_MATS = types.Array(types.float64, 3, "C")
_PERM = types.Array(types.int64, 1, "C", readonly=True)
#: the one signature each entry is compiled for, by entry name
SIGNATURES = {
    "center_of_mass": (center_of_mass, (_VEC,) * 3),
    "center_of_mass_motion": (center_of_mass_motion, (_VEC,) * 4 + (_MAT,)),
    "center_of_mass_jacobian": (center_of_mass_jacobian, (_VEC, _VEC, _MAT)),
    "centroidal_momentum": (centroidal_momentum, (_VEC,) * 4 + (_PERM,)),
    "centroidal_momentum_matrix": (centroidal_momentum_matrix, (_VEC, _VEC, _MAT, _PERM)),
    "centroidal_momentum_matrix_time_variation":
        (centroidal_momentum_matrix_time_variation, (_VEC,) * 3 + (_MAT, _PERM)),
    "mass_matrix_inverse": (mass_matrix_inverse, (_VEC, _VEC, _MAT, _MATS)),
}
