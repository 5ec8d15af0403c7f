"""lucid.fft against numpy.fft and torch.fft (values, dtypes, n / s / dim / norm, gradients),
and the complex dtypes it needs: complex64 / complex128, promotion, printing, real / imag /
conj / angle / abs, view_as_real / view_as_complex, lucid.complex and lucid.polar."""

from __future__ import annotations

import numpy as np
import pytest
from devices import DEVICES

import lucid
import lucid.fft as F
from lucid.autograd import gradcheck

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 8))
X7 = RNG.standard_normal((4, 7))
XC = X + 1j * RNG.standard_normal((3, 8))
X3 = RNG.standard_normal((2, 3, 4))
X3C = X3 + 1j * RNG.standard_normal((2, 3, 4))
NORMS = [None, "ortho", "forward"]


def T(a, device: str = "cpu", rg: bool = False) -> lucid.Tensor:
    return lucid.tensor(a, device=device, requires_grad=rg)


def close(t: lucid.Tensor, ref, rtol: float = 1e-7, atol: float = 1e-9) -> None:
    ref = np.asarray(ref)
    assert tuple(t.shape) == ref.shape, (t.shape, ref.shape)
    np.testing.assert_allclose(t.detach().numpy(), ref, rtol=rtol, atol=atol)


# ---- values against numpy ------------------------------------------------------------------
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 5, 12])
def test_one_dim_against_numpy(norm, n) -> None:
    close(F.fft(T(X), n, norm=norm), np.fft.fft(X, n, norm=norm))
    close(F.fft(T(XC), n, 0, norm=norm), np.fft.fft(XC, n, 0, norm=norm))
    close(F.ifft(T(XC), n, norm=norm), np.fft.ifft(XC, n, norm=norm))
    close(F.rfft(T(X7), n, norm=norm), np.fft.rfft(X7, n, norm=norm))
    close(F.irfft(T(XC), n, norm=norm), np.fft.irfft(XC, n, norm=norm))
    close(F.hfft(T(XC), n, norm=norm), np.fft.hfft(XC, n, norm=norm))
    close(F.ihfft(T(X7), n, norm=norm), np.fft.ihfft(X7, n, norm=norm))


@pytest.mark.parametrize("norm", NORMS)
def test_multi_dim_against_numpy(norm) -> None:
    close(F.fft2(T(XC), norm=norm), np.fft.fft2(XC, norm=norm))
    close(F.fft2(T(XC), (5, 6), norm=norm), np.fft.fft2(XC, (5, 6), norm=norm))
    close(F.ifft2(T(X), norm=norm), np.fft.ifft2(X, norm=norm))
    close(F.rfft2(T(X7), norm=norm), np.fft.rfft2(X7, norm=norm))
    close(F.irfft2(T(XC), (3, 9), norm=norm), np.fft.irfft2(XC, (3, 9), norm=norm))
    close(F.fftn(T(X3C), norm=norm), np.fft.fftn(X3C, norm=norm))
    close(F.fftn(T(X3), (4, 5), norm=norm), np.fft.fftn(X3, (4, 5), (1, 2), norm=norm))
    close(F.ifftn(T(X3C), dim=(0, 2), norm=norm), np.fft.ifftn(X3C, axes=(0, 2), norm=norm))
    close(F.rfftn(T(X3), norm=norm), np.fft.rfftn(X3, norm=norm))
    close(F.irfftn(T(X3C), norm=norm), np.fft.irfftn(X3C, norm=norm))
    close(F.irfftn(T(X3C), (3, 5), dim=(0, 2), norm=norm),
          np.fft.irfftn(X3C, (3, 5), axes=(0, 2), norm=norm))


def test_dtypes_and_round_trips() -> None:
    x32 = lucid.randn(4, 6)
    assert F.fft(x32).dtype is lucid.complex64
    assert F.rfft(x32).dtype is lucid.complex64
    assert F.irfft(F.rfft(x32)).dtype is lucid.float32
    assert F.fft(T(X)).dtype is lucid.complex128
    assert F.fft(lucid.arange(4)).dtype is lucid.complex64  # integers go through the float
    close(F.irfft(F.rfft(T(X7)), n=7), X7)
    close(F.ifft(F.fft(T(XC))), XC)
    close(F.irfftn(F.rfftn(T(X3)), s=X3.shape), X3)
    close(F.hfft(F.ihfft(T(X7)), n=7), X7)
    close(F.fftfreq(5, 0.5), np.fft.fftfreq(5, 0.5), rtol=1e-6)
    close(F.fftfreq(8), np.fft.fftfreq(8), rtol=1e-6)
    close(F.rfftfreq(7, 2.0, dtype=lucid.float64), np.fft.rfftfreq(7, 2.0))
    close(F.fftshift(T(X7)), np.fft.fftshift(X7))
    close(F.ifftshift(T(X7), dim=1), np.fft.ifftshift(X7, axes=1))
    close(F.fftshift(T(X3), dim=(0, 2)), np.fft.fftshift(X3, axes=(0, 2)))


