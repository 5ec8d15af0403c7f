"""``lucid.fft``: discrete Fourier transforms with ``torch.fft``'s names and arguments
(``n`` / ``s``, ``dim``, ``norm`` = "backward", "ortho" or "forward"), differentiable, on
complex tensors (``lucid.complex64`` / ``lucid.complex128``).

Example::

    import lucid
    x = lucid.randn(8, dtype=lucid.float64)
    X = lucid.fft.rfft(x)                 # 5 complex frequencies
    y = lucid.fft.irfft(X, n=8)           # x again
    power = X.abs() ** 2
"""

from __future__ import annotations

from ..ops.spectral import (
    fft,
    fft2,
    fftfreq,
    fftn,
    fftshift,
    hfft,
    hfft2,
    hfftn,
    ifft,
    ifft2,
    ifftn,
    ifftshift,
    ihfft,
    ihfft2,
    ihfftn,
    irfft,
    irfft2,
    irfftn,
    rfft,
    rfft2,
    rfftfreq,
    rfftn,
)

__all__ = [
    "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft", "ifft2",
    "ifftn", "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2", "irfftn", "rfft",
    "rfft2", "rfftfreq", "rfftn",
]
