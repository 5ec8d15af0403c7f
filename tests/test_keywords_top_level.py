"""Keywords torch's argument parser takes on top-level functions and Tensor methods: each call
is made by keyword in lucid and in torch and the results (or the errors) compared."""

from __future__ import annotations

import inspect
import os
import pickle

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

torch = pytest.importorskip("torch")


def _np(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t)


def same(a, b):
    """Compare a lucid result with a torch one (tensors, tuples of tensors, dtypes)."""
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
        return
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    x, y = _np(a), _np(b)
    kind = np.complex128 if np.iscomplexobj(x) or np.iscomplexobj(y) else np.float64
    np.testing.assert_allclose(x.astype(kind), y.astype(kind), rtol=1e-5, atol=1e-6)


def both_raise(fl, ft, exc=Exception):
    with pytest.raises(exc):
        ft()
    with pytest.raises(exc):
        fl()


A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
S = np.arange(12, dtype=np.float32).reshape(6, 2)


def pair(a):
    return lucid.tensor(a), torch.tensor(a)


# ---- factories: layout=, pin_memory=, requires_grad=, memory_format= ----------------------

FACTORIES = [
    ("arange", (3,)), ("eye", (3,)), ("full", ((2,), 1.5)), ("linspace", (0, 1, 3)),
    ("logspace", (0, 1, 3)), ("zeros", (2, 3)), ("ones", (2, 3)), ("empty", (2, 3)),
    ("rand", (2,)), ("randn", (2,)), ("randint", (3, (3,))), ("randperm", (3,)),
    ("scalar_tensor", (3,)), ("tril_indices", (3, 3)), ("triu_indices", (3, 3)),
    ("hann_window", (4,)), ("hamming_window", (4,)), ("blackman_window", (4,)),
    ("bartlett_window", (4,)), ("kaiser_window", (4,)),
]


@pytest.mark.parametrize("name,args", FACTORIES)
def test_factory_layout_pin_memory(name, args):
    out = getattr(lucid, name)(*args, layout=lucid.strided, pin_memory=False)
    ref = getattr(torch, name)(*args, layout=torch.strided, pin_memory=False)
    assert tuple(out.shape) == tuple(ref.shape)
    assert str(out.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
    assert getattr(lucid, name)(*args, layout=None).shape == out.shape


@pytest.mark.parametrize("name,args", FACTORIES)
def test_factory_refuses_other_layouts(name, args):
    with pytest.raises(NotImplementedError, match="dense tensors only"):
        getattr(lucid, name)(*args, layout=lucid.sparse_coo)
    with pytest.raises(TypeError, match="layout"):
        getattr(lucid, name)(*args, layout="strided")


def test_pin_memory_is_a_no_op_on_host_memory():
    # torch without an accelerator refuses; lucid does what Tensor.pin_memory() does
    t = lucid.zeros(3, pin_memory=True)
    assert not t.is_pinned() and t.pin_memory() is t
    assert lucid.empty_like(t, pin_memory=True).shape == t.shape
    assert lucid.fft.fftfreq(4, pin_memory=True).shape == (4,)


@pytest.mark.parametrize("name,args", [
    ("arange", (3,)), ("randint", (3, (3,))), ("randperm", (3,)), ("tril_indices", (3, 3)),
    ("triu_indices", (3, 3)), ("scalar_tensor", (3,)),
])
def test_integer_factories_refuse_requires_grad(name, args):
    kw = {"dtype": torch.int64} if name == "scalar_tensor" else {}
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex"):
        getattr(torch, name)(*args, requires_grad=True, **kw)
    kw = {"dtype": lucid.int64} if name == "scalar_tensor" else {}
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex"):
        getattr(lucid, name)(*args, requires_grad=True, **kw)


@pytest.mark.parametrize("name,args,kw", [
    ("randint", (3, (3,)), {"dtype": "float32"}), ("randperm", (3,), {"dtype": "float64"}),
    ("logspace", (0, 1, 3), {}), ("scalar_tensor", (3,), {}), ("eye", (2,), {}),
])
def test_float_factories_require_grad(name, args, kw):
    out = getattr(lucid, name)(*args, requires_grad=True,
                               **{k: getattr(lucid, v) for k, v in kw.items()})
    ref = getattr(torch, name)(*args, requires_grad=True,
                               **{k: getattr(torch, v) for k, v in kw.items()})
    assert out.requires_grad and ref.requires_grad and out.is_leaf


def test_empty_memory_format():
    out = lucid.empty(2, 3, 4, 5, memory_format=lucid.channels_last)
    ref = torch.empty(2, 3, 4, 5, memory_format=torch.channels_last)
    assert out.stride() == ref.stride()
    assert lucid.empty(2, 3, memory_format=lucid.contiguous_format).stride() == (3, 1)
    both_raise(lambda: lucid.empty(2, 3, 4, memory_format=lucid.channels_last),
               lambda: torch.empty(2, 3, 4, memory_format=torch.channels_last), RuntimeError)
    both_raise(lambda: lucid.empty(2, memory_format=lucid.preserve_format),
               lambda: torch.empty(2, memory_format=torch.preserve_format), RuntimeError)


LIKES = ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"]


def _layouts():
    x = np.random.rand(2, 3, 4, 5).astype(np.float32)
    lx, tx = pair(x)
    return [
        (lx, tx), (lx.permute(0, 2, 3, 1), tx.permute(0, 2, 3, 1)),
        (lx.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
         tx.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)),
        (lx[:, ::2], tx[:, ::2]), (lx.transpose(0, 3), tx.transpose(0, 3)),
        (lx[:, :1].expand(2, 3, 4, 5), tx[:, :1].expand(2, 3, 4, 5)),
    ]


