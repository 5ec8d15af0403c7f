"""Lazy batch and instance norms, as torch's: ``LazyBatchNorm1d`` / ``2d`` / ``3d`` and
``LazyInstanceNorm1d`` / ``2d`` / ``3d`` take ``num_features`` from the first input's channel
dim; until then ``weight`` / ``bias`` are ``UninitializedParameter`` s and ``running_mean`` /
``running_var`` ``UninitializedBuffer`` s. Then the module becomes its regular class.

As in torch, the lazy instance norms default to ``affine=True, track_running_stats=True``.
Deliberate difference from torch: an unbatched input to a lazy instance norm takes its
channel count from dim 0 (torch reads dim 1, the first spatial dim, and then fails)."""

from __future__ import annotations

from typing import Any

from ... import _dtype, ops
from ..._tensor import Tensor
from ...autograd import no_grad
from ..parameter import Buffer
from .batchnorm import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
)
from .lazy import LazyModuleMixin, UninitializedBuffer, UninitializedParameter

__all__ = ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class _LazyNormBase(LazyModuleMixin):
    num_features: int

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(0, eps, momentum, False, False, device,  # type: ignore[call-arg]
                         dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = Buffer(ops.tensor(0, dtype=_dtype.int64, device=device))

    def reset_parameters(self) -> None:
        """Initialise as the regular norm once the parameters have their shapes.

        Example::

            bn.reset_parameters()
        """
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor) -> None:  # type: ignore[override]
        """Shape the parameters and buffers from the input's channel dim and initialise
        them.

        Example::

            bn.initialize_parameters(lucid.randn(4, 16, 8, 8))
        """
        if not self.has_uninitialized_params():
            return
        batched = getattr(self, "_batched", 0)  # the instance norms' batched input rank
        unbatched = batched and input.dim() == batched - 1
        self.num_features = int(input.shape[0 if unbatched else 1])
        shape = (self.num_features,)
        with no_grad():
            for name in ("weight", "bias", "running_mean", "running_var"):
                t = getattr(self, name)
                if t is not None:
                    t.materialize(shape)
        self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """A ``BatchNorm1d`` whose ``num_features`` is taken from the first input.

    Example::

        bn = nn.LazyBatchNorm1d()
        bn(lucid.randn(8, 16)).shape         # (8, 16); now a BatchNorm1d(16)
    """

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """A ``BatchNorm2d`` whose ``num_features`` is taken from the first input.

    Example::

        bn = nn.LazyBatchNorm2d()
        bn(lucid.randn(8, 16, 4, 4)).shape   # (8, 16, 4, 4)
    """

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    """A ``BatchNorm3d`` whose ``num_features`` is taken from the first input.

    Example::

        bn = nn.LazyBatchNorm3d()
        bn(lucid.randn(2, 4, 3, 5, 5)).shape
    """

    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyNormBase, InstanceNorm1d):
    """An ``InstanceNorm1d`` whose ``num_features`` is taken from the first input.

    Example::

        nn.LazyInstanceNorm1d()(lucid.randn(2, 3, 8)).shape
    """

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNormBase, InstanceNorm2d):
    """An ``InstanceNorm2d`` whose ``num_features`` is taken from the first input.

    Example::

        nn.LazyInstanceNorm2d()(lucid.randn(2, 3, 8, 8)).shape
    """

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNormBase, InstanceNorm3d):
    """An ``InstanceNorm3d`` whose ``num_features`` is taken from the first input.

    Example::

        nn.LazyInstanceNorm3d()(lucid.randn(2, 3, 4, 8, 8)).shape
    """

    cls_to_become = InstanceNorm3d
