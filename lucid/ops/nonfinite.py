"""``nan_to_num``: NaN and infinities replaced by finite numbers."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Op
from .views import inplace


class NanToNum(Op):
    """NaN, +inf and -inf replaced by the given numbers; the gradient flows only where the
    input was finite (PyTorch's ``grad * isfinite(self)``)."""

    def forward(self, x, nan, posinf, neginf):
        be = self.be
        d = be.dtype_of(x)
        self.saved = (x,)
        out = be.where(be.isnan(x), nan, x)
        out = be.where(be.eq(x, np.inf), posinf, out)
        out = be.where(be.eq(x, -np.inf), neginf, out)
        return be.astype(out, d)

    def backward(self, g):
        be = self.be
        # torch's ``grad * isfinite(self)``: a NaN gradient stays NaN on a replaced element
        return be.mul(g, be.astype(be.isfinite(self.saved[0]), be.dtype_of(g))), None, None, \
            None


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None, *, out: Any = None) -> Tensor:
    """``input`` with NaN replaced by ``nan``, +inf by ``posinf`` and -inf by ``neginf``
    (by default the largest and lowest finite values of the dtype). Integer and bool
    tensors are returned as a copy.

    Example::

        lucid.nan_to_num(lucid.tensor([float("nan"), float("inf"), 1.0]))
        # tensor([0.0000e+00, 3.4028e+38, 1.0000e+00])
    """
    if not input.dtype.is_floating_point:
        return input.clone()  # type: ignore[attr-defined]
    info = _dtype.finfo(input.dtype)  # np.finfo does not know bfloat16
    hi = float(info.max) if posinf is None else float(posinf)
    lo = float(info.min) if neginf is None else float(neginf)
    return NanToNum.apply(input, float(nan), hi, lo)


def nan_to_num_(input: Tensor, nan: float = 0.0, posinf: float | None = None,
                neginf: float | None = None) -> Tensor:
    """In-place ``nan_to_num``."""
    return inplace(input, lambda s: nan_to_num(s, nan, posinf, neginf))


__all__ = ["nan_to_num", "nan_to_num_"]
