"""Activation functions, as ``torch.nn.functional``: one ``Op`` per activation (forward and
analytic backward over backend arrays), softmax / log-softmax fused (backend ``softmax``).

``inplace=True`` computes out of place and writes the result back through the tensor's
in-place machinery (version counter bumped, graph rewired), as ``lucid.ops.views.inplace`` does.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

from .. import _dtype
from .._dims import norm_dim
from .._tensor import Tensor
from ..autograd.function import Op
from . import _autocast as _ac
from . import elementwise as _e
from . import select as _sel
from ._util import cast
from .views import inplace as _inplace

__all__ = [
    "relu", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "softplus",
    "hardtanh", "hardsigmoid", "hardswish", "sigmoid", "tanh", "logsigmoid", "softsign",
    "tanhshrink", "threshold", "hardshrink", "softshrink", "prelu", "glu", "softmax",
    "log_softmax", "softmin",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_SQRT_2_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


class _Pointwise(Op):
    """``y = f(x, **kw)``; ``df(be, x, y, g, **kw)`` gives the input gradient."""

    uses_y = False

    def forward(self, x, **kw):
        self.kw = kw
        y = self.f(self.be, x, **kw)
        self.saved = (x, y) if self.uses_y else (x,)
        return y

    def backward(self, g):
        s = self.saved
        return self.df(self.be, s[0], s[1] if self.uses_y else None, g, **self.kw)


def _op(name: str, f: Callable, df: Callable, uses_y: bool = False) -> type[Op]:
    return type(name, (_Pointwise,), {"f": staticmethod(f), "df": staticmethod(df),
                                      "uses_y": uses_y, "saves_output": uses_y})


def _zero(be: Any, g: Any) -> Any:
    return be.zeros_like(g)


def _act(cls_name: str, name: str, keys: tuple[str, ...] = ()) -> type[Op]:
    """An Op over the backend's fused ``activation(name)`` and ``activation_backward(name)``
    (backend/_activation_ref.py has the formulas); ``keys`` orders the keyword parameters."""
    return _op(
        cls_name,
        lambda be, x, **kw: be.activation(name, x, tuple(kw[k] for k in keys)),
        lambda be, x, y, g, **kw: be.activation_backward(name, x, g,
                                                         tuple(kw[k] for k in keys)),
    )


LeakyRelu = _op(
    "LeakyRelu",
    lambda be, x, slope: be.leaky_relu(x, slope),
    lambda be, x, y, g, slope: be.leaky_relu_backward(x, g, slope),
)
Elu = _act("Elu", "elu", ("alpha", "scale", "iscale"))  # elu, selu and celu
Hardtanh = _act("Hardtanh", "hardtanh", ("lo", "hi"))
Hardsigmoid = _act("Hardsigmoid", "hardsigmoid")
Hardswish = _act("Hardswish", "hardswish")

Gelu = _op("Gelu", lambda be, x, tanh: be.gelu(x, tanh),
           lambda be, x, y, g, tanh: be.gelu_backward(x, g, tanh))
Silu = _act("Silu", "silu")
Mish = _act("Mish", "mish")
Softplus = _act("Softplus", "softplus", ("beta", "threshold"))
LogSigmoid = _act("LogSigmoid", "logsigmoid")
# NOTE: the masks below test the "cut" side (|x| <= lambd, x <= th) so NaN takes the
# pass-through branch, value and gradient, as torch's kernels do
Softsign = _op(
    "Softsign",
    lambda be, x: be.div(x, be.add(be.abs(x), 1)),
    lambda be, x, y, g: be.div(g, be.square(be.add(be.abs(x), 1))),
)
Threshold = _op(
    "Threshold",
    lambda be, x, th, value: be.where(be.le(x, th), be.full_like(x, value), x),
    lambda be, x, y, g, th, value: be.where(be.le(x, th), _zero(be, g), g),
)
Hardshrink = _op(
    "Hardshrink",
    lambda be, x, lambd: be.where(be.le(be.abs(x), lambd), be.zeros_like(x), x),
    lambda be, x, y, g, lambd: be.where(be.le(be.abs(x), lambd), _zero(be, g), g),
)
Softshrink = _op(
    "Softshrink",
    lambda be, x, lambd: be.where(be.le(be.abs(x), lambd), be.zeros_like(x),
                                  be.sub(x, be.mul(be.sign(x), lambd))),
    lambda be, x, y, g, lambd: be.where(be.le(be.abs(x), lambd), _zero(be, g), g),
)


class Softmax(Op):
    """Softmax / log-softmax along ``axis`` through the backend's fused row kernel."""

    saves_output = True

    def forward(self, x, axis, log):
        self.axis, self.log = axis, log
        be = self.be
        # a kernel over another axis answers in its own layout; torch's result is row-major
        y = be.contiguous(be.softmax(x, axis, log))
        self.saved = (y,)
        return y

    def backward(self, g):
        be = self.be
        gx = be.softmax_backward(self.saved[0], g, self.axis, self.log)
        return be.contiguous(gx)


