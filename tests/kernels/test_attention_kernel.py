"""The fused attention kernels against the numpy reference, serial and parallel builds."""

from __future__ import annotations

import numba
import numpy as np
import pytest

import lucid
from lucid.backend._nn_ref import NnReference as R
from lucid.kernels import attention as A


def _qkv(rng, b, h, lq, s, d, dv, dtype, strided):
    if strided:  # q, k, v as head views of one fused projection, as in nanoGPT
        x = rng.standard_normal((b, max(lq, s), 3, h, max(d, dv))).astype(dtype)
        q = x[:, :lq, 0, :, :d].transpose(0, 2, 1, 3)
        k = x[:, :s, 1, :, :d].transpose(0, 2, 1, 3)
        v = x[:, :s, 2, :, :dv].transpose(0, 2, 1, 3)
        assert not q.flags.c_contiguous
        return q, k, v
    return (rng.standard_normal((b, h, lq, d)).astype(dtype),
            rng.standard_normal((b, h, s, d)).astype(dtype),
            rng.standard_normal((b, h, s, dv)).astype(dtype))


@pytest.fixture(params=[1, 2])
def chunks(request, monkeypatch) -> int:
    """Force the serial build (1 chunk) or the parallel one (2 chunks of heads)."""
    n = request.param
    monkeypatch.setattr(A, "_split", lambda bh, work: min(n, bh))
    return n