@pytest.mark.parametrize("device", DEVICES)
def test_devices(device: str) -> None:
    x = lucid.tensor(X.astype(np.float32), device=device, requires_grad=True)
    Xf = F.rfft(x)
    assert Xf.device == lucid.device(device) and Xf.dtype is lucid.complex64
    close(Xf, np.fft.rfft(X.astype(np.float32)), rtol=1e-5, atol=1e-5)
    (Xf.abs() ** 2).sum().backward()
    # sum |rfft(x)|^2 = (n |x|^2 + Y_0^2 + Y_4^2) / 2 (Parseval on the half spectrum)
    alt = (-1.0) ** np.arange(8)
    ref = 8 * X + X.sum(1, keepdims=True) + (X @ alt)[:, None] * alt
    close(x.grad, ref, rtol=1e-4, atol=1e-4)
    close(F.ifft(F.fft(x)).real, X, rtol=1e-5, atol=1e-5)


# ---- gradients -----------------------------------------------------------------------------
def _c(x: lucid.Tensor) -> lucid.Tensor:
    return lucid.view_as_complex(x)


def _r(z: lucid.Tensor) -> lucid.Tensor:
    return lucid.view_as_real(z)


@pytest.mark.parametrize("backend_name", ["cpu", "numpy"])
@pytest.mark.parametrize("norm", NORMS)
def test_gradchecks(backend_name: str, norm) -> None:
    x = T(RNG.standard_normal((2, 5)), backend_name, True)
    xc = T(RNG.standard_normal((2, 5, 2)), backend_name, True)  # complex through view_as_complex
    x3 = T(RNG.standard_normal((2, 3, 4)), backend_name, True)
    gradcheck(lambda t: _r(F.fft(t, norm=norm)), (x,))
    gradcheck(lambda t: _r(F.fft(_c(t), 7, norm=norm)), (xc,))
    gradcheck(lambda t: _r(F.ifft(_c(t), 3, norm=norm)), (xc,))
    gradcheck(lambda t: _r(F.rfft(t, 6, norm=norm)), (x,))
    gradcheck(lambda t: _r(F.rfft(t, 4, norm=norm)), (x,))
    gradcheck(lambda t: F.irfft(_c(t), norm=norm), (xc,))
    gradcheck(lambda t: F.irfft(_c(t), 7, norm=norm), (xc,))
    gradcheck(lambda t: F.hfft(_c(t), 6, norm=norm), (xc,))
    gradcheck(lambda t: _r(F.ihfft(t, norm=norm)), (x,))
    gradcheck(lambda t: _r(F.fftn(t, (3, 5), dim=(0, 2), norm=norm)), (x3,))
    gradcheck(lambda t: _r(F.rfft2(t, norm=norm)), (x3,))
    gradcheck(lambda t: F.irfftn(_c(t), (2, 6), norm=norm), (xc,))
    gradcheck(lambda t: F.fftshift(t, 1) * t, (x,))


def test_gradients_against_torch(torch) -> None:
    TF = torch.fft
    cases = [
        (lambda f, t: f.fft(t, 10), X), (lambda f, t: f.fft(t, 5, 0), XC),
        (lambda f, t: f.ifft(t, norm="ortho"), XC), (lambda f, t: f.rfft(t, 5), X7),
        (lambda f, t: f.irfft(t, 9), XC), (lambda f, t: f.irfft(t, norm="forward"), X),
        (lambda f, t: f.hfft(t), XC), (lambda f, t: f.ihfft(t, 9), X7),
        (lambda f, t: f.fft2(t, (4, 6)), XC), (lambda f, t: f.rfft2(t, norm="ortho"), X7),
        (lambda f, t: f.irfft2(t, (3, 9)), XC), (lambda f, t: f.fftn(t, dim=(0, 2)), X3C),
        (lambda f, t: f.rfftn(t), X3), (lambda f, t: f.irfftn(t, (3, 5), dim=(0, 2)), X3C),
    ]
    rng = np.random.default_rng(1)
    for fn, a in cases:
        la, ta = T(a, rg=True), torch.tensor(a, requires_grad=True)
        lo, to = fn(F, la), fn(TF, ta).resolve_conj()
        close(lo, to.detach().numpy())
        assert lo.dtype.name == str(to.dtype).rsplit(".", 1)[-1]
        w = rng.standard_normal(tuple(to.shape) + ((2,) if to.is_complex() else ()))
        lv = _r(lo) if lo.dtype.is_complex else lo
        tv = torch.view_as_real(to) if to.is_complex() else to
        (lv * T(w)).sum().backward()
        (tv * torch.tensor(w)).sum().backward()
        close(la.grad, ta.grad.resolve_conj().numpy())


