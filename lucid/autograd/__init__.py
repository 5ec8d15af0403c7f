"""Reverse-mode automatic differentiation: ``backward``, ``grad``, grad modes, ``gradcheck``,
and user-defined ``Function``."""

from . import functional
from .engine import backward, grad
from .function import Function, FunctionCtx, Op
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import gradcheck, gradgradcheck

__all__ = ["backward", "grad", "Function", "FunctionCtx", "Op", "no_grad", "enable_grad",
           "set_grad_enabled", "is_grad_enabled", "inference_mode", "gradcheck",
           "gradgradcheck", "functional"]
