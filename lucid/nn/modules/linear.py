"""``Linear`` and ``Identity``."""

from __future__ import annotations

import math
from typing import Any

from ... import ops
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter

__all__ = ["Identity", "Linear", "NonDynamicallyQuantizableLinear"]


def _weight_and_bias(m: Module, shape: tuple[int, ...], bias: bool, device: Any,
                     dtype: Any) -> None:
    """Register ``m.weight`` of ``shape`` and ``m.bias`` of ``shape[0]`` (or None), then
    initialise them with ``m.reset_parameters()``."""
    m.weight = Parameter(ops.empty(shape, device=device, dtype=dtype))
    if bias:
        m.bias = Parameter(ops.empty(shape[0], device=device, dtype=dtype))
    else:
        m.register_parameter("bias", None)
    m.reset_parameters()  # type: ignore[operator]


class Identity(Module):
    """Returns its input unchanged (arguments are accepted and ignored).

    Example::

        nn.Identity(54, unused="x")(x) is x      # True
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        """Return ``input``.

        Example::

            nn.Identity()(x) is x
        """
        return input


class Linear(Module):
    """``y = x @ weight.T + bias``, as ``torch.nn.Linear``.

    ``weight`` has shape ``(out_features, in_features)`` and starts from
    ``kaiming_uniform_(a=sqrt(5))``; ``bias`` (shape ``(out_features,)``) from
    U(-1/sqrt(in_features), 1/sqrt(in_features)).

    Example::

        fc = nn.Linear(4, 3)
        fc(lucid.randn(8, 4)).shape       # lucid.Size([8, 3])
    """

    __constants__ = ["in_features", "out_features"]
    in_features: int
    out_features: int
    weight: Parameter

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in_features), bias, device, dtype)

    def reset_parameters(self) -> None:
        """Re-draw ``weight`` and ``bias`` with PyTorch's default initialisation.

        Example::

            fc.reset_parameters()
        """
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        """``input @ weight.T + bias``.

        Example::

            nn.Linear(4, 3)(lucid.randn(8, 4))
        """
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        """The text inside this module's repr.

        Example::

            nn.Linear(4, 3).extra_repr()   # "in_features=4, out_features=3, bias=True"
        """
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """A ``Linear`` under PyTorch's name for ``MultiheadAttention.out_proj`` (PyTorch uses it
    to keep that layer out of dynamic quantization), so reprs and ``isinstance`` checks agree."""


class Bilinear(Module):
    """``y = x1 @ weight[o] @ x2 + bias[o]`` for each output feature ``o``, as
    ``torch.nn.Bilinear``; ``weight`` (out, in1, in2) and ``bias`` (out,) start from
    U(-1/sqrt(in1_features), 1/sqrt(in1_features)).

    Example::

        nn.Bilinear(3, 5, 2)(lucid.randn(4, 3), lucid.randn(4, 5)).shape    # [4, 2]
    """

    __constants__ = ["in1_features", "in2_features", "out_features"]
    in1_features: int
    in2_features: int
    out_features: int
    weight: Parameter

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in1_features, in2_features), bias, device, dtype)

    def reset_parameters(self) -> None:
        """U(-1/sqrt(in1_features), 1/sqrt(in1_features)) for weight and bias.

        Example::

            bl.reset_parameters()
        """
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got (in1_features="
                             f"{self.in1_features})")
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        """The bilinear form of the two inputs.

        Example::

            bl(x1, x2)
        """
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        """The text inside this module's repr.

        Example::

            nn.Bilinear(3, 5, 2).extra_repr()
        """
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
