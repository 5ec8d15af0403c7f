"""Flatten parameters into one vector and back (``torch.nn.utils.convert_parameters``)."""

from __future__ import annotations

from collections.abc import Iterable

from ..._tensor import Tensor
from ...ops.movement import cat

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_device(param: Tensor, old: str | None) -> str:
    dev = str(param.device)
    if old is not None and dev != old:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return dev


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and concatenated into one 1-d tensor (differentiable).

    Example::

        vec = lucid.nn.utils.parameters_to_vector(net.parameters())
        vec.shape          # lucid.Size([n_params])
    """
    dev = None
    vec = []
    for p in parameters:
        dev = _check_device(p, dev)
        vec.append(p.reshape(-1))
    return cat(vec)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Set the parameters' data to consecutive slices of ``vec`` (as in PyTorch, each
    parameter then views ``vec``'s memory).

    Example::

        lucid.nn.utils.vector_to_parameters(vec * 0.5, net.parameters())
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected lucid.Tensor, but got: {type(vec).__name__}")
    dev = None
    pointer = 0
    for p in parameters:
        dev = _check_device(p, dev)
        n = p.numel()
        p.data = vec[pointer:pointer + n].reshape(p.shape).data
        pointer += n
