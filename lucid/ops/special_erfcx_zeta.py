"""``torch.special.erfcx`` (the scaled complementary error function) and ``torch.special.zeta``
(the Hurwitz zeta function), with PyTorch's gradients.

Values come from ``scipy.special`` on host copies of the arrays (``be.to_numpy`` /
``be.from_numpy``), which serves every device. ``zeta`` is differentiable in ``other`` only,
as in PyTorch; a gradient with respect to ``input`` raises when the backward reaches it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.function import Op
from . import elementwise as _e
from ._util import sum_to
from .math_extra import _floats
from .special import _float, _scipy_special, _ScipyUnary

__all__ = ["erfcx", "zeta"]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


class Erfcx(_ScipyUnary):
    fn = "erfcx"

    def backward(self, g):
        be = self.be
        x, y = self.saved
        return be.mul(g, be.sub(be.mul(be.mul(x, y), 2.0), _TWO_OVER_SQRT_PI))

    def graph_backward(self, g, saved):
        x, y = saved
        return _e.mul(g, _e.sub(_e.mul(_e.mul(x, y), 2.0), _TWO_OVER_SQRT_PI))


def _zeta(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        out = np.asarray(_scipy_special().zeta(x, q))
        # PyTorch's series gives NaN at q = +inf (scipy: 0)
        return np.where(np.isposinf(q) & (x > 1), np.nan, out)


_NO_INPUT_GRAD = "the derivative for 'zeta' is not implemented."


class Zeta(Op):
    def forward(self, x, q):
        be = self.be
        hx, hq = np.asarray(be.to_numpy(x)), np.asarray(be.to_numpy(q))
        self.sx, self.sq = hx.shape, hq.shape
        if any(p is not None for p in self.parents):
            self.saved = (x, q)
        out = _zeta(hx, hq).astype(np.result_type(hx, hq), copy=False)
        return be.from_numpy(np.require(out, requirements="C"))

    def backward(self, g):
        if self.parents[0] is not None:
            raise RuntimeError(_NO_INPUT_GRAD)
        be = self.be
        x, q = self.saved
        hx, hq = np.asarray(be.to_numpy(x)), np.asarray(be.to_numpy(q))
        d = (-hx * _zeta(hx + 1, hq)).astype(np.result_type(hx, hq), copy=False)
        gq = be.mul(g, be.from_numpy(np.require(d, requirements="C")))
        return None, sum_to(be, gq, self.sq)

    def graph_backward(self, g, saved):
        if self.parents[0] is not None:
            raise RuntimeError(_NO_INPUT_GRAD)
        x, q = saved
        x = x.detach()
        d = _e.mul(_e.neg(x), Zeta.apply(_e.add(x, 1.0), q))
        return None, _e.mul(g, d).sum_to_size(tuple(q.shape))


def erfcx(input: Tensor) -> Tensor:
    """The scaled complementary error function ``exp(x**2) * erfc(x)``, elementwise.

    Example::

        lucid.special.erfcx(lucid.tensor([0.0, 1.0]))   # tensor([1.0000, 0.4276])
    """
    return Erfcx.apply(_float(input, "special_erfcx"))


def zeta(input: Any, other: Any) -> Tensor:
    """The Hurwitz zeta function ``sum_k (other + k) ** -input``, elementwise with
    broadcasting; either argument may be a Python number. Differentiable in ``other``.

    Example::

        lucid.special.zeta(lucid.tensor([2.0]), 1.0)   # tensor([1.6449])
    """
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError("special_zeta() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__}), but expected one "
                        "of: (Tensor input, Tensor other), (Number self, Tensor other), "
                        "(Tensor input, Number other)")
    x, q = _floats(input, other)
    return Zeta.apply(x, q)
