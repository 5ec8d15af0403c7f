"""``lucid.amp``: automatic mixed precision, as ``torch.amp``: ``autocast`` regions that run
matmuls and convolutions in bfloat16/float16 and precision-sensitive ops in float32, and
``GradScaler`` for loss scaling.

Example::

    scaler = lucid.amp.GradScaler("cpu")
    with lucid.amp.autocast("cpu", dtype=lucid.bfloat16):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
"""

from .autocast_mode import (
    autocast,
    clear_autocast_cache,
    custom_bwd,
    custom_fwd,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_cache_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "is_autocast_available", "is_autocast_enabled",
           "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
           "clear_autocast_cache", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
           "custom_fwd", "custom_bwd"]
