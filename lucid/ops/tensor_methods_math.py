"""Tensor methods of the math tail (``lucid.ops.math_extra``, ``reduce_extra``,
``layout_extra``) and the in-place forms torch offers beside existing methods: the second
half of the Tensor method table (the first is ``lucid/ops/tensor_methods.py``)."""

from __future__ import annotations

from typing import Any

import numpy as _np

from .. import _dtype
from .. import _memory_format as _mf
from .._tensor import Tensor
from . import activation as _act
from . import complex as _cx
from . import elementwise as _e
from . import index_scatter as _isc
from . import inplace as _ip
from . import layout_extra as _lx
from . import linalg as _la
from . import linalg_legacy as _ll
from . import math_extra as _mx
from . import random as _rnd
from . import reduce_extra as _rx
from . import scan as _sc
from . import select as _sel
from . import shape as _s
from . import sparse_methods as _spm
from . import special as _sp
from . import special_gamma as _sg
from . import strided as _st
from .creation import empty as _empty

# ---- math tail -----------------------------------------------------------------------------------

Tensor.acosh = _mx.acosh
Tensor.addbmm = _lx.addbmm
Tensor.addmv = _lx.addmv
Tensor.addr = _lx.addr
Tensor.aminmax = _rx.aminmax
Tensor.arccosh = _mx.arccosh
Tensor.arcsinh = _mx.arcsinh
Tensor.arctan2 = _mx.arctan2
Tensor.arctanh = _mx.arctanh
Tensor.asinh = _mx.asinh
Tensor.atan2 = _mx.atan2
Tensor.atanh = _mx.atanh
Tensor.baddbmm = _lx.baddbmm
Tensor.copysign = _mx.copysign
Tensor.corrcoef = _rx.corrcoef
Tensor.count_nonzero = _rx.count_nonzero
Tensor.cross = _lx.cross
Tensor.cov = _rx.cov
Tensor.deg2rad = _mx.deg2rad
Tensor.diagflat = _lx.diagflat
Tensor.dist = _rx.dist
Tensor.dsplit = _lx.dsplit
Tensor.exp2 = _mx.exp2
Tensor.fill_diagonal_ = _lx.fill_diagonal_
Tensor.float_power = _mx.float_power
Tensor.fmax = _mx.fmax
Tensor.fmin = _mx.fmin
Tensor.frac = _mx.frac
Tensor.frexp = _mx.frexp
Tensor.gcd = _mx.gcd
Tensor.heaviside = _mx.heaviside
Tensor.hsplit = _lx.hsplit
Tensor.hypot = _mx.hypot
Tensor.i0 = _mx.i0
Tensor.index_put = _lx.index_put
Tensor.index_put_ = _lx.index_put_
Tensor.is_same_size = _mx.is_same_size
Tensor.is_signed = _mx.is_signed
Tensor.isneginf = _mx.isneginf
Tensor.isposinf = _mx.isposinf
Tensor.isreal = _mx.isreal
Tensor.lcm = _mx.lcm
Tensor.ldexp = _mx.ldexp
Tensor.logaddexp = _mx.logaddexp
Tensor.logaddexp2 = _mx.logaddexp2
Tensor.logit = _mx.logit
Tensor.msort = _rx.msort
Tensor.nanmean = _rx.nanmean
Tensor.nanmedian = _rx.nanmedian
Tensor.nanquantile = _rx.nanquantile
Tensor.nansum = _rx.nansum
Tensor.nextafter = _mx.nextafter
Tensor.positive = _mx.positive
Tensor.quantile = _rx.quantile
Tensor.rad2deg = _mx.rad2deg
Tensor.ravel = _lx.ravel
Tensor.renorm = _rx.renorm
Tensor.scatter_reduce = _lx.scatter_reduce
Tensor.select = _lx.select
Tensor.sgn = _mx.sgn
Tensor.signbit = _mx.signbit
Tensor.sinc = _mx.sinc
Tensor.take_along_dim = _lx.take_along_dim
Tensor.tensor_split = _lx.tensor_split
Tensor.vdot = _lx.vdot
Tensor.vsplit = _lx.vsplit
Tensor.xlogy = _mx.xlogy

# ---- in place ------------------------------------------------------------------------------------