@pytest.mark.parametrize("name", LIKES + ["full_like", "randint_like"])
def test_like_preserves_strides_as_torch(name):
    extra = (2,) if name in ("full_like", "randint_like") else ()
    for lx, tx in _layouts():
        out = getattr(lucid, name)(lx, *extra, layout=lucid.strided, pin_memory=False)
        ref = getattr(torch, name)(tx, *extra, layout=torch.strided, pin_memory=False)
        assert out.stride() == ref.stride(), (lx.stride(), out.stride(), ref.stride())
        for fmt in ("contiguous_format", "channels_last", "preserve_format"):
            out = getattr(lucid, name)(lx, *extra, memory_format=getattr(lucid, fmt))
            ref = getattr(torch, name)(tx, *extra, memory_format=getattr(torch, fmt))
            assert out.stride() == ref.stride()
            assert out._base is None and out.is_leaf


def test_like_values_and_requires_grad():
    lx, tx = pair(A)
    same(lucid.full_like(lx, 2.5, requires_grad=True), torch.full_like(tx, 2.5))
    assert lucid.zeros_like(lx, requires_grad=True).requires_grad
    both_raise(lambda: lucid.zeros_like(lx, memory_format=lucid.channels_last),
               lambda: torch.zeros_like(tx, memory_format=torch.channels_last), RuntimeError)


def test_new_factories():
    lx, tx = pair(A)
    for name, args in (("new_empty", ((2,),)), ("new_zeros", ((2,),)), ("new_ones", ((2,),)),
                       ("new_full", ((2,), 3))):
        out = getattr(lx, name)(*args, layout=lucid.strided, pin_memory=False)
        ref = getattr(tx, name)(*args, layout=torch.strided, pin_memory=False)
        assert tuple(out.shape) == tuple(ref.shape) and out.dtype is lucid.float32
        with pytest.raises(NotImplementedError):
            getattr(lx, name)(*args, layout=lucid.sparse_coo)


def test_range_layout():
    with pytest.warns(UserWarning):
        same(lucid.range(0, 3, layout=lucid.strided), torch.range(0, 3, layout=torch.strided))


# ---- asarray --------------------------------------------------------------------------------

