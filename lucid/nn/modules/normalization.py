"""``LayerNorm``, ``GroupNorm``, ``RMSNorm``, ``LocalResponseNorm`` and ``CrossMapLRN2d``."""

from __future__ import annotations

from typing import Any

from ... import ops
from ..._tensor import Tensor
from ...ops.lrn import cross_map_lrn2d
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm", "CrossMapLRN2d"]


def affine_params(m: Module, shape: Any, affine: bool, bias: bool, device: Any, dtype: Any
                  ) -> None:
    """Register ``weight`` (and ``bias`` unless ``bias=False``) of ``shape``, or None slots."""
    if affine:
        m.weight = Parameter(ops.empty(shape, device=device, dtype=dtype))
        if bias:
            m.bias = Parameter(ops.empty(shape, device=device, dtype=dtype))
        else:
            m.register_parameter("bias", None)
    else:
        m.register_parameter("weight", None)
        m.register_parameter("bias", None)


def reset_affine(m: Module) -> None:
    """Weight to ones, bias to zeros (each when present)."""
    if m.weight is not None:
        init.ones_(m.weight)
    if m.bias is not None:
        init.zeros_(m.bias)


class _AffineNorm(Module):
    """A norm layer with an optional ``weight``/``bias`` pair, reset to ones/zeros."""

    def reset_parameters(self) -> None:
        """Weight to ones, bias to zeros.

        Example::

            nn.LayerNorm(16).reset_parameters()
        """
        reset_affine(self)


class LayerNorm(_AffineNorm):
    """Normalise over the last ``len(normalized_shape)`` dims, as ``torch.nn.LayerNorm``.

    Example::

        nn.LayerNorm(16)(lucid.randn(4, 16)).shape     # (4, 16)
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        affine_params(self, self.normalized_shape, elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def forward(self, input: Tensor) -> Tensor:
        """Apply layer norm.

        Example::

            ln(lucid.randn(4, 16))
        """
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        """PyTorch's text for the options.

        Example::

            nn.LayerNorm(16).extra_repr()   # "(16,), eps=1e-05, elementwise_affine=True"
        """
        return ("{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, "
                "bias={use_bias}").format(**self.__dict__, use_bias=self.bias is not None)


class GroupNorm(_AffineNorm):
    """Normalise channels in ``num_groups`` groups, as ``torch.nn.GroupNorm``.

    Example::

        nn.GroupNorm(2, 8)(lucid.randn(4, 8, 5, 5)).shape     # (4, 8, 5, 5)
    """

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        affine_params(self, num_channels, affine, bias, device, dtype)
        self.reset_parameters()

    def forward(self, input: Tensor) -> Tensor:
        """Apply group norm.

        Example::

            gn(lucid.randn(4, 8, 5, 5))
        """
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        """PyTorch's text for the options.

        Example::

            nn.GroupNorm(2, 8).extra_repr()   # "2, 8, eps=1e-05, affine=True, bias=True"
        """
        return ("{num_groups}, {num_channels}, eps={eps}, affine={affine}, "
                "bias={use_bias}").format(**self.__dict__, use_bias=self.bias is not None)


class RMSNorm(Module):
    """Root-mean-square norm over the last dims, as ``torch.nn.RMSNorm``.

    Example::

        nn.RMSNorm(16)(lucid.randn(4, 16))
    """

    def __init__(self, normalized_shape: Any, eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ops.ones(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def forward(self, input: Tensor) -> Tensor:
        """Apply RMS norm.

        Example::

            norm(lucid.randn(4, 16))
        """
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        """PyTorch's text for the options.

        Example::

            nn.RMSNorm(16).extra_repr()
        """
        return ("{normalized_shape}, eps={eps}, "
                "elementwise_affine={elementwise_affine}").format(**self.__dict__)


class LocalResponseNorm(Module):
    """Local response normalisation across neighbouring channels, as
    ``torch.nn.LocalResponseNorm``.

    Example::

        nn.LocalResponseNorm(2)(lucid.randn(2, 8, 5, 5)).shape
    """

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        """Normalise ``input``.

        Example::

            lrn(x)
        """
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        """PyTorch's text for the options.

        Example::

            nn.LocalResponseNorm(3).extra_repr()    # '3, alpha=0.0001, beta=0.75, k=1.0'
        """
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """Local response normalisation of (N, C, H, W) inputs with the windows of torch's legacy
    ``torch.nn.CrossMapLRN2d``, whose outputs it reproduces (its running window sum keeps
    channel 0 in every window after the first few).

    Deliberate difference from PyTorch: the gradient is the exact gradient of the output;
    torch's hand-written backward for this layer is not (its own gradcheck fails).

    Example::

        nn.CrossMapLRN2d(5, alpha=1e-4, beta=0.75, k=2)(lucid.randn(2, 8, 5, 5))
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        """Normalise ``input``.

        Example::

            lrn(lucid.randn(2, 8, 5, 5))
        """
        return cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        """PyTorch's text for the options.

        Example::

            nn.CrossMapLRN2d(3).extra_repr()    # '3, alpha=0.0001, beta=0.75, k=1'
        """
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
