"""``lucid.cuda.amp``: PyTorch's older ``torch.cuda.amp`` spellings of ``lucid.amp`` for the
"gpu" device ("cuda" names it), deprecated there and here in favour of
``lucid.amp.autocast("cuda", ...)`` and ``lucid.amp.GradScaler("cuda", ...)``.

Example::

    scaler = lucid.cuda.amp.GradScaler()          # FutureWarning, as in PyTorch
    with lucid.cuda.amp.autocast():
        loss = loss_fn(model(x), y)
"""

from __future__ import annotations

import warnings
from typing import Any

from . import _dtype
from . import amp as _amp

__all__ = ["autocast", "GradScaler"]


class autocast(_amp.autocast):
    """``lucid.amp.autocast("cuda", ...)`` under PyTorch's deprecated name (float16 by
    default)."""

    def __init__(self, enabled: bool = True, dtype: Any = _dtype.float16,
                 cache_enabled: bool = True) -> None:
        warnings.warn("`lucid.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`lucid.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """``lucid.amp.GradScaler("cuda", ...)`` under PyTorch's deprecated name."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warnings.warn("`lucid.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`lucid.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
