"""The remaining activation modules of ``torch.nn`` and ``Softmax``/``LogSoftmax``."""

from __future__ import annotations

from typing import Any

from ... import _dtype, ops
from ..._tensor import Tensor
from .. import functional as F
from ..module import Module
from ..parameter import Parameter

__all__ = ["ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Softplus",
           "Hardtanh", "Hardsigmoid", "Hardswish", "LogSigmoid", "Softsign", "Tanhshrink",
           "Threshold", "Hardshrink", "Softshrink", "PReLU", "GLU", "Softmax", "LogSoftmax",
           "Softmin"]


def _ip(inplace: bool) -> str:
    return ", inplace=True" if inplace else ""


def _simple(name: str, fn: str, doc: str, has_inplace: bool = False) -> type[Module]:
    def __init__(self: Any, inplace: bool = False) -> None:
        Module.__init__(self)
        self.inplace = inplace

    def forward(self: Any, input: Tensor) -> Tensor:
        if has_inplace:
            return getattr(F, fn)(input, inplace=self.inplace)
        return getattr(F, fn)(input)

    forward.__doc__ = f"Apply ``{fn}``.\n\n        Example::\n\n            m(x)\n        "
    ns: dict[str, Any] = {"__init__": __init__, "forward": forward,
                          "__doc__": f"{doc}\n\n    Example::\n\n        nn.{name}()(x)\n    "}
    if name in ("SELU", "SiLU", "Mish"):
        def extra_repr(self: Any) -> str:
            return "inplace=True" if self.inplace else ""

        ns["extra_repr"] = extra_repr
    cls = type(name, (Module,), ns)
    cls.__module__ = __name__
    return cls


SELU = _simple("SELU", "selu", "Scaled ELU with PyTorch's constants.", True)
SiLU = _simple("SiLU", "silu", "``x * sigmoid(x)``.", True)
Mish = _simple("Mish", "mish", "``x * tanh(softplus(x))``.", True)
Hardsigmoid = _simple("Hardsigmoid", "hardsigmoid", "Piecewise-linear sigmoid.", True)
Hardswish = _simple("Hardswish", "hardswish", "``x * hardsigmoid(x)``.", True)
LogSigmoid = _simple("LogSigmoid", "logsigmoid", "``log(sigmoid(x))``, computed stably.")
Softsign = _simple("Softsign", "softsign", "``x / (1 + |x|)``.")
Tanhshrink = _simple("Tanhshrink", "tanhshrink", "``x - tanh(x)``.")


class Hardtanh(Module):
    """Clamp to ``[min_val, max_val]``, as ``torch.nn.Hardtanh``.

    Example::

        nn.Hardtanh(-2.0, 2.0)(x)
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
                 ) -> None:
        super().__init__()
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        if max_val <= min_val:
            raise AssertionError("max_val must be greater than min_val")

    def forward(self, input: Tensor) -> Tensor:
        """Apply hardtanh.

        Example::

            m(x)
        """
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        """PyTorch's text.

        Example::

            nn.Hardtanh().extra_repr()
        """
        return f"min_val={self.min_val}, max_val={self.max_val}{_ip(self.inplace)}"


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


class LeakyReLU(Module):
    """``x`` for positives, ``negative_slope * x`` otherwise.

    Example::

        nn.LeakyReLU(0.1)(x)
    """

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply leaky ReLU.

        Example::

            m(x)
        """
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        """PyTorch's text.

        Example::

            nn.LeakyReLU().extra_repr()     # "negative_slope=0.01"
        """
        return f"negative_slope={self.negative_slope}{_ip(self.inplace)}"


class ELU(Module):
    """Exponential linear unit, as ``torch.nn.ELU``.

    Example::

        nn.ELU(alpha=0.5)(x)
    """

    _fn = "elu"

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply the activation.

        Example::

            m(x)
        """
        return getattr(F, self._fn)(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        """PyTorch's text.

        Example::

            nn.ELU().extra_repr()        # "alpha=1.0"
        """
        return f"alpha={self.alpha}{_ip(self.inplace)}"


class CELU(ELU):
    """Continuously differentiable ELU, as ``torch.nn.CELU``.

    Example::

        nn.CELU()(x)
    """

    _fn = "celu"


class GELU(Module):
    """Gaussian error linear unit (exact, or the tanh approximation).

    Example::

        nn.GELU(approximate="tanh")(x)
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        """Apply GELU.

        Example::

            m(x)
        """
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        """PyTorch's text.

        Example::

            nn.GELU().extra_repr()     # "approximate='none'"
        """
        return f"approximate={self.approximate!r}"


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold``.

    Example::

        nn.Softplus()(x)
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        """Apply softplus.

        Example::

            m(x)
        """
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        """PyTorch's text.

        Example::

            nn.Softplus().extra_repr()     # "beta=1.0, threshold=20.0"
        """
        return f"beta={self.beta}, threshold={self.threshold}"


class Threshold(Module):
    """``x`` where ``x > threshold``, else ``value``.

    Example::

        nn.Threshold(0.1, 20.0)(x)
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply the threshold.

        Example::

            m(x)
        """
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        """PyTorch's text.

        Example::

            nn.Threshold(0.1, 20.0).extra_repr()
        """
        return f"threshold={self.threshold}, value={self.value}{_ip(self.inplace)}"


class Hardshrink(Module):
    """Zero inside ``[-lambd, lambd]``.

    Example::

        nn.Hardshrink()(x)
    """

    _fn = "hardshrink"

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        """Apply the shrinkage.

        Example::

            m(x)
        """
        return getattr(F, self._fn)(input, self.lambd)

    def extra_repr(self) -> str:
        """PyTorch's text.

        Example::

            nn.Hardshrink().extra_repr()    # "0.5"
        """
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """Shrink towards zero by ``lambd``.

    Example::

        nn.Softshrink()(x)
    """

    _fn = "softshrink"


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


class GLU(Module):
    """Gated linear unit over ``dim``.

    Example::

        nn.GLU()(lucid.randn(4, 6)).shape     # (4, 3)
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        """Apply GLU.

        Example::

            m(x)
        """
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        """PyTorch's text.

        Example::

            nn.GLU().extra_repr()     # "dim=-1"
        """
        return f"dim={self.dim}"


class Softmax(Module):
    """Softmax over ``dim``, as ``torch.nn.Softmax``.

    Example::

        nn.Softmax(dim=1)(logits)
    """

    _fn = "softmax"

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        """Apply the normalisation.

        Example::

            m(logits)
        """
        return getattr(F, self._fn)(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        """PyTorch's text.

        Example::

            nn.Softmax(dim=1).extra_repr()     # "dim=1"
        """
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """Log-softmax over ``dim``, computed stably.

    Example::

        nn.LogSoftmax(dim=1)(logits)
    """

    _fn = "log_softmax"


class Softmin(Softmax):
    """Softmax of ``-x`` over ``dim``.

    Example::

        nn.Softmin(dim=1)(x)
    """

    _fn = "softmin"