def test_asarray_obj_copy_requires_grad():
    same(lucid.asarray(obj=[1, 2]), torch.asarray(obj=[1, 2]))
    a = np.arange(3.0)
    la, ta = lucid.asarray(a, copy=False), torch.asarray(a, copy=False)
    a[0] = 7.0
    assert la[0].item() == ta[0].item() == 7.0
    assert lucid.asarray(a, copy=True)[0].item() == 7.0
    lc = lucid.asarray(a, copy=True)
    a[0] = 1.0
    assert lc[0].item() == 7.0
    both_raise(lambda: lucid.asarray(a, dtype=lucid.float32, copy=False),
               lambda: torch.asarray(a, dtype=torch.float32, copy=False), ValueError)
    both_raise(lambda: lucid.asarray([1, 2], copy=False),
               lambda: torch.asarray([1, 2], copy=False), ValueError)
    both_raise(lambda: lucid.asarray([1, 2], requires_grad=True),
               lambda: torch.asarray([1, 2], requires_grad=True), RuntimeError)
    out = lucid.asarray([1.0, 2.0], requires_grad=True)
    assert out.requires_grad and out.is_leaf
    same(lucid.asarray(bytearray(b"\x01\x02"), dtype=lucid.uint8),
         torch.asarray(bytearray(b"\x01\x02"), dtype=torch.uint8))


def test_asarray_tensor():
    lx, tx = pair(S)
    assert lucid.asarray(lx) is lx and torch.asarray(tx) is tx
    assert lucid.asarray(lx, copy=False) is lx
    assert lucid.asarray(lx, copy=True) is not lx
    same(lucid.asarray(lx, dtype=lucid.float64), torch.asarray(tx, dtype=torch.float64))
    both_raise(lambda: lucid.asarray(lx, dtype=lucid.float64, copy=False),
               lambda: torch.asarray(tx, dtype=torch.float64, copy=False), ValueError)
    assert lucid.asarray(lx, requires_grad=True) is lx and lx.requires_grad
    y = lx * 2
    assert lucid.asarray(y, requires_grad=False).grad_fn is None
    assert lucid.asarray(y).grad_fn is not None
    with pytest.raises(TypeError):
        lucid.asarray(lx, lucid.float64)


# ---- renamed / extra parameters --------------------------------------------------------------

def test_broadcast_to_dot_swapaxes():
    lx, tx = pair(S[:3, :1])
    same(lucid.broadcast_to(lx, size=(2, 3, 4)), torch.broadcast_to(tx, size=(2, 3, 4)))
    same(lx.broadcast_to(size=(3, 4)), tx.broadcast_to(size=(3, 4)))
    lv, tv = pair(np.arange(3.0, dtype=np.float32))
    same(lucid.dot(input=lv, tensor=lv), torch.dot(input=tv, tensor=tv))
    same(lv.dot(tensor=lv), tv.dot(tensor=tv))
    with pytest.raises(TypeError):
        lucid.dot(lv, other=lv)
    la, ta = pair(A)
    same(lucid.swapaxes(la, axis0=0, axis1=2), torch.swapaxes(ta, axis0=0, axis1=2))
    same(la.swapaxes(axis0=1, axis1=2), ta.swapaxes(axis0=1, axis1=2))
    both_raise(lambda: la.swapaxes(dim0=0, dim1=1), lambda: ta.swapaxes(dim0=0, dim1=1),
               TypeError)


def test_inner_matches_torch():
    la, ta = pair(np.random.rand(2, 3))
    lb, tb = pair(np.random.rand(4, 3))
    same(lucid.inner(la, lb), torch.inner(ta, tb))
    same(lucid.inner(la[0], lb[1]), torch.inner(ta[0], tb[1]))
    same(lucid.inner(la, lucid.tensor(2.0, dtype=lucid.float64)),
         torch.inner(ta, torch.tensor(2.0, dtype=torch.float64)))
    both_raise(lambda: lucid.inner(la, la.t()), lambda: torch.inner(ta, ta.t()), RuntimeError)


@pytest.mark.parametrize("kw", [{"sections": 3}, {"indices": [1, 3]},
                                {"indices": (1, 3), "dim": 1}])
def test_tensor_split_overloads(kw):
    lx, tx = pair(S)
    same(lucid.tensor_split(lx, **kw), torch.tensor_split(tx, **kw))
    same(lx.tensor_split(**kw), tx.tensor_split(**kw))


