"""F.multi_head_attention_forward against torch's (float64): packed and separate
projections, bias_k / bias_v, add_zero_attn, static keys / values, bool and float masks,
batched and unbatched, with and without weights; torch's errors. And lucid.nn.attention:
SDPBackend and the no-op sdpa_kernel."""

from __future__ import annotations

import numpy as np
import pytest
from nn_util import arr, catch

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.nn.attention import SDPBackend, sdpa_kernel

RNG = np.random.default_rng(0)
E, H, LQ, S, N = 8, 2, 4, 5, 3


def _weights():
    return dict(
        in_proj_weight=RNG.standard_normal((3 * E, E)) * 0.3,
        in_proj_bias=RNG.standard_normal(3 * E) * 0.1,
        out_proj_weight=RNG.standard_normal((E, E)) * 0.3,
        out_proj_bias=RNG.standard_normal(E) * 0.1,
        bias_k=RNG.standard_normal((1, 1, E)), bias_v=RNG.standard_normal((1, 1, E)),
        q_proj_weight=RNG.standard_normal((E, E)) * 0.3,
        k_proj_weight=RNG.standard_normal((E, 6)) * 0.3,
        v_proj_weight=RNG.standard_normal((E, 7)) * 0.3,
    )


def _run(fw, q, k, v, w, grads, **kw):
    t = {n: fw.tensor(a, requires_grad=grads) for n, a in w.items()}
    qt = fw.tensor(q, requires_grad=grads)
    kt = qt if k is q else fw.tensor(k)
    vt = kt if v is k else fw.tensor(v)
    sep = kw.pop("separate", False)
    bias = kw.pop("bias_kv", False)
    masks = {n: fw.tensor(kw.pop(n)) for n in ("attn_mask", "key_padding_mask", "static_k",
                                               "static_v") if n in kw}
    out, weights = fw.nn.functional.multi_head_attention_forward(
        qt, kt, vt, E, H, None if sep else t["in_proj_weight"], t["in_proj_bias"],
        t["bias_k"] if bias else None, t["bias_v"] if bias else None,
        kw.pop("add_zero_attn", False), 0.0, t["out_proj_weight"], t["out_proj_bias"],
        use_separate_proj_weight=sep, q_proj_weight=t["q_proj_weight"] if sep else None,
        k_proj_weight=t["k_proj_weight"] if sep else None,
        v_proj_weight=t["v_proj_weight"] if sep else None, **masks, **kw)
    loss = out.sum() + (0 if weights is None else (weights * weights).sum())
    loss.backward()
    return out, weights, qt.grad, t["in_proj_bias"].grad, t["out_proj_weight"].grad


CASES = [
    dict(), dict(self_attn=True), dict(kv_same=True), dict(need_weights=False),
    dict(attn_mask="bool"), dict(attn_mask="float", need_weights=False),
    dict(key_padding_mask=True), dict(key_padding_mask=True, need_weights=False),
    dict(bias_kv=True, add_zero_attn=True, attn_mask="bool", key_padding_mask=True),
    dict(add_zero_attn=True, need_weights=False), dict(separate=True),
    dict(average_attn_weights=False), dict(unbatched=True), dict(unbatched=True,
                                                                 key_padding_mask=True),
    dict(static=True), dict(attn_mask="causal", is_causal=True, need_weights=False),
    dict(attn_mask="bool3d"),
]


