"""Checkpoints that never execute code when read (unless asked to: ``weights_only=False``).

``lucid.save(obj, f)`` writes one safetensors file: an 8-byte little-endian header length,
a JSON header describing every tensor (dtype, shape, byte offsets), then the raw tensor
bytes. The Python structure around the tensors (dicts, lists, tuples, numbers, strings,
``OrderedDict`` with its ``_metadata``) is stored as JSON inside the header's
``__metadata__`` entry. Reading parses JSON and copies bytes: with ``weights_only=True``
(the default) nothing is unpickled except allowlisted globals, so a tampered file can at
worst fail to load, with ``CheckpointError``.

Objects that are none of these (a whole module, a custom class) are pickled inside the
structure with their tensors kept out of the pickle; ``load`` reads them only with
``weights_only=False`` or from allowlisted globals (see ``load``).

Loading allocates no more than the file justifies: the header is read with bounded reads and
validated in full (types, dtype codes, shapes, offsets that cover the data exactly) before any
tensor is read, each stored tensor is read once, and every reference to it in the structure
shares that one object (as PyTorch shares storages). Each tensor and the header carry a
CRC-32, checked on load unless ``verify=False``.

Writes to a path are atomic: the data goes to ``.<name>.lucid-save-<pid>-...tmp`` in the same
folder, is flushed and fsynced, then renamed over the target, so a crash mid-save leaves the
previous checkpoint intact; the next save to that target removes such leftovers.

``save_file``/``load_file`` read and write plain safetensors files (a flat ``{name: tensor}``
mapping), the format PyTorch's ``safetensors`` package uses, so weights move between lucid
and PyTorch.
"""

from __future__ import annotations

import io
import json
import math
import os
import pickle
from collections import OrderedDict
from collections.abc import Mapping
from typing import IO, Any

import numpy as np

from . import _dtype
from ._checkpoint_format import (
    CheckpointError,
    PathOrFile,
    Source,
    build_header,
    little_endian,
    read_arrays,
    read_header,
    text_mode,
    write_body,
)
from ._checkpoint_pickle import (
    WeightsOnlyError,
    add_safe_globals,
    clear_safe_globals,
    dump_object,
    get_safe_globals,
    load_object,
    safe_globals,
)
from ._checkpoint_write import write_atomic
from ._device import device_name
from ._tensor import Tensor, _make
from ._version import __version__
from .backend import available_backends, get_backend
from .nn.parameter import Buffer, Parameter

__all__ = ["save", "load", "save_file", "load_file", "CheckpointError", "add_safe_globals",
           "safe_globals", "get_safe_globals", "clear_safe_globals"]

_FORMAT = "lucid"
_MAX_DEPTH = 100  # nested containers in a saved object


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
            self.arrays[key] = little_endian(arr)
        return key

    def encode(self, obj: Any, path: str, depth: int = 0) -> Any:
        if isinstance(obj, Tensor):
            key = self.add(np.asarray(obj._be.to_numpy(obj._data)), obj)
            out: dict[str, Any] = {"__tensor__": key}
            if obj.requires_grad:
                out["requires_grad"] = True
            if obj._be.name != "cpu":
                out["device"] = obj._be.name
            if isinstance(obj, Parameter):
                out["kind"] = "Parameter"
            elif isinstance(obj, Buffer):
                out["kind"] = "Buffer"
                if not obj.persistent:
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
        if depth >= _MAX_DEPTH and isinstance(obj, (tuple, list, Mapping)):
            raise ValueError(f"lucid.save: {path[:200]}... is nested more than {_MAX_DEPTH} "
                             "containers deep (or contains itself)")
        d = depth + 1
        if isinstance(obj, tuple):
            return {"__tuple__": [self.encode(v, f"{path}[{i}]", d) for i, v in enumerate(obj)]}
        if isinstance(obj, list):
            return [self.encode(v, f"{path}[{i}]", d) for i, v in enumerate(obj)]
        if isinstance(obj, Mapping):
            items = [[self.encode(k, f"{path} key", d), self.encode(v, f"{path}[{k!r}]", d)]
                     for k, v in obj.items()]
            out = {"__dict__": items}
            if isinstance(obj, OrderedDict):
                out["ordered"] = True
                meta = getattr(obj, "_metadata", None)
                if meta is not None:
                    out["_metadata"] = self.encode(meta, f"{path}._metadata", d)
            return out
        return self.pickled(obj, path)

    def pickled(self, obj: Any, path: str) -> dict[str, str]:
        """Any other object (a whole module, say): pickled, its tensors and arrays stored
        as ordinary checkpoint tensors (lucid/_checkpoint_pickle.py)."""
        def ref(o: Any) -> Any:
            if isinstance(o, (Tensor, np.ndarray)) and (
                    not isinstance(o, np.ndarray) or o.dtype in [d.np for d in _dtype._ALL]):
                return self.encode(o, path)
            return None

        try:
            return {"__pickle__": dump_object(obj, ref)}
        except (pickle.PicklingError, TypeError, AttributeError) as e:
            raise TypeError(f"lucid.save cannot store an object of type "
                            f"{type(obj).__name__} (at {path}): {e}") from None


