"""``lucid.backends.cudnn``: PyTorch's cuDNN switches, kept as plain settable flags so scripts
that set them run unchanged. lucid has no cuDNN: ``is_available()`` is False and the flags do
not change results (lucid's kernels are deterministic and compute float32 in float32).

Example::

    lucid.backends.cudnn.benchmark = True
    lucid.backends.cudnn.deterministic = True
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["enabled", "benchmark", "deterministic", "allow_tf32", "benchmark_limit",
           "is_available", "version", "flags"]

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = 10


def is_available() -> bool:
    """False: lucid does not use cuDNN."""
    return False


def version() -> None:
    """None: lucid does not use cuDNN."""
    return None


@contextmanager
def flags(enabled: bool = False, benchmark: bool = False,  # noqa: A002 - PyTorch's names
          benchmark_limit: int = 10, deterministic: bool = False,
          allow_tf32: bool = True) -> Iterator[None]:
    """Set the flags for the body of a ``with`` block, then restore them.

    Example::

        with lucid.backends.cudnn.flags(enabled=True, deterministic=True):
            out = model(x)
    """
    g = globals()
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    old = {n: g[n] for n in names}
    g.update(zip(names, (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)))
    try:
        yield
    finally:
        g.update(old)
