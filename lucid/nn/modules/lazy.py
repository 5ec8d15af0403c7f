"""Lazy layers: ``LazyLinear``, ``LazyConv1d`` and ``LazyConv2d`` here (the other lazy
convolutions in lazy_conv.py, the lazy norms in lazy_norm.py) infer their input size from
the first call, as torch's. Until then their parameters are ``UninitializedParameter`` s and
their buffers ``UninitializedBuffer`` s (empty placeholders that keep their identity); the
first forward materialises them in place, initialises them and turns the module into its
regular class (``Linear``, ``Conv1d``, ``Conv2d``).

Converting dtype / device before the first call applies to the materialised parameters. An
optimizer built before the first call holds the same objects, which then carry the real
data; optimizers that create per-parameter state at construction should still be built
after a dry run, as torch advises. ``state_dict`` of an uninitialised module holds the
placeholders; ``load_state_dict`` of an initialised state materialises them with the
checkpoint's shapes (atomically: a failed load leaves them uninitialised).

Deliberate difference from torch: a placeholder is an empty tensor of shape (0,) whose
attributes can be read (torch raises on ``.shape``); loading a placeholder into an
initialised module reports a size mismatch."""

from __future__ import annotations

import itertools
from typing import Any

from ..._tensor import Tensor
from ...autograd import no_grad
from ...backend import get_backend
from .._util import convert_array
from ..module_state_dict_load import _Action, _NotTensorLike, _read, _stage
from ..parameter import Buffer, Parameter
from .conv import Conv1d, Conv2d
from .linear import Linear

__all__ = ["UninitializedParameter", "UninitializedBuffer", "LazyModuleMixin", "LazyLinear",
           "LazyConv1d", "LazyConv2d"]


