"""lucid.utils.checkpoint: recomputation in backward gives the same gradients."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.utils.checkpoint import checkpoint, checkpoint_sequential


def _net(dropout: float = 0.0) -> nn.Sequential:
    lucid.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Dropout(dropout), nn.Linear(8, 3),
                         nn.ReLU(), nn.Linear(3, 2))


def _grads(net, x):
    return [p.grad.numpy().copy() for p in net.parameters()] + \
        ([x.grad.numpy().copy()] if x.grad is not None else [])


@pytest.mark.parametrize("reentrant", [True, False])
@pytest.mark.parametrize("dropout", [0.0, 0.5])
def test_same_gradients_and_the_forward_runs_twice(reentrant, dropout):
    net = _net(dropout)
    x = lucid.randn(5, 4, dtype=lucid.float64, requires_grad=True)
    net.to(lucid.float64)
    lucid.manual_seed(7)
    net(x).pow(2).sum().backward()
    ref = _grads(net, x)
    net.zero_grad()
    x.grad = None
    calls = []

    def segment(t):
        calls.append(t.requires_grad)
        return net[:4](t)

    lucid.manual_seed(7)
    y = checkpoint(segment, x, use_reentrant=reentrant)
    assert calls == [True] and y.requires_grad  # forward ran once, without a graph inside
    net[4:](y).pow(2).sum().backward()
    assert len(calls) == 2  # ...and again during backward
    for a, b in zip(_grads(net, x), ref):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_matches_torch_checkpoint(torch):
    net = _net()
    tnet = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Dropout(0.0),
                               torch.nn.Linear(8, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    tnet.load_state_dict({k: torch.tensor(v.numpy()) for k, v in net.state_dict().items()})
    xs = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
    x, tx = lucid.tensor(xs, requires_grad=True), torch.tensor(xs, requires_grad=True)
    checkpoint_sequential(net, 2, x, use_reentrant=False).sum().backward()
    torch.utils.checkpoint.checkpoint_sequential(tnet, 2, tx, use_reentrant=False).sum() \
        .backward()
    for p, tp in zip(net.parameters(), tnet.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_gradcheck_through_checkpoint():
    w = lucid.randn(3, 3, dtype=lucid.float64, requires_grad=True)

    def fn(a, b):
        return checkpoint(lambda u, v: (u @ w).tanh() * v, a, b, use_reentrant=False)

    a = lucid.randn(2, 3, dtype=lucid.float64, requires_grad=True)
    b = lucid.randn(2, 3, dtype=lucid.float64, requires_grad=True)
    assert lucid.autograd.gradcheck(fn, (a, b))


def test_tuple_outputs_kwargs_and_parameters_without_input_grad():
    a = lucid.randn(3, requires_grad=True)
    b = lucid.randn(3, requires_grad=True)
    out = checkpoint(lambda u, v, scale=1.0: (u * scale, (u * v).sum(), lucid.tensor([1, 2])),
                     a, b, scale=3.0, use_reentrant=False)
    assert isinstance(out, tuple) and out[2].tolist() == [1, 2]
    (out[0].sum() + out[1]).backward()
    np.testing.assert_allclose(a.grad.numpy(), 3 + b.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), a.detach().numpy(), rtol=1e-6)
    net = _net()
    checkpoint(net, lucid.randn(2, 4), use_reentrant=False).sum().backward()
    assert net[0].weight.grad is not None


def test_reentrant_rules_and_warnings(torch):
    net = _net()
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        y = checkpoint(net, lucid.randn(2, 4), use_reentrant=True)
    assert not y.requires_grad
    with pytest.raises(ValueError, match="Unexpected keyword arguments: b"):
        checkpoint(lambda a, b: a, lucid.randn(2), b=2, use_reentrant=True)
    with torch.random.fork_rng():
        with pytest.raises(ValueError) as ref:
            torch.utils.checkpoint.checkpoint(lambda a, b: a, torch.randn(2), b=2,
                                              use_reentrant=True)
    assert str(ref.value) == "Unexpected keyword arguments: b"
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
        checkpoint(net, lucid.randn(2, 4, requires_grad=True))
    with lucid.no_grad():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert not checkpoint(net, lucid.randn(2, 4), use_reentrant=False).requires_grad
