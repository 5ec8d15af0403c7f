"""``local_response_norm``: each value divided by ``(k + alpha * mean of squares over a
window of neighbouring channels) ** beta``, composed from pad, narrow and elementwise ops."""

from __future__ import annotations

from .._tensor import Tensor
from . import elementwise as _e
from . import movement as _m

__all__ = ["local_response_norm"]


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """Local response normalisation over channels (dim 1) of an (N, C, *) input: the window
    covers channels ``c - size // 2 .. c + (size - 1) // 2``, zero beyond the edges.

    Example::

        y = F.local_response_norm(lucid.randn(2, 8, 5, 5), size=3)
    """
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} "
                         f"dimensions)")
    if input.numel() == 0:  # type: ignore[attr-defined]
        return input
    c = input.shape[1]
    sq = _e.mul(input, input)
    widths = [0, 0] * (input.ndim - 2) + [size // 2, (size - 1) // 2]
    padded = _m.pad(sq, widths)
    acc = _m.narrow(padded, 1, 0, c)
    for j in range(1, size):
        acc = _e.add(acc, _m.narrow(padded, 1, j, c))
    div = _e.pow(_e.add(_e.mul(acc, alpha / size), k), beta)
    return _e.div(input, div)
