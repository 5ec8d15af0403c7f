"""Special functions, as ``torch.lgamma`` / ``torch.digamma`` / ``torch.polygamma`` /
``torch.erf`` / ``torch.erfc`` / ``torch.erfinv``: one ``Op`` each, with an analytic backward.

``erf`` runs on the backend (``be.erf``); the gamma family and ``erfinv`` have no numpy ufunc,
so their forward evaluates ``scipy.special`` on a host copy of the array and hands the result
back to the backend (``be.to_numpy`` / ``be.from_numpy``), which serves every device.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Op
from . import elementwise as _e
from ._util import broadcast_error, cast, sum_to

__all__ = ["lgamma", "digamma", "polygamma", "erf", "erfc", "erfinv", "igamma", "igammac"]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0


def _scipy_special() -> Any:
    # NOTE: scipy.special costs ~0.1 s to import; loaded when a special function is first used
    import scipy.special

    return scipy.special


def _host(be: Any, fn: Any, x: Any, *args: Any) -> Any:
    """``fn(*args, x)`` evaluated on a host copy of ``x``, returned in ``x``'s dtype."""
    h = be.to_numpy(x)
    out = np.asarray(fn(*args, h))
    # NOTE: np.require keeps a 0-d result 0-d (np.ascontiguousarray would make it 1-d)
    return be.from_numpy(np.require(out.astype(h.dtype, copy=False), requirements="C"))


class _ScipyUnary(Op):
    """The ``scipy.special`` function named ``fn`` of one input, on a host copy; saves
    ``(x, y)`` for a backward that reads the output."""

    fn = ""

    def forward(self, x):
        with np.errstate(all="ignore"):
            y = _host(self.be, getattr(_scipy_special(), self.fn), x)
        self.saved = (x, y)
        return y


class Lgamma(Op):
    def forward(self, x):
        self.saved = (x,)
        return _host(self.be, _scipy_special().gammaln, x)

    def backward(self, g):
        (x,) = self.saved
        return self.be.mul(g, _host(self.be, _scipy_special().digamma, x))

    def graph_backward(self, g, saved):
        return g * digamma(saved[0])


class Digamma(Op):
    def forward(self, x):
        self.saved = (x,)
        return _host(self.be, _scipy_special().digamma, x)

    def backward(self, g):
        (x,) = self.saved
        return self.be.mul(g, _host(self.be, _scipy_special().polygamma, x, 1))

    def graph_backward(self, g, saved):
        return g * Polygamma.apply(saved[0], n=1)


class Polygamma(Op):
    def forward(self, x, n):
        self.n = n
        self.saved = (x,)
        return _host(self.be, _scipy_special().polygamma, x, n)

    def backward(self, g):
        (x,) = self.saved
        return self.be.mul(g, _host(self.be, _scipy_special().polygamma, x, self.n + 1))

    def graph_backward(self, g, saved):
        return g * Polygamma.apply(saved[0], n=self.n + 1)


class Erf(Op):
    def forward(self, x):
        self.saved = (x,)
        return self.be.erf(x)

    def backward(self, g):
        (x,) = self.saved
        be = self.be
        return be.mul(g, be.mul(be.exp(be.neg(be.mul(x, x))), _TWO_OVER_SQRT_PI))


class Erfc(Op):
    def forward(self, x):
        self.saved = (x,)
        return _host(self.be, _scipy_special().erfc, x)

    def backward(self, g):
        (x,) = self.saved
        be = self.be
        return be.mul(g, be.mul(be.exp(be.neg(be.mul(x, x))), -_TWO_OVER_SQRT_PI))


class Erfinv(Op):
    saves_output = True

    def forward(self, x):
        y = _host(self.be, _scipy_special().erfinv, x)
        self.saved = (y,)
        return y

    def backward(self, g):
        (y,) = self.saved
        be = self.be
        return be.mul(g, be.mul(be.exp(be.mul(y, y)), _SQRT_PI_OVER_2))


