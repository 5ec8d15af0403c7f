"""lucid: a PyTorch-compatible deep-learning framework whose CPU work runs in numba kernels.

Example::

    import lucid
    x = lucid.randn(4, 3, requires_grad=True)
    loss = (x @ lucid.ones(3, 2)).relu().sum()
    loss.backward()
"""

import builtins as _builtins  # NOTE: bool/int/float are rebound to dtypes below
import math as _math

from . import _dtype, autograd, ops
from ._device import device, get_default_device, set_default_device
from ._dtype import (
    bool_ as bool,  # noqa: A001
)
from ._dtype import complex64, complex128  # noqa: I001
from ._dtype import (
    bfloat16,
    dtype,
    finfo,
    float16,
    float32,
    float64,
    get_default_dtype,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    set_default_dtype,
    uint8,
)
from ._dtype import (
    result_type as _result_type,
)
from ._tensor import Size, Tensor
from .kernels import _threads

_threads.configure()  # before numpy loads OpenBLAS: see lucid/kernels/_threads.py

from . import _malloc, _quiet

_malloc.configure()  # keep freed tensor buffers for reuse: see lucid/_malloc.py
_quiet.configure()  # x / 0 gives inf without numpy's warning, as in torch: lucid/_quiet.py

from ._version import __version__
from .autograd.function import _device_mismatch
from .ops._util import broadcast_shapes as _broadcast_shapes
from .ops._util import coerce as _coerce
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .ops import *  # noqa: F403
from .ops.layout_extra import select
from .ops.matmul import matmul
from .ops.random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

half = float16
float = float32  # noqa: A001
double = float64
cfloat = complex64
cdouble = complex128
long = int64
int = int32  # noqa: A001
short = int16
uint8 = uint8
chunk = ops.chunk


def is_tensor(obj: object) -> bool:
    """True for lucid tensors (including Parameters and Buffers)."""
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    return input.numel()


def result_type(*tensors: object) -> dtype:
    """The dtype PyTorch's promotion rules give for these tensors and scalars."""
    return _result_type(*tensors)


def is_floating_point(input: Tensor) -> bool:
    return input.dtype.is_floating_point


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether all elements satisfy ``|input - other| <= atol + rtol * |other|``."""
    return _builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (equal infinities are close)."""
    a, b = _coerce(input, other)
    t = a if isinstance(a, Tensor) else b
    be = t._be  # type: ignore[union-attr]
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a._be is not b._be:
        _device_mismatch(a._be, b._be)
    ad = a._data if isinstance(a, Tensor) else a
    bd = b._data if isinstance(b, Tensor) else b
    if not t.dtype.is_floating_point:  # type: ignore[union-attr]
        ad, bd = be.astype(be.asarray(ad), float64), be.astype(be.asarray(bd), float64)
    finite = be.logical_and(be.isfinite(ad), be.isfinite(bd))
    af, bf = be.where(finite, ad, 0), be.where(finite, bd, 0)  # no inf - inf
    near = be.le(be.abs(be.sub(af, bf)), be.add(be.mul(be.abs(bf), rtol), atol))
    out = be.where(finite, near, be.eq(ad, bd))
    if equal_nan:
        out = be.logical_or(out, be.logical_and(be.isnan(ad), be.isnan(bd)))
    return ops.creation._make(be.broadcast_to(out, tuple(
        broadcast_shapes(tuple(getattr(input, "shape", ())), tuple(getattr(other, "shape", ()))))),
        be, False, None)


def equal(input: Tensor, other: Tensor) -> bool:
    """True when both tensors have the same shape and elements."""
    return tuple(input.shape) == tuple(other.shape) and _builtins.bool((input == other).all())


def broadcast_shapes(*shapes: object) -> Size:
    return Size(_broadcast_shapes(*shapes))  # type: ignore[arg-type]


from . import nn  # noqa: E402
from . import optim  # noqa: E402
from .serialization import load, load_file, save, save_file  # noqa: E402
from . import data, datasets, utils  # noqa: E402
from . import backends, cuda, gpu  # noqa: E402
from . import amp  # noqa: E402
from .amp import (  # noqa: E402
    autocast,
    clear_autocast_cache,
    get_autocast_dtype,
    is_autocast_cache_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from . import __config__, accelerator, compiler, jit, mps, multiprocessing  # noqa: E402
from . import onnx, profiler, special, testing, version  # noqa: E402
from .backends._precision import (  # noqa: E402
    get_float32_matmul_precision,
    set_float32_matmul_precision,
)
from .compiler import compile  # noqa: E402, A004
from .ops.activation import log_softmax, softmax  # noqa: E402
from ._repr import set_printoptions  # noqa: E402
from ._runtime import (  # noqa: E402
    are_deterministic_algorithms_enabled,
    get_num_interop_threads,
    get_num_threads,
    is_deterministic_algorithms_warn_only_enabled,
    set_num_interop_threads,
    set_num_threads,
    use_deterministic_algorithms,
)
from .ops.legacy import (  # noqa: E402
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
)

inf = _math.inf
nan = _math.nan
pi = _math.pi
e = _math.e
newaxis = None
from .ops.special import digamma, erf, erfc, erfinv, igamma, lgamma, polygamma  # noqa: E402
from .ops.random_gamma import poisson  # noqa: E402
from . import distributions  # noqa: E402
from . import linalg  # noqa: E402
from . import func  # noqa: E402
from .ops.linalg_decomp import det, logdet  # noqa: E402
from .ops.linalg_misc import cholesky_legacy as cholesky  # noqa: E402
from .ops.linalg_misc import inverse, matrix_power, pinverse  # noqa: E402
from .ops.linalg_misc import qr_legacy as qr  # noqa: E402
from .ops.linalg_misc import slogdet_legacy as slogdet  # noqa: E402
from .ops.linalg_misc import svd_legacy as svd  # noqa: E402
from . import fft  # noqa: E402
from . import sparse  # noqa: E402
from .sparse import layout, sparse_coo, sparse_coo_tensor, spmm, strided  # noqa: E402
from .ops.complex import angle, conj, conj_physical, imag, is_complex, is_conj  # noqa: E402
from .ops.complex import polar, real, resolve_conj, view_as_complex, view_as_real  # noqa: E402
from .ops.complex import complex  # noqa: E402,A004
