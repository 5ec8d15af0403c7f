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

__all__ = ["Identity", "Linear"]


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
        self.weight = Parameter(ops.empty((out_features, in_features), device=device,
                                          dtype=dtype))
        if bias:
            self.bias = Parameter(ops.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

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
