"""Run under mpiexec -n 2 or -n 4: object point-to-point, batch_isend_irecv, subgroups,
coalesced and single-tensor collectives against numpy. Rank 0 prints "CORE API OK on <n>
ranks" at the end; a failed check raises, which aborts the job."""

import os
import warnings
from datetime import timedelta

import numpy as np

import lucid
import lucid.distributed as dist

dist.init_process_group("mpi", timeout=timedelta(seconds=90))
R, W = dist.get_rank(), dist.get_world_size()
assert W >= 2
ok = np.testing.assert_allclose
assert dist.get_node_local_rank() == int(os.environ["LOCAL_RANK"]) == R  # one machine


def raises(fn, exc, msg):
    try:
        fn()
    except exc as e:
        assert msg in str(e), (msg, str(e))
    else:
        raise AssertionError(f"expected {exc.__name__} ({msg})")


def warns(fn, msg):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    assert any(issubclass(w.category, FutureWarning) and msg in str(w.message)
               for w in caught), [str(w.message) for w in caught]
    return out


# ---- send_object_list / recv_object_list ---------------------------------------------------
sent = ["foo", 12, {1: 2}, lucid.tensor([1.5, 2.5])]
if R == 0:
    assert dist.send_object_list(sent, dst=1) is None
    dist.send_object_list([R, "group_dst"], group_dst=W - 1, use_batch=True)
elif R == 1:
    got = [None] * 4
    assert dist.recv_object_list(got, src=0) == 0
    assert got[:3] == ["foo", 12, {1: 2}] and got[3].tolist() == [1.5, 2.5]
if R == W - 1:
    got = [None, None]
    assert dist.recv_object_list(got, group_src=0, use_batch=True) == 0
    assert got == [0, "group_dst"]
# a list of the wrong length is refused after the message arrived (the stream stays in step)
if R == 0:
    dist.send_object_list([1, 2, 3], dst=1)
elif R == 1:
    raises(lambda: dist.recv_object_list([None], src=0), ValueError, "sent 3 objects")
raises(lambda: dist.send_object_list([1], dst=R), ValueError,
       "Invalid destination rank: destination rank should not be the same")
raises(lambda: dist.recv_object_list([None]), ValueError, "Must specify global_rank")
raises(lambda: dist.send_object_list([1], dst=0, group_dst=0), ValueError, "Can't specify both")
raises(lambda: dist.recv_object_list([None], src=W + 2), ValueError, "is not part of group")

# ---- P2POp / batch_isend_irecv -------------------------------------------------------------
right, left = (R + 1) % W, (R - 1) % W
for order in (1, -1):  # sends and receives in either order: no deadlock
    send_t = lucid.arange(2, dtype=lucid.float32) + 2 * R
    recv_t = lucid.empty(2)
    ops = [dist.P2POp(dist.isend, send_t, right), dist.P2POp(dist.irecv, recv_t, left)][::order]
    works = dist.batch_isend_irecv(ops)
    assert len(works) == 2 and all(isinstance(w, dist.Work) for w in works)
    for w in works:
        w.wait()
    ok(recv_t.numpy(), np.arange(2) + 2 * left)
# several messages to one peer match in list order; tags, strided and int64 buffers
a, b = lucid.empty(3, dtype=lucid.int64), lucid.empty(2, 4)
strided = lucid.tensor(np.arange(16, dtype=np.float32).reshape(4, 4) + R)[:2, ::2]
ops = [dist.P2POp(dist.isend, lucid.tensor([R, R + 1, R + 2]), right, tag=5),
       dist.P2POp(dist.isend, lucid.tensor(np.full((2, 4), R, np.float32)), right, tag=5),
       dist.P2POp(dist.irecv, a, left, tag=5), dist.P2POp(dist.irecv, b, left, tag=5),
       dist.P2POp(dist.irecv, strided, group_peer=left, tag=7),
       dist.P2POp(dist.isend, lucid.ones(2, 2) * R, group_peer=right, tag=7)]
for w in dist.batch_isend_irecv(ops):
    w.wait()
assert a.tolist() == [left, left + 1, left + 2]
ok(b.numpy(), np.full((2, 4), float(left)))
ok(strided.numpy(), np.full((2, 2), float(left)))
assert ops[0].peer == right and ops[4].group_peer == left and ops[4].peer == left
assert repr(ops[0]).startswith(f"P2POp(isend pg=0, group_src={R}, group_dst={right}")
raises(lambda: dist.P2POp(dist.send, lucid.ones(1), right), ValueError, "Invalid ``op``")
raises(lambda: dist.P2POp(dist.isend, [1.0], right), TypeError, "Expected parameter `tensor`")
raises(lambda: dist.P2POp(dist.isend, lucid.ones(1), W + 1), ValueError, "not part of group")
raises(lambda: dist.batch_isend_irecv((ops[0],)), ValueError, "Invalid ``p2p_op_list``")
raises(lambda: dist.batch_isend_irecv([ops[0], "x"]), ValueError, "Invalid ``p2p_op_list``")
whole = dist.new_group(list(range(W)))
mixed = [dist.P2POp(dist.isend, lucid.ones(1), right),
         dist.P2POp(dist.irecv, lucid.ones(1), left, group=whole)]
