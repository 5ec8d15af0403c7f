"""``skip_init``, as ``torch.nn.utils.init``: build a module whose parameters and buffers hold
uninitialised memory (for a custom initialisation that would overwrite them anyway).

Example::

    from lucid.nn.utils import skip_init
    m = skip_init(nn.Linear, 5, 1)
    nn.init.zeros_(m.weight)
"""

from __future__ import annotations

import inspect
from typing import Any, TypeVar

from ..module import Module

__all__ = ["skip_init"]

M = TypeVar("M", bound=Module)


def skip_init(module_cls: type[M], *args: Any, **kwargs: Any) -> M:
    """Instantiate ``module_cls(*args, **kwargs)`` with parameters and buffers left
    uninitialised, as if made by ``lucid.empty``, on ``device`` (default "cpu").

    As in torch, the module must accept a ``device`` argument and do nothing in its constructor
    but create its tensors and initialise them. lucid has no "meta" device: the constructor
    (its initialisation included) runs on ``device``, then every parameter and buffer gets
    fresh uninitialised memory of its shape and dtype (``Module.to_empty``), so the values
    come out as torch's do but the initialisation time is not saved.

    Example::

        m = skip_init(nn.Linear, in_features=6, out_features=1)
        m.weight.shape          # lucid.Size([1, 6]), values uninitialised
    """
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = final_device
    return module_cls(*args, **kwargs).to_empty(device=final_device)
