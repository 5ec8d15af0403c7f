"""The distributions under test, one row each: constructor arguments (as numpy arrays), values
to score and the methods / properties both libraries must agree on. Shared by the torch
parity tests and the scipy-reference tests."""

from __future__ import annotations

import numpy as np

import lucid

_A = np.array([[1.0, 0.2, -0.3], [0.4, 1.5, 0.1], [-0.2, 0.3, 0.8]])
COV = _A @ _A.T + 0.5 * np.eye(3)
PREC = np.linalg.inv(COV)
TRIL = np.linalg.cholesky(COV)

MOMENTS = ("mean", "variance", "stddev")

# name -> (class name, kwargs, value for log_prob/cdf, icdf points or None, what to compare)
CASES: dict[str, tuple] = {
    "normal": ("Normal", {"loc": [0.0, 1.0, -2.0], "scale": [1.0, 0.5, 3.0]},
               [0.3, -1.0, 2.0], [0.1, 0.5, 0.9],
               ("log_prob", "cdf", "icdf", "entropy", "mode") + MOMENTS),
    "uniform": ("Uniform", {"low": [0.0, -1.0], "high": [1.0, 3.0]}, [0.5, 2.0], [0.25, 0.9],
                ("log_prob", "cdf", "icdf", "entropy") + MOMENTS),
    "laplace": ("Laplace", {"loc": [0.0, 1.0], "scale": [1.0, 2.5]}, [-0.7, 3.0], [0.2, 0.8],
                ("log_prob", "cdf", "icdf", "entropy", "mode") + MOMENTS),
    "exponential": ("Exponential", {"rate": [0.5, 2.0]}, [0.3, 1.5], [0.3, 0.7],
                    ("log_prob", "cdf", "icdf", "entropy", "mode") + MOMENTS),
    "gamma": ("Gamma", {"concentration": [0.5, 2.0, 5.0], "rate": [1.0, 0.5, 2.0]},
              [0.2, 3.0, 2.2], None, ("log_prob", "cdf", "entropy", "mode") + MOMENTS),
    "beta": ("Beta", {"concentration1": [0.5, 2.0, 3.0], "concentration0": [0.5, 1.0, 4.0]},
             [0.2, 0.5, 0.9], None, ("log_prob", "entropy", "mode") + MOMENTS),
    "lognormal": ("LogNormal", {"loc": [0.0, 0.5], "scale": [1.0, 0.3]}, [0.7, 2.0],
                  [0.3, 0.6], ("log_prob", "cdf", "icdf", "entropy", "mode") + MOMENTS),
    "poisson": ("Poisson", {"rate": [0.5, 3.0, 10.0]}, [0.0, 4.0, 7.0], None,
                ("log_prob", "mode") + MOMENTS),
    "bernoulli_probs": ("Bernoulli", {"probs": [0.2, 0.7, 0.5]}, [0.0, 1.0, 1.0], None,
                        ("log_prob", "entropy", "mode", "logits") + MOMENTS),
    "bernoulli_logits": ("Bernoulli", {"logits": [-1.0, 2.0]}, [1.0, 0.0], None,
                         ("log_prob", "entropy", "probs") + MOMENTS),
    "categorical_probs": ("Categorical", {"probs": [[0.2, 0.3, 0.5], [1.0, 1.0, 6.0]]},
                          np.array([2, 0]), None, ("log_prob", "entropy", "mode", "logits",
                                                   "probs")),
    "categorical_logits": ("Categorical", {"logits": [[0.1, -2.0, 1.0, 0.0]]},
                           np.array([[3], [1]]), None, ("log_prob", "entropy", "probs")),
    "onehot": ("OneHotCategorical", {"probs": [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]},
               [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]], None,
               ("log_prob", "entropy", "mode", "mean", "variance")),
    "dirichlet": ("Dirichlet", {"concentration": [[0.5, 1.0, 2.0], [3.0, 1.0, 1.0]]},
                  [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]], None,
                  ("log_prob", "entropy", "mode") + MOMENTS),
    "dirichlet_sparse_mode": ("Dirichlet", {"concentration": [[0.5, 0.7, 0.2]]},
                              [[0.2, 0.3, 0.5]], None, ("log_prob", "mode")),
    "mvn_cov": ("MultivariateNormal", {"loc": [1.0, 2.0, 3.0], "covariance_matrix": COV},
                [[0.5, 1.0, 2.0], [1.0, 2.0, 3.5]], None,
                ("log_prob", "entropy", "mode", "scale_tril", "precision_matrix",
                 "covariance_matrix") + MOMENTS),
    "mvn_prec": ("MultivariateNormal", {"loc": [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]],
                                        "precision_matrix": PREC},
                 [0.5, 1.0, 2.0], None,
                 ("log_prob", "entropy", "scale_tril", "covariance_matrix") + MOMENTS),
    "mvn_tril": ("MultivariateNormal", {"loc": [1.0, 2.0, 3.0], "scale_tril": TRIL},
                 [0.5, 1.0, 2.0], None,
                 ("log_prob", "entropy", "precision_matrix", "covariance_matrix") + MOMENTS),
    "relaxed_bernoulli": ("RelaxedBernoulli", {"temperature": [0.5], "probs": [0.3, 0.8]},
                          [0.2, 0.9], None, ("log_prob", "logits")),
    "logit_relaxed_bernoulli": ("LogitRelaxedBernoulli",
                                {"temperature": [0.7], "logits": [0.3, -1.2]},
                                [0.2, -3.0], None, ("log_prob", "probs")),
}


def build(lib: object, name: str, dtype: object = None) -> object:
    """The case's distribution in ``lib`` (``lucid.distributions`` or
    ``torch.distributions``), with float64 parameters."""
    cls_name, kwargs = CASES[name][0], CASES[name][1]
    tensor = _tensor_fn(lib)
    cls = getattr(lib, cls_name, None) or getattr(lib.relaxed_bernoulli, cls_name)
    return cls(**{k: tensor(v) for k, v in kwargs.items()})


def value(lib: object, name: str, which: int = 2) -> object:
    v = np.asarray(CASES[name][which])
    return _tensor_fn(lib)(v)


def _tensor_fn(lib: object) -> object:
    if lib.__name__.startswith("lucid"):
        def f(v: object) -> object:
            a = np.asarray(v)
            return lucid.tensor(a if a.dtype.kind == "i" else a.astype(np.float64))
        return f
    import torch  # NOTE: only reached from torch parity tests

    def g(v: object) -> object:
        a = np.asarray(v)
        return torch.tensor(a if a.dtype.kind == "i" else a.astype(np.float64))
    return g


def numpy_of(x: object) -> np.ndarray:
    """A host numpy copy of a lucid or torch tensor."""
    return np.asarray(x.detach().numpy()) if hasattr(x, "detach") else np.asarray(x)
