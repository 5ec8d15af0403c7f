"""``lucid.special``: special functions, as ``torch.special``, all differentiable.

Most are the same ops as the top-level names (``special.erf`` is ``lucid.erf``); the rest are
compositions (``ndtr``, ``log_ndtr``, ``entr``, ``xlog1py``, ``multigammaln``, ...), the
Bessel family (``lucid.ops.special_bessel``), ``erfcx`` and ``zeta``
(``lucid.ops.special_erfcx_zeta``) and the orthogonal polynomials
(``lucid.ops.special_polynomials``). As in PyTorch, the Bessel functions other than ``i0e``,
``i1`` and ``i1e`` and the polynomials have no gradient.

Example::

    import lucid
    lucid.special.expit(lucid.tensor([0.0]))        # tensor([0.5000])
    lucid.special.ndtr(lucid.tensor([0.0]))         # tensor([0.5000])
"""

from __future__ import annotations

import math
from typing import Any

from ._tensor import Tensor
from .ops.activation import log_softmax as _log_softmax
from .ops.activation import softmax as _softmax
from .ops.elementwise import expm1, log, log1p, mul, round, sigmoid
from .ops.math_extra import exp2, i0, logit, sinc, xlogy
from .ops.reduce import logsumexp
from .ops.select import where
from .ops.special import digamma, erf, erfc, erfinv, igamma, igammac, lgamma, polygamma
from .ops.special_bessel import (
    airy_ai,
    bessel_j0,
    bessel_j1,
    bessel_y0,
    bessel_y1,
    i0e,
    i1,
    i1e,
    modified_bessel_i0,
    modified_bessel_i1,
    modified_bessel_k0,
    modified_bessel_k1,
    scaled_modified_bessel_k0,
    scaled_modified_bessel_k1,
    spherical_bessel_j0,
)
from .ops.special_erfcx_zeta import erfcx, zeta
from .ops.special_polynomials import (
    chebyshev_polynomial_t,
    chebyshev_polynomial_u,
    chebyshev_polynomial_v,
    chebyshev_polynomial_w,
    hermite_polynomial_h,
    hermite_polynomial_he,
    laguerre_polynomial_l,
    legendre_polynomial_p,
    shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w,
)

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc",
    "gammaincc", "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1",
    "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr",
    "log_softmax", "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma",
    "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc", "softmax",
    "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
]

expit = sigmoid
gammaln = lgamma
psi = digamma
gammainc = igamma
gammaincc = igammac




def ndtr(input: Tensor) -> Tensor:
    """The standard normal CDF: ``(1 + erf(x / sqrt(2))) / 2``."""
    return (1 + erf(input * (1 / math.sqrt(2)))) * 0.5


def ndtri(input: Tensor) -> Tensor:
    """The inverse of ``ndtr``: ``sqrt(2) * erfinv(2 p - 1)``."""
    return erfinv(input * 2 - 1) * math.sqrt(2)


def log_ndtr(input: Tensor) -> Tensor:
    """``log(ndtr(x))``, through ``erfc`` so that the far left tail keeps its precision."""
    return log(erfc(input * (-1 / math.sqrt(2))) * 0.5)


def entr(input: Tensor) -> Tensor:
    """Elementwise entropy ``-x log x`` (0 at 0, -inf below 0)."""
    return where(input < 0, -math.inf, mul(xlogy(input, input), -1))


def xlog1py(input: Any, other: Any) -> Tensor:
    """``input * log1p(other)``, 0 where ``input`` is 0 (and ``other`` is not NaN)."""
    if not isinstance(other, Tensor):
        other = input.new_tensor(other)  # type: ignore[union-attr]
    r = mul(input, log1p(other))
    return where((input == 0) & ~other.isnan(), 0.0, r) if isinstance(input, Tensor) else r


def multigammaln(input: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma function of dimension ``p``."""
    if p < 1:
        raise ValueError("p has to be greater than or equal to 1")
    c = p * (p - 1) / 4 * math.log(math.pi)
    out = lgamma(input)
    for j in range(1, p):
        out = out + lgamma(input - j / 2)
    return out + c


def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``softmax`` along ``dim`` (``torch.special.softmax``)."""
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """``log_softmax`` along ``dim`` (``torch.special.log_softmax``)."""
    return _log_softmax(input, dim, dtype=dtype)

