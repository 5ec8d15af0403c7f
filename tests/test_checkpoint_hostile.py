"""Hostile and damaged checkpoint files: bounded memory, one error type, detected damage."""

from __future__ import annotations

import io
import json
import os
import random
import struct
import subprocess
import sys
import textwrap
import zlib

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.optim as optim
from lucid._checkpoint_format import HEADER_CRC_KEY, _header_crc, build_header, little_endian
from lucid._checkpoint_write import _HOST
from lucid.serialization import CheckpointError


def _file(tensors: dict, structure=None, *, stamp: bool = True, raw_header=None,
          tail: bytes = b"") -> bytes:
    """A checkpoint assembled by hand: ``structure`` (JSON-able) around ``tensors``."""
    arrays = {k: little_endian(np.asarray(v)) for k, v in tensors.items()}
    meta = {}
    if structure is not None:
        meta = {"format": "lucid", "lucid_version": "0",
                "structure": structure if isinstance(structure, str) else json.dumps(structure)}
    head = build_header(arrays, meta)
    if raw_header is not None:
        head = struct.pack("<Q", len(raw_header)) + raw_header
    elif not stamp:
        (n,) = struct.unpack("<Q", head[:8])
        h = json.loads(head[8:8 + n])
        del h["__metadata__"][HEADER_CRC_KEY]
        raw = json.dumps(h).encode()
        head = struct.pack("<Q", len(raw)) + raw
    return head + b"".join(a.tobytes() for a in arrays.values()) + tail


def _edit_header(raw: bytes, edit, restamp: bool = True) -> bytes:
    (n,) = struct.unpack("<Q", raw[:8])
    h = json.loads(raw[8:8 + n])
    edit(h)
    if restamp:
        h["__metadata__"][HEADER_CRC_KEY] = _header_crc(h)
    new = json.dumps(h).encode()
    return struct.pack("<Q", len(new)) + new + raw[8 + n:]


def _load_bytes(tmp_path, data: bytes, **kw):
    p = tmp_path / "x.lucid"
    p.write_bytes(data)
    return lucid.load(p, **kw)


# ---- memory bomb ------------------------------------------------------------------------------

