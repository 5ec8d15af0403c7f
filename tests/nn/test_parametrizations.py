"""``lucid.nn.utils.parametrizations``: orthogonal (matrix_exp / cayley / householder),
weight_norm and spectral_norm - values against numpy, gradients and power iteration against
PyTorch with identical weights, state_dict keys and loading PyTorch checkpoints."""

from __future__ import annotations

import math

import numpy as np
import pytest
from devices import DEVICES
from nn_util import train_alongside

import lucid
import lucid.nn as nn
from lucid.nn.utils import parametrizations as LP
from lucid.nn.utils._orthogonal_maps import geqrf, householder_product, matrix_exp


def _np(t):
    return t.detach().numpy()


def _orth_error(W):
    W = _np(W).astype(np.float64)
    if W.shape[-2] < W.shape[-1]:
        W = np.swapaxes(W, -1, -2)
    return np.abs(np.swapaxes(W, -1, -2) @ W - np.eye(W.shape[-1])).max()


# ---- the maths helpers --------------------------------------------------------------------
def test_matrix_exp_against_series_and_gradcheck():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((2, 4, 4)) * 1.5
    ref = np.stack([sum(np.linalg.matrix_power(a, k) / math.factorial(k)
                        for k in range(80)) for a in A])
    np.testing.assert_allclose(_np(matrix_exp(lucid.tensor(A))), ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_np(matrix_exp(lucid.zeros(3, 3))), np.eye(3))
    x = lucid.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    assert lucid.autograd.gradcheck(matrix_exp, (x,))
    with pytest.raises(RuntimeError, match="must be batches of square matrices"):
        matrix_exp(lucid.zeros(2, 3))


def test_geqrf_and_householder_product_against_numpy_qr():
    rng = np.random.default_rng(1)
    B = rng.standard_normal((2, 5, 3))
    a, tau = geqrf(lucid.tensor(B))
    Q = _np(householder_product(a, tau))
    for i in range(2):
        q, r = np.linalg.qr(B[i])
        np.testing.assert_allclose(Q[i], q, atol=1e-12)       # same LAPACK sign convention
        np.testing.assert_allclose(np.triu(_np(a)[i])[:3], r, atol=1e-12)
    V = lucid.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    t = lucid.tensor(rng.uniform(0.5, 1.5, 3), requires_grad=True)
    assert lucid.autograd.gradcheck(householder_product, (V, t))


def test_geqrf_and_householder_product_match_torch(torch):
    B = torch.randn(2, 5, 3, dtype=torch.float64)
    a, tau = torch.geqrf(B)
    la, ltau = geqrf(lucid.tensor(B.numpy()))
    np.testing.assert_allclose(_np(la), a.numpy(), atol=1e-12)
    np.testing.assert_allclose(_np(ltau), tau.numpy(), atol=1e-12)
    np.testing.assert_allclose(_np(householder_product(lucid.tensor(a.numpy()),
                                                       lucid.tensor(tau.numpy()))),
                               torch.linalg.householder_product(a, tau).numpy(), atol=1e-12)


# ---- orthogonal ---------------------------------------------------------------------------
@pytest.mark.parametrize("shape,orth_map", [((4, 4), None), ((5, 3), None), ((3, 5), None),
                                            ((4, 4), "cayley"), ((3, 5), "matrix_exp"),
                                            ((5, 3), "householder")])
def test_orthogonal_is_orthogonal_and_keeps_square_weight(shape, orth_map):
    m = nn.Linear(shape[1], shape[0])
    LP.orthogonal(m, orthogonal_map=orth_map)
    assert _orth_error(m.weight) < 1e-5
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original",
                                    "parametrizations.weight.0.base"]
    np.testing.assert_allclose(_np(m.parametrizations.weight.original),
                               -np.eye(*shape), atol=0)
    m(lucid.randn(2, shape[1])).sum().backward()
    assert m.parametrizations.weight.original.grad is not None
    # a step keeps it orthogonal
    with lucid.no_grad():
        m.parametrizations.weight.original.sub_(0.3 * m.parametrizations.weight.original.grad)
    assert _orth_error(m.weight) < 1e-5


