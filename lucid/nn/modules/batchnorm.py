"""Batch and instance normalisation layers with running statistics."""

from __future__ import annotations

from typing import Any

from ... import _dtype, ops
from ..._tensor import Tensor
from ...autograd import no_grad
from .. import functional as F
from ..module import Module
from ..parameter import Buffer
from .normalization import affine_params, reset_affine

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d"]


class _NormBase(Module):
    """Common state of batch and instance norm: affine parameters and running statistics."""

    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        affine_params(self, num_features, affine, bias, device, dtype)
        if track_running_stats:
            self.running_mean = Buffer(ops.zeros(num_features, device=device, dtype=dtype))
            self.running_var = Buffer(ops.ones(num_features, device=device, dtype=dtype))
            self.num_batches_tracked = Buffer(ops.tensor(0, dtype=_dtype.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Zero the running mean and batch count, set the running variance to one.

        Example::

            bn.reset_running_stats()
        """
        if self.track_running_stats:
            with _no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Reset running statistics; weight to ones and bias to zeros.

        Example::

            bn.reset_parameters()
        """
        self.reset_running_stats()
        reset_affine(self)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        """PyTorch's text for the options.

        Example::

            nn.BatchNorm2d(16).extra_repr()
        """
        return ("{num_features}, eps={eps}, momentum={momentum}, affine={affine}, "
                "bias={use_bias}, track_running_stats={track_running_stats}").format(
                    **self.__dict__, use_bias=self.bias is not None)

    def _load_from_state_dict(self, state_dict: Any, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list, unexpected_keys: list,
                              error_msgs: list) -> None:
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            # checkpoints from before num_batches_tracked existed
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = ops.tensor(0, dtype=_dtype.int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


def _no_grad() -> Any:
    return no_grad()


class _BatchNorm(_NormBase):
    def forward(self, input: Tensor) -> Tensor:
        """Normalise with batch statistics (training) or running statistics (eval).

        Example::

            bn(lucid.randn(8, 16, 4, 4))
        """
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with _no_grad():
                self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None \
                else self.momentum
        bn_training = True if self.training else (
            self.running_mean is None and self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_stats else None,
                            self.running_var if use_stats else None, self.weight, self.bias,
                            bn_training, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) inputs, as ``torch.nn.BatchNorm1d``.

    Example::

        nn.BatchNorm1d(16)(lucid.randn(8, 16)).shape     # (8, 16)
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) inputs, as ``torch.nn.BatchNorm2d``; in training mode
    one fused kernel pass normalises and updates the running statistics.

    Example::

        nn.BatchNorm2d(16)(lucid.randn(8, 16, 4, 4)).shape     # (8, 16, 4, 4)
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch norm over (N, C, D, H, W) inputs, as ``torch.nn.BatchNorm3d``.

    Example::

        nn.BatchNorm3d(4)(lucid.randn(2, 4, 3, 5, 5)).shape     # (2, 4, 3, 5, 5)
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _InstanceNorm(_NormBase):
    _batched = 4

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (self._batched - 1, self._batched):
            raise ValueError(f"expected {self._batched - 1}D or {self._batched}D input (got "
                             f"{input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        """Normalise each sample and channel over its spatial positions.

        Example::

            nn.InstanceNorm2d(3)(lucid.randn(2, 3, 8, 8))
        """
        self._check_input_dim(input)
        unbatched = input.dim() == self._batched - 1
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance norm over (N, C, L) inputs, as ``torch.nn.InstanceNorm1d``.

    Example::

        nn.InstanceNorm1d(3)(lucid.randn(2, 3, 8))
    """

    _batched = 3


class InstanceNorm2d(_InstanceNorm):
    """Instance norm over (N, C, H, W) inputs, as ``torch.nn.InstanceNorm2d``.

    Example::

        nn.InstanceNorm2d(3)(lucid.randn(2, 3, 8, 8))
    """

    _batched = 4


class InstanceNorm3d(_InstanceNorm):
    """Instance norm over (N, C, D, H, W) inputs, as ``torch.nn.InstanceNorm3d``.

    Example::

        nn.InstanceNorm3d(3)(lucid.randn(2, 3, 4, 8, 8))
    """

    _batched = 5
