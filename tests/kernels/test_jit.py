"""The shared njit decorator: cache location and key, fallbacks, option sets, registry, warm-up."""

from __future__ import annotations

import json
from pathlib import Path

import numba
import numpy as np
import pytest

from lucid.kernels import _jit, elementwise, reduce, warmup


def test_key_changes_with_any_kernel_source(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("y = 2\n")
    h1 = _jit.source_hash([a, b])
    assert h1 == _jit.source_hash([b, a])  # order-independent
    b.write_text("y = 3\n")  # an edited callee in another module
    h2 = _jit.source_hash([a, b])
    assert h2 != h1
    b.rename(tmp_path / "c.py")
    assert _jit.source_hash([a, tmp_path / "c.py"]) != h2
    k = _jit.cache_key("1.0", h1)
    assert k != _jit.cache_key("1.1", h1)  # lucid version
    assert k != _jit.cache_key("1.0", h2)  # kernel sources
    assert k.startswith("1.0-py") and h1[:16] in k


def test_live_key_covers_this_package() -> None:
    files = sorted(p.name for p in Path(_jit.__file__).parent.glob("*.py"))
    assert {"_jit.py", "_reduce_kernels.py", "reduce.py", "elementwise.py"} <= set(files)
    assert _jit.cache_dir().name == _jit.cache_key()
    assert _jit.cache_dir().name.startswith(_jit._read_version() + "-")


def test_cache_root_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("LUCID_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if _jit.sys.platform.startswith("linux"):
        assert _jit.cache_root() == tmp_path / "xdg" / "lucid" / "numba"
    monkeypatch.setenv("LUCID_CACHE_DIR", str(tmp_path / "mine"))
    assert _jit.cache_root() == tmp_path / "mine"


def test_options_tag_separates_builds() -> None:
    ser, par = elementwise._RELU
    assert _jit.options_tag({"parallel": False}) != _jit.options_tag({"parallel": True})
    reg = warmup.registry()
    assert reg["elementwise.relu"].dispatcher is ser
    assert reg["elementwise.relu[par]"].dispatcher is par._disp  # launches serialized
    with pytest.raises(ValueError, match="registered twice"):
        _jit.kernel(elementwise._relu, name="elementwise.relu")


def test_registry_signatures_match_runtime_calls(rng) -> None:
    for dt in (np.float32, np.float64):
        x = rng.standard_normal((3, 5, 7)).astype(dt)
        for op in ("sum", "mean", "var", "max", "argmax"):
            for axis in (2, 1):
                getattr(reduce, op)(x, axis)
        elementwise.sigmoid_backward(x, x)
        elementwise.relu_backward(x, x)
        elementwise.relu(x)
        for ser, _ in (elementwise._ADD, elementwise._SUB, elementwise._MUL, elementwise._DIV):
            ser(x.ravel(), x.ravel(), np.empty(x.size, dt))
        elementwise._AXPC[0](x.ravel(), 2.0, 1.0, np.empty(x.size, dt))
        elementwise._POWI[0](x.ravel(), 3, np.empty(x.size, dt))
        elementwise.add_row(np.ones((4, 7), dt), x[0, 0])
        reduce.sum(np.ones((256, 3), dt), 0)  # a tall block's column sums
    reg = warmup.registry()
    mine = {n: e for n, e in reg.items() if n.startswith(("reduce.", "elementwise."))}
    # 9 reduction + 13 elementwise kernels, 2 builds each, and the scalar division's parallel one
    assert len(mine) == 45, sorted(mine)
    for name, entry in mine.items():
        assert entry.signatures, name
        disp = entry.dispatcher
        if not hasattr(disp, "signatures") or name.endswith("[par]"):
            continue
        for sig in disp.signatures:
            dtype = str(sig[0].dtype)
            assert tuple(sig) in [tuple(s) for s in entry.signatures_for(dtype)], (name, sig)


def test_kernel_modules_are_discovered() -> None:
    assert {"reduce", "elementwise", "matmul"} <= set(warmup.kernel_modules())
    import lucid.kernels as K

    assert K.warmup is warmup and callable(K.warmup)
    assert K.reduce is reduce


def test_warmup_in_process() -> None:
    pats = ["elementwise.relu", "*.relu[[]par]"]
    rows = warmup.warmup(dtypes=("float64",), kernels=pats, progress=False)
    assert {r["kernel"] for r in rows} == {"elementwise.relu", "elementwise.relu[par]"}
    assert all(r["source"] in ("memory", "cache", "compiled", "nojit") for r in rows)
    with pytest.raises(ValueError):
        warmup.warmup(dtypes=("int8",), progress=False)


_PROBE = """
import json, numpy as np, numba
from lucid.kernels import _jit, elementwise as E
x = np.arange(-3, 5, dtype=np.float32); out = np.empty_like(x)
ser, par = E._RELU
ser(x, out); par(x, out)
print(json.dumps({
    "dir": str(_jit.cache_dir()), "enabled": _jit.cache_enabled(),
    "numba_cache_dir": numba.config.CACHE_DIR,
    "hits": [sum(d.stats.cache_hits.values()) for d in (ser, par)],
    "ok": out.tolist() == np.maximum(x, 0).tolist(),
}))
"""


needs_jit = pytest.mark.skipif(numba.config.DISABLE_JIT, reason="compiles kernels")


@needs_jit
@pytest.mark.slow
def test_disk_cache_roundtrip_and_user_numba_dir(tmp_path: Path, run_py) -> None:
    env = {"LUCID_CACHE_DIR": str(tmp_path / "lucid"), "NUMBA_CACHE_DIR": str(tmp_path / "user")}
    first = json.loads(run_py(_PROBE, env))
    assert first["enabled"] and first["ok"] and first["hits"] == [0, 0]
    assert Path(first["dir"]).parent == tmp_path / "lucid"
    assert first["numba_cache_dir"] == str(tmp_path / "user")  # the user's setting untouched
    assert not (tmp_path / "user").exists() or not any((tmp_path / "user").rglob("*.nbi"))
    index = sorted(p.name for p in Path(first["dir"]).glob("*relu-*.nbi"))
    assert len(index) == 2, index  # serial and parallel builds: separate entries
    second = json.loads(run_py(_PROBE, env))
    assert second["hits"] == [1, 1] and second["ok"]


@needs_jit
@pytest.mark.slow
def test_unwritable_cache_dir_falls_back(tmp_path: Path, run_py) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    out = json.loads(run_py(_PROBE, {"LUCID_CACHE_DIR": str(blocker / "cache")}))
    assert out["ok"] and out["enabled"] is False and out["hits"] == [0, 0]


def test_prune_keeps_newest_keys(tmp_path: Path) -> None:
    import os

    names = [f"0.1.{i}-py311-nb0.68.1-{i:016x}" for i in range(12)]
    for i, n in enumerate(names):
        (tmp_path / n).mkdir()
        os.utime(tmp_path / n, (1000 + i, 1000 + i))
    (tmp_path / "not-a-key").mkdir()
    current = tmp_path / names[0]  # oldest, but in use: never pruned
    gone = _jit.prune(tmp_path, current, keep=3)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert sorted(p.name for p in gone) == sorted(names[1:9])
    assert left == sorted([*names[9:], names[0], "not-a-key"])
