"""Run under mpiexec -n 2 (or more): every collective of lucid.distributed against numpy.
Rank 0 prints "COLLECTIVES OK on <n> ranks" at the end; a failed check raises, which
aborts the job."""

import os
import sys
import warnings
from datetime import timedelta

import numpy as np

import lucid
import lucid.distributed as dist

assert "mpi4py" not in sys.modules, "import lucid must not import mpi4py"
# torchrun's variables are there before init_process_group, from the MPI launcher's
assert os.environ["LOCAL_RANK"] == os.environ["RANK"] == str(dist.launcher_env()[0])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    dist.init_process_group("gloo")
assert any("taken as 'mpi'" in str(w.message) for w in caught)
R, W = dist.get_rank(), dist.get_world_size()
assert W >= 2 and dist.get_backend() == "mpi" and dist.is_initialized()


def data(r, shape=(3, 4), dtype=np.float32):
    return (np.arange(np.prod(shape)).reshape(shape) * (r + 1) + r).astype(dtype)


ALL = [data(r) for r in range(W)]
ok = np.testing.assert_allclose

# all_reduce: every op, several dtypes, in place (same tensor object, same memory)
for op, ref in [(dist.ReduceOp.SUM, np.sum), (dist.ReduceOp.PRODUCT, np.prod),
                (dist.ReduceOp.MIN, np.min), (dist.ReduceOp.MAX, np.max),
                (dist.ReduceOp.AVG, np.mean)]:
    for dt in (np.float32, np.float64, np.int64):
        if op == dist.ReduceOp.AVG and dt == np.int64:
            continue
        t = lucid.tensor(data(R, dtype=dt))
        mem = t._data
        dist.all_reduce(t, op=op)
        assert t._data is mem and t._data.dtype == dt
        ok(t.numpy(), ref(np.stack([data(r, dtype=dt) for r in range(W)]), axis=0), rtol=1e-6)
# 0-d tensors (a loss), bfloat16 moves
s0 = lucid.tensor(float(R))
dist.all_reduce(s0, op=dist.ReduceOp.AVG)
assert s0.item() == sum(range(W)) / W
zs = [lucid.empty(()) for _ in range(W)]
dist.all_gather(zs, lucid.tensor(R * 1.5))
assert [z.item() for z in zs] == [r * 1.5 for r in range(W)]
bf = lucid.tensor([1.5 + R], dtype=lucid.bfloat16)
dist.broadcast(bf, src=1)
assert bf.dtype == lucid.bfloat16 and bf.float().tolist() == [2.5]
# bitwise ops and bool (SUM = or, PRODUCT = and)
t = lucid.tensor(np.array([1 << R, 3], np.int32))
dist.all_reduce(t, op=dist.ReduceOp.BOR)
assert t.tolist() == [sum(1 << r for r in range(W)), 3]
b = lucid.tensor([R == 0, True, False])
dist.all_reduce(b)
assert b.tolist() == [True, True, False]
b = lucid.tensor([R == 0, True, False])
dist.all_reduce(b, op=dist.ReduceOp.PRODUCT)
assert b.tolist() == [False, True, False]
# float16 / bfloat16 (staged through float32) and strided views (written back in place)
h = lucid.tensor(data(R), dtype=lucid.float16)
dist.all_reduce(h)
ok(h.float().numpy(), sum(ALL), rtol=1e-3)
base = lucid.tensor(data(R, (4, 6)))
view = base[:, ::2]
dist.all_reduce(view)
ok(base.numpy()[:, ::2], sum(data(r, (4, 6)) for r in range(W))[:, ::2])
ok(base.numpy()[:, 1::2], data(R, (4, 6))[:, 1::2])
# async
t = lucid.tensor(data(R))
work = dist.all_reduce(t, async_op=True)
assert work.wait() is True and work.is_completed()
ok(t.numpy(), sum(ALL))
# broadcast from each root, group_src too
for src in range(W):
    t = lucid.tensor(data(R))
    dist.broadcast(t, src=src)
    ok(t.numpy(), ALL[src])
t = lucid.tensor(data(R))
dist.broadcast(t, group_src=W - 1, async_op=True).wait()
ok(t.numpy(), ALL[W - 1])
# reduce: dst gets the sum, others keep theirs
t = lucid.tensor(data(R))
dist.reduce(t, dst=1)
ok(t.numpy(), sum(ALL) if R == 1 else ALL[R])
# all_gather (list, uneven sizes allowed) and all_gather_single (concat and stacked)
outs = [lucid.empty(3, 4) for _ in range(W)]
dist.all_gather(outs, lucid.tensor(data(R)))
for r in range(W):
    ok(outs[r].numpy(), ALL[r])
