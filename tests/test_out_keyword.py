"""``out=`` on lucid's top-level functions, as torch: the result is written into ``out`` (cast
by torch's rule, resized with torch's warning), ``out`` is returned, tuples for functions
with several results, and no graph is recorded (refused where an input requires grad)."""

from __future__ import annotations

import inspect
import warnings
from typing import Any

import numpy as np
import pytest

import lucid
from lucid._out import OUT_FUNCTIONS


def _run(mod: Any) -> list:
    got = []
    a = mod.tensor([1.0, 2.0, 3.0])
    o = mod.empty(3)
    got.append(mod.add(a, a, out=o) is o)
    got.append(o.tolist())
    small = mod.zeros(1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        mod.mul(a, a, out=small)
    got += [small.tolist(), len(w), "resized" in str(w[0].message)]
    wide = mod.zeros(3, dtype=mod.float64)
    mod.add(mod.tensor([1, 2, 3]), 1, out=wide)
    got += [wide.tolist(), str(wide.dtype).split(".")[-1]]
    v, i = mod.zeros(3), mod.zeros(3, dtype=mod.int64)
    r = mod.sort(mod.tensor([3.0, 1.0, 2.0]), out=(v, i))
    got += [v.tolist(), i.tolist(), r[0] is v]
    z = mod.full((2,), 7.0)
    mod.zeros(2, out=z)
    got.append(z.tolist())
    x = mod.empty(4)
    mod.arange(4, out=x)
    got.append(x.tolist())
    m = mod.empty(0)
    mod.matmul(mod.ones(2, 3), mod.ones(3, 2), out=m)
    got.append(m.tolist())
    return got


def test_out_writes_as_torch(torch: Any) -> None:
    assert _run(lucid) == _run(torch)


def test_out_refusals_match_torch(torch: Any) -> None:
    for mod in (lucid, torch):
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
            mod.add(mod.tensor([1.0]), 1.0, out=mod.zeros(1, dtype=mod.int64))
        g = mod.tensor([1.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
            mod.exp(g, out=mod.empty(1))
        with mod.no_grad():
            assert mod.exp(g, out=mod.empty(1)).requires_grad is False


def test_every_out_function_declares_out() -> None:
    for name in OUT_FUNCTIONS:
        fn = getattr(lucid, name, None)
        if fn is None:
            continue
        assert "out" in inspect.signature(fn).parameters, name


@pytest.mark.parametrize("device", ["cpu", "numpy", "gpu"])
def test_out_on_every_device(device: str) -> None:
    if device == "gpu":
        pytest.importorskip("mlx")
    o = lucid.empty(2, 2, device=device)
    lucid.mm(lucid.eye(2, device=device), lucid.ones(2, 2, device=device), out=o)
    np.testing.assert_array_equal(o.numpy(), np.ones((2, 2)))
    with pytest.raises(RuntimeError, match="Expected out tensor to have device"):
        lucid.exp(lucid.ones(2, device=device),
                  out=lucid.empty(2, device="numpy" if device != "numpy" else "cpu"))


def test_out_in_the_other_namespaces_matches_torch(torch: Any) -> None:
    def run(m: Any) -> list:
        det, expit = m.empty(()), m.empty(2)
        m.linalg.det(m.eye(2) * 3, out=det)
        m.special.expit(m.ones(2), out=expit)
        spec = m.empty(2, dtype=m.complex64)
        m.fft.fft(m.ones(2), out=spec)
        P, L, U = m.empty(2, 2), m.empty(2, 2), m.empty(2, 2)
        m.lu_unpack(*m.linalg.lu_factor(m.eye(2) * 2), out=(P, L, U))
        return [det.item(), expit.tolist(), spec.tolist(), U.tolist()]
    assert run(lucid) == run(torch)
