"""Run under mpiexec -n 2: DistributedDataParallel, SyncBatchNorm and DistributedSampler
checked against one process training on the whole batch. Rank 0 prints "DDP OK on <n>
ranks"."""

import numpy as np
from lucid.utils.data import DistributedSampler

import lucid
import lucid.distributed as dist
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.nn.modules.utils import consume_prefix_in_state_dict_if_present
from lucid.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group()
R, W = dist.get_rank(), dist.get_world_size()
assert W == 2
B = 64
rng = np.random.default_rng(0)
X = rng.standard_normal((W * B * 2, 20)).astype(np.float32)
Y = rng.integers(0, 5, W * B * 2)


def mlp(seed):
    lucid.manual_seed(seed)
    return nn.Sequential(nn.Linear(20, 48), nn.ReLU(), nn.Linear(48, 32), nn.Tanh(),
                         nn.Linear(32, 5))


def flat(model):
    return np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])


def gathered(a):
    out = [None] * W
    dist.all_gather_object(out, a)
    return out


def shard(step):
    lo = step * W * B + R * B
    return lucid.tensor(X[lo:lo + B]), lucid.tensor(Y[lo:lo + B])


# -- 1. same parameters as one process on the whole batch, identical replicas -------------
for kwargs in ({}, {"bucket_cap_mb": 0.002}, {"gradient_as_bucket_view": True}):
    ddp = DDP(mlp(seed=R + 10), **kwargs)   # different init per rank: rank 0's is broadcast
    assert np.array_equal(gathered(flat(ddp.module))[1], gathered(flat(ddp.module))[0])
    init = flat(ddp.module)
    opt = lucid.optim.SGD(ddp.parameters(), lr=0.2, momentum=0.9)
    for step in range(5):
        opt.zero_grad(set_to_none=step % 2 == 0)
        xb, yb = shard(step % 2)
        F.cross_entropy(ddp(xb), yb).backward()
        nn.utils.clip_grad_norm_(ddp.parameters(), 1e9)
        opt.step()
    ref = mlp(seed=10)
    assert np.array_equal(flat(ref), init)
    ropt = lucid.optim.SGD(ref.parameters(), lr=0.2, momentum=0.9)
    for step in range(5):
        ropt.zero_grad()
        lo = (step % 2) * W * B
        F.cross_entropy(ref(lucid.tensor(X[lo:lo + W * B])),
                        lucid.tensor(Y[lo:lo + W * B])).backward()
        ropt.step()
    mine = flat(ddp.module)
    everyone = gathered(mine)
    assert all(np.array_equal(everyone[0], e) for e in everyone), "replicas differ"
    np.testing.assert_allclose(mine, flat(ref), rtol=1e-5, atol=2e-6, err_msg=str(kwargs))
    if kwargs.get("bucket_cap_mb"):
        assert len(ddp.reducer.buckets) > 2
    if kwargs.get("gradient_as_bucket_view"):
        assert any(p.grad._data.base is b.array for b in ddp.reducer.buckets
                   for p in b.params)

# -- 2. no_sync: local accumulation, then one averaged sync ---------------------------------
ddp = DDP(mlp(seed=1))
xa, ya = shard(0)
xb, yb = shard(1)
with ddp.no_sync():
    F.cross_entropy(ddp(xa), ya).backward()
local = ddp.module[0].weight.grad.numpy().copy()
assert not np.array_equal(*gathered(local)), "no_sync must not average"
F.cross_entropy(ddp(xb), yb).backward()
synced = gathered(ddp.module[0].weight.grad.numpy().copy())
assert np.array_equal(synced[0], synced[1])
ref = mlp(seed=1)
for lo in (0, W * B):
    loss = F.cross_entropy(ref(lucid.tensor(X[lo:lo + W * B])), lucid.tensor(Y[lo:lo + W * B]))
    loss.backward()
np.testing.assert_allclose(synced[0], ref[0].weight.grad.numpy(), rtol=1e-5, atol=1e-6)


# -- 3. unused parameters -------------------------------------------------------------------
class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 3)
        self.b = nn.Linear(4, 3)
        self.never = nn.Linear(4, 3)

    def forward(self, x, use_b):
        return self.a(x) + (self.b(x) if use_b else 0)


lucid.manual_seed(0)
ddp = DDP(Branchy(), find_unused_parameters=True)
x = lucid.ones(2, 4)
ddp(x, use_b=R == 0).sum().backward()
gb = gathered(ddp.module.b.weight.grad.numpy())
np.testing.assert_allclose(gb[R], np.full((3, 4), 1.0))   # (2 + 0) / 2 on both ranks
assert ddp.module.never.weight.grad is None
ddp = DDP(Branchy())
try:
    ddp(x, use_b=True).sum().backward()
except RuntimeError as e:
    assert "find_unused_parameters=True" in str(e) and "never.weight" in str(e), str(e)
