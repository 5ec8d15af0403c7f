"""``lucid.random``: the random-number state functions of ``torch.random`` (seeding, saving
and restoring the default generator's state) and ``fork_rng``, which runs a block with the
state saved before and restored after, so the block's draws do not change the draws
around it.

Example::

    with lucid.random.fork_rng():
        noise = lucid.randn(3)        # the draws after the block are as if it never ran
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator as _PyGenerator
from collections.abc import Iterable
from typing import Any

from .ops.random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed",
           "manual_seed", "seed", "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices: Iterable[Any] | None = None, enabled: bool = True,
             _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type: str = "cuda") -> _PyGenerator[None, None, None]:
    """Save the random state on entry and restore it on exit (``enabled=False`` does
    nothing). lucid has one generator for every device, so ``devices`` and ``device_type``
    select nothing more."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
