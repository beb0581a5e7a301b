"""Array views for the compiled entries that carry no reference count.

numba counts the references of every array view it creates (an atomic increment and decrement
on the array's meminfo): the recursions take several row views per body, and those counts were
a third of a kernel's time. A view without a meminfo is not counted. It is valid while the
array it looks into is alive, so only an entry whose caller holds that array for the whole call
(its arguments) may take one, and nothing may keep such a view after the entry returns (the
kernels return status codes only).
"""
from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic, overload
from numba.np.arrayobj import make_array, populate_array


@intrinsic
def c_view(typingctx, flat, shape):
    """``flat`` (a C-contiguous array) seen as a C-contiguous array of ``shape`` from its first
    element, without a reference count: ``flat.ravel()[:prod(shape)].reshape(shape)`` without
    numba's reshape, which calls a C helper (tens of ns each). The caller guarantees
    prod(shape) <= flat.size."""
    if not (isinstance(flat, types.Array) and flat.layout == "C"
            and isinstance(shape, types.UniTuple) and isinstance(shape.dtype, types.Integer)):
        return None
    nd = len(shape)
    ret = types.Array(flat.dtype, nd, "C")

    def codegen(context, builder, sig, args):
        src = make_array(sig.args[0])(context, builder, args[0])
        dims = cgutils.unpack_tuple(builder, args[1], nd)
        strides = [src.itemsize]
        for k in range(nd - 1, 0, -1):
            strides.insert(0, builder.mul(strides[0], dims[k]))
        out = make_array(ret)(context, builder)
        populate_array(out, data=src.data, shape=dims, strides=strides, itemsize=src.itemsize,
                       meminfo=None, parent=src.parent)
        return impl_ret_borrowed(context, builder, ret, out._getvalue())
    return ret(flat, shape), codegen


@intrinsic
def bare(typingctx, x):
    """The C-contiguous array ``x`` (its shape, writable type) without a reference count."""
    if not (isinstance(x, types.Array) and x.layout == "C"):
        return None
    ret = types.Array(x.dtype, x.ndim, "C")

    def codegen(context, builder, sig, args):
        src = make_array(sig.args[0])(context, builder, args[0])
        out = make_array(ret)(context, builder)
        populate_array(out, data=src.data, shape=src.shape, strides=src.strides,
                       itemsize=src.itemsize, meminfo=None, parent=src.parent)
        return impl_ret_borrowed(context, builder, ret, out._getvalue())
    return ret(x), codegen


def unref(x):
    """``bare(x)`` for a C-contiguous array, ``x`` itself for anything else (compiled only)."""
    raise NotImplementedError("unref is compiled only")


@overload(unref, inline="always")
def _unref(x):
    if isinstance(x, types.Array) and x.layout == "C":
        return lambda x: bare(x)
    return lambda x: x


def c_strides(x):
    """True when the strides of the array ``x`` (1 to 3 dimensions) are a C-contiguous
    array's (a dimension of one element may have any stride). Compiled only."""
    raise NotImplementedError("c_strides is compiled only")


@overload(c_strides)
def _c_strides(x):
    # an entry typed for C-contiguous arrays indexes them by their shape alone, ignoring the
    # strides it was given; numba's raw entry point (algorithms/_inputs.compile_entry) does not
    # check the layout of what it is called with, so the entries check the strides themselves
    if not isinstance(x, types.Array) or not 1 <= x.ndim <= 3:
        return None
    # written out per ndim; not inlined at numba's IR level (LLVM inlines it), where the
    # branches of `or` trip numba's SSA check
    if x.ndim == 1:
        return lambda x: x.shape[0] <= 1 or x.strides[0] == x.itemsize
    if x.ndim == 2:
        return lambda x: ((x.shape[1] <= 1 or x.strides[1] == x.itemsize)
                          and (x.shape[0] <= 1 or x.strides[0] == x.itemsize * x.shape[1]))
    return lambda x: ((x.shape[2] <= 1 or x.strides[2] == x.itemsize)
                      and (x.shape[1] <= 1 or x.strides[1] == x.itemsize * x.shape[2])
                      and (x.shape[0] <= 1
                           or x.strides[0] == x.itemsize * x.shape[2] * x.shape[1]))


@intrinsic
def scratch(typingctx, n):
    """A float64 array of ``n`` (a literal int) elements on the stack of the calling function,
    uninitialized and without a reference count: small work vectors with no allocation. Valid
    until that function returns; never return it or store it."""
    if not isinstance(n, types.IntegerLiteral):
        return None
    size = n.literal_value
    ret = types.Array(types.float64, 1, "C")

    def codegen(context, builder, sig, args):
        intp = context.get_value_type(types.intp)
        ptr = cgutils.alloca_once(builder, context.get_value_type(types.float64), size=size)
        out = make_array(ret)(context, builder)
        populate_array(out, data=ptr, shape=[intp(size)], strides=[intp(8)], itemsize=intp(8),
                       meminfo=None)
        return out._getvalue()
    return ret(n), codegen


def stack_matrix(rows, cols):
    """An intrinsic returning a C-contiguous (rows, cols) float64 array on the caller's stack
    (uninitialized): a kernel's scratch without an allocation and without shared state."""
    aty = types.Array(types.float64, 2, "C")

    @intrinsic
    def stack(typingctx):
        def codegen(context, builder, sig, args):
            intp = context.get_value_type(types.intp)
            ptr = cgutils.alloca_once(builder, context.get_value_type(types.float64),
                                      size=rows * cols)
            ary = context.make_array(aty)(context, builder)
            populate_array(ary, data=ptr, shape=[intp(rows), intp(cols)],
                           strides=[intp(8 * cols), intp(8)], itemsize=intp(8), meminfo=None)
            return ary._getvalue()
        return aty(), codegen
    return stack