def test_orthogonal_square_starts_at_the_q_factor():
    m = nn.Linear(4, 4)
    W = _np(m.weight).astype(np.float64)
    LP.orthogonal(m)
    q, r = np.linalg.qr(W)
    np.testing.assert_allclose(_np(m.weight), q * np.sign(np.diag(r)), atol=1e-5)
    # assigning an orthogonal matrix stores it as is
    Q = lucid.tensor(np.linalg.qr(np.random.default_rng(0).standard_normal((4, 4)))[0],
                     dtype=lucid.float32)
    m.weight = Q
    np.testing.assert_allclose(_np(m.weight), _np(Q), atol=1e-6)


def test_orthogonal_without_trivialization():
    m = nn.Linear(3, 5)
    W = _np(m.weight).astype(np.float64)
    LP.orthogonal(m, use_trivialization=False)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    q, r = np.linalg.qr(W)
    np.testing.assert_allclose(_np(m.weight), q * np.sign(np.diag(r)), atol=1e-5)
    m2 = LP.orthogonal(nn.Linear(4, 4), orthogonal_map="cayley", use_trivialization=False)
    assert _orth_error(m2.weight) < 1e-5
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        m2.weight = lucid.eye(4)


def test_orthogonal_errors():
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
        LP.orthogonal(nn.Linear(3, 3), "w")
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a tensor "
                                         "of 1 dimensions."):
        LP.orthogonal(nn.Linear(3, 3), "bias")
    with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp", '
                                         '"cayley", "householder". Got: qr'):
        LP.orthogonal(nn.Linear(3, 3), orthogonal_map="qr")
    m = LP.orthogonal(nn.Linear(3, 3))
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices of shape"):
        m.weight = lucid.eye(2)


@pytest.mark.filterwarnings("ignore:lucid. no Metal or CUDA device:RuntimeWarning")
@pytest.mark.parametrize("device", DEVICES)
def test_parametrizations_run_on_every_device(device):
    x = lucid.randn(2, 3)
    for fn in (LP.orthogonal, LP.weight_norm, LP.spectral_norm):
        ref = fn(nn.Linear(3, 5))
        m = nn.Linear(3, 5).to(device)
        m.load_state_dict({"weight": ref.parametrizations.weight(), "bias": ref.bias})
        fn(m)
        m.load_state_dict(ref.state_dict())        # the same base / u / v
        assert m.weight.device == lucid.device(device)
        m(x.to(device)).sum().backward()
        ref(x).sum().backward()
        for (n, p), (_, q) in zip(m.named_parameters(), ref.named_parameters()):
            assert p.device == lucid.device(device), n
            np.testing.assert_allclose(_np(p.grad.to("cpu")), _np(q.grad), rtol=1e-4,
                                       atol=1e-5)


# ---- weight_norm --------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, -1, None])
def test_weight_norm_values_and_shapes(dim):
    m = nn.Conv2d(2, 3, 3)
    W = _np(m.weight).astype(np.float64)
    LP.weight_norm(m, dim=dim)
    g = m.parametrizations.weight.original0
    v = m.parametrizations.weight.original1
    if dim is None or dim == -1:
        assert g.shape == ()
        ref_g = np.linalg.norm(W)
    else:
        axes = tuple(i for i in range(4) if i != dim)
        ref_g = np.sqrt((W ** 2).sum(axis=axes, keepdims=True))
        assert g.shape == ref_g.shape
    np.testing.assert_allclose(_np(g), ref_g, rtol=1e-5)
    np.testing.assert_allclose(_np(v), W, rtol=1e-6)
    np.testing.assert_allclose(_np(m.weight), W, rtol=1e-5, atol=1e-7)
    with lucid.no_grad():
        g.mul_(2.0)
    np.testing.assert_allclose(_np(m.weight), 2 * W, rtol=1e-5, atol=1e-7)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original0",
                                    "parametrizations.weight.original1"]


def test_weight_norm_gradcheck():
    m = nn.Linear(3, 4).double()
    LP.weight_norm(m)
    g = m.parametrizations.weight.original0.detach().requires_grad_()
    v = m.parametrizations.weight.original1.detach().requires_grad_()
    assert lucid.autograd.gradcheck(lambda a, b: m.parametrizations.weight[0](a, b), (g, v))


def test_weight_norm_loads_a_legacy_checkpoint():
    with pytest.warns(FutureWarning, match="deprecated"):
        old = nn.utils.weight_norm(nn.Linear(3, 4))
    new = LP.weight_norm(nn.Linear(3, 4))
    new.load_state_dict(old.state_dict())           # weight_g / weight_v are renamed
    x = lucid.randn(2, 3)
    np.testing.assert_allclose(_np(new(x)), _np(old(x)), rtol=1e-6)


