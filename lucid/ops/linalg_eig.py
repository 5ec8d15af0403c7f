"""The eigendecomposition of general square matrices: ``lucid.linalg.eig`` and ``eigvals``,
batched over leading dims, with complex results as ``torch.linalg.eig`` (complex64 for
float32 input, complex128 for float64; eigenvectors of unit norm, from LAPACK ``geev``).

One op computes both outputs on a host copy of the matrices and carries PyTorch's backward
(``linalg_eig_backward`` in torch/csrc/autograd/FunctionsManual.cpp): a real input receives
the real part of the complex gradient. Real and complex inputs are accepted.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from .._tensor import Tensor
from .linalg_base import Packed, _last, check_square, dev, host, mT

__all__ = ["eig", "eigvals"]

linalg_eig = namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])


def _mH(a: np.ndarray) -> np.ndarray:
    return np.conj(mT(a))


class Eig(Packed):
    def forward(self, x, strict):
        be = self.be
        a = host(be, x)
        self.dt = a.dtype
        cdt = np.result_type(a.dtype, np.complex64)
        finite = np.isfinite(a).all(axis=(-2, -1))
        if not finite.all() and strict:
            raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
        safe = np.where(finite[..., None, None], a, 0) if not finite.all() else a
        w, v = np.linalg.eig(safe)
        w, v = w.astype(cdt), v.astype(cdt)
        if not finite.all():
            w = np.where(finite[..., None], w, complex(np.nan, np.nan))
            v = np.where(finite[..., None, None], v, complex(np.nan, np.nan))
        self.w, self.v = w, v
        self.shapes = _last.shapes = [w.shape, v.shape]
        return dev(be, np.concatenate([w.reshape(-1), v.reshape(-1)]), cdt)

    def backward(self, g):
        w, v = self.w, self.v
        gp = np.asarray(host(self.be, g)).astype(w.dtype, copy=False)
        gw, gv = gp[:w.size].reshape(w.shape), gp[w.size:].reshape(v.shape)
        Vh = _mH(v)
        VhgV = Vh @ gv
        diag = np.diagonal(VhgV, 0, -2, -1)
        if not np.allclose(diag.imag, 0, rtol=1e-2, atol=1e-2):
            raise RuntimeError(
                "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                "multiplication by e^{i phi}. The specified loss function depends on this "
                "quantity, so it is ill-defined.")
        VhgV = VhgV - Vh @ (v * diag.real[..., None, :])
        wc = np.conj(w)
        E = wc[..., None, :] - wc[..., :, None]
        idx = np.arange(w.shape[-1])
        E[..., idx, idx] = 1
        with np.errstate(all="ignore"):
            ret = VhgV / E
        ret[..., idx, idx] = gw
        gA = np.linalg.solve(Vh, ret @ Vh)
        if self.dt.kind != "c":
            gA = gA.real
        return dev(self.be, gA, self.dt)


def _eig(A: Tensor, name: str, strict: bool) -> list[Tensor]:
    check_square(A, name, allow_complex=True)
    op_out = Eig.apply(A, strict)
    w_shape, v_shape = _last.shapes
    n = int(np.prod(w_shape))
    return [op_out[:n].reshape(w_shape),  # type: ignore[index]
            op_out[n:].reshape(v_shape)]  # type: ignore[index]


def eig(input: Tensor) -> Any:
    """``(eigenvalues, eigenvectors)`` of a square matrix (or batch), both complex: ``input V =
    V diag(L)``, each eigenvector of unit norm. Raises for an input with infs or NaNs.
    Differentiable for distinct eigenvalues, when the loss does not depend on the phase of
    the eigenvectors.

    Example::

        L, V = lucid.linalg.eig(lucid.tensor([[0.0, -1.0], [1.0, 0.0]]))   # L = [i, -i]
    """
    L, V = _eig(input, "linalg.eig", True)
    return linalg_eig(L, V)


def eigvals(input: Tensor) -> Tensor:
    """The (complex) eigenvalues of a square matrix (or batch), in LAPACK's order; NaN for
    a matrix with infs or NaNs when no gradient is needed.

    Example::

        lucid.linalg.eigvals(lucid.tensor([[2.0, 0.0], [0.0, 3.0]]))   # tensor([2.+0.j, 3.+0.j])
    """
    return _eig(input, "linalg.eigvals", bool(input.requires_grad))[0]
