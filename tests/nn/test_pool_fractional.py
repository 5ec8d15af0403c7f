"""F.fractional_max_pool2d/3d (and ``_with_indices``), nn.FractionalMaxPool2d/3d: with the
same ``_random_samples`` the outputs, indices and gradients equal torch's (float64 and
float32); drawn samples give valid windows; torch's errors for bad arguments."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from nn_util import arr, catch

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("n, shape, k, out", [
    (2, (2, 3, 7, 9), (2, 3), (3, 4)),
    (2, (3, 10, 10), 3, (5, 5)),
    (2, (1, 2, 6, 6), 2, 1),
    (2, (2, 2, 6, 5), 2, (5, 4)),
    (3, (2, 3, 5, 6, 7), (2, 3, 2), (3, 3, 4)),
    (3, (2, 6, 6, 6), 2, 3),
])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_matches_torch_with_same_samples(torch, n, shape, k, out, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    b = shape[0] if len(shape) == n + 2 else 1
    c = shape[-n - 1]
    s = RNG.random((b, c, n)).astype(dtype)
    lx, tx = lucid.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ly, li = getattr(F, f"fractional_max_pool{n}d")(lx, k, output_size=out, return_indices=True,
                                                     _random_samples=lucid.tensor(s))
    ty, ti = getattr(torch.nn.functional, f"fractional_max_pool{n}d")(
        tx, k, output_size=out, return_indices=True, _random_samples=torch.tensor(s))
    np.testing.assert_array_equal(arr(ly), arr(ty))
    np.testing.assert_array_equal(arr(li), arr(ti))
    g = RNG.standard_normal(tuple(ly.shape)).astype(dtype)
    ly.backward(lucid.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_array_equal(arr(lx.grad), arr(tx.grad))


@pytest.mark.parametrize("n", [2, 3])
def test_output_ratio_and_with_indices_form(torch, n):
    x = RNG.standard_normal((2, 3) + (10,) * n)
    s = RNG.random((2, 3, n))
    ratio = (0.5,) * n
    lf = getattr(F, f"fractional_max_pool{n}d_with_indices")
    tf = getattr(torch.nn.functional, f"fractional_max_pool{n}d_with_indices")
    ly, li = lf(lucid.tensor(x), 2, output_ratio=ratio, _random_samples=lucid.tensor(s))
    ty, ti = tf(torch.tensor(x), 2, output_ratio=ratio, _random_samples=torch.tensor(s))
    np.testing.assert_array_equal(arr(ly), arr(ty))
    np.testing.assert_array_equal(arr(li), arr(ti))
    only = getattr(F, f"fractional_max_pool{n}d")(lucid.tensor(x), 2, output_ratio=ratio,
                                                   _random_samples=lucid.tensor(s))
    np.testing.assert_array_equal(arr(only), arr(ty))


def test_random_samples_give_valid_windows():
    x = lucid.randn(4, 3, 11, 13, dtype=lucid.float64)
    y, idx = F.fractional_max_pool2d(x, 2, output_size=(6, 7), return_indices=True)
    assert y.shape == (4, 3, 6, 7) and idx.dtype == lucid.int64
    flat = arr(x).reshape(4, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, arr(idx).reshape(4, 3, -1), 2),
                                  arr(y).reshape(4, 3, -1))
    rows, cols = arr(idx) // 13, arr(idx) % 13
    assert (np.diff(rows, axis=2) >= 0).all() and (np.diff(cols, axis=3) >= 0).all()
    lucid.manual_seed(3)
    a = F.fractional_max_pool2d(x, 2, output_size=(6, 7))
    lucid.manual_seed(3)
    np.testing.assert_array_equal(arr(a), arr(F.fractional_max_pool2d(x, 2, output_size=(6, 7))))


def test_gradcheck():
    x = lucid.randn(1, 2, 7, 7, dtype=lucid.float64, requires_grad=True)
    s = lucid.rand(1, 2, 2, dtype=lucid.float64)
    assert lucid.autograd.gradcheck(
        lambda t: F.fractional_max_pool2d(t, 2, output_size=4, _random_samples=s), [x])


@pytest.mark.parametrize("n", [2, 3])
def test_modules_match_torch(torch, n):
    s = RNG.random((2, 3, n))
    x = RNG.standard_normal((2, 3) + (9,) * n)
    lm = getattr(nn, f"FractionalMaxPool{n}d")(2, output_ratio=0.5, return_indices=True,
                                               _random_samples=lucid.tensor(s))
    tm = getattr(torch.nn, f"FractionalMaxPool{n}d")(2, output_ratio=0.5, return_indices=True,
                                                     _random_samples=torch.tensor(s))
    assert repr(lm) == repr(tm)
    assert [k for k, _ in lm.named_buffers()] == [k for k, _ in tm.named_buffers()]
    (ly, li), (ty, ti) = lm(lucid.tensor(x)), tm(torch.tensor(x))
    np.testing.assert_array_equal(arr(ly), arr(ty))
    np.testing.assert_array_equal(arr(li), arr(ti))
    assert getattr(nn, f"FractionalMaxPool{n}d")(3, output_size=4)(
        lucid.tensor(x)).shape == (2, 3) + (4,) * n


def test_errors_match_torch(torch):
    def run(fw, nn):
        F = nn.functional
        x = fw.tensor(np.arange(2 * 3 * 7 * 9, dtype=np.float32).reshape(2, 3, 7, 9))
        s = fw.tensor(np.full((2, 3, 2), 0.5, dtype=np.float32))
        x3 = fw.tensor(np.zeros((2, 3, 5, 6, 7), dtype=np.float32))
        s3 = fw.tensor(np.full((2, 3, 3), 0.5, dtype=np.float32))
        return [
            catch(lambda: F.fractional_max_pool2d(x, 2)),
            catch(lambda: F.fractional_max_pool2d(x, 5, output_size=(4, 4), _random_samples=s)),
            catch(lambda: F.fractional_max_pool2d(x, (2, 10), output_size=(3, 4),
                                                  _random_samples=s)),
            catch(lambda: F.fractional_max_pool2d(x, (2, 2, 2), output_size=(3, 4),
                                                  _random_samples=s)),
            catch(lambda: F.fractional_max_pool2d(x, 2, output_size=(3, 4, 5),
                                                  _random_samples=s)),
            catch(lambda: F.fractional_max_pool2d(x, 2, output_size=(3, 4),
                                                  _random_samples=s[:1])),
            catch(lambda: F.fractional_max_pool2d(x, 2, output_size=(3, 4),
                                                  _random_samples=s[:, :2])),
            catch(lambda: F.fractional_max_pool2d(x, 2, output_size=(3, 4),
                                                  _random_samples=s[..., :1])),
            catch(lambda: F.fractional_max_pool2d(x, 2, output_size=(3, 4),
                                                  _random_samples=s[0])),
            catch(lambda: F.fractional_max_pool2d(x, 2, output_size=(3, 4),
                                                  _random_samples=s.double())),
            catch(lambda: F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5, 0.5))),
            catch(lambda: F.fractional_max_pool2d(x[:, :0], 2, output_size=(3, 4))),
            catch(lambda: tuple(F.fractional_max_pool2d(x[:0], 2, output_size=(3, 4)).shape)),
            catch(lambda: F.fractional_max_pool2d(x.unsqueeze(0), 2, output_size=(3, 4),
                                                  _random_samples=s)),
            catch(lambda: F.fractional_max_pool2d(x, 2, output_size=(-1, 4),
                                                  _random_samples=s)),
            catch(lambda: F.fractional_max_pool3d(x3, (6, 2, 2), output_size=(3, 4, 5),
                                                  _random_samples=s3)),
            catch(lambda: F.fractional_max_pool3d(x3, (2, 2), output_size=(3, 4, 5),
                                                  _random_samples=s3)),
            catch(lambda: F.fractional_max_pool3d(x3, 2, output_size=(3, 4),
                                                  _random_samples=s3)),
            catch(lambda: F.fractional_max_pool3d(x3[:, :0], 2, output_size=(3, 4, 5))),
            catch(lambda: nn.FractionalMaxPool2d(2)),
            catch(lambda: nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5)),
            catch(lambda: nn.FractionalMaxPool2d(2, output_ratio=1.5)),
            catch(lambda: nn.FractionalMaxPool3d(0, output_ratio=0.5)),
        ]

    assert run(lucid, nn) == run(torch, torch.nn)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_types_place_torchs_windows(torch: Any, dtype: str) -> None:
    rng = np.random.default_rng(5)
    for _ in range(40):
        x, u = rng.standard_normal((1, 2, 9, 9)), rng.random((1, 2, 2))
        got = lucid.nn.functional.fractional_max_pool2d(
            lucid.tensor(x, dtype=getattr(lucid, dtype)), 2, output_size=4,
            _random_samples=lucid.tensor(u, dtype=getattr(lucid, dtype)))
        want = torch.nn.functional.fractional_max_pool2d(
            torch.tensor(x, dtype=getattr(torch, dtype)), 2, output_size=4,
            _random_samples=torch.tensor(u, dtype=getattr(torch, dtype)))
        np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


def test_3d_windows_must_leave_room_as_torch() -> None:
    with pytest.raises(RuntimeError, match="pool time 2 too large relative to input time 4"):
        lucid.nn.functional.fractional_max_pool3d(lucid.ones(1, 1, 4, 4, 4), 2, output_size=3)


def test_nan_windows_pick_the_last_nan_as_torch(torch: Any) -> None:
    """torch's scan keeps taking NaN (``val > max || isnan(val)``): the last NaN of a window is
    its maximum, and the gradient goes there."""
    rng = np.random.default_rng(3)
    for _ in range(30):
        x = rng.standard_normal((1, 2, 7, 7))
        x[rng.random(x.shape) < 0.3] = np.nan
        u = rng.random((1, 2, 2))
        outs = []
        for m in (lucid, torch):
            t = m.tensor(x, requires_grad=True)
            v, i = m.nn.functional.fractional_max_pool2d(t, 2, output_size=3, return_indices=True,
                                                        _random_samples=m.tensor(u))
            v.sum().backward()
            outs.append((v.detach().numpy(), i.numpy(), np.isnan(t.grad.numpy())))
        np.testing.assert_array_equal(outs[0][0], outs[1][0])
        np.testing.assert_array_equal(outs[0][1], outs[1][1])
        np.testing.assert_array_equal(outs[0][2], outs[1][2])
