"""Discrete Fourier transforms of ``lucid.fft`` (``torch.fft``'s functions and arguments).

One op, ``FFT``, runs numpy's pocketfft on a host array for the three kinds of transform:
complex to complex (``fftn`` / ``ifftn``), real to half-spectrum (``rfftn``) and
half-spectrum to real (``irfftn``); every public function is one of them with its sizes
``s``, dims and ``norm``. Backward applies the adjoint: the inverse transform with the dual
normalization ("backward" <-> "forward", "ortho" itself), the half spectrum padded with
zeros (``rfftn``) or its inner bins doubled (``irfftn``), and the input's resizing undone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._dims import norm_dim
from .._tensor import Tensor
from ..autograd.function import Op
from ..backend import get_backend
from ._util import cast
from .complex import conj
from .creation import arange, tensor
from .factory_options import check_layout
from .movement import roll

__all__ = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn",
    "ifftn", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift", "hfft2", "hfftn",
    "ihfft2", "ihfftn",
]

_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _resize(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``a`` cut or zero-padded (at the end of each dim) to ``shape``."""
    if a.shape == shape:
        return a
    out = np.zeros(shape, a.dtype)
    sl = tuple(slice(0, min(x, y)) for x, y in zip(a.shape, shape))
    out[sl] = a[sl]
    return out


class FFT(Op):
    """``kind``: "c2c" (``inverse`` picks ifftn), "r2c" or "c2r"; ``s`` the transform sizes
    along ``axes`` (the output length of the last axis for "c2r")."""

    def forward(self, x, kind, s, axes, norm, inverse):
        a = np.asarray(self.be.to_numpy(x))
        self.kind, self.s, self.axes, self.norm, self.inverse = kind, s, axes, norm, inverse
        self.in_shape, self.in_dtype = a.shape, a.dtype
        if kind == "c2c":
            f = np.fft.ifftn if inverse else np.fft.fftn
            out = f(a, s, axes, norm)
            cdt = a.dtype if a.dtype.kind == "c" else np.result_type(a.dtype, np.complex64)
        elif kind == "r2c":
            out = np.fft.rfftn(a, s, axes, norm)
            cdt = np.result_type(a.dtype, np.complex64)
        else:
            out = np.fft.irfftn(a, s, axes, norm)
            cdt = a.real.dtype
        return self.be.from_numpy(np.array(out, dtype=cdt, order="C"))

    def backward(self, g):
        gy = np.asarray(self.be.to_numpy(g))
        axes, dual = self.axes, _DUAL[self.norm]
        if self.kind == "c2c":
            f = np.fft.fftn if self.inverse else np.fft.ifftn
            gx = f(gy, axes=axes, norm=dual)
            full = list(gy.shape)
        elif self.kind == "r2c":
            full = list(gy.shape)
            full[axes[-1]] = self.s[-1]
            gx = np.fft.ifftn(_resize(gy, tuple(full)), axes=axes, norm=dual)
        else:
            n = self.s[-1]
            gx = np.fft.rfftn(gy, axes=axes, norm=dual)
            w = np.full(gx.shape[axes[-1]], 2.0)
            w[0] = 1.0
            if n % 2 == 0:
                w[-1] = 1.0
            shape = [1] * gx.ndim
            shape[axes[-1]] = w.size
            gx = gx * w.reshape(shape)
            full = list(gx.shape)
        if self.in_dtype.kind != "c":
            gx = gx.real
        gx = _resize(np.asarray(gx), self.in_shape)
        return self.be.from_numpy(np.array(gx, dtype=self.in_dtype, order="C"))