CASES = [  # b, h, lq, s, d, dv, mask, strided
    (2, 3, 7, 9, 4, 5, None, False),
    (2, 3, 7, 9, 4, 5, "causal", True),
    (1, 2, 9, 7, 4, 4, "causal", False),
    (3, 2, 5, 6, 8, 3, "bias", True),
    (2, 2, 4, 4, 2, 2, "bias_rows", False),
    (4, 4, 64, 64, 32, 32, "causal", True),
    # causal heads longer than a query block (A.QB = 64 rows): full and ragged blocks, fewer
    # keys than queries (the last block sees them all), more keys than queries
    (1, 2, 70, 70, 8, 6, "causal", True),
    (1, 1, 150, 130, 4, 4, "causal", False),
    (1, 1, 130, 200, 5, 3, "causal", False),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_attention_kernels_match_reference(rng, chunks, dtype, case) -> None:
    b, h, lq, s, d, dv, mask, strided = case
    q, k, v = _qkv(rng, b, h, lq, s, d, dv, dtype, strided)
    bias = None
    if mask == "bias":
        bias = rng.standard_normal((b, 1, lq, s)).astype(dtype)
    elif mask == "bias_rows":  # -inf entries, one row masked everywhere (weights 0, as torch)
        bias = np.where(rng.random((lq, s)) < 0.4, -np.inf, 0.0).astype(dtype)
        bias[1] = -np.inf
    scale = 1 / np.sqrt(d)
    causal = mask == "causal"
    out, a = A.attention(q, k, v, bias, scale, causal)
    ro, ra = R.attention(q, k, v, bias, scale, causal)
    tol = dict(rtol=1e-12, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=2e-6)
    assert out.dtype == dtype and out.shape == (b, h, lq, dv) and a.shape == (b, h, lq, s)
    np.testing.assert_allclose(out, ro, **tol)
    np.testing.assert_allclose(a, ra, **tol)
    if mask == "bias_rows":
        assert (out[:, :, 1] == 0).all() and (a[:, :, 1] == 0).all()
        assert np.isfinite(out).all()
    if causal:
        assert (a[..., np.triu_indices(lq, 1, s)[0], np.triu_indices(lq, 1, s)[1]] == 0).all()
    g = rng.standard_normal(out.shape).astype(dtype)
    got = A.attention_backward(q, k, v, a, g, scale, causal)
    ref = R.attention_backward(q, k, v, ra, g, scale)
    for x, y, want in zip(got, ref, (q, k, v)):
        assert x.shape == want.shape and x.dtype == dtype
        np.testing.assert_allclose(x, y, **tol)
    if causal:  # the block path skips only zeros: the full path gives the same gradients
        for x, y in zip(got, A.attention_backward(q, k, v, a, g, scale, False)):
            np.testing.assert_allclose(x, y, **tol)


@pytest.mark.parametrize("scale", [-0.7, 0.0, 2.5])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_scale_of_any_sign(rng, chunks, scale, causal) -> None:
    """A positive scale is applied inside the exp, any other to the scores first."""
    q, k, v = _qkv(rng, 2, 2, 9, 9, 4, 3, np.float64, True)
    out, a = A.attention(q, k, v, None, scale, causal)
    ro, ra = R.attention(q, k, v, None, scale, causal)
    np.testing.assert_allclose(out, ro, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a, ra, rtol=1e-12, atol=1e-12)
    g = rng.standard_normal(out.shape)
    for x, y in zip(A.attention_backward(q, k, v, a, g, scale, causal),
                    R.attention_backward(q, k, v, ra, g, scale)):
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("lq", [6, 70])
def test_attention_nan_score_makes_its_row_nan(rng, chunks, lq) -> None:
    """A NaN in one query makes that query's weights and output NaN (the row max may skip
    it; the sum does not), and no other row."""
    q, k, v = _qkv(rng, 1, 2, lq, lq, 4, 4, np.float32, False)
    q[0, 1, 3, 2] = np.nan
    out, a = A.attention(q, k, v, None, 0.5, True)
    assert np.isnan(a[0, 1, 3, :4]).all() and (a[0, 1, 3, 4:] == 0).all()
    assert np.isnan(out[0, 1, 3]).all()
    rest = np.ones(a.shape[:3], bool)
    rest[0, 1, 3] = False
    assert np.isfinite(out[rest]).all() and np.isfinite(a[rest]).all()


def test_attention_float64_gradient_by_differences(rng) -> None:
    """The kernel's backward is the derivative of its forward (central differences)."""
    q, k, v = _qkv(rng, 1, 2, 3, 4, 2, 2, np.float64, False)
    g = rng.standard_normal((1, 2, 3, 2))
    _, a = A.attention(q, k, v, None, 0.7, True)
    grads = A.attention_backward(q, k, v, a, g, 0.7, True)
    for x, gx in zip((q, k, v), grads):
        num = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            old = x[idx]
            x[idx] = old + 1e-6
            up = np.sum(A.attention(q, k, v, None, 0.7, True)[0] * g)
            x[idx] = old - 1e-6
            dn = np.sum(A.attention(q, k, v, None, 0.7, True)[0] * g)
            x[idx] = old
            num[idx] = (up - dn) / 2e-6
        np.testing.assert_allclose(gx, num, rtol=1e-6, atol=1e-8)


def test_attention_kernels_decline_other_inputs() -> None:
    q = np.ones((1, 1, 2, 3), np.float32)
    assert A.attention(q.astype(np.float16), q, q, None, 1.0, False) is None
    assert A.attention(q, q.astype(np.float64), q, None, 1.0, False) is None
    assert A.attention(q[0], q[0], q[0], None, 1.0, False) is None  # 3-D: the backend reshapes
    assert A.attention(q[..., :0], q[..., :0], q, None, 1.0, False) is None  # D = 0


@pytest.mark.parametrize("strided", [False, True])
def test_attention_results_take_the_inputs_memory_order(rng, strided) -> None:
    """Heads viewed out of a (B, L, H*D) projection give (B, L, H, D)-ordered results (as
    torch's CPU attention), so transposing back is free; contiguous heads stay contiguous."""
    q, k, v = _qkv(rng, 2, 3, 5, 5, 4, 4, np.float32, strided)
    out, a = A.attention(q, k, v, None, 0.5, True)
    gq, gk, gv = A.attention_backward(q, k, v, a, np.ones_like(out), 0.5, True)
    for x in (out, gq, gk, gv):
        assert x.flags.c_contiguous is not strided
        assert x.transpose(0, 2, 1, 3).flags.c_contiguous is strided


def test_sdpa_output_strides_match_torch(rng) -> None:
    """``scaled_dot_product_attention`` on heads of a fused projection: lucid's output is
    laid out as torch's, and equal to it."""
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((2, 6, 3, 4, 8)).astype(np.float32)  # (B, L, q/k/v, H, D)
    outs = []
    for fw, xt in ((lucid, lucid.tensor(x)), (torch, torch.from_numpy(x))):
        q, k, v = (xt[:, :, i].transpose(1, 2) for i in range(3))
        out = fw.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        assert not out.is_contiguous() and out.transpose(1, 2).is_contiguous(), fw.__name__
        outs.append(out.numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dropout_p", [0.0, 0.5])
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_sdpa_query_that_sees_no_key_matches_torch(rng, kind, dropout_p) -> None:
    """A query whose every key is masked gets a zero output and zero gradients, as torch's
    safe softmax gives (not NaN), through the fused kernel and the dropout path alike; the
    other queries are unchanged."""
    torch = pytest.importorskip("torch")
    x = [rng.standard_normal((2, 3, 5, 4)) for _ in range(3)]
    keep = rng.random((5, 5)) < 0.6
    keep[:, 0] = True
    keep[2] = False
    mask = keep if kind == "bool" else np.where(keep, 0.0, -np.inf)
    res = []
    for fw in (lucid, torch):
        q, k, v = (fw.tensor(a, requires_grad=True) for a in x)
        out = fw.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=fw.tensor(mask),
                                                            dropout_p=dropout_p)
        out.sum().backward()
        res.append([out.detach().numpy(), q.grad.numpy()])
    for mine, theirs in zip(*res):
        assert np.isfinite(mine).all()
        assert (mine[:, :, 2] == 0).all() and (theirs[:, :, 2] == 0).all()
        if dropout_p == 0.0:  # the dropped weights differ between the frameworks
            np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_warm_signatures_type_what_a_head_view_call_passes(dtype):
    """A causal call on nanoGPT's head views, without and with a mask, passes exactly the types
    the warmed signatures declare, so the on-disk cache serves its first call (a mismatch
    compiles another specialization: ~17 s of a first step)."""
    rng = np.random.default_rng(3)
    T = numba.from_dtype(np.dtype(dtype))
    q, k, v = _qkv(rng, 2, 2, 8, 8, 4, 4, dtype, strided=True)
    out = A._like(q, 4)
    attn = np.empty((2, 2, 8, 8), dtype)  # (B, H, S, L): the weights are kept transposed
    mask = np.broadcast_to(rng.standard_normal((8, 8)).astype(dtype), (2, 2, 8, 8))
    for bias, spec in ((A._NO_BIAS[np.dtype(dtype)], A._sig_fwd), (mask, A._sig_fwd_mask)):
        passed = (q, k, v, bias, False, True, 1.0, out, attn, 2)
        assert tuple(numba.typeof(x) for x in passed) == spec(T)