def test_tensor_split_tensor_form():
    lx, tx = pair(S)
    for v in (3, [1, 3]):
        same(lucid.tensor_split(lx, tensor_indices_or_sections=lucid.tensor(v)),
             torch.tensor_split(tx, tensor_indices_or_sections=torch.tensor(v)))
    same(lucid.tensor_split(lx, 3, 1), torch.tensor_split(tx, 3, 1))
    both_raise(lambda: lucid.tensor_split(lx, lucid.tensor([1.0])),
               lambda: torch.tensor_split(tx, torch.tensor([1.0])), RuntimeError)
    both_raise(lambda: lucid.tensor_split(lx, lucid.tensor([[1]])),
               lambda: torch.tensor_split(tx, torch.tensor([[1]])), RuntimeError)
    both_raise(lambda: lucid.tensor_split(lx, 3.0), lambda: torch.tensor_split(tx, 3.0),
               TypeError)
    both_raise(lambda: lucid.tensor_split(lx, sections=3, indices=[1]),
               lambda: torch.tensor_split(tx, sections=3, indices=[1]), TypeError)
    both_raise(lambda: lucid.tensor_split(lx, indices_or_sections=3),
               lambda: torch.tensor_split(tx, indices_or_sections=3), TypeError)


@pytest.mark.parametrize("name", ["hsplit", "vsplit", "dsplit"])
def test_nsplit_overloads(name):
    lx, tx = pair(np.arange(48, dtype=np.float32).reshape(2, 4, 6))
    for kw in ({"sections": 2}, {"indices": [1]}):
        same(getattr(lucid, name)(lx, **kw), getattr(torch, name)(tx, **kw))
        same(getattr(lx, name)(**kw), getattr(tx, name)(**kw))
    same(getattr(lucid, name)(lx, 2), getattr(torch, name)(tx, 2))
    same(getattr(lucid, name)(lx, [1]), getattr(torch, name)(tx, [1]))
    both_raise(lambda: getattr(lucid, name)(lx, indices=2),
               lambda: getattr(torch, name)(tx, indices=2), TypeError)


def test_split_family():
    lx, tx = pair(S)
    same(lx.split(split_size=2), tx.split(split_size=2))
    same(lx.split(split_size=[2, 4]), tx.split(split_size=[2, 4]))
    same(lucid.split(lx, split_size_or_sections=2), torch.split(tx, split_size_or_sections=2))
    same(lx.split_with_sizes(split_sizes=[2, 4]), tx.split_with_sizes(split_sizes=[2, 4]))
    same(lx.unsafe_split(split_size=2), tx.unsafe_split(split_size=2))
    same(lx.unsafe_split_with_sizes(split_sizes=[2, 4]),
         tx.unsafe_split_with_sizes(split_sizes=[2, 4]))
    same(lucid.split_copy(lx, split_size=2), torch.split_copy(tx, split_size=2))
    same(lucid.split_with_sizes(lx, split_sizes=[2, 4]),
         torch.split_with_sizes(tx, split_sizes=[2, 4]))
    same(lucid.split_with_sizes_copy(lx, split_sizes=[2, 4]),
         torch.split_with_sizes_copy(tx, split_sizes=[2, 4]))
    same(lucid.unsafe_split(lx, split_size=2), torch.unsafe_split(tx, split_size=2))
    same(lucid.unsafe_split_with_sizes(lx, split_sizes=[2, 4]),
         torch.unsafe_split_with_sizes(tx, split_sizes=[2, 4]))
    both_raise(lambda: lx.split(split_size_or_sections=2),
               lambda: tx.split(split_size_or_sections=2), TypeError)


def test_view_expand_keywords():
    lx, tx = pair(S)
    same(lx.view(size=(3, 4)), tx.view(size=(3, 4)))
    same(lucid.view_copy(lx, size=(12,)), torch.view_copy(tx, size=(12,)))
    same(lx.expand(size=(2, 6, 2)), tx.expand(size=(2, 6, 2)))
    same(lx.expand(2, 6, 2, implicit=True), tx.expand(2, 6, 2, implicit=True))
    same(lucid.expand_copy(lx, size=(2, 6, 2), implicit=True),
         torch.expand_copy(tx, size=(2, 6, 2), implicit=True))
    both_raise(lambda: lx.view(shape=(12,)), lambda: tx.view(shape=(12,)), TypeError)


@pytest.mark.parametrize("dt", ["int32", "float16", "int16", "uint8", "float64", "complex64"])
def test_view_dtype(dt):
    a = np.arange(1, 9, dtype=np.float32).reshape(2, 4)
    lx, tx = pair(a)
    same(lx.view(dtype=getattr(lucid, dt)), tx.view(dtype=getattr(torch, dt)))
    same(lx.view(getattr(lucid, dt)), tx.view(getattr(torch, dt)))
    same(lucid.view_copy(lx, dtype=getattr(lucid, dt)),
         torch.view_copy(tx, dtype=getattr(torch, dt)))


