"""F.alpha_dropout, F.feature_alpha_dropout, nn.AlphaDropout and nn.FeatureAlphaDropout:
identity in eval mode (as torch), and in training the structure of torch's ``_dropout_impl``
(kept values ``a * x + alpha * a * p``, dropped ones ``-alpha * a * (1 - p)``), unit
statistics, the gradient ``a * keep``, whole channels for the feature form, and torch's
errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from nn_util import arr, catch

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

ALPHA = 1.7580993408473766


def _a(p):
    return 1.0 / math.sqrt((ALPHA * ALPHA * p + 1) * (1 - p))


@pytest.mark.parametrize("fn", ["alpha_dropout", "feature_alpha_dropout"])
def test_eval_and_edge_cases_match_torch(torch, fn):
    x = np.random.default_rng(0).standard_normal((4, 3, 5))
    lf, tf = getattr(F, fn), getattr(torch.nn.functional, fn)
    lx, tx = lucid.tensor(x), torch.tensor(x)
    for kw in (dict(p=0.5), dict(p=0.5, training=False), dict(p=0.0, training=True)):
        assert lf(lx, **kw) is lx and tf(tx, **kw) is tx
    np.testing.assert_array_equal(arr(lf(lx, 1.0, True)), arr(tf(tx, 1.0, True)))
    assert lf(lucid.zeros(0, 3), 0.5, True).shape == (0, 3)


def test_training_structure_and_statistics():
    p = 0.2
    x = lucid.randn(200, 500, dtype=lucid.float64, requires_grad=True)
    y = F.alpha_dropout(x, p, True)
    a = _a(p)
    xv, yv = arr(x), arr(y)
    kept = np.isclose(yv, a * xv + ALPHA * a * p, rtol=0, atol=1e-12)
    dropped = np.isclose(yv, -ALPHA * a * (1 - p), rtol=0, atol=1e-12)
    assert (kept | dropped).all()
    assert abs(dropped.mean() - p) < 0.01
    assert abs(yv.mean()) < 0.02 and abs(yv.std() - 1) < 0.02
    y.backward(lucid.ones_like(y))
    np.testing.assert_allclose(arr(x.grad), np.where(kept & ~dropped, a, 0.0), atol=1e-12)


def test_feature_form_drops_whole_channels():
    p = 0.5
    x = lucid.randn(8, 16, 3, 3, dtype=lucid.float64)
    y = arr(F.feature_alpha_dropout(x, p, True))
    dropped = np.isclose(y, -ALPHA * _a(p) * (1 - p), rtol=0, atol=1e-12)
    per_channel = dropped.reshape(8, 16, -1)
    assert (per_channel.all(-1) | ~per_channel.any(-1)).all()
    assert 0 < per_channel.all(-1).sum() < 128


def test_inplace_writes_the_input():
    x = lucid.randn(4, 5, dtype=lucid.float64)
    y = F.alpha_dropout(x, 0.3, True, inplace=True)
    assert y is x


def test_modules_and_errors_match_torch(torch):
    def run(fw, nn):
        F = nn.functional
        m, fm = nn.AlphaDropout(0.2), nn.FeatureAlphaDropout(0.3, inplace=True)
        x = fw.ones(4)
        m.eval()
        return [repr(m), repr(fm), catch(lambda: m(x).tolist()),
                catch(lambda: F.alpha_dropout(x, 1.5)),
                catch(lambda: F.feature_alpha_dropout(x, -0.1)),
                catch(lambda: F.feature_alpha_dropout(x, 0.5, True)),
                catch(lambda: F.feature_alpha_dropout(x, 0.5, False).tolist()),
                catch(lambda: nn.AlphaDropout(2.0))]

    assert run(lucid, nn) == run(torch, torch.nn)
