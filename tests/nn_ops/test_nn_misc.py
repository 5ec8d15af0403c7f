"""dropout, embedding, one_hot, interpolate, scaled_dot_product_attention, bilinear: numpy
references, seeding, float64 gradchecks, torch parity and errors."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck
from lucid.ops import nn_misc as M


def _t(a, backend, rg=False):
    return lucid.tensor(np.asarray(a), device=backend, requires_grad=rg)


# ---- dropout ------------------------------------------------------------------------------------


def test_dropout_scale_seed_and_grad(backend):
    lucid.manual_seed(3)
    x = _t(np.ones((200, 50), np.float32), backend, True)
    y = M.dropout(x, 0.3)
    vals = np.unique(y.detach().numpy())
    np.testing.assert_allclose(vals, [0.0, 1 / 0.7], rtol=1e-6)
    assert abs((y.detach().numpy() == 0).mean() - 0.3) < 0.02
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())
    lucid.manual_seed(3)
    np.testing.assert_array_equal(M.dropout(x, 0.3).detach().numpy(), y.detach().numpy())


def test_dropout_edges(backend):
    x = lucid.randn(4, 5, device=backend)
    assert M.dropout(x, 0.5, training=False) is x
    assert M.dropout(x, 0.0) is x
    assert (M.dropout(x, 1.0).numpy() == 0).all()
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got 1.5"):
        M.dropout(x, 1.5)


def test_dropout_inplace(backend):
    lucid.manual_seed(0)
    x = lucid.ones(10, 10, device=backend)
    out = M.dropout(x, 0.5, inplace=True)
    assert out is x and x._version == 1 and set(np.unique(x.numpy())) <= {0.0, 2.0}


def test_channel_dropout(backend):
    lucid.manual_seed(1)
    y = M.dropout2d(lucid.ones(6, 8, 3, 3, device=backend), 0.5).numpy().reshape(6, 8, 9)
    assert (y.std(-1) == 0).all() and set(np.unique(y)) == {0.0, 2.0}
    y1 = M.dropout1d(lucid.ones(8, 5, device=backend), 0.5).numpy()
    assert (y1.std(-1) == 0).all()
    y3 = M.dropout3d(lucid.ones(2, 4, 2, 2, 2, device=backend), 0.5).numpy().reshape(2, 4, 8)
    assert (y3.std(-1) == 0).all()
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        M.dropout2d(lucid.ones(2, 3, 4, device=backend), 0.5)
    with pytest.raises(RuntimeError, match="Expected 2D or 3D input"):
        M.dropout1d(lucid.ones(2, 3, 4, 5, device=backend))


# ---- embedding, one_hot -------------------------------------------------------------------------


def test_embedding_forward_and_accumulating_grad(backend):
    w = np.arange(12.0).reshape(4, 3)
    idx = np.array([[1, 3, 1], [0, 1, 2]])
    wt = _t(w, backend, True)
    y = M.embedding(_t(idx, backend), wt, padding_idx=2)
    np.testing.assert_array_equal(y.detach().numpy(), w[idx])
    y.backward(_t(np.ones((2, 3, 3)), backend))
    np.testing.assert_array_equal(wt.grad.numpy()[:, 0], [1, 3, 0, 1])  # row 1 three times


def test_embedding_options(backend):
    w = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    wt = _t(w.copy(), backend, True)
    M.embedding(_t([0, 1], backend), wt, max_norm=1.0)
    np.testing.assert_allclose(np.linalg.norm(wt.detach().numpy(), axis=1), [1.0, 0.5, 10.0],
                               rtol=1e-6)
    wt = _t(w, backend, True)
    M.embedding(_t([0, 0, 1], backend), wt, scale_grad_by_freq=True).sum().backward()
    np.testing.assert_allclose(wt.grad.numpy(), [[1, 1], [1, 1], [0, 0]])
    assert gradcheck(lambda w: M.embedding(_t([[2, 0], [2, 2]], backend), w, padding_idx=1),
                     (_t(w, backend, True),))


def test_embedding_errors(backend):
    w = lucid.randn(4, 3, device=backend)
    with pytest.raises(IndexError, match="index out of range in self"):
        M.embedding(_t([0, 4], backend), w)
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices'"):
        M.embedding(_t([0.0], backend), w)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        M.embedding(_t([0], backend), w, padding_idx=4)


def test_one_hot(backend):
    y = M.one_hot(_t([[0, 2], [1, 1]], backend))
    assert y.dtype == lucid.int64 and tuple(y.shape) == (2, 2, 3)
    np.testing.assert_array_equal(y.numpy(), np.eye(3, dtype=np.int64)[[[0, 2], [1, 1]]])
    assert tuple(M.one_hot(_t([1], backend), 5).shape) == (1, 5)
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        M.one_hot(_t([0, 5], backend), 3)
    with pytest.raises(RuntimeError, match="Class values must be non-negative."):
        M.one_hot(_t([0, -1], backend), 3)


# ---- interpolate --------------------------------------------------------------------------------


def test_interpolate_nearest_and_bilinear_reference(backend):
    x = np.arange(4.0).reshape(1, 1, 2, 2)
    y = M.interpolate(_t(x, backend), scale_factor=2).numpy()
    np.testing.assert_array_equal(y[0, 0], np.repeat(np.repeat(x[0, 0], 2, 0), 2, 1))
    y = M.interpolate(_t(x, backend), size=3, mode="bilinear", align_corners=True).numpy()
    np.testing.assert_allclose(y[0, 0], [[0, 0.5, 1], [1, 1.5, 2], [2, 2.5, 3]])
    y = M.interpolate(_t(x, backend), size=(2, 4), mode="bilinear").numpy()
    np.testing.assert_allclose(y[0, 0, 0], [0, 0.25, 0.75, 1])


@pytest.mark.parametrize("mode,ac", [("nearest", None), ("bilinear", False),
                                     ("bilinear", True)])
def test_gradcheck_interpolate(backend, mode, ac):
    x = _t(np.random.default_rng(0).standard_normal((1, 2, 3, 2)), backend, True)
    assert gradcheck(lambda x: M.interpolate(x, size=(4, 3), mode=mode, align_corners=ac), (x,))
    x1 = _t(np.random.default_rng(1).standard_normal((1, 2, 3)), backend, True)
    assert gradcheck(lambda x: M.interpolate(x, scale_factor=1.7, mode="linear"), (x1,))


def test_interpolate_errors():
    x = lucid.randn(1, 1, 2, 2)
    with pytest.raises(ValueError, match="only one of size or scale_factor should be defined"):
        M.interpolate(x, size=2, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor should be defined"):
        M.interpolate(x)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        M.interpolate(x, size=3, align_corners=True)
    with pytest.raises(NotImplementedError, match="Got 3D input, but bilinear mode needs 4D"):
        M.interpolate(lucid.randn(1, 2, 3), size=4, mode="bilinear")


# ---- attention, bilinear ------------------------------------------------------------------------


def _np_sdpa(q, k, v, mask=None, causal=False, scale=None):
    s = q @ np.swapaxes(k, -1, -2) * (1 / np.sqrt(q.shape[-1]) if scale is None else scale)
    if causal:
        mask = np.tril(np.ones(s.shape[-2:], bool))
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v


@pytest.mark.parametrize("kind", ["plain", "causal", "bool", "float", "scale"])
def test_sdpa_reference_and_gradcheck(backend, kind):
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal(s) for s in ((2, 3, 4), (2, 5, 4), (2, 5, 3)))
    mask = {"bool": rng.random((3, 5)) > 0.3, "float": rng.standard_normal((3, 5))}.get(kind)
    if mask is not None and mask.dtype == bool:
        mask[:, 0] = True
    kw = dict(attn_mask=None if mask is None else _t(mask, backend), is_causal=kind == "causal",
              scale=0.4 if kind == "scale" else None)
    y = M.scaled_dot_product_attention(_t(q, backend), _t(k, backend), _t(v, backend), **kw)
    ref = _np_sdpa(q, k, v, mask, kind == "causal", kw["scale"])
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-10, atol=1e-12)
    leaves = [_t(a, backend, True) for a in (q, k, v)]
    assert gradcheck(lambda q, k, v: M.scaled_dot_product_attention(q, k, v, **kw), leaves)


def test_sdpa_dropout_is_seeded(backend):
    q = lucid.randn(2, 4, 8, device=backend)
    lucid.manual_seed(5)
    a = M.scaled_dot_product_attention(q, q, q, dropout_p=0.5).numpy()
    lucid.manual_seed(5)
    b = M.scaled_dot_product_attention(q, q, q, dropout_p=0.5).numpy()
    np.testing.assert_array_equal(a, b)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set"):
        M.scaled_dot_product_attention(q, q, q, attn_mask=lucid.ones(4, 4), is_causal=True)
    with pytest.raises(RuntimeError, match="Expected attn_mask dtype to be bool or float or to "
                                           "match query dtype"):
        M.scaled_dot_product_attention(q, q, q, attn_mask=lucid.ones(4, 4, dtype=lucid.float64))


def test_bilinear(backend):
    rng = np.random.default_rng(3)
    x1, x2 = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 5))
    w, b = rng.standard_normal((2, 4, 5)), rng.standard_normal(2)
    y = M.bilinear(_t(x1, backend), _t(x2, backend), _t(w, backend), _t(b, backend))
    np.testing.assert_allclose(y.numpy(), np.einsum("...i,oij,...j->...o", x1, w, x2) + b)
    leaves = [_t(a, backend, True) for a in (x1[0], x2[0], w, b)]
    assert gradcheck(lambda a, c, w, b: M.bilinear(a, c, w, b), leaves)
    with pytest.raises(RuntimeError, match="bilinear"):
        M.bilinear(_t(x1, backend), _t(x1, backend), _t(w, backend))


# ---- torch parity -------------------------------------------------------------------------------


@pytest.mark.parity
@pytest.mark.parametrize("mode,ac", [("nearest", None), ("nearest-exact", None),
                                     ("bilinear", False), ("bilinear", True)])
@pytest.mark.parametrize("kw", [{"size": (7, 3)}, {"scale_factor": 2},
                                {"scale_factor": (1.5, 0.7)}])
def test_interpolate_parity(torch, backend, mode, ac, kw):
    x = np.random.default_rng(4).standard_normal((2, 3, 4, 5)).astype(np.float32)
    lx, tx = _t(x, backend, True), torch.tensor(x, requires_grad=True)
    y = M.interpolate(lx, mode=mode, align_corners=ac, **kw)
    yt = torch.nn.functional.interpolate(tx, mode=mode, align_corners=ac, **kw)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = np.random.default_rng(5).standard_normal(tuple(yt.shape)).astype(np.float32)
    y.backward(_t(g, backend))
    yt.backward(torch.from_numpy(g))
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parity
def test_attention_embedding_bilinear_parity(torch, backend):
    F = torch.nn.functional
    rng = np.random.default_rng(6)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in
               ((2, 2, 5, 4), (2, 2, 6, 4), (2, 2, 6, 3)))
    bm = rng.random((5, 6)) > 0.3
    bm[:, 0] = True
    fm = (bm * -1.5).astype(np.float32)
    for kw in ({}, {"is_causal": True}, {"attn_mask": bm}, {"attn_mask": fm}):
        lkw = {a: (_t(b, backend) if isinstance(b, np.ndarray) else b) for a, b in kw.items()}
        tkw = {a: (torch.tensor(b) if isinstance(b, np.ndarray) else b) for a, b in kw.items()}
        la = [_t(a, backend, True) for a in (q, k, v)]
        ta = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
        y = M.scaled_dot_product_attention(*la, **lkw)
        yt = F.scaled_dot_product_attention(*ta, **tkw)
        np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
        y.sum().backward()
        yt.sum().backward()
        for a, b in zip(la, ta):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)
    w = rng.standard_normal((7, 3)).astype(np.float32)
    idx = np.array([[1, 6, 1], [0, 2, 1]])
    lw, tw = _t(w, backend, True), torch.tensor(w, requires_grad=True)
    M.embedding(_t(idx, backend), lw, padding_idx=1).pow(2).sum().backward()
    F.embedding(torch.tensor(idx), tw, padding_idx=1).pow(2).sum().backward()
    np.testing.assert_allclose(lw.grad.numpy(), tw.grad.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(M.one_hot(_t(idx, backend), 8).numpy(),
                                  F.one_hot(torch.tensor(idx), 8).numpy())
    x1, x2 = rng.standard_normal((4, 3)), rng.standard_normal((4, 5))
    wb, bb = rng.standard_normal((2, 3, 5)), rng.standard_normal(2)
    np.testing.assert_allclose(
        M.bilinear(*(_t(a, backend) for a in (x1, x2, wb, bb))).numpy(),
        F.bilinear(*(torch.tensor(a) for a in (x1, x2, wb, bb))).numpy(), rtol=1e-10)
