"""Max unpooling layers, as ``torch.nn``: ``MaxUnpool1d``, ``MaxUnpool2d``, ``MaxUnpool3d``
(the partial inverse of the max pools, fed their indices)."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from .. import functional as F
from ..module import Module

__all__ = ["MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]


def _ntuple(v: Any, n: int) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _MaxUnpoolNd(Module):
    _n = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        n = self._n
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride if stride is not None else kernel_size, n)
        self.padding = _ntuple(padding, n)

    def extra_repr(self) -> str:
        """PyTorch's text for the options.

        Example::

            nn.MaxUnpool2d(2).extra_repr()   # "kernel_size=(2, 2), stride=(2, 2), padding=(0, 0)"
        """
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Partial inverse of ``MaxPool1d``, as ``torch.nn.MaxUnpool1d``.

    Example::

        pool, unpool = nn.MaxPool1d(2, return_indices=True), nn.MaxUnpool1d(2)
        y, idx = pool(x)
        unpool(y, idx)                        # maxima in place, zeros elsewhere
    """

    _n = 1

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        """Unpool ``input`` at ``indices`` (``output_size`` picks among the valid sizes).

        Example::

            unpool(y, idx, output_size=x.shape)
        """
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    """Partial inverse of ``MaxPool2d``, as ``torch.nn.MaxUnpool2d``.

    Example::

        pool, unpool = nn.MaxPool2d(2, return_indices=True), nn.MaxUnpool2d(2)
        y, idx = pool(x)
        unpool(y, idx, output_size=x.shape)
    """

    _n = 2

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        """Unpool ``input`` at ``indices``.

        Example::

            unpool(y, idx)
        """
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class MaxUnpool3d(_MaxUnpoolNd):
    """Partial inverse of ``MaxPool3d``, as ``torch.nn.MaxUnpool3d``.

    Example::

        pool, unpool = nn.MaxPool3d(2, return_indices=True), nn.MaxUnpool3d(2)
        y, idx = pool(x)
        unpool(y, idx)
    """

    _n = 3

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        """Unpool ``input`` at ``indices``.

        Example::

            unpool(y, idx)
        """
        return F.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)
