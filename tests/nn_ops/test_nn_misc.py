"""dropout, embedding, attention and interpolation beyond the op table (``op_db_nn.py`` holds
their references, gradchecks, parity and errors): dropout's scaling, seeding, edges and channel
forms, embedding's max_norm and scale_grad_by_freq, seeded attention dropout, and interpolation
modes and scale tuples against torch."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as M
from lucid.autograd import gradcheck


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


# ---- embedding ----------------------------------------------------------------------------------


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


# ---- attention ----------------------------------------------------------------------------------


def test_sdpa_dropout_is_seeded(backend):
    q = lucid.randn(2, 4, 8, device=backend)
    lucid.manual_seed(5)
    a = M.scaled_dot_product_attention(q, q, q, dropout_p=0.5).numpy()
    lucid.manual_seed(5)
    b = M.scaled_dot_product_attention(q, q, q, dropout_p=0.5).numpy()
    np.testing.assert_array_equal(a, b)


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