@pytest.mark.parametrize("case", CASES, ids=[",".join(c) or "plain" for c in CASES])
def test_matches_torch(torch, case):
    case = dict(case)
    w = _weights()
    unb = case.pop("unbatched", False)
    lead = () if unb else (N,)
    ke = 6 if case.get("separate") else E
    ve = 7 if case.get("separate") else E
    q = RNG.standard_normal((LQ, *lead, E))
    k = RNG.standard_normal((S, *lead, ke))
    v = RNG.standard_normal((S, *lead, ve))
    if case.pop("self_attn", False):
        k = v = q
    if case.pop("kv_same", False):
        v = k
    am = case.pop("attn_mask", None)
    if am == "bool":
        case["attn_mask"] = RNG.random((LQ, S)) > 0.7
    elif am == "float":
        case["attn_mask"] = RNG.standard_normal((LQ, S))
    elif am == "causal":
        k = v = q
        case["attn_mask"] = np.triu(np.ones((LQ, LQ), dtype=bool), 1)
    elif am == "bool3d":
        case["attn_mask"] = RNG.random((N * H, LQ, S)) > 0.7
    if case.pop("key_padding_mask", False):
        m = RNG.random(lead + (S,)) > 0.7
        m[..., 0] = False
        case["key_padding_mask"] = m
    if case.pop("static", False):
        case["static_k"] = RNG.standard_normal((N * H, S + 1, E // H))
        case["static_v"] = RNG.standard_normal((N * H, S + 1, E // H))
    lres = _run(lucid, q, k, v, w, True, **dict(case))
    tres = _run(torch, q, k, v, w, True, **dict(case))
    for a, b in zip(lres, tres):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(arr(a), arr(b), rtol=1e-10, atol=1e-12)


def test_errors_match_torch(torch):
    def run(fw):
        F = fw.nn.functional
        q = fw.zeros(LQ, N, E)
        w, b = fw.zeros(3 * E, E), fw.zeros(3 * E)
        ow = fw.zeros(E, E)
        kp = fw.zeros(N, S + 1, dtype=fw.bool)

        def call(*args, **kw):
            return catch(lambda: F.multi_head_attention_forward(*args, **kw)[0].shape)

        return [
            call(q, q, q, E + 1, H, w, b, None, None, False, 0.0, ow, None),
            call(q, q, q, E, 3, w, b, None, None, False, 0.0, ow, None),
            call(q, q[0], q, E, H, w, b, None, None, False, 0.0, ow, None),
            call(q[0, 0], q, q, E, H, w, b, None, None, False, 0.0, ow, None),
            call(q, q, q, E, H, None, b, None, None, False, 0.0, ow, None),
            call(q, q, q, E, H, w, b, fw.zeros(1, 1, E), None, False, 0.0, ow, None),
            call(q, q, q, E, H, w, b, None, None, False, 0.0, ow, None, key_padding_mask=kp),
            call(q, q, q, E, H, w, b, None, None, False, 0.0, ow, None,
                 attn_mask=fw.zeros(LQ, LQ + 1)),
            call(q, q, q, E, H, w, b, None, None, False, 0.0, ow, None,
                 attn_mask=fw.zeros(LQ, LQ, dtype=fw.int64)),
            call(q, q, q, E, H, w, b, None, None, False, 0.0, ow, None, is_causal=True),
        ]

    assert run(lucid) == [s.replace("torch.", "lucid.") for s in run(torch)]


def test_sdpa_kernel_is_a_checked_noop(torch):
    assert [(b.name, int(b)) for b in SDPBackend] == \
        [(b.name, int(b)) for b in torch.nn.attention.SDPBackend.__members__.values()]
    assert repr(SDPBackend.MATH) == "<SDPBackend.MATH: 0>" and str(SDPBackend.MATH) == \
        str(torch.nn.attention.SDPBackend.MATH)
    q = lucid.randn(1, 2, 3, 4)
    ref = F.scaled_dot_product_attention(q, q, q)
    for backends in (SDPBackend.FLASH_ATTENTION, [SDPBackend.MATH, SDPBackend.CUDNN_ATTENTION]):
        with sdpa_kernel(backends, set_priority=True) as ctx:
            assert ctx == {}
            np.testing.assert_array_equal(arr(F.scaled_dot_product_attention(q, q, q)),
                                          arr(ref))
    msg = catch(lambda: sdpa_kernel("math").__enter__())
    assert msg == catch(lambda: torch.nn.attention.sdpa_kernel("math").__enter__())
    assert nn.attention is lucid.nn.attention and "sdpa_kernel" in nn.attention.__all__
