"""Pooling layers: max, average and adaptive pooling in 1-D, 2-D and 3-D."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._tensor import Tensor
from .. import functional as F
from ..module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d"]


class _MaxPoolNd(Module):
    _fn: Callable[..., Any]
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices",
                     "ceil_mode"]

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        """PyTorch's text for pooling options.

        Example::

            nn.MaxPool2d(2).extra_repr()
        """
        return ("kernel_size={kernel_size}, stride={stride}, padding={padding}, "
                "dilation={dilation}, ceil_mode={ceil_mode}").format(**self.__dict__)

    def forward(self, input: Tensor) -> Any:
        """Pool ``input`` (with the indices of the maxima when ``return_indices``).

        Example::

            nn.MaxPool2d(2)(lucid.randn(1, 3, 8, 8))
        """
        return self._fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                        ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling, as ``torch.nn.MaxPool1d``.

    Example::

        nn.MaxPool1d(2)(lucid.randn(1, 3, 8)).shape    # (1, 3, 4)
    """

    _fn = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling, as ``torch.nn.MaxPool2d``.

    Example::

        nn.MaxPool2d(2)(lucid.randn(1, 3, 8, 8)).shape    # (1, 3, 4, 4)
    """

    _fn = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W), as ``torch.nn.MaxPool3d``.

    Example::

        nn.MaxPool3d(2)(lucid.randn(1, 3, 8, 8, 8)).shape    # (1, 3, 4, 4, 4)
    """

    _fn = staticmethod(F.max_pool3d)


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def extra_repr(self) -> str:
        """PyTorch's text for pooling options.

        Example::

            nn.AvgPool2d(2).extra_repr()
        """
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """1-D average pooling, as ``torch.nn.AvgPool1d``.

    Example::

        nn.AvgPool1d(2)(lucid.randn(1, 3, 8)).shape     # (1, 3, 4)
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _one(kernel_size)
        self.stride = _one(stride if stride is not None else kernel_size)
        self.padding = _one(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input``.

        Example::

            pool(lucid.randn(1, 3, 8))
        """
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


def _one(v: Any) -> Any:
    return (v,) if isinstance(v, int) else tuple(v)


class _AvgPoolDiv(_AvgPoolNd):
    """The 2-D / 3-D average pools' options (``divisor_override`` included)."""

    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                     "divisor_override"]

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override


class AvgPool2d(_AvgPoolDiv):
    """2-D average pooling, as ``torch.nn.AvgPool2d``.

    Example::

        nn.AvgPool2d(2)(lucid.randn(1, 3, 8, 8)).shape     # (1, 3, 4, 4)
    """

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input``.

        Example::

            pool(lucid.randn(1, 3, 8, 8))
        """
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AvgPool3d(_AvgPoolDiv):
    """3-D average pooling over (N, C, D, H, W) or (C, D, H, W), as ``torch.nn.AvgPool3d``.

    Example::

        nn.AvgPool3d(2)(lucid.randn(1, 3, 8, 8, 8)).shape     # (1, 3, 4, 4, 4)
    """

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input``.

        Example::

            pool(lucid.randn(1, 3, 8, 8, 8))
        """
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptiveNd(Module):
    __constants__ = ["output_size", "return_indices"]

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        """PyTorch's text: the output size.

        Example::

            nn.AdaptiveAvgPool2d(1).extra_repr()    # "output_size=1"
        """
        return f"output_size={self.output_size}"


class _AdaptiveAvgPoolNd(_AdaptiveNd):
    _fn: Callable[..., Tensor]

    def __init__(self, output_size: Any) -> None:
        super().__init__(output_size)

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input``.

        Example::

            nn.AdaptiveAvgPool2d(1)(lucid.randn(2, 3, 7, 7))
        """
        return self._fn(input, self.output_size)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed output length, as ``torch.nn.AdaptiveAvgPool1d``.

    Example::

        nn.AdaptiveAvgPool1d(1)(lucid.randn(2, 3, 7)).shape    # (2, 3, 1)
    """

    _fn = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed output size, as ``torch.nn.AdaptiveAvgPool2d``.

    Example::

        nn.AdaptiveAvgPool2d((1, 1))(lucid.randn(2, 3, 7, 7)).shape    # (2, 3, 1, 1)
    """

    _fn = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed (D, H, W) output size, as ``torch.nn.AdaptiveAvgPool3d``.

    Example::

        nn.AdaptiveAvgPool3d(1)(lucid.randn(2, 3, 5, 7, 7)).shape    # (2, 3, 1, 1, 1)
    """

    _fn = staticmethod(F.adaptive_avg_pool3d)


class AdaptiveMaxPool1d(_AdaptiveNd):
    """Max pooling to a fixed output length (via the 2-D op on a unit height).

    Example::

        nn.AdaptiveMaxPool1d(2)(lucid.randn(2, 3, 8)).shape    # (2, 3, 2)
    """

    def forward(self, input: Tensor) -> Any:
        """Pool ``input``.

        Example::

            pool(lucid.randn(2, 3, 8))
        """
        out = F.adaptive_max_pool2d(input.unsqueeze(-2), (1, _one(self.output_size)[0]),
                                    self.return_indices)
        if self.return_indices:
            return out[0].squeeze(-2), out[1].squeeze(-2)
        return out.squeeze(-2)


class AdaptiveMaxPool2d(_AdaptiveNd):
    """Max pooling to a fixed output size, as ``torch.nn.AdaptiveMaxPool2d``.

    Example::

        nn.AdaptiveMaxPool2d(1)(lucid.randn(2, 3, 7, 7)).shape    # (2, 3, 1, 1)
    """

    def forward(self, input: Tensor) -> Any:
        """Pool ``input``.

        Example::

            pool(lucid.randn(2, 3, 7, 7))
        """
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_AdaptiveNd):
    """Max pooling to a fixed (D, H, W) output size, as ``torch.nn.AdaptiveMaxPool3d``.

    Example::

        nn.AdaptiveMaxPool3d(1)(lucid.randn(2, 3, 5, 7, 7)).shape    # (2, 3, 1, 1, 1)
    """

    def forward(self, input: Tensor) -> Any:
        """Pool ``input``.

        Example::

            pool(lucid.randn(2, 3, 5, 7, 7))
        """
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)
