"""``lucid.jit``: PyTorch's TorchScript entry points as documented pass-throughs.

lucid runs eagerly (its CPU math already runs in compiled numba kernels), so there is no
script or trace to build: ``lucid.jit.script(obj)`` and ``lucid.jit.trace(fn, example)``
return ``obj``/``fn`` itself, which gives exactly the eager results. The decorators
(``ignore``, ``unused``, ``export``) return the function unchanged. Saving a scripted
program is not offered: save weights with ``lucid.save(model.state_dict(), f)``.

Example::

    scripted = lucid.jit.script(model)       # the same module, run eagerly
    traced = lucid.jit.trace(model, example_inputs=(x,))
    assert lucid.equal(traced(x), model(x))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["script", "trace", "ignore", "unused", "export", "is_scripting", "is_tracing",
           "annotate", "Final"]

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

Final = Any  # ``lucid.jit.Final[int]`` annotations in PyTorch modules stay valid


def script(obj: T, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> T:
    """Return ``obj`` (a module or function) unchanged: lucid runs eagerly.

    Example::

        net = lucid.jit.script(net)
    """
    return obj


def trace(func: T, example_inputs: Any = None, optimize: Any = None, check_trace: bool = True,
          check_inputs: Any = None, check_tolerance: float = 1e-5, strict: bool = True,
          example_kwarg_inputs: Any = None, **kwargs: Any) -> T:
    """Return ``func`` (a module or function) unchanged: lucid runs eagerly, so the result
    follows every input shape and control-flow path (a PyTorch trace would fix the path the
    example took). ``func`` is not run.

    Example::

        traced = lucid.jit.trace(net, example_inputs=(x,))
    """
    if not callable(func):
        raise TypeError(f"lucid.jit.trace expects a module or function, got {type(func)}")
    return func


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """Identity decorator (also usable as ``@ignore(drop=True)``)."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn: F) -> F:
    """Identity decorator."""
    return fn


def export(fn: F) -> F:
    """Identity decorator."""
    return fn


def is_scripting() -> bool:
    """False: lucid never scripts code."""
    return False


def is_tracing() -> bool:
    """False: lucid never traces code."""
    return False


def annotate(the_type: Any, the_value: T) -> T:
    """Return ``the_value`` (the type is for TorchScript only)."""
    return the_value
