"""Errors a user sees: PyTorch's exception types and messages, never a bare numpy traceback."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

import pytest

import lucid


def _pad(m: Any) -> Callable:
    return lucid.ops.movement.pad if m is lucid else m.nn.functional.pad


def _linear(m: Any) -> Callable:
    return lucid.ops.matmul.linear if m is lucid else m.nn.functional.linear


def _i64(m: Any, *values: int) -> Any:
    return m.tensor(list(values), dtype=m.int64)


# (name, call, how lucid's message compares with torch's: "same" or "prefix")
CASES: list[tuple[str, Callable[[Any], Any], str]] = [
    # matmul family
    ("matmul_2d", lambda m: m.ones(4, 3) @ m.ones(4, 2), "same"),
    ("mm", lambda m: m.mm(m.ones(4, 3), m.ones(4, 2)), "same"),
    ("matmul_3d_2d", lambda m: m.ones(2, 4, 3) @ m.ones(4, 2), "same"),
    ("matmul_1d_1d", lambda m: m.ones(3) @ m.ones(4), "same"),
    ("matmul_2d_1d", lambda m: m.ones(3, 2) @ m.ones(4), "same"),
    ("matmul_3d_1d", lambda m: m.ones(2, 2, 3) @ m.ones(4), "same"),
    ("matmul_1d_2d", lambda m: m.ones(3) @ m.ones(4, 2), "same"),
    ("matmul_batched", lambda m: m.ones(2, 3, 4) @ m.ones(2, 5, 6), "same"),
    ("matmul_1d_3d", lambda m: m.ones(3) @ m.ones(2, 4, 5), "same"),
    ("matmul_batch_bcast", lambda m: m.ones(2, 2, 3, 4) @ m.ones(3, 4, 6), "same"),
    ("matmul_bcast_first", lambda m: m.ones(2, 2, 3, 4) @ m.ones(3, 5, 6), "same"),
    ("matmul_0d", lambda m: m.ones(()) @ m.ones(3), "same"),
    ("matmul_dtypes", lambda m: m.ones(2, 2) @ m.ones(2, 2, dtype=m.float64), "same"),
    ("matmul_int_float", lambda m: m.ones(2, 2, dtype=m.int64) @ m.ones(2, 2), "same"),
    ("bmm", lambda m: m.bmm(m.ones(2, 3, 4), m.ones(3, 4, 5)), "same"),
    ("bmm_2d", lambda m: m.bmm(m.ones(3, 4), m.ones(4, 5)), "prefix"),
    ("dot", lambda m: m.dot(m.ones(3), m.ones(4)), "same"),
    ("mm_3d", lambda m: m.mm(m.ones(2, 3, 4), m.ones(4, 2)), "prefix"),
    ("linear", lambda m: _linear(m)(m.ones(4, 3), m.ones(2, 4)), "same"),
    # broadcasting
    ("add_bcast", lambda m: m.ones(2, 3) + m.ones(4), "same"),
    ("mul_bcast", lambda m: m.ones(2, 3) * m.ones(2, 2), "same"),
    ("div_bcast", lambda m: m.ones(2, 3) / m.ones(4), "same"),
    ("floordiv_bcast", lambda m: m.ones(2, 3) // m.ones(4), "same"),
    ("pow_bcast", lambda m: m.ones(2, 3) ** m.ones(4), "same"),
    ("lt_bcast", lambda m: m.ones(2, 3) < m.ones(4), "same"),
    ("maximum_bcast", lambda m: m.maximum(m.ones(3), m.ones(4)), "same"),
    ("where_bcast", lambda m: m.where(m.ones(2, 3) > 0, m.ones(4), m.ones(2, 3)), "same"),
    ("clamp_bcast", lambda m: m.ones(2, 3).clamp(min=m.zeros(4)), "same"),
    ("masked_fill_bcast", lambda m: m.ones(2, 3).masked_fill(m.ones(4, dtype=m.bool), 0.0),
     "same"),
    ("add__bcast", lambda m: m.ones(2, 3).add_(m.ones(4)), "same"),
    ("add__grow", lambda m: m.ones(3).add_(m.ones(2, 3)), "same"),
    ("copy__bcast", lambda m: m.ones(2, 3).copy_(m.ones(4)), "same"),
    ("setitem_view_bcast", lambda m: m.ones(2, 3).__setitem__(0, m.ones(4)), "same"),
    ("setitem_adv_bcast", lambda m: m.ones(4, 3).__setitem__(_i64(m, 0, 1), m.ones(3, 3)),
     "same"),
    ("expand", lambda m: m.ones(2, 3).expand(4, 3), "same"),
    ("expand_fewer", lambda m: m.ones(2, 3).expand(3), "same"),
    # autograd
    ("backward_non_scalar", lambda m: (m.ones(2, requires_grad=True) * 2).backward(), "same"),
    ("backward_no_grad", lambda m: (m.ones(2) * 2).sum().backward(), "same"),
    ("leaf_inplace", lambda m: m.ones(2, requires_grad=True).add_(1), "same"),
    ("numpy_requires_grad", lambda m: m.ones(2, requires_grad=True).numpy(), "same"),
    ("requires_grad_int", lambda m: m.ones(2, dtype=m.int64).requires_grad_(), "prefix"),
    ("requires_grad_nonleaf", lambda m: (m.ones(1, requires_grad=True) * 2).requires_grad_(
        False), "same"),
    # dims
    ("sum_dim", lambda m: m.ones(2, 3).sum(3), "same"),
    ("sum_neg_dim", lambda m: m.ones(2, 3).sum(-3), "same"),
    ("mean_dim", lambda m: m.ones(2, 3).mean(dim=5), "same"),
    ("max_dim", lambda m: m.ones(2, 3).max(dim=2), "same"),
    ("argmax_dim", lambda m: m.ones(2, 3).argmax(dim=2), "same"),
    ("cat_dim", lambda m: m.cat([m.ones(2, 3), m.ones(2, 3)], 2), "same"),
    ("transpose_dim", lambda m: m.ones(2, 3).transpose(0, 2), "same"),
    ("unsqueeze_dim", lambda m: m.ones(2, 3).unsqueeze(3), "same"),
    ("squeeze_dim", lambda m: m.ones(2, 3).squeeze(5), "same"),
    ("size_dim", lambda m: m.ones(2, 3).size(2), "same"),
    ("cumsum_dim", lambda m: m.ones(2, 3).cumsum(2), "same"),
    ("zero_dim_tensor_dim", lambda m: m.ones(()).sum(1), "same"),
    ("var_dim", lambda m: m.ones(2, 3).var(2), "same"),
    ("permute_dim", lambda m: m.ones(2, 3).permute(0, 5), "same"),
    ("flip_dim", lambda m: m.ones(2, 3).flip(3), "same"),
    ("gather_dim", lambda m: m.ones(2, 3).gather(2, m.zeros(2, 3, dtype=m.int64)), "same"),
    ("softmax_like_dim", lambda m: m.ones(2, 3).logsumexp(4), "same"),
    ("duplicate_dims", lambda m: m.ones(2, 3).sum((0, 0)), "same"),
    # dtypes named in the message
    ("mean_int", lambda m: m.tensor([1, 2]).mean(), "same"),
    ("var_int", lambda m: m.tensor([1, 2]).var(), "same"),
    ("where_cond_float", lambda m: m.where(m.ones(2), m.ones(2), m.ones(2)), "same"),
    ("where_cond_long", lambda m: m.where(_i64(m, 1, 0), m.ones(2), m.ones(2)), "same"),
    ("masked_fill_float_mask", lambda m: m.ones(2).masked_fill(m.ones(2), 0.0), "same"),
    ("add__float_into_long", lambda m: m.tensor([1, 2]).add_(1.5), "same"),
    ("exp__into_long", lambda m: m.tensor([1, 2]).exp_(), "same"),
    ("neg_bool", lambda m: -m.tensor([True]), "same"),
    ("sub_bool", lambda m: m.tensor([True]) - m.tensor([False]), "same"),
    ("sub_bool_int", lambda m: m.tensor([True]) - 1, "same"),
    ("invert_float", lambda m: ~m.ones(2), "same"),
    ("int_neg_pow", lambda m: m.tensor([2]) ** -1, "same"),
    ("index_float", lambda m: m.ones(3)[m.tensor([0.0])], "same"),
    ("index_select_float", lambda m: m.ones(3).index_select(0, m.tensor([0.0])), "same"),
    # indexing
    ("index_oob", lambda m: m.ones(3)[5], "same"),
    ("index_oob_dim1", lambda m: m.ones(3, 2)[1, 5], "same"),
    ("too_many_indices", lambda m: m.ones(3)[0, 0], "same"),
    ("mask_shape", lambda m: m.ones(3)[m.tensor([True, False])], "same"),
    ("mask_shape_dim1", lambda m: m.ones(3, 2, 4)[:, m.tensor([True, False, True])], "same"),
    ("mask_shape_none", lambda m: m.ones(3, 2)[None, m.ones(3, 3, dtype=m.bool)], "same"),
    ("index_select_oob", lambda m: m.ones(3).index_select(0, _i64(m, 3)), "prefix"),
    ("index_select_2d", lambda m: m.ones(4).index_select(0, m.zeros(2, 2, dtype=m.int64)),
     "same"),
    ("gather_oob", lambda m: m.ones(3).gather(0, _i64(m, 3)), "same"),
    ("gather_bigger", lambda m: m.ones(2, 3).gather(1, m.zeros(3, 3, dtype=m.int64)), "same"),
    ("gather_ndim", lambda m: m.ones(2, 3).gather(1, m.zeros(3, dtype=m.int64)), "same"),
    ("scatter_oob", lambda m: m.zeros(3).scatter(0, _i64(m, 5), m.ones(1)), "same"),
    # shapes
    ("reshape", lambda m: m.ones(2, 3).reshape(4, 2), "same"),
    ("reshape_two_minus_one", lambda m: m.ones(2, 3).reshape(-1, -1), "same"),
    ("view_non_contiguous", lambda m: m.ones(2, 3).T.view(6), "same"),
    ("view_size", lambda m: m.ones(2, 3).view(5), "same"),
    ("unflatten", lambda m: m.ones(6).unflatten(0, (4, -1)), "same"),
    ("cat_shapes", lambda m: m.cat([m.ones(2, 3), m.ones(2, 4)]), "same"),
    ("cat_ndim", lambda m: m.cat([m.ones(2, 3), m.ones(3)]), "same"),
    ("cat_empty", lambda m: m.cat([]), "same"),
    ("stack_shapes", lambda m: m.stack([m.ones(2, 3), m.ones(2, 4)]), "same"),
    ("stack_empty", lambda m: m.stack([]), "same"),
    ("permute_len", lambda m: m.ones(2, 3).permute(0), "same"),
    ("permute_dup", lambda m: m.ones(2, 3).permute(0, 0), "same"),
    ("split_sizes", lambda m: m.ones(5).split([2, 2]), "same"),
    ("split_zero", lambda m: m.ones(4).split(0), "same"),
    ("repeat_fewer", lambda m: m.ones(2, 3).repeat(2), "same"),
    ("repeat_negative", lambda m: m.ones(2).repeat(-1), "same"),
    ("narrow", lambda m: m.ones(3).narrow(0, 2, 3), "same"),
    ("flatten_order", lambda m: m.ones(2, 3).flatten(1, 0), "same"),
    ("t_3d", lambda m: m.ones(2, 3, 4).t(), "same"),
    ("mT_1d", lambda m: m.ones(3).mT, "same"),
    ("topk", lambda m: m.ones(3).topk(4), "same"),
    ("chunk_zero", lambda m: m.ones(3).chunk(0), "same"),
    ("pad_odd", lambda m: _pad(m)(m.ones(2, 3), (1,)), "same"),
    ("pad_too_long", lambda m: _pad(m)(m.ones(3), (1, 1, 1, 1)), "same"),
    ("pad_mode", lambda m: _pad(m)(m.ones(1, 3), (1, 1), mode="foo"), "same"),
    # values and creation
    ("item_many", lambda m: m.ones(2).item(), "same"),
    ("item_empty", lambda m: m.ones(0).item(), "same"),
    ("bool_many", lambda m: bool(m.ones(2)), "same"),
    ("len_0d", lambda m: len(m.ones(())), "same"),
    ("iter_0d", lambda m: iter(m.ones(())), "same"),
    ("max_empty", lambda m: m.ones(0).max(), "same"),
    ("amax_empty_dim", lambda m: m.ones(0, 3).amax(0), "same"),
    ("argmax_empty", lambda m: m.ones(0).argmax(), "same"),
    ("clamp_none", lambda m: m.ones(2).clamp(), "same"),
    ("div_rounding_mode", lambda m: m.div(m.ones(2), m.ones(2), rounding_mode="bad"), "same"),
    ("ragged_list", lambda m: m.tensor([[1, 2], [3]]), "same"),
    ("full_str", lambda m: m.full((2,), "a"), "same"),
    ("negative_size", lambda m: m.empty(-1), "same"),
    ("arange_sign", lambda m: m.arange(0, 5, -1), "same"),
    ("randint_range", lambda m: m.randint(5, 2, (3,)), "same"),
    ("set_default_int", lambda m: m.set_default_dtype(m.int64), "prefix"),
    ("grad_unused", lambda m: m.autograd.grad(
        (m.ones(2, requires_grad=True) * 2).sum(), [m.ones(2, requires_grad=True)]), "same"),
]


def _raise(fn: Callable, m: Any) -> BaseException:
    with pytest.raises(Exception) as info:
        fn(m)
    return info.value


@pytest.mark.parity
@pytest.mark.parametrize("name,fn,mode", CASES, ids=[c[0] for c in CASES])
def test_error_matches_torch(torch: Any, name: str, fn: Callable, mode: str) -> None:
    ours, theirs = _raise(fn, lucid), _raise(fn, torch)
    assert type(ours) is type(theirs), f"{type(ours).__name__}: {ours}"
    want = str(theirs).replace("torch.", "lucid.")
    if mode == "same":
        assert str(ours) == want
    else:
        assert str(ours).startswith(want)


@pytest.mark.parametrize("name,fn,mode", CASES, ids=[c[0] for c in CASES])
def test_error_is_raised_by_lucid_not_numpy(name: str, fn: Callable, mode: str) -> None:
    err = _raise(fn, lucid)
    frames = traceback.extract_tb(err.__traceback__)
    assert "numpy" not in frames[-1].filename.replace("\\", "/").split("/"), \
        f"raised inside numpy: {type(err).__name__}: {err}"
    assert "operands could not be broadcast" not in str(err)
    assert "axis" not in str(err)


# ---- lucid-specific messages --------------------------------------------------------------------


def test_matmul_message_names_both_shapes() -> None:
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(4x3 and 4x2\)"):
        lucid.ones(4, 3) @ lucid.ones(4, 2)


def test_broadcast_message_names_both_sizes() -> None:
    with pytest.raises(RuntimeError, match=r"size of tensor a \(3\) must match the size of "
                                           r"tensor b \(4\) at non-singleton dimension 1"):
        lucid.ones(2, 3) + lucid.ones(4)


def test_dim_message() -> None:
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                                         r"\[-2, 1\], but got 3\)"):
        lucid.ones(2, 3).sum(3)


@pytest.mark.parametrize("fn", [
    lambda a, b: a + b, lambda a, b: a @ b, lambda a, b: lucid.cat([a, b]),
    lambda a, b: lucid.where(a > 0, a, b), lambda a, b: lucid.maximum(a, b),
    lambda a, b: a == b, lambda a, b: a.clamp(b), lambda a, b: lucid.ops.matmul.linear(a, b),
    lambda a, b: a.masked_fill(b > 0, 1.0), lambda a, b: a[b.long()],
    lambda a, b: a.gather(0, b.long()), lambda a, b: a.index_select(0, b.long().flatten()),
])
def test_mixing_devices(fn: Callable) -> None:
    a = lucid.zeros(2, 2)
    b = lucid.zeros(2, 2, device="numpy")
    with pytest.raises(RuntimeError, match="same device|on the same device as the indexed"):
        fn(a, b)


def test_mixing_devices_message() -> None:
    with pytest.raises(RuntimeError) as e:
        lucid.ones(2) * lucid.ones(2, device="numpy")
    assert str(e.value) == ("Expected all tensors to be on the same device, but found at least "
                            "two devices, cpu and numpy!")


def test_copy_across_devices_is_allowed() -> None:
    dst = lucid.zeros(2)
    dst.copy_(lucid.ones(2, device="numpy"))
    assert dst.device == "cpu" and dst.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("fn,dtype_name", [
    (lambda: lucid.zeros(2, dtype=lucid.int64, requires_grad=True), "int64"),
    (lambda: lucid.tensor([1, 2], dtype=lucid.uint8).requires_grad_(), "uint8"),
    (lambda: lucid.tensor([1], dtype=np_timedelta()), "timedelta64"),
    (lambda: lucid.ones(2) & lucid.ones(2), "float32"),
    (lambda: lucid.ones(2, dtype=lucid.float64).bitwise_not(), "float64"),
])
def test_wrong_dtype_errors_name_the_dtype(fn: Callable, dtype_name: str) -> None:
    with pytest.raises((RuntimeError, TypeError), match=dtype_name):
        fn()


def np_timedelta() -> Any:
    import numpy as np

    return np.timedelta64


def test_unknown_device() -> None:
    with pytest.raises(RuntimeError, match="unknown device 'tpu'"):
        lucid.ones(2, device="tpu")


def test_freed_graph_message() -> None:
    x = lucid.ones(2, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        y.backward()
