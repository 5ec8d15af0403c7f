"""``SyncBatchNorm``: batch norm whose statistics span every rank of a process group."""

from __future__ import annotations

from typing import Any

from ... import _dtype, ops
from ... import distributed as dist
from ..._tensor import Tensor
from ...autograd import Function, no_grad
from ..module import Module
from .batchnorm import _BatchNorm

__all__ = ["SyncBatchNorm"]


class _AllReduceSum(Function):
    """Differentiable all-reduce (sum): the gradient of each rank's input is the sum of
    every rank's output gradient, as ``torch.distributed.nn.functional.all_reduce``."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, pg: Any) -> Tensor:
        ctx.pg = pg
        out = x.clone()
        dist.all_reduce(out, group=pg)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        g = grad.clone()
        dist.all_reduce(g, group=ctx.pg)
        return g, None


class SyncBatchNorm(_BatchNorm):
    """Batch norm over inputs of shape (N, C, *), with the batch statistics computed over
    the whole process group, as ``torch.nn.SyncBatchNorm``.

    In training, each rank sums its per-channel values and (shifted) squares; one
    all-reduce of those sums and the counts (combined in float64; float32 on "gpu") gives
    the mean and variance of the global batch, and backward all-reduces the gradients of
    the sums, so input gradients are those of batch norm over the concatenated batch. In eval mode,
    or outside a process group / in a world of one, it is ordinary ``BatchNorm``. Running
    statistics use the unbiased variance of the global batch.

    Example::

        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = nn.parallel.DistributedDataParallel(model)
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any = None, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _group_size(self) -> int:
        if not dist.is_initialized():
            return 1
        pg = dist.process_group.resolve_group(self.process_group)
        return 1 if pg is None else pg.size()

    def forward(self, input: Tensor) -> Tensor:
        """Normalise with the statistics of the global batch (training) or the running
        statistics (eval).

        Example::

            nn.SyncBatchNorm(16)(lucid.randn(8, 16, 4, 4)).shape     # (8, 16, 4, 4)
        """
        self._check_input_dim(input)
        bn_training = self.training or (self.running_mean is None
                                        and self.running_var is None)
        if not (bn_training and self.training and self._group_size() > 1):
            return super().forward(input)
        if input.shape[1] != self.num_features:
            raise ValueError(f"SyncBatchNorm expected {self.num_features} channels, got input "
                             f"of shape {tuple(input.shape)}")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None \
                else self.momentum
        return self._sync_forward(input, factor)

    def _sync_forward(self, x: Tensor, factor: float) -> Tensor:
        C = self.num_features
        axes = [0] + list(range(2, x.dim()))
        shape = [1, C] + [1] * (x.dim() - 2)
        n = x.numel() // C if C else 0
        c = x.detach().mean(axes) if n else ops.zeros(C, dtype=x.dtype, device=x.device)
        d = x - c.reshape(shape)
        # float64 statistics, except on a gpu (Metal has no float64)
        acc = _dtype.float32 if x.device.type == "gpu" else _dtype.float64
        s = x.sum(axes).to(acc)
        c64 = c.to(acc)
        # sum of x^2, computed as sum((x - c)^2) + c (2 sum x - n c)
        t = (d * d).sum(axes).to(acc) + c64 * (2.0 * s - n * c64)
        count = ops.full((1,), float(n), dtype=acc, device=x.device)
        pg = dist.process_group.resolve_group(self.process_group)
        total = _AllReduceSum.apply(ops.cat([s, t, count]), pg)
        N = float(total[2 * C].item())
        if N <= 1 and self.training:
            raise ValueError(f"Expected more than 1 value per channel when training, got "
                             f"input size {list(x.shape)} over {pg.size()} ranks")
        mean = total[:C] / N
        var = (total[C:2 * C] / N - mean * mean).clamp(min=0.0)
        if self.track_running_stats and self.running_mean is not None:
            with no_grad():
                m, v = mean.detach().to(self.running_mean.dtype), var.detach()
                self.running_mean.mul_(1 - factor).add_(m * factor)
                unbiased = (v * (N / (N - 1))).to(self.running_var.dtype)
                self.running_var.mul_(1 - factor).add_(unbiased * factor)
        invstd = (var + self.eps).rsqrt().to(x.dtype)
        scale = invstd if self.weight is None else invstd * self.weight
        y = (x - mean.to(x.dtype).reshape(shape)) * scale.reshape(shape)
        return y if self.bias is None else y + self.bias.reshape(shape)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with every ``BatchNorm*D`` layer replaced by a ``SyncBatchNorm`` that
        shares its parameters and buffers (the module itself when it is a batch norm).

        Example::

            net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8))
            net = nn.SyncBatchNorm.convert_sync_batchnorm(net)
            type(net[1]).__name__          # 'SyncBatchNorm'
        """
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls.__new__(cls)
            Module.__init__(out)
            for k in ("num_features", "eps", "momentum", "affine", "track_running_stats"):
                setattr(out, k, getattr(module, k))
            out.process_group = process_group
            for name, p in module._parameters.items():
                out.register_parameter(name, p)
            for name, b in module._buffers.items():
                out.register_buffer(name, b, persistent=name not in
                                    module._non_persistent_buffers_set)
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return out
