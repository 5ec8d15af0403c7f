"""3-D convolution, pooling, batch / instance norm and channel dropout: F.conv3d,
F.conv_transpose3d, F.max_pool3d, F.avg_pool3d, F.adaptive_avg_pool3d, F.adaptive_max_pool3d
and their modules. Outputs, indices and gradients against torch and plain-numpy references,
float64 gradchecks, and torch's error messages."""

from __future__ import annotations

import numpy as np
import pytest
from devices import DEVICES
from numpy.lib.stride_tricks import sliding_window_view

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.autograd import gradcheck

# torch notes that an even kernel with padding="same" pads a copy of the input
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")

# ---- numpy references ---------------------------------------------------------------------


def _np_conv3d(x, w, b, stride, pad, dil, groups):
    """Direct 3-D cross-correlation (symmetric integer padding)."""
    x = np.pad(x, ((0, 0), (0, 0), *[(p, p) for p in pad]))
    n, c = x.shape[:2]
    o, cg = w.shape[:2]
    ks = w.shape[2:]
    eff = [(k - 1) * d + 1 for k, d in zip(ks, dil)]
    win = sliding_window_view(x, eff, axis=(2, 3, 4))
    win = win[:, :, ::stride[0], ::stride[1], ::stride[2], ::dil[0], ::dil[1], ::dil[2]]
    win = win.reshape(n, groups, cg, *win.shape[2:])
    y = np.einsum("ngcdhwijk,gocijk->ngodhw", win, w.reshape(groups, o // groups, cg, *ks))
    y = y.reshape(n, o, *y.shape[3:])
    return y if b is None else y + b.reshape(1, o, 1, 1, 1)


def _np_conv_transpose3d(x, w, stride, pad):
    """Scatter of every input voxel times the kernel (groups = 1, dilation = 1)."""
    n, ci, d, h, wd = x.shape
    co, ks = w.shape[1], w.shape[2:]
    full = [(i - 1) * s + k for i, s, k in zip((d, h, wd), stride, ks)]
    y = np.zeros((n, co, *full))
    for i in range(d):
        for j in range(h):
            for k in range(wd):
                contrib = np.einsum("nc,cokpq->nokpq", x[:, :, i, j, k], w)
                y[:, :, i * stride[0]:i * stride[0] + ks[0], j * stride[1]:j * stride[1] + ks[1],
                  k * stride[2]:k * stride[2] + ks[2]] += contrib
    return y[:, :, pad[0]:full[0] - pad[0], pad[1]:full[1] - pad[1], pad[2]:full[2] - pad[2]]


def _np_pool3d(x, k, s, reduce):
    """Valid (unpadded) pooling with window k and stride s; ``reduce`` over the last 3 axes."""
    win = sliding_window_view(x, k, axis=(2, 3, 4))[:, :, ::s[0], ::s[1], ::s[2]]
    return reduce(win, axis=(-3, -2, -1))


def _t(a, dev="cpu", grad=False):
    return lucid.tensor(a, device=dev, requires_grad=grad)


def _np(t):
    return t.detach().cpu().numpy() if t.device.type != "cpu" else t.detach().numpy()


# ---- against numpy, on every device -------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_conv3d_numpy_reference(device):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 5, 6, 7)).astype(np.float32)
    w = rng.standard_normal((6, 2, 3, 2, 3)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    y = F.conv3d(_t(x, device), _t(w, device), _t(b, device), stride=(1, 2, 1),
                 padding=(1, 0, 2), dilation=(2, 1, 1), groups=2)
    want = _np_conv3d(x, w, b, (1, 2, 1), (1, 0, 2), (2, 1, 1), 2)
    assert y.shape == want.shape and y.device.type == device
    np.testing.assert_allclose(_np(y), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_conv_transpose3d_numpy_reference(device):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 3, 4, 2)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 2, 3)).astype(np.float32)
    y = F.conv_transpose3d(_t(x, device), _t(w, device), stride=(2, 1, 3), padding=(1, 0, 1))
    want = _np_conv_transpose3d(x, w, (2, 1, 3), (1, 0, 1))
    assert y.shape == want.shape
    np.testing.assert_allclose(_np(y), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_pool3d_numpy_reference(device):
    x = np.random.default_rng(2).standard_normal((2, 3, 6, 5, 7)).astype(np.float32)
    lx = _t(x, device)
    np.testing.assert_allclose(_np(F.max_pool3d(lx, (2, 3, 2), (2, 1, 2))),
                               _np_pool3d(x, (2, 3, 2), (2, 1, 2), np.max), rtol=1e-6)
    np.testing.assert_allclose(_np(F.avg_pool3d(lx, (3, 2, 2), (1, 2, 3))),
                               _np_pool3d(x, (3, 2, 2), (1, 2, 3), np.mean), rtol=1e-5,
                               atol=1e-6)
    # adaptive with divisible sizes is a plain pool
    np.testing.assert_allclose(_np(F.adaptive_avg_pool3d(lx, (3, 5, 7))),
                               _np_pool3d(x, (2, 1, 1), (2, 1, 1), np.mean), rtol=1e-5)
    y, idx = F.adaptive_max_pool3d(lx, (2, 1, 7), return_indices=True)
    np.testing.assert_allclose(_np(y), _np_pool3d(x, (3, 5, 1), (3, 5, 1), np.max))
    flat = x.reshape(2, 3, -1)
    got = np.take_along_axis(flat, _np(idx).reshape(2, 3, -1), axis=2)
    np.testing.assert_array_equal(got.reshape(y.shape), _np(y))


_DEVICE_FNS = {
    "conv3d": lambda x, w: F.conv3d(x, w[:, :2], stride=(2, 1, 1), padding=1, groups=2),
    "conv_transpose3d": lambda x, w: F.conv_transpose3d(x, w, stride=2, padding=(1, 0, 1),
                                                        output_padding=1, groups=2),
    "max_pool3d": lambda x, w: F.max_pool3d(x, 2, stride=1, padding=1, return_indices=True),
    "avg_pool3d": lambda x, w: F.avg_pool3d(x, 3, stride=2, padding=1, ceil_mode=True,
                                            count_include_pad=False),
    "adaptive_max_pool3d": lambda x, w: F.adaptive_max_pool3d(x, (2, 3, 2), True),
}


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "cpu"])
@pytest.mark.parametrize("name", sorted(_DEVICE_FNS))
def test_gradients_agree_across_devices(device, name):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 4, 3, 4, 5)).astype(np.float32)
    w = rng.standard_normal((4, 3, 2, 3, 2)).astype(np.float32)
    res = {}
    for dev in ("cpu", device):
        lx, lw = _t(x, dev, True), _t(w, dev, True)
        out = _DEVICE_FNS[name](lx, lw)
        y, idx = out if isinstance(out, tuple) else (out, None)
        (y * _t(np.linspace(0.5, 1.5, y.numel()).reshape(y.shape).astype(np.float32),
                dev)).sum().backward()
        res[dev] = [_np(y), _np(lx.grad), None if lw.grad is None else _np(lw.grad),
                    None if idx is None else _np(idx)]
    for a, b in zip(res["cpu"], res[device]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


def test_max_pool3d_indices_and_gradient_numpy():
    x = np.arange(2 * 4 * 4 * 4, dtype=np.float64).reshape(1, 2, 4, 4, 4)
    lx = _t(x, grad=True)
    y, idx = F.max_pool3d(lx, 2, return_indices=True)
    # the maximum of each 2x2x2 block of an increasing ramp is its last corner
    d, h, w = np.meshgrid(np.arange(2), np.arange(2), np.arange(2), indexing="ij")
    want = (2 * d + 1) * 16 + (2 * h + 1) * 4 + (2 * w + 1)
    assert idx.dtype is lucid.int64
    np.testing.assert_array_equal(idx.numpy()[0, 0], want)
    y.sum().backward()
    g = np.zeros(64)
    g[want.ravel()] = 1
    np.testing.assert_array_equal(lx.grad.numpy()[0, 1].ravel(), g)


# ---- against torch --------------------------------------------------------------------------

CONV_CASES = [
    ((2, 4, 5, 6, 7), (6, 2, 3, 3, 3), dict(groups=2)),
    ((2, 4, 5, 6, 7), (6, 4, 2, 3, 2), dict(stride=(2, 1, 3), padding=(1, 0, 1),
                                            dilation=(2, 1, 1))),
    ((1, 3, 5, 4, 6), (2, 3, 2, 3, 2), dict(padding="same", dilation=(1, 2, 1))),
    ((3, 4, 5, 6), (2, 3, 2, 2, 2), dict(padding="valid")),          # unbatched
]
CONV_T_CASES = [
    ((2, 4, 3, 4, 5), (4, 3, 3, 3, 3), dict(stride=2, output_padding=1)),
    ((2, 4, 3, 4, 5), (4, 3, 3, 2, 3), dict(stride=(2, 3, 1), padding=(1, 1, 0),
                                            output_padding=(1, 2, 0), groups=2,
                                            dilation=(1, 1, 2))),
    ((2, 4, 3, 4, 5), (4, 3, 3, 2, 3), dict(padding=(2, 0, 1), output_padding=(1, 0, 0),
                                            dilation=(2, 1, 1))),
    ((4, 3, 4, 5), (4, 3, 2, 2, 2), dict(padding=1)),                # unbatched
]


def _vs_torch(torch, lfn, tfn, arrays, kw, rtol=1e-5, atol=1e-6):
    lins = [None if a is None else _t(a, grad=True) for a in arrays]
    tins = [None if a is None else torch.tensor(a, requires_grad=True) for a in arrays]
    lo, to = lfn(*lins, **kw), tfn(*tins, **kw)
    lidx = tidx = None
    if isinstance(to, tuple):
        (lo, lidx), (to, tidx) = lo, to
    assert tuple(lo.shape) == tuple(to.shape)
    np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=rtol, atol=atol)
    if tidx is not None:
        assert lidx.dtype is lucid.int64
        np.testing.assert_array_equal(lidx.numpy(), tidx.numpy())
    g = np.random.default_rng(9).standard_normal(tuple(to.shape)).astype(arrays[0].dtype)
    (lo * _t(g)).sum().backward()
    (to * torch.tensor(g)).sum().backward()
    for a, b in zip(lins, tins):
        if a is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("xs,ws,kw", CONV_CASES + [c[:2] + (dict(c[2], transposed=1),)
                                                   for c in CONV_T_CASES])
