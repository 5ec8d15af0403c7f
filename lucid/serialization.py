"""Checkpoints that never execute code when read.

``lucid.save(obj, f)`` writes one safetensors file: an 8-byte little-endian header length,
a JSON header describing every tensor (dtype, shape, byte offsets), then the raw tensor
bytes. The Python structure around the tensors (dicts, lists, tuples, numbers, strings,
``OrderedDict`` with its ``_metadata``) is stored as JSON inside the header's
``__metadata__`` entry. Reading parses JSON and copies bytes: there is no pickle, so a
tampered file can at worst fail to load.

Writes to a path are atomic: the data goes to a temporary file in the same folder, is
flushed and fsynced, then renamed over the target, so a crash mid-save leaves the previous
checkpoint intact.

``save_file``/``load_file`` read and write plain safetensors files (a flat ``{name: tensor}``
mapping), the format PyTorch's ``safetensors`` package uses, so weights move between lucid
and PyTorch.
"""

from __future__ import annotations

import json
import math
import os
import struct
import tempfile
from collections import OrderedDict
from collections.abc import Mapping
from typing import IO, Any

import numpy as np

from . import _dtype
from ._tensor import Tensor, _make
from ._version import __version__
from .backend import get_backend

__all__ = ["save", "load", "save_file", "load_file", "CheckpointError"]

_FORMAT = "lucid"
_MAX_HEADER = 100 * 1024 * 1024

_CODES = {"float64": "F64", "float32": "F32", "float16": "F16", "int64": "I64", "int32": "I32",
          "int16": "I16", "int8": "I8", "uint8": "U8", "bool": "BOOL"}
_FROM_CODE = {v: k for k, v in _CODES.items()}


class CheckpointError(RuntimeError):
    """A file that is not a valid lucid checkpoint / safetensors file (or is damaged)."""


PathOrFile = str | os.PathLike | IO[bytes]


# ---- writing ----------------------------------------------------------------------------------


class _Writer:
    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.ids: dict[int, str] = {}

    def add(self, arr: np.ndarray, key_obj: Any) -> str:
        key = self.ids.get(id(key_obj))
        if key is None:
            key = str(len(self.arrays))
            self.ids[id(key_obj)] = key
            self.arrays[key] = np.ascontiguousarray(arr)
        return key

    def encode(self, obj: Any, path: str) -> Any:
        if isinstance(obj, Tensor):
            arr = np.asarray(obj._be.to_numpy(obj._data))
            key = self.add(arr, obj)
            out: dict[str, Any] = {"__tensor__": key}
            if obj.requires_grad:
                out["requires_grad"] = True
            if obj._be.name != "cpu":
                out["device"] = obj._be.name
            kind = type(obj).__name__
            if kind in ("Parameter", "Buffer"):
                out["kind"] = kind
                if kind == "Buffer" and not getattr(obj, "persistent", True):
                    out["persistent"] = False
            return out
        if isinstance(obj, np.ndarray):
            if obj.dtype not in [d.np for d in _dtype._ALL]:
                raise TypeError(f"cannot save numpy array of dtype {obj.dtype} at {path}")
            return {"__ndarray__": self.add(obj, obj)}
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, (int, np.integer)):
            return int(obj)
        if isinstance(obj, (float, np.floating)):
            v = float(obj)
            return v if math.isfinite(v) else {"__float__": repr(v)}
        if isinstance(obj, np.bool_):
            return bool(obj)
        if isinstance(obj, _dtype.dtype):
            return {"__dtype__": obj.name}
        if isinstance(obj, tuple):
            return {"__tuple__": [self.encode(v, f"{path}[{i}]") for i, v in enumerate(obj)]}
        if isinstance(obj, list):
            return [self.encode(v, f"{path}[{i}]") for i, v in enumerate(obj)]
        if isinstance(obj, Mapping):
            items = [[self.encode(k, f"{path} key"), self.encode(v, f"{path}[{k!r}]")]
                     for k, v in obj.items()]
            out = {"__dict__": items}
            if isinstance(obj, OrderedDict):
                out["ordered"] = True
            meta = getattr(obj, "_metadata", None)
            if meta is not None:
                out["_metadata"] = self.encode(meta, f"{path}._metadata")
            return out
        raise TypeError(
            f"lucid.save cannot store an object of type {type(obj).__name__} (at {path}); "
            "supported: tensors, numpy arrays, dicts, lists, tuples, numbers, strings, None"
        )


