"""Activation layers, as ``torch.nn.modules.activation``: the elementwise ones here, the
softmax family in activation_softmax.py and ``MultiheadAttention`` in attention.py (both
importable from here too, as in PyTorch).

Each layer names its ``F`` function in ``_fn`` and the attributes passed to it, in order, in
``_args``; ``_Activation`` supplies ``forward`` and PyTorch's ``extra_repr`` from those.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import _dtype, ops
from ..._tensor import Tensor
from .. import functional as F
from ..module import Module
from ..parameter import Parameter
from .activation_softmax import LogSoftmax, Softmax, Softmax2d, Softmin
from .attention import MultiheadAttention

__all__ = ["ReLU", "Sigmoid", "Tanh", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU",
           "SiLU", "Mish", "Softplus", "Hardtanh", "Hardsigmoid", "Hardswish", "LogSigmoid",
           "Softsign", "Tanhshrink", "Threshold", "Hardshrink", "Softshrink", "PReLU", "GLU",
           "RReLU",
           "Softmax", "LogSoftmax", "Softmin", "Softmax2d",
           "MultiheadAttention"]


class _Activation(Module):
    """An elementwise layer: ``forward(x) = _fn(x, *_args[, inplace=...])``; ``extra_repr``
    lists ``_args`` as ``name=value`` and adds ``inplace=True`` when set."""

    _fn: Callable[..., Tensor]
    _args: tuple[str, ...] = ()
    _has_inplace = False

    def forward(self, input: Tensor) -> Tensor:
        """Apply the activation.

        Example::

            nn.ReLU()(lucid.tensor([-1.0, 2.0]))      # tensor([0., 2.])
        """
        args = [getattr(self, a) for a in self._args]
        if self._has_inplace:
            return self._fn(input, *args, inplace=self.inplace)
        return self._fn(input, *args)

    def extra_repr(self) -> str:
        """PyTorch's text inside the repr.

        Example::

            nn.LeakyReLU(0.1, inplace=True).extra_repr()   # "negative_slope=0.1, inplace=True"
        """
        parts = [f"{a}={v!r}" if isinstance(v, str) else f"{a}={v}"
                 for a, v in ((a, getattr(self, a)) for a in self._args)]
        if self._has_inplace and self.inplace:
            parts.append("inplace=True")
        return ", ".join(parts)


class _InplaceActivation(_Activation):
    """An activation whose one option is ``inplace``."""

    _has_inplace = True

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class ReLU(_InplaceActivation):
    """``max(x, 0)`` elementwise; ``inplace=True`` overwrites the input.

    Example::

        nn.ReLU()(lucid.tensor([-1.0, 2.0]))      # tensor([0., 2.])
    """

    __constants__ = ["inplace"]
    inplace: bool
    _fn = staticmethod(F.relu)


class Sigmoid(_Activation):
    """``1 / (1 + exp(-x))`` elementwise.

    Example::

        nn.Sigmoid()(lucid.zeros(2))               # tensor([0.5000, 0.5000])
    """

    _fn = staticmethod(F.sigmoid)


class Tanh(_Activation):
    """``tanh(x)`` elementwise.

    Example::

        nn.Tanh()(lucid.zeros(2))                  # tensor([0., 0.])
    """

    _fn = staticmethod(F.tanh)


class SELU(_InplaceActivation):
    """Scaled ELU with PyTorch's constants.

    Example::

        nn.SELU()(x)
    """

    _fn = staticmethod(F.selu)


class SiLU(_InplaceActivation):
    """``x * sigmoid(x)``.

    Example::

        nn.SiLU()(x)
    """

    _fn = staticmethod(F.silu)


class Mish(_InplaceActivation):
    """``x * tanh(softplus(x))``.

    Example::

        nn.Mish()(x)
    """

    _fn = staticmethod(F.mish)


class Hardsigmoid(_InplaceActivation):
    """Piecewise-linear sigmoid.

    Example::

        nn.Hardsigmoid()(x)
    """

    _fn = staticmethod(F.hardsigmoid)
    extra_repr = Module.extra_repr  # as PyTorch: the repr leaves ``inplace`` out


class Hardswish(_InplaceActivation):
    """``x * hardsigmoid(x)``.

    Example::

        nn.Hardswish()(x)
    """

    _fn = staticmethod(F.hardswish)
    extra_repr = Module.extra_repr  # as PyTorch: the repr leaves ``inplace`` out


class LogSigmoid(_Activation):
    """``log(sigmoid(x))``, computed stably.

    Example::

        nn.LogSigmoid()(x)
    """

    _fn = staticmethod(F.logsigmoid)


class Softsign(_Activation):
    """``x / (1 + |x|)``.

    Example::

        nn.Softsign()(x)
    """

    _fn = staticmethod(F.softsign)


class Tanhshrink(_Activation):
    """``x - tanh(x)``.

    Example::

        nn.Tanhshrink()(x)
    """

    _fn = staticmethod(F.tanhshrink)


class Hardtanh(_InplaceActivation):
    """Clamp to ``[min_val, max_val]``, as ``torch.nn.Hardtanh``.

    Example::

        nn.Hardtanh(-2.0, 2.0)(x)
    """

    _fn = staticmethod(F.hardtanh)
    _args = ("min_val", "max_val")

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
                 ) -> None:
        super().__init__(inplace)
        self.min_val, self.max_val = min_val, max_val
        if max_val <= min_val:
            raise AssertionError("max_val must be greater than min_val")


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``, as ``torch.nn.ReLU6``.

    Example::

        nn.ReLU6()(x)
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        """PyTorch's text.

        Example::

            nn.ReLU6(inplace=True).extra_repr()    # "inplace=True"
        """
        return "inplace=True" if self.inplace else ""


class LeakyReLU(_InplaceActivation):
    """``x`` for positives, ``negative_slope * x`` otherwise.

    Example::

        nn.LeakyReLU(0.1)(x)
    """

    _fn = staticmethod(F.leaky_relu)
    _args = ("negative_slope",)

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.negative_slope = negative_slope


class RReLU(Module):
    """Randomized leaky ReLU, as ``torch.nn.RReLU``: a slope drawn from U(lower, upper) per
    non-positive element in training, ``(lower + upper) / 2`` in eval.

    Example::

        nn.RReLU(0.1, 0.3)(lucid.randn(4, 8))
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply the activation (random slopes only in training mode).

        Example::

            act(lucid.randn(4, 8))
        """
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        """PyTorch's text: ``lower=..., upper=...[, inplace=True]``.

        Example::

            nn.RReLU().extra_repr()
        """
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace
                                                            else "")


class ELU(_InplaceActivation):
    """Exponential linear unit, as ``torch.nn.ELU``.

    Example::

        nn.ELU(alpha=0.5)(x)
    """

    _fn = staticmethod(F.elu)
    _args = ("alpha",)

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.alpha = alpha


class CELU(ELU):
    """Continuously differentiable ELU, as ``torch.nn.CELU``.

    Example::

        nn.CELU()(x)
    """

    _fn = staticmethod(F.celu)


class Threshold(_InplaceActivation):
    """``x`` where ``x > threshold``, else ``value``.

    Example::

        nn.Threshold(0.1, 20.0)(x)
    """

    _fn = staticmethod(F.threshold)
    _args = ("threshold", "value")

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.threshold, self.value = threshold, value


class GELU(_Activation):
    """Gaussian error linear unit (exact, or the tanh approximation).

    Example::

        nn.GELU(approximate="tanh")(x)
    """

    _fn = staticmethod(F.gelu)
    _args = ("approximate",)

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate


class Softplus(_Activation):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold``.

    Example::

        nn.Softplus()(x)
    """

    _fn = staticmethod(F.softplus)
    _args = ("beta", "threshold")

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold


