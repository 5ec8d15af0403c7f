"""Shared pieces of ``lucid.linalg``: ``LinAlgError``, the named-tuple results, PyTorch's
argument checks and the host round trip.

Factorizations run in LAPACK through ``numpy.linalg`` on a host array: the numpy-backed
devices hand their arrays through unchanged, the "gpu" device copies them over and back
(``be.to_numpy`` / ``be.from_numpy``), so one op serves every device. Ops that return several
tensors (``qr``, ``svd``, ``eigh``) return them packed in one flat array (``Packed``); the
public functions slice it apart, so gradients of every output reach one backward.
"""

from __future__ import annotations

import threading
from collections import namedtuple
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Op

__all__ = [
    "LinAlgError", "linalg_inv_ex", "linalg_cholesky_ex", "linalg_qr", "linalg_svd",
    "linalg_eigh", "linalg_slogdet", "linalg_lstsq", "svd_result", "qr_result",
    "slogdet_result",
]


class LinAlgError(RuntimeError):
    """Raised when a matrix is singular or not positive-definite, as
    ``torch.linalg.LinAlgError`` (a ``RuntimeError``)."""


# the named tuples of torch.return_types
linalg_inv_ex = namedtuple("linalg_inv_ex", ["inverse", "info"])
linalg_cholesky_ex = namedtuple("linalg_cholesky_ex", ["L", "info"])
linalg_qr = namedtuple("linalg_qr", ["Q", "R"])
linalg_svd = namedtuple("linalg_svd", ["U", "S", "Vh"])
linalg_eigh = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_slogdet = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
linalg_lstsq = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
svd_result = namedtuple("svd", ["U", "S", "V"])
qr_result = namedtuple("qr", ["Q", "R"])
slogdet_result = namedtuple("slogdet", ["sign", "logabsdet"])


# ---- argument checks with PyTorch's messages ------------------------------------------------
def check_float(A: Tensor, name: str, allow_complex: bool = False) -> None:
    """A floating tensor of at least single precision (complex ones only where
    ``allow_complex``: the factorizations' backward formulas here are the real ones)."""
    if not isinstance(A, Tensor):
        raise TypeError(f"{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    d = A.dtype
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_dtype.torch_name(d)}")
    if d is _dtype.float16 or d.name == "bfloat16":
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got "
                           f"{_dtype.torch_name(d)}")
    if d.is_complex and not allow_complex:
        raise NotImplementedError(f"{name}: complex inputs are not supported by lucid yet, "
                                  f"got {_dtype.torch_name(d)}")


def check_matrix(A: Tensor, name: str, square: bool = False) -> None:
    """At least 2-D, float, and (``square``) batches of square matrices."""
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    check_float(A, name)


def check_square(A: Tensor, name: str, allow_complex: bool = False) -> None:
    """``check_float``, then at least 2-D batches of square matrices."""
    check_float(A, name, allow_complex)
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def batch_prefix(shape: tuple[int, ...], index: int) -> str:
    """``"(Batch element i): "`` for batched inputs, as PyTorch's messages say it."""
    return f"(Batch element {index}): " if len(shape) > 2 else ""


# ---- host round trip -------------------------------------------------------------------------
def host(be: Any, x: Any) -> np.ndarray:
    """A numpy array with ``x``'s values (no copy on the numpy-backed devices)."""
    return be.to_numpy(x)


def dev(be: Any, a: Any, like: np.dtype) -> Any:
    """A host result as an array of ``be`` in the dtype ``like``."""
    return be.from_numpy(np.array(a, dtype=like, order="C"))


def mT(a: np.ndarray) -> np.ndarray:
    """The transpose of the last two dims."""
    return np.swapaxes(a, -1, -2)


def lu_info(a: np.ndarray) -> int:
    """LAPACK getrf's ``info`` for one square matrix: the 1-based index of the first zero
    pivot of its partially pivoted LU factorization, 0 when there is none."""
    u = np.array(a, dtype=np.float64 if a.dtype.kind == "f" else np.complex128)
    n = u.shape[0]
    info = 0
    for j in range(n):
        p = j + int(np.argmax(np.abs(u[j:, j])))
        if u[p, j] == 0:
            if not info:
                info = j + 1
            continue
        if p != j:
            u[[j, p]] = u[[p, j]]
        u[j + 1:, j:] -= np.outer(u[j + 1:, j] / u[j, j], u[j, j:])
    return info