def test_view_dtype_shares_memory_and_errors():
    lx, tx = pair(np.ones((2, 3), np.float32))
    v = lx.view(lucid.int32)
    v[0, 0] = 0
    assert lx[0, 0].item() == 0.0
    assert not lx.requires_grad_().view(lucid.float32).requires_grad
    both_raise(lambda: lucid.zeros(2, 3).t().view(lucid.float16),
               lambda: torch.zeros(2, 3).t().view(torch.float16), RuntimeError)
    both_raise(lambda: lucid.zeros(3).view(lucid.float64),
               lambda: torch.zeros(3).view(torch.float64), RuntimeError)
    both_raise(lambda: lucid.zeros(()).view(lucid.float16),
               lambda: torch.zeros(()).view(torch.float16), RuntimeError)


def test_gather_sparse_grad():
    lx, tx = pair(S)
    idx = np.zeros((2, 2), np.int64)
    same(lucid.gather(lx, 0, lucid.tensor(idx), sparse_grad=False),
         torch.gather(tx, 0, torch.tensor(idx), sparse_grad=False))
    same(lx.gather(0, lucid.tensor(idx), sparse_grad=True),
         tx.gather(0, torch.tensor(idx), sparse_grad=True))
    with pytest.raises(NotImplementedError, match="sparse_grad"):
        lx.requires_grad_().gather(0, lucid.tensor(idx), sparse_grad=True)


def test_isin_overloads():
    lx, tx = pair(np.array([1, 2, 3]))
    same(lucid.isin(element=2, test_elements=lx), torch.isin(element=2, test_elements=tx))
    same(lucid.isin(elements=lx, test_element=2), torch.isin(elements=tx, test_element=2))
    same(lucid.isin(elements=lx, test_elements=lx[:1]),
         torch.isin(elements=tx, test_elements=tx[:1]))
    both_raise(lambda: lucid.isin(element=1, test_element=1),
               lambda: torch.isin(element=1, test_element=1), TypeError)
    both_raise(lambda: lucid.isin(lx, test_element=lx[:1]),
               lambda: torch.isin(tx, test_element=tx[:1]), TypeError)


def test_promote_types_and_result_type_args():
    assert lucid.promote_types(type1=lucid.int32, type2=lucid.float32) is lucid.float32
    lx, _ = pair(S)
    rt = lucid._dtype.result_type_args
    assert rt(tensor=lx, other=lx.double()) is lucid.float64
    assert rt(scalar=2, tensor=lx.int()) is lucid.int32
    assert rt(scalar1=2, scalar2=2.0) is torch_dtype(torch.result_type(scalar1=2, scalar2=2.0))
    assert rt(lx, 2) is lucid.float32
    with pytest.raises(TypeError):
        rt(scalar1=2)


def torch_dtype(d):
    return getattr(lucid, str(d).split(".")[-1])


def test_rng_state_and_rrelu_generator():
    state = lucid.get_rng_state()
    a = lucid.rand(3)
    lucid.set_rng_state(new_state=state)
    same(lucid.rand(3), a)
    x = lucid.randn(6)
    outs = [fn(x.clone(), training=True, generator=lucid.Generator().manual_seed(1))
            for fn in (lucid.rrelu_, F.rrelu_)]
    same(outs[0], outs[1])
    torch.rrelu_(torch.randn(3), generator=None)


def test_view_inplace_methods_keep_keywords():
    for name, kw in (("transpose_", {"dim0": 0, "dim1": 1}), ("swapdims_", {"dim0": 0, "dim1": 1}),
                     ("swapaxes_", {"axis0": 0, "axis1": 1}), ("squeeze_", {"dim": 0}),
                     ("unsqueeze_", {"dim": 0})):
        lx, tx = pair(S[:1])
        out, ref = getattr(lx, name)(**kw), getattr(tx, name)(**kw)
        assert out is lx and ref is tx
        same(out, ref)
        params = inspect.signature(getattr(lucid.Tensor, name)).parameters
        assert set(kw) <= set(params), (name, list(params))
    both_raise(lambda: lucid.zeros(2, 3).swapaxes_(dim0=0, dim1=1),
               lambda: torch.zeros(2, 3).swapaxes_(dim0=0, dim1=1), TypeError)


