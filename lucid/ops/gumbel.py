"""``gumbel_softmax``: samples from the Gumbel-softmax (concrete) distribution, soft or
straight-through hard, composed from softmax, so its gradient is softmax's."""

from __future__ import annotations

import warnings

from .._tensor import Tensor
from . import creation as _c
from . import elementwise as _e
from . import index as _i
from . import random as _rand
from . import reduce as _r
from . import select as _sel
from .activation import softmax

__all__ = ["gumbel_softmax"]


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """``softmax((logits + g) / tau)`` with ``g`` i.i.d. Gumbel(0, 1) noise; ``hard=True``
    returns the one-hot of the argmax in the forward pass and the soft sample's gradient
    (straight-through). ``eps`` is deprecated and ignored, as in torch.

    Example::

        y = F.gumbel_softmax(lucid.randn(4, 10), tau=0.5, hard=True)   # one 1.0 per row
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    u = _rand.uniform(0.0, 1.0, tuple(logits.shape), dtype=logits.dtype, device=logits._be)
    expo = _sel.clamp(_e.neg(_e.log(_e.sub(1.0, u))), 1e-30, None)  # Exp(1), never 0
    gumbels = _e.div(_e.sub(logits, _e.log(expo)), tau)
    y_soft = softmax(gumbels, dim)
    if not hard:
        return y_soft
    index = _r.argmax(y_soft, dim, keepdim=True)
    y_hard = _i.scatter(_c.zeros_like(logits), dim, index, value=1.0)
    return _e.add(_e.sub(y_hard, y_soft.detach()), y_soft)  # type: ignore[attr-defined]
