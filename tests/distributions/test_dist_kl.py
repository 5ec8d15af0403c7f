"""kl_divergence: every registered pair against torch and against a Monte Carlo estimate
``E_p[log p - log q]``; the registry's dispatch, ambiguity warning and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
import lucid.distributions as D

_A = np.array([[1.0, 0.2, -0.3], [0.4, 1.5, 0.1], [-0.2, 0.3, 0.8]])
_B = np.array([[0.7, 0.0, 0.1], [-0.3, 1.1, 0.4], [0.2, -0.5, 1.2]])

# name -> (class, params of p, params of q); parameters as nested lists (float64 tensors)
PAIRS = {
    "normal": ("Normal", ([0.0, 1.0], [1.0, 0.5]), ([0.5, -1.0], [2.0, 0.7])),
    "laplace": ("Laplace", ([0.0, 1.0], [1.0, 0.5]), ([0.5, -1.0], [2.0, 0.7])),
    "exponential": ("Exponential", ([0.5, 2.0],), ([1.5, 0.3],)),
    "gamma": ("Gamma", ([0.5, 2.0], [1.0, 0.5]), ([1.5, 3.0], [2.0, 0.7])),
    "beta": ("Beta", ([0.5, 2.0], [1.0, 0.5]), ([1.5, 3.0], [2.0, 0.7])),
    "dirichlet": ("Dirichlet", ([[0.5, 2.0, 1.0], [3.0, 1.0, 1.0]],), ([[1.5, 3.0, 0.4]],)),
    "uniform": ("Uniform", ([0.0, 1.0, -1.0], [1.0, 2.0, 1.0]),
                ([-1.0, 0.5, 0.0], [2.0, 3.0, 1.0])),
    "bernoulli": ("Bernoulli", ([0.2, 0.7, 0.0, 1.0, 0.3],), ([0.5, 0.1, 0.5, 0.5, 0.0],)),
    "categorical": ("Categorical", ([[0.2, 0.3, 0.5], [0.0, 0.5, 0.5]],),
                    ([[0.5, 0.25, 0.25], [0.3, 0.1, 0.6]],)),
    "onehot": ("OneHotCategorical", ([[0.2, 0.3, 0.5]],), ([[0.5, 0.25, 0.25]],)),
    "poisson": ("Poisson", ([0.5, 3.0],), ([1.5, 2.0],)),
    "mvn": ("MultivariateNormal", ([1.0, 2.0, 3.0], _A @ _A.T + np.eye(3)),
            ([[0.0, 1.0, 0.0], [1.0, 1.0, 1.0]], _B @ _B.T + np.eye(3))),
}


def _make(lib: object, tensor: object, cls: str, params: tuple) -> object:
    return getattr(lib, cls)(*[tensor(np.asarray(p, np.float64)) for p in params])


def _lucid_pair(name: str) -> tuple[object, object]:
    cls, pp, qp = PAIRS[name]
    return _make(D, lucid.tensor, cls, pp), _make(D, lucid.tensor, cls, qp)


@pytest.mark.parametrize("name", list(PAIRS))
def test_kl_matches_torch(torch: object, name: str) -> None:
    import torch.distributions as TD

    cls, pp, qp = PAIRS[name]
    p, q = _lucid_pair(name)
    want = TD.kl_divergence(_make(TD, torch.tensor, cls, pp), _make(TD, torch.tensor, cls, qp))
    got = D.kl_divergence(p, q)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-7, atol=1e-12)


def test_kl_of_wrapped_distributions_matches_torch(torch: object) -> None:
    import torch.distributions as TD

    loc, scale = np.array([[0.0, 1.0], [2.0, -1.0]]), np.array([[1.0, 0.5], [0.3, 2.0]])
    L = [lucid.tensor(a) for a in (loc, scale, loc + 1, scale * 2)]
    T = [torch.tensor(a) for a in (loc, scale, loc + 1, scale * 2)]
    got = D.kl_divergence(D.Independent(D.Normal(L[0], L[1]), 1),
                          D.Independent(D.Normal(L[2], L[3]), 1))
    want = TD.kl_divergence(TD.Independent(TD.Normal(T[0], T[1]), 1),
                            TD.Independent(TD.Normal(T[2], T[3]), 1))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-7)
    got = D.kl_divergence(D.LogNormal(L[0], L[1]), D.LogNormal(L[2], L[3]))
    want = TD.kl_divergence(TD.LogNormal(T[0], T[1]), TD.LogNormal(T[2], T[3]))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-7)


MONTE_CARLO = ["normal", "laplace", "exponential", "gamma", "beta", "dirichlet", "categorical",
               "poisson", "mvn"]


@pytest.mark.parametrize("name", MONTE_CARLO)
def test_kl_matches_monte_carlo(name: str) -> None:
    p, q = _lucid_pair(name)
    n = 40000
    kl = D.kl_divergence(p, q)
    x = p.expand(tuple(kl.shape)).sample((n,))
    d = (p.log_prob(x) - q.log_prob(x)).numpy()
    se = d.std(0) / np.sqrt(n)
    kl = kl.numpy()
    assert np.all(np.abs(d.mean(0) - kl) < 6 * se + 1e-9), (d.mean(0), kl)


def test_kl_edge_values() -> None:
    p, q = _lucid_pair("uniform")
    np.testing.assert_array_equal(np.isinf(D.kl_divergence(p, q).numpy()), [0, 0, 1])
    np.testing.assert_array_equal(np.isinf(D.kl_divergence(q, p).numpy()), [1, 1, 0])
    c = D.kl_divergence(D.Categorical(lucid.tensor([0.0, 0.5, 0.5])),
                        D.Categorical(lucid.tensor([0.3, 0.0, 0.7])))
    assert np.isinf(c.item())
    b = D.kl_divergence(*_lucid_pair("bernoulli")).numpy()
    assert b[2] == pytest.approx(np.log(2)) and b[3] == pytest.approx(np.log(2))
    assert np.isinf(b[4]) and np.isfinite(b[:4]).all()
    assert D.kl_divergence(*_lucid_pair("normal")).numpy().min() > 0
    n = D.Normal(lucid.tensor([0.3]), lucid.tensor([2.0]))
    assert D.kl_divergence(n, n).numpy()[0] == 0.0


def test_register_kl_dispatch_and_errors() -> None:
    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)
    assert D.kl_divergence(p, q).item() == pytest.approx(0.5)  # falls back to Normal-Normal

    @D.register_kl(MyNormal, D.Normal)
    def _mine(p: object, q: object) -> lucid.Tensor:
        return lucid.tensor(-1.0)

    assert D.kl_divergence(p, q).item() == -1.0                 # the more specific pair wins
    assert D.kl_divergence(q, q).item() == 0.0

    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for "
                                                  "p type Normal and q type StudentT"):
        D.kl_divergence(q, D.StudentT(2.0))
    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass"):
        D.register_kl(int, D.Normal)
    with pytest.raises(TypeError, match="Expected type_q to be a Distribution subclass"):
        D.register_kl(D.Normal, "Normal")
    with pytest.raises(ValueError, match="different event shapes"):
        D.kl_divergence(D.MultivariateNormal(lucid.zeros(2), lucid.eye(2)),
                        D.MultivariateNormal(lucid.zeros(3), lucid.eye(3)))
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Independent(D.Normal(lucid.zeros(2, 2), 1.0), 1),
                        D.Independent(D.Normal(lucid.zeros(2, 2), 1.0), 2))


def test_register_kl_ambiguity_warns() -> None:
    class A(D.Normal):
        pass

    class B(D.Normal):
        pass

    @D.register_kl(A, D.Normal)
    def _a(p: object, q: object) -> lucid.Tensor:
        return lucid.tensor(1.0)

    @D.register_kl(D.Normal, B)
    def _b(p: object, q: object) -> lucid.Tensor:
        return lucid.tensor(2.0)

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        D.kl_divergence(A(0.0, 1.0), B(0.0, 1.0))
    assert any("Ambiguous kl_divergence(A, B)" in str(x.message) for x in w)