def _write(f: PathOrFile, head: bytes, arrays: dict[str, np.ndarray]) -> None:
    def dump(fh: IO[bytes]) -> None:
        fh.write(head)
        write_body(fh, arrays)

    if hasattr(f, "write"):
        if isinstance(f, io.TextIOBase):
            raise TypeError(text_mode(str(getattr(f, "name", "<file object>")), "wb"))
        dump(f)  # type: ignore[arg-type]
    else:
        write_atomic(os.fspath(f), dump)  # type: ignore[arg-type]


def save(obj: Any, f: PathOrFile, pickle_module: Any = pickle, pickle_protocol: int = 2
         ) -> None:
    """Save tensors, state_dicts, optimizer state and nested containers of them to ``f`` (a
    path, written atomically, or a binary file object). Other objects (a whole module, as
    ``lucid.save(model, f)``) are pickled, their tensors still stored as tensors; loading
    them needs ``weights_only=False`` or allowlisted classes (see ``load``).

    ``pickle_module`` and ``pickle_protocol`` are torch's and are accepted for its call
    forms; they change nothing: the file is safetensors with a JSON structure, and the few
    objects that must be pickled are written with Python's ``pickle`` at lucid's protocol, so
    that ``load`` reads them the same way whatever module a caller names (the module given is
    never called).

    Each tensor is stored once however often it is referenced, with a CRC-32 of its bytes;
    the header carries a CRC-32 too (see ``load``'s ``verify``). 0-d tensors stay 0-d.
    A path is written through ``.<name>.lucid-save-<pid>-<host>-<random>.tmp`` in the same
    folder and renamed over ``<name>``; leftovers of killed saves to the same target are
    removed by the next save.

    Example::

        lucid.save({"model": model.state_dict(), "epoch": 3}, "ckpt.lucid")
        ckpt = lucid.load("ckpt.lucid")
    """
    w = _Writer()
    structure = w.encode(obj, "obj")
    meta = {"format": _FORMAT, "lucid_version": __version__,
            "structure": json.dumps(structure, separators=(",", ":"), allow_nan=False)}
    _write(f, build_header(w.arrays, meta), w.arrays)


def save_file(tensors: Mapping[str, Tensor], filename: PathOrFile,
              metadata: Mapping[str, str] | None = None) -> None:
    """Write a plain safetensors file from ``{name: tensor}`` (readable by PyTorch's
    ``safetensors.torch.load_file``). ``metadata`` (strings to strings) goes into the
    header's ``__metadata__``, next to the CRC-32 entries ``lucid_crc32`` and
    ``lucid_header_crc32`` that ``load_file`` checks.

    Example::

        lucid.save_file(model.state_dict(), "model.safetensors")
    """
    if not isinstance(tensors, Mapping):
        raise TypeError(f"save_file expects a mapping of names to tensors, got "
                        f"{type(tensors).__name__}")
    arrays: dict[str, np.ndarray] = {}
    for k, t in tensors.items():
        if not isinstance(k, str) or k == "__metadata__":
            raise TypeError(f"tensor names must be strings other than '__metadata__', got {k!r}")
        if not isinstance(t, Tensor):
            raise TypeError(f"value for {k!r} is a {type(t).__name__}, not a Tensor")
        arrays[k] = little_endian(np.asarray(t._be.to_numpy(t._data)))
    meta = {str(k): str(v) for k, v in (metadata or {}).items()}
    _write(filename, build_header(arrays, meta), arrays)