def test_conv3d_matches_torch(torch, xs, ws, kw):
    kw = dict(kw)
    tr = kw.pop("transposed", 0)
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    co = ws[1] * kw.get("groups", 1) if tr else ws[0]
    b = rng.standard_normal(co) if len(xs) == 5 else None
    name = "conv_transpose3d" if tr else "conv3d"
    _vs_torch(torch, getattr(F, name), getattr(torch.nn.functional, name), [x, w, b], kw,
              rtol=1e-9, atol=1e-10)


POOL_CASES = [
    ("max_pool3d", (2, 3, 5, 6, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                         return_indices=True)),
    ("max_pool3d", (2, 3, 5, 6, 7), dict(kernel_size=(2, 3, 2), stride=(1, 2, 3),
                                         padding=(1, 1, 0), dilation=(2, 1, 2),
                                         return_indices=True)),
    ("max_pool3d", (3, 5, 6, 7), dict(kernel_size=2, stride=1, return_indices=True)),
    ("avg_pool3d", (2, 3, 5, 6, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("avg_pool3d", (2, 3, 5, 6, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                         count_include_pad=False)),
    ("avg_pool3d", (3, 5, 6, 7), dict(kernel_size=(2, 3, 2), stride=(1, 2, 3),
                                      padding=(1, 1, 0), divisor_override=5)),
    ("adaptive_avg_pool3d", (2, 3, 5, 6, 7), dict(output_size=(2, 4, 3))),
    ("adaptive_avg_pool3d", (3, 5, 6, 7), dict(output_size=(3, None, 4))),
    ("adaptive_max_pool3d", (2, 3, 5, 6, 7), dict(output_size=(2, 4, 3), return_indices=True)),
    ("adaptive_max_pool3d", (3, 5, 6, 7), dict(output_size=1, return_indices=True)),
]


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("name,xs,kw", POOL_CASES)
def test_pool3d_matches_torch(torch, name, xs, kw, ties):
    x = np.random.default_rng(4).standard_normal(xs)
    if ties:  # many equal values: the first maximum in (d, h, w) order must win, as in torch
        x = np.round(x)
    _vs_torch(torch, getattr(F, name), getattr(torch.nn.functional, name), [x], kw,
              rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["conv3d", "conv_transpose3d", "max_pool3d",
                                  "adaptive_avg_pool3d"])
def test_strided_input_matches_torch(torch, name):
    """The op sees a transposed (non-contiguous) view; gradients reach the leaf."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 6, 5, 4))
    w = rng.standard_normal((3, 3, 2, 2, 2))
    extra = {"conv3d": dict(padding=1), "conv_transpose3d": dict(stride=2),
             "max_pool3d": dict(kernel_size=2, stride=1), "adaptive_avg_pool3d": dict(
                 output_size=(2, 3, 4))}[name]
    lx, tx = _t(x, grad=True), torch.tensor(x, requires_grad=True)
    args_l, args_t = [lx.transpose(2, 4)], [tx.transpose(2, 4)]
    if "conv" in name:
        args_l.append(_t(w))
        args_t.append(torch.tensor(w))
    lo = getattr(F, name)(*args_l, **extra)
    to = getattr(torch.nn.functional, name)(*args_t, **extra)
    np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=1e-9, atol=1e-12)
    (lo * lo).sum().backward()
    (to * to).sum().backward()
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_modules_match_torch(torch):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 4, 5, 6, 6)).astype(np.float32)
    pairs = [
        ("Conv3d", (4, 6, 3), dict(padding=1, stride=(1, 2, 2), groups=2)),
        ("Conv3d", (4, 2, (2, 3, 1)), dict(padding="same", bias=False)),
        ("Conv3d", (4, 2, 3), dict(padding=1, padding_mode="replicate")),
        ("ConvTranspose3d", (4, 3, 2), dict(stride=2)),
        ("MaxPool3d", (2,), dict(return_indices=True)),
        ("AvgPool3d", (3,), dict(stride=2, padding=1, count_include_pad=False)),
        ("AdaptiveAvgPool3d", ((2, 3, 3),), {}),
        ("AdaptiveMaxPool3d", (2,), {}),
        ("BatchNorm3d", (4,), {}),
        ("InstanceNorm3d", (4,), dict(affine=True)),
        ("Dropout3d", (0.5,), {}),
    ]
    for name, args, kw in pairs:
        tm = getattr(torch.nn, name)(*args, **kw)
        lm = getattr(nn, name)(*args, **kw)
        assert repr(lm) == repr(tm), name
        assert list(lm.state_dict()) == list(tm.state_dict()), name
        lm.load_state_dict(tm.state_dict())
        for train in (True, False):
            if name == "Dropout3d" and train:
                continue
            lm.train(train)
            tm.train(train)
            lo, to = lm(_t(x)), tm(torch.tensor(x))
            if isinstance(to, tuple):
                np.testing.assert_array_equal(lo[1].numpy(), to[1].numpy())
                lo, to = lo[0], to[0]
            np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=1e-4,
                                       atol=1e-5, err_msg=name)
    up_t = torch.nn.ConvTranspose3d(4, 2, 3, stride=2)
    up_l = nn.ConvTranspose3d(4, 2, 3, stride=2)
    up_l.load_state_dict(up_t.state_dict())
    lo = up_l(_t(x), output_size=(12, 13, 14))
    to = up_t(torch.tensor(x), output_size=(12, 13, 14))
    assert tuple(lo.shape) == tuple(to.shape) == (2, 2, 12, 13, 14)
    np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=1e-4, atol=1e-5)
    assert not isinstance(up_l, nn.ConvTranspose2d)
    assert not isinstance(nn.AvgPool3d(2), nn.AvgPool2d)


def test_dropout3d_zeroes_whole_channels():
    y = nn.Dropout3d(0.5)(lucid.ones(4, 8, 2, 3, 3)).numpy().reshape(4, 8, -1)
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert (y.min(-1) == y.max(-1)).all() and 0 < (y[..., 0] == 0).sum() < 32


def test_zero_batch_and_zero_output(torch):
    x = lucid.randn(0, 3, 4, 5, 6, requires_grad=True)
    assert F.conv3d(x, lucid.randn(2, 3, 2, 2, 2)).shape == (0, 2, 3, 4, 5)
    assert F.conv_transpose3d(x, lucid.randn(3, 2, 2, 2, 2)).shape == (0, 2, 5, 6, 7)
    out, idx = F.max_pool3d(x, 2, return_indices=True)
    assert out.shape == idx.shape == (0, 3, 2, 2, 3)
    assert F.avg_pool3d(x, 2).shape == (0, 3, 2, 2, 3)
    y = lucid.randn(2, 3, 4, 5, 6)
    assert F.adaptive_avg_pool3d(y, (0, 2, 2)).shape == (2, 3, 0, 2, 2)
    assert F.adaptive_max_pool3d(y, 0, True)[1].shape == (2, 3, 0, 0, 0)
    t = torch.nn.functional.adaptive_avg_pool3d(torch.randn(0, 5, 6, 7), 2)
    assert F.adaptive_avg_pool3d(lucid.randn(0, 5, 6, 7), 2).shape == tuple(t.shape)


# ---- float64 gradchecks ---------------------------------------------------------------------


def _r(*shape, seed=0):
    return lucid.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


@pytest.mark.float64
def test_gradcheck_conv3d():
    x, w, b = _r(1, 2, 3, 4, 3), _r(4, 1, 2, 2, 2, seed=1), _r(4, seed=2)
    assert gradcheck(lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=1, groups=2),
                     (x, w, b))
    assert gradcheck(lambda x, w: F.conv3d(x, w, padding="same", dilation=(2, 1, 1)),
                     (x, _r(2, 2, 2, 1, 2, seed=3)))


@pytest.mark.float64
def test_gradcheck_conv_transpose3d():
    x, w, b = _r(1, 2, 2, 3, 2), _r(2, 2, 2, 2, 3, seed=1), _r(4, seed=2)
    assert gradcheck(lambda x, w, b: F.conv_transpose3d(
        x, w, b, stride=(2, 1, 2), padding=(1, 0, 1), output_padding=(1, 0, 0), groups=2),
        (x, w, b))


@pytest.mark.float64
def test_gradcheck_pool3d():
    x = _r(1, 2, 4, 3, 5)
    assert gradcheck(lambda t: F.max_pool3d(t, 2, stride=1, padding=1), (x,))
    assert gradcheck(lambda t: F.avg_pool3d(t, (2, 3, 2), stride=(2, 1, 2), padding=(1, 1, 0),
                                            ceil_mode=True, count_include_pad=False), (x,))
    assert gradcheck(lambda t: F.adaptive_avg_pool3d(t, (3, 2, 4)), (x,))
    assert gradcheck(lambda t: F.adaptive_max_pool3d(t, (3, 2, 4)), (x,))


# ---- errors ---------------------------------------------------------------------------------


def _ERR_CASES(m, T):  # noqa: N802
    x = T(2, 4, 5, 6, 7)
    w = T(6, 2, 3, 3, 3)
    return [
        lambda: m.conv3d(x, T(6, 2, 3, 3, 3)),
        lambda: m.conv3d(T(4, 5, 6), w),
        lambda: m.conv3d(x, T(6, 4, 7, 3, 3)),
        lambda: m.conv3d(x, T(6, 4, 3, 3, 3), stride=(1, 2)),
        lambda: m.conv3d(x, T(6, 4, 3, 3, 3), stride=0),
        lambda: m.conv3d(x, T(6, 4, 3, 3, 3), padding=-1),
        lambda: m.conv3d(x, T(6, 4, 3, 3, 3), padding="same", stride=2),
        lambda: m.conv3d(x, T(6, 4, 3, 3, 3), bias=T(5)),
        lambda: m.conv3d(x, T(6, 4, 3, 3, 3), padding="foo"),
        lambda: m.conv3d(T(2, 4, 0, 6, 7), T(6, 4, 3, 3, 3)),
        lambda: m.conv3d(x, T(6, 4, 3, 3, 3), dilation=3),
        lambda: m.conv3d(x, T(6, 4, 3, 3, 3), groups=0),
        lambda: m.conv3d(x, T(3, 4, 3, 3, 3), groups=2),
        lambda: m.conv_transpose3d(x, T(4, 3, 3, 3, 3), stride=2, output_padding=2),
        lambda: m.conv_transpose3d(x, T(5, 3, 3, 3, 3)),
        lambda: m.conv_transpose3d(x, T(4, 3, 3, 3, 3), padding="same"),
        lambda: m.max_pool3d(x, (2, 2)),
        lambda: m.max_pool3d(x, 0),
        lambda: m.max_pool3d(x, 0, 1),
        lambda: m.max_pool3d(x, 2, padding=2),
        lambda: m.max_pool3d(x, 2, padding=-1),
        lambda: m.max_pool3d(x, 2, stride=-1),
        lambda: m.max_pool3d(x, 2, dilation=0),
        lambda: m.max_pool3d(x, 2, padding=(1, 0, 2), dilation=3),
        lambda: m.max_pool3d(x, 6),
        lambda: m.max_pool3d(T(3, 5, 6), 2),
        lambda: m.max_pool3d(T(2, 0, 5, 6, 7), 2),
        lambda: m.max_pool3d(x, 2, (1, 2)),
        lambda: m.max_pool3d(x, 2, dilation=(1, 2)),
        lambda: m.avg_pool3d(x, (2, 2)),
        lambda: m.avg_pool3d(x, 2, (1, 2)),
        lambda: m.avg_pool3d(x, 2, padding=(1, 2)),
        lambda: m.avg_pool3d(x, 2, padding=2),
        lambda: m.avg_pool3d(x, 6),
        lambda: m.avg_pool3d(T(2, 3, 1, 6, 7), (2, 2, 2), padding=(1, 0, 0)),
        lambda: m.avg_pool3d(T(3, 5, 6), 2),
        lambda: m.avg_pool3d(x, 2, divisor_override=0),
        lambda: m.avg_pool3d(T(3, 0, 6, 7), 2),
        lambda: m.adaptive_avg_pool3d(x, (2, 2)),
        lambda: m.adaptive_avg_pool3d(x, (1, -1, 2)),
        lambda: m.adaptive_avg_pool3d(T(3, 5, 6), 2),
        lambda: m.adaptive_avg_pool3d(T(2, 0, 5, 6, 7), 2),
        lambda: m.adaptive_avg_pool3d(T(2, 5, 0, 7), 2),
        lambda: m.adaptive_max_pool3d(x, (2, 2)),
        lambda: m.adaptive_max_pool3d(x, (1, -1, 2)),
        lambda: m.adaptive_max_pool3d(T(3, 5, 6), 2),
        lambda: m.adaptive_max_pool3d(T(3, 0, 6, 7), 2),
    ]


def test_errors_match_torch(torch):
    lucid_cases = _ERR_CASES(F, lambda *s: lucid.randn(*s))
    torch_cases = _ERR_CASES(torch.nn.functional, lambda *s: torch.randn(*s))
    for i, (lf, tf) in enumerate(zip(lucid_cases, torch_cases)):
        with pytest.raises(Exception) as t_err:
            tf()
        with pytest.raises(Exception) as l_err:
            lf()
        assert type(l_err.value) is type(t_err.value), (i, l_err.value, t_err.value)
        assert str(l_err.value) == str(t_err.value).replace("torch", "lucid"), i


def test_errors_where_torch_has_no_clear_message():
    x = lucid.randn(2, 4, 5, 6, 7)
    with pytest.raises(RuntimeError, match="kernel size should be greater than zero, but got "
                                           "kernel_depth: 0"):
        F.conv3d(x, lucid.randn(6, 4, 0, 3, 3))
    with pytest.raises(RuntimeError, match=r"Given input size per channel: \(5 x 6 x 7\). "
                                           "Calculated output size per channel: "
                                           r"\(-3 x 0 x 3\). Output size is too small"):
        F.conv_transpose3d(x, lucid.randn(4, 3, 3, 3, 3), padding=(5, 4, 3))
    with pytest.raises(RuntimeError, match="Input type .* and weight type .* should be the same"):
        F.conv3d(x, lucid.randn(6, 4, 3, 3, 3, dtype=lucid.float64))
    with pytest.raises(ValueError, match="expected 5D input \\(got 4D input\\)"):
        nn.BatchNorm3d(4)(lucid.randn(4, 5, 6, 7))
    with pytest.raises(ValueError, match="expected 4D or 5D input \\(got 3D input\\)"):
        nn.InstanceNorm3d(4)(lucid.randn(4, 5, 6))
