"""A PyTorch data-parallel training script, as written for torchrun. The tests run it on
lucid with only the imports swapped (see test_dist_launcher.py)."""

import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(ckpt):
    dist.init_process_group(backend="gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    assert int(os.environ["RANK"]) == rank and int(os.environ["WORLD_SIZE"]) == world
    torch.manual_seed(0)
    X = torch.randn(512, 10)
    Y = (X[:, 0] + X[:, 1] > 0).long()
    data = TensorDataset(X, Y)
    sampler = DistributedSampler(data, shuffle=True, seed=0)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.2, momentum=0.9)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for xb, yb in loader:
            opt.zero_grad()
            loss = F.cross_entropy(ddp(xb), yb)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(ddp.parameters(), 5.0)
            opt.step()
        total = torch.tensor([loss.item()])
        dist.all_reduce(total, op=dist.ReduceOp.SUM)
        if rank == 0:
            print(f"epoch {epoch} mean loss {total.item() / world:.4f}", flush=True)
    if rank == 0:
        torch.save(ddp.module.state_dict(), ckpt)
    dist.barrier()
    fresh = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
    fresh.load_state_dict(torch.load(ckpt, weights_only=True))
    with torch.no_grad():
        acc = (fresh(X).argmax(1) == Y).float().mean().item()
    print(f"rank {rank}/{world} local_rank {local_rank} accuracy {acc:.3f}", flush=True)
    assert acc > 0.9, acc
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