# ---- reading ----------------------------------------------------------------------------------


class _DeviceError(RuntimeError):
    """``map_location`` named a device lucid lacks: the caller's error, not the file's."""


class _Bad(Exception):
    """A problem in the structure, with the path to it collected while unwinding;
    ``corrupt=False`` for a sound file asking for what is not here (an unknown device)."""

    def __init__(self, what: str, corrupt: bool = True) -> None:
        super().__init__(what)
        self.what, self.corrupt = what, corrupt
        self.path: list[str] = []


_TENSOR_FIELDS = frozenset({"__tensor__", "requires_grad", "device", "kind", "persistent"})
_DICT_FIELDS = frozenset({"__dict__", "ordered", "_metadata"})


class _Reader:
    def __init__(self, arrays: dict[str, np.ndarray], map_location: Any,
                 weights_only: bool = True) -> None:
        self.arrays, self.map, self.weights_only = arrays, map_location, weights_only
        self.tensors: dict[str, Tensor] = {}
        self.backends: dict[str, Any] = {}
        self.refs: dict[int, Any] = {}

    def child(self, node: Any, depth: int, seg: str) -> Any:
        try:
            return self.decode(node, depth)
        except _Bad as e:
            e.path.append(seg)
            raise
        except (WeightsOnlyError, _DeviceError):
            raise
        except Exception as e:  # anything else a hostile structure provokes, located
            bad = _Bad(f"{type(e).__name__}: {e}"[:300])
            bad.path.append(seg)
            raise bad from e

    def decode(self, node: Any, depth: int) -> Any:
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if depth >= _MAX_DEPTH:
            raise _Bad(f"nested more than {_MAX_DEPTH} containers deep")
        d = depth + 1
        if isinstance(node, list):
            return [self.child(v, d, f"[{i}]") for i, v in enumerate(node)]
        if not isinstance(node, dict):
            raise _Bad(f"unexpected {type(node).__name__}")
        if "__tensor__" in node or "__ndarray__" in node:
            hit = self.refs.get(id(node))  # nodes live as long as the structure: ids are stable
            if hit is None:
                if "__tensor__" in node:
                    hit = self.tensor(node)
                else:
                    _only(node, {"__ndarray__"})
                    hit = self.array(node["__ndarray__"])
                self.refs[id(node)] = hit
            return hit
        if "__tuple__" in node:
            _only(node, {"__tuple__"})
            return tuple(self.child(v, d, f"[{i}]")
                         for i, v in enumerate(_list(node["__tuple__"])))
        if "__float__" in node:
            _only(node, {"__float__"})
            if node["__float__"] not in ("nan", "inf", "-inf"):
                raise _Bad("bad float")
            return float(node["__float__"])
        if "__dtype__" in node:
            _only(node, {"__dtype__"})
            name = node["__dtype__"]
            if not isinstance(name, str) or name not in _dtype._BY_NAME:
                raise _Bad(f"unknown dtype {name!r}"[:200])
            return _dtype._BY_NAME[name]
        if "__dict__" in node:
            return self.mapping(node, d)
        if "__pickle__" in node:
            _only(node, {"__pickle__"})
            if not isinstance(node["__pickle__"], str):
                raise _Bad("malformed pickled object")
            return load_object(node["__pickle__"], self.pickle_ref, self.weights_only)
        raise _Bad(f"unknown node with keys {sorted(node)[:4]}"[:200])

    def mapping(self, node: dict, d: int) -> dict:
        _only(node, _DICT_FIELDS)
        ordered = node.get("ordered", False)
        if not isinstance(ordered, bool):
            raise _Bad("'ordered' must be true or false")
        out: dict = OrderedDict() if ordered else {}
        for i, item in enumerate(_list(node["__dict__"])):
            if not isinstance(item, list) or len(item) != 2:
                raise _Bad(f"dict item {i} is not a [key, value] pair")
            k = self.child(item[0], d, f" key {i}")
            try:
                hash(k)
            except TypeError:
                raise _Bad(f"unhashable dict key of type {type(k).__name__}") from None
            out[k] = self.child(item[1], d, f"[{k!r}]"[:80])
        if "_metadata" in node:
            if not ordered:
                raise _Bad("_metadata on a plain dict (only OrderedDicts carry it)")
            out._metadata = self.child(node["_metadata"], d, "._metadata")  # type: ignore
        return out

    def pickle_ref(self, node: Any) -> Any:
        """A tensor or array a pickled object refers to (nothing else is accepted)."""
        # NOTE: not through decode's cache, keyed by id(node): these nodes are temporaries
        if isinstance(node, dict) and "__tensor__" in node:
            return self.tensor(node)
        if isinstance(node, dict) and "__ndarray__" in node:
            _only(node, {"__ndarray__"})
            return self.array(node["__ndarray__"])
        raise _Bad("a pickled object refers to something other than a tensor")

    def array(self, key: Any) -> np.ndarray:
        if not isinstance(key, str) or key not in self.arrays:
            raise _Bad(f"reference to missing tensor {key!r}"[:200])
        return self.arrays[key]

    def backend(self, saved: str) -> Any:
        be = self.backends.get(saved)
        if be is None:
            if self.map is None and not _known_device(saved):
                raise _Bad(f"a tensor saved on device {saved!r}, which lucid does not have "
                           f"(devices: {', '.join(sorted(available_backends()))}); pass "
                           "map_location (e.g. map_location='cpu') to load it on another "
                           "device", corrupt=False)
            try:
                be = self.backends[saved] = _target(self.map, saved)
            except Exception as e:  # map_location named a device lucid lacks
                raise _DeviceError(str(e)) from None
        return be

    def tensor(self, node: dict) -> Tensor:
        _only(node, _TENSOR_FIELDS)
        key = node["__tensor__"]
        t = self.tensors.get(key) if isinstance(key, str) else None
        if t is not None:
            return t
        arr = self.array(key)
        dev, kind = node.get("device", "cpu"), node.get("kind")
        rg, persistent = node.get("requires_grad", False), node.get("persistent", True)
        if not isinstance(dev, str) or not isinstance(rg, bool) \
                or not isinstance(persistent, bool) or kind not in (None, "Parameter", "Buffer"):
            raise _Bad("malformed tensor reference")
        be = self.backend(dev)
        t = _make(be.from_numpy(arr), be, False, None)
        if kind == "Parameter":
            t = Parameter(t, requires_grad=rg)
        elif kind == "Buffer":
            t = Buffer(t, persistent=persistent)
        elif rg:
            t.requires_grad_(True)
        self.tensors[key] = t
        return t