def cholesky_info(a: np.ndarray) -> int:
    """LAPACK potrf's ``info`` for one matrix (its lower triangle): the order of the first
    leading minor that is not positive-definite, 0 when there is none."""
    n = a.shape[0]
    L = np.zeros_like(a, dtype=np.result_type(a.dtype, np.float64))
    for j in range(n):
        d = a[j, j] - np.dot(L[j, :j], np.conj(L[j, :j]))
        d = np.real(d)
        if not d > 0:  # also catches nan
            return j + 1
        L[j, j] = np.sqrt(d)
        L[j + 1:, j] = (a[j + 1:, j] - L[j + 1:, :j] @ np.conj(L[j, :j])) / L[j, j]
    return 0


def batch_infos(a: np.ndarray, fn: Any) -> np.ndarray:
    """``fn`` (``lu_info`` or ``cholesky_info``) over every matrix of a batch, shaped as the
    batch dims."""
    flat = a.reshape((-1,) + a.shape[-2:])
    return np.array([fn(m) for m in flat], dtype=np.int32).reshape(a.shape[:-2])


def first_failure(infos: np.ndarray) -> tuple[int, int]:
    """(flat batch index, info) of the first nonzero info, or (-1, 0)."""
    flat = infos.reshape(-1)
    nz = np.flatnonzero(flat)
    return (int(nz[0]), int(flat[nz[0]])) if nz.size else (-1, 0)


def singular_error(name: str, shape: tuple[int, ...], infos: np.ndarray) -> LinAlgError:
    i, info = first_failure(infos)
    return LinAlgError(
        f"{name}: {batch_prefix(shape, i)}The diagonal element {info} is zero, the inversion "
        "could not be completed because the input matrix is singular.")


# ---- several outputs from one op -------------------------------------------------------------
class Packed(Op):
    """Base of the ops with several outputs: ``compute(a)`` (host arrays in, a list of host
    arrays out) and ``grads(gs)`` (one host gradient per output, zeros for the unused ones,
    to the host gradient of the input). ``forward`` returns the outputs flattened into one
    array; ``unpack`` slices them apart."""

    def forward(self, x, *args):
        be = self.be
        a = host(be, x)
        self.dt = a.dtype
        outs = self.compute(a, *args)
        self.shapes = _last.shapes = [o.shape for o in outs]
        flat = np.concatenate([np.asarray(o, dtype=a.dtype).reshape(-1) for o in outs]) \
            if outs else np.zeros(0, a.dtype)
        return dev(be, flat, a.dtype)

    def backward(self, g):
        be = self.be
        gp = np.asarray(host(be, g))
        gs, off = [], 0
        for sh in self.shapes:
            n = int(np.prod(sh))
            gs.append(gp[off:off + n].reshape(sh))
            off += n
        return dev(be, self.grads(gs), self.dt)

    def compute(self, a: np.ndarray, *args: Any) -> list[np.ndarray]:  # pragma: no cover
        raise NotImplementedError

    def grads(self, gs: list[np.ndarray]) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError


def unpack(t: Tensor, shapes: list[tuple[int, ...]]) -> list[Tensor]:
    """The outputs of a ``Packed`` op, as tensors of ``shapes``."""
    outs, off = [], 0
    for sh in shapes:
        n = int(np.prod(sh))
        outs.append(t[off:off + n].reshape(sh))  # type: ignore[attr-defined]
        off += n
    return outs


def apply_packed(cls: type[Packed], A: Tensor, *args: Any) -> list[Tensor]:
    """Run a ``Packed`` op and slice its outputs apart."""
    op_out = cls.apply(A, *args)
    return unpack(op_out, _last.shapes)  # set by this thread's forward just now


_last = threading.local()
