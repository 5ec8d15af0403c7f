"""DistributedDataParallel: two ranks under mpiexec (scripts/ddp_checks.py: equality with
one process on the whole batch, identical replicas, no_sync, unused parameters, buffers,
checkpoints, SyncBatchNorm, DistributedSampler) and a world of one in-process."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from mpi_harness import run

import lucid
import lucid.distributed as dist
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.nn.modules.utils import consume_prefix_in_state_dict_if_present
from lucid.nn.parallel import DistributedDataParallel


def test_ddp_on_two_ranks() -> None:
    out = run("ddp_checks.py")
    assert "DDP OK on 2 ranks" in out


@pytest.fixture
def world1():
    pytest.importorskip("mpi4py")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dist.init_process_group()
    yield
    dist.destroy_process_group()


def _net() -> nn.Module:
    return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))


def test_world_of_one_trains_like_the_module(world1) -> None:
    lucid.manual_seed(0)
    net = _net()
    lucid.manual_seed(0)
    ref = _net()
    ddp = DistributedDataParallel(net)
    assert ddp.module is net and lucid.nn.DistributedDataParallel is DistributedDataParallel
    x, y = lucid.randn(16, 4), lucid.randint(0, 2, (16,))
    for model in (ddp, ref):
        opt = lucid.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
    for a, b in zip(net.parameters(), ref.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)
    with ddp.no_sync():
        assert not ddp.require_backward_grad_sync
    assert ddp.require_backward_grad_sync


def test_state_dict_prefix_round_trip(world1) -> None:
    ddp = DistributedDataParallel(_net())
    sd = ddp.state_dict()
    assert all(k.startswith("module.") for k in sd) and "module.1.running_mean" in sd
    consume_prefix_in_state_dict_if_present(sd, "module.")
    assert "0.weight" in sd and "1.num_batches_tracked" in sd
    assert "" in sd._metadata and "module" not in sd._metadata
    plain = _net()
    plain.load_state_dict(sd)
    np.testing.assert_array_equal(plain[0].weight.detach().numpy(),
                                  ddp.module[0].weight.detach().numpy())
    other = DistributedDataParallel(_net())
    other.load_state_dict({"module." + k: v for k, v in plain.state_dict().items()})
    np.testing.assert_array_equal(other.module[3].bias.detach().numpy(),
                                  plain[3].bias.detach().numpy())


def test_consume_prefix_matches_torch(torch) -> None:
    t = torch.nn.DataParallel(torch.nn.Sequential(torch.nn.Linear(2, 3)))
    l_ = nn.DataParallel(nn.Sequential(nn.Linear(2, 3)))
    tsd, lsd = t.state_dict(), l_.state_dict()
    torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(tsd, "module.")
    consume_prefix_in_state_dict_if_present(lsd, "module.")
    assert list(tsd) == list(lsd)
    assert list(tsd._metadata) == list(lsd._metadata)


def test_ddp_errors(world1) -> None:
    with pytest.raises(TypeError, match="wraps a lucid.nn.Module"):
        DistributedDataParallel(lucid.ones(2))
    frozen = nn.Linear(2, 2).requires_grad_(False)
    with pytest.raises(RuntimeError, match="doesn't have any parameter that requires"):
        DistributedDataParallel(frozen)


def test_ddp_needs_a_process_group() -> None:
    pytest.importorskip("mpi4py")
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedDataParallel(nn.Linear(2, 2))
