"""``lucid.compile`` and ``lucid.compiler``: PyTorch's compilation entry points as documented
pass-throughs.

lucid runs eagerly: every op executes when called, its CPU math already in compiled numba
kernels and its "gpu" math in MLX. There is no graph to capture, so ``lucid.compile(model)``
returns ``model`` itself (not a wrapper: its ``state_dict`` keys are unchanged, without
PyTorch's ``_orig_mod.`` prefix) and the results are exactly the eager ones.

Example::

    model = lucid.compile(model)             # same object, runs eagerly

    @lucid.compile(mode="max-autotune")
    def step(x):
        return model(x).relu()
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["compile", "disable", "is_compiling", "is_dynamo_compiling", "is_exporting",
           "reset", "allow_in_graph", "list_backends"]

F = TypeVar("F", bound=Callable[..., Any])
_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


def compile(model: Callable[..., Any] | None = None, *, fullgraph: bool = False,  # noqa: A001
            dynamic: bool | None = None, backend: str | Callable[..., Any] | None = None,
            mode: str | None = None, options: dict[str, Any] | None = None,
            name: str | None = None, disable: bool = False,
            **kwargs: Any) -> Any:
    """Return ``model`` unchanged (lucid runs eagerly; see this module's docstring).

    Accepts PyTorch's arguments and checks them as PyTorch does (``mode`` must be one of
    PyTorch's modes, and not given together with ``options``). Without ``model`` it returns
    a decorator.

    Example::

        net = lucid.compile(net)
        assert net(x).shape == (8, 10)
    """
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: " + ", ".join(_MODES))
    if model is None:
        def wrap(fn: F) -> F:
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, disable=disable)
        return wrap
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is "
                             "provided.")
    return model


def disable(fn: F | None = None, recursive: bool = True, *, reason: str | None = None) -> Any:
    """Identity decorator (nothing is compiled, so nothing needs excluding)."""
    if fn is None:
        return lambda f: f
    return fn


def is_compiling() -> bool:
    """False: lucid never traces code."""
    return False


def is_dynamo_compiling() -> bool:
    """False: lucid never traces code."""
    return False


def is_exporting() -> bool:
    """False: lucid never exports graphs."""
    return False


def reset() -> None:
    """A no-op: there are no compilation caches to clear."""


def allow_in_graph(fn: F) -> F:
    """Identity decorator (there is no graph)."""
    return fn


def list_backends(exclude_tags: Any = ()) -> list[str]:
    """Names accepted as ``backend``; all run eagerly in lucid."""
    return ["eager"]