def _header_and_body(arrays: dict[str, np.ndarray], metadata: dict[str, str]
                     ) -> tuple[bytes, list[np.ndarray]]:
    header: dict[str, Any] = {"__metadata__": metadata}
    offset = 0
    for key, arr in arrays.items():
        d = _dtype.from_numpy_dtype(arr.dtype)
        n = arr.nbytes
        header[key] = {"dtype": _CODES[d.name], "shape": list(arr.shape),
                       "data_offsets": [offset, offset + n]}
        offset += n
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)  # align the data to 8 bytes, as safetensors does
    return struct.pack("<Q", len(raw)) + raw, list(arrays.values())


def _write(f: PathOrFile, head: bytes, body: list[np.ndarray]) -> None:
    def dump(fh: IO[bytes]) -> None:
        fh.write(head)
        for arr in body:
            fh.write(arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes())

    if hasattr(f, "write"):
        dump(f)  # type: ignore[arg-type]
        return
    path = os.fspath(f)  # type: ignore[arg-type]
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            dump(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # make the rename itself durable
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def save(obj: Any, f: PathOrFile) -> None:
    """Save tensors, state_dicts, optimizer state and nested containers of them to ``f``.

    Example::

        lucid.save({"model": model.state_dict(), "epoch": 3}, "ckpt.lucid")
        ckpt = lucid.load("ckpt.lucid")
    """
    w = _Writer()
    structure = w.encode(obj, "obj")
    meta = {"format": _FORMAT, "lucid_version": __version__,
            "structure": json.dumps(structure, separators=(",", ":"), allow_nan=False)}
    head, body = _header_and_body(w.arrays, meta)
    _write(f, head, body)


def save_file(tensors: Mapping[str, Tensor], filename: PathOrFile,
              metadata: Mapping[str, str] | None = None) -> None:
    """Write a plain safetensors file from ``{name: tensor}`` (readable by PyTorch's
    ``safetensors.torch.load_file``)."""
    if not isinstance(tensors, Mapping):
        raise TypeError(f"save_file expects a mapping of names to tensors, got "
                        f"{type(tensors).__name__}")
    arrays: dict[str, np.ndarray] = {}
    for k, t in tensors.items():
        if not isinstance(k, str) or k == "__metadata__":
            raise TypeError(f"tensor names must be strings other than '__metadata__', got {k!r}")
        if not isinstance(t, Tensor):
            raise TypeError(f"value for {k!r} is a {type(t).__name__}, not a Tensor")
        arrays[k] = np.ascontiguousarray(t._be.to_numpy(t._data))
    meta = {str(k): str(v) for k, v in (metadata or {}).items()}
    head, body = _header_and_body(arrays, meta)
    _write(filename, head, body)


# ---- reading ----------------------------------------------------------------------------------


def _read_bytes(f: PathOrFile) -> tuple[bytes, str]:
    if hasattr(f, "read"):
        return f.read(), getattr(f, "name", "<file object>")  # type: ignore[union-attr]
    path = os.fspath(f)  # type: ignore[arg-type]
    with open(path, "rb") as fh:
        return fh.read(), path


def _sniff(data: bytes, name: str) -> None:
    if data[:2] == b"PK":
        raise CheckpointError(
            f"{name} is a zip archive (PyTorch's torch.save format), not a lucid checkpoint; "
            "lucid never unpickles files. Convert it with PyTorch's safetensors.torch.save_file "
            "and read it with lucid.load_file."
        )
    if data[:1] == b"\x80" or data[:2] in (b"(d", b"(l", b"}q", b"]q", b"cc"):
        raise CheckpointError(
            f"{name} looks like a pickle, not a lucid checkpoint; lucid never unpickles files"
        )


def _parse(data: bytes, name: str) -> tuple[dict[str, Any], memoryview]:
    if len(data) < 8:
        _sniff(data, name)
        raise CheckpointError(f"{name} is not a lucid checkpoint: file too short "
                              f"({len(data)} bytes)")
    (n,) = struct.unpack("<Q", data[:8])
    if n == 0 or n > _MAX_HEADER or data[8:9] != b"{":
        _sniff(data, name)
        raise CheckpointError(f"{name} is not a lucid checkpoint: invalid header")
    if 8 + n > len(data):
        raise CheckpointError(f"{name} is truncated: header needs {n} bytes, file has "
                              f"{len(data) - 8}")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{name} is not a lucid checkpoint: corrupted header ({e})") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"{name} is not a lucid checkpoint: header is not a JSON object")
    body = memoryview(data)[8 + n:]
    end = 0
    spans = []
    for key, info in header.items():
        if key == "__metadata__":
            if not isinstance(info, dict) or not all(isinstance(v, str) for v in info.values()):
                raise CheckpointError(f"{name}: __metadata__ must map strings to strings")
            continue
        try:
            code, shape, (lo, hi) = info["dtype"], info["shape"], info["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise CheckpointError(f"{name}: malformed entry for tensor {key!r}") from None
        if code not in _FROM_CODE:
            raise CheckpointError(f"{name}: tensor {key!r} has unsupported dtype {code!r}")
        if not isinstance(shape, list) or not all(
                isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
            raise CheckpointError(f"{name}: tensor {key!r} has an invalid shape {shape!r}")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (lo, hi)) \
                or not 0 <= lo <= hi:
            raise CheckpointError(f"{name}: tensor {key!r} has invalid data offsets")
        itemsize = np.dtype(getattr(_dtype, _FROM_CODE[code] if _FROM_CODE[code] != "bool"
                                    else "bool_").np).itemsize
        if hi - lo != math.prod(shape) * itemsize:
            raise CheckpointError(
                f"{name}: tensor {key!r} of shape {shape} needs {math.prod(shape) * itemsize} "
                f"bytes but its offsets span {hi - lo}"
            )
        if hi > len(body):
            raise CheckpointError(f"{name} is truncated: tensor {key!r} ends at byte {hi} of a "
                                  f"{len(body)}-byte data section")
        spans.append((lo, hi, key))
        end = max(end, hi)
    spans.sort()
    for (_, hi1, k1), (lo2, _, k2) in zip(spans, spans[1:]):
        if lo2 < hi1:
            raise CheckpointError(f"{name}: tensors {k1!r} and {k2!r} overlap")
    return header, body


def _array(header: dict[str, Any], body: memoryview, key: str) -> np.ndarray:
    info = header[key]
    d = _FROM_CODE[info["dtype"]]
    npd = np.dtype(getattr(_dtype, d if d != "bool" else "bool_").np).newbyteorder("<")
    lo, hi = info["data_offsets"]
    arr = np.frombuffer(body[lo:hi], dtype=npd).reshape(info["shape"])
    return arr.astype(npd.newbyteorder("="), copy=True)


def _target(map_location: Any, saved_device: str) -> Any:
    if map_location is None:
        dev = saved_device
    elif isinstance(map_location, Mapping):
        dev = map_location.get(saved_device, saved_device)
    elif callable(map_location):
        dev = map_location(saved_device)
    else:
        dev = map_location
    try:
        return get_backend(dev)
    except Exception:
        if map_location is None:  # e.g. saved on "gpu", loading where mlx is missing
            return get_backend("cpu")
        raise


class _Reader:
    def __init__(self, header: dict[str, Any], body: memoryview, name: str, map_location: Any
                 ) -> None:
        self.header, self.body, self.name, self.map = header, body, name, map_location
        self.cache: dict[str, Any] = {}

    def bad(self, what: str) -> CheckpointError:
        return CheckpointError(f"{self.name}: corrupted structure ({what})")

    def decode(self, node: Any) -> Any:
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.decode(v) for v in node]
        if not isinstance(node, dict):
            raise self.bad(f"unexpected {type(node).__name__}")
        if "__tensor__" in node:
            return self.tensor(node)
        if "__ndarray__" in node:
            return self.array(node["__ndarray__"]).copy()
        if "__tuple__" in node:
            return tuple(self.decode(v) for v in self.list_of(node["__tuple__"]))
        if "__float__" in node:
            if node["__float__"] not in ("nan", "inf", "-inf"):
                raise self.bad("bad float")
            return float(node["__float__"])
        if "__dtype__" in node:
            return _dtype.to_dtype(node["__dtype__"])
        if "__dict__" in node:
            out: dict = OrderedDict() if node.get("ordered") else {}
            for item in self.list_of(node["__dict__"]):
                if not isinstance(item, list) or len(item) != 2:
                    raise self.bad("bad dict item")
                k = self.decode(item[0])
                try:
                    hash(k)
                except TypeError:
                    raise self.bad("unhashable dict key") from None
                out[k] = self.decode(item[1])
            if "_metadata" in node:
                out._metadata = self.decode(node["_metadata"])  # type: ignore[attr-defined]
            return out
        raise self.bad(f"unknown node with keys {sorted(node)[:4]}")

    def list_of(self, v: Any) -> list:
        if not isinstance(v, list):
            raise self.bad("expected a list")
        return v

    def array(self, key: Any) -> np.ndarray:
        if not isinstance(key, str) or key not in self.header or key == "__metadata__":
            raise self.bad(f"reference to missing tensor {key!r}")
        return _array(self.header, self.body, key)

    def tensor(self, node: dict) -> Tensor:
        key = node["__tensor__"]
        t = self.cache.get(key)
        if t is not None:
            return t
        arr = self.array(key)
        be = _target(self.map, str(node.get("device", "cpu")))
        kind = node.get("kind")
        rg = bool(node.get("requires_grad", False))
        if kind in ("Parameter", "Buffer"):
            from . import nn

            data = _make(be.from_numpy(arr), be, False, None)
            t = nn.Parameter(data, requires_grad=rg) if kind == "Parameter" else \
                nn.Buffer(data, persistent=bool(node.get("persistent", True)))
        else:
            t = _make(be.from_numpy(arr), be, False, None)
            if rg:
                t.requires_grad_(True)
        self.cache[key] = t
        return t


def load(f: PathOrFile, map_location: Any = None, *, weights_only: bool = True) -> Any:
    """Load what ``lucid.save`` wrote (or a plain safetensors file, as a dict of tensors).

    ``map_location`` may be a device ("cpu", "gpu"), a mapping such as ``{"gpu": "cpu"}`` or
    a function of the saved device name. Tensors saved on "gpu" load on "cpu" where MLX is
    not installed. A file that is not a checkpoint, is truncated or is corrupted raises
    ``CheckpointError`` and nothing is executed.
    """
    data, name = _read_bytes(f)
    header, body = _parse(data, name)
    meta = header.get("__metadata__") or {}
    if meta.get("format") != _FORMAT:
        return _plain(header, body, map_location)
    try:
        structure = json.loads(meta["structure"])
    except (KeyError, json.JSONDecodeError):
        raise CheckpointError(f"{name}: corrupted structure") from None
    return _Reader(header, body, name, map_location).decode(structure)


def _plain(header: dict[str, Any], body: memoryview, map_location: Any) -> dict[str, Tensor]:
    be = _target(map_location, "cpu")
    return {k: _make(be.from_numpy(_array(header, body, k)), be, False, None)
            for k in header if k != "__metadata__"}


def load_file(filename: PathOrFile, device: Any = "cpu") -> dict[str, Tensor]:
    """Read a plain safetensors file into ``{name: tensor}`` (e.g. one written by PyTorch's
    ``safetensors.torch.save_file``)."""
    data, name = _read_bytes(filename)
    header, body = _parse(data, name)
    return _plain(header, body, device)
