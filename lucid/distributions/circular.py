"""``VonMises``: the circular normal distribution on angles, as
``torch.distributions.VonMises`` (sampled by Best and Fisher's rejection method; no
``rsample``)."""

from __future__ import annotations

import math
from typing import Any

from .. import _dtype
from .. import ops as _ops
from .._tensor import Size, Tensor
from ..autograd import no_grad
from . import constraints
from .distribution import Distribution, _expand_params
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2]
_I0_COEF_LARGE = [0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2,
                  -0.2057706e-1, 0.2635537e-1, -0.1647633e-1, 0.392377e-2]
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2,
                  0.32411e-3]
_I1_COEF_LARGE = [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1,
                  0.2282967e-1, -0.2895312e-1, 0.1787654e-1, -0.420059e-2]
_COEF_SMALL = [_I0_COEF_SMALL, _I1_COEF_SMALL]
_COEF_LARGE = [_I0_COEF_LARGE, _I1_COEF_LARGE]


def _eval_poly(y: Tensor, coef: list[float]) -> Tensor:
    coef = list(coef)
    result: Any = coef.pop()
    while coef:
        result = coef.pop() + y * result
    return result


def _log_modified_bessel_fn(x: Tensor, order: int = 0) -> Tensor:
    """``log(I_order(x))`` for ``x > 0`` and order 0 or 1 (Abramowitz and Stegun's
    polynomial approximations, as torch)."""
    if order not in (0, 1):
        raise ValueError(f"order must be 0 or 1, got {order}")
    y = (x / 3.75).pow(2)
    small = _eval_poly(y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return _ops.where(x < 3.75, small, large)


def _rejection_sample(loc: Tensor, concentration: Tensor, proposal_r: Tensor,
                      shape: tuple[int, ...]) -> Tensor:
    x = _ops.zeros(shape, dtype=loc.dtype, device=loc.device)
    done = _ops.zeros(shape, dtype=_dtype.bool_, device=loc.device)
    while not bool(done.all()):
        u = _ops.rand(*((3,) + shape), dtype=loc.dtype, device=loc.device)
        u1, u2, u3 = u.unbind()
        z = _ops.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        accept = accept & ~done
        if bool(accept.any()):
            x = _ops.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """The von Mises (circular normal) distribution with mean angle ``loc`` and
    ``concentration``; ``loc`` and values may be any real number and are read modulo
    ``2 pi``. ``mean`` and ``variance`` are the circular ones.

    Example::

        m = VonMises(lucid.tensor([1.0]), lucid.tensor([1.0]))
        m.sample()
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Tensor | float, concentration: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(tuple(self.loc.shape), Size(), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> VonMises:
        return _expand_params(self, VonMises, batch_shape, _instance, ("loc", "concentration"))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * _ops.cos(value - self.loc)
        return (log_prob - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    @lazy_property
    def _loc(self) -> Tensor:
        return self.loc.to(_dtype.float64)

    @lazy_property
    def _concentration(self) -> Tensor:
        return self.concentration.to(_dtype.float64)

    @lazy_property
    def _proposal_r(self) -> Tensor:
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa.pow(2)).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho.pow(2)) / (2 * rho)
        return _ops.where(kappa < 1e-5, 1 / kappa + kappa, proposal_r)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        """Angles in ``[-pi, pi)`` (drawn in float64, then cast to ``loc``'s dtype)."""
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            x = _rejection_sample(self._loc.detach(), self._concentration.detach(),
                                  self._proposal_r.detach(), shape)
            return x.to(self.loc.dtype)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:  # type: ignore[override]
        """The circular variance ``1 - I1(k) / I0(k)``."""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