raises(lambda: dist.batch_isend_irecv(mixed), ValueError, "All ops need to use the same group")
# within a subgroup, group_peer is a rank of the subgroup
pair = dist.new_group([0, W - 1])
if R in (0, W - 1):
    peer = 1 - pair.rank()
    buf = lucid.empty(1)
    ops = [dist.P2POp(dist.irecv, buf, group=pair, group_peer=peer),
           dist.P2POp(dist.isend, lucid.tensor([float(R)]), group=pair, group_peer=peer)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    assert buf.item() == float(W - 1 - R) and ops[0].peer == pair.ranks[peer]

# ---- all_reduce_coalesced / all_gather_coalesced -------------------------------------------
ts = [lucid.tensor(np.full((2, 3), R + 1.0, np.float32)), lucid.tensor([float(R)]),
      lucid.tensor(np.float32(R * 2))]
assert warns(lambda: dist.all_reduce_coalesced(ts), "all_reduce_coalesced` will be deprecated") \
    is None
tot = W * (W + 1) / 2
ok(ts[0].numpy(), np.full((2, 3), tot))
ok(ts[1].numpy(), [W * (W - 1) / 2])
ok(ts[2].numpy(), W * (W - 1))
with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    t = lucid.tensor(np.arange(4, dtype=np.float64) * (R + 1))
    dist.all_reduce_coalesced(t, op=dist.ReduceOp.AVG)           # one tensor, not a list
    ok(t.numpy(), np.arange(4) * (W + 1) / 2)
    ints = [lucid.tensor([R, -R]), lucid.tensor([[10 * R]])]
    dist.all_reduce_coalesced(ints, op=dist.ReduceOp.MAX)
    assert ints[0].tolist() == [W - 1, 0] and ints[1].tolist() == [[10 * (W - 1)]]
    flags = [lucid.tensor([R == 0, False]), lucid.tensor([True])]
    dist.all_reduce_coalesced(flags)                             # bool SUM is logical or
    assert flags[0].tolist() == [True, False] and flags[1].tolist() == [True]
    c = [lucid.tensor(np.array([1 + 2j, R * 1j], np.complex64)), lucid.tensor([1.0, R])]
    dist.all_reduce_coalesced(c)                  # complex mixed with its element type
    ok(c[0].numpy(), [W * (1 + 2j), 1j * W * (W - 1) / 2])
    ok(c[1].numpy(), [W, W * (W - 1) / 2])
    h = [lucid.tensor([1.0 + R], dtype=lucid.float16), lucid.tensor([2.0], dtype=lucid.float16)]
    base = lucid.tensor(np.arange(8, dtype=np.float16).reshape(2, 4))
    dist.all_reduce_coalesced(h + [base[:, ::2]])                # staged and written back
    assert h[0].dtype == lucid.float16 and h[0].float().tolist() == [tot]
    ok(base.float().numpy()[:, ::2], W * np.arange(8).reshape(2, 4)[:, ::2])
    ok(base.float().numpy()[:, 1::2], np.arange(8).reshape(2, 4)[:, 1::2])
    fut = dist.all_reduce_coalesced([lucid.ones(2), lucid.ones(3)], async_op=True)
    outs = fut.wait()
    assert fut.done() and len(outs) == 2 and outs[1].tolist() == [float(W)] * 3
    raises(lambda: dist.all_reduce_coalesced([lucid.ones(1), lucid.ones(1, dtype=lucid.int32)]),
           ValueError, "Invalid usage of tensors with different dtypes")
    raises(lambda: dist.all_reduce_coalesced(c, op=dist.ReduceOp.MAX), ValueError,
           "on complex tensors")
    raises(lambda: dist.all_reduce_coalesced((lucid.ones(1),)), TypeError,
           "Expected parameter `tensor` of type List")
    # all_gather_coalesced: torch's example, generalised to W ranks
    inputs = [lucid.full((2, 2), 1.0 + R), lucid.tensor([2.0 * R]), lucid.full((2,), float(-R))]
    outs = [[lucid.empty(2, 2), lucid.empty(1), lucid.empty(2)] for _ in range(W)]
    assert dist.all_gather_coalesced(outs, inputs) is None
    for r in range(W):
        ok(outs[r][0].numpy(), np.full((2, 2), 1.0 + r))
        ok(outs[r][1].numpy(), [2.0 * r])
        ok(outs[r][2].numpy(), [-r, -r])
    outs = [[lucid.empty(3, dtype=lucid.int64)] for _ in range(W)]
    fut = dist.all_gather_coalesced(outs, [lucid.tensor([R, R, R])], async_op=True)
    assert [o[0].tolist() for o in fut.wait()] == [[r] * 3 for r in range(W)]
    raises(lambda: dist.all_gather_coalesced(outs[:1], [lucid.ones(3)]), ValueError,
           "one list per rank")
    raises(lambda: dist.all_gather_coalesced(tuple(outs), [lucid.ones(3)]), TypeError,
           "output_tensor_lists should be a list")
warns(lambda: dist.all_gather_coalesced([[lucid.empty(1)] for _ in range(W)], [lucid.ones(1)]),
      "all_gather_coalesced` will be deprecated")

# ---- all_gather_single / reduce_scatter_single (and their deprecated torch names) ---------
out = lucid.empty(W, 3)
assert dist.all_gather_single(out, lucid.full((3,), float(R))) is None
ok(out.numpy(), np.repeat(np.arange(W, dtype=np.float32)[:, None], 3, axis=1))
out = lucid.empty(W * 2)
dist.all_gather_single(out, lucid.full((2,), float(R)), async_op=True).wait()
ok(out.numpy(), np.repeat(np.arange(W), 2))
red = lucid.empty(2)
dist.reduce_scatter_single(red, lucid.arange(2 * W, dtype=lucid.float32) + R)
ok(red.numpy(), W * np.arange(2 * R, 2 * R + 2) + W * (W - 1) / 2)
out = lucid.empty(W)
warns(lambda: dist.all_gather_into_tensor(out, lucid.tensor([float(R)])),
      "`lucid.distributed.all_gather_into_tensor` is deprecated")
ok(out.numpy(), np.arange(W))
warns(lambda: dist.reduce_scatter_tensor(red, lucid.ones(2 * W), op=dist.ReduceOp.MAX),
      "`lucid.distributed.reduce_scatter_tensor` is deprecated")
ok(red.numpy(), [1.0, 1.0])

# ---- new_subgroups / new_subgroups_by_enumeration ------------------------------------------
cur, subs = dist.new_subgroups(group_size=2)
assert len(subs) == W // 2 and dist.get_process_group_ranks(cur) == [R - R % 2, R - R % 2 + 1]
assert sum(s is not dist.GroupMember.NON_GROUP_MEMBER for s in subs) == 1
t = lucid.tensor([float(R)])
dist.all_reduce(t, group=cur)
assert t.item() == 2 * (R - R % 2) + 1
cur, subs = dist.new_subgroups()     # default: the ranks of one machine, here all of them
assert len(subs) == 1 and dist.get_process_group_ranks(cur) == list(range(W))
evens, odds = list(range(0, W, 2)), list(range(1, W, 2))
cur, subs = dist.new_subgroups_by_enumeration([evens, odds], timeout=timedelta(seconds=60))
assert cur is subs[R % 2] and dist.get_process_group_ranks(cur) == (evens, odds)[R % 2]
assert subs[1 - R % 2] is dist.GroupMember.NON_GROUP_MEMBER and cur.timeout.seconds == 60
t = lucid.tensor([float(R)])
dist.all_reduce(t, group=cur)
assert t.item() == sum((evens, odds)[R % 2])
cur, subs = dist.new_subgroups_by_enumeration([[1]])            # rank 0 is in none
assert (cur is None) == (R != 1) and len(subs) == 1
half, rest = dist.new_subgroups(group_size=1, group=whole)      # within a group
assert len(rest) == W and dist.get_process_group_ranks(half) == [R]
raises(lambda: dist.new_subgroups(group_size=W + 1), ValueError, "must not exceed the world size")
raises(lambda: dist.new_subgroups(group_size=0), ValueError, "must be positive")
if W > 3 and W % 3:
    raises(lambda: dist.new_subgroups(group_size=3), ValueError, "must be divisible")
raises(lambda: dist.new_subgroups_by_enumeration([]), ValueError, "cannot be empty")
raises(lambda: dist.new_subgroups_by_enumeration([[0, 1], [1]]), ValueError,
       "Rank 1 has appeared in both subgroup [0, 1] and [1]")

# ---- breakpoint on a rank that does not exist: a barrier, and every group's timeout raised --
dist.breakpoint(rank=W + 7, timeout_s=1800)
assert dist.group.WORLD.timeout == timedelta(seconds=1800) == whole.timeout

dist.barrier()
dist.destroy_process_group()
if R == 0:
    print("CORE API OK on", W, "ranks", flush=True)
