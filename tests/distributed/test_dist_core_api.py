"""The rest of torch.distributed's core API: object point-to-point, P2POp/batch_isend_irecv,
subgroups, coalesced and single-tensor collectives on 2 and 4 MPI ranks
(scripts/core_api_checks.py), pdb on one rank (scripts/breakpoint_check.py), and the
single-process parts (exceptions, constants, signatures, errors) against torch."""

from __future__ import annotations

import inspect
import subprocess
import sys
import warnings
from datetime import timedelta

import numpy as np
import pytest
from mpi_harness import ROOT, SCRIPTS, env, mpiexec, run

import lucid
import lucid.distributed as dist
from lucid.distributed import debugger

torch = pytest.importorskip("torch")
tdist = pytest.importorskip("torch.distributed")

NEW_CALLABLES = ["P2POp", "batch_isend_irecv", "send_object_list", "recv_object_list",
                 "new_subgroups", "new_subgroups_by_enumeration", "all_gather_single",
                 "reduce_scatter_single", "all_reduce_coalesced", "all_gather_coalesced",
                 "all_gather_into_tensor", "reduce_scatter_tensor", "get_node_local_rank",
                 "is_backend_available", "supports_complex", "breakpoint"]


# ---- several ranks -------------------------------------------------------------------------

def test_core_api_on_two_ranks() -> None:
    assert "CORE API OK on 2 ranks" in run("core_api_checks.py", timeout=180)


def test_core_api_on_four_ranks() -> None:
    assert "CORE API OK on 4 ranks" in run("core_api_checks.py", n=4, timeout=240)


def test_breakpoint_stops_only_the_chosen_rank() -> None:
    cmd = [mpiexec(), "-n", "2", sys.executable, f"{SCRIPTS}/breakpoint_check.py"]
    try:
        done = subprocess.run(cmd, input="up\np marker\nc\n", capture_output=True, text=True,
                              env=env(), cwd=ROOT, timeout=120)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"MPI job hung and was killed; output:\n{e.stdout}")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "Type 'up' to get to the frame that called dist.breakpoint(rank=0)" in out
    assert "'pdb-sees-this-frame'" in out          # 'up' reached the caller's frame
    assert out.count("(Pdb)") == 3                 # one debugger: rank 0's
    assert "rank 0 resumed" in out and "rank 1 resumed" in out


# ---- one process, against torch ------------------------------------------------------------

def _params(fn: object) -> list[tuple[str, object]]:
    sig = inspect.signature(fn.__init__ if inspect.isclass(fn) else fn)
    out = []
    for p in sig.parameters.values():
        if p.name == "self":
            continue
        d = p.default
        out.append((p.name, int(d) if isinstance(d, (int, np.integer)) else
                    "required" if d is p.empty else d))
    return out


