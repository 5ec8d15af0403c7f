"""``DistributedDataParallel``: one model replica per process, gradients averaged over MPI.

The reducer (``_ddp_reducer.py``) all-reduces gradient buckets on a communication thread
while backward is still running; ``backward()`` returns with averaged gradients, so
``clip_grad_norm_`` and the optimizer see the same values on every rank.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .. import distributed as dist
from ..autograd.grad_mode import is_grad_enabled
from ._ddp_reducer import FIRST_BUCKET_BYTES, Reducer, broadcast_coalesced
from .module import Module

__all__ = ["DistributedDataParallel"]

DEFAULT_BUCKET_CAP_MB = 25


class DistributedDataParallel(Module):
    """Data-parallel training, as ``torch.nn.parallel.DistributedDataParallel``.

    At construction it checks that every rank built the same parameters (shapes and
    dtypes; the error names the first mismatch) and copies rank 0's parameters and buffers
    to every rank. During ``backward()`` gradients are averaged across ranks in buckets of
    ``bucket_cap_mb`` MiB as soon as they are ready, overlapped with the rest of backward.

    - ``no_sync()``: a context in which backward accumulates local gradients only; the
      first backward after it averages the accumulated sum.
    - ``find_unused_parameters=True``: parameters that did not take part in the forward
      (on some rank) count as ready with zero gradient; without it they raise an error
      that names them at the end of backward, instead of hanging the job.
    - ``broadcast_buffers`` (default True): rank 0's buffers (e.g. BatchNorm running
      statistics) are copied to every rank before each forward with grad enabled.
    - ``gradient_as_bucket_view=True``: ``.grad`` tensors become views into the reducer's
      buckets (saves a copy per step when gradients are zeroed rather than set to None).
    - ``device_ids``/``output_device``/``dim``/``static_graph`` are accepted for
      compatibility (lucid drives one device per process).

    The wrapped model is ``.module``; ``state_dict()`` keys carry the ``module.`` prefix, as
    in torch (strip it with ``lucid.nn.modules.utils.consume_prefix_in_state_dict_if_present``).

    Example::

        dist.init_process_group()
        model = DistributedDataParallel(Net())
        opt = lucid.optim.SGD(model.parameters(), lr=0.1)
        loss = F.cross_entropy(model(x), y)
        loss.backward()                      # gradients are averaged over all ranks here
        opt.step()
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0, broadcast_buffers: bool | None = None, init_sync: bool = True,
                 process_group: Any = None, bucket_cap_mb: float | None = None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 delay_all_reduce_named_params: Any = None,
                 param_to_hook_all_reduce: Any = None, mixed_precision: Any = None,
                 device_mesh: Any = None, skip_all_reduce_unused_params: bool = False,
                 bucket_cap_mb_list: list | None = None, batched_grad_copy: bool = False,
                 forward_sync_buffers: bool | None = None) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel wraps a lucid.nn.Module, got "
                            f"{type(module).__name__}")
        pg = dist.process_group.resolve_group(process_group)
        if pg is None:
            raise ValueError("DistributedDataParallel: this rank is not a member of "
                             "process_group")
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self.module = module
        self.device_ids, self.output_device, self.dim = device_ids, output_device, dim
        self.process_group = pg
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        if forward_sync_buffers is not None:
            self.forward_sync_buffers, init_buffers = forward_sync_buffers, True
        else:
            self.forward_sync_buffers = True if broadcast_buffers is None else broadcast_buffers
            init_buffers = self.forward_sync_buffers
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self._buffers_to_sync = [b for _, b in module.named_buffers() if b is not None]
        _verify_same_model(module, pg)
        if init_sync and pg.size() > 1:
            broadcast_coalesced([p for _, p in module.named_parameters()]
                                + (self._buffers_to_sync if init_buffers else []), pg)
        default = bucket_cap_mb is None and not bucket_cap_mb_list
        cap_mb = max(bucket_cap_mb_list) if bucket_cap_mb_list else \
            (DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb)
        cap = int(cap_mb * 1024 * 1024)
        self.bucket_bytes_cap = cap
        self.reducer = Reducer(named, pg, cap, FIRST_BUCKET_BYTES if default else cap,
                               find_unused_parameters, gradient_as_bucket_view) \
            if pg.size() > 1 else None

    @property
    def broadcast_buffers(self) -> bool:
        """Whether buffers are copied from rank 0 before each forward (torch's old name
        for ``forward_sync_buffers``).

        Example::

            ddp.broadcast_buffers = False     # keep each rank's BatchNorm statistics
        """
        return self.forward_sync_buffers

    @broadcast_buffers.setter
    def broadcast_buffers(self, value: bool) -> None:
        """Turn the per-forward buffer copy on or off."""
        self.forward_sync_buffers = value

    def will_sync_module_buffers(self) -> bool:
        """Whether the next forward copies rank 0's buffers to every rank.

        Example::

            ddp.will_sync_module_buffers()
        """
        return (self.require_forward_param_sync and self.forward_sync_buffers
                and bool(self._buffers_to_sync) and self.process_group.size() > 1)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """Run the module; with grad enabled (and outside ``no_sync``), sync buffers first
        and arm the gradient all-reduce for the following backward.

        Example::

            out = ddp_model(x)
        """
        sync = is_grad_enabled() and self.require_backward_grad_sync
        self.require_forward_param_sync = sync
        if self.will_sync_module_buffers():
            broadcast_coalesced(self._buffers_to_sync, self.process_group)
        out = self.module(*inputs, **kwargs)
        if sync and self.reducer is not None:
            self.reducer.prepare(out)
        return out

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """A context in which backward does not average gradients (they accumulate
        locally); the first synced backward afterwards averages the accumulated sum.

        Example::

            with ddp.no_sync():
                ddp(x1).sum().backward()      # local only
            ddp(x2).sum().backward()          # averages (g1 + g2) over ranks
        """
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _set_static_graph(self) -> None:
        """Accepted for compatibility; lucid's reducer needs no static-graph mode."""
        self.static_graph = True

    def __getstate__(self) -> dict:
        raise RuntimeError("DistributedDataParallel cannot be pickled or deep-copied; save "
                           "or copy `.module` (or its state_dict) instead")

    def __del__(self) -> None:
        r = self.__dict__.get("reducer")
        if r is not None:
            r.close()


def _verify_same_model(module: Module, pg: Any) -> None:
    """Raise on every rank, naming the first difference, unless all ranks hold parameters
    of the same names, shapes and dtypes."""
    mine = [(n, tuple(p.shape), str(p.dtype)) for n, p in module.named_parameters()]
    if pg.size() == 1:
        return
    everyone = [None] * pg.size()
    dist.all_gather_object(everyone, mine, group=pg)
    ref = everyone[0]
    for r, theirs in enumerate(everyone[1:], start=1):
        if len(theirs) != len(ref):
            raise RuntimeError(f"DDP expects same model across all ranks, but Rank "
                               f"{pg.ranks[r]} has {len(theirs)} params, while rank "
                               f"{pg.ranks[0]} has inconsistent {len(ref)} params.")
        for (n0, s0, d0), (n1, s1, d1) in zip(ref, theirs):
            if (s0, d0) != (s1, d1):
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but rank {pg.ranks[r]}'s "
                    f"parameter {n1!r} has shape {list(s1)} ({d1}) while rank "
                    f"{pg.ranks[0]}'s {n0!r} has shape {list(s0)} ({d0}).")
