"""Names torch 2.13 keeps for old code and marks deprecated: each still works and warns with
torch's ``FutureWarning`` (``reduce_op`` on every attribute read, as torch's does)."""

from __future__ import annotations

import warnings
from typing import Any

from ._buffers import ReduceOp
from .collectives import Work, all_gather_single, reduce_scatter_single
from .process_group import ProcessGroup

__all__ = ["reduce_op", "all_gather_into_tensor", "reduce_scatter_tensor"]


class _reduce_op:  # noqa: N801  (torch's name)
    """Deprecated enum-like class of reduction operators (``SUM``, ``PRODUCT``, ``MIN``,
    ``MAX``, ...); use ``ReduceOp``. Reading any attribute warns with a FutureWarning.

    Example::

        dist.reduce_op.SUM      # FutureWarning; the same value as dist.ReduceOp.SUM
    """

    def __init__(self) -> None:
        members = {k: v for k, v in ReduceOp.RedOpType.__members__.items() if k != "UNUSED"}
        for k, v in members.items():
            setattr(self, k, v)
        self.__members__ = members

    def __getattribute__(self, key: str) -> Any:
        warnings.warn("`lucid.distributed.reduce_op` is deprecated, please use "
                      "`lucid.distributed.ReduceOp` instead", FutureWarning, stacklevel=2)
        return object.__getattribute__(self, key)


reduce_op = _reduce_op()


def all_gather_into_tensor(output_tensor: Any, input_tensor: Any,
                           group: ProcessGroup | None = None,
                           async_op: bool = False) -> Work | None:
    """Deprecated name of ``all_gather_single`` (FutureWarning, as torch 2.13).

    Example::

        out = lucid.empty(dist.get_world_size() * 4)
        dist.all_gather_into_tensor(out, lucid.ones(4))     # warns; use all_gather_single
    """
    warnings.warn("`lucid.distributed.all_gather_into_tensor` is deprecated. Please use "
                  "`lucid.distributed.all_gather_single` instead.", FutureWarning,
                  stacklevel=2)
    return all_gather_single(output_tensor, input_tensor, group, async_op)


def reduce_scatter_tensor(output: Any, input: Any, op: Any = ReduceOp.SUM,
                          group: ProcessGroup | None = None,
                          async_op: bool = False) -> Work | None:
    """Deprecated name of ``reduce_scatter_single`` (FutureWarning, as torch 2.13).

    Example::

        dist.reduce_scatter_tensor(out, lucid.ones(world * 2))  # warns; use reduce_scatter_single
    """
    warnings.warn("`lucid.distributed.reduce_scatter_tensor` is deprecated. Please use "
                  "`lucid.distributed.reduce_scatter_single` instead.", FutureWarning,
                  stacklevel=2)
    return reduce_scatter_single(output, input, op, group, async_op)