def test_frequencies_match_torch_exactly(torch) -> None:
    for n, d in ((7, 0.3), (8, 0.3), (1, 1.0)):
        np.testing.assert_array_equal(F.fftfreq(n, d).numpy(), torch.fft.fftfreq(n, d).numpy())
        np.testing.assert_array_equal(F.rfftfreq(n, d).numpy(),
                                      torch.fft.rfftfreq(n, d).numpy())
    for name in F.__all__:
        assert hasattr(torch.fft, name), name


# ---- errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize("call, exc, message", [
    (lambda: F.fft(lucid.ones(4), n=0), RuntimeError,
     r"^Invalid number of data points \(0\) specified$"),
    (lambda: F.fft(lucid.ones(4), norm="xx"), RuntimeError,
     r'^Invalid normalization mode: "xx"$'),
    (lambda: F.rfft(lucid.tensor([1j])), RuntimeError,
     r"^rfft expects a real input tensor, but got ComplexFloat$"),
    (lambda: F.ihfft(lucid.tensor([1j])), RuntimeError, "ihfft expects a real input tensor"),
    (lambda: F.irfft(lucid.ones(1)), RuntimeError, r"Invalid number of data points \(0\)"),
    (lambda: F.fftn(lucid.ones(2, 2), s=(3,), dim=(0, 1)), RuntimeError,
     "When given, dim and shape arguments must have the same length"),
    (lambda: F.fftn(lucid.ones(2, 2), dim=(0, 0)), RuntimeError, "FFT dims must be unique"),
    (lambda: F.fft(lucid.ones(2, 2), dim=2), IndexError, "Dimension out of range"),
    (lambda: F.fft(lucid.tensor(1.0)), IndexError,
     "Dimension specified as -1 but tensor has no dimensions"),
    (lambda: F.fft(lucid.ones(4, dtype=lucid.float16)), RuntimeError, "Unsupported dtype Half"),
])
def test_errors(call, exc, message: str) -> None:
    with pytest.raises(exc, match=message):
        call()


# ---- the complex dtypes ------------------------------------------------------------------------
def test_complex_dtypes() -> None:
    c64, c128 = lucid.complex64, lucid.complex128
    assert lucid.cfloat is c64 and lucid.cdouble is c128
    assert c64.is_complex and not c64.is_floating_point and not lucid.float32.is_complex
    assert lucid.tensor([1 + 2j]).dtype is c64
    assert lucid.tensor(np.array([1j])).dtype is c128
    assert lucid.promote_types(c64, lucid.float64) is c128
    assert lucid.promote_types(lucid.float16, c64) is c64
    assert lucid.promote_types(lucid.int64, c128) is c128
    assert (lucid.ones(2) + lucid.tensor([1j, 2j])).dtype is c64
    assert (lucid.ones(2, dtype=lucid.float64) * 1j).dtype is c128
    assert (lucid.ones(2) * 1j).dtype is c64
    assert c128.to_real() is lucid.float64 and lucid.float32.to_complex() is c64
    assert lucid.tensor([1j]).is_complex() and lucid.is_complex(lucid.tensor([1j]))
    assert lucid.tensor([1.0], requires_grad=True).to(c64).requires_grad
    assert lucid.zeros(2, dtype=c64).requires_grad_().requires_grad


def test_complex_repr() -> None:
    assert repr(lucid.tensor([1j, 2j])) == "tensor([0.+1.j, 0.+2.j])"
    assert repr(lucid.tensor([1.5 + 2j, -3 - 4.25j])) == \
        "tensor([ 1.5000+2.0000j, -3.0000-4.2500j])"
    assert repr(lucid.tensor([1 + 2j], dtype=lucid.complex128)) == \
        "tensor([1.+2.j], dtype=lucid.complex128)"
    assert repr(lucid.tensor(1e-5 + 3j)) == "tensor(1.0000e-05+3.j)"