class _Interner:
    """``object_hook`` for the structure JSON: repeated tensor references decode to one dict
    object, so 200k references cost 200k pointers, not 200k dicts (and decode once)."""

    def __init__(self) -> None:
        self.seen: dict[tuple, dict] = {}

    def __call__(self, node: dict) -> dict:
        if len(node) <= len(_TENSOR_FIELDS) and ("__tensor__" in node or "__ndarray__" in node):
            try:
                return self.seen.setdefault(tuple(node.items()), node)
            except TypeError:  # an unhashable value: malformed, reported by the decoder
                pass
        return node


def _only(node: dict, allowed: set | frozenset) -> None:
    extra = set(node) - allowed
    if extra:
        raise _Bad(f"unexpected field(s) {sorted(extra)[:4]}"[:200])


def _list(v: Any) -> list:
    if not isinstance(v, list):
        raise _Bad("expected a list")
    return v


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


def _known_device(dev: Any) -> bool:
    """Whether ``dev`` names a device lucid has (whether or not it can load here)."""
    try:
        return isinstance(dev, str) and device_name(dev) in available_backends()
    except (RuntimeError, TypeError, ValueError):
        return False


def _read(f: PathOrFile, verify: bool) -> tuple[dict[str, Any], dict[str, np.ndarray], str]:
    src = Source(f)
    try:
        header, spans = read_header(src)
        arrays = read_arrays(src, header, spans, verify)
    finally:
        src.close()
    return header, arrays, src.name