_BOMB_CHILD = textwrap.dedent("""
    import resource, sys, tracemalloc
    import lucid
    path, size = sys.argv[1], int(sys.argv[2])
    vm = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
    # the address space may grow by 1 GiB at most; the unfixed loader asked for 100 GB
    resource.setrlimit(resource.RLIMIT_AS, (vm + (1 << 30), resource.RLIM_INFINITY))
    tracemalloc.start()
    out = lucid.load(path)
    peak = tracemalloc.get_traced_memory()[1]
    shared = all(x is out[0] for x in out)
    print(len(out), shared, peak)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc and RLIMIT_AS")
@pytest.mark.parametrize("kind", ["__tensor__", "__ndarray__"])
def test_repeated_references_are_materialised_once(tmp_path, kind):
    refs = 100_000
    data = _file({"0": np.ones(262_144, np.float32)}, [{kind: "0"}] * refs)  # 1 MB tensor
    p = tmp_path / "bomb.lucid"
    p.write_bytes(data)
    r = subprocess.run([sys.executable, "-c", _BOMB_CHILD, str(p), str(len(data))],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    n, shared, peak = r.stdout.split()
    assert int(n) == refs and shared == "True"
    assert int(peak) < 8 * len(data) + (8 << 20), (int(peak), len(data))


def test_references_share_one_tensor(tmp_path):
    got = _load_bytes(tmp_path, _file({"0": np.arange(3.0, dtype=np.float32)},
                                      {"__tuple__": [{"__tensor__": "0"}, {"__tensor__": "0"},
                                                     {"__ndarray__": "0"}]}))
    a, b, c = got
    assert a is b and a.tolist() == [0.0, 1.0, 2.0]
    assert isinstance(c, np.ndarray) and np.shares_memory(c, a.numpy())


# ---- every rejection is a CheckpointError naming the problem ---------------------------------

def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("structure,match", [
    (_deep(100_000), "nested too deeply"),
    (_deep(300), "nested more than 100"),
    ("[" + "1" * 5000 + "]", "corrupted structure"),
    ({"__dtype__": ["float32"]}, "unknown dtype"),
    ({"__dtype__": "complex32"}, "unknown dtype"),
    ({"__dict__": [["k", 1]], "_metadata": {"__dict__": []}}, "_metadata on a plain dict"),
    ({"__dict__": [[[1, 2], 3]]}, "unhashable dict key"),
    ({"__dict__": [["a", {"__tensor__": "0", "requires_grad": True}]]},
     r"at obj\['a'\]: RuntimeError: .*floating point"),
    ({"__dict__": [["a", {"__tensor__": "0", "device": 3}]]}, "malformed tensor reference"),
    ({"__dict__": [["a", {"__tensor__": "0", "oops": 1}]]}, "unexpected field"),
    ({"__dict__": [["a", {"__tensor__": ["0"]}]]}, "missing tensor"),
    ({"__dict__": "nope"}, "expected a list"),
    ({"__dict__": [[1]]}, "not a \\[key, value\\] pair"),
    ({"__dict__": [], "ordered": "yes"}, "'ordered' must be"),
    ({"__float__": "1e400"}, "bad float"),
    ({"__set__": [1]}, "unknown node"),
])
def test_bad_structures(tmp_path, structure, match):
    data = _file({"0": np.arange(3, dtype=np.int64)}, structure)
    with pytest.raises(CheckpointError, match=match):
        _load_bytes(tmp_path, data)


@pytest.mark.parametrize("entry,match", [
    ({"dtype": ["F32"], "shape": [1], "data_offsets": [0, 4]}, "unsupported dtype"),
    ({"dtype": {"a": 1}, "shape": [1], "data_offsets": [0, 4]}, "unsupported dtype"),
    ({"dtype": "U16", "shape": [2], "data_offsets": [0, 4]}, "unsupported dtype"),
    ({"dtype": "F32", "shape": [1] * 100, "data_offsets": [0, 4]}, "100 dimensions"),
    ({"dtype": "F32", "shape": [10**30], "data_offsets": [0, 4]}, "too many elements"),
    ({"dtype": "F32", "shape": [0, 10**18, 10**18], "data_offsets": [0, 0]},
     "too many elements"),
    ({"dtype": "F64", "shape": [0, 2**60], "data_offsets": [0, 0]}, "too many elements"),
    ({"dtype": "F32", "shape": [1.0], "data_offsets": [0, 4]}, "invalid shape"),
    ({"dtype": "F32", "shape": [True], "data_offsets": [0, 4]}, "invalid shape"),
    ({"dtype": "F32", "shape": "1", "data_offsets": [0, 4]}, "invalid shape"),
    ({"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 8]}, "invalid data offsets"),
    ({"dtype": "F32", "shape": [1], "data_offsets": {"0": 4}}, "invalid data offsets"),
    ({"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}, "needs 8 bytes"),
    ({"dtype": "F32", "shape": [1], "data_offsets": [0, 4], "x": 1}, "malformed entry"),
    ({"dtype": "F32", "shape": [1]}, "malformed entry"),
    ([1, 2], "malformed entry"),
])
def test_bad_header_entries(tmp_path, entry, match):
    raw = json.dumps({"w": entry}).encode()
    with pytest.raises(CheckpointError, match=match):
        _load_bytes(tmp_path, struct.pack("<Q", len(raw)) + raw + b"\0" * 4)


def test_huge_integer_and_deep_nesting_in_header(tmp_path):
    raw = b'{"w": {"dtype": "F32", "shape": [' + b"9" * 5000 + b'], "data_offsets": [0, 4]}}'
    with pytest.raises(CheckpointError, match="corrupted header"):
        _load_bytes(tmp_path, struct.pack("<Q", len(raw)) + raw)
    raw = b'{"w": ' + _deep(100_000).encode() + b"}"
    with pytest.raises(CheckpointError, match="nested too deeply"):
        _load_bytes(tmp_path, struct.pack("<Q", len(raw)) + raw)
    raw = b'{"__metadata__": {"a": 1}}'
    with pytest.raises(CheckpointError, match="strings to strings"):
        _load_bytes(tmp_path, struct.pack("<Q", len(raw)) + raw)


def _two(lo2: int, hi2: int, total: int) -> bytes:
    h = {"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
         "b": {"dtype": "F32", "shape": [(hi2 - lo2) // 4], "data_offsets": [lo2, hi2]}}
    raw = json.dumps(h).encode()
    return struct.pack("<Q", len(raw)) + raw + b"\0" * total


@pytest.mark.parametrize("data,match", [
    (_two(2, 6, 6), "overlaps"),
    (_two(8, 12, 12), r"data bytes 4\.\.8 before tensor 'b'"),
    (_two(4, 8, 9), "1 bytes after the last tensor"),
    (_two(4, 8, 7), "truncated"),
])
def test_offsets_must_cover_the_data_exactly(tmp_path, data, match):
    with pytest.raises(CheckpointError, match=match):
        _load_bytes(tmp_path, data)


def test_empty_header_followed_by_junk_is_refused(tmp_path):
    junk = b"{}" + b" " * 6 + os.urandom(1000)
    data = struct.pack("<Q", 8) + junk
    with pytest.raises(CheckpointError, match="1000 bytes after the last tensor"):
        _load_bytes(tmp_path, data)
    with pytest.raises(CheckpointError, match="after the last tensor"):
        lucid.load_file(io.BytesIO(data))
    assert _load_bytes(tmp_path, data[:16]) == {}  # the same header without junk is fine


class _Stream(io.RawIOBase):
    """A non-seekable stream (a pipe or socket), so the size is unknown up front."""

    def __init__(self, data: bytes) -> None:
        self.buf = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        return self.buf.readinto(b)


def test_non_seekable_stream_trailing_bytes_and_truncation():
    good = _file({"0": np.arange(4, dtype=np.float32)}, {"__tensor__": "0"})
    assert lucid.load(_Stream(good)).tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(CheckpointError, match="after the last tensor"):
        lucid.load(_Stream(good + b"x"))
    with pytest.raises(CheckpointError, match="truncated"):
        lucid.load(_Stream(good[:-1]))


def test_directory_device_and_fifo_are_refused(tmp_path):
    with pytest.raises(CheckpointError, match="is a directory"):
        lucid.load(tmp_path)
    if os.path.exists("/dev/zero"):
        with pytest.raises(CheckpointError, match="not a regular file"):
            lucid.load("/dev/zero")
        with pytest.raises(CheckpointError, match="not a regular file"):
            lucid.load_file("/dev/zero")
        with open("/dev/zero", "rb") as fh:  # an open stream of zeros: 8 bytes are read
            with pytest.raises(CheckpointError, match="invalid header"):
                lucid.load(fh)
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        with pytest.raises(CheckpointError, match="not a regular file"):
            lucid.load(fifo)


def test_header_longer_than_file(tmp_path):
    data = struct.pack("<Q", 5000) + b'{"a": 1}'
    with pytest.raises(CheckpointError, match="truncated: header needs 5000 bytes"):
        _load_bytes(tmp_path, data)
    with pytest.raises(CheckpointError, match="invalid header"):
        _load_bytes(tmp_path, struct.pack("<Q", 1 << 40) + b"{}")


# ---- integrity ---------------------------------------------------------------------------------

def _trained() -> tuple[nn.Module, optim.Optimizer]:
    lucid.manual_seed(0)
    net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    opt = optim.Adam(net.parameters(), lr=0.01)
    net(lucid.randn(5, 8)).sum().backward()
    opt.step()
    return net, opt


def _equal(a, b) -> bool:
    if isinstance(a, lucid.Tensor):
        return isinstance(b, lucid.Tensor) and a.shape == b.shape and a.dtype == b.dtype and \
            np.array_equal(a.detach().numpy(), b.detach().numpy())
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_equal, a, b))
    return a == b


def test_every_data_byte_flip_is_detected(tmp_path):
    net, opt = _trained()
    obj = {"model": net.state_dict(), "optim": opt.state_dict()}
    p = tmp_path / "ck.lucid"
    lucid.save(obj, p)
    raw = p.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    rng = random.Random(0)
    for pos in rng.sample(range(8 + n, len(raw)), 200):
        bad = bytearray(raw)
        bad[pos] ^= 1 << rng.randrange(8)
        with pytest.raises(CheckpointError, match="fails its checksum"):
            _load_bytes(tmp_path, bytes(bad))
    altered = _load_bytes(tmp_path, bytes(bad), verify=False)  # the opt-out loads anyway
    assert not _equal(altered, obj)


def test_header_byte_flips_never_load_altered_values(tmp_path):
    net, opt = _trained()
    obj = {"model": net.state_dict(), "optim": opt.state_dict()}
    p = tmp_path / "ck.lucid"
    lucid.save(obj, p)
    raw = p.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    rng = random.Random(1)
    for pos in rng.sample(range(8 + n), 200):
        bad = bytearray(raw)
        bad[pos] ^= 1 << rng.randrange(8)
        try:
            got = _load_bytes(tmp_path, bytes(bad))
        except CheckpointError:
            continue
        assert _equal(got, obj), pos


def test_renamed_optimizer_state_key_fails_at_load(tmp_path):
    net, opt = _trained()
    p = tmp_path / "ck.lucid"
    lucid.save({"optim": opt.state_dict()}, p)
    raw = p.read_bytes()
    assert raw.count(b"exp_avg_sq") == 4  # two Linear layers: weight and bias each
    edited = raw.replace(b"exp_avg_sq", b"exp_avg_sx")  # same length: offsets stay valid
    with pytest.raises(CheckpointError, match="header fails its checksum"):
        _load_bytes(tmp_path, edited)
    edited = raw.replace(b'\\"lr\\",0.01', b'\\"lr\\",9.99')
    assert edited != raw
    with pytest.raises(CheckpointError, match="header fails its checksum"):
        _load_bytes(tmp_path, edited)
    loaded = _load_bytes(tmp_path, raw)["optim"]
    opt.load_state_dict(loaded)
    opt.step()


def test_checksums_are_string_metadata_and_files_without_them_load(tmp_path):
    p = tmp_path / "w.st"
    lucid.save_file({"w": lucid.arange(4.0)}, p, metadata={"note": "x"})
    raw = p.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    meta = json.loads(raw[8:8 + n])["__metadata__"]
    assert meta["note"] == "x" and all(isinstance(v, str) for v in meta.values())
    assert json.loads(meta["lucid_crc32"]) == {"w": f"{zlib.crc32(raw[8 + n:]):08x}"}
    plain = _file({"w": np.arange(4, dtype=np.float32)}, None, stamp=False)
    bad = bytearray(plain)
    bad[-1] ^= 0xFF  # no checksum to check: loads (as files from safetensors.torch do)
    p.write_bytes(bytes(bad))
    assert lucid.load_file(p)["w"].shape == (4,)


# ---- stale temporaries ------------------------------------------------------------------------

def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_temporaries_of_the_target_are_removed(tmp_path):
    target = tmp_path / "ck.lucid"
    dead = tmp_path / f".ck.lucid.lucid-save-{_dead_pid()}-{_HOST}-0badf00d.tmp"
    live = tmp_path / f".ck.lucid.lucid-save-{os.getppid()}-{_HOST}-00000001.tmp"
    old = tmp_path / f".ck.lucid.lucid-save-{os.getppid()}-{_HOST}-00000002.tmp"
    other = tmp_path / f".other.lucid.lucid-save-{_dead_pid()}-{_HOST}-00000003.tmp"
    for f in (dead, live, old, other):
        f.write_bytes(b"x" * 100)
    os.utime(old, (1, 1))
    lucid.save({"a": lucid.ones(2)}, target)
    left = sorted(f.name for f in tmp_path.iterdir())
    assert left == sorted(["ck.lucid", live.name, other.name])
    assert lucid.load(target)["a"].tolist() == [1.0, 1.0]


_KILLED_CHILD = textwrap.dedent("""
    import os, sys, time
    import lucid
    def hang(fd):
        print("writing", flush=True)
        time.sleep(600)
    os.fsync = hang
    lucid.save({"w": lucid.zeros(4_000_000)}, sys.argv[1])
""")


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_save_killed_mid_write_is_cleaned_by_the_next_save(tmp_path):
    target = tmp_path / "ck.lucid"
    lucid.save({"w": lucid.ones(3)}, target)
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_CHILD, str(target)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "writing"
    finally:
        proc.kill()
        proc.wait()
    temps = [f for f in tmp_path.iterdir() if f.name != "ck.lucid"]
    assert len(temps) == 1 and temps[0].name.startswith(f".ck.lucid.lucid-save-{proc.pid}-")
    assert temps[0].stat().st_size > 16_000_000
    assert lucid.load(target)["w"].tolist() == [1.0, 1.0, 1.0]  # the old checkpoint is intact
    lucid.save({"w": lucid.zeros(2)}, target)
    assert [f.name for f in tmp_path.iterdir()] == ["ck.lucid"]


# ---- random damage: CheckpointError or the original values, nothing else ---------------------

_TOKENS = ['{', '}', '[', ']', ',', ':', '"__tensor__"', '"__dict__"', '"__tuple__"',
           '"__ndarray__"', '"__float__"', '"__dtype__"', '"_metadata"', '"ordered"', 'true',
           'null', '1e999', '-1', '"0"', '"99"', '"kind"', '"Buffer"', '"requires_grad"',
           '"device"', '"numpy"', '"persistent"', '0', '""', '"float16"', '1' * 30]


def test_mutated_structures_raise_only_checkpoint_errors():
    net, opt = _trained()
    buf = io.BytesIO()
    lucid.save({"m": net.state_dict(), "o": opt.state_dict(), "t": (1, None, float("nan")),
                "s": lucid.tensor(3), "d": lucid.float16, "a": np.arange(3)}, buf)
    raw = buf.getvalue()
    rng = random.Random(0)

    def mutate(h):
        s = h["__metadata__"]["structure"]
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(s))
            s = s[:i] + rng.choice(_TOKENS) + s[i + rng.randint(0, 6):]
        h["__metadata__"]["structure"] = s

    for _ in range(300):
        data = _edit_header(raw, mutate)  # checksum restamped: the structure itself is tested
        try:
            lucid.load(io.BytesIO(data))
        except CheckpointError:
            pass