class Igamma(Op):
    """The regularised lower incomplete gamma function ``P(a, x)``; differentiable in ``x``
    only (as in torch). ``Igammac`` is the upper one, ``Q = 1 - P``, computed directly (so
    its far tail keeps its precision)."""

    upper = False

    def forward(self, a, x):
        be = self.be
        ha, hx = be.to_numpy(a), be.to_numpy(x)
        sp = _scipy_special()
        fn = sp.gammaincc if self.upper else sp.gammainc
        out = np.asarray(fn(ha, hx)).astype(np.result_type(ha, hx), copy=False)
        self.saved = (a, x)
        return be.from_numpy(np.require(out, requirements="C"))

    def backward(self, g):
        if self.parents[0] is not None:
            raise RuntimeError("the derivative for 'igamma: input' is not implemented.")
        be = self.be
        ha, hx = (be.to_numpy(s) for s in self.saved)
        sp = _scipy_special()
        with np.errstate(divide="ignore", invalid="ignore"):
            d = np.exp((ha - 1) * np.log(hx) - hx - sp.gammaln(ha))
        d = np.broadcast_to(d, np.broadcast_shapes(ha.shape, hx.shape)).astype(hx.dtype)
        if self.upper:
            d = -d
        gx = be.mul(g, be.from_numpy(np.require(d, requirements="C")))
        return None, sum_to(be, gx, hx.shape)

    def graph_backward(self, g, saved):
        if self.parents[0] is not None:
            raise RuntimeError("the derivative for 'igamma: input' is not implemented.")
        a, x = saved
        a = a.detach()
        d = _e.exp(_e.sub(_e.sub(_e.mul(_e.sub(a, 1), _e.log(x)), x), lgamma(a)))
        if self.upper:
            d = _e.neg(d)
        return None, _e.mul(g, d).sum_to_size(tuple(x.shape))


class Igammac(Igamma):
    upper = True


def _float(input: Tensor, name: str) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.dtype.is_floating_point:
        return input
    return cast(input, _dtype.get_default_dtype())


def lgamma(input: Tensor) -> Tensor:
    """The log of the absolute value of the gamma function, elementwise.

    Example::

        lucid.lgamma(lucid.tensor([0.5, 1.0, 4.0]))   # tensor([0.5724, 0.0000, 1.7918])
    """
    return Lgamma.apply(_float(input, "lgamma"))


def digamma(input: Tensor) -> Tensor:
    """The logarithmic derivative of the gamma function, elementwise.

    Example::

        lucid.digamma(lucid.tensor([1.0, 0.5]))        # tensor([-0.5772, -1.9635])
    """
    return Digamma.apply(_float(input, "digamma"))


def polygamma(n: int, input: Tensor) -> Tensor:
    """The ``n``-th derivative of the digamma function, elementwise (``n >= 0``).

    Example::

        lucid.polygamma(1, lucid.tensor([1.0]))        # tensor([1.6449])
    """
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    x = _float(input, "polygamma")
    return Digamma.apply(x) if n == 0 else Polygamma.apply(x, n=n)


def erf(input: Tensor) -> Tensor:
    """The error function, elementwise.

    Example::

        lucid.erf(lucid.tensor([0.0, 1.0]))            # tensor([0.0000, 0.8427])
    """
    return Erf.apply(_float(input, "erf"))


def erfc(input: Tensor) -> Tensor:
    """The complementary error function ``1 - erf(x)``, elementwise.

    Example::

        lucid.erfc(lucid.tensor([0.0, 1.0]))           # tensor([1.0000, 0.1573])
    """
    return Erfc.apply(_float(input, "erfc"))


def erfinv(input: Tensor) -> Tensor:
    """The inverse error function on (-1, 1), elementwise (+-inf at +-1, nan outside).

    Example::

        lucid.erfinv(lucid.tensor([0.0, 0.5]))         # tensor([0.0000, 0.4769])
    """
    return Erfinv.apply(_float(input, "erfinv"))


def igamma(input: Tensor, other: Tensor) -> Tensor:
    """The regularised lower incomplete gamma function ``P(input, other)``, elementwise with
    broadcasting (``torch.igamma`` / ``torch.special.gammainc``); differentiable with respect
    to ``other``.

    Example::

        lucid.igamma(lucid.tensor([1.0]), lucid.tensor([2.0]))   # tensor([0.8647])
    """
    return _incomplete_gamma(Igamma, "igamma", input, other)


def igammac(input: Tensor, other: Tensor) -> Tensor:
    """The regularised upper incomplete gamma function ``Q(input, other) = 1 - P``, computed
    directly (``torch.igammac`` / ``torch.special.gammaincc``); differentiable with respect
    to ``other``.

    Example::

        lucid.igammac(lucid.tensor([1.0]), lucid.tensor([50.0]))   # tensor([1.9287e-22])
    """
    return _incomplete_gamma(Igammac, "igammac", input, other)


def _incomplete_gamma(op: type[Igamma], name: str, input: Tensor, other: Tensor) -> Tensor:
    a, x = _float(input, name), _float(other, name)
    err = broadcast_error(a, x)
    if err is not None:
        raise err
    if a.dtype is not x.dtype:
        d = _dtype.promote_types(a.dtype, x.dtype)
        a, x = cast(a, d), cast(x, d)
    return op.apply(a, x)
