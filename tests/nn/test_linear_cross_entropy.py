"""``F.linear_cross_entropy``, ``nn.LinearCrossEntropyLoss`` and
``nn.LinearCrossEntropyOptions`` against torch (float64 values and gradients, K-dimensional
losses, probability targets, options, errors)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

TOL = 1e-10


def _lt(t: object) -> lucid.Tensor:
    return lucid.tensor(t.detach().numpy().copy(), requires_grad=True)  # type: ignore[attr-defined]


def _close(a: object, b: object) -> None:
    np.testing.assert_allclose(np.asarray(a.detach().numpy()),  # type: ignore[attr-defined]
                               np.asarray(b.detach().numpy()),  # type: ignore[attr-defined]
                               rtol=TOL, atol=TOL)


CASES = [
    ({}, "idx", (), False),
    ({"reduction": "sum", "label_smoothing": 0.2}, "idx", (), True),
    ({"reduction": "none", "ignore_index": 1}, "idx", (), True),
    ({"weight": True}, "idx", (), True),
    ({"weight": True, "reduction": "none"}, "idx", (3, 2), True),
    ({}, "prob", (), True),
    ({"label_smoothing": 0.1}, "prob", (2,), False),
    ({}, "idx", "unbatched", True),
    ({}, "prob", "unbatched", False),
]


@pytest.mark.parametrize("kw,kind,out_features,bias", CASES)
def test_functional_matches_torch(torch, kw, kind, out_features, bias) -> None:
    torch.manual_seed(0)
    f64 = torch.float64
    n, i, c = 4, 5, 6
    unbatched = out_features == "unbatched"
    of = () if unbatched else out_features
    tx = torch.randn(*(() if unbatched else (n,)), i, dtype=f64, requires_grad=True)
    tw = torch.randn(c, *of, i, dtype=f64, requires_grad=True)
    tb = torch.randn(c, *of, dtype=f64, requires_grad=True) if bias else None
    batch = () if unbatched else (n,)
    if kind == "idx":
        target = torch.randint(0, c, (*batch, *of))
    else:
        target = torch.randn(*batch, c, *of, dtype=f64).softmax(len(batch))
    kw = dict(kw)
    t_kw, l_kw = dict(kw), dict(kw)
    if kw.get("weight"):
        cw = torch.rand(c, dtype=f64) + 0.5
        t_kw["weight"], l_kw["weight"] = cw, lucid.tensor(cw.numpy())
    lx, lw = _lt(tx), _lt(tw)
    lb = _lt(tb) if bias else None
    t_out = torch.nn.functional.linear_cross_entropy(tx, tw, target, linear_bias=tb, **t_kw)
    l_out = F.linear_cross_entropy(lx, lw, lucid.tensor(target.numpy()), linear_bias=lb, **l_kw)
    assert tuple(l_out.shape) == tuple(t_out.shape)
    _close(l_out, t_out)
    g = np.random.default_rng(0).standard_normal(tuple(t_out.shape))
    t_leaves = [tx, tw] + ([tb] if bias else [])
    t_grads = torch.autograd.grad((t_out * torch.from_numpy(g)).sum(), t_leaves)
    (l_out * lucid.tensor(g)).sum().backward()
    for lt, tg in zip([lx, lw] + ([lb] if bias else []), t_grads):
        _close(lt.grad, tg)


def test_options_give_the_same_values(torch) -> None:
    torch.manual_seed(1)
    f64 = torch.float64
    tx = torch.randn(8, 5, dtype=f64, requires_grad=True)
    tw = torch.randn(7, 5, dtype=f64, requires_grad=True)
    target = torch.randint(0, 7, (8,))
    t_opts = torch.nn.LinearCrossEntropyOptions(batch_chunk_size=3, chunking_method=None)
    l_opts = nn.LinearCrossEntropyOptions(batch_chunk_size=3, chunking_method=None)
    t_out = torch.nn.functional.linear_cross_entropy(tx, tw, target, options=t_opts)
    lx, lw = _lt(tx), _lt(tw)
    l_out = F.linear_cross_entropy(lx, lw, lucid.tensor(target.numpy()), options=l_opts)
    _close(l_out, t_out)
    t_out.backward()
    l_out.backward()
    _close(lx.grad, tx.grad)
    _close(lw.grad, tw.grad)


def test_options_fields_and_validation_as_torch(torch) -> None:
    t, lo = torch.nn.LinearCrossEntropyOptions(), nn.LinearCrossEntropyOptions()
    for field in ("allow_retain_graph", "batch_chunk_size", "chunking_method", "acc_policy",
                  "acc_dtype"):
        assert getattr(lo, field) == getattr(t, field)
    with pytest.raises(AttributeError):
        lo.batch_chunk_size = 2  # type: ignore[misc]
    bad = [{"acc_policy": "fast"}, {"chunking_method": "rows"},
           {"chunking_method": "aspect_ratio:0"}, {"batch_chunk_size": 0}]
    for kw in bad:
        with pytest.raises(ValueError) as te:
            torch.nn.LinearCrossEntropyOptions(**kw)
        with pytest.raises(ValueError) as le:
            nn.LinearCrossEntropyOptions(**kw)
        assert str(le.value) == str(te.value)
    nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:4", acc_dtype=lucid.float32)
    with pytest.raises(ValueError, match="acc_dtype"):
        nn.LinearCrossEntropyOptions(acc_dtype=lucid.int64)


def test_options_warn_when_ignored_as_torch(torch) -> None:
    x, w = lucid.randn(3, 4), lucid.randn(5, 4)
    target = lucid.tensor([0, 1, 2])
    with pytest.warns(UserWarning, match="``options`` ignored"):
        F.linear_cross_entropy(x, w, target, label_smoothing=0.1,
                               options=nn.LinearCrossEntropyOptions())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.linear_cross_entropy(x, w, target, options=nn.LinearCrossEntropyOptions())


def test_errors_as_torch(torch) -> None:
    f64 = torch.float64
    tx, tw = torch.randn(3, 4, dtype=f64), torch.randn(5, 4, dtype=f64)
    tprob = torch.rand(3, 5, dtype=f64)
    calls = [
        lambda m, x, w: m(x[None], w, None),
        lambda m, x, w: m(x, w[0], None),
        lambda m, x, w: m(x[:, :3], w, None),
        lambda m, x, w: m(x, w, None, linear_bias=w[:, 0][:3]),
        lambda m, x, w: m(x[0], w[:, None], None),
        lambda m, x, w: m(x, w, "prob", ignore_index=0),
    ]
    for call in calls:
        def run(mod: object, x: object, w: object, prob: object, call: object = call) -> None:
            def fn(x: object, w: object, target: object, **kw: object) -> object:
                t = prob if target == "prob" else (x[..., 0] * 0).long()
                return mod.linear_cross_entropy(x, w, t, **kw)  # type: ignore[attr-defined]
            call(fn, x, w)  # type: ignore[operator]

        with pytest.raises(RuntimeError) as te:
            run(torch.nn.functional, tx, tw, tprob)
        with pytest.raises(RuntimeError) as le:
            run(F, lucid.tensor(tx.numpy()), lucid.tensor(tw.numpy()),
                lucid.tensor(tprob.numpy()))
        assert str(le.value) == str(te.value)


def test_module_matches_torch(torch) -> None:
    torch.manual_seed(0)
    cw = torch.rand(6, dtype=torch.float64) + 0.5
    t = torch.nn.LinearCrossEntropyLoss(5, 6, out_features=(3,), bias=True,
                                        dtype=torch.float64, weight=cw, label_smoothing=0.1,
                                        ignore_index=2)
    m = nn.LinearCrossEntropyLoss(5, 6, out_features=(3,), bias=True, dtype=lucid.float64,
                                  weight=lucid.tensor(cw.numpy()), label_smoothing=0.1,
                                  ignore_index=2)
    assert list(m.state_dict()) == list(t.state_dict())
    m.load_state_dict({k: lucid.tensor(v.numpy()) for k, v in t.state_dict().items()})
    assert m.linear.weight.shape == (18, 5) and m.linear.bias.shape == (18,)
    tx = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    target = torch.randint(0, 6, (4, 3))
    lx = _lt(tx)
    t_out, l_out = t(tx, target), m(lx, lucid.tensor(target.numpy()))
    _close(l_out, t_out)
    t_out.backward()
    l_out.backward()
    _close(lx.grad, tx.grad)
    _close(m.linear.weight.grad, t.linear.weight.grad)
    _close(m.linear.bias.grad, t.linear.bias.grad)
    assert repr(m) == repr(t).replace("torch", "lucid")


def test_module_defaults_and_errors_as_torch(torch) -> None:
    t, m = torch.nn.LinearCrossEntropyLoss(4, 3), nn.LinearCrossEntropyLoss(4, 3)
    assert m.linear.bias is None and m.reduction == "mean" and m.ignore_index is None
    assert m.out_features == () and m.options is None and m.weight is None
    assert repr(m) == repr(t)
    for kw in ({"weight": "w"}, {"label_smoothing": 1.5}):
        t_kw = {"weight": torch.ones(4)} if "weight" in kw else kw
        l_kw = {"weight": lucid.ones(4)} if "weight" in kw else kw
        with pytest.raises(RuntimeError) as te:
            torch.nn.LinearCrossEntropyLoss(4, 3, **t_kw)
        with pytest.raises(RuntimeError) as le:
            nn.LinearCrossEntropyLoss(4, 3, **l_kw)
        assert str(le.value) == str(te.value)