def load(f: PathOrFile, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool = True, mmap: bool | None = None, verify: bool = True) -> Any:
    """Load what ``lucid.save`` wrote (or a plain safetensors file, as a dict of tensors).

    ``map_location`` may be a device ("cpu", "gpu"), a mapping such as ``{"gpu": "cpu"}`` or
    a function of the saved device name. Tensors saved on "gpu" load on "cpu" where MLX is
    not installed. A tensor referenced several times in the saved object loads once and all
    references share it.

    ``verify`` (default True) checks the CRC-32 of the header and of every tensor, so a
    damaged or edited file raises instead of loading altered weights; ``verify=False``
    skips the check (files without checksums, e.g. from ``safetensors.torch``, load either
    way). A file that is not a checkpoint, is truncated, malformed or corrupted raises
    ``CheckpointError`` naming the problem, and nothing is executed.

    ``weights_only`` (default True, as PyTorch 2.6+): tensors, arrays, containers, numbers
    and strings load without running any code. Objects ``lucid.save`` had to pickle (a whole
    module, a custom class) load only from allowlisted globals
    (``lucid.serialization.add_safe_globals`` / ``safe_globals``); any other global raises
    ``pickle.UnpicklingError`` ("Weights only load failed ...") before it is touched.
    ``weights_only=False`` unpickles them with Python's pickle, which can run arbitrary
    code: use it only for files from a trusted source.

    ``pickle_module`` (torch's keyword): lucid never unpickles with a caller's module. As in
    torch, naming one with ``weights_only=True`` raises ``RuntimeError``; with
    ``weights_only=False`` pickled objects are still read with Python's ``pickle`` (the
    module given is never called). Unlike torch, naming a module does not switch the default
    ``weights_only=True`` off. ``mmap`` (torch's keyword) is a hint lucid accepts: the
    tensors are read into memory (their checksums need every byte read anyway); as in
    torch, ``mmap=True`` needs ``f`` to be a path.

    Example::

        ckpt = lucid.load("ckpt.lucid", map_location="cpu")
        model.load_state_dict(ckpt["model"])
    """
    if pickle_module is not None and weights_only:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    if map_location is not None and not callable(map_location) \
            and not isinstance(map_location, Mapping):
        get_backend(map_location)  # an unknown device fails here, before reading
    header, arrays, name = _read(f, verify)
    meta = header.get("__metadata__") or {}
    if meta.get("format") != _FORMAT:
        return _plain(header, arrays, map_location)
    try:
        structure = json.loads(meta["structure"], object_hook=_Interner())
    except KeyError:
        raise CheckpointError(f"{name}: corrupted structure (no 'structure' entry)") from None
    except RecursionError:
        raise CheckpointError(f"{name}: corrupted structure (nested too deeply)") from None
    except ValueError as e:
        raise CheckpointError(f"{name}: corrupted structure ({e})"[:300]) from None
    try:
        return _Reader(arrays, map_location, weights_only).child(structure, 0, "obj")
    except _DeviceError as e:  # the file is sound; the device is not to be had here
        raise RuntimeError(str(e)) from None
    except _Bad as e:
        where = "".join(reversed(e.path))
        what = "corrupted structure at " if e.corrupt else ""
        raise CheckpointError(f"{name}: {what}{where}: {e.what}") from e.__cause__


def _plain(header: dict[str, Any], arrays: dict[str, np.ndarray], device: Any
           ) -> dict[str, Tensor]:
    be = _target(device, "cpu")
    return {k: _make(be.from_numpy(arrays[k]), be, False, None)
            for k in header if k != "__metadata__"}


def load_file(filename: PathOrFile, device: Any = "cpu", *, verify: bool = True
              ) -> dict[str, Tensor]:
    """Read a plain safetensors file into ``{name: tensor}`` (e.g. one written by PyTorch's
    ``safetensors.torch.save_file``). BF16 tensors load as ``lucid.bfloat16``. ``verify``
    checks lucid's CRC-32 entries where the file has them.

    Example::

        weights = lucid.load_file("model.safetensors")
    """
    header, arrays, _ = _read(filename, verify)
    return _plain(header, arrays, device)
