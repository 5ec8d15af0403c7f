"""Reverse-mode automatic differentiation: ``backward``, ``grad``, grad modes, ``gradcheck``,
anomaly detection, and user-defined ``Function``."""

from typing import NoReturn

from . import anomaly_mode, functional
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .engine import backward, grad
from .function import Function, FunctionCtx, Op
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_multithreading_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from .gradcheck import gradcheck, gradgradcheck
from .variable import Variable


def variable(*args: object, **kwargs: object) -> NoReturn:
    """Removed in PyTorch and here: raises, pointing at ``lucid.tensor``. The
    ``lucid.autograd.variable`` module (holding ``Variable``) stays importable, and
    ``variable.Variable`` is ``Variable``, as in PyTorch."""
    raise RuntimeError("lucid.autograd.variable(...) is deprecated, use lucid.tensor(...) "
                       "instead")


variable.Variable = Variable  # type: ignore[attr-defined]

__all__ = ["backward", "grad", "Function", "FunctionCtx", "Op", "no_grad", "enable_grad",
           "set_grad_enabled", "is_grad_enabled", "inference_mode", "gradcheck",
           "gradgradcheck", "functional", "anomaly_mode", "detect_anomaly",
           "set_detect_anomaly", "set_multithreading_enabled", "is_multithreading_enabled",
           "Variable", "variable"]