# ---- argument handling -------------------------------------------------------------------------
def _norm(norm: str | None) -> str:
    if norm is None:
        return "backward"
    if norm not in _DUAL:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _prepare(input: Tensor, name: str, real_only: bool = False, complex_in: bool = False
             ) -> Tensor:
    d = input.dtype
    if real_only and d.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got "
                           f"{_dtype.torch_name(d)}")
    if d is _dtype.float16 or d.name == "bfloat16":
        raise RuntimeError(f"Unsupported dtype {_dtype.torch_name(d)}")
    if not (d.is_floating_point or d.is_complex):
        input = cast(input, _dtype.get_default_dtype())
    if complex_in and not input.dtype.is_complex:
        input = cast(input, input.dtype.to_complex())
    return input


def _one(input: Tensor, n: int | None, dim: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if not input.ndim:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = norm_dim(dim, input.ndim)
    size = input.shape[d] if n is None else n
    if size < 1:
        raise RuntimeError(f"Invalid number of data points ({size}) specified")
    return (size,), (d,)


def _many(input: Tensor, s: Any, dim: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if dim is None:
        axes = tuple(range(input.ndim)) if s is None else \
            tuple(range(input.ndim - len(s), input.ndim))
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        axes = tuple(norm_dim(d, input.ndim) for d in dims)
        if len(set(axes)) != len(axes):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = tuple(s)
        if len(s) != len(axes):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if min(axes, default=0) < 0:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{input.ndim} dimensions.")
        sizes = tuple(input.shape[a] if n == -1 else int(n) for a, n in zip(axes, s))
    else:
        sizes = tuple(input.shape[a] for a in axes)
    for n in sizes:
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return sizes, axes


def _c2c(input: Tensor, sizes: tuple, axes: tuple, norm: Any, inverse: bool) -> Tensor:
    if not axes:
        return _prepare(input, "fft", complex_in=True).clone()  # type: ignore[attr-defined]
    return FFT.apply(_prepare(input, "fft"), "c2c", sizes, axes, _norm(norm), inverse)


def _r2c(input: Tensor, sizes: tuple, axes: tuple, norm: Any, name: str) -> Tensor:
    x = _prepare(input, name, real_only=True)
    return FFT.apply(x, "r2c", sizes, axes, _norm(norm), False)


def _c2r(input: Tensor, s: Any, axes: tuple, norm: Any, last_n: int | None) -> Tensor:
    """``s``: the sizes of every axis but the last (None: as the input), ``last_n``: the
    output length of the last axis (None: ``2 * (m - 1)``)."""
    x = _prepare(input, "irfft")
    n = 2 * (x.shape[axes[-1]] - 1) if last_n is None else last_n
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    sizes = tuple(s) + (n,) if s is not None else \
        tuple(x.shape[a] for a in axes[:-1]) + (n,)
    return FFT.apply(x, "c2r", sizes, axes, _norm(norm), True)


# ---- one dimension -----------------------------------------------------------------------------
def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The 1-D discrete Fourier transform along ``dim`` (``n``: pad or trim to this length;
    ``norm``: "backward" (default, no scaling), "ortho" (1/sqrt(n)) or "forward" (1/n)).

    Example::

        lucid.fft.fft(lucid.tensor([1.0, 0.0, 0.0, 0.0]))      # tensor([1.+0.j, 1.+0.j, ...])
    """
    sizes, axes = _one(input, n, dim)
    return _c2c(input, sizes, axes, norm, False)


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of ``fft`` (``norm="backward"`` scales by 1/n).

    Example::

        lucid.fft.ifft(lucid.fft.fft(x)).real      # x
    """
    sizes, axes = _one(input, n, dim)
    return _c2c(input, sizes, axes, norm, True)


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The FFT of a real signal: the ``n // 2 + 1`` non-negative frequencies.

    Example::

        lucid.fft.rfft(lucid.ones(4))      # tensor([4.+0.j, 0.+0.j, 0.+0.j])
    """
    sizes, axes = _one(input, n, dim)
    return _r2c(input, sizes, axes, norm, "rfft")


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None
          ) -> Tensor:
    """The inverse of ``rfft``: a real signal of length ``n`` (default ``2 * (m - 1)``)
    from its non-negative frequencies.

    Example::

        lucid.fft.irfft(lucid.fft.rfft(x), n=x.shape[-1])      # x
    """
    _one(input, None, dim)
    return _c2r(input, (), (norm_dim(dim, input.ndim),), norm, n)


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The FFT of a Hermitian-symmetric signal given by its first half: a real spectrum of
    length ``n`` (default ``2 * (m - 1)``).

    Example::

        lucid.fft.hfft(lucid.fft.ihfft(x), n=x.shape[-1])      # x
    """
    _one(input, None, dim)
    x = _prepare(input, "hfft")
    return _c2r(conj(x), (), (norm_dim(dim, input.ndim),), _DUAL[_norm(norm)], n)


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None
          ) -> Tensor:
    """The inverse of ``hfft``: the first half of the inverse FFT of a real signal.

    Example::

        lucid.fft.ihfft(lucid.ones(4))      # tensor([1.+0.j, 0.+0.j, 0.+0.j])
    """
    sizes, axes = _one(input, n, dim)
    x = _prepare(input, "ihfft", real_only=True)
    return conj(FFT.apply(x, "r2c", sizes, axes, _DUAL[_norm(norm)], False))


# ---- two and n dimensions ----------------------------------------------------------------------
def fftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    """The N-D FFT over ``dim`` (all dims, or the last ``len(s)``, when None); ``s`` pads
    or trims each transformed dim (-1 keeps it).

    Example::

        lucid.fft.fftn(lucid.ones(2, 3))      # 6 at the origin, 0 elsewhere
    """
    sizes, axes = _many(input, s, dim)
    return _c2c(input, sizes, axes, norm, False)


def ifftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    """The inverse of ``fftn``.

    Example::

        lucid.fft.ifftn(lucid.fft.fftn(x)).real      # x
    """
    sizes, axes = _many(input, s, dim)
    return _c2c(input, sizes, axes, norm, True)


def rfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    """The N-D FFT of a real signal; the last transformed dim keeps its ``n // 2 + 1``
    non-negative frequencies.

    Example::

        lucid.fft.rfftn(lucid.ones(2, 4)).shape      # (2, 3)
    """
    sizes, axes = _many(input, s, dim)
    if not axes:
        raise RuntimeError("rfftn must transform at least one axis")
    return _r2c(input, sizes, axes, norm, "rfftn")


def irfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    """The inverse of ``rfftn``: ``s`` gives the output sizes (the last default
    ``2 * (m - 1)``).

    Example::

        lucid.fft.irfftn(lucid.fft.rfftn(x), s=x.shape)      # x
    """
    sizes, axes = _many(input, s, dim)
    if not axes:
        raise RuntimeError("irfftn must transform at least one axis")
    last = None if s is None else sizes[-1]
    return _c2r(input, sizes[:-1], axes, norm, last)


def fft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    """The 2-D FFT over ``dim`` (the last two dims).

    Example::

        lucid.fft.fft2(lucid.ones(2, 2))
    """
    return fftn(input, s, dim, norm)


def ifft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    """The inverse of ``fft2``.

    Example::

        lucid.fft.ifft2(lucid.fft.fft2(x)).real      # x
    """
    return ifftn(input, s, dim, norm)


def rfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    """The 2-D FFT of a real signal (half spectrum along the last dim).

    Example::

        lucid.fft.rfft2(lucid.ones(2, 4)).shape      # (2, 3)
    """
    return rfftn(input, s, dim, norm)


def irfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None
           ) -> Tensor:
    """The inverse of ``rfft2``.

    Example::

        lucid.fft.irfft2(lucid.fft.rfft2(x), s=x.shape[-2:])      # x
    """
    return irfftn(input, s, dim, norm)


def hfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    """The N-D FFT of a Hermitian-symmetric signal given by its half along the last
    transformed dim: a real result (the last output size ``2 * (m - 1)`` unless ``s`` says).

    Example::

        lucid.fft.hfftn(lucid.fft.ihfftn(x), s=x.shape)      # x
    """
    sizes, axes = _many(input, s, dim)
    if not axes:
        raise RuntimeError("hfftn must transform at least one axis")
    x = _prepare(input, "hfftn")
    last = None if s is None else sizes[-1]
    return _c2r(conj(x), sizes[:-1], axes, _DUAL[_norm(norm)], last)


def ihfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    """The inverse of ``hfftn``: the half spectrum of the N-D inverse FFT of a real signal.

    Example::

        lucid.fft.ihfftn(lucid.ones(2, 4)).shape      # (2, 3)
    """
    sizes, axes = _many(input, s, dim)
    if not axes:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _prepare(input, "ihfftn", real_only=True)
    return conj(FFT.apply(x, "r2c", sizes, axes, _DUAL[_norm(norm)], False))


def hfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    """``hfftn`` over two dims."""
    return hfftn(input, s, dim, norm)


def ihfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None
           ) -> Tensor:
    """``ihfftn`` over two dims."""
    return ihfftn(input, s, dim, norm)


