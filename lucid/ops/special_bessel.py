"""Bessel-family functions of ``torch.special``: ``bessel_j0/j1/y0/y1``,
``modified_bessel_i0/i1/k0/k1``, ``scaled_modified_bessel_k0/k1``, ``spherical_bessel_j0``,
``airy_ai``, and the differentiable ``i0e``, ``i1`` and ``i1e``.

Values come from ``scipy.special`` on a host copy of the array (``be.to_numpy`` /
``be.from_numpy``), which serves every device. As in PyTorch, only ``i0e``, ``i1`` and ``i1e``
have a gradient (PyTorch's formulas, twice differentiable); the other results do not require
grad.

Difference from PyTorch: ``airy_ai`` and ``bessel_j0/j1/y0/y1`` are accurate to double
precision (scipy's Cephes), while PyTorch's CPU kernels for them are off by up to ~3e-6
(absolute) in float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.function import Op
from . import elementwise as _e
from . import select as _s
from ._util import wrap
from .special import _float, _host, _scipy_special, _ScipyUnary

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "i0e", "i1", "i1e",
    "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
]


def _values(input: Tensor, name: str, fn: Any) -> Tensor:
    """``fn`` of ``input`` (promoted to floating point) as a result without a gradient."""
    x = _float(input, name)
    be = x._be
    with np.errstate(all="ignore"):
        return wrap(_host(be, fn, x._data), be)


def _sp(name: str) -> Any:
    return getattr(_scipy_special(), name)


def _dev(be: Any, a: np.ndarray, like: np.ndarray) -> Any:
    return be.from_numpy(np.require(np.asarray(a).astype(like.dtype, copy=False),
                                    requirements="C"))


def _host_saved(be: Any, saved: tuple) -> tuple[np.ndarray, ...]:
    return tuple(np.asarray(be.to_numpy(s)) for s in saved)


def _tiny(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where ``|x|`` exceeds the dtype's eps, and ``x`` with eps elsewhere (PyTorch's guard
    of the removable singularity at 0)."""
    eps = np.finfo(x.dtype).eps if x.dtype.kind == "f" else np.finfo(np.float64).eps
    big = np.abs(x) > eps
    return big, np.where(big, x, eps).astype(x.dtype, copy=False)


class I0e(_ScipyUnary):
    fn = "i0e"

    def backward(self, g):
        be = self.be
        x, y = _host_saved(be, self.saved)
        with np.errstate(all="ignore"):
            d = _sp("i1e")(x) - np.sign(x) * y
        return be.mul(g, _dev(be, d, x))

    def graph_backward(self, g, saved):
        x, y = saved
        return _e.mul(g, _e.sub(I1e.apply(x), _e.mul(_e.sign(x), y)))


class I1(_ScipyUnary):
    fn = "i1"

    def backward(self, g):
        be = self.be
        x, y = _host_saved(be, self.saved)
        big, safe = _tiny(x)
        with np.errstate(all="ignore"):
            d = np.where(big, _sp("i0")(safe) - y / safe, 0.5)
        return be.mul(g, _dev(be, d, x))

    def graph_backward(self, g, saved):
        x, y = saved
        big, safe = _tiny_t(x)
        d = _e.sub(_I0.apply(safe), _e.div(y, safe))
        return _e.mul(g, _s.where(big, d, 0.5))


class I1e(_ScipyUnary):
    fn = "i1e"

    def backward(self, g):
        be = self.be
        x, y = _host_saved(be, self.saved)
        big, safe = _tiny(x)
        with np.errstate(all="ignore"):
            d = np.where(big, _sp("i0e")(safe) - y * (np.sign(safe) + 1 / safe), 0.5)
        return be.mul(g, _dev(be, d, x))

    def graph_backward(self, g, saved):
        x, y = saved
        big, safe = _tiny_t(x)
        d = _e.sub(I0e.apply(safe), _e.mul(y, _e.add(_e.sign(safe), _e.reciprocal(safe))))
        return _e.mul(g, _s.where(big, d, 0.5))


class _I0(Op):
    """``i0`` with its gradient ``i1``: the second derivative of ``i1``."""

    def forward(self, x):
        self.saved = (x,)
        return _host(self.be, _sp("i0"), x)

    def backward(self, g):
        (x,) = self.saved
        return self.be.mul(g, _host(self.be, _sp("i1"), x))

    def graph_backward(self, g, saved):
        return _e.mul(g, I1.apply(saved[0]))


def _tiny_t(x: Tensor) -> tuple[Tensor, Tensor]:
    """``_tiny`` over tensors."""
    eps = float(np.finfo(x.dtype.np).eps)
    big = x.abs() > eps  # type: ignore[attr-defined]
    return big, _s.where(big, x, eps)