else:
    raise AssertionError("an unused parameter without find_unused_parameters must raise")


# -- 4. buffers: rank 0's before each forward; state_dict prefix ----------------------------
class WithBuf(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.register_buffer("count", lucid.zeros(1))

    def forward(self, x):
        self.count.add_(1 + R)   # ranks drift apart, forward syncs them again
        return self.lin(x)


ddp = DDP(WithBuf())
for _ in range(3):
    ddp(lucid.ones(1, 3)).sum().backward()
ddp(lucid.ones(1, 3))
assert ddp.module.count.item() == 3 + 1 + R   # synced to rank 0's 3, then own increment
sd = ddp.state_dict()
assert list(sd) == ["module.count", "module.lin.weight", "module.lin.bias"]
consume_prefix_in_state_dict_if_present(sd, "module.")
plain = WithBuf()
plain.load_state_dict(sd)
back = DDP(WithBuf())
back.load_state_dict({"module." + k: v for k, v in plain.state_dict().items()})
assert np.array_equal(back.module.lin.weight.detach().numpy(),
                      ddp.module.lin.weight.detach().numpy())

# -- 5. different models on the ranks: an error naming the parameter, on every rank ---------
try:
    DDP(nn.Sequential(nn.Linear(4, 3 + R)))
except RuntimeError as e:
    assert "'0.weight'" in str(e) and "[3, 4]" in str(e) and "[4, 4]" in str(e), str(e)
else:
    raise AssertionError("mismatched models must raise")

# -- 6. SyncBatchNorm inside DDP == BatchNorm over the whole batch --------------------------


def bn_net(seed, norm):
    lucid.manual_seed(seed)
    return nn.Sequential(nn.Linear(20, 16), norm(16), nn.ReLU(), nn.Linear(16, 5))


sbn = DDP(nn.SyncBatchNorm.convert_sync_batchnorm(bn_net(3, nn.BatchNorm1d)))
assert type(sbn.module[1]).__name__ == "SyncBatchNorm"
ref = bn_net(3, nn.BatchNorm1d)
o1 = lucid.optim.SGD(sbn.parameters(), lr=0.1)
o2 = lucid.optim.SGD(ref.parameters(), lr=0.1)
for step in range(3):
    o1.zero_grad()
    o2.zero_grad()
    xb, yb = shard(step % 2)
    F.cross_entropy(sbn(xb), yb).backward()
    lo = (step % 2) * W * B
    F.cross_entropy(ref(lucid.tensor(X[lo:lo + W * B])), lucid.tensor(Y[lo:lo + W * B])).backward()
    o1.step()
    o2.step()
np.testing.assert_allclose(flat(sbn.module), flat(ref), rtol=1e-4, atol=1e-5)
np.testing.assert_allclose(sbn.module[1].running_var.numpy(), ref[1].running_var.numpy(),
                           rtol=1e-5)
np.testing.assert_allclose(sbn.module[1].running_mean.numpy(), ref[1].running_mean.numpy(),
                           rtol=1e-5, atol=1e-6)
sbn.eval()
with lucid.no_grad():
    np.testing.assert_allclose(sbn(lucid.tensor(X[:8])).numpy(), ref.eval()(
        lucid.tensor(X[:8])).numpy(), rtol=1e-4, atol=1e-5)
# a 4-D input through a lone SyncBatchNorm: forward and input gradient against numpy
x4 = rng.standard_normal((2 * W, 3, 2, 2)).astype(np.float32) * 3 + 7
mine = lucid.tensor(x4[R * 2:(R + 1) * 2], requires_grad=True)
out = nn.SyncBatchNorm(3)(mine)
(out * out).sum().backward()
mean, var = x4.mean((0, 2, 3), keepdims=True), x4.var((0, 2, 3), keepdims=True)
np.testing.assert_allclose(out.detach().numpy(), ((x4 - mean) / np.sqrt(var + 1e-5))[
    R * 2:(R + 1) * 2], rtol=1e-4, atol=1e-4)
# y = xhat, loss = sum y^2 is constant in x, so the input gradient vanishes
np.testing.assert_allclose(mine.grad.numpy(), 0, atol=1e-4)

# -- 7. DistributedSampler from the group: coverage, padding, reshuffle ----------------------
for n, drop in ((10, False), (11, False), (11, True)):
    s = DistributedSampler(range(n), shuffle=True, seed=5, drop_last=drop)
    assert (s.num_replicas, s.rank) == (W, R)
    idx = list(s)
    every = gathered(idx)
    assert all(len(e) == len(s) for e in every)
    joined = sorted(sum(every, []))
    if drop:
        assert len(joined) == (n // W) * W and len(set(joined)) == len(joined)
    else:
        assert set(joined) == set(range(n)) and len(joined) == -(-n // W) * W
    s.set_epoch(1)
    assert gathered(list(s)) != every
dist.destroy_process_group()
if R == 0:
    print("DDP OK on", W, "ranks", flush=True)
