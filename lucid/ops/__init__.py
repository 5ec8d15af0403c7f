"""Every differentiable op. The submodules, lowest layer first (each imports only the ones
before it): ``_util`` (coercion, casts), ``creation``, ``shape`` (views), ``device``,
``inplace`` (views and in-place writes), ``index``, ``elementwise``, ``select``, ``reduce``,
``movement``, ``matmul``, ``linalg``, ``random``, then the nn ops
(``activation``, ``normalization``, ``loss``, ``conv``, ``pool``, ``conv3d``, ``pool3d``,
``dropout``, ``embedding``, ``interpolate``, ``attention``). ``tensor_methods``
binds them to ``Tensor``; tests/test_layers.py checks the order.
"""

from __future__ import annotations

from . import (
    _graph,  # noqa: F401  (installs the create_graph backward in the engine)
    tensor_methods,  # noqa: F401  (binds the Tensor methods and operators)
    tensor_methods_math,  # noqa: F401  (binds the math-tail Tensor methods)
)
from . import matmul as _matmul_module
from . import select as _select_module
from .combine import (
    block_diag,
    cartesian_prod,
    cdist,
    combinations,
    kron,
    meshgrid,
    rot90,
    tensordot,
)
from .creation import *  # noqa: F403
from .device import to_device
from .elementwise import *  # noqa: F403
from .histogram import bincount, histc, histogram
from .index import *  # noqa: F403
from .index_update import index_add, index_copy, index_fill, masked_scatter
from .layout_extra import *  # noqa: F403
from .legacy import is_nonzero
from .linalg import *  # noqa: F403
from .math_extra import *  # noqa: F403
from .matmul import *  # noqa: F403
from .movement import *  # noqa: F403
from .nonfinite import nan_to_num, nan_to_num_
from .random import *  # noqa: F403
from .random_fill import rand_like, randint_like, randn_like
from .reduce import *  # noqa: F403
from .reduce_extra import *  # noqa: F403
from .scan import (
    cummax,
    cummin,
    cumprod,
    cumsum,
    cumulative_trapezoid,
    diff,
    logcumsumexp,
    trapezoid,
    trapz,
)
from .select import *  # noqa: F403
from .shape import *  # noqa: F403
from .sorting import (
    bucketize,
    isin,
    kthvalue,
    mode,
    searchsorted,
    unique,
    unique_consecutive,
)

# NOTE: ``from .matmul import *`` rebinds ``matmul`` to the function, hiding the submodule;
# keep ``lucid.ops.matmul`` the module (``lucid.ops.matmul.linear``). ``lucid.matmul`` is the
# op, imported by ``lucid/__init__.py``.
matmul = _matmul_module
select = _select_module  # likewise: ``lucid.select`` is layout_extra's op

__all__ = [
    "T", "abs", "acos", "add", "addcdiv", "addcmul", "addmm", "all", "amax", "amin", "any",
    "arange", "arccos", "arcsin", "arctan", "argmax", "argmin", "argsort", "argwhere", "as_tensor",
    "asarray", "asin", "atan", "bernoulli", "bernoulli_", "bitwise_and", "bitwise_not",
    "bitwise_or", "bitwise_xor", "bmm", "broadcast_tensors", "broadcast_to", "cat", "ceil", "chunk",
    "clamp", "clamp_max", "clamp_min", "clip", "clone", "concat", "concatenate", "contiguous",
    "cos", "cosh", "cumprod", "cumsum", "diag", "diag_embed", "diagonal", "div", "dot", "einsum",
    "empty", "empty_like", "eq", "exp", "expand", "expand_as", "expm1", "eye", "fix", "flatten",
    "flip", "fliplr", "flipud", "floor", "floor_divide", "fmod", "from_numpy", "full", "full_like",
    "gather", "ge", "ger", "get_rng_state", "getitem", "greater", "greater_equal", "gt", "hstack",
    "index_select", "initial_seed", "inner", "isfinite", "isinf", "isnan", "le", "lerp", "less",
    "less_equal", "linear", "linspace", "log", "log10", "log1p", "log2", "logical_and",
    "logical_not", "logical_or", "logical_xor", "logspace", "logsumexp", "lt", "mT", "manual_seed",
    "masked_fill", "masked_select", "max", "maximum", "mean", "median", "min", "minimum", "mm",
    "moveaxis", "movedim", "mul", "multinomial", "mv", "narrow", "ne", "neg", "negative", "nonzero",
    "norm", "normal", "normal_", "not_equal", "ones", "ones_like", "outer", "pad", "permute", "pow",
    "prod", "rand", "randint", "randn", "randperm", "reciprocal", "relu", "remainder", "repeat",
    "repeat_interleave", "reshape", "roll", "round", "rsqrt", "scalar_tensor", "scatter",
    "scatter_add", "seed", "set_rng_state", "setitem", "sigmoid", "sign", "sin", "sinh", "sort",
    "split", "sqrt", "square", "squeeze", "stack", "std", "std_mean", "sub", "sum", "swapaxes",
    "swapdims", "t", "take", "tan", "tanh", "tensor", "tile", "to_device", "topk", "trace",
    "transpose", "tril", "triu", "trunc", "unbind", "unflatten", "uniform", "uniform_", "unsqueeze",
    "var", "var_mean", "view", "vstack", "where", "zeros", "zeros_like",
    "bincount", "block_diag", "bucketize", "cartesian_prod", "cdist", "combinations", "cummax",
    "cummin", "diff", "histc", "histogram", "index_add", "index_copy", "index_fill", "is_nonzero",
    "isin", "kron", "kthvalue", "logcumsumexp", "masked_scatter", "meshgrid", "mode",
    "nan_to_num", "nan_to_num_", "rand_like", "randint_like", "randn_like", "rot90",
    "searchsorted", "tensordot", "trapezoid", "trapz", "cumulative_trapezoid", "unique",
    "unique_consecutive",
    "acosh", "addbmm", "addmv", "addr", "aminmax", "arccosh", "arcsinh", "arctan2", "arctanh",
    "asinh", "atan2", "atanh", "atleast_1d", "atleast_2d", "atleast_3d", "baddbmm",
    "bartlett_window", "blackman_window", "chain_matmul", "column_stack", "copysign", "corrcoef",
    "count_nonzero", "cov", "cross", "deg2rad", "diagflat", "dist", "divide", "dsplit", "dstack",
    "exp2",
    "fill_diagonal_", "float_power", "fmax", "fmin", "frac", "frexp", "gcd", "hamming_window",
    "hann_window", "heaviside", "hsplit", "hypot", "i0", "index_put", "index_put_", "is_complex",
    "is_same_size", "is_signed", "isneginf", "isposinf", "isreal", "kaiser_window", "lcm", "ldexp",
    "logaddexp", "logaddexp2", "logit", "msort", "multiply", "nanmean", "nanmedian", "nanquantile",
    "nansum", "nextafter", "positive", "quantile", "rad2deg", "ravel", "renorm", "row_stack",
    "rsub", "scatter_reduce", "sgn", "signbit", "sinc", "subtract", "take_along_dim",
    "tensor_split", "tril_indices", "triu_indices", "true_divide", "unravel_index", "vander",
    "vdot", "vsplit", "xlogy",
]
