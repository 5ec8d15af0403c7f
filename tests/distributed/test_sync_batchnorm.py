"""SyncBatchNorm in one process: BatchNorm's results (training and eval, with or without a
process group of one), conversion, errors. Two ranks: scripts/ddp_checks.py."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
import lucid.distributed as dist
import lucid.nn as nn


def _pair(shape, **kw):
    lucid.manual_seed(0)
    sync = nn.SyncBatchNorm(shape[1], **kw)
    plain = nn.BatchNorm2d(shape[1], **kw) if len(shape) == 4 else nn.BatchNorm1d(shape[1], **kw)
    return sync, plain


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 4, 4)])
@pytest.mark.parametrize("grouped", [False, True])
def test_matches_batchnorm(shape, grouped) -> None:
    if grouped:
        pytest.importorskip("mpi4py")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dist.init_process_group()
    try:
        x = np.random.default_rng(1).standard_normal(shape).astype(np.float32) * 2 + 3
        sync, plain = _pair(shape, momentum=None)
        outs = []
        for m in (sync, plain):
            xt = lucid.tensor(x, requires_grad=True)
            y = m(xt)
            (y * y.detach()).sum().backward()
            m.eval()
            outs.append((y.detach().numpy(), xt.grad.numpy(), m.weight.grad.numpy(),
                         m.running_var.numpy(), m(lucid.tensor(x)).detach().numpy()))
        for a, b in zip(*outs):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def test_sync_path_against_numpy_in_a_world_of_one(monkeypatch) -> None:
    """The all-reduce path itself (forced on with a group of one) against numpy."""
    pytest.importorskip("mpi4py")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dist.init_process_group()
    try:
        m = nn.SyncBatchNorm(3)
        monkeypatch.setattr(m, "_group_size", lambda: 2)
        x = np.random.default_rng(2).standard_normal((5, 3, 2)).astype(np.float32) + 100
        y = m(lucid.tensor(x)).detach().numpy()
        mean, var = x.mean((0, 2), keepdims=True), x.var((0, 2), keepdims=True)
        np.testing.assert_allclose(y, (x - mean) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(m.running_var.numpy(),
                                   0.9 + 0.1 * x.var((0, 2), ddof=1), rtol=1e-5)
        assert m.num_batches_tracked.item() == 1
    finally:
        dist.destroy_process_group()


def test_convert_sync_batchnorm_shares_state() -> None:
    net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Sequential(nn.BatchNorm1d(2)))
    net[1].running_mean.fill_(2.0)
    w = net[1].weight
    out = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert out is net and type(net[1]) is nn.SyncBatchNorm and type(net[2][0]) is nn.SyncBatchNorm
    assert net[1].weight is w and net[1].running_mean.tolist() == [2.0] * 4
    assert list(net.state_dict()) == list(nn.Sequential(
        nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Sequential(nn.BatchNorm1d(2))).state_dict())
    lone = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm1d(5).eval())
    assert type(lone) is nn.SyncBatchNorm and not lone.training


def test_convert_matches_torch(torch) -> None:
    tnet = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.BatchNorm1d(4))
    tnet = torch.nn.SyncBatchNorm.convert_sync_batchnorm(tnet)
    lnet = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.Linear(2, 4),
                                                                 nn.BatchNorm1d(4)))
    assert list(tnet.state_dict()) == list(lnet.state_dict())
    assert repr(tnet[1]) == repr(lnet[1])


def test_bad_input() -> None:
    with pytest.raises(ValueError, match=r"expected at least 2D input \(got 1D input\)"):
        nn.SyncBatchNorm(3)(lucid.ones(3))
