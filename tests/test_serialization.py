"""Checkpoints: round trips, atomic writes, plain safetensors, and hostile files."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import pickle
import struct
from collections import OrderedDict

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid._checkpoint_format import HEADER_CRC_KEY, _header_crc
from lucid.serialization import CheckpointError


def _model() -> nn.Module:
    lucid.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def test_round_trip_nested(tmp_path):
    t = lucid.randn(2, 3)
    i = lucid.arange(5)
    obj = {"t": t, "i": i, "n": 3, "f": 0.5, "s": "x", "none": None, "b": True,
           "tup": (1, 2.0, "z"), "lst": [t, {"k": i}], "inf": float("inf"),
           "ints": {0: {"step": 4}, 1: {}}, "arr": np.arange(4, dtype=np.int32)}
    p = tmp_path / "a.lucid"
    lucid.save(obj, p)
    got = lucid.load(p)
    np.testing.assert_array_equal(got["t"].numpy(), t.numpy())
    assert got["t"].dtype == lucid.float32 and got["i"].dtype == lucid.int64
    assert got["n"] == 3 and got["f"] == 0.5 and got["s"] == "x" and got["none"] is None
    assert got["b"] is True and got["tup"] == (1, 2.0, "z") and got["inf"] == float("inf")
    assert got["ints"] == {0: {"step": 4}, 1: {}}
    assert got["lst"][0] is got["t"]  # one tensor saved once, shared on load
    assert isinstance(got["arr"], np.ndarray) and got["arr"].dtype == np.int32


def test_requires_grad_and_state_dict_metadata(tmp_path):
    m = _model()
    sd = m.state_dict()
    w = lucid.randn(3, requires_grad=True)
    lucid.save({"sd": sd, "w": w}, tmp_path / "m.lucid")
    got = lucid.load(tmp_path / "m.lucid")
    assert isinstance(got["sd"], OrderedDict)
    assert list(got["sd"].keys()) == list(sd.keys())
    assert got["sd"]._metadata == sd._metadata
    assert got["w"].requires_grad
    m2 = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    m2.load_state_dict(got["sd"])
    x = lucid.randn(5, 3)
    np.testing.assert_array_equal(m(x).detach().numpy(), m2(x).detach().numpy())


def test_file_object(tmp_path):
    import io

    buf = io.BytesIO()
    lucid.save({"a": lucid.ones(2)}, buf)
    buf.seek(0)
    assert lucid.load(buf)["a"].tolist() == [1.0, 1.0]


def test_atomic_write_keeps_old_file_on_failure(tmp_path):
    p = tmp_path / "ck.lucid"
    lucid.save({"a": lucid.ones(2)}, p)
    before = p.read_bytes()
    with pytest.raises(TypeError, match="cannot store an object of type function"):
        lucid.save({"a": lucid.zeros(2), "bad": lambda: 0}, p)
    assert p.read_bytes() == before
    assert [f.name for f in tmp_path.iterdir()] == ["ck.lucid"]  # no temporary left behind


def test_atomic_write_survives_crash_mid_write(tmp_path, monkeypatch):
    p = tmp_path / "ck.lucid"
    lucid.save({"a": lucid.ones(3)}, p)
    before = p.read_bytes()

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError, match="disk full"):
        lucid.save({"a": lucid.zeros(3)}, p)
    monkeypatch.undo()
    assert p.read_bytes() == before
    assert lucid.load(p)["a"].tolist() == [1.0, 1.0, 1.0]


def test_plain_safetensors_round_trip(tmp_path):
    ts = {"w": lucid.randn(2, 2), "b": lucid.arange(3), "m": lucid.tensor([True, False])}
    lucid.save_file(ts, tmp_path / "w.safetensors", metadata={"note": "x"})
    got = lucid.load_file(tmp_path / "w.safetensors")
    assert set(got) == set(ts)
    for k in ts:
        np.testing.assert_array_equal(got[k].numpy(), ts[k].numpy())
        assert got[k].dtype == ts[k].dtype


def test_safetensors_layout_is_standard(tmp_path):
    lucid.save_file({"x": lucid.tensor([1.0, 2.0])}, tmp_path / "x.st")
    raw = (tmp_path / "x.st").read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    assert header["x"] == {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
    assert np.frombuffer(raw[8 + n:], "<f4").tolist() == [1.0, 2.0]


def test_torch_safetensors_interop(tmp_path):
    st = pytest.importorskip("safetensors.torch")
    torch = pytest.importorskip("torch")
    st.save_file({"w": torch.arange(6, dtype=torch.float32).reshape(2, 3)}, tmp_path / "t.st")
    got = lucid.load_file(tmp_path / "t.st")
    assert got["w"].tolist() == [[0, 1, 2], [3, 4, 5]]
    lucid.save_file({"v": lucid.ones(2, dtype=lucid.float64)}, tmp_path / "l.st")
    assert st.load_file(str(tmp_path / "l.st"))["v"].tolist() == [1.0, 1.0]


class _Evil:
    ran = False

    def __reduce__(self):
        return (exec, ("_Evil.ran = True",))


@pytest.mark.parametrize("payload", [
    pickle.dumps({"a": 1}),
    pickle.dumps(_Evil()),
    b"PK\x03\x04" + b"\x00" * 40,
], ids=["pickle", "pickle-exec", "zip"])
def test_refuses_pickles(tmp_path, payload):
    p = tmp_path / "evil.pt"
    p.write_bytes(payload)
    with pytest.raises(CheckpointError, match="(pickle|zip archive)"):
        lucid.load(p)
    assert not _Evil.ran


def test_refuses_torch_save(tmp_path):
    torch = pytest.importorskip("torch")
    torch.save({"a": torch.ones(2)}, tmp_path / "t.pt")
    with pytest.raises(CheckpointError, match="zip archive"):
        lucid.load(tmp_path / "t.pt")


def _good(tmp_path) -> bytes:
    lucid.save({"a": lucid.ones(4), "b": 2}, tmp_path / "g.lucid")
    return (tmp_path / "g.lucid").read_bytes()


def test_truncated(tmp_path):
    raw = _good(tmp_path)
    for cut in (4, 20, len(raw) - 3):
        (tmp_path / "t").write_bytes(raw[:cut])
        with pytest.raises(CheckpointError, match="(truncated|too short|invalid header)"):
            lucid.load(tmp_path / "t")


def test_wrong_header(tmp_path):
    raw = _good(tmp_path)
    bad = struct.pack("<Q", 10**12) + raw[8:]
    (tmp_path / "h").write_bytes(bad)
    with pytest.raises(CheckpointError, match="invalid header"):
        lucid.load(tmp_path / "h")
    (tmp_path / "g").write_bytes(b"hello world, not a checkpoint at all")
    with pytest.raises(CheckpointError):
        lucid.load(tmp_path / "g")


def _rewrite_header(raw: bytes, edit) -> bytes:
    """Edit the header and stamp a matching header checksum, as a hostile writer would."""
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    edit(header)
    try:
        header["__metadata__"][HEADER_CRC_KEY] = _header_crc(header)
    except (KeyError, TypeError):
        pass
    new = json.dumps(header).encode()
    return struct.pack("<Q", len(new)) + new + raw[8 + n:]


@pytest.mark.parametrize("edit,match", [
    (lambda h: h["0"].update(dtype="X9"), "unsupported dtype"),
    (lambda h: h["0"].update(shape=[5]), "needs 20 bytes"),
    (lambda h: h["0"].update(shape=[-4]), "invalid shape"),
    (lambda h: h["0"].update(data_offsets=[8, 4]), "invalid data offsets"),
    (lambda h: h["0"].update(data_offsets=[0, 400], shape=[100]), "truncated"),
    (lambda h: h["__metadata__"].update(structure='{"__tensor__": "9"}'), "missing tensor"),
    (lambda h: h["__metadata__"].update(structure='{"__evil__": 1}'), "corrupted structure"),
    (lambda h: h["__metadata__"].update(structure="{not json"), "corrupted structure"),
])
def test_corrupted_entries(tmp_path, edit, match):
    raw = _rewrite_header(_good(tmp_path), edit)
    (tmp_path / "c").write_bytes(raw)
    with pytest.raises(CheckpointError, match=match):
        lucid.load(tmp_path / "c")


def test_map_location(tmp_path):
    lucid.save({"a": lucid.ones(2)}, tmp_path / "m")
    got = lucid.load(tmp_path / "m", map_location="numpy")
    assert got["a"].device == "numpy"
    got = lucid.load(tmp_path / "m", map_location={"cpu": "numpy"})
    assert got["a"].device == "numpy"


# ---- 0-d tensors and dtypes from other writers -------------------------------------------------

def test_zero_dim_round_trips(tmp_path):
    s = lucid.tensor(3.5)
    n = nn.Linear(2, 2)
    opt = lucid.optim.Adam(n.parameters())
    n(lucid.ones(1, 2)).sum().backward()
    opt.step()
    lucid.save({"s": s, "i": lucid.tensor(7), "opt": opt.state_dict()}, tmp_path / "z.lucid")
    got = lucid.load(tmp_path / "z.lucid")
    assert got["s"].shape == () and got["s"].item() == 3.5
    assert got["i"].shape == () and got["i"].dtype == lucid.int64 and got["i"].item() == 7
    step = got["opt"]["state"][0]["step"]
    assert step.shape == () and step.item() == 1
    lucid.save_file({"s": s, "v": lucid.ones(1)}, tmp_path / "z.st")
    plain = lucid.load_file(tmp_path / "z.st")
    assert plain["s"].shape == () and plain["v"].shape == (1,)


@pytest.mark.parity
def test_zero_dim_through_torch_safetensors(tmp_path):
    st = pytest.importorskip("safetensors.torch")
    torch = pytest.importorskip("torch")
    lucid.save_file({"s": lucid.tensor(2.5), "i": lucid.tensor(3)}, tmp_path / "l.st")
    t = st.load_file(str(tmp_path / "l.st"))
    assert t["s"].shape == torch.Size([]) and t["s"].item() == 2.5
    assert t["i"].shape == torch.Size([]) and t["i"].dtype == torch.int64
    st.save_file({"s": torch.tensor(1.5), "h": torch.tensor([1.0, 2.0], dtype=torch.float16)},
                 str(tmp_path / "t.st"))
    got = lucid.load_file(tmp_path / "t.st")
    assert got["s"].shape == () and got["s"].item() == 1.5
    assert got["h"].dtype == lucid.float16 and got["h"].tolist() == [1.0, 2.0]


@pytest.mark.parity
def test_bfloat16_loads_as_bfloat16(tmp_path):
    st = pytest.importorskip("safetensors.torch")
    torch = pytest.importorskip("torch")
    w = torch.tensor([[1.0, -2.5], [3.140625, 1e30]], dtype=torch.bfloat16)
    st.save_file({"w": w, "b": torch.ones(2)}, str(tmp_path / "bf.st"))
    got = lucid.load_file(tmp_path / "bf.st")
    assert got["w"].dtype == lucid.bfloat16
    assert got["w"].tolist() == w.float().tolist()
    assert got["b"].tolist() == [1.0, 1.0]
    assert lucid.load(tmp_path / "bf.st")["w"].tolist() == w.float().tolist()


@pytest.mark.parity
def test_lucid_checkpoint_with_checksums_is_readable_by_torch_safetensors(tmp_path):
    st = pytest.importorskip("safetensors")
    pytest.importorskip("torch")  # framework="pt" reads into torch tensors
    lucid.save({"model": _model().state_dict(), "step": lucid.tensor(4)}, tmp_path / "c.lucid")
    with st.safe_open(str(tmp_path / "c.lucid"), framework="pt") as f:
        meta = f.metadata()
        assert {"structure", "lucid_crc32", "lucid_header_crc32"} <= set(meta)
        shapes = sorted(tuple(f.get_tensor(k).shape) for k in f.keys())
    assert shapes == [(), (2,), (2, 4), (4,), (4, 3)]


@pytest.mark.skipif(importlib.util.find_spec("mlx") is None, reason="mlx is not installed")
@pytest.mark.filterwarnings("ignore:lucid. no Metal or CUDA device")
def test_gpu_tensors_round_trip_and_map_to_cpu(tmp_path):
    p = nn.Parameter(lucid.tensor([1.0, 2.0], device="gpu"))
    lucid.save({"p": p, "s": lucid.tensor(5, device="gpu"), "again": p}, tmp_path / "g")
    got = lucid.load(tmp_path / "g")
    assert got["p"].device == "gpu" and isinstance(got["p"], nn.Parameter)
    assert got["again"] is got["p"] and got["s"].shape == () and got["s"].item() == 5
    cpu = lucid.load(tmp_path / "g", map_location="cpu")
    assert cpu["p"].device == "cpu" and cpu["p"].tolist() == [1.0, 2.0]


def _nest(depth: int, inner):
    for _ in range(depth):
        inner = [inner]
    return inner


@pytest.mark.parametrize("inner", [1, [], {}])
def test_what_saves_loads_and_deeper_nesting_fails_at_save(tmp_path, inner):
    lucid.save(_nest(99, inner), tmp_path / "d")  # 100 containers with an empty innermost
    got = lucid.load(tmp_path / "d")
    for _ in range(99):
        got = got[0]
    assert got == inner
    with pytest.raises(ValueError, match="nested more than 100 containers"):
        lucid.save(_nest(101, inner), tmp_path / "e")
    cyclic: list = []
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="contains itself"):
        lucid.save(cyclic, tmp_path / "e")
    assert not (tmp_path / "e").exists()


def test_header_over_the_reader_cap_fails_at_save(tmp_path, monkeypatch):
    monkeypatch.setattr("lucid._checkpoint_format.MAX_HEADER", 4096)
    with pytest.raises(ValueError, match="more than the 4096 a reader accepts"):
        lucid.save(list(range(2000)), tmp_path / "big")
    lucid.save(list(range(20)), tmp_path / "small")
    assert lucid.load(tmp_path / "small") == list(range(20))


# ---- devices a file names, and text-mode file objects ---------------------------------------


def _with_device(device: object) -> bytes:
    """A sound checkpoint whose one tensor was saved on ``device`` (checksums restamped)."""
    buf = io.BytesIO()
    lucid.save({"a": lucid.tensor([1.0, 2.0], device="numpy")}, buf)
    raw = buf.getvalue()
    (n,) = struct.unpack("<Q", raw[:8])
    h = json.loads(raw[8:8 + n])
    meta = h["__metadata__"]
    meta["structure"] = meta["structure"].replace('"numpy"', json.dumps(device))
    meta[HEADER_CRC_KEY] = _header_crc(h)
    new = json.dumps(h).encode()
    return struct.pack("<Q", len(new)) + new + raw[8 + n:]


@pytest.mark.parametrize("device", ["xyz", "tpu", ""])
def test_unknown_saved_device_raises_naming_it(tmp_path, device):
    p = tmp_path / "x.lucid"
    p.write_bytes(_with_device(device))
    with pytest.raises(CheckpointError) as info:
        lucid.load(p)
    text = str(info.value)
    assert f"saved on device '{device}'" in text and "map_location" in text
    assert "corrupted" not in text and "obj['a']" in text
    out = lucid.load(p, map_location="cpu")  # the way out the message names
    assert out["a"].device == "cpu" and out["a"].tolist() == [1.0, 2.0]
    assert lucid.load(p, map_location={device: "numpy"})["a"].device == "numpy"


@pytest.mark.parametrize("device", ["cpu", "numpy", "cuda", "gpu:0"])
def test_known_saved_devices_still_load(tmp_path, device):
    p = tmp_path / "x.lucid"
    p.write_bytes(_with_device(device))
    assert lucid.load(p, map_location="cpu")["a"].tolist() == [1.0, 2.0]
    if device in ("cpu", "numpy"):
        assert lucid.load(p)["a"].device == device


def test_map_location_to_an_unknown_device_is_no_checkpoint_error(tmp_path):
    p = tmp_path / "x.lucid"
    lucid.save({"a": lucid.ones(2)}, p)
    for ml in ({"cpu": "xyz"}, lambda saved: "xyz"):
        with pytest.raises(RuntimeError, match="unknown device 'xyz'") as info:
            lucid.load(p, map_location=ml)
        assert not isinstance(info.value, CheckpointError)


def test_text_mode_file_objects_are_refused_clearly(tmp_path):
    p = tmp_path / "x.lucid"
    lucid.save({"a": lucid.ones(2)}, p)
    with open(p) as fh, pytest.raises(TypeError, match=r"text mode.*mode 'rb'"):
        lucid.load(fh)
    with open(p) as fh, pytest.raises(TypeError, match=r"text mode.*mode 'rb'"):
        lucid.load_file(fh)
    with open(tmp_path / "y.lucid", "w") as fh, \
            pytest.raises(TypeError, match=r"text mode.*mode 'wb'"):
        lucid.save({"a": lucid.ones(2)}, fh)

    class TextReader:  # a duck-typed stream that hands out str
        def read(self, n: int = -1) -> str:
            return "abc"

    with pytest.raises(TypeError, match="text mode"):
        lucid.load(TextReader())
    with open(p, "rb") as fh:
        assert lucid.load(fh)["a"].tolist() == [1.0, 1.0]