# ---- frequencies and shifts --------------------------------------------------------------------
def fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, layout: Any = None,
            device: Any = None, pin_memory: bool = False, requires_grad: bool = False
            ) -> Tensor:
    """The sample frequencies of an ``n``-point FFT with sample spacing ``d``:
    ``[0, 1, ..., n//2 - 1 (or n//2), -(n//2), ..., -1] / (d * n)``. ``layout`` and
    ``pin_memory`` as the other factories (``lucid.empty``).

    Example::

        lucid.fft.fftfreq(4)      # tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    if layout is not None or pin_memory:
        check_layout("fftfreq", layout, pin_memory, get_backend(device))
    dt = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    ints = (np.arange(n) + n // 2) % n - n // 2 if n > 0 else np.zeros(0)
    k = tensor(ints, dtype=dt, device=device) * (1.0 / (n * d))
    return k.requires_grad_(requires_grad) if requires_grad else k  # type: ignore[attr-defined]


def rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, layout: Any = None,
             device: Any = None, pin_memory: bool = False, requires_grad: bool = False
             ) -> Tensor:
    """The non-negative sample frequencies of an ``n``-point ``rfft``:
    ``[0, 1, ..., n // 2] / (d * n)``. ``layout`` and ``pin_memory`` as the other factories
    (``lucid.empty``).

    Example::

        lucid.fft.rfftfreq(4)      # tensor([0.0000, 0.2500, 0.5000])
    """
    if layout is not None or pin_memory:
        check_layout("rfftfreq", layout, pin_memory, get_backend(device))
    dt = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    k = arange(n // 2 + 1, dtype=dt, device=device) * (1.0 / (n * d))
    return k.requires_grad_(requires_grad) if requires_grad else k  # type: ignore[attr-defined]


def _shift(input: Tensor, dim: Any, sign: int) -> Tensor:
    if dim is None:
        dims = tuple(range(input.ndim))
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(norm_dim(d, input.ndim) for d in dims)
    if not dims:
        return input
    shifts = tuple(sign * (input.shape[d] // 2) for d in dims)
    return roll(input, shifts, dims)


def fftshift(input: Tensor, dim: Any = None) -> Tensor:
    """Move the zero frequency to the centre of ``dim`` (all dims when None).

    Example::

        lucid.fft.fftshift(lucid.fft.fftfreq(4))      # tensor([-0.5000, -0.2500, 0.0000, 0.2500])
    """
    return _shift(input, dim, 1)


def ifftshift(input: Tensor, dim: Any = None) -> Tensor:
    """The inverse of ``fftshift``.

    Example::

        lucid.fft.ifftshift(lucid.fft.fftshift(x))      # x
    """
    return _shift(input, dim, -1)
