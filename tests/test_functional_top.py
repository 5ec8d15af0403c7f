"""torch's top-level forms of functional ops (``torch.conv2d``, ``torch.layer_norm``,
``torch.batch_norm``, ``torch.embedding``, ...): the same arguments in torch's top-level order
give torch's values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid


def _r(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed + len(shape)).standard_normal(shape)


CASES: list[tuple[str, Any]] = [
    ("conv1d", lambda m, t: m.conv1d(t(_r(2, 3, 9)), t(_r(4, 3, 3)), t(_r(4)), 2, 1)),
    ("conv2d", lambda m, t: m.conv2d(t(_r(2, 3, 6, 6)), t(_r(4, 3, 3, 3)), None, 1, 1, 1, 1)),
    ("conv3d", lambda m, t: m.conv3d(t(_r(1, 2, 4, 4, 4)), t(_r(3, 2, 2, 2, 2)))),
    ("conv_transpose2d",
     lambda m, t: m.conv_transpose2d(t(_r(2, 3, 4, 4)), t(_r(3, 2, 3, 3)), None, 2, 1, 1)),
    ("cosine_similarity", lambda m, t: m.cosine_similarity(t(_r(3, 5)), t(_r(3, 5, seed=1)))),
    ("pairwise_distance", lambda m, t: m.pairwise_distance(t(_r(3, 5)), t(_r(3, 5, seed=2)))),
    ("pixel_shuffle", lambda m, t: m.pixel_shuffle(t(_r(1, 8, 2, 3)), 2)),
    ("pixel_unshuffle", lambda m, t: m.pixel_unshuffle(t(_r(1, 2, 4, 6)), 2)),
    ("channel_shuffle", lambda m, t: m.channel_shuffle(t(_r(1, 6, 2, 2)), 3)),
    ("bilinear", lambda m, t: m.bilinear(t(_r(4, 3)), t(_r(4, 2)), t(_r(5, 3, 2)), t(_r(5)))),
    ("prelu", lambda m, t: m.prelu(t(_r(2, 3, 4)), t(np.array([0.1, 0.2, 0.3])))),
    ("selu", lambda m, t: m.selu(t(_r(3, 4)))),
    ("celu", lambda m, t: m.celu(t(_r(3, 4)), 0.7)),
    ("threshold", lambda m, t: m.threshold(t(_r(3, 4)), 0.1, -2.0)),
    ("hardshrink", lambda m, t: m.hardshrink(t(_r(3, 4)), 0.3)),
    ("max_pool1d", lambda m, t: m.max_pool1d(t(_r(2, 3, 9)), 3)),
    ("max_pool2d", lambda m, t: m.max_pool2d(t(_r(2, 3, 6, 6)), 2, 1, 1)),
    ("max_pool3d", lambda m, t: m.max_pool3d(t(_r(1, 2, 4, 4, 4)), 2)),
    ("avg_pool1d", lambda m, t: m.avg_pool1d(t(_r(2, 3, 9)), 3, 2, 1)),
    ("adaptive_avg_pool1d", lambda m, t: m.adaptive_avg_pool1d(t(_r(2, 3, 9)), 4)),
    ("dropout", lambda m, t: m.dropout(t(_r(3, 4)), 0.5, False)),
    ("layer_norm", lambda m, t: m.layer_norm(t(_r(2, 3, 4)), [4], t(_r(4)), t(_r(4, seed=1)),
                                             1e-5, True)),
    ("group_norm", lambda m, t: m.group_norm(t(_r(2, 6, 3)), 3, t(_r(6)), t(_r(6, seed=3)))),
    ("batch_norm", lambda m, t: m.batch_norm(t(_r(4, 3, 5)), t(_r(3)), t(_r(3, seed=1)),
                                             t(np.zeros(3)), t(np.ones(3)), True, 0.1, 1e-5,
                                             True)),
    ("instance_norm", lambda m, t: m.instance_norm(t(_r(2, 3, 5)), t(_r(3)), t(_r(3, seed=4)),
                                                   None, None, True, 0.1, 1e-5, True)),
    ("embedding", lambda m, t: m.embedding(t(_r(6, 4)), t(np.array([[1, 5], [0, 1]])), 1)),
    ("convolution", lambda m, t: m.convolution(t(_r(2, 3, 9)), t(_r(4, 3, 3)), t(_r(4)), [2],
                                               [1], [1], False, [0], 1)),
    ("convolution_transposed", lambda m, t: m.convolution(
        t(_r(2, 4, 5, 5)), t(_r(4, 3, 3, 3)), None, [2, 2], [1, 1], [1, 1], True, [1, 1], 1)),
    ("constant_pad_nd", lambda m, t: m.constant_pad_nd(t(_r(2, 3, 9)), [1, -2, 0, 1], 3.0)),
    ("rms_norm", lambda m, t: m.rms_norm(t(_r(2, 3, 4)), [4], t(_r(4)), 1e-6)),
    ("max_pool1d_with_indices", lambda m, t: m.max_pool1d_with_indices(t(_r(2, 3, 9)), 3)[0]),
    ("adaptive_max_pool1d", lambda m, t: m.adaptive_max_pool1d(t(_r(2, 3, 9)), 4)[1]),
]

_A, _B, _Y = _r(4, 5), _r(4, 5, seed=7), np.sign(_r(4, seed=9))
LOSSES: list[tuple[str, Any]] = [
    ("binary_cross_entropy_with_logits",
     lambda m, t, r: m.binary_cross_entropy_with_logits(t(_A), t((_B > 0) * 1.0), t(_r(5)),
                                                        t(np.abs(_r(5))), r)),
    ("cosine_embedding_loss", lambda m, t, r: m.cosine_embedding_loss(t(_A), t(_B), t(_Y), 0.1, r)),
    ("hinge_embedding_loss", lambda m, t, r: m.hinge_embedding_loss(t(_A), t(np.sign(_B)), 0.5, r)),
    ("kl_div", lambda m, t, r: m.kl_div(t(_A), t(np.abs(_B)), r)),
    ("kl_div_log_target", lambda m, t, r: m.kl_div(t(_A), t(_B), r, log_target=True)),
    ("margin_ranking_loss",
     lambda m, t, r: m.margin_ranking_loss(t(_A[:, 0]), t(_B[:, 0]), t(_Y), 0.2, r)),
    ("triplet_margin_loss",
     lambda m, t, r: m.triplet_margin_loss(t(_A), t(_B), t(_A[::-1].copy()), 1.0, 2, 1e-6,
                                           True, r)),
    ("poisson_nll_loss",
     lambda m, t, r: m.poisson_nll_loss(t(_A), t(np.abs(_B)), True, True, 1e-8, r)),
]


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("name,call", LOSSES, ids=[c[0] for c in LOSSES])
def test_top_level_loss_takes_the_reduction_enum(torch: Any, name: str, call: Any,
                                                 reduction: int) -> None:
    got = call(lucid, lambda a: lucid.tensor(a), reduction)
    want = call(torch, lambda a: torch.tensor(a), reduction)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_top_level_loss_refuses_a_reduction_name() -> None:
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        lucid.kl_div(lucid.zeros(2), lucid.zeros(2), "mean")


@pytest.mark.parametrize("name,call", CASES, ids=[c[0] for c in CASES])
def test_top_level_form_matches_torch(torch: Any, name: str, call: Any) -> None:
    got = call(lucid, lambda a: lucid.tensor(a))
    want = call(torch, lambda a: torch.tensor(a))
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-10,
                               atol=1e-12)


def test_dropout_and_embedding_arguments_in_torchs_top_level_order() -> None:
    x = lucid.ones(1000)
    kept = lucid.dropout(x, 0.5, True)
    assert 0.3 < float((kept == 0).float().mean()) < 0.7
    assert lucid.dropout(x, 0.5, False) is not None
    w = lucid.tensor(np.arange(12.0).reshape(4, 3))
    np.testing.assert_array_equal(lucid.embedding(w, lucid.tensor([3, 0])).numpy(),
                                  [[9, 10, 11], [0, 1, 2]])
    bn = lucid.batch_norm(lucid.tensor(_r(4, 2)), None, None, None, None, True, 0.1, 1e-5)
    np.testing.assert_allclose(bn.numpy().mean(0), 0.0, atol=1e-12)


def test_top_level_dropouts_and_in_place_activations(torch: Any) -> None:
    x = _r(4, 3, 2, 2)
    for m in (lucid, torch):
        t = m.tensor(x)
        for fn in (m.alpha_dropout, m.feature_alpha_dropout, m.feature_dropout, m.dropout):
            np.testing.assert_array_equal(fn(t, 0.5, False).numpy(), x)
        m.manual_seed(0)
        y = m.feature_dropout(m.ones(64, 8, 2, 2), 0.5, True).numpy()
        assert set(np.unique(y)) <= {0.0, 2.0}
        assert ((y == 0).all((2, 3)) | (y != 0).all((2, 3))).all()
        assert 0.3 < (y == 0).mean() < 0.7
        z = m.tensor(_r(3, 4))
        assert m.selu_(z) is z
        m.threshold_(z, 0.2, -9.0)
        m.celu_(z, 0.7)
        np.testing.assert_allclose(z.numpy(), _ref_inplace(torch), rtol=1e-12)
        np.testing.assert_allclose(m.pdist(m.tensor(_r(5, 3))).numpy(),
                                   torch.pdist(torch.tensor(_r(5, 3))).numpy(), rtol=1e-12)
        np.testing.assert_array_equal(m.rrelu(m.tensor(_r(3, 4))).numpy(),
                                      torch.rrelu(torch.tensor(_r(3, 4))).numpy())


def _ref_inplace(torch: Any) -> np.ndarray:
    t = torch.tensor(_r(3, 4))
    return torch.nn.functional.celu(
        torch.nn.functional.threshold(torch.selu(t), 0.2, -9.0), 0.7).numpy()
