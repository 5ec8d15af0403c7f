"""nn.AdaptiveLogSoftmaxWithLoss against torch's (float64, torch's weights copied in): the
per-row output, the loss and the parameter gradients, log_prob, predict, the unbatched form
and torch's errors."""

from __future__ import annotations

import numpy as np
import pytest
from nn_util import arr, catch

import lucid
import lucid.nn as nn

RNG = np.random.default_rng(0)


def _pair(torch, **kw):
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, dtype=torch.float64, **kw)
    lm = nn.AdaptiveLogSoftmaxWithLoss(16, 20, dtype=lucid.float64, **kw)
    lm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    return lm, tm


@pytest.mark.parametrize("kw", [dict(cutoffs=[5, 12]), dict(cutoffs=[3], div_value=2.0,
                                                            head_bias=True)])
def test_forward_backward_match_torch(torch, kw):
    lm, tm = _pair(torch, **kw)
    assert repr(lm) == repr(tm)
    assert [n for n, _ in lm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    x = RNG.standard_normal((12, 16))
    y = np.array([0, 4, 5, 11, 12, 19, 2, 7, 15, 3, 18, 1])
    lo, tout = lm(lucid.tensor(x), lucid.tensor(y)), tm(torch.tensor(x), torch.tensor(y))
    np.testing.assert_allclose(arr(lo.output), arr(tout.output), rtol=1e-12)
    np.testing.assert_allclose(arr(lo.loss), arr(tout.loss), rtol=1e-12)
    lo.loss.backward()
    tout.loss.backward()
    for (n, lp), (_, tp) in zip(lm.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(arr(lp.grad), arr(tp.grad), rtol=1e-10, atol=1e-14, err_msg=n)
    np.testing.assert_allclose(arr(lm.log_prob(lucid.tensor(x))),
                               arr(tm.log_prob(torch.tensor(x))), rtol=1e-12)
    np.testing.assert_array_equal(arr(lm.predict(lucid.tensor(x))),
                                  arr(tm.predict(torch.tensor(x))))


def test_predict_paths_and_unbatched(torch):
    lm, tm = _pair(torch, cutoffs=[5, 12])
    for bias in (-50.0, 50.0, 0.0):  # all in the shortlist, none, a mix
        with torch.no_grad():
            tm.head.weight[5:].fill_(bias)
        lm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
        x = np.abs(RNG.standard_normal((9, 16)))
        np.testing.assert_array_equal(arr(lm.predict(lucid.tensor(x))),
                                      arr(tm.predict(torch.tensor(x))))
    x = RNG.standard_normal(16)
    lo, tout = lm(lucid.tensor(x), lucid.tensor(13)), tm(torch.tensor(x), torch.tensor(13))
    assert lo.output.shape == () and tuple(tout.output.shape) == ()
    np.testing.assert_allclose(arr(lo.output), arr(tout.output), rtol=1e-12)


def test_errors_match_torch(torch):
    def run(fw, nn):
        def build(*a, **k):
            return catch(lambda: type(nn.AdaptiveLogSoftmaxWithLoss(*a, **k)).__name__)

        m = nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3])
        return [
            build(4, 10, []), build(4, 10, [5, 3]), build(4, 10, [0, 3]), build(4, 10, [10]),
            build(4, 10, [3, 3]), build(4, 10, [2.5]),
            catch(lambda: m(fw.zeros(3, 4), fw.tensor([1, 2]))),
            catch(lambda: m(fw.zeros(3, 4, 1), fw.tensor([1, 2, 3]))),
            catch(lambda: m(fw.zeros(3, 4), fw.tensor(1))),
            catch(lambda: m(fw.zeros(3, 4), fw.zeros(3, 1, dtype=fw.int64))),
            catch(lambda: m(fw.zeros(2, 4), fw.tensor([1, 12]))),
        ]

    lucid_out = run(lucid, nn)
    torch_out = [s.replace("torch.", "lucid.") for s in run(torch, torch.nn)]
    assert lucid_out == torch_out