class UninitializedParameter(Parameter):
    """A parameter without a shape yet; ``materialize(shape)`` gives it storage in place and
    turns it into a regular ``Parameter``.

    Example::

        p = nn.UninitializedParameter()
        p.materialize((3, 4))
        type(p).__name__, p.shape          # ('Parameter', lucid.Size([3, 4]))
    """

    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(None, requires_grad, dtype=dtype, device=device)

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Allocate uninitialised storage of ``shape`` (on this placeholder's device and dtype
        unless given) and become a ``Parameter`` (a ``Buffer`` for an
        ``UninitializedBuffer``).

        Example::

            p.materialize((8, 3))
        """
        be = self._be if device is None else get_backend(device)
        d = self.dtype if dtype is None else dtype
        self._data = be.empty(tuple(int(s) for s in shape), d)
        self._be = be
        self.__class__ = self.cls_to_become

    def __repr__(self) -> str:
        return "<UninitializedParameter>"


class UninitializedBuffer(Buffer):
    """A buffer without a shape yet; ``materialize(shape)`` gives it storage in place and
    turns it into a regular ``Buffer``.

    Example::

        b = nn.UninitializedBuffer()
        b.materialize((4,))
        type(b).__name__, b.shape          # ('Buffer', lucid.Size([4]))
    """

    cls_to_become = Buffer

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                 persistent: bool = True) -> None:
        super().__init__(None, persistent, dtype=dtype, device=device)

    materialize = UninitializedParameter.materialize

    def __repr__(self) -> str:
        return "<UninitializedBuffer>"


def is_lazy(t: Any) -> bool:
    """Whether ``t`` is a placeholder still waiting for its shape."""
    return isinstance(t, (UninitializedParameter, UninitializedBuffer))


class _MaterializeCopy(_Action):
    """A staged step of ``load_state_dict``: give a placeholder the checkpoint's shape and
    values; undone by turning it back into a placeholder."""

    __slots__ = ("p", "arr", "old")

    def __init__(self, p: UninitializedParameter | UninitializedBuffer, arr: Any) -> None:
        super().__init__()
        self.p, self.arr, self.old = p, arr, None

    def apply(self, backup: bool) -> None:
        p = self.p
        self.old = (p._data, p._be, type(p))
        p.materialize(tuple(self.arr.shape))
        p._data = p._be.assign(p._data, self.arr)
        self._done()

    def undo(self) -> None:
        if self.old is not None:
            self.p._data, self.p._be, self.p.__class__ = self.old


class LazyModuleMixin:
    """The lazy machinery: a forward pre-hook calls ``initialize_parameters(*args,
    **kwargs)`` once, then the module becomes ``cls_to_become``.

    Example::

        class LazyScale(LazyModuleMixin, nn.Module):   # lucid.nn.modules.lazy
            def __init__(self):
                super().__init__()
                self.w = nn.UninitializedParameter()
            def initialize_parameters(self, x):
                self.w.materialize(x.shape[-1:])
                nn.init.ones_(self.w)
            def forward(self, x):
                return x * self.w
    """

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(  # type: ignore[attr-defined]
            self._infer_parameters, with_kwargs=True)

    def has_uninitialized_params(self) -> bool:
        """Whether any own parameter or buffer is still a placeholder.

        Example::

            nn.LazyLinear(3).has_uninitialized_params()     # True
        """
        tensors = itertools.chain(self._parameters.values(),  # type: ignore[attr-defined]
                                  self._buffers.values())  # type: ignore[attr-defined]
        return any(is_lazy(t) for t in tensors)

    def _lazy_weight_and_bias(self, bias: bool, device: Any, dtype: Any) -> None:
        """Placeholders for ``weight`` and (when ``bias``) ``bias``."""
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def _materialize_weight_and_bias(self, weight_shape: tuple[int, ...],
                                     bias_shape: tuple[int, ...] | None = None) -> None:
        """Shape ``weight`` as ``weight_shape`` and ``bias`` (if any) as ``bias_shape``
        (default: the weight's first dim), then initialise them with
        ``reset_parameters()``."""
        with no_grad():
            self.weight.materialize(weight_shape)
            if self.bias is not None:  # type: ignore[attr-defined]
                self.bias.materialize(  # type: ignore[attr-defined]
                    weight_shape[:1] if bias_shape is None else bias_shape)
            self.reset_parameters()  # type: ignore[attr-defined]

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Materialise and initialise the parameters from the first inputs.

        Example::

            m.initialize_parameters(x)
        """
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{self.__class__.__name__}")

    @staticmethod
    def _infer_parameters(module: Any, args: tuple, kwargs: dict | None = None) -> None:
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        skip = self._non_persistent_buffers_set  # type: ignore[attr-defined]
        lazy = {n: p for n, p in itertools.chain(
            self._parameters.items(), self._buffers.items())  # type: ignore[attr-defined]
            if is_lazy(p) and n not in skip}
        super()._save_to_state_dict(destination, prefix, keep_vars)  # type: ignore[misc]
        for name, p in lazy.items():  # the placeholders themselves, as torch
            destination[prefix + name] = p

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list, unexpected_keys: list,
                              error_msgs: list) -> None:
        own = {}
        for name, p in itertools.chain(self._parameters.items(),  # type: ignore[attr-defined]
                                       self._buffers.items()):  # type: ignore[attr-defined]
            key = prefix + name
            if is_lazy(p) and key in state_dict:
                own[name] = key
                value = state_dict[key]
                if is_lazy(value):  # placeholder onto placeholder: nothing to load
                    continue
                try:
                    arr, src = _read(value)
                except _NotTensorLike:
                    error_msgs.append(f'While copying the parameter named "{key}", expected '
                                      f"lucid.Tensor or Tensor-like object from checkpoint but "
                                      f"received {type(value)}")
                    continue
                _stage(_MaterializeCopy(p, convert_array(arr, src, p._be, p.dtype)))
        skip = type(self)._state_dict_pass_attr  # type: ignore[attr-defined]
        if own:  # the placeholders take any shape: keep them out of the regular checks
            self._state_dict_pass_attr = frozenset(skip) | frozenset(own)
        try:
            super()._load_from_state_dict(  # type: ignore[misc]
                state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                error_msgs)
        finally:
            if own:
                del self._state_dict_pass_attr
        for key in own.values():
            while key in unexpected_keys:
                unexpected_keys.remove(key)


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is taken from the first input's last dim.

    Example::

        fc = nn.LazyLinear(4)
        fc(lucid.randn(2, 7)).shape        # lucid.Size([2, 4]); fc is now a Linear(7, 4)
    """

    cls_to_become = Linear
    weight: UninitializedParameter  # type: ignore[assignment]

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, 0, False)
        self.out_features = out_features
        self._lazy_weight_and_bias(bias, device, dtype)

    def reset_parameters(self) -> None:
        """Initialise as ``Linear`` once the parameters have their shapes.

        Example::

            fc.reset_parameters()
        """
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:  # type: ignore[override]
        """Shape the parameters from ``input.shape[-1]`` and initialise them.

        Example::

            fc.initialize_parameters(lucid.randn(2, 7))
        """
        if not self.has_uninitialized_params():  # loaded from a state dict
            self.in_features = self.weight.shape[1]
        else:
            self.in_features = input.shape[-1]
            self._materialize_weight_and_bias((self.out_features, self.in_features))


class _LazyConvMixin(LazyModuleMixin):
    _n = 2
    out_channels: int
    groups: int
    kernel_size: tuple
    transposed: bool

    def _lazy_init(self, out_channels: int, bias: bool, device: Any, dtype: Any) -> None:
        self.out_channels = out_channels
        self._lazy_weight_and_bias(bias, device, dtype)

    def reset_parameters(self) -> None:
        """Initialise as the regular convolution once the parameters have their shapes.

        Example::

            conv.reset_parameters()
        """
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def _get_in_channels(self, input: Tensor) -> int:
        n = self._n
        if input.ndim not in (n + 1, n + 2):
            raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: "
                               f"{list(input.shape)}")
        return input.shape[1] if input.ndim == n + 2 else input.shape[0]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        """Shape the parameters from the input's channel dim and initialise them.

        Example::

            conv.initialize_parameters(lucid.randn(1, 3, 8, 8))
        """
        w = self.weight  # type: ignore[attr-defined]
        if not self.has_uninitialized_params():  # loaded from a state dict
            self.in_channels = w.shape[0] if self.transposed else w.shape[1] * self.groups
        else:
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            self._materialize_weight_and_bias(shape, (self.out_channels,))


class _LazyConv(_LazyConvMixin):
    """The forward convolutions' lazy constructor: the regular one with no channels yet."""

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding,  # type: ignore[call-arg]
                         dilation, groups, False, padding_mode, device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """A ``Conv1d`` whose ``in_channels`` is taken from the first input.

    Example::

        conv = nn.LazyConv1d(8, 3)
        conv(lucid.randn(2, 4, 10)).shape      # lucid.Size([2, 8, 8]); now a Conv1d(4, 8, 3)
    """

    cls_to_become = Conv1d
    _n = 1


class LazyConv2d(_LazyConv, Conv2d):
    """A ``Conv2d`` whose ``in_channels`` is taken from the first input.

    Example::

        conv = nn.LazyConv2d(16, 3, padding=1)
        conv(lucid.randn(2, 3, 8, 8)).shape    # lucid.Size([2, 16, 8, 8])
    """

    cls_to_become = Conv2d
    _n = 2