Tensor.absolute_ = _ip._unary_inplace(_e.abs)
Tensor.acos_ = _ip._unary_inplace(_e.arccos)
Tensor.arccos_ = _ip._unary_inplace(_e.arccos)
Tensor.arcsin_ = _ip._unary_inplace(_e.arcsin)
Tensor.asin_ = _ip._unary_inplace(_e.arcsin)
Tensor.arctan_ = _ip._unary_inplace(_e.arctan)
Tensor.atan_ = _ip._unary_inplace(_e.arctan)
Tensor.cosh_ = _ip._unary_inplace(_e.cosh)
Tensor.sinh_ = _ip._unary_inplace(_e.sinh)
Tensor.tan_ = _ip._unary_inplace(_e.tan)
Tensor.log10_ = _ip._unary_inplace(_e.log10)
Tensor.log2_ = _ip._unary_inplace(_e.log2)
Tensor.fix_ = _ip._unary_inplace(_e.trunc)
Tensor.negative_ = _ip._unary_inplace(_e.neg)
Tensor.sum_to_size = _rx.sum_to_size
Tensor.cumsum_ = _ip._unary_inplace(_sc.cumsum)
Tensor.cumprod_ = _ip._unary_inplace(_sc.cumprod)
Tensor.tril_ = _ip._unary_inplace(_la.tril)
Tensor.triu_ = _ip._unary_inplace(_la.triu)
Tensor.lerp_ = _ip._unary_inplace(_la.lerp)
Tensor.addmm_ = _ip._unary_inplace(_la.addmm)
Tensor.bitwise_and_ = _ip._unary_inplace(_sel.bitwise_and)
Tensor.bitwise_not_ = _ip._unary_inplace(_sel.bitwise_not)
Tensor.bitwise_or_ = _ip._unary_inplace(_sel.bitwise_or)
Tensor.bitwise_xor_ = _ip._unary_inplace(_sel.bitwise_xor)
Tensor.eq_ = _ip._unary_inplace(_sel.eq)
Tensor.ne_ = _ip._unary_inplace(_sel.ne)
Tensor.not_equal_ = _ip._unary_inplace(_sel.ne)
Tensor.lt_ = _ip._unary_inplace(_sel.lt)
Tensor.less_ = _ip._unary_inplace(_sel.lt)
Tensor.le_ = _ip._unary_inplace(_sel.le)
Tensor.less_equal_ = _ip._unary_inplace(_sel.le)
Tensor.gt_ = _ip._unary_inplace(_sel.gt)
Tensor.greater_ = _ip._unary_inplace(_sel.gt)
Tensor.ge_ = _ip._unary_inplace(_sel.ge)
Tensor.greater_equal_ = _ip._unary_inplace(_sel.ge)
Tensor.logical_and_ = _ip._unary_inplace(_sel.logical_and)
Tensor.logical_or_ = _ip._unary_inplace(_sel.logical_or)
Tensor.logical_xor_ = _ip._unary_inplace(_sel.logical_xor)
Tensor.logical_not_ = _ip._unary_inplace(_sel.logical_not)
Tensor.acosh_ = _ip._unary_inplace(_mx.acosh)
Tensor.arccosh_ = _ip._unary_inplace(_mx.arccosh)
Tensor.asinh_ = _ip._unary_inplace(_mx.asinh)
Tensor.arcsinh_ = _ip._unary_inplace(_mx.arcsinh)
Tensor.atanh_ = _ip._unary_inplace(_mx.atanh)
Tensor.arctanh_ = _ip._unary_inplace(_mx.arctanh)
Tensor.atan2_ = _ip._unary_inplace(_mx.atan2)
Tensor.arctan2_ = _ip._unary_inplace(_mx.arctan2)
Tensor.copysign_ = _ip._unary_inplace(_mx.copysign)
Tensor.hypot_ = _ip._unary_inplace(_mx.hypot)
Tensor.xlogy_ = _ip._unary_inplace(_mx.xlogy)
Tensor.heaviside_ = _ip._unary_inplace(_mx.heaviside)
Tensor.gcd_ = _ip._unary_inplace(_mx.gcd)
Tensor.lcm_ = _ip._unary_inplace(_mx.lcm)
Tensor.ldexp_ = _ip._unary_inplace(_mx.ldexp)
Tensor.nextafter_ = _ip._unary_inplace(_mx.nextafter)
Tensor.multiply_ = _ip._unary_inplace(_mx.multiply)
Tensor.divide_ = _ip._unary_inplace(_mx.divide)
Tensor.subtract_ = _ip._unary_inplace(_mx.subtract)
Tensor.true_divide_ = _ip._unary_inplace(_mx.true_divide)
Tensor.sgn_ = _ip._unary_inplace(_mx.sgn)
Tensor.frac_ = _ip._unary_inplace(_mx.frac)
Tensor.logit_ = _ip._unary_inplace(_mx.logit)
Tensor.deg2rad_ = _ip._unary_inplace(_mx.deg2rad)
Tensor.rad2deg_ = _ip._unary_inplace(_mx.rad2deg)
Tensor.exp2_ = _ip._unary_inplace(_mx.exp2)
Tensor.sinc_ = _ip._unary_inplace(_mx.sinc)
Tensor.i0_ = _ip._unary_inplace(_mx.i0)
Tensor.addmv_ = _ip._unary_inplace(_lx.addmv)
Tensor.addr_ = _ip._unary_inplace(_lx.addr)
Tensor.addbmm_ = _ip._unary_inplace(_lx.addbmm)
Tensor.baddbmm_ = _ip._unary_inplace(_lx.baddbmm)
Tensor.scatter_reduce_ = _ip._unary_inplace(_lx.scatter_reduce)
Tensor.renorm_ = _ip._unary_inplace(_rx.renorm)
Tensor.transpose_ = _ip._view_inplace(_s.transpose)
Tensor.swapaxes_ = _ip._view_inplace(_s.swapaxes)
Tensor.swapdims_ = _ip._view_inplace(_s.transpose)