def test_method_renames():
    lx, tx = pair(S)
    same(lx.clone().copy_(other=lx * 2), tx.clone().copy_(other=tx * 2))
    both_raise(lambda: lx.clone().copy_(src=lx), lambda: tx.clone().copy_(src=tx), TypeError)
    same(lx.clone().map_(other=lx, callable=lambda a, b: a + b),
         tx.clone().map_(other=tx, callable=lambda a, b: a + b))
    same(lx.repeat(repeats=(2, 1)), tx.repeat(repeats=(2, 1)))
    same(lx.clone().resize_(size=(12,)), tx.clone().resize_(size=(12,)))
    same(lx.where(condition=lx > 3, other=0.0), tx.where(condition=tx > 3, other=0.0))
    both_raise(lambda: lx.where(lx > 3, y=lx), lambda: tx.where(tx > 3, y=tx), TypeError)
    same(lx.to_dense(dtype=lucid.float64, masked_grad=True),
         tx.to_dense(dtype=torch.float64, masked_grad=True))
    assert lx.to_dense() is lx


def test_device_method_keywords():
    lx, tx = pair(np.random.rand(2, 3, 4, 5).astype(np.float32))
    for name in ("cpu", "cfloat", "cdouble", "float", "double"):
        out = getattr(lx, name)(memory_format=lucid.channels_last)
        ref = getattr(tx, name)(memory_format=torch.channels_last)
        assert out.stride() == ref.stride(), name
        same(out, ref)
    assert lx.pin_memory(device=None) is lx and not lx.is_pinned(device="cuda")
    with pytest.raises(RuntimeError, match="not an accelerator"):
        lx.pin_memory(device="cpu")
    assert "non_blocking" in inspect.signature(lucid.Tensor.cuda).parameters
    assert "memory_format" in inspect.signature(lucid.Tensor.cuda).parameters


def test_dim_order_ambiguity_check():
    cases = [((2, 3, 4, 5), None), ((2, 1, 3), None), ((2, 3, 1, 1), None)]
    for shape, _ in cases:
        lx, tx = lucid.zeros(*shape), torch.zeros(*shape)
        for check in (False, True, [lucid.contiguous_format],
                      [lucid.contiguous_format, lucid.channels_last]):
            tcheck = check if isinstance(check, bool) else [
                getattr(torch, str(f).split(".")[-1]) for f in check]
            try:
                ref = tx.dim_order(ambiguity_check=tcheck)
            except RuntimeError:
                with pytest.raises(RuntimeError, match="unique dim order"):
                    lx.dim_order(ambiguity_check=check)
                continue
            assert lx.dim_order(ambiguity_check=check) == ref
    both_raise(lambda: lucid.zeros(2).dim_order(ambiguity_check=3),
               lambda: torch.zeros(2).dim_order(ambiguity_check=3), TypeError)


def test_legacy_linalg_names():
    a = np.random.rand(3, 3) + 3 * np.eye(3)
    la, ta = pair(a)
    lb, tb = pair(np.random.rand(3, 2))
    L, TL = lucid.linalg.cholesky(la @ la.mT), torch.linalg.cholesky(ta @ ta.mT)
    same(lucid.cholesky_solve(input=lb, input2=L), torch.cholesky_solve(input=tb, input2=TL))
    same(lb.cholesky_solve(input2=L, upper=False), tb.cholesky_solve(input2=TL, upper=False))
    same(lucid.cholesky_inverse(input=L), torch.cholesky_inverse(input=TL))
    same(lucid.det(input=la), torch.det(input=ta))
    lu, piv = lucid.linalg.lu_factor(la)
    tlu, tpiv = torch.linalg.lu_factor(ta)
    same(lucid.lu_solve(input=lb, LU_data=lu, LU_pivots=piv),
         torch.lu_solve(input=tb, LU_data=tlu, LU_pivots=tpiv))
    same(lucid.triangular_solve(input=lb, A=la)[0], torch.triangular_solve(input=tb, A=ta)[0])
    tau, ttau = lucid.ones(3, dtype=lucid.float64), torch.ones(3, dtype=torch.float64)
    same(lucid.orgqr(la, input2=tau), torch.orgqr(ta, input2=ttau))
    same(la.orgqr(input2=tau), ta.orgqr(input2=ttau))
    both_raise(lambda: lucid.det(A=la), lambda: torch.det(A=ta), TypeError)
    assert lucid.linalg.det(A=la).shape == ()


