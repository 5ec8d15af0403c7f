"""lucid.testing.assert_close and make_tensor: PyTorch's tolerances, checks and messages."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import lucid
from lucid.testing import assert_close, default_tolerances, make_tensor

NAN, INF = math.nan, math.inf

# (actual, expected, kwargs) as plain Python data: built as lucid and torch tensors below
CASES = [
    ([1.0, 2.0, 3.0, 4.0], [1.0, 2.5, 3.0, 5.0], {}),
    ([1.0, 2.0], [1.0, 2.0 + 1e-6], {}),
    ([[1.0, NAN]], [[1.0, NAN]], {}),
    ([[1.0, NAN]], [[1.0, NAN]], {"equal_nan": True}),
    ([1.0, INF], [1.0, INF], {}),
    ([1.0, INF], [1.0, -INF], {}),
    ([0.0, 1.0], [1e-3, 1.0], {}),
    ([0.0, 1.0], [1e-3, 1.0], {"rtol": 0.0, "atol": 1e-2}),
    ([[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.5, 4.0]], {"msg": "custom"}),
    ([1.0, 2.0], [1.5, 2.0], {"msg": lambda m: "Outputs" + m[len("Tensor-likes"):]}),
]


def _run(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the outcome is compared
        return type(e).__name__, str(e).replace("torch.", "lucid.").replace(
            "lucid._tensor.Tensor", "lucid.Tensor")
    return None


@pytest.mark.parametrize("actual,expected,kw", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_tensor_outcomes_match_torch(torch, actual, expected, kw, dtype):
    mine = _run(assert_close, lucid.tensor(actual, dtype=getattr(lucid, dtype)),
                lucid.tensor(expected, dtype=getattr(lucid, dtype)), **kw)
    ref = _run(torch.testing.assert_close, torch.tensor(actual, dtype=getattr(torch, dtype)),
               torch.tensor(expected, dtype=getattr(torch, dtype)), **kw)
    assert mine == ref


@pytest.mark.parametrize("make", [
    lambda m: (m.tensor([1, 2]), m.tensor([1, 3])),
    lambda m: (m.tensor([True, False]), m.tensor([True, True])),
    lambda m: (m.tensor(1.0), m.tensor(2.0)),
    lambda m: (m.tensor([1.0, 2.0]), m.tensor([1.0, 2.0], dtype=m.float64)),
    lambda m: (m.zeros(2, 3), m.zeros(3, 2)),
    lambda m: (m.tensor([1, 2]), m.tensor([1.0, 2.0])),
    lambda m: (m.zeros(0), m.zeros(0)),
    lambda m: ([m.tensor([1.0])], [m.tensor([1.5])]),
    lambda m: ([m.tensor([1.0])], [m.tensor([1.0]), m.tensor([1.0])]),
    lambda m: ({"w": m.tensor([1.0]), "b": m.tensor([2.0])},
               {"w": m.tensor([1.0]), "b": m.tensor([2.5])}),
    lambda m: ({"x": m.tensor([1.0])}, {"y": m.tensor([1.0])}),
    lambda m: (1, 1.0), lambda m: (1, 2), lambda m: (1.0, 1.1), lambda m: (True, False),
    lambda m: (NAN, NAN), lambda m: ((1.0, 2.0), [1.0, 2.0]), lambda m: (None, None),
    lambda m: (m.tensor([1.0]), None), lambda m: (m.tensor([1.0]), 1.0),
    lambda m: ("a", "a"),
])
def test_other_inputs_match_torch(torch, make):
    assert _run(assert_close, *make(lucid)) == _run(torch.testing.assert_close, *make(torch))


def test_check_flags_and_tolerance_arguments(torch):
    a = lucid.tensor([1, 2])
    assert _run(assert_close, a, lucid.tensor([1.0, 2.0]), check_dtype=False) is None
    for kw in ({"rtol": 1e-3}, {"atol": 1e-3}):
        assert _run(assert_close, a, a, **kw) == _run(
            torch.testing.assert_close, torch.tensor([1, 2]), torch.tensor([1, 2]), **kw)
    p = lucid.nn.Parameter(lucid.tensor([1.0]))
    assert _run(assert_close, lucid.tensor([1.0]), p) is None
    mine = _run(assert_close, lucid.tensor([1.0]), p, allow_subclasses=False)
    assert mine[0] == "TypeError" and "No comparison pair" in mine[1]


def test_messages_without_torch():
    with pytest.raises(AssertionError, match=r"(?s)^Tensor-likes are not close!\n\n"
                       r"Mismatched elements: 2 / 4 \(50\.0%\)\n"
                       r"Greatest absolute difference: 1\.0 at index \(3,\) \(up to 1e-05 "
                       r"allowed\)\nGreatest relative difference: 0\.2000000029802322\d* at "
                       r"index \(1,\) \(up to 1\.3e-06 allowed\)$"):
        assert_close(lucid.tensor([1.0, 2, 3, 4]), lucid.tensor([1.0, 2.5, 3, 5]))
    with pytest.raises(AssertionError, match="The values for attribute 'dtype' do not match: "
                       "lucid.float32 != lucid.float64."):
        assert_close(lucid.zeros(2), lucid.zeros(2, dtype=lucid.float64))
    with pytest.raises(AssertionError, match=r"item \['b'\]$"):
        assert_close({"a": lucid.zeros(1), "b": lucid.zeros(1)},
                     {"a": lucid.zeros(1), "b": lucid.ones(1)})
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"):
        assert_close(lucid.zeros(1), lucid.zeros(1), rtol=0.1)
    assert_close(lucid.tensor([1.0, 2.0]), lucid.tensor([1.0, 2.0 + 1e-6]))  # within 1.3e-6
    assert_close(np.array([1.0, NAN]), np.array([1.0, NAN]), equal_nan=True)


def test_device_check():
    pytest.importorskip("mlx")
    a = lucid.zeros(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "gpu" may run on MLX's CPU stream here
        b = lucid.zeros(2, device="gpu")
    with pytest.raises(AssertionError, match="attribute 'device' do not match: cpu != gpu"):
        assert_close(a, b)
    assert_close(a, b, check_device=False)


def test_default_tolerances_table(torch):
    for name in ("float16", "float32", "float64", "int64", "bool", "uint8", "bfloat16",
                 "complex64", "complex128"):
        ours = getattr(lucid, name if name != "bool" else "bool")
        assert default_tolerances(ours) == \
            torch.testing._comparison.default_tolerances(getattr(torch, name))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "int8",
                                   "uint8", "bool"])
def test_make_tensor_ranges(dtype):
    dt = getattr(lucid, dtype)
    x = make_tensor(40, 50, dtype=dt, device="cpu")
    v = x.numpy().astype(np.float64)
    assert x.dtype is dt and tuple(x.shape) == (40, 50)
    lo, hi = {"bool": (0, 1), "uint8": (0, 9)}.get(dtype, (-9, 9))
    assert v.min() >= lo and v.max() <= hi
    if dt.is_floating_point:
        assert v.max() < 9 and len(np.unique(v)) > 100
    else:
        assert set(np.unique(v)) == set(range(lo, hi + 1))
    y = make_tensor((3, 4), dtype=dt, device="cpu", low=0 if dtype == "bool" else 1,
                    high=2, exclude_zero=True)
    assert (y.numpy() != 0).all()


def test_make_tensor_options_and_errors(torch):
    x = make_tensor(3, 4, dtype=lucid.float64, device="cpu", noncontiguous=True,
                    requires_grad=True, low=-1, high=1)
    assert tuple(x.shape) == (3, 4) and not x.is_contiguous() and x.requires_grad
    assert ((x.detach().numpy() >= -1) & (x.detach().numpy() < 1)).all()
    lucid.manual_seed(3)
    a = make_tensor(5, dtype=lucid.float32, device="cpu")
    lucid.manual_seed(3)
    assert lucid.equal(a, make_tensor(5, dtype=lucid.float32, device="cpu"))
    for kw in ({"low": 2, "high": 1}, {"low": NAN}, {"requires_grad": True},
               {"low": 300, "high": 400}):
        dt, tdt = (lucid.uint8, torch.uint8) if "high" in kw and kw["high"] == 400 or \
            "requires_grad" in kw else (lucid.float32, torch.float32)
        mine = _run(make_tensor, 2, dtype=dt, device="cpu", **kw)
        ref = _run(torch.testing.make_tensor, 2, dtype=tdt, device="cpu", **kw)
        assert mine[0] == ref[0] and mine[1].split(",")[0] == ref[1].split(",")[0]


def test_complex_and_bfloat16_match_torch(torch):
    re_, im = [1.0, -2.0, 0.5], [0.5, 1.0, -3.0]
    for dt in ("complex64", "complex128"):
        a = lucid.complex(lucid.tensor(re_), lucid.tensor(im)).to(getattr(lucid, dt))
        ta = torch.complex(torch.tensor(re_), torch.tensor(im)).to(getattr(torch, dt))
        mine = _run(assert_close, a, a + 0.1)
        ref = _run(torch.testing.assert_close, ta, ta + 0.1)
        assert mine[1].split("\n")[:3] == ref[1].split("\n")[:3]
        assert _run(assert_close, a, a.clone()) is None
    x = make_tensor(4, dtype=lucid.complex64, device="cpu", low=-1, high=1)
    v = x.numpy()
    assert x.dtype is lucid.complex64 and (np.abs(v.real) < 1).all() and (np.abs(v.imag) < 1).all()
    b = lucid.tensor([1.0, 2.0], dtype=lucid.bfloat16)
    assert _run(assert_close, b, lucid.tensor([1.0, 2.02], dtype=lucid.bfloat16)) == _run(
        torch.testing.assert_close, torch.tensor([1.0, 2.0], dtype=torch.bfloat16),
        torch.tensor([1.0, 2.02], dtype=torch.bfloat16))
