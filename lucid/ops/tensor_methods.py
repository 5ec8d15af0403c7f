"""Every ``Tensor`` method and operator that lives above ``lucid/_tensor.py``, bound in one
explicit table: ``grep -n "Tensor.exp ="`` shows where ``x.exp()`` comes from. The ops live
in the layers above ``Tensor`` (``ops/``, ``autograd/engine.py``), so they are bound here, once,
when ``lucid.ops`` is imported; ``lucid/_tensor.pyi`` lists the same surface with signatures
for IDEs and type checkers, and tests/test_surface.py keeps the two in step.
"""

from __future__ import annotations

from typing import Any

from .. import _dtype
from .._tensor import Tensor
from ..autograd import engine
from . import activation as _act
from . import combine as _cb
from . import complex as _cx
from . import creation as _c
from . import device as _dev
from . import elementwise as _e
from . import histogram as _hist
from . import index as _i
from . import index_update as _iu
from . import inplace as _ip
from . import legacy as _lg
from . import linalg as _la
from . import linalg_decomp as _lad
from . import linalg_misc as _lam
from . import matmul as _x
from . import movement as _m
from . import nonfinite as _nf
from . import random as _rnd
from . import random_fill as _rf
from . import reduce as _r
from . import scan as _sc
from . import select as _sel
from . import shape as _s
from . import sorting as _so
from . import sparse_api as _spa
from . import special as _sp

__all__: list[str] = []


def _pos(self: Tensor) -> Tensor:
    return self


def _rev(fn: Any) -> Any:
    def r(self: Tensor, other: Any) -> Tensor:
        return fn(other, self)

    r.__name__ = "__r" + fn.__name__ + "__"
    return r


def _invert(self: Tensor) -> Tensor:
    if self.dtype is _dtype.bool_:
        return _sel.logical_not(self)
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return _sel.bitwise_not(self)


def _eq(self: Tensor, other: Any) -> Any:
    if other is None:
        return False
    return _sel.eq(self, other)


def _ne(self: Tensor, other: Any) -> Any:
    if other is None:
        return True
    return _sel.ne(self, other)