def test_complex_repr_matches_torch(torch) -> None:
    a = RNG.standard_normal((3, 5)) + 1j * RNG.standard_normal((3, 5))
    for arr in (a.astype(np.complex64), a, np.array([435 + 0j, -15 + 142.7155j])):
        want = repr(torch.tensor(arr)).replace("torch.", "lucid.")
        assert repr(lucid.tensor(arr)) == want


def test_complex_ops_values() -> None:
    z = lucid.tensor([3 + 4j, -1j, -2 + 0j])
    close(z.real, [3, 0, -2])
    close(z.imag, [4, -1, 0])
    close(z.conj(), [3 - 4j, 1j, -2])
    close(z.abs(), [5, 1, 2])
    close(z.angle(), np.angle([3 + 4j, -1j, -2 + 0j]), rtol=1e-6)
    close(lucid.view_as_real(z), [[3, 4], [0, -1], [-2, 0]])
    close(lucid.view_as_complex(lucid.tensor([[1.0, 2.0]])), [1 + 2j])
    close(lucid.complex(lucid.tensor([1.0, 2.0]), lucid.tensor([3.0])), [1 + 3j, 2 + 3j])
    close(lucid.polar(lucid.tensor([2.0]), lucid.tensor([np.pi / 2])), [2j], atol=1e-6)
    close(lucid.angle(lucid.tensor([-1.0, 0.0, 2.0])), [np.pi, 0, 0], rtol=1e-6)
    assert lucid.real(lucid.ones(2)).dtype is lucid.float32
    assert lucid.view_as_real(z).dtype is lucid.float32
    assert not z.conj().is_conj()


def test_complex_ops_gradients() -> None:
    x = T(RNG.standard_normal((3, 2)), rg=True)
    y = T(RNG.standard_normal(3), rg=True)
    y2 = T(RNG.standard_normal(3), rg=True)
    r = T(RNG.uniform(0.5, 2.0, 3), rg=True)
    gradcheck(lambda t: _c(t).real * 2 + _c(t).imag * _c(t).real, (x,))
    gradcheck(lambda t: _r(_c(t).conj() * 1), (x,))
    gradcheck(lambda t: _c(t).abs(), (x,))
    gradcheck(lambda t: _c(t).angle(), (x,))
    gradcheck(lambda a, b: _r(lucid.complex(a, b)), (y, y2))
    gradcheck(lambda a, b: _r(lucid.polar(a, b)), (r, y))


def test_complex_errors() -> None:
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with "
                       "non-complex dtypes."):
        _ = lucid.ones(2).imag
    with pytest.raises(RuntimeError, match="view_as_real is only supported for complex"):
        lucid.view_as_real(lucid.ones(2))
    with pytest.raises(RuntimeError, match="Tensor must have a last dimension of size 2"):
        lucid.view_as_complex(lucid.ones(3))
    with pytest.raises(RuntimeError, match="Expected object of scalar type Float but got "
                       "scalar type Double for second argument"):
        lucid.complex(lucid.ones(2), lucid.ones(2, dtype=lucid.float64))
    with pytest.raises(RuntimeError, match="Expected both inputs to be Half, Float or Double "
                       "tensors but got Long and Long"):
        lucid.complex(lucid.ones(2, dtype=lucid.int64), lucid.ones(2, dtype=lucid.int64))


@pytest.mark.parametrize("fn,kw", [("hfftn", {}), ("hfftn", {"s": (4, 7)}),
                                   ("hfft2", {"norm": "ortho"}), ("hfftn", {"dim": (0, 2)}),
                                   ("ihfftn", {}),
                                   ("ihfft2", {"norm": "forward"}),
                                   ("ihfftn", {"s": (2, 5), "dim": (1, 2)})])
def test_hermitian_n_dim_transforms_match_torch(fn: str, kw: dict) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4, 6))
    if fn.startswith("h"):
        a = a + 1j * rng.standard_normal((3, 4, 6))
    lx, tx = lucid.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    lo, to = getattr(F, fn)(lx, **kw), getattr(torch.fft, fn)(tx, **kw)
    np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = rng.standard_normal(tuple(to.shape))
    (lo * lucid.tensor(w)).abs().sum().backward()
    (to * torch.tensor(w)).abs().sum().backward()
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-8, atol=1e-10)
