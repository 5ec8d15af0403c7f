"""``out=``: torch's functions write their result into a tensor the caller passes.

``accepts_out(fn)`` gives ``fn`` torch's ``out=`` keyword: the result is computed as usual,
then written into ``out`` (cast to ``out``'s dtype where torch's casting rule allows it;
resized, with torch's deprecation warning, where ``out`` has elements and another shape),
and ``out`` is what the call returns. A function returning several tensors takes a tuple
(or list) of as many. As in torch, ``out=`` refuses to record a graph: a call whose inputs
require grad under grad mode raises, and so does an ``out`` that requires grad.

``OUT_FUNCTIONS`` names lucid's top-level functions that take it (those torch's do);
``lucid/__init__.py`` wraps them once at import.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any

from . import _dtype, _numpy_aliases
from ._tensor import Tensor
from .autograd import grad_mode
from .ops.views import written

__all__ = ["OUT_FUNCTIONS", "OUT_NAMESPACES", "accepts_out", "install", "write_out"]

OUT_FUNCTIONS = (
    "abs", "absolute", "acos", "acosh", "add", "addbmm", "addcdiv", "addcmul", "addmm",
    "addmv", "addr", "alias_copy", "all", "amax", "amin", "aminmax", "angle", "any", "arange",
    "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "argmax",
    "argmin", "argsort", "as_strided_copy", "asin", "asinh", "atan", "atan2", "atanh",
    "baddbmm", "bernoulli", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "bmm",
    "bucketize", "cat", "ceil", "cholesky", "clamp", "clamp_max", "clamp_min", "clip",
    "column_stack", "complex", "concat", "concatenate", "conj_physical", "copysign", "cos",
    "cosh", "cross", "cummax", "cummin", "cumprod", "cumsum", "deg2rad", "detach_copy", "diag",
    "diagonal_copy", "diff", "digamma", "div", "divide", "dot", "dstack", "empty", "eq", "erf",
    "erfc", "erfinv", "exp", "exp2", "expand_copy", "expm1", "eye", "fix", "float_power",
    "floor", "floor_divide", "fmax", "fmin", "fmod", "frac", "frexp", "full", "gather", "gcd",
    "ge", "ger", "greater", "greater_equal", "gt", "hardshrink", "heaviside", "histc",
    "histogram", "hstack", "hypot", "i0", "igamma", "igammac", "index_add", "index_copy",
    "index_reduce", "index_select", "inner", "inverse", "isin", "isneginf", "isposinf", "kron",
    "kthvalue", "lcm", "ldexp", "le", "lerp", "less", "less_equal", "lgamma", "linspace", "log",
    "log10", "log1p", "log2", "log_softmax", "logaddexp", "logaddexp2", "logcumsumexp",
    "logical_and", "logical_not", "logical_or", "logical_xor", "logit", "logspace", "logsumexp",
    "lt", "masked_select", "matmul", "matrix_power", "max", "maximum", "mean", "median", "min",
    "minimum", "mm", "mode", "msort", "mul", "multinomial", "multiply", "mv", "mvlgamma",
    "nanmean", "nanmedian", "nanquantile", "nansum", "narrow_copy", "ne", "neg", "negative",
    "nextafter", "nonzero", "nonzero_static", "norm", "normal", "not_equal", "ones", "outer",
    "permute_copy", "polar", "polygamma", "pow", "prod", "qr", "quantile", "rad2deg", "rand",
    "randint", "randn", "randperm", "range", "reciprocal", "remainder", "renorm", "round",
    "row_stack", "rsqrt", "scatter", "scatter_add", "scatter_reduce", "searchsorted",
    "select_copy", "sgn", "sigmoid", "sign", "signbit", "sin", "sinc", "sinh", "slice_copy",
    "slice_scatter", "slogdet", "softmax", "sort", "split_copy", "split_with_sizes_copy",
    "sqrt", "square", "squeeze_copy", "stack", "std", "sub", "subtract", "sum", "svd", "t_copy",
    "take", "take_along_dim", "tan", "tanh", "threshold", "topk", "transpose_copy", "tril",
    "triu", "true_divide", "trunc", "unbind_copy", "unfold_copy", "unsqueeze_copy", "var",
    "vdot", "view_as_complex_copy", "view_as_real_copy", "view_copy", "vstack", "where",
    "xlogy", "zeros", "bitwise_left_shift", "bitwise_right_shift", "chain_matmul",
    "cholesky_inverse", "cholesky_solve", "hspmm", "indices_copy", "lu_solve", "lu_unpack",
    "orgqr", "saddmm", "sspaddmm", "triangular_solve", "values_copy", "frobenius_norm",
    "nuclear_norm", "binomial", "nan_to_num", "tensordot", "geqrf",
)

# the functions of lucid's other namespaces that take ``out=`` (those torch's do)
OUT_NAMESPACES = {
    "linalg": (
        "cholesky", "cholesky_ex", "cond", "cross", "det", "eig", "eigh", "eigvals", "eigvalsh",
        "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve",
        "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp",
        "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr",
        "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv",
        "tensorsolve", "vecdot", "vector_norm",
    ),
    "special": (
        "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
        "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
        "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc",
        "gammaincc", "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e",
        "i1", "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr",
        "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
        "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
        "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
        "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
        "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc",
        "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
    ),
    "fft": (
        "fft", "fft2", "fftfreq", "fftn", "hfft", "hfft2", "hfftn", "ihfft2", "ihfftn", "ifft",
        "ifft2", "ifftn", "ihfft", "irfft",
        "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn",
    ),
    "nn.functional": ("hardshrink",),
}

_RESIZED = ("An output with one or more elements was resized since it had shape {old}, which "
            "does not match the required output shape {new}. This behavior is deprecated, and "
            "in a future PyTorch release outputs will not be resized unless they have zero "
            "elements. You can explicitly reuse an out tensor t by resizing it, inplace, to "
            "zero elements with t.resize_(0).")


def _write(out: Any, result: Tensor, name: str) -> Tensor:
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if out.requires_grad and grad_mode._state.on:
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    if out.device != result.device:
        raise RuntimeError(f"Expected out tensor to have device {out.device}, but got "
                           f"{result.device} instead")
    if not _dtype.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {_dtype.torch_name(result.dtype)} can't be cast to the "
                           f"desired output type {_dtype.torch_name(out.dtype)}")
    value = result.detach().to(out.dtype)
    if tuple(out.shape) != tuple(result.shape):
        if out.numel():
            warnings.warn(_RESIZED.format(old=list(out.shape), new=list(result.shape)),
                          UserWarning, stacklevel=4)
        out.data = value.clone()
        written(out)
    else:
        with grad_mode.no_grad():
            out.copy_(value)
    return out


def write_out(out: Any, result: Any, name: str) -> Any:
    """Write ``result`` (a tensor, or a tuple/list of them) into ``out`` as torch does;
    returns ``out``."""
    if isinstance(result, Tensor):
        return _write(out, result, name)
    if not isinstance(out, (tuple, list)) or len(out) != len(result):
        raise TypeError(f"{name}(): argument 'out' must be a tuple of {len(result)} Tensors")
    written = [_write(o, r, name) for o, r in zip(out, result)]
    if isinstance(result, tuple) and hasattr(result, "_fields"):
        return type(result)(*written)
    return type(out)(written)


def _requires_grad(args: tuple, kwargs: dict) -> bool:
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor) and a.requires_grad:
            return True
        if isinstance(a, (tuple, list)) and any(isinstance(t, Tensor) and t.requires_grad
                                                for t in a):
            return True
    return False


def accepts_out(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with torch's ``out=`` keyword (see the module docstring)."""
    name = getattr(fn, "__name__", "function")
    renames: dict[str, str] = {}  # numpy-style aliases, filled by _numpy_aliases.install

    @functools.wraps(fn)
    def with_out(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        if kwargs and renames:
            _numpy_aliases.rename(kwargs, renames, name)
        if out is None:
            return fn(*args, **kwargs)
        if grad_mode._state.on and _requires_grad(args, kwargs):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires "
                               "grad.")
        return write_out(out, fn(*args, **kwargs), name)

    with_out.__lucid_out__ = True  # type: ignore[attr-defined]
    setattr(with_out, _numpy_aliases.RENAMES, renames)
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return with_out
    params = [p for p in sig.parameters.values() if p.name != "out"]
    kinds = [p.kind for p in params]
    out_param = inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)
    at = kinds.index(inspect.Parameter.VAR_KEYWORD) if inspect.Parameter.VAR_KEYWORD in kinds \
        else len(params)
    with_out.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[*params[:at], out_param, *params[at:]])
    return with_out


def install(namespace: dict[str, Any], names: Any) -> None:
    """Wrap the functions ``names`` of ``namespace`` (a module's globals) with ``out=``,
    each once (a name the namespace lacks is skipped)."""
    for name in names:
        fn = namespace.get(name)
        if fn is not None and callable(fn) and not getattr(fn, "__lucid_out__", False):
            namespace[name] = accepts_out(fn)
