"""``lucid.nn.parallel``: PyTorch's data-parallel wrappers.

lucid drives one device per process, so ``DataParallel`` is a documented pass-through: it
wraps a module (its ``state_dict`` keys gain PyTorch's ``module.`` prefix) and forwards every
call to it on that module's device, unsplit. ``DistributedDataParallel`` (one process per
replica, gradients averaged over MPI by ``lucid.distributed``) lives in ``parallel_ddp.py``.

Example::

    model = lucid.nn.DataParallel(net)         # same results as net(x)
    out = model(x)
    lucid.save(model.module.state_dict(), "net.pt")
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .module import Module
from .parallel_ddp import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


class DataParallel(Module):
    """Wrap ``module`` as ``torch.nn.DataParallel`` does on a machine with one device: every
    call runs ``module`` on all of the batch (lucid does not split batches across devices).
    ``device_ids``, ``output_device`` and ``dim`` are kept as attributes; a device list
    naming more than one device is refused.

    Example::

        dp = lucid.nn.DataParallel(net)
        assert lucid.equal(dp(x), net(x))
        list(dp.state_dict())[0]                   # "module.0.weight"
    """

    def __init__(self, module: Module, device_ids: Sequence[Any] | None = None,
                 output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError(f"DataParallel got device_ids={list(device_ids)}: lucid drives "
                             "one device per process, so give at most one device")
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """``self.module(*inputs, **kwargs)``."""
        return self.module(*inputs, **kwargs)


def data_parallel(module: Module, inputs: Any, device_ids: Sequence[Any] | None = None,
                  output_device: Any = None, dim: int = 0,
                  module_kwargs: dict[str, Any] | None = None) -> Any:
    """The functional form of ``DataParallel``: ``module(*inputs, **module_kwargs)``."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return DataParallel(module, device_ids, output_device, dim)(*inputs, **(module_kwargs or {}))
