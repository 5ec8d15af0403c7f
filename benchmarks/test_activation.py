"""Pointwise activations, forward + backward, lucid vs torch on identical float32 inputs
(a 16x64x512 activation, as in a small transformer's MLP).

Run one framework per process (see README.md):
    python -m pytest benchmarks/test_activation.py -k lucid --benchmark-enable -p no:cacheprovider
    python -m pytest benchmarks/test_activation.py -k torch --benchmark-enable -p no:cacheprovider
"""

from __future__ import annotations

import numpy as np
import pytest

import lucid

X = np.random.default_rng(0).standard_normal((16, 64, 512), dtype=np.float32)
G = np.ones_like(X)

# (name in nn.functional, keyword arguments)
CASES = [("silu", {}), ("mish", {}), ("softplus", {}), ("logsigmoid", {}), ("elu", {}),
         ("selu", {}), ("hardswish", {}), ("hardsigmoid", {}), ("hardtanh", {}), ("gelu", {}),
         ("gelu", {"approximate": "tanh"}), ("sigmoid", {}), ("tanh", {})]
IDS = [name + ("_tanh" if kw else "") for name, kw in CASES]


def _step(fw, name: str, kw: dict):
    x = fw.tensor(X, requires_grad=True)
    g = fw.tensor(G)
    f = getattr(fw.nn.functional, name)

    def run():
        x.grad = None
        f(x, **kw).backward(g)

    return run


@pytest.mark.parametrize(("name", "kw"), CASES, ids=IDS)
def test_activation_lucid(benchmark, name, kw):
    benchmark.group = f"activation {name} {kw or ''} 16x64x512 fwd+bwd"
    benchmark(_step(lucid, name, kw))


@pytest.mark.parametrize(("name", "kw"), CASES, ids=IDS)
def test_activation_torch(benchmark, name, kw, torch_or_skip):
    benchmark.group = f"activation {name} {kw or ''} 16x64x512 fwd+bwd"
    benchmark(_step(torch_or_skip, name, kw))
