"""Tensor basics: dtypes, creation, conversion, shape queries, comparisons and repr."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

import lucid

# ---- dtypes -------------------------------------------------------------------------------------


def test_dtype_aliases() -> None:
    assert lucid.long is lucid.int64
    assert lucid.int is lucid.int32
    assert lucid.float is lucid.float32
    assert lucid.double is lucid.float64
    assert lucid.half is lucid.float16
    assert lucid.bool.name == "bool"
    assert lucid.short is lucid.int16
    assert repr(lucid.float32) == "lucid.float32"


def test_dtype_comparisons_and_properties() -> None:
    assert lucid.float32 == np.float32 and lucid.float32 == "float32"
    assert lucid.float32 != lucid.float64
    assert lucid.float64.is_floating_point and not lucid.int64.is_floating_point
    assert lucid.float16.itemsize == 2 and lucid.int64.itemsize == 8
    assert lucid.int8.is_signed and not lucid.uint8.is_signed
    assert {lucid.float32: 1}[lucid.float32] == 1


@pytest.mark.parametrize("data,expected", [
    (1.5, lucid.float32), (1, lucid.int64), (True, lucid.bool), ([1, 2], lucid.int64),
    ([1, 2.5], lucid.float32), ([[True, False]], lucid.bool), ([], lucid.float32),
    (np.arange(3, dtype=np.int32), lucid.int32), (np.zeros(2), lucid.float64),
    (np.zeros(2, np.float16), lucid.float16), (np.zeros(2, np.uint8), lucid.uint8),
    (np.float64(2.0), lucid.float64),
])
def test_inferred_dtype(data: Any, expected: lucid.dtype) -> None:
    assert lucid.tensor(data).dtype is expected


@pytest.mark.parametrize("spec", [lucid.float64, "float64", np.float64, "double"])
def test_dtype_argument_forms(spec: Any) -> None:
    assert lucid.tensor([1, 2], dtype=spec).dtype is lucid.float64


def test_python_type_as_dtype() -> None:
    assert lucid.tensor([1, 2], dtype=float).dtype is lucid.float32
    assert lucid.tensor([1.7], dtype=int).dtype is lucid.int64
    assert lucid.tensor([1.7], dtype=int).item() == 1


def test_unsupported_dtype_names_it() -> None:
    with pytest.raises(TypeError, match="timedelta64"):
        lucid.tensor([1], dtype=np.timedelta64)
    with pytest.raises(TypeError, match="<U1"):
        lucid.from_numpy(np.array(["a"]))


def test_default_dtype() -> None:
    lucid.set_default_dtype(lucid.float64)
    assert lucid.tensor([1.0]).dtype is lucid.float64
    assert lucid.zeros(2).dtype is lucid.float64
    assert lucid.tensor([1]).dtype is lucid.int64
    lucid.set_default_dtype(lucid.float32)
    with pytest.raises(TypeError):
        lucid.set_default_dtype(lucid.int64)


@pytest.mark.parametrize("dtype", [lucid.int64, lucid.int32, lucid.bool, lucid.uint8])
def test_only_floating_tensors_require_grad(dtype: lucid.dtype) -> None:
    with pytest.raises(RuntimeError, match="floating point") as e:
        lucid.zeros(2, dtype=dtype, requires_grad=True)
    assert dtype.name in str(e.value)
    with pytest.raises(RuntimeError, match="floating point"):
        lucid.tensor([1, 2], dtype=dtype).requires_grad_()
    with pytest.raises(RuntimeError, match="floating point"):
        lucid.ones(2, dtype=dtype).requires_grad = True


def test_promote_types() -> None:
    assert lucid.promote_types(lucid.int32, lucid.int64) is lucid.int64
    assert lucid.promote_types(lucid.uint8, lucid.int8) is lucid.int16
    assert lucid.promote_types(lucid.bool, lucid.uint8) is lucid.uint8
    assert lucid.promote_types(lucid.float16, lucid.int64) is lucid.float16
    assert lucid.promote_types(lucid.float16, lucid.float32) is lucid.float32


# ---- creation -----------------------------------------------------------------------------------


def test_tensor_copies_and_as_tensor_shares() -> None:
    a = np.arange(4.0)
    copied, shared, from_np = lucid.tensor(a), lucid.as_tensor(a), lucid.from_numpy(a)
    a[0] = 9.0
    assert copied[0].item() == 0.0
    assert shared[0].item() == 9.0 and from_np[0].item() == 9.0
    from_np[1] = 5.0
    assert a[1] == 5.0
    assert lucid.as_tensor(copied) is copied


def test_from_numpy_rejects_non_arrays() -> None:
    with pytest.raises(TypeError, match="expected np.ndarray"):
        lucid.from_numpy([1, 2])


def test_tensor_from_nested_tensors() -> None:
    t = lucid.tensor([lucid.tensor(1.0), lucid.tensor(2.5)])
    assert t.tolist() == [1.0, 2.5] and t.dtype is lucid.float32


def _nested(depth: int, leaf: Any = 1.0) -> Any:
    x = leaf
    for _ in range(depth):
        x = [x]
    return x


def test_deepest_nesting_a_tensor_can_hold() -> None:
    t = lucid.tensor(_nested(64))
    assert t.ndim == 64 and t.numel() == 1 and t.reshape(-1).tolist() == [1.0]


@pytest.mark.parametrize("build", [
    lambda: _nested(65), lambda: _nested(10_000), lambda: (_nested(10_000),),
    lambda: [lucid.tensor(1.0), _nested(10_000)], lambda: [[1.0], [_nested(10_000)]][1],
], ids=["65", "10k", "10k_tuple", "10k_beside_a_tensor", "10k_second"])
def test_too_deep_nesting_is_a_clear_value_error(build: Any) -> None:
    """torch: ValueError "too many dimensions 'list'" (its limit is 200 dims, lucid's numpy's
    64); never a RecursionError."""
    with pytest.raises(ValueError, match=r"^too many dimensions '(list|tuple)'"):
        lucid.tensor(build())


@pytest.mark.parametrize("data", [[1.0, _nested(10_000)], [[1.0, 2.0], [3.0, [4.0]]]],
                         ids=["deep_beside_a_number", "list_where_a_number_belongs"])
def test_a_sequence_where_a_number_belongs(data: Any) -> None:
    with pytest.raises(TypeError, match="^must be real number, not list$"):
        lucid.tensor(data)


def test_nesting_errors_match_torch(torch: Any) -> None:
    for data in ([1.0, _nested(10_000)], [[1.0, 2.0], [3.0, [4.0]]], _nested(10_000)):
        got = []
        for m in (lucid, torch):
            with pytest.raises(Exception) as info:
                m.tensor(data)
            got.append((type(info.value), str(info.value).split(" (")[0]))
        assert got[0] == got[1]


@pytest.mark.parametrize("fn,value", [(lucid.zeros, 0.0), (lucid.ones, 1.0)])
def test_zeros_ones(fn: Any, value: float) -> None:
    for t in (fn(2, 3), fn((2, 3)), fn([2, 3])):
        assert t.shape == (2, 3) and t.dtype is lucid.float32
        assert np.all(t.numpy() == value)
    assert fn(2, dtype=lucid.int32).dtype is lucid.int32
    assert fn(()).shape == () and fn(0, 2).numel() == 0


def test_full_empty_eye() -> None:
    assert lucid.full((2,), 3).dtype is lucid.int64
    assert lucid.full((2,), 3.5).tolist() == [3.5, 3.5]
    assert lucid.full((2,), True).dtype is lucid.bool
    assert lucid.empty(2, 3).shape == (2, 3)
    np.testing.assert_array_equal(lucid.eye(2, 3).numpy(), np.eye(2, 3, dtype=np.float32))
    assert lucid.eye(3, dtype=lucid.int64).dtype is lucid.int64


def test_arange_linspace() -> None:
    assert lucid.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert lucid.arange(5).dtype is lucid.int64
    assert lucid.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
    np.testing.assert_allclose(lucid.arange(0, 1, 0.25).numpy(), [0, 0.25, 0.5, 0.75])
    assert lucid.arange(0.5, 3).dtype is lucid.float32
    assert lucid.arange(0, 1, 0.1).shape == (10,)
    np.testing.assert_allclose(lucid.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5))
    assert lucid.linspace(0, 10, 5, dtype=lucid.int64).tolist() == [0, 2, 5, 7, 10]
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        lucid.arange(0, 3, 0)


def test_like_functions() -> None:
    x = lucid.tensor([[1, 2]], dtype=lucid.int32)
    for fn in (lucid.zeros_like, lucid.ones_like, lucid.empty_like):
        y = fn(x)
        assert y.shape == x.shape and y.dtype is lucid.int32 and y.device == x.device
    assert lucid.zeros_like(x).tolist() == [[0, 0]]
    assert lucid.ones_like(x, dtype=lucid.float64).dtype is lucid.float64
    assert lucid.full_like(x, 7).tolist() == [[7, 7]]
    xn = lucid.ones(2, device="numpy")
    assert lucid.zeros_like(xn).device.type == "numpy"


def test_random_creation() -> None:
    assert lucid.rand(2, 3).dtype is lucid.float32
    r = lucid.rand(1000)
    assert 0 <= r.min().item() and r.max().item() < 1
    assert lucid.randn((2, 3)).shape == (2, 3)
    assert lucid.rand(2, requires_grad=True).requires_grad
    ri = lucid.randint(2, 5, (1000,))
    assert ri.dtype is lucid.int64 and set(ri.tolist()) == {2, 3, 4}
    assert lucid.randint(10, (3,)).max().item() < 10
    assert sorted(lucid.randperm(10).tolist()) == list(range(10))
    n = lucid.normal(3.0, 2.0, (20000,))
    assert abs(n.mean().item() - 3.0) < 0.1 and abs(n.std().item() - 2.0) < 0.1
    u = lucid.uniform(-1.0, 2.0, (1000,))
    assert u.min().item() >= -1.0 and u.max().item() < 2.0
    assert lucid.normal(lucid.zeros(3), 1.0).shape == (3,)


def test_manual_seed_reproducibility() -> None:
    lucid.manual_seed(3)
    a = (lucid.randn(4), lucid.rand(2), lucid.randint(0, 100, (3,)), lucid.randperm(5))
    lucid.manual_seed(3)
    b = (lucid.randn(4), lucid.rand(2), lucid.randint(0, 100, (3,)), lucid.randperm(5))
    for x, y in zip(a, b):
        assert x.tolist() == y.tolist()
    lucid.manual_seed(4)
    assert lucid.randn(4).tolist() != a[0].tolist()


def test_seed_gives_same_values_on_every_backend() -> None:
    lucid.manual_seed(1)
    a = lucid.randn(5)
    lucid.manual_seed(1)
    b = lucid.randn(5, device="numpy")
    assert a.tolist() == b.tolist() and b.device.type == "numpy"


def test_generator_and_rng_state() -> None:
    g1, g2 = lucid.Generator().manual_seed(1), lucid.Generator().manual_seed(1)
    assert lucid.randn(3, generator=g1).tolist() == lucid.randn(3, generator=g2).tolist()
    state = lucid.get_rng_state()
    first = lucid.rand(3).tolist()
    lucid.set_rng_state(state)
    assert lucid.rand(3).tolist() == first


# ---- shape queries and conversion ---------------------------------------------------------------


def test_size_dim_numel() -> None:
    x = lucid.zeros(2, 3, 4)
    assert x.size() == lucid.Size([2, 3, 4]) and isinstance(x.shape, lucid.Size)
    assert x.size(1) == 3 and x.size(-1) == 4
    assert x.dim() == 3 == x.ndim and x.numel() == 24 == lucid.numel(x)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.size(3)


def test_size_type() -> None:
    s = lucid.Size([2, 3])
    assert s == (2, 3) and repr(s) == "lucid.Size([2, 3])"
    assert isinstance(s[1:], lucid.Size) and s[1:] == (3,) and s[0] == 2
    assert s.numel() == 6 and lucid.Size([]).numel() == 1


def test_view_contiguous_clone() -> None:
    x = lucid.arange(6.0).reshape(2, 3)
    assert x.view(3, 2).tolist() == [[0, 1], [2, 3], [4, 5]]
    assert x.view(-1).shape == (6,)
    v = x.view(6)
    v[0] = 10.0
    assert x[0, 0].item() == 10.0  # a view shares memory
    assert x.contiguous() is x
    t = x.T.contiguous()
    assert t.numpy().flags.c_contiguous and t.tolist() == x.numpy().T.tolist()
    c = x.clone()
    c.add_(1)
    assert x[0, 0].item() == 10.0 and c[0, 0].item() == 11.0


@pytest.mark.parametrize("method,dtype", [
    ("float", lucid.float32), ("double", lucid.float64), ("half", lucid.float16),
    ("long", lucid.int64), ("int", lucid.int32), ("bool", lucid.bool), ("short", lucid.int16),
    ("byte", lucid.uint8), ("char", lucid.int8),
])
def test_cast_methods(method: str, dtype: lucid.dtype) -> None:
    x = lucid.tensor([0.0, 1.7, -2.2])
    y = getattr(x, method)()
    assert y.dtype is dtype
    np.testing.assert_array_equal(y.numpy(), x.numpy().astype(dtype.np))


def test_to_and_type_as() -> None:
    x = lucid.arange(3)
    assert x.to(lucid.float64).dtype is lucid.float64
    assert x.to(dtype=lucid.int32).dtype is lucid.int32
    assert x.to("cpu") is x and x.to("cpu").device == "cpu"
    assert x.to(lucid.device("cpu"), lucid.float32).dtype is lucid.float32
    assert x.to(lucid.zeros(1, dtype=lucid.float16)).dtype is lucid.float16
    assert x.type_as(lucid.zeros(1)).dtype is lucid.float32
    assert x.to("numpy").device.type == "numpy"
    assert x.to("numpy").cpu().device.type == "cpu"
    assert x.cpu() is x
    y = x.to(lucid.int64, copy=True)
    assert y is not x and y.tolist() == x.tolist()


def test_cast_keeps_graph() -> None:
    x = lucid.ones(2, requires_grad=True)
    x.double().mul(3).sum().backward()
    assert x.grad.dtype is lucid.float32 and x.grad.tolist() == [3.0, 3.0]


def test_item_numpy_tolist() -> None:
    assert lucid.tensor([[2.5]]).item() == 2.5
    assert isinstance(lucid.tensor(3).item(), int)
    assert isinstance(lucid.tensor(True).item(), bool)
    with pytest.raises(RuntimeError, match="2 elements cannot be converted to Scalar"):
        lucid.tensor([1, 2]).item()
    x = lucid.arange(6).reshape(2, 3)
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]] and lucid.tensor(2.5).tolist() == 2.5
    a = x.numpy()
    assert isinstance(a, np.ndarray) and a.dtype == np.int64
    a[0, 0] = 7
    assert x[0, 0].item() == 7  # numpy() shares memory on cpu
    with pytest.raises(RuntimeError, match=r"detach\(\).numpy\(\)"):
        lucid.ones(2, requires_grad=True).numpy()


def test_array_protocol() -> None:
    x = lucid.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(x), np.arange(6).reshape(2, 3))
    assert np.asarray(x, dtype=np.float32).dtype == np.float32
    assert np.asarray(lucid.ones(2, device="numpy")).shape == (2,)
    r = np.ones(2) + lucid.ones(2)  # numpy defers to the tensor
    assert isinstance(r, lucid.Tensor) and r.tolist() == [2.0, 2.0]


def test_len_iter_bool_int_float() -> None:
    x = lucid.arange(6).reshape(2, 3)
    assert len(x) == 2
    assert [r.tolist() for r in x] == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(lucid.tensor(1))
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(lucid.tensor(1.0))
    with pytest.raises(RuntimeError, match="more than one value is ambiguous"):
        bool(lucid.tensor([1, 2]))
    assert bool(lucid.tensor([1])) and not bool(lucid.tensor(0.0))
    assert int(lucid.tensor(3.7)) == 3 and float(lucid.tensor(2)) == 2.0
    assert [10, 20, 30][lucid.tensor(1)] == 20
    assert f"{lucid.tensor(2.5):.2f}" == "2.50"


def test_deepcopy_of_leaf() -> None:
    x = lucid.ones(2, requires_grad=True)
    y = copy.deepcopy(x)
    assert y is not x and y.requires_grad and y.tolist() == [1.0, 1.0]
    y.detach().add_(1)
    assert x.tolist() == [1.0, 1.0]


# ---- comparisons of whole tensors ---------------------------------------------------------------


def test_allclose_isclose_equal() -> None:
    a = lucid.tensor([1.0, 2.0, float("nan")])
    b = lucid.tensor([1.0 + 1e-9, 2.1, float("nan")])
    assert lucid.isclose(a, b).tolist() == [True, False, False]
    assert lucid.isclose(a, b, equal_nan=True).tolist() == [True, False, True]
    assert lucid.allclose(a[:1], b[:1]) and not lucid.allclose(a[:2], b[:2])
    assert lucid.allclose(a[:2], b[:2], atol=0.2)
    x = lucid.arange(3)
    assert lucid.equal(x, x.clone()) and not lucid.equal(x, x[:2])
    assert not lucid.equal(x, x + 1)
    assert isinstance(lucid.equal(x, x), bool) and isinstance(lucid.allclose(a[:1], a[:1]), bool)


# ---- functions and methods ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["exp", "log1p", "sqrt", "abs", "neg", "tanh", "sigmoid",
                                  "sum", "mean", "relu", "floor", "square"])
def test_function_and_method_forms(name: str) -> None:
    x = lucid.tensor([[0.5, 1.5], [2.0, 3.0]])
    assert getattr(lucid, name)(x).tolist() == getattr(x, name)().tolist()


def test_inplace_method_variants() -> None:
    x = lucid.tensor([0.25, 4.0])
    assert x.sqrt_() is x and x.tolist() == [0.5, 2.0]
    x.mul_(2).add_(1)
    assert x.tolist() == [2.0, 5.0]
    x.clamp_(max=3.0)
    assert x.tolist() == [2.0, 3.0]


# ---- repr ---------------------------------------------------------------------------------------


REPR_CASES = [
    ([[1.5, -2.25], [3.0, 4.0]], None), ([1.0, 2.0, 3.0], None), (3.5, None), ([1, 2, 3], None),
    ([True, False], None), ([1e10, 1.0], None), ([1e-5, 1.0], None), ([0.0, 1e-5], None),
    ([100000.0, 1.0], None), ([float("nan"), 1.0, float("inf")], None), ([1.5], "float64"),
    ([1, 2], "int32"), ([1.0, 2.0], "float16"), ([], None), (list(range(2000)), None),
    (list(range(2000)), "float64"), ([[0.5] * 30] * 3, None),
]


@pytest.mark.parity
@pytest.mark.parametrize("data,dtype", REPR_CASES)
def test_repr_matches_torch(torch: Any, data: Any, dtype: str | None) -> None:
    ours = lucid.tensor(data, dtype=dtype)
    theirs = torch.tensor(data, dtype=getattr(torch, dtype) if dtype else None)
    assert repr(ours) == repr(theirs).replace("torch.", "lucid.")


@pytest.mark.parity
def test_repr_of_grad_tensors_and_shapes_matches_torch(torch: Any) -> None:
    rng = np.random.default_rng(0)
    for shape in [(3, 4, 5), (0, 3), (2, 0), (40, 40), (7, 7, 30)]:
        a = rng.standard_normal(shape).astype(np.float32)
        assert repr(lucid.tensor(a)) == repr(torch.tensor(a)).replace("torch.", "lucid.")
    x, tx = lucid.tensor([1.0, 2.0], requires_grad=True), torch.tensor([1.0, 2.0],
                                                                        requires_grad=True)
    assert repr(x) == repr(tx)
    assert repr((x * 2).sum()) == repr((tx * 2).sum())
    assert repr(lucid.zeros(0, dtype=lucid.int64)) == "tensor([], dtype=lucid.int64)"


def test_repr_names_non_cpu_device() -> None:
    assert repr(lucid.tensor([1.0], device="numpy")) == "tensor([1.], device='numpy')"


# ---- smaller API surface ------------------------------------------------------------------------


def test_new_factories_follow_dtype_and_device() -> None:
    x = lucid.tensor([1.0, 2.0], dtype=lucid.float64, device="numpy")
    for t in (x.new_zeros(3), x.new_ones((2, 2)), x.new_empty(2), x.new_full((2,), 7),
              x.new_tensor([3, 4])):
        assert t.dtype is lucid.float64 and t.device.type == "numpy"
    assert x.new_zeros(3).tolist() == [0.0] * 3 and x.new_ones(2, 2).shape == (2, 2)
    assert x.new_full((2,), 7).tolist() == [7.0, 7.0] and x.new_tensor([3, 4]).tolist() == [3, 4]
    assert x.new_zeros(2, dtype=lucid.int32).dtype is lucid.int32


def test_is_contiguous() -> None:
    x = lucid.zeros(2, 3)
    assert x.is_contiguous() and not x.T.is_contiguous() and x.T.contiguous().is_contiguous()
    assert not x[:, ::2].is_contiguous()


def test_flip_forms() -> None:
    x = lucid.arange(4).reshape(2, 2)
    expected = [[3, 2], [1, 0]]
    assert x.flip(0, 1).tolist() == expected and x.flip((0, 1)).tolist() == expected
    assert lucid.flip(x, (0, 1)).tolist() == expected and lucid.flip(x, dims=[0, 1]).tolist() \
        == expected
    assert x.flip(-1).tolist() == [[1, 0], [3, 2]]


def test_where_with_two_scalars() -> None:
    c = lucid.tensor([True, False])
    assert lucid.where(c, 1, 0.5).dtype is lucid.float32
    assert lucid.where(c, 1, 0.5).tolist() == [1.0, 0.5]
    assert lucid.where(c, 1, 2).dtype is lucid.int64


def test_masked_fill_converts_value_to_the_tensor_dtype() -> None:
    m = lucid.tensor([True, False, True])
    assert lucid.tensor([1, 2, 3]).masked_fill(m, 2.7).tolist() == [2, 2, 2]
    assert lucid.tensor([True, True, False]).masked_fill(m, 0).tolist() == [False, True, False]
    with pytest.raises(RuntimeError, match="without overflow"):
        lucid.tensor([1, 2, 3], dtype=lucid.uint8).masked_fill(m, 300)


def test_logsumexp_over_empty_dim_is_minus_inf() -> None:
    x = lucid.zeros(0, 3, requires_grad=True)
    out = x.logsumexp(0)
    assert out.tolist() == [float("-inf")] * 3
    out.sum().backward()
    assert x.grad.shape == (0, 3)
