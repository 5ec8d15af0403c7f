"""Complex tensors: ``real``, ``imag``, ``conj``, ``angle``, ``view_as_real``,
``view_as_complex``, ``complex`` and ``polar``.

Gradients follow PyTorch's convention: the gradient of a real loss with respect to a complex
tensor ``z`` is ``dL/dRe(z) + i dL/dIm(z)``, and a real input receives a real gradient. The
values live in numpy's complex dtypes, so these ops compute on host arrays (no copy on the
numpy-backed devices).

Differences from PyTorch: ``real``, ``imag``, ``view_as_real`` and ``view_as_complex`` return
copies rather than views (writes to them do not reach the input), and ``conj`` conjugates at
once (``is_conj()`` is always False).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Op
from .shape import broadcast_tensors

__all__ = [
    "real", "imag", "conj", "conj_physical", "resolve_conj", "angle", "view_as_real",
    "view_as_complex", "complex", "polar", "is_complex", "is_conj", "adjoint",
]


def _np(be: Any, x: Any) -> np.ndarray:
    return np.asarray(be.to_numpy(x))


def _dev(be: Any, a: Any) -> Any:
    return be.from_numpy(np.array(a, order="C"))


class Real(Op):
    def forward(self, x):
        z = _np(self.be, x)
        self.dt = z.dtype
        return _dev(self.be, z.real)

    def backward(self, g):
        return _dev(self.be, _np(self.be, g).astype(self.dt))


class Imag(Op):
    def forward(self, x):
        z = _np(self.be, x)
        self.dt = z.dtype
        return _dev(self.be, z.imag)

    def backward(self, g):
        return _dev(self.be, 1j * _np(self.be, g).astype(self.dt))


class Conj(Op):
    def forward(self, x):
        return _dev(self.be, np.conj(_np(self.be, x)))

    def backward(self, g):
        return _dev(self.be, np.conj(_np(self.be, g)))


class Angle(Op):
    def forward(self, x):
        z = _np(self.be, x)
        self.z = z
        return _dev(self.be, np.angle(z).astype(z.real.dtype))

    def backward(self, g):
        z = self.z
        with np.errstate(all="ignore"):
            r = _np(self.be, g) * (1j * z) / (z * np.conj(z)).real
        return _dev(self.be, np.where(z == 0, 0, r).astype(z.dtype))


class ViewAsReal(Op):
    def forward(self, x):
        z = _np(self.be, x)
        self.dt = z.dtype
        return _dev(self.be, np.stack([z.real, z.imag], -1))

    def backward(self, g):
        gr = _np(self.be, g)
        return _dev(self.be, (gr[..., 0] + 1j * gr[..., 1]).astype(self.dt))


class ViewAsComplex(Op):
    def forward(self, x):
        a = _np(self.be, x)
        return _dev(self.be, a[..., 0] + np.asarray(1j, a.dtype.char.upper()) * a[..., 1])

    def backward(self, g):
        gz = _np(self.be, g)
        return _dev(self.be, np.stack([gz.real, gz.imag], -1))


class Complex(Op):
    def forward(self, re, im):
        a, b = _np(self.be, re), _np(self.be, im)
        return _dev(self.be, a + np.asarray(1j, a.dtype.char.upper()) * b)

    def backward(self, g):
        gz = _np(self.be, g)
        return _dev(self.be, gz.real), _dev(self.be, gz.imag)


class Polar(Op):
    def forward(self, r, theta):
        a, t = _np(self.be, r), _np(self.be, theta)
        self.a, self.e = a, np.exp(1j * t).astype(np.result_type(a.dtype, np.complex64))
        return _dev(self.be, a * self.e)

    def backward(self, g):
        gc = np.conj(_np(self.be, g))
        gr = (gc * self.e).real
        gt = (gc * 1j * self.a * self.e).real
        return _dev(self.be, gr), _dev(self.be, gt)


def is_complex(input: Tensor) -> bool:
    """Whether ``input`` has a complex dtype.

    Example::

        lucid.is_complex(lucid.tensor([1j]))      # True
    """
    return input.dtype.is_complex


def is_conj(input: Tensor) -> bool:
    """Always False: lucid conjugates at once rather than lazily.

    Example::

        lucid.tensor([1j]).conj().is_conj()      # False
    """
    return False


def real(input: Tensor) -> Tensor:
    """The real parts of a complex tensor (a real tensor is returned as it is).

    Example::

        lucid.real(lucid.tensor([1 + 2j]))      # tensor([1.])
    """
    return Real.apply(input) if input.dtype.is_complex else input


def imag(input: Tensor) -> Tensor:
    """The imaginary parts of a complex tensor.

    Example::

        lucid.imag(lucid.tensor([1 + 2j]))      # tensor([2.])
    """
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return Imag.apply(input)


def conj(input: Tensor) -> Tensor:
    """The complex conjugate (a real tensor is returned as it is).

    Example::

        lucid.conj(lucid.tensor([1 + 2j]))      # tensor([1.-2.j])
    """
    return Conj.apply(input) if input.dtype.is_complex else input


def H(input: Tensor) -> Tensor:  # noqa: N802
    """The conjugate transpose of a matrix (``tensor.H``; a 0-D tensor's conjugate)."""
    if input.ndim == 0:
        return conj(input)
    if input.ndim != 2:
        more = " For batches of matrices, consider using tensor.mH" if input.ndim > 2 else ""
        raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{input.ndim}-D tensor.{more}")
    return conj(input.transpose(0, 1))  # type: ignore[attr-defined]


def _conj_last2(input: Tensor, what: str) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError(f"tensor.{what} is only supported on matrices or batches of "
                           f"matrices. Got {input.ndim}-D tensor.")
    return conj(input.transpose(-2, -1))  # type: ignore[attr-defined]


def mH(input: Tensor) -> Tensor:  # noqa: N802
    """The conjugate transpose of the last two dims (``tensor.mH``)."""
    return _conj_last2(input, "mH")


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims, as ``torch.adjoint``.

    Example::

        lucid.adjoint(lucid.tensor([[1 + 1j, 2.0]])).shape     # (2, 1)
    """
    return _conj_last2(input, "adjoint()")


def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate, computed at once (as ``conj`` in lucid).

    Example::

        lucid.conj_physical(lucid.tensor([1 + 2j]))      # tensor([1.-2.j])
    """
    return conj(input)


def resolve_conj(input: Tensor) -> Tensor:
    """``input`` itself: lucid never defers a conjugation.

    Example::

        lucid.resolve_conj(x)
    """
    return input


def angle(input: Tensor) -> Tensor:
    """The argument of each element, in radians (pi for negative reals, 0 otherwise).

    Example::

        lucid.angle(lucid.tensor([1j, -1.0]))      # tensor([1.5708, 3.1416])
    """
    if input.dtype.is_complex:
        return Angle.apply(input)
    x = input if input.dtype.is_floating_point else input.to(_dtype.get_default_dtype())
    pi = (x < 0).to(x.dtype) * float(np.pi)  # type: ignore[attr-defined]
    return pi + x * 0  # keeps nan, and a zero gradient


def view_as_real(input: Tensor) -> Tensor:
    """A complex tensor as a real one with a last dim of 2 (real, imaginary). lucid returns
    a copy.

    Example::

        lucid.view_as_real(lucid.tensor([1 + 2j]))      # tensor([[1., 2.]])
    """
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return ViewAsReal.apply(input)


def view_as_complex(input: Tensor) -> Tensor:
    """A real tensor with a last dim of 2 (real, imaginary) as a complex one. lucid returns a
    copy.

    Example::

        lucid.view_as_complex(lucid.tensor([[1.0, 2.0]]))      # tensor([1.+2.j])
    """
    d = input.dtype
    if d not in (_dtype.float32, _dtype.float64):
        raise RuntimeError("view_as_complex is only supported for float and double tensors, "
                           f"but got a tensor of scalar type: {_dtype.torch_name(d)}")
    if not input.ndim or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return ViewAsComplex.apply(input)


def _pair(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    if a.dtype not in (_dtype.float32, _dtype.float64) or \
            b.dtype not in (_dtype.float32, _dtype.float64):
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_dtype.torch_name(a.dtype)} and {_dtype.torch_name(b.dtype)}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {_dtype.torch_name(a.dtype)} but "
                           f"got scalar type {_dtype.torch_name(b.dtype)} for second argument")
    return broadcast_tensors(a, b)  # type: ignore[return-value]


def complex(real: Tensor, imag: Tensor) -> Tensor:  # noqa: A001
    """A complex tensor from real and imaginary parts (same float dtype, broadcast).

    Example::

        lucid.complex(lucid.tensor([1.0]), lucid.tensor([2.0]))      # tensor([1.+2.j])
    """
    return Complex.apply(*_pair(real, imag))


def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002
    """The complex tensor ``abs * (cos(angle) + i sin(angle))``.

    Example::

        lucid.polar(lucid.tensor([2.0]), lucid.tensor([0.0]))      # tensor([2.+0.j])
    """
    return Polar.apply(*_pair(abs, angle))