flat = lucid.empty(W * 3, 4)
dist.all_gather_single(flat, lucid.tensor(data(R)))
ok(flat.numpy(), np.concatenate(ALL))
stacked = lucid.empty(W, 3, 4)
dist.all_gather_single(stacked, lucid.tensor(data(R)), async_op=True).wait()
ok(stacked.numpy(), np.stack(ALL))
# gather / scatter
g = [lucid.empty(3, 4) for _ in range(W)] if R == 0 else None
dist.gather(lucid.tensor(data(R)), g, dst=0)
if R == 0:
    for r in range(W):
        ok(g[r].numpy(), ALL[r])
t = lucid.empty(3, 4)
dist.scatter(t, [lucid.tensor(a) for a in ALL] if R == 1 else None, src=1)
ok(t.numpy(), ALL[R])
# reduce_scatter / reduce_scatter_single
inputs = [lucid.tensor(data(R) + i) for i in range(W)]
out = lucid.empty(3, 4)
dist.reduce_scatter(out, inputs)
ok(out.numpy(), sum(data(r) + R for r in range(W)))
out = lucid.empty(3, 4)
dist.reduce_scatter_single(out, lucid.tensor(np.concatenate([data(R) + i for i in range(W)])),
                           op=dist.ReduceOp.MAX)
ok(out.numpy(), np.max([data(r) + R for r in range(W)], axis=0))
# all_to_all_single
out = lucid.empty(W * 2)
dist.all_to_all_single(out, lucid.tensor(np.arange(W * 2, dtype=np.float32) + 100 * R))
ok(out.numpy(), np.concatenate([np.arange(2 * R, 2 * R + 2) + 100 * r for r in range(W)]))
outs = [lucid.empty(2) for _ in range(W)]
dist.all_to_all(outs, [lucid.full((2,), float(10 * R + i)) for i in range(W)])
for j in range(W):
    ok(outs[j].numpy(), np.full(2, 10.0 * j + R))
dist.monitored_barrier(timeout=timedelta(seconds=60))
# point to point
if R == 0:
    dist.send(lucid.tensor(data(0)), dst=1)
    w = dist.irecv(t := lucid.empty(3, 4), src=1)
    w.wait()
    ok(t.numpy(), ALL[1])
elif R == 1:
    t = lucid.empty(3, 4)
    assert dist.recv(t, src=0) == 0
    ok(t.numpy(), ALL[0])
    dist.isend(lucid.tensor(data(1)), dst=0).wait()
# objects
objs = [{"cfg": 1, "rank": R}, "x"] if R == 0 else [None, None]
dist.broadcast_object_list(objs, src=0)
assert objs == [{"cfg": 1, "rank": 0}, "x"]
every = [None] * W
dist.all_gather_object(every, ("r", R, lucid.tensor([float(R)])))
assert [e[1] for e in every] == list(range(W)) and every[1][2].item() == 1.0
got = [None] * W if R == 0 else None
dist.gather_object(R * 10, got, dst=0)
assert R != 0 or got == [r * 10 for r in range(W)]
one = [None]
dist.scatter_object_list(one, [f"s{r}" for r in range(W)] if R == 0 else None, src=0)
assert one == [f"s{R}"]
# groups: a group of rank 1 alone, and the world through group.WORLD
solo = dist.new_group([1])
if R == 1:
    assert dist.get_rank(solo) == 0 and dist.get_world_size(solo) == 1
    t = lucid.tensor([5.0])
    dist.all_reduce(t, group=solo)
    assert t.tolist() == [5.0]
else:
    assert solo is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(solo) == -1
pair = dist.new_group([1, 0])
assert dist.get_process_group_ranks(pair) == [0, 1] and dist.get_global_rank(pair, 1) == 1
t = lucid.tensor([1.0])
dist.all_reduce(t, group=dist.group.WORLD)
assert t.item() == W
# argument errors are raised before any communication, on every rank
for bad, exc, msg in [
        (lambda: dist.all_reduce([1.0]), TypeError, "Expected parameter `tensor`"),
        (lambda: dist.all_reduce(lucid.tensor([1]), op=dist.ReduceOp.AVG), ValueError, "AVG"),
        (lambda: dist.broadcast(lucid.zeros(1), src=W + 3), ValueError, "not part of group"),
        (lambda: dist.all_gather([lucid.zeros(1)], lucid.zeros(1)), ValueError, "one tensor per rank"),  # noqa: E501
        (lambda: dist.init_process_group(), ValueError, "twice")]:
    try:
        bad()
    except exc as e:
        assert msg in str(e), (msg, str(e))
    else:
        raise AssertionError(f"expected {exc.__name__} ({msg})")
dist.barrier()
dist.barrier(async_op=True).wait()
dist.destroy_process_group()
assert not dist.is_initialized()
if R == 0:
    print("COLLECTIVES OK on", W, "ranks", flush=True)
