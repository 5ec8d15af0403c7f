"""F.max_unpool1d/2d/3d, nn.MaxUnpool1d/2d/3d and the ``*_with_indices`` max pools: values,
indices and gradients against torch (float64), and torch's errors for bad arguments."""

from __future__ import annotations

import numpy as np
import pytest
from nn_util import arr, catch

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

RNG = np.random.default_rng(0)


def _pair(torch, a, grad=False):
    return lucid.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad)


@pytest.mark.parametrize("n, shape, kw", [
    (1, (2, 3, 9), dict(kernel_size=2)),
    (1, (3, 9), dict(kernel_size=3, stride=2, padding=1)),
    (2, (2, 3, 6, 7), dict(kernel_size=2)),
    (2, (3, 7, 7), dict(kernel_size=3, stride=2, padding=1)),
    (3, (2, 2, 4, 5, 6), dict(kernel_size=2)),
    (3, (2, 5, 4, 6), dict(kernel_size=(2, 3, 2), stride=(1, 2, 2))),
])
def test_with_indices_and_unpool_match_torch(torch, n, shape, kw):
    x = RNG.standard_normal(shape)
    lx, tx = _pair(torch, x)
    lp = getattr(F, f"max_pool{n}d_with_indices")
    tp = getattr(torch.nn.functional, f"max_pool{n}d_with_indices")
    ly, li = lp(lx, **kw)
    ty, ti = tp(tx, **kw)
    np.testing.assert_array_equal(arr(ly), arr(ty))
    np.testing.assert_array_equal(arr(li), arr(ti))
    assert li.dtype == lucid.int64
    a = RNG.standard_normal(tuple(ly.shape))
    la, ta = _pair(torch, a, True)
    size = shape[-n:]
    lu = getattr(F, f"max_unpool{n}d")(la, li, output_size=size, **kw)
    tu = getattr(torch.nn.functional, f"max_unpool{n}d")(ta, ti, output_size=size, **kw)
    np.testing.assert_array_equal(arr(lu), arr(tu))
    g = RNG.standard_normal(tuple(lu.shape))
    lu.backward(lucid.tensor(g))
    tu.backward(torch.tensor(g))
    np.testing.assert_array_equal(arr(la.grad), arr(ta.grad))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_adaptive_with_indices_match_torch(torch, n):
    x = RNG.standard_normal((2, 3) + (7,) * n)
    lx, tx = _pair(torch, x)
    ly, li = getattr(F, f"adaptive_max_pool{n}d_with_indices")(lx, 3)
    ty, ti = getattr(torch.nn.functional, f"adaptive_max_pool{n}d_with_indices")(tx, 3)
    np.testing.assert_array_equal(arr(ly), arr(ty))
    np.testing.assert_array_equal(arr(li), arr(ti))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_unpool_modules_round_trip(torch, n):
    x = RNG.standard_normal((2, 3) + (6,) * n)
    pool = getattr(nn, f"MaxPool{n}d")(2, return_indices=True)
    unpool = getattr(nn, f"MaxUnpool{n}d")(2)
    tunpool = getattr(torch.nn, f"MaxUnpool{n}d")(2)
    assert repr(unpool) == repr(tunpool)
    y, idx = pool(lucid.tensor(x))
    ty, tidx = torch.nn.functional.max_pool2d(torch.tensor(x), 2, return_indices=True) \
        if n == 2 else (None, None)
    out = unpool(y, idx)
    assert out.shape == x.shape
    kept = arr(out) != 0
    np.testing.assert_array_equal(arr(out)[kept], x[kept])
    if n == 2:
        np.testing.assert_array_equal(arr(out), arr(tunpool(ty, tidx)))
    big = unpool(y, idx, output_size=(2, 3) + (7,) * n)
    assert big.shape == (2, 3) + (7,) * n


def test_unpool_default_size_and_gradcheck():
    x = lucid.randn(1, 2, 4, 4, dtype=lucid.float64)
    y, idx = F.max_pool2d(x, 2, return_indices=True)
    y = y.detach().requires_grad_()
    assert lucid.autograd.gradcheck(lambda t: F.max_unpool2d(t, idx, 2), [y])


def test_unpool_errors_match_torch(torch):
    def run(fw, F):
        x = fw.tensor(np.arange(48.0).reshape(2, 3, 2, 4))
        y, i = F.max_pool2d(x, 2, return_indices=True)
        x3 = fw.tensor(np.arange(128.0).reshape(2, 1, 4, 4, 4))
        y3, i3 = F.max_pool3d(x3, 2, return_indices=True)
        return [
            catch(lambda: F.max_unpool2d(y, i.int(), 2)),
            catch(lambda: F.max_unpool2d(y, i[..., :1], 2)),
            catch(lambda: F.max_unpool2d(y[0, 0], i[0, 0], 2)),
            catch(lambda: F.max_unpool2d(y, i + 100, 2)),
            catch(lambda: F.max_unpool2d(y, i, 2, output_size=(9, 9))),
            catch(lambda: F.max_unpool2d(y, i, 2, output_size=(5,))),
            catch(lambda: F.max_unpool2d(y[:, :0], i[:, :0], 2)),
            catch(lambda: tuple(F.max_unpool2d(y[:0], i[:0], 2).shape)),
            catch(lambda: F.max_unpool3d(y3, i3.int(), 2)),
            catch(lambda: F.max_unpool3d(y3[0, 0], i3[0, 0], 2)),
            catch(lambda: F.max_unpool3d(y3, i3, 2, stride=0)),
            catch(lambda: F.max_unpool1d(y[:, :, 0], i[:, :, 0] + 50, 2)),
            catch(lambda: F.max_unpool2d(y.int(), i, 2)),
        ]

    lucid_out = run(lucid, F)
    torch_out = [s.replace("torch.Size", "lucid.Size") for s in run(torch, torch.nn.functional)]
    for lo, to in zip(lucid_out, torch_out):
        if "invalid max index" in to:  # torch names whichever bad index its threads saw
            assert lo.split(":")[0] == to.split(":")[0] and "output volumes are of size" in lo
        else:
            assert lo == to
