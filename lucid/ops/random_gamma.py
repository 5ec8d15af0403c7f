"""Samplers that are not a closed-form transform of uniform or normal draws: gamma
(``torch._standard_gamma``, differentiable) and poisson (``torch.poisson``).

Numbers are drawn on the host from lucid's generator (``lucid.manual_seed`` reproduces them),
as ``lucid.ops.random`` does. The gamma sample's gradient with respect to its concentration is
the implicit reparameterisation gradient ``dx/da = -(dF/da)(x, a) / p(x; a)``, with ``F`` the
regularised lower incomplete gamma function (the CDF) and ``p`` the density.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor, _make
from ..autograd.function import Op
from .random import Generator, _gen

__all__ = ["poisson", "standard_gamma"]


def _scipy_special() -> Any:
    # NOTE: scipy.special costs ~0.1 s to import; loaded when a gamma sample first needs it
    import scipy.special

    return scipy.special


def standard_gamma_grad(x: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """``dx/dalpha`` of Gamma(alpha, 1) samples ``x`` held at a fixed CDF value (float64).

    ``dF/dalpha`` is a central difference of ``scipy.special.gammainc`` with a relative step
    of 1e-5 (about 1e-10 relative error); the density comes in log space."""
    sp = _scipy_special()
    x = np.asarray(x, np.float64)
    a = np.asarray(alpha, np.float64)
    h = np.maximum(a * 1e-5, 1e-12)
    a_lo = np.maximum(a - h, a * 0.5)
    dfda = (sp.gammainc(a + h, x) - sp.gammainc(a_lo, x)) / (a + h - a_lo)
    log_pdf = (a - 1) * np.log(x) - x - sp.gammaln(a)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        out = -dfda * np.exp(-log_pdf)
    return np.where(np.isfinite(out), out, 0.0)


class StandardGamma(Op):
    def forward(self, alpha, generator):
        be = self.be
        h = be.to_numpy(alpha)
        x = _gen(generator).standard_gamma(np.asarray(h, np.float64))
        x = np.maximum(x, np.finfo(h.dtype).tiny).astype(h.dtype)
        out = be.from_numpy(np.ascontiguousarray(x))
        self.saved = (alpha, out)
        return out

    def backward(self, g):
        be = self.be
        alpha, x = (be.to_numpy(s) for s in self.saved)
        d = standard_gamma_grad(x, alpha).astype(alpha.dtype)
        return be.mul(g, be.from_numpy(np.ascontiguousarray(d)))


def standard_gamma(concentration: Tensor, generator: Generator | None = None) -> Tensor:
    """Gamma(concentration, 1) samples, one per element, differentiable with respect to
    ``concentration`` (implicit reparameterisation), as ``torch._standard_gamma``.

    Example::

        x = standard_gamma(lucid.tensor([0.5, 2.0], requires_grad=True))
    """
    if not isinstance(concentration, Tensor) or not concentration.dtype.is_floating_point:
        raise TypeError("standard_gamma(): expected a floating point tensor for concentration")
    return StandardGamma.apply(concentration, generator=generator)


def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """Poisson samples with rates ``input``, one per element, in ``input``'s dtype (no
    gradient), as ``torch.poisson``.

    Example::

        lucid.poisson(lucid.tensor([1.0, 4.0]))
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    be = input._be
    h = np.asarray(be.to_numpy(input._data), np.float64)
    if (h < 0).any() or np.isnan(h).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    x = _gen(generator).poisson(h).astype(input.dtype.np)
    return _make(be.from_numpy(np.ascontiguousarray(x)), be, False, None)
