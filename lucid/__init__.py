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
    can_cast,
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


def result_type(tensor: object = None, other: object = None, *, scalar: object = None,
                scalar1: object = None, scalar2: object = None) -> dtype:
    """The dtype PyTorch's promotion rules give for two tensors or numbers: ``(tensor, other)``,
    ``(scalar=, tensor=)`` or ``(scalar1=, scalar2=)``."""
    return _dtype.result_type_args(tensor, other, scalar=scalar, scalar1=scalar1,
                                   scalar2=scalar2)


def is_floating_point(input: Tensor) -> bool:
    return input.dtype.is_floating_point


from .ops.select import allclose, equal, isclose  # noqa: E402


def broadcast_shapes(*shapes: object) -> Size:
    return Size(_broadcast_shapes(*shapes))  # type: ignore[arg-type]


from . import nn  # noqa: E402
from ._memory_format import (  # noqa: E402
    channels_last,
    channels_last_3d,
    contiguous_format,
    legacy_contiguous_format,
    memory_format,
    preserve_format,
)
from ._functional_top import *  # noqa: E402,F403
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
from .amp import GradScaler  # noqa: E402
from .amp.autocast_mode import (  # noqa: E402
    get_autocast_cpu_dtype,
    is_autocast_cpu_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
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
    get_deterministic_debug_mode,
    get_num_interop_threads,
    get_num_threads,
    is_deterministic_algorithms_warn_only_enabled,
    is_warn_always_enabled,
    set_deterministic_debug_mode,
    set_num_interop_threads,
    set_num_threads,
    set_warn_always,
    use_deterministic_algorithms,
)
from .ops.legacy import (  # noqa: E402
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    set_default_tensor_type,
    typename,
)

inf = _math.inf
nan = _math.nan
pi = _math.pi
e = _math.e
newaxis = None
from .ops.special import digamma, erf, erfc, erfinv, igamma, igammac, lgamma, polygamma  # noqa: E402,E501
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
from .ops.complex import adjoint  # noqa: E402
from .ops.index_scatter import index_reduce, select_scatter, slice_scatter  # noqa: E402
from .ops.complex import complex  # noqa: E402,A004
from ._function_variants import *  # noqa: E402,F403
from .ops.strided import *  # noqa: E402,F403
from .ops.creation import frombuffer, range  # noqa: E402,A004
from .ops.index_scatter import diagonal_scatter  # noqa: E402
from .ops.linalg_legacy import *  # noqa: E402,F403
from .ops.scan import gradient  # noqa: E402
from .ops.select import bitwise_left_shift, bitwise_right_shift, nonzero_static  # noqa: E402
from .ops.histogram import histogramdd  # noqa: E402
from .ops.special_gamma import mvlgamma  # noqa: E402
from .cuda import OutOfMemoryError  # noqa: E402
from .distributions.counts import binomial  # noqa: E402
from . import random  # noqa: E402
from .func import vmap  # noqa: E402
from .ops.sparse_methods import (  # noqa: E402
    dsmm,
    hsmm,
    hspmm,
    indices_copy,
    saddmm,
    smm,
    sspaddmm,
    values_copy,
)
from .ops.rnn_functional import (  # noqa: E402
    gru,
    gru_cell,
    lstm,
    lstm_cell,
    rnn_relu,
    rnn_relu_cell,
    rnn_tanh,
    rnn_tanh_cell,
)
from .autograd.grad_mode import is_inference_mode_enabled  # noqa: E402
from .autograd.anomaly_mode import (  # noqa: E402
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)
import importlib as _importlib  # noqa: E402

from . import _out  # noqa: E402

_out.install(globals(), _out.OUT_FUNCTIONS)
for _ns, _names in _out.OUT_NAMESPACES.items():
    _out.install(vars(_importlib.import_module(f"lucid.{_ns}")), _names)
del _ns, _names

from . import _numpy_aliases  # noqa: E402

_numpy_aliases.install(globals())
_numpy_aliases.install(Tensor)
for _ns in (linalg, special, fft):
    _numpy_aliases.install(vars(_ns))
del _ns
