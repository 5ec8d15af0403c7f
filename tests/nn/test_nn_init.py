"""nn.init: statistics, in-place semantics, reproducibility, errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from nn_util import arr, catch

import lucid
import lucid.nn as nn
from lucid.nn import init


def _param(*shape):
    return nn.Parameter(lucid.zeros(*shape))


def test_init_is_in_place_outside_the_graph_and_bumps_version():
    p = _param(4, 5)
    v = p._version
    with_grad = lucid.is_grad_enabled()
    out = init.normal_(p)
    assert out is p and p.requires_grad and p.grad_fn is None and p.is_leaf
    assert p._version == v + 1 and lucid.is_grad_enabled() == with_grad


@pytest.mark.parametrize("fn", [
    lambda t, g=None: init.uniform_(t, -2, 3, generator=g),
    lambda t, g=None: init.normal_(t, 1, 2, generator=g),
    lambda t, g=None: init.trunc_normal_(t, generator=g),
    lambda t, g=None: init.xavier_uniform_(t, generator=g),
    lambda t, g=None: init.xavier_normal_(t, generator=g),
    lambda t, g=None: init.kaiming_uniform_(t, generator=g),
    lambda t, g=None: init.kaiming_normal_(t, generator=g),
    lambda t, g=None: init.orthogonal_(t, generator=g),
])
def test_random_inits_are_reproducible(fn):
    lucid.manual_seed(7)
    a = fn(_param(6, 5))
    lucid.manual_seed(7)
    b = fn(_param(6, 5))
    np.testing.assert_array_equal(arr(a), arr(b))
    c = fn(_param(6, 5), lucid.Generator().manual_seed(7))
    d = fn(_param(6, 5), lucid.Generator().manual_seed(7))
    np.testing.assert_array_equal(arr(c), arr(d))


def test_distributions():
    big = _param(400, 500)
    u = arr(init.uniform_(big, -2.0, 3.0))
    assert u.min() >= -2.0 and u.max() < 3.0 and abs(u.mean() - 0.5) < 0.02
    n = arr(init.normal_(big, 1.0, 2.0))
    assert abs(n.mean() - 1.0) < 0.02 and abs(n.std() - 2.0) < 0.02
    t = arr(init.trunc_normal_(big, 0.0, 1.0, -1.0, 0.5))
    assert t.min() >= -1.0 and t.max() <= 0.5
    far = arr(init.trunc_normal_(_param(1000), 0.0, 0.1, 0.15, 0.2))  # uniform proposals
    assert far.min() >= 0.15 and far.max() <= 0.2 and far.mean() < 0.175
    fan_in, fan_out = 500, 400
    xu = arr(init.xavier_uniform_(big, gain=2.0))
    a = 2.0 * math.sqrt(6.0 / (fan_in + fan_out))
    assert np.abs(xu).max() <= a and abs(xu.std() - a / math.sqrt(3)) < 0.01
    xn = arr(init.xavier_normal_(big))
    assert abs(xn.std() - math.sqrt(2.0 / (fan_in + fan_out))) < 0.002
    ku = arr(init.kaiming_uniform_(big, mode="fan_out", nonlinearity="relu"))
    bound = math.sqrt(2.0) * math.sqrt(3.0 / fan_out)
    assert np.abs(ku).max() <= bound and abs(ku.std() - bound / math.sqrt(3)) < 0.01
    kn = arr(init.kaiming_normal_(big, a=0.2))
    assert abs(kn.std() - init.calculate_gain("leaky_relu", 0.2) / math.sqrt(fan_in)) < 0.002


def test_deterministic_inits():
    assert arr(init.constant_(_param(2, 2), 0.3)).tolist() == [[np.float32(0.3)] * 2] * 2
    assert arr(init.ones_(_param(3))).tolist() == [1.0] * 3
    assert arr(init.zeros_(init.ones_(_param(3)))).tolist() == [0.0] * 3
    np.testing.assert_array_equal(arr(init.eye_(_param(2, 3))), np.eye(2, 3))
    d = arr(init.dirac_(_param(4, 2, 3, 3), groups=2))
    assert d.sum() == 4 and d[0, 0, 1, 1] == 1 and d[1, 1, 1, 1] == 1 and d[2, 0, 1, 1] == 1
    assert arr(init.dirac_(_param(2, 2, 3)))[1, 1, 1] == 1
    assert arr(init.dirac_(_param(1, 1, 3, 3, 3)))[0, 0, 1, 1, 1] == 1


def test_orthogonal():
    for shape in [(4, 6), (6, 4), (3, 2, 2)]:
        q = arr(init.orthogonal_(_param(*shape), gain=2.0)).reshape(shape[0], -1)
        small = q @ q.T if q.shape[0] <= q.shape[1] else q.T @ q
        np.testing.assert_allclose(small, 4.0 * np.eye(small.shape[0]), atol=1e-5)


def test_sparse():
    s = arr(init.sparse_(_param(10, 4), sparsity=0.3))
    assert ((s == 0).sum(axis=0) == 3).all()


def test_init_works_on_buffers_and_other_devices():
    b = nn.Buffer(lucid.zeros(2, 2, device="numpy", dtype=lucid.float64))
    init.eye_(b)
    assert b.device == "numpy" and b.dtype == lucid.float64 and arr(b)[1, 1] == 1.0


def test_zero_element_warns():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(_param(0, 3))
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_normal_(_param(3, 0))


def test_deprecated_aliases_warn():
    with pytest.warns(FutureWarning, match="nn.init.normal_"):
        init.normal(_param(2))


def _gains_and_errors(fw, nn_):
    i = nn_.init
    out = [repr(i.calculate_gain(n)) for n in
           ["linear", "conv2d", "sigmoid", "tanh", "relu", "leaky_relu", "selu"]]
    out += [repr(i.calculate_gain("leaky_relu", 0.2)), repr(i.calculate_gain("leaky_relu", 1)),
            catch(lambda: i.calculate_gain("leaky_relu", True)),
            catch(lambda: i.calculate_gain("nope")),
            repr(i._calculate_fan_in_and_fan_out(fw.zeros(3, 4, 5, 6))),
            catch(lambda: i._calculate_fan_in_and_fan_out(fw.zeros(3))),
            catch(lambda: i.kaiming_uniform_(fw.zeros(2, 2), mode="fan_x")),
            catch(lambda: i.eye_(fw.zeros(2))), catch(lambda: i.dirac_(fw.zeros(2, 2))),
            catch(lambda: i.dirac_(fw.zeros(3, 2, 2), groups=2)),
            catch(lambda: i.orthogonal_(fw.zeros(2))), catch(lambda: i.sparse_(fw.zeros(2), 0.1))]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        i.trunc_normal_(fw.zeros(3), mean=10.0)
    out.append(str(w[0].message))
    return out


def test_gains_and_errors_match_torch(both):
    both(_gains_and_errors)