class Hardshrink(_Activation):
    """Zero inside ``[-lambd, lambd]``.

    Example::

        nn.Hardshrink()(x)
    """

    _fn = staticmethod(F.hardshrink)
    _args = ("lambd",)

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        """PyTorch's text: the bare value.

        Example::

            nn.Hardshrink().extra_repr()    # "0.5"
        """
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """Shrink towards zero by ``lambd``.

    Example::

        nn.Softshrink()(x)
    """

    _fn = staticmethod(F.softshrink)


class GLU(_Activation):
    """Gated linear unit over ``dim``.

    Example::

        nn.GLU()(lucid.randn(4, 6)).shape     # (4, 3)
    """

    _fn = staticmethod(F.glu)
    _args = ("dim",)

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim


class PReLU(Module):
    """Leaky ReLU with a learned slope (one, or one per channel).

    Example::

        nn.PReLU(num_parameters=3)(lucid.randn(2, 3, 4))
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(ops.full((num_parameters,), init, device=device,
                                         dtype=dtype or _dtype.get_default_dtype()))

    def forward(self, input: Tensor) -> Tensor:
        """Apply PReLU.

        Example::

            m(x)
        """
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        """PyTorch's text.

        Example::

            nn.PReLU().extra_repr()      # "num_parameters=1"
        """
        return f"num_parameters={self.num_parameters}"