def test_sparse_products_names():
    d = np.array([[1.0, 0.0], [0.0, 2.0]], np.float32)
    ls, ts = lucid.tensor(d).to_sparse(), torch.tensor(d).to_sparse()
    ld, td = pair(np.ones((2, 3), np.float32))
    same(lucid.smm(input=ls, mat2=ld).to_dense(), torch.smm(input=ts, mat2=td).to_dense())
    same(ls.smm(mat2=ld).to_dense(), ts.smm(mat2=td).to_dense())
    la3, ta3 = lucid.zeros(2, 3).to_sparse(), torch.zeros(2, 3).to_sparse()
    for name in ("sspaddmm", "saddmm"):
        same(getattr(lucid, name)(input=la3, mat1=ls, mat2=ld).to_dense(),
             getattr(torch, name)(input=ta3, mat1=ts, mat2=td).to_dense())


def test_out_dtype():
    h = np.random.rand(2, 3).astype(np.float16)
    lh, th = pair(h)
    lw, tw = pair(np.random.rand(3, 4).astype(np.float16))
    out = lucid.mm(lh, lw, out_dtype=lucid.float32)
    np.testing.assert_allclose(_np(out), h.astype(np.float32) @ _np(lw).astype(np.float32),
                               rtol=1e-3)
    assert out.dtype is lucid.float32
    assert lucid.bmm(lh[None], lw[None], out_dtype=lucid.float32).dtype is lucid.float32
    assert lucid.addmm(lucid.zeros(2, 4), lh, lw, out_dtype=lucid.float32).dtype is \
        lucid.float32
    assert lucid.baddbmm(lucid.zeros(1, 2, 4), lh[None], lw[None],
                         out_dtype=lucid.float32).dtype is lucid.float32
    assert lucid.mm(lh.float(), lw.float(), out_dtype=lucid.float32).dtype is lucid.float32
    with pytest.raises(RuntimeError, match="out_dtype"):
        lucid.mm(lh.float(), lw.float(), out_dtype=lucid.float64)
    # torch's CPU backend refuses every out_dtype; lucid keeps torch's CUDA contract
    with pytest.raises(NotImplementedError):
        torch.mm(th, tw, out_dtype=torch.float32)


def test_save_load_keywords(tmp_path):
    p = os.fspath(tmp_path / "ckpt.lucid")
    lucid.save({"w": lucid.ones(2)}, p, pickle_module=pickle, pickle_protocol=4)
    same(lucid.load(p, mmap=True)["w"], torch.ones(2))
    same(lucid.load(p, pickle_module=pickle, weights_only=False)["w"], torch.ones(2))
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        lucid.load(p, pickle_module=pickle)
    with open(p, "rb") as fh, pytest.raises(ValueError, match="file path"):
        lucid.load(fh, mmap=True)


class _Hostile:
    """A 'pickle module' whose every attribute use is an error: lucid must never call it."""

    def __getattr__(self, name):
        raise AssertionError(f"lucid used the caller's pickle module ({name})")


def test_pickle_module_is_never_called(tmp_path):
    p = os.fspath(tmp_path / "ckpt.lucid")
    lucid.save({"w": lucid.ones(2), "o": _Plain()}, p, pickle_module=_Hostile())
    out = lucid.load(p, pickle_module=_Hostile(), weights_only=False)
    assert isinstance(out["o"], _Plain)


class _Plain:
    pass


FALSE_GAPS = [
    lambda: torch.set_num_threads(num=2), lambda: torch.set_num_interop_threads(num=2),
    lambda: torch.hsmm(input=torch.eye(2).to_sparse(), mat2=torch.eye(2)),
    lambda: torch.range(0, 3, pin_memory=False), lambda: torch.zeros(2).new_tensor(
        [1], pin_memory=False), lambda: torch.zeros(2).requires_grad_(mode=True),
]


@pytest.mark.parametrize("call", FALSE_GAPS)
def test_false_gaps_torch_refuses(call):
    with pytest.raises(TypeError):
        call()