# ---- methods torch keeps beside functions lucid already has --------------------------------------

Tensor.allclose = _sel.allclose
Tensor.isclose = _sel.isclose
Tensor.equal = _sel.equal
Tensor.hardshrink = _act.hardshrink
Tensor.prelu = _act.prelu
Tensor.bernoulli = _rnd.bernoulli
Tensor.multinomial = _rnd.multinomial
Tensor.erf_ = _ip._unary_inplace(_sp.erf)
Tensor.erfc_ = _ip._unary_inplace(_sp.erfc)
Tensor.erfinv_ = _ip._unary_inplace(_sp.erfinv)
Tensor.lgamma_ = _ip._unary_inplace(_sp.lgamma)
Tensor.digamma_ = _ip._unary_inplace(_sp.digamma)
Tensor.igammac = _sp.igammac
Tensor.igamma_ = _ip._binary_inplace(_sp.igamma)
Tensor.igammac_ = _ip._binary_inplace(_sp.igammac)
Tensor.slice_scatter = _isc.slice_scatter
Tensor.select_scatter = _isc.select_scatter
Tensor.put = _isc.put
Tensor.put_ = _isc.put_
Tensor.index_reduce = _isc.index_reduce
Tensor.index_reduce_ = _isc.index_reduce_
Tensor.H = property(_cx.H)
Tensor.mH = property(_cx.mH)
Tensor.adjoint = _cx.adjoint
Tensor.as_strided = _st.as_strided
Tensor.diagonal_scatter = _isc.diagonal_scatter
Tensor.nonzero_static = _sel.nonzero_static
Tensor.bitwise_left_shift = _sel.bitwise_left_shift
Tensor.bitwise_right_shift = _sel.bitwise_right_shift
Tensor.bitwise_left_shift_ = _ip._binary_inplace(_sel.bitwise_left_shift)
Tensor.bitwise_right_shift_ = _ip._binary_inplace(_sel.bitwise_right_shift)
Tensor.__lshift__ = _sel.bitwise_left_shift
Tensor.__rshift__ = _sel.bitwise_right_shift
Tensor.__ilshift__ = _ip._binary_inplace(_sel.bitwise_left_shift)
Tensor.__irshift__ = _ip._binary_inplace(_sel.bitwise_right_shift)
Tensor.lu = _ll.lu
Tensor.lu_solve = _ll.lu_solve
Tensor.triangular_solve = _ll.triangular_solve
Tensor.cholesky_solve = _ll.cholesky_solve
Tensor.cholesky_inverse = _ll.cholesky_inverse
Tensor.orgqr = _ll.orgqr
Tensor.geqrf = _ll.geqrf
Tensor.matrix_exp = _ll.matrix_exp
Tensor.mvlgamma = _sg.mvlgamma
Tensor.mvlgamma_ = _ip._unary_inplace(_sg.mvlgamma)
Tensor.conj_physical_ = _ip._unary_inplace(_cx.conj_physical)
Tensor.as_strided_scatter = _st.as_strided_scatter


def _cfloat(self: Tensor, memory_format: Any = _mf.preserve_format) -> Tensor:
    """``self.to(lucid.complex64, memory_format=memory_format)``."""
    return self.to(_dtype.complex64, memory_format=memory_format)  # type: ignore[attr-defined]


def _cdouble(self: Tensor, memory_format: Any = _mf.preserve_format) -> Tensor:
    """``self.to(lucid.complex128, memory_format=memory_format)``."""
    return self.to(_dtype.complex128, memory_format=memory_format)  # type: ignore[attr-defined]


Tensor.cfloat = _cfloat
Tensor.cdouble = _cdouble


