"""lucid.profiler: op times recorded through a temporary Op.apply wrapper, PyTorch's table."""

from __future__ import annotations

import json

import pytest

import lucid
from lucid.autograd.function import Op
from lucid.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule


def _work(x):
    return (x @ x).relu().sum()


def test_profile_records_ops_and_restores_apply():
    orig = Op.__dict__["apply"]
    x = lucid.randn(8, 8)
    _work(x)  # compile kernels outside the profile
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("model_inference"):
            for _ in range(3):
                _work(x)
    assert Op.__dict__["apply"] is orig
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["model_inference"].count == 1
    assert avg["lucid::MatMul"].count == 3 and avg["lucid::Relu"].count == 3
    inner = sum(avg[k].cpu_time_total for k in avg if k != "model_inference")
    outer = avg["model_inference"]
    assert outer.cpu_time_total >= inner > 0
    assert abs(outer.self_cpu_time_total - (outer.cpu_time_total - inner)) < 1e-6 * (
        outer.cpu_time_total + 1)
    ev = [e for e in prof.events() if e.name == "lucid::MatMul"][0]
    assert ev.input_shapes == [[8, 8], [8, 8]]
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=2)
    lines = table.splitlines()
    assert "Self CPU %" in lines[1] and "# of Calls" in lines[1]
    assert lines[3].split()[0] == "model_inference" and len(lines) == 3 + 2 + 2
    assert lines[-1].startswith("Self CPU time total:")
    with pytest.raises(AttributeError, match="no attribute 'foo'"):
        prof.key_averages().table(sort_by="foo")
    by_shape = prof.key_averages(group_by_input_shape=True)
    assert any(e.input_shapes == [[8, 8], [8, 8]] for e in by_shape)


def test_no_recording_outside_and_restored_after_error():
    orig = Op.__dict__["apply"]
    with pytest.raises(ValueError):
        with profile():
            _work(lucid.randn(2, 2))
            raise ValueError
    assert Op.__dict__["apply"] is orig
    with record_function("idle"):  # no profile: a no-op
        _work(lucid.randn(2, 2))
    with profile() as p:
        with pytest.raises(RuntimeError, match="already enabled"):
            with profile():
                pass
    assert Op.__dict__["apply"] is orig and p.events() == []


def test_record_function_decorator_and_chrome_trace(tmp_path):
    @record_function("helper")
    def helper(x):
        return x * 2

    with profile() as prof:
        helper(lucid.ones(3))
    names = [e.name for e in prof.events()]
    assert names == ["lucid::Mul", "helper"] or names[-1] == "helper"
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    assert {t["name"] for t in trace} == set(names) and all(t["ph"] == "X" for t in trace)


def test_schedule_matches_torch(torch):
    mine = schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=1)
    ref = torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=1)
    assert [mine(i).name for i in range(8)] == [ref(i).name for i in range(8)]


def test_schedule_keeps_only_active_steps():
    traces = []
    x = lucid.ones(2)
    with profile(schedule=schedule(wait=1, warmup=1, active=2),
                 on_trace_ready=lambda p: traces.append(len(p.events()))) as prof:
        for _ in range(4):
            x = x + 1
            prof.step()
    assert ProfilerAction.RECORD_AND_SAVE.value == 3
    assert traces[0] == 2  # steps 2 and 3: one Add each