# ---- public functions --------------------------------------------------------------------------


def _float(x: Tensor) -> Tensor:
    return x if x.dtype.is_floating_point else cast(x, _dtype.get_default_dtype())


def _apply(cls: type[Op], input: Tensor, inplace: bool, **kw: Any) -> Tensor:
    if inplace:
        return _inplace(input, lambda t: cls.apply(t, **kw))
    return cls.apply(_float(input), **kw)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(x, 0)``.

    Example::

        relu(lucid.tensor([-1.0, 2.0]))          # tensor([0., 2.])
    """
    return _inplace(input, _e.relu) if inplace else _e.relu(input)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)``.

    Example::

        relu6(lucid.tensor([-1.0, 7.0]))         # tensor([0., 6.])
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where positive, else ``negative_slope * x``.

    Example::

        leaky_relu(lucid.tensor([-1.0, 2.0]), 0.1)   # tensor([-0.1000, 2.0000])
    """
    return _apply(LeakyRelu, input, inplace, slope=float(negative_slope))


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, else ``alpha * (exp(x) - 1)``.

    Example::

        elu(lucid.tensor([-1.0, 2.0]))           # tensor([-0.6321, 2.0000])
    """
    return _apply(Elu, input, inplace, alpha=float(alpha), scale=1.0, iscale=1.0)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants.

    Example::

        selu(lucid.tensor([1.0]))                # tensor([1.0507])
    """
    return _apply(Elu, input, inplace, alpha=_SELU_ALPHA, scale=_SELU_SCALE, iscale=1.0)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Example::

        celu(lucid.tensor([-1.0]), 2.0)          # tensor([-0.7869])
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _apply(Elu, input, inplace, alpha=float(alpha), scale=1.0, iscale=1.0 / alpha)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit: ``x * Phi(x)``, or its tanh approximation.

    Example::

        gelu(lucid.tensor([1.0]))                # tensor([0.8413])
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, got "
                           f"{approximate}")
    return Gelu.apply(_float(input), tanh=approximate == "tanh")


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)``.

    Example::

        silu(lucid.tensor([1.0]))                # tensor([0.7311])
    """
    return _apply(Silu, input, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``.

    Example::

        mish(lucid.tensor([1.0]))                # tensor([0.8651])
    """
    return _apply(Mish, input, inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``; linear where ``beta * x > threshold``.

    Example::

        softplus(lucid.tensor([0.0]))            # tensor([0.6931])
    """
    input = _ac.cast1("softplus", input) if _ac.state.on else input
    return Softplus.apply(_float(input), beta=float(beta), threshold=float(threshold))


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """Clamp to ``[min_val, max_val]``; zero gradient outside the open interval.

    Example::

        hardtanh(lucid.tensor([-2.0, 0.5]))      # tensor([-1.0000, 0.5000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _apply(Hardtanh, input, inplace, lo=min_val, hi=max_val)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``.

    Example::

        hardsigmoid(lucid.tensor([0.0]))         # tensor([0.5000])
    """
    return _apply(Hardsigmoid, input, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6``.

    Example::

        hardswish(lucid.tensor([1.0]))           # tensor([0.6667])
    """
    return _apply(Hardswish, input, inplace)


sigmoid = _e.sigmoid  # ``1 / (1 + exp(-x))``, e.g. sigmoid(lucid.zeros(1)) -> tensor([0.5000])
tanh = _e.tanh  # hyperbolic tangent, e.g. tanh(lucid.zeros(1)) -> tensor([0.])


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, stable for large ``|x|``.

    Example::

        logsigmoid(lucid.tensor([0.0]))          # tensor([-0.6931])
    """
    return LogSigmoid.apply(_float(input))


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``.

    Example::

        softsign(lucid.tensor([1.0]))            # tensor([0.5000])
    """
    return Softsign.apply(_float(input))


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``.

    Example::

        tanhshrink(lucid.tensor([1.0]))          # tensor([0.2384])
    """
    return _e.sub(input, _e.tanh(input))


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, else ``value``.

    Example::

        threshold(lucid.tensor([0.5, 2.0]), 1.0, -1.0)   # tensor([-1., 2.])
    """
    return _apply(Threshold, input, inplace, th=threshold, value=value)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0.

    Example::

        hardshrink(lucid.tensor([0.2, 1.0]))     # tensor([0., 1.])
    """
    return Hardshrink.apply(_float(input), lambd=float(lambd))


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0.

    Example::

        softshrink(lucid.tensor([0.2, 1.0]))     # tensor([0.0000, 0.5000])
    """
    return Softshrink.apply(_float(input), lambd=float(lambd))


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where positive, else ``weight * x`` (one weight, or one per channel = dim 1).

    Example::

        prelu(lucid.tensor([[-1.0, 2.0]]), lucid.tensor([0.25]))   # tensor([[-0.2500, 2.0000]])
    """
    input, weight = _ac.cast("prelu", input, weight) if _ac.state.on else (input, weight)
    w = weight
    if weight.numel() != 1:
        if input.ndim < 2 or input.shape[1] != weight.numel():
            raise RuntimeError(
                f"Mismatch of parameter numbers and input channel size. Found parameter numbers"
                f" = {weight.numel()} and channel size = "
                f"{input.shape[1] if input.ndim >= 2 else 1}.")
        w = weight.reshape(-1, *([1] * (input.ndim - 2)))  # type: ignore[attr-defined]
    return _sel.where(_sel.gt(input, 0), input, _e.mul(w, input))


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: ``a * sigmoid(b)`` with ``a, b`` the halves of ``input`` along ``dim``.

    Example::

        glu(lucid.tensor([1.0, 0.0]))            # tensor([0.5000])
    """
    d = norm_dim(dim, input.ndim)
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{input.shape[d]}")
    a, b = input.chunk(2, d)  # type: ignore[attr-defined]
    return _e.mul(a, _e.sigmoid(b))


def _softmax_dim(ndim: int) -> int:
    warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def _softmax(input: Tensor, dim: int | None, dtype: Any, log: bool, neg: bool = False
             ) -> Tensor:
    if dim is None:
        dim = _softmax_dim(input.ndim)
    if dtype is None and _ac.state.on:
        (input,) = _ac.cast("log_softmax" if log else "softmax", input)
    if dtype is not None:
        input = cast(input, _dtype.to_dtype(dtype))
    elif not input.dtype.is_floating_point:
        raise RuntimeError(f"\"{'log_' if log else ''}softmax_lastdim_kernel_impl\" not "
                           f"implemented for '{_dtype.torch_name(input.dtype).split('.')[-1]}'")
    if neg:
        input = _e.neg(input)
    if input.ndim == 0:
        norm_dim(dim, 0)
        return Softmax.apply(input.reshape(1), 0, log).reshape(())  # type: ignore[attr-defined]
    return Softmax.apply(input, norm_dim(dim, input.ndim), log)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim``, shifted by the max (stable for large logits).

    Example::

        softmax(lucid.tensor([[1.0, 1.0]]), dim=1)   # tensor([[0.5000, 0.5000]])
    """
    return _softmax(input, dim, dtype, False)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Tensor:
    """``x - logsumexp(x)`` along ``dim``, computed in one fused pass.

    Example::

        log_softmax(lucid.tensor([[0.0, 0.0]]), dim=1)   # tensor([[-0.6931, -0.6931]])
    """
    return _softmax(input, dim, dtype, True)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """``softmax(-x)`` along ``dim``.

    Example::

        softmin(lucid.tensor([[0.0, 0.0]]), dim=1)   # tensor([[0.5000, 0.5000]])
    """
    return _softmax(input, dim, dtype, False, neg=True)
