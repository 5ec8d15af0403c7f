"""Differential fuzz in CI: seeded random op-table chains give the reference's values,
gradients and errors (torch when installed, else lucid's numpy reference backend) on every
device, with no crash. See ``differential.py`` for what a program is and for long runs.

``LUCID_DIFF_PROGRAMS`` sets the number of programs per device (default 400 on "cpu", a
third of that elsewhere); ``LUCID_DIFF_START`` the first seed. A failure prints each finding
shrunk to a minimal program with the command that replays it.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Iterator
from typing import Any

import differential as dfz
import numpy as np
import pytest
from fuzz_harness import DEVICES, Worker, WorkerDied
from opinfo import OpInfo, unary_samples

import lucid

COUNT = int(os.environ.get("LUCID_DIFF_PROGRAMS", "400"))
START = int(os.environ.get("LUCID_DIFF_START", "0"))
FAIL = dfz.BAD + ("crash", "hang", "fuzzer_error")


@pytest.fixture(scope="module")
def diff_worker() -> Iterator[Worker]:
    w = Worker([sys.executable, dfz.__file__, "--worker"])
    yield w
    w.close()


@pytest.mark.parametrize("dev", DEVICES)
def test_programs_agree_with_reference(diff_worker: Worker, dev: str) -> None:
    count = COUNT if dev == "cpu" else max(1, COUNT // 3)
    kinds: Counter[str] = Counter()
    found: list[str] = []
    for prog in dfz.programs(dev, START, count):
        out = dfz.run_isolated(diff_worker, prog, dfz_timeout())
        kinds[out["kind"]] += 1
        if out["kind"] not in FAIL:
            continue
        text = dfz.describe(prog)
        if out["kind"] in dfz.BAD and len(found) < 5:
            try:
                small = diff_worker.run({"shrink": prog, "kind": out["kind"]}, timeout=300)
                text = small["text"]
            except WorkerDied:
                diff_worker.close()
        found.append(f"[{out['kind']}] seed {prog['seed']}: {out['detail']}\n{text}")
    print(f"differential fuzz on {dev}: {count} programs, {dict(kinds)}")
    assert kinds["ok"] > count // 3, f"too few programs ran through: {dict(kinds)}"
    assert not found, f"{len(found)} of {count} programs disagree with the reference " \
        f"({dict(kinds)}):\n\n" + "\n\n".join(found[:8])


def dfz_timeout() -> float:
    """Seconds a program may take: the first use of a kernel compiles it."""
    return float(os.environ.get("LUCID_FUZZ_TIMEOUT", "300"))


# ---- the fuzzer's own checks: it sees a planted defect and shrinks to it -------------------------


def test_close_accepts_rounding_and_flags_differences() -> None:
    ref = np.array([0.0, 1.0, -2.5, np.nan, np.inf])
    assert dfz.close(ref + [1e-9, 1e-7, 0, 0, 0], ref, "float32") is None
    assert "NaN pattern" in dfz.close(np.array([0.0, 1.0, -2.5, 1.0, np.inf]), ref, "float32")
    assert "inf pattern" in dfz.close(np.array([0.0, 1.0, -2.5, np.nan, -np.inf]), ref,
                                      "float64")
    assert "values differ" in dfz.close(ref * [1, 1.01, 1, 1, 1], ref, "float32")
    assert "shape" in dfz.close(ref[:2], ref[:3], "float64")
    assert "values differ" in dfz.close(np.array([1, 2]), np.array([1, 3]), "float64")


class _WrongGrad(lucid.autograd.Function):
    """exp with a gradient 1% too large."""

    @staticmethod
    def forward(ctx: Any, x: lucid.Tensor) -> lucid.Tensor:
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, g: lucid.Tensor) -> lucid.Tensor:
        (y,) = ctx.saved_tensors
        return g * y * 1.01


PLANTED = {
    "planted_value": lambda x: x.exp() * 1.01,
    "planted_grad": _WrongGrad.apply,
    "planted_raise": lambda x: x.view(-1, 7),
}


@pytest.mark.parametrize("name,kind", [("planted_value", "value"), ("planted_grad", "grad"),
                                       ("planted_raise", "lucid_raises")])
def test_planted_defect_is_found_and_shrunk(monkeypatch: pytest.MonkeyPatch, name: str,
                                            kind: str) -> None:
    info = OpInfo(name, PLANTED[name], np.exp, unary_samples(), torch_op="exp")
    monkeypatch.setitem(dfz.BY_NAME, name, info)
    prog = dfz.make_program(11, "cpu", reference="numpy" if dfz.torch is None else None,
                            dtype="float64")
    prog["steps"] = [dict(s, op="exp", sample=0) for s in prog["steps"][:2]] + [
        {"op": name, "sample": 0, "mut": None, "lay": None, "link": True},
        {"op": "tanh", "sample": 0, "mut": None, "lay": None, "link": True}]
    if name == "planted_raise":
        monkeypatch.setattr(info, "torch_op", lambda x: x.reshape(-1))
        monkeypatch.setattr(info, "op", lambda x: x.view(-1, 7))
    if dfz.torch is None:  # the numpy device is the reference: plant the defect on cpu only
        good = "exp" if name != "planted_raise" else (lambda x: x.reshape(-1))
        monkeypatch.setattr(info, "op", _on_cpu_only(PLANTED[name], good))
    out = dfz.check(prog)
    assert out["kind"] == kind, out
    small = dfz.shrink(prog, kind)
    assert [s["op"] for s in small["steps"]] == [name]
    assert name in dfz.describe(small) and "--replay" in dfz.describe(small)


def _on_cpu_only(bad: Any, good: Any) -> Any:
    def op(x: lucid.Tensor) -> lucid.Tensor:
        if x.device.type == "cpu":
            return bad(x)
        return getattr(x, good)() if isinstance(good, str) else good(x)

    return op