# ---- spectral_norm ------------------------------------------------------------------------
def test_spectral_norm_divides_by_the_top_singular_value():
    m = nn.Linear(6, 5)
    W = _np(m.weight).astype(np.float64)
    LP.spectral_norm(m, n_power_iterations=50)
    sn = m.parametrizations.weight[0]
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original",
                                    "parametrizations.weight.0._u",
                                    "parametrizations.weight.0._v"]
    assert sn._u.shape == (5,) and sn._v.shape == (6,)
    np.testing.assert_allclose(_np(m.weight), W / np.linalg.svd(W)[1][0], rtol=1e-4)
    assert np.linalg.norm(_np(m.weight), 2) == pytest.approx(1.0, rel=1e-4)
    # eval mode does not iterate
    m.eval()
    u = _np(sn._u).copy()
    _ = m.weight
    np.testing.assert_array_equal(_np(sn._u), u)
    m.train()
    buf = sn._u
    with lucid.no_grad():
        m.parametrizations.weight.original.copy_(lucid.randn(5, 6))
    _ = m.weight
    assert sn._u is buf and np.abs(_np(buf) - u).max() > 1e-3     # updated in place


def test_spectral_norm_options_and_errors():
    m = LP.spectral_norm(nn.ConvTranspose2d(3, 4, 2))
    assert m.parametrizations.weight[0].dim == 1            # ConvTranspose default
    assert m.parametrizations.weight[0]._u.shape == (4,)
    m = LP.spectral_norm(nn.Conv2d(3, 4, 2), dim=-1)
    assert m.parametrizations.weight[0].dim == 3
    m = LP.spectral_norm(nn.Linear(3, 4), "bias")            # a vector: plain normalisation
    np.testing.assert_allclose(np.linalg.norm(_np(m.bias)), 1.0, rtol=1e-5)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                                         r"\[-2, 1\] but got 2\)"):
        LP.spectral_norm(nn.Linear(3, 4), dim=2)
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive, but got "
                                         "n_power_iterations=0"):
        LP.spectral_norm(nn.Linear(3, 4), n_power_iterations=0)
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
        LP.spectral_norm(nn.Linear(3, 4), "w")


# ---- parity with PyTorch ------------------------------------------------------------------
_CASES = [("orthogonal", {}, (4, 4)), ("orthogonal", {}, (3, 5)), ("orthogonal", {}, (5, 3)),
          ("orthogonal", {"orthogonal_map": "cayley"}, (4, 4)),
          ("orthogonal", {"orthogonal_map": "householder", "use_trivialization": False}, (5, 3)),
          ("weight_norm", {}, (4, 3)), ("weight_norm", {"dim": None}, (4, 3)),
          ("spectral_norm", {}, (4, 4)), ("spectral_norm", {"n_power_iterations": 3}, "conv")]


@pytest.mark.parametrize("name,kwargs,shape", _CASES)
def test_training_step_matches_torch(torch, name, kwargs, shape):
    tnn = torch.nn
    torch.manual_seed(0)
    if shape == "conv":
        t, lm = tnn.Conv2d(2, 3, 3), nn.Conv2d(2, 3, 3)
        x = np.random.default_rng(0).standard_normal((2, 2, 5, 5)).astype(np.float32)
    else:
        t, lm = tnn.Linear(shape[1], shape[0]), nn.Linear(shape[1], shape[0])
        x = np.random.default_rng(0).standard_normal((3, shape[1])).astype(np.float32)
    lm.load_state_dict(t.state_dict())
    getattr(tnn.utils.parametrizations, name)(t, **kwargs)
    getattr(LP, name)(lm, **kwargs)
    assert type(lm).__name__ == type(t).__name__
    assert list(lm.state_dict()) == list(t.state_dict())
    if name != "spectral_norm":       # registration is deterministic
        np.testing.assert_allclose(_np(lm.weight), t.weight.detach().numpy(), atol=2e-6)
    lm.load_state_dict(t.state_dict())     # spectral_norm: torch's u / v; orthogonal: base
    train_alongside(torch, t, lm, x)
    t.eval()
    lm.eval()
    np.testing.assert_allclose(_np(lm.weight), t.weight.detach().numpy(), rtol=1e-4, atol=1e-6)