def _rlshift(self: Tensor, other: Any) -> Tensor:
    return _sel.bitwise_left_shift(other, self)


def _rrshift(self: Tensor, other: Any) -> Tensor:
    return _sel.bitwise_right_shift(other, self)


def _polygamma_(self: Tensor, n: int) -> Tensor:
    """In-place ``polygamma(n, self)``."""
    return _ip.inplace(self, lambda s: _sp.polygamma(n, s))


def _unsafe_split_with_sizes(self: Tensor, split_sizes: Any, dim: int = 0) -> Any:
    """``split_with_sizes`` (lucid's splits never alias unsafely)."""
    return self.split_with_sizes(split_sizes, dim)  # type: ignore[attr-defined]


def _is_distributed(self: Tensor) -> bool:
    """Never: lucid's data parallelism replicates ordinary tensors."""
    return False


def _const_data_ptr(self: Tensor) -> int:
    """``data_ptr()``: the address of the first element (read-only use)."""
    return self.data_ptr()  # type: ignore[attr-defined]


def _new_empty_strided(self: Tensor, size: Any, stride: Any, *, dtype: Any = None,
                       device: Any = None, requires_grad: bool = False, layout: Any = None,
                       pin_memory: bool = False) -> Tensor:
    """``empty_strided`` with this tensor's dtype and device unless given."""
    return _st.empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                             layout=layout, device=self.device if device is None else device,
                             pin_memory=pin_memory, requires_grad=requires_grad)


def _name(self: Tensor) -> None:
    """None: lucid tensors carry no names (torch's ``name`` of an unnamed tensor)."""
    return None


def _float_power_(self: Tensor, exponent: Any) -> Tensor:
    """In-place ``float_power``: the base must already be float64 (or complex128)."""
    want = _dtype.complex128 if self.dtype.is_complex or (
        isinstance(exponent, Tensor) and exponent.dtype.is_complex) else _dtype.float64
    if self.dtype is not want:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{_dtype.torch_name(self.dtype)} but the operation's result "
                           f"requires dtype {_dtype.torch_name(want)}")
    return _ip.inplace(self, lambda s: _mx.float_power(s, exponent),
                       [exponent] if isinstance(exponent, Tensor) else [])


def _host_apply(self: Tensor, fn: Any, other: Tensor | None, name: str) -> Tensor:
    if self.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")
    if self.device.type != "cpu":
        raise TypeError(f"{name}_ is only implemented on CPU tensors")
    a = self.numpy()
    if other is None:
        vals = [fn(v) for v in a.reshape(-1).tolist()]
    else:
        b = other.expand(*self.shape).numpy()  # type: ignore[attr-defined]
        vals = [fn(x, y) for x, y in zip(a.reshape(-1).tolist(), b.reshape(-1).tolist())]
    out = _empty(tuple(self.shape), dtype=self.dtype)
    out.numpy()[...] = _np.asarray(vals, dtype=a.dtype).reshape(a.shape)
    return _ip.copy_(self, out)


def _apply_(self: Tensor, callable: Any) -> Tensor:  # noqa: A002
    """Replace each element ``v`` by ``callable(v)`` (a Python function; cpu only)."""
    return _host_apply(self, callable, None, "apply_")


def _map_(self: Tensor, other: Tensor, callable: Any) -> Tensor:  # noqa: A002
    """Replace each element ``a`` by ``callable(a, b)`` with ``b`` from ``other``
    (broadcast to this shape; cpu only)."""
    return _host_apply(self, callable, other, "map_")


Tensor.__rlshift__ = _rlshift
Tensor.__rrshift__ = _rrshift
Tensor.polygamma_ = _polygamma_
Tensor.unsafe_split_with_sizes = _unsafe_split_with_sizes
Tensor.is_distributed = _is_distributed
Tensor.const_data_ptr = _const_data_ptr
Tensor.new_empty_strided = _new_empty_strided
Tensor.name = property(_name)
Tensor.apply_ = _apply_
Tensor.indices = _spm.indices
Tensor.values = _spm.values
Tensor.coalesce = _spm.coalesce
Tensor.is_coalesced = _spm.is_coalesced
Tensor.sparse_dim = _spm.sparse_dim
Tensor.dense_dim = _spm.dense_dim
Tensor.sparse_mask = _spm.sparse_mask
Tensor.smm = _spm.smm
Tensor.sspaddmm = _spm.sspaddmm
Tensor.resize_ = _ip.resize_
Tensor.resize_as_ = _ip.resize_as_
Tensor.resize = _ip.resize
Tensor.resize_as = _ip.resize_as
Tensor.float_power_ = _float_power_
Tensor.map_ = _map_