def i0e(input: Tensor) -> Tensor:
    """The exponentially scaled modified Bessel function of the first kind, order 0:
    ``exp(-|x|) * i0(x)``.

    Example::

        lucid.special.i0e(lucid.tensor([0.0, 1.0]))   # tensor([1.0000, 0.4658])
    """
    return I0e.apply(_float(input, "special_i0e"))


def i1(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind, order 1.

    Example::

        lucid.special.i1(lucid.tensor([0.0, 1.0]))    # tensor([0.0000, 0.5652])
    """
    return I1.apply(_float(input, "special_i1"))


def i1e(input: Tensor) -> Tensor:
    """The exponentially scaled modified Bessel function of the first kind, order 1:
    ``exp(-|x|) * i1(x)``.

    Example::

        lucid.special.i1e(lucid.tensor([0.0, 1.0]))   # tensor([0.0000, 0.2079])
    """
    return I1e.apply(_float(input, "special_i1e"))


def bessel_j0(input: Tensor) -> Tensor:
    """The Bessel function of the first kind, order 0 (no gradient).

    Example::

        lucid.special.bessel_j0(lucid.tensor([0.0, 1.0]))   # tensor([1.0000, 0.7652])
    """
    return _values(input, "special_bessel_j0", _sp("j0"))


def bessel_j1(input: Tensor) -> Tensor:
    """The Bessel function of the first kind, order 1 (no gradient).

    Example::

        lucid.special.bessel_j1(lucid.tensor([0.0, 1.0]))   # tensor([0.0000, 0.4401])
    """
    return _values(input, "special_bessel_j1", _sp("j1"))


def bessel_y0(input: Tensor) -> Tensor:
    """The Bessel function of the second kind, order 0 (no gradient; -inf at 0, NaN below).

    Example::

        lucid.special.bessel_y0(lucid.tensor([1.0]))   # tensor([0.0883])
    """
    return _values(input, "special_bessel_y0", _sp("y0"))


def bessel_y1(input: Tensor) -> Tensor:
    """The Bessel function of the second kind, order 1 (no gradient; -inf at 0, NaN below).

    Example::

        lucid.special.bessel_y1(lucid.tensor([1.0]))   # tensor([-0.7812])
    """
    return _values(input, "special_bessel_y1", _sp("y1"))


def modified_bessel_i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind, order 0 (no gradient).

    Example::

        lucid.special.modified_bessel_i0(lucid.tensor([1.0]))   # tensor([1.2661])
    """
    return _values(input, "special_modified_bessel_i0", _sp("i0"))


def modified_bessel_i1(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind, order 1 (no gradient).

    Example::

        lucid.special.modified_bessel_i1(lucid.tensor([1.0]))   # tensor([0.5652])
    """
    return _values(input, "special_modified_bessel_i1", _sp("i1"))


def modified_bessel_k0(input: Tensor) -> Tensor:
    """The modified Bessel function of the second kind, order 0 (no gradient; inf at 0,
    NaN below).

    Example::

        lucid.special.modified_bessel_k0(lucid.tensor([1.0]))   # tensor([0.4210])
    """
    return _values(input, "special_modified_bessel_k0", _sp("k0"))


def modified_bessel_k1(input: Tensor) -> Tensor:
    """The modified Bessel function of the second kind, order 1 (no gradient; inf at 0,
    NaN below).

    Example::

        lucid.special.modified_bessel_k1(lucid.tensor([1.0]))   # tensor([0.6019])
    """
    return _values(input, "special_modified_bessel_k1", _sp("k1"))


def scaled_modified_bessel_k0(x: Tensor) -> Tensor:
    """``exp(x) * modified_bessel_k0(x)`` (no gradient).

    Example::

        lucid.special.scaled_modified_bessel_k0(lucid.tensor([1.0]))   # tensor([1.1445])
    """
    return _values(x, "special_scaled_modified_bessel_k0", _sp("k0e"))


def scaled_modified_bessel_k1(x: Tensor) -> Tensor:
    """``exp(x) * modified_bessel_k1(x)`` (no gradient).

    Example::

        lucid.special.scaled_modified_bessel_k1(lucid.tensor([1.0]))   # tensor([1.6362])
    """
    return _values(x, "special_scaled_modified_bessel_k1", _sp("k1e"))


def spherical_bessel_j0(x: Tensor) -> Tensor:
    """The spherical Bessel function of the first kind, order 0: ``sin(x) / x`` (no
    gradient).

    Example::

        lucid.special.spherical_bessel_j0(lucid.tensor([0.0, 1.0]))   # tensor([1.0000, 0.8415])
    """
    return _values(x, "special_spherical_bessel_j0",
                   lambda a: _scipy_special().spherical_jn(0, a))


def airy_ai(x: Tensor) -> Tensor:
    """The Airy function ``Ai`` (no gradient).

    Example::

        lucid.special.airy_ai(lucid.tensor([0.0]))   # tensor([0.3550])
    """
    return _values(x, "special_airy_ai", lambda a: _scipy_special().airy(a)[0])