def _softmax_method(name: str) -> Any:
    fn = _act.softmax if name == "softmax" else _act.log_softmax

    def f(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
        return fn(self, dim, dtype=dtype)

    f.__name__ = name
    f.__doc__ = f"``{name}`` over ``dim`` (as ``torch.Tensor.{name}``)."
    return f


# ---- operators -----------------------------------------------------------------------------------

Tensor.__add__ = _e.add
Tensor.__radd__ = _rev(_e.add)
Tensor.__sub__ = _e.sub
Tensor.__rsub__ = _rev(_e.sub)
Tensor.__mul__ = _e.mul
Tensor.__rmul__ = _rev(_e.mul)
Tensor.__truediv__ = _e.div
Tensor.__rtruediv__ = _rev(_e.div)
Tensor.__floordiv__ = _e.floor_divide
Tensor.__rfloordiv__ = _rev(_e.floor_divide)
Tensor.__mod__ = _e.remainder
Tensor.__rmod__ = _rev(_e.remainder)
Tensor.__pow__ = _e.pow
Tensor.__rpow__ = _rev(_e.pow)
Tensor.__matmul__ = _x.matmul
Tensor.__rmatmul__ = _rev(_x.matmul)
Tensor.__neg__ = _e.neg
Tensor.__pos__ = _pos
Tensor.__abs__ = _e.abs
Tensor.__invert__ = _invert
Tensor.__and__ = _sel.bitwise_and
Tensor.__or__ = _sel.bitwise_or
Tensor.__xor__ = _sel.bitwise_xor
Tensor.__rand__ = _rev(_sel.bitwise_and)
Tensor.__ror__ = _rev(_sel.bitwise_or)
Tensor.__rxor__ = _rev(_sel.bitwise_xor)
Tensor.__eq__ = _eq
Tensor.__ne__ = _ne
Tensor.__lt__ = _sel.lt
Tensor.__le__ = _sel.le
Tensor.__gt__ = _sel.gt
Tensor.__ge__ = _sel.ge
Tensor.__getitem__ = _i.getitem
Tensor.__setitem__ = _i.setitem
Tensor.__iadd__ = _ip._binary_inplace(_e.add)
Tensor.__isub__ = _ip._binary_inplace(_e.sub)
Tensor.__imul__ = _ip._binary_inplace(_e.mul)
Tensor.__itruediv__ = _ip._binary_inplace(_e.div)
Tensor.__ifloordiv__ = _ip._binary_inplace(_e.floor_divide)
Tensor.__imod__ = _ip._binary_inplace(_e.remainder)
Tensor.__ipow__ = _ip._binary_inplace(_e.pow)

# ---- device and dtype ----------------------------------------------------------------------------

Tensor.to = _dev.to
Tensor.cpu = _dev.cpu
Tensor.gpu = _dev.gpu
Tensor.cuda = _dev.gpu
Tensor.type_as = _dev.type_as
Tensor.type = _lg.tensor_type
Tensor.float = _dev._caster(_dtype.float32)
Tensor.double = _dev._caster(_dtype.float64)
Tensor.half = _dev._caster(_dtype.float16)
Tensor.bfloat16 = _dev._caster(_dtype.bfloat16)
Tensor.long = _dev._caster(_dtype.int64)
Tensor.int = _dev._caster(_dtype.int32)
Tensor.short = _dev._caster(_dtype.int16)
Tensor.char = _dev._caster(_dtype.int8)
Tensor.byte = _dev._caster(_dtype.uint8)
Tensor.bool = _dev._caster(_dtype.bool_)

# ---- new tensors like this one -------------------------------------------------------------------

Tensor.new_tensor = _c._new_tensor
Tensor.new_zeros = _c._new_factory(_c.zeros)
Tensor.new_ones = _c._new_factory(_c.ones)
Tensor.new_empty = _c._new_factory(_c.empty)
Tensor.new_full = _c._new_full

# ---- elementwise ---------------------------------------------------------------------------------

Tensor.add = _e.add
Tensor.sub = _e.sub
Tensor.mul = _e.mul
Tensor.div = _e.div
Tensor.floor_divide = _e.floor_divide
Tensor.remainder = _e.remainder
Tensor.fmod = _e.fmod
Tensor.pow = _e.pow
Tensor.maximum = _e.maximum
Tensor.minimum = _e.minimum
Tensor.exp = _e.exp
Tensor.expm1 = _e.expm1
Tensor.log = _e.log
Tensor.log2 = _e.log2
Tensor.log10 = _e.log10
Tensor.log1p = _e.log1p
Tensor.sqrt = _e.sqrt
Tensor.rsqrt = _e.rsqrt
Tensor.reciprocal = _e.reciprocal
Tensor.sin = _e.sin
Tensor.cos = _e.cos
Tensor.tan = _e.tan
Tensor.tanh = _e.tanh
Tensor.sigmoid = _e.sigmoid
Tensor.lgamma = _sp.lgamma
Tensor.digamma = _sp.digamma
Tensor.erf = _sp.erf
Tensor.erfc = _sp.erfc
Tensor.erfinv = _sp.erfinv
Tensor.igamma = _sp.igamma


def _polygamma(self: Tensor, n: int) -> Tensor:
    return _sp.polygamma(n, self)


Tensor.polygamma = _polygamma
Tensor.asin = _e.asin
Tensor.acos = _e.acos
Tensor.atan = _e.atan
Tensor.arcsin = _e.arcsin
Tensor.arccos = _e.arccos
Tensor.arctan = _e.arctan
Tensor.sinh = _e.sinh
Tensor.cosh = _e.cosh
Tensor.neg = _e.neg
Tensor.negative = _e.negative
Tensor.abs = _e.abs
Tensor.square = _e.square
Tensor.relu = _e.relu
Tensor.sign = _e.sign
Tensor.floor = _e.floor
Tensor.ceil = _e.ceil
Tensor.trunc = _e.trunc
Tensor.fix = _e.fix
Tensor.round = _e.round
Tensor.clamp = _sel.clamp
Tensor.clip = _sel.clip
Tensor.where = _sel.tensor_where
Tensor.eq = _sel.eq
Tensor.ne = _sel.ne
Tensor.lt = _sel.lt
Tensor.le = _sel.le
Tensor.gt = _sel.gt
Tensor.ge = _sel.ge
Tensor.less = _sel.less
Tensor.less_equal = _sel.less_equal
Tensor.greater = _sel.greater
Tensor.greater_equal = _sel.greater_equal
Tensor.not_equal = _sel.not_equal
Tensor.logical_and = _sel.logical_and
Tensor.logical_or = _sel.logical_or
Tensor.logical_xor = _sel.logical_xor
Tensor.logical_not = _sel.logical_not
Tensor.bitwise_and = _sel.bitwise_and
Tensor.bitwise_or = _sel.bitwise_or
Tensor.bitwise_xor = _sel.bitwise_xor
Tensor.bitwise_not = _sel.bitwise_not
Tensor.isnan = _sel.isnan
Tensor.isinf = _sel.isinf
Tensor.isfinite = _sel.isfinite

# ---- reductions ----------------------------------------------------------------------------------

Tensor.sum = _r.sum
Tensor.mean = _r.mean
Tensor.var = _r.var
Tensor.std = _r.std
Tensor.max = _r.max
Tensor.min = _r.min
Tensor.amax = _r.amax
Tensor.amin = _r.amin
Tensor.argmax = _r.argmax
Tensor.argmin = _r.argmin
Tensor.prod = _r.prod
Tensor.logsumexp = _r.logsumexp
Tensor.norm = _r.norm
Tensor.cumsum = _sc.cumsum
Tensor.cumprod = _sc.cumprod
Tensor.all = _r.all
Tensor.any = _r.any

# ---- products ------------------------------------------------------------------------------------

Tensor.matmul = _x.matmul
Tensor.mm = _x.mm
Tensor.bmm = _x.bmm
Tensor.dot = _x.dot
Tensor.inner = _x.inner
Tensor.mv = _x.mv
Tensor.outer = _x.outer
Tensor.ger = _x.ger

# ---- linear algebra ------------------------------------------------------------------------------

Tensor.tril = _la.tril
Tensor.triu = _la.triu
Tensor.diag = _la.diag
Tensor.diagonal = _la.diagonal
Tensor.trace = _la.trace
Tensor.addmm = _la.addmm
Tensor.lerp = _la.lerp
Tensor.diag_embed = _la.diag_embed
Tensor.det = _lad.det
Tensor.logdet = _lad.logdet
Tensor.slogdet = _lam.slogdet_legacy
Tensor.inverse = _lam.inverse
Tensor.cholesky = _lam.cholesky_legacy
Tensor.svd = _lam.svd_legacy
Tensor.qr = _lam.qr_legacy
Tensor.pinverse = _lam.pinverse
Tensor.matrix_power = _lam.matrix_power

# ---- complex numbers -----------------------------------------------------------------------------

Tensor.real = property(_cx.real)
Tensor.imag = property(_cx.imag)
Tensor.conj = _cx.conj
Tensor.conj_physical = _cx.conj_physical
Tensor.resolve_conj = _cx.resolve_conj
Tensor.angle = _cx.angle
Tensor.is_complex = _cx.is_complex
Tensor.is_conj = _cx.is_conj

# ---- more ops ------------------------------------------------------------------------------------

Tensor.addcmul = _e.addcmul
Tensor.addcdiv = _e.addcdiv
Tensor.median = _r.median
Tensor.unfold = _m.unfold
Tensor.stride = _s.stride

# ---- shape ---------------------------------------------------------------------------------------

Tensor.reshape = _s.reshape
Tensor.view = _s.view
Tensor.flatten = _s.flatten
Tensor.unflatten = _s.unflatten
Tensor.permute = _s.permute
Tensor.transpose = _s.transpose
Tensor.swapaxes = _s.swapaxes
Tensor.swapdims = _s.swapdims
Tensor.t = _s.t
Tensor.movedim = _s.movedim
Tensor.moveaxis = _s.moveaxis
Tensor.squeeze = _s.squeeze
Tensor.unsqueeze = _s.unsqueeze
Tensor.expand = _s.expand
Tensor.expand_as = _s.expand_as
Tensor.broadcast_to = _s.broadcast_to
Tensor.repeat = _m.repeat
Tensor.tile = _m.tile
Tensor.repeat_interleave = _m.repeat_interleave
Tensor.narrow = _m.narrow
Tensor.split = _m.split_method
Tensor.chunk = _m.chunk
Tensor.unbind = _m.unbind
Tensor.flip = _m.flip
Tensor.fliplr = _m.fliplr
Tensor.flipud = _m.flipud
Tensor.roll = _m.roll
Tensor.clone = _s.clone
Tensor.contiguous = _s.contiguous

# ---- indexing and sorting ------------------------------------------------------------------------

Tensor.gather = _i.gather
Tensor.scatter = _i.scatter
Tensor.scatter_add = _i.scatter_add
Tensor.index_select = _i.index_select
Tensor.masked_fill = _sel.masked_fill
Tensor.masked_select = _i.masked_select
Tensor.take = _i.take
Tensor.nonzero = _i.nonzero
Tensor.argwhere = _i.argwhere
Tensor.sort = _i.sort
Tensor.argsort = _i.argsort
Tensor.topk = _i.topk

# ---- more ----------------------------------------------------------------------------------------

Tensor.clamp_min = _sel.clamp_min
Tensor.clamp_max = _sel.clamp_max
Tensor.softmax = _softmax_method("softmax")
Tensor.log_softmax = _softmax_method("log_softmax")
Tensor.backward = engine.tensor_backward

# ---- in place ------------------------------------------------------------------------------------

Tensor.zero_ = _ip.zero_
Tensor.fill_ = _ip.fill_
Tensor.copy_ = _ip.copy_
Tensor.normal_ = _rnd.normal_
Tensor.uniform_ = _rnd.uniform_
Tensor.bernoulli_ = _rnd.bernoulli_
Tensor.add_ = _ip._binary_inplace(_e.add)
Tensor.sub_ = _ip._binary_inplace(_e.sub)
Tensor.mul_ = _ip._binary_inplace(_e.mul)
Tensor.div_ = _ip._binary_inplace(_e.div)
Tensor.pow_ = _ip._binary_inplace(_e.pow)
Tensor.remainder_ = _ip._binary_inplace(_e.remainder)
Tensor.fmod_ = _ip._binary_inplace(_e.fmod)
Tensor.floor_divide_ = _ip._binary_inplace(_e.floor_divide)
Tensor.maximum_ = _ip._binary_inplace(_e.maximum)
Tensor.minimum_ = _ip._binary_inplace(_e.minimum)
Tensor.masked_fill_ = _ip._binary_inplace(_sel.masked_fill)
Tensor.clamp_min_ = _ip._binary_inplace(_sel.clamp_min)
Tensor.clamp_max_ = _ip._binary_inplace(_sel.clamp_max)
Tensor.addcmul_ = _ip._binary_inplace(_e.addcmul)
Tensor.addcdiv_ = _ip._binary_inplace(_e.addcdiv)
Tensor.exp_ = _ip._unary_inplace(_e.exp)
Tensor.log_ = _ip._unary_inplace(_e.log)
Tensor.log1p_ = _ip._unary_inplace(_e.log1p)
Tensor.expm1_ = _ip._unary_inplace(_e.expm1)
Tensor.sqrt_ = _ip._unary_inplace(_e.sqrt)
Tensor.rsqrt_ = _ip._unary_inplace(_e.rsqrt)
Tensor.reciprocal_ = _ip._unary_inplace(_e.reciprocal)
Tensor.neg_ = _ip._unary_inplace(_e.neg)
Tensor.abs_ = _ip._unary_inplace(_e.abs)
Tensor.sin_ = _ip._unary_inplace(_e.sin)
Tensor.cos_ = _ip._unary_inplace(_e.cos)
Tensor.tanh_ = _ip._unary_inplace(_e.tanh)
Tensor.sigmoid_ = _ip._unary_inplace(_e.sigmoid)
Tensor.relu_ = _ip._unary_inplace(_e.relu)
Tensor.sign_ = _ip._unary_inplace(_e.sign)
Tensor.floor_ = _ip._unary_inplace(_e.floor)
Tensor.ceil_ = _ip._unary_inplace(_e.ceil)
Tensor.trunc_ = _ip._unary_inplace(_e.trunc)
Tensor.round_ = _ip._unary_inplace(_e.round)
Tensor.clamp_ = _ip._unary_inplace(_sel.clamp)
Tensor.clip_ = _ip._unary_inplace(_sel.clip)
Tensor.square_ = _ip._unary_inplace(_e.square)
Tensor.scatter_ = _ip._unary_inplace(_i.scatter)
Tensor.scatter_add_ = _ip._unary_inplace(_i.scatter_add)
Tensor.t_ = _ip._view_inplace(_s.t)
Tensor.squeeze_ = _ip._view_inplace(_s.squeeze)
Tensor.unsqueeze_ = _ip._view_inplace(_s.unsqueeze)

# ---- searching, counting, scans, index writes, samplers, tensor facts ---------------------------

Tensor.unique = _so.unique
Tensor.unique_consecutive = _so.unique_consecutive
Tensor.bincount = _hist.bincount
Tensor.histc = _hist.histc
Tensor.histogram = _hist.histogram
Tensor.kthvalue = _so.kthvalue
Tensor.mode = _so.mode
Tensor.cummax = _sc.cummax
Tensor.cummin = _sc.cummin
Tensor.logcumsumexp = _sc.logcumsumexp
Tensor.diff = _sc.diff
Tensor.rot90 = _cb.rot90
Tensor.kron = _cb.kron
Tensor.nan_to_num = _nf.nan_to_num
Tensor.nan_to_num_ = _nf.nan_to_num_
Tensor.index_add = _iu.index_add
Tensor.index_add_ = _iu.index_add_
Tensor.index_copy = _iu.index_copy
Tensor.index_copy_ = _iu.index_copy_
Tensor.index_fill = _iu.index_fill
Tensor.index_fill_ = _iu.index_fill_
Tensor.masked_scatter = _iu.masked_scatter
Tensor.masked_scatter_ = _iu.masked_scatter_
Tensor.random_ = _rf.random_
Tensor.exponential_ = _rf.exponential_
Tensor.geometric_ = _rf.geometric_
Tensor.cauchy_ = _rf.cauchy_
Tensor.log_normal_ = _rf.log_normal_
Tensor.view_as = _lg.view_as
Tensor.reshape_as = _lg.reshape_as
Tensor.data_ptr = _lg.data_ptr
Tensor.new = _lg.new
Tensor.get_device = _lg.get_device
Tensor.dim_order = _lg.dim_order
Tensor.narrow_copy = _lg.narrow_copy
Tensor.to_dense = _lg.to_dense
Tensor.resolve_neg = _lg.same
Tensor.pin_memory = _lg.pin_memory
Tensor.is_pinned = _lg.is_pinned
Tensor.is_neg = _lg.is_false
Tensor.is_inference = _lg.is_false
Tensor.split_with_sizes = _m.split_with_sizes
Tensor.unsafe_split = _m.split_method
Tensor.unsafe_chunk = _m.chunk
Tensor.is_nonzero = _lg.is_nonzero
Tensor.is_cpu = property(_lg.is_cpu)
Tensor.is_xpu = property(_lg.is_false)
Tensor.is_mps = property(_lg.is_false)
Tensor.is_meta = property(_lg.is_false)
Tensor.is_sparse = property(_lg.is_false)
Tensor.is_quantized = property(_lg.is_false)
Tensor.is_nested = property(_lg.is_false)
Tensor.layout = property(_spa.dense_layout)
Tensor.to_sparse = _spa.to_sparse
Tensor.to_sparse_coo = _spa.to_sparse_coo

# ---- aliases and properties ----------------------------------------------------------------------

Tensor.T = property(_s.T)
Tensor.mT = property(_s.mT)
Tensor.absolute = _e.abs
Tensor.multiply = _e.mul
Tensor.divide = _e.div
Tensor.subtract = _e.sub
Tensor.true_divide = _e.div
