"""``lucid.nn.attention``, as ``torch.nn.attention``: ``SDPBackend`` and the ``sdpa_kernel``
context manager.

lucid's ``scaled_dot_product_attention`` has one implementation on each device (the math of
torch's ``MATH`` backend; on "cpu" a fused numba kernel), so there is nothing to choose:
``sdpa_kernel`` checks its arguments as torch does and otherwise changes nothing. Code that
picks a backend for speed on CUDA runs unchanged.

Example::

    from lucid.nn.attention import SDPBackend, sdpa_kernel
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        out = F.scaled_dot_product_attention(q, k, v)
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """The attention backends torch can choose among (same names and values).

    Example::

        SDPBackend.MATH            # <SDPBackend.MATH: 0>
    """

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __str__(self) -> str:
        return f"SDPBackend.{self.name}"


@contextlib.contextmanager
def sdpa_kernel(backends: list[SDPBackend] | SDPBackend,
                set_priority: bool = False) -> Iterator[dict]:
    """Select attention backends for the block, as torch's; a no-op in lucid (one backend).

    Example::

        with sdpa_kernel([SDPBackend.MATH, SDPBackend.EFFICIENT_ATTENTION]):
            y = F.scaled_dot_product_attention(q, k, v)
    """
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    yield {}