@pytest.mark.parametrize("name", NEW_CALLABLES)
def test_signatures_match_torch(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _params(getattr(dist, name)) == _params(getattr(tdist, name))


def test_exception_hierarchy_matches_torch() -> None:
    for name in ("DistError", "DistBackendError", "DistNetworkError", "DistStoreError"):
        ours, theirs = getattr(dist, name), getattr(tdist, name)
        assert [c.__name__ for c in ours.__mro__] == [c.__name__ for c in theirs.__mro__]
        assert ours.__doc__.splitlines()[0] == theirs.__doc__ + "."
    assert issubclass(dist.DistError, RuntimeError)
    with pytest.raises(RuntimeError, match="lost"):
        raise dist.DistNetworkError("peer lost")
    with pytest.raises(dist.DistError):
        raise dist.DistStoreError("store")
    assert not issubclass(dist.DistBackendError, dist.DistStoreError)


def test_constants_and_predicates_match_torch() -> None:
    assert isinstance(dist.default_pg_timeout, timedelta)
    assert dist.default_pg_timeout == tdist.default_pg_timeout == timedelta(minutes=30)
    for op in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"):
        assert dist.supports_complex(getattr(dist.ReduceOp, op)) == \
            tdist.supports_complex(getattr(tdist.ReduceOp, op)), op
    for name in ("gloo", "GLOO", "nccl", "foo", "cpu:gloo", "cpu:gloo,cuda:nccl"):
        assert dist.is_backend_available(name) == tdist.is_backend_available(name), name
    # lucid runs on MPI: "mpi" is available wherever mpi4py is (torch's wheel has no MPI)
    assert dist.is_backend_available("mpi") == dist.is_mpi_available()


def test_reduce_op_is_deprecated_as_torch() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert dist.reduce_op.SUM == dist.ReduceOp.SUM and dist.reduce_op.MAX == 4
        ours = list(dist.reduce_op.__members__)
        theirs = list(tdist.reduce_op.__members__)
    assert ours == theirs
    msgs = [str(w.message) for w in caught if issubclass(w.category, FutureWarning)]
    assert sum("`lucid.distributed.reduce_op` is deprecated" in m for m in msgs) == 3
    assert sum("`torch.distributed.reduce_op` is deprecated" in m for m in msgs) == 1


def test_get_node_local_rank_matches_torch(monkeypatch) -> None:
    monkeypatch.setenv("LOCAL_RANK", "3")
    assert dist.get_node_local_rank() == tdist.get_node_local_rank() == 3
    assert dist.get_node_local_rank(fallback_rank=7) == 3
    monkeypatch.delenv("LOCAL_RANK")
    assert dist.get_node_local_rank(fallback_rank=5) == tdist.get_node_local_rank(5) == 5
    with pytest.raises(RuntimeError) as theirs:
        tdist.get_node_local_rank()
    with pytest.raises(RuntimeError) as ours:
        dist.get_node_local_rank()
    assert str(ours.value) == str(theirs.value)


def _outcome(fn: object) -> str:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the exception type is the result
        return type(e).__name__
    return "ok"


def test_errors_before_init_match_torch() -> None:
    pytest.importorskip("mpi4py")
    assert not dist.is_initialized()
    cases = [
        (lambda: dist.P2POp(dist.send, lucid.ones(1), 1),
         lambda: tdist.P2POp(tdist.send, torch.ones(1), 1)),
        (lambda: dist.P2POp(dist.isend, [1.0], 1), lambda: tdist.P2POp(tdist.isend, [1.0], 1)),
        (lambda: dist.P2POp(dist.isend, lucid.ones(1), 1),
         lambda: tdist.P2POp(tdist.isend, torch.ones(1), 1)),
        (lambda: dist.batch_isend_irecv([]), lambda: tdist.batch_isend_irecv([])),
        (lambda: dist.batch_isend_irecv("x"), lambda: tdist.batch_isend_irecv("x")),
        (lambda: dist.new_subgroups_by_enumeration([]),
         lambda: tdist.new_subgroups_by_enumeration([])),
        (lambda: dist.new_subgroups(group_size=0), lambda: tdist.new_subgroups(group_size=0)),
        (lambda: dist.send_object_list([1], dst=1), lambda: tdist.send_object_list([1], dst=1)),
    ]
    for ours, theirs in cases:
        assert _outcome(ours) == _outcome(theirs) != "ok"


# ---- a world of one, side by side with torch's (gloo) --------------------------------------

@pytest.fixture
def worlds(tmp_path):
    """lucid's process group of one (MPI) and torch's (gloo on a file store)."""
    pytest.importorskip("mpi4py")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dist.init_process_group("gloo")
        tdist.init_process_group("gloo", store=tdist.FileStore(str(tmp_path / "store"), 1),
                                 rank=0, world_size=1)
    yield
    tdist.destroy_process_group()
    dist.destroy_process_group()


def test_argument_errors_match_torch(worlds) -> None:
    cases = [
        (lambda: dist.send_object_list([1], dst=0), lambda: tdist.send_object_list([1], dst=0),
         "Invalid destination rank: destination rank should not be the same"),
        (lambda: dist.recv_object_list([None]), lambda: tdist.recv_object_list([None]),
         "Must specify global_rank or group_rank"),
        (lambda: dist.send_object_list([1], dst=0, group_dst=0),
         lambda: tdist.send_object_list([1], dst=0, group_dst=0),
         "Can't specify both group_rank and global_rank"),
        (lambda: dist.new_subgroups(group_size=2), lambda: tdist.new_subgroups(group_size=2),
         "The arg 'group_size' (2) must not exceed the world size (1)"),
        (lambda: dist.new_subgroups_by_enumeration([[0], [0]]),
         lambda: tdist.new_subgroups_by_enumeration([[0], [0]]),
         "Rank 0 has appeared in both subgroup [0] and [0]"),
        (lambda: dist.all_reduce_coalesced([lucid.ones(1, dtype=lucid.complex64)],
                                           op=dist.ReduceOp.MAX),
         lambda: tdist.all_reduce_coalesced([torch.ones(1, dtype=torch.complex64)],
                                            op=tdist.ReduceOp.MAX),
         "on complex tensors"),
        (lambda: dist.all_reduce_coalesced([lucid.ones(1), lucid.ones(1, dtype=lucid.int32)]),
         lambda: tdist.all_reduce_coalesced([torch.ones(1), torch.ones(1, dtype=torch.int32)]),
         "Invalid usage of tensors with different dtypes"),
        (lambda: dist.all_reduce_coalesced((lucid.ones(1),)),
         lambda: tdist.all_reduce_coalesced((torch.ones(1),)),
         "Invalid function argument. Expected parameter `tensor` of type List"),
        (lambda: dist.all_gather_coalesced((), [lucid.ones(1)]),
         lambda: tdist.all_gather_coalesced((), [torch.ones(1)]),
         "Invalid function argument: output_tensor_lists should be a list"),
        (lambda: dist.batch_isend_irecv([dist.P2POp(dist.isend, lucid.ones(1), 0)]),
         lambda: tdist.send(torch.ones(1), dst=0), "should not be the same as the rank"),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for ours, theirs, msg in cases:
            errors = []
            for fn in (ours, theirs):
                with pytest.raises(ValueError if "Expected" not in msg and "should be a list"
                                   not in msg else TypeError) as info:
                    fn()
                errors.append(str(info.value))
            assert msg in errors[0] and msg in errors[1], errors


def test_results_match_torch(worlds) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = [lucid.ones(2) * 3, lucid.tensor([1.0 + 2j])]
        theirs = [torch.ones(2) * 3, torch.tensor([1.0 + 2j])]
        assert dist.all_reduce_coalesced(ours, op=dist.ReduceOp.AVG) is None
        assert tdist.all_reduce_coalesced(theirs, op=tdist.ReduceOp.AVG) is None
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a.numpy(), b.numpy())
        fut, tfut = (dist.all_reduce_coalesced([lucid.ones(2)], async_op=True),
                     tdist.all_reduce_coalesced([torch.ones(2)], async_op=True))
        assert [t.tolist() for t in fut.wait()] == [t.tolist() for t in tfut.wait()]
        outs, touts = [[lucid.empty(2), lucid.empty(1)]], [[torch.empty(2), torch.empty(1)]]
        fut = dist.all_gather_coalesced(outs, [lucid.ones(2), lucid.zeros(1)], async_op=True)
        tfut = tdist.all_gather_coalesced(touts, [torch.ones(2), torch.zeros(1)],
                                          async_op=True)
        assert fut.wait() == outs        # one list per rank, as torch's on several ranks
        tfut.wait()
        assert [[t.tolist() for t in lst] for lst in outs] == \
            [[t.tolist() for t in lst] for lst in touts]
        out, tout = lucid.empty(3), torch.empty(3)
        dist.all_gather_single(out, lucid.arange(3.0))
        tdist.all_gather_single(tout, torch.arange(3.0))
        assert out.tolist() == tout.tolist()
        red, tred = lucid.empty(3), torch.empty(3)
        dist.reduce_scatter_single(red, lucid.arange(3.0), op=dist.ReduceOp.MAX)
        tdist.reduce_scatter_single(tred, torch.arange(3.0), op=tdist.ReduceOp.MAX)
        assert red.tolist() == tred.tolist()
    cur, subs = dist.new_subgroups(group_size=1)
    tcur, tsubs = tdist.new_subgroups(group_size=1)
    assert len(subs) == len(tsubs) == 1 and cur is subs[0] and tcur is tsubs[0]
    assert dist.get_process_group_ranks(cur) == tdist.get_process_group_ranks(tcur) == [0]
    cur, subs = dist.new_subgroups_by_enumeration([[0]])
    tcur, tsubs = tdist.new_subgroups_by_enumeration([[0]])
    assert dist.get_process_group_ranks(cur) == tdist.get_process_group_ranks(tcur) == [0]


def test_deprecations_warn_as_torch(worlds) -> None:
    calls = [
        ("all_gather_into_tensor", lambda m, lib: m.all_gather_into_tensor(
            lib.empty(1), lib.ones(1))),
        ("reduce_scatter_tensor", lambda m, lib: m.reduce_scatter_tensor(
            lib.empty(1), lib.ones(1))),
        ("all_reduce_coalesced", lambda m, lib: m.all_reduce_coalesced([lib.ones(1)])),
        ("all_gather_coalesced", lambda m, lib: m.all_gather_coalesced(
            [[lib.empty(1)]], [lib.ones(1)])),
    ]
    for name, call in calls:
        for m, lib, prefix in ((dist, lucid, "lucid"), (tdist, torch, "torch")):
            with pytest.warns(FutureWarning, match=f"`{prefix}.distributed.{name}`"):
                call(m, lib)


# ---- a world of one: what torch's CPU build cannot compare -----------------------------------

@pytest.fixture
def world1():
    pytest.importorskip("mpi4py")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dist.init_process_group()
    yield
    dist.destroy_process_group()


def test_new_subgroups_default_is_one_per_machine(world1) -> None:
    # torch's default counts CUDA devices (ValueError without CUDA); lucid counts the ranks
    # of each machine, one subgroup per machine
    cur, subs = dist.new_subgroups()
    assert len(subs) == 1 and dist.get_process_group_ranks(cur) == [0]


def test_non_member_ranks_skip(world1) -> None:
    outsider = dist.GroupMember.NON_GROUP_MEMBER
    with pytest.warns(UserWarning, match="not a member"):
        assert dist.send_object_list([1], dst=0, group=outsider) is None
    with pytest.warns(UserWarning, match="not a member"):
        assert dist.recv_object_list([None], src=0, group=outsider) == -1
    with pytest.warns(UserWarning, match="not a member"), \
            pytest.warns(FutureWarning):
        assert dist.all_reduce_coalesced([lucid.ones(1)], group=outsider) is None


class _FakePdb:
    def __init__(self, log: list) -> None:
        self.log = log

    def message(self, text: str) -> None:
        self.log.append(text)

    def set_trace(self) -> None:
        self.log.append("set_trace")


def test_breakpoint_rank_skip_and_timeout(world1, monkeypatch) -> None:
    log: list = []
    monkeypatch.setattr(debugger, "_make_distributed_pdb", lambda: _FakePdb(log))
    monkeypatch.setattr(debugger, "_breakpoint_cache", {})
    sub = dist.new_group([0], timeout=timedelta(seconds=5))
    dist.breakpoint(rank=1, timeout_s=None)           # another rank's: only the barrier
    assert log == [] and sub.timeout == timedelta(seconds=5)
    dist.breakpoint()
    assert log[-1] == "set_trace" and "dist.breakpoint(rank=0)" in log[0]
    assert sub.timeout == dist.group.WORLD.timeout == timedelta(seconds=3600)
    log.clear()
    for _ in range(3):
        dist.breakpoint(skip=2, timeout_s=60)
    assert log.count("set_trace") == 1 and sub.timeout == timedelta(seconds=60)
