"""torch's top-level in-place functions, ``*_copy`` forms of view ops and method-as-function
names give torch's values (and write in place, or into fresh memory, as torch's do)."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

import lucid
from lucid import _function_variants as fv

X = np.array([[0.3, -0.7, 0.2], [0.9, 0.1, -0.4]])
ARGS: dict[str, Any] = {  # arguments after ``input``; the input is X unless given here
    "clamp_": (-0.5, 0.5), "clamp_max_": (0.1,), "clamp_min_": (0.1,), "clip_": (-0.2, 0.2),
    "fill_": (2.5,), "ldexp_": ("t",), "xlogy_": ("t",), "logit_": (0.05,),
    "gcd_": ("i",), "lcm_": ("i",), "addmv_": ("m", "v"), "resize_as_": ("t",),
}
POSITIVE = {"acosh_", "arccosh_", "log_", "log10_", "log2_", "log1p_", "sqrt_", "rsqrt_",
            "reciprocal_", "logit_"}


def _args(mod: Any, name: str) -> tuple[Any, list]:
    x = np.abs(X) + (1.0 if name in ("acosh_", "arccosh_") else 0.0) if name in POSITIVE else X
    if name == "logit_":
        x = np.abs(X)
    if name in ("gcd_", "lcm_"):
        return mod.tensor([[4, 6, 9]]), [mod.tensor([[6, 4, 3]])]
    if name == "addmv_":
        mat, vec = mod.tensor(X[:, :2].T.copy()), mod.tensor(X[1, :2].copy())
        return mod.tensor(X[0, :2].copy()), [mat, vec]
    args = [mod.tensor(X[::-1].copy()) if a == "t" else a for a in ARGS.get(name, ())]
    return mod.tensor(x.copy()), args


@pytest.mark.parametrize("name", fv.INPLACE)
def test_inplace_function_writes_in_place_as_torch(torch: Any, name: str) -> None:
    lx, la = _args(lucid, name)
    tx, ta = _args(torch, name)
    lo, to = getattr(lucid, name)(lx, *la), getattr(torch, name)(tx, *ta)
    assert lo is lx
    np.testing.assert_allclose(lx.numpy(), tx.numpy(), rtol=1e-6, atol=1e-12)
    assert to is tx


COPY_ARGS: dict[str, tuple] = {
    "detach_copy": (), "diagonal_copy": (), "expand_copy": ((2, 2, 3),), "permute_copy": ((1, 0),),
    "select_copy": (1, 2), "split_copy": (2, 1), "split_with_sizes_copy": ([1, 2], 1),
    "squeeze_copy": (), "t_copy": (), "transpose_copy": (0, 1), "unbind_copy": (1,),
    "unfold_copy": (1, 2, 1), "unsqueeze_copy": (0,), "view_copy": ((3, 2),), "alias_copy": (),
    "slice_copy": (1, 0, 3, 2), "narrow_copy": (1, 1, 2), "absolute": (), "detach": (),
    "put": ("idx", "src"), "resolve_neg": (), "split_with_sizes": ([1, 2], 1),
    "unsafe_chunk": (2, 1), "unsafe_split": (2, 1), "unsafe_split_with_sizes": ([2, 1], 1),
}


def _copy_args(mod: Any, name: str) -> list:
    extra = {"idx": mod.tensor([0, 4]), "src": mod.tensor([9.0, 8.0], dtype=mod.float64)}
    return [extra.get(a, a) if isinstance(a, str) else a for a in COPY_ARGS[name]]


@pytest.mark.parametrize("name", sorted(COPY_ARGS))
def test_copy_and_method_forms_match_torch(torch: Any, name: str) -> None:
    lx, tx = lucid.tensor(X.copy()), torch.tensor(X.copy())
    lo = getattr(lucid, name)(lx, *_copy_args(lucid, name))
    to = getattr(torch, name)(tx, *_copy_args(torch, name))
    louts = lo if isinstance(lo, (tuple, list)) else [lo]
    touts = to if isinstance(to, (tuple, list)) else [to]
    assert len(louts) == len(touts)
    for a, b in zip(louts, touts):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        if name.endswith("_copy"):
            # a copy shares nothing with the input: writing to it leaves the input alone
            a.fill_(7.0)
    np.testing.assert_array_equal(lx.numpy(), tx.numpy())


def test_complex_view_copies() -> None:
    x = lucid.tensor([[1.0, 2.0], [3.0, -1.0]])
    c = lucid.view_as_complex_copy(x)
    np.testing.assert_array_equal(c.numpy(), np.array([1 + 2j, 3 - 1j], np.complex64))
    r = lucid.view_as_real_copy(c)
    r.fill_(0.0)
    np.testing.assert_array_equal(c.numpy(), np.array([1 + 2j, 3 - 1j], np.complex64))


def test_signatures_name_the_input() -> None:
    assert list(inspect.signature(lucid.transpose_copy).parameters) == ["input", "dim0", "dim1",
                                                                        "out"]
