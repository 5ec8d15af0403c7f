"""torch's public surface and how lucid covers it: the names of each namespace training code
uses, and the keywords each of torch's callables takes, against ``torch_surface_exclusions``.

``python tests/torch_surface.py`` prints the counts and every name or keyword lucid lacks
that is neither excluded nor listed as still to build (torch must be installed).
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import importlib
import inspect
import json
import os
import re
import subprocess
import sys
import types
import warnings
from dataclasses import dataclass, field
from typing import Any

import torch as _torch
from torch_surface_exclusions import EXCLUDED, KEYWORDS_EXCLUDED, KEYWORDS_TO_BUILD, TO_BUILD

# (torch namespace, lucid namespace); "Tensor" is the tensor class's methods and properties
NAMESPACES = [
    ("torch", "lucid"), ("torch.Tensor", "lucid.Tensor"), ("torch.nn", "lucid.nn"),
    ("torch.nn.functional", "lucid.nn.functional"), ("torch.nn.init", "lucid.nn.init"),
    ("torch.nn.utils", "lucid.nn.utils"), ("torch.autograd", "lucid.autograd"),
    ("torch.linalg", "lucid.linalg"), ("torch.fft", "lucid.fft"),
    ("torch.special", "lucid.special"), ("torch.optim", "lucid.optim"),
    ("torch.optim.lr_scheduler", "lucid.optim.lr_scheduler"),
    ("torch.utils.data", "lucid.utils.data"), ("torch.distributions", "lucid.distributions"),
    ("torch.amp", "lucid.amp"), ("torch.distributed", "lucid.distributed"),
]

_TYPING = ("typing", "typing_extensions", "collections.abc")


def _resolve(path: str) -> Any:
    mod, _, attr = path.rpartition(".")
    if attr == "Tensor":
        return importlib.import_module(mod).Tensor
    return importlib.import_module(path)


def _is_api(ns: Any, name: str, value: Any) -> bool:
    """Whether ``ns.name`` is part of the namespace's API rather than something its module
    imported for its own use (``math``, ``np``, ``Optional``, another package's module)."""
    if isinstance(value, types.ModuleType):
        # a submodule is API where it lives under the namespace (torch.nn.init in torch.nn)
        return isinstance(ns, types.ModuleType) and value.__name__ == f"{ns.__name__}.{name}"
    mod = getattr(value, "__module__", None) or ""
    if mod.split(".")[0] in _TYPING or name == "TYPE_CHECKING":
        return False
    if isinstance(value, (type, types.FunctionType)) and mod and not mod.startswith("torch"):
        return False  # re-exported from the standard library or numpy (dataclass, timedelta)
    return True


_FRESH_MODULES = """
import importlib, json, sys, types, warnings
warnings.simplefilter("ignore")
out = {}
for path in sys.argv[1:]:
    ns = importlib.import_module(path) if path != "torch.Tensor" else None
    if ns is not None:
        out[path] = sorted(n for n in dir(ns) if not n.startswith("_")
                           and isinstance(getattr(ns, n, None), types.ModuleType))
print(json.dumps(out))
"""


@functools.lru_cache(maxsize=1)
def _fresh_submodules() -> dict[str, list[str]]:
    """The submodules each namespace has right after importing it in a fresh interpreter:
    what a program sees. (Submodules other code imported later also become attributes, so
    the surface would depend on what ran before.)"""
    out = subprocess.run([sys.executable, "-c", _FRESH_MODULES, *(t for t, _ in NAMESPACES)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def public_names(path: str) -> dict[str, Any]:
    """torch's public names at ``path``: every name without a leading underscore (a
    module's ``__all__`` and what it leaves out of it, such as ``torch.lu``), less what
    the module only imported for itself (see ``_is_api``)."""
    ns = _resolve(path)
    if isinstance(ns, type):
        return {n: inspect.getattr_static(ns, n) for n in dir(ns) if not n.startswith("_")}
    names = [n for n in getattr(ns, "__all__", None) or () if not n.startswith("_")]
    names += [n for n in dir(ns) if not n.startswith("_") and n not in names]
    fresh = set(_fresh_submodules().get(path, ()))
    out = {}
    for n in names:
        with warnings.catch_warnings():  # deprecated names warn when read
            warnings.simplefilter("ignore")
            v = getattr(ns, n, None)
        if isinstance(v, types.ModuleType) and n not in fresh:
            continue
        if _is_api(ns, n, v):
            out[n] = v
    return out


def _matches(name: str, patterns: Any) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def excluded_category(qual: str) -> str | None:
    """The exclusion category of ``qual`` ("torch.nn.functional.upsample"), if any."""
    for cat in EXCLUDED:
        if _matches(qual, cat["names"]):
            return cat["category"]
    return None


# ---- keywords -----------------------------------------------------------------------------

_SIG_LINE = r"^\s*(?:\.\.\s*function::\s*)?{name}\((?P<args>.*)\)\s*->"


def _split_args(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [a.strip() for a in out + [cur] if a.strip()]


def _stub_defs() -> dict[str, set[str]]:
    """Keyword names of torch's builtins as its own type stubs write each Python overload
    (``torch/_C/_VariableFunctions.pyi`` for functions, ``TensorBase`` in
    ``torch/_C/__init__.pyi`` for methods, ``_nn.pyi`` for ``torch._C._nn``): the argument
    parser's names, so the most exact source. Keys: "torch.name", "Tensor.name", "nn.name"."""
    out: dict[str, set[str]] = {}
    root = os.path.join(os.path.dirname(_torch.__file__), "_C")

    def add(key: str, fn: ast.FunctionDef, method: bool) -> None:
        a = fn.args
        names = [x.arg for x in a.args[1 if method else 0:]] + [x.arg for x in a.kwonlyargs]
        out.setdefault(key, set()).update(n for n in names if not n.startswith("_"))

    for fname, prefix in (("_VariableFunctions.pyi", "torch"), ("_nn.pyi", "nn")):
        path = os.path.join(root, fname)
        if os.path.exists(path):
            for node in ast.parse(open(path, encoding="utf-8").read()).body:
                if isinstance(node, ast.FunctionDef):
                    add(f"{prefix}.{node.name}", node, False)
    path = os.path.join(root, "__init__.pyi")
    if os.path.exists(path):
        for node in ast.parse(open(path, encoding="utf-8").read()).body:
            if isinstance(node, ast.ClassDef) and node.name == "TensorBase":
                for fn in node.body:
                    if isinstance(fn, ast.FunctionDef):
                        add(f"Tensor.{fn.name}", fn, True)
    return out


_STUBS: dict[str, set[str]] | None = None

# the ATen operator prefix of each namespace's builtins (torch.linalg.det is linalg_det)
_ATEN_PREFIX = {"torch.linalg": "linalg_", "torch.fft": "fft_", "torch.special": "special_"}


def _schema_keywords(name: str, method: bool) -> set[str] | None:
    """The argument names of the ATen operator behind a builtin, as Python's argument parser
    takes them: ``self`` is ``input`` for a function (and bound for a method), the outputs of
    an ``out`` overload are ``out``; overloads without a tensor argument (TorchScript's
    scalar arithmetic) are left out."""
    try:
        schemas = _torch._C._jit_get_schemas_for_operator(f"aten::{name}")
    except RuntimeError:
        return None
    found: set[str] | None = None
    for sc in schemas:
        args = list(sc.arguments)
        if not any(str(a.type) in ("Tensor", "Optional[Tensor]") for a in args):
            continue
        if method and (not args or args[0].name != "self" or str(args[0].type) != "Tensor"):
            continue
        found = found or set()
        for a in args:
            if a.name == "self":
                if not method:
                    found.add("input")
                continue
            if a.kwarg_only and a.alias_info is not None and a.alias_info.is_write:
                if not method:
                    found.add("out")
                continue
            found.add(a.name)
    return found


def torch_keywords(obj: Any, name: str, method: bool, namespace: str = "torch"
                   ) -> set[str] | None:
    """The keywords torch's ``obj`` takes: from its Python signature, else from torch's type
    stubs, else from its ATen operator's schemas, else from the signatures its docstring
    writes out. None when none says. Names with a leading underscore are torch's private
    switches."""
    global _STUBS
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        sig = None
    if sig is not None:
        ps = list(sig.parameters.values())
        if method and ps:
            ps = ps[1:]
        return {p.name for p in ps if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
                and not p.name.startswith("_")}
    if _STUBS is None:
        _STUBS = _stub_defs()
    key = {"torch": "torch", "torch.Tensor": "Tensor", "torch.nn.functional": "nn"}.get(namespace)
    if key is not None and f"{key}.{name}" in _STUBS:
        # (the stubs also spell out deprecated overloads taking ``self`` by keyword, which
        # the argument parser refuses)
        return _STUBS[f"{key}.{name}"] - ({"self"} if key != "Tensor" else set())
    found = _schema_keywords(_ATEN_PREFIX.get(namespace, "") + name, method)
    if found is not None:
        return found
    doc = getattr(obj, "__doc__", None) or ""
    found: set[str] | None = None
    for m in re.finditer(_SIG_LINE.format(name=re.escape(name)), doc, re.M):
        found = found or set()
        for a in _split_args(m.group("args")):
            a = a.split("=")[0].split(":")[0].strip()
            if a and not a.startswith("*") and a.isidentifier():
                found.add(a)
    return found


def lucid_keywords(obj: Any) -> set[str] | None:
    """The keywords lucid's ``obj`` takes; None when it takes any (``**kwargs``) or its
    signature cannot be read."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return None
    return {p.name for p in sig.parameters.values() if p.kind is not p.POSITIONAL_ONLY}


@dataclass
class Report:
    present: dict[str, int] = field(default_factory=dict)
    total: dict[str, int] = field(default_factory=dict)
    excluded: dict[str, list[str]] = field(default_factory=dict)
    to_build: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    built_but_listed: list[str] = field(default_factory=list)
    keywords_checked: int = 0
    keyword_gaps: list[str] = field(default_factory=list)
    keywords_to_build: list[str] = field(default_factory=list)
    keywords_excluded: list[str] = field(default_factory=list)
    keywords_built_but_listed: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)


def _callable_pair(tval: Any, lns: Any, name: str) -> tuple[Any, Any] | None:
    if isinstance(tval, (property, type)) or not callable(tval):
        return None
    lval = inspect.getattr_static(lns, name) if isinstance(lns, type) else getattr(lns, name)
    if isinstance(lval, property) or isinstance(lval, type):
        return None
    if isinstance(lns, type):
        lval = getattr(lns, name)
    return tval, lval


def survey() -> Report:
    r = Report()
    for tpath, lpath in NAMESPACES:
        lns = _resolve(lpath)
        names = public_names(tpath)
        r.total[tpath] = len(names)
        r.present[tpath] = 0
        method = tpath == "torch.Tensor"
        for name, tval in sorted(names.items()):
            qual = f"{tpath}.{name}"
            r.names.append(qual)
            have = hasattr(lns, name)
            cat = excluded_category(qual)
            if have:
                r.present[tpath] += 1
                if qual in TO_BUILD:
                    r.built_but_listed.append(qual)
            elif cat is not None:
                r.excluded.setdefault(cat, []).append(qual)
            elif qual in TO_BUILD:
                r.to_build.append(qual)
            else:
                r.missing.append(qual)
            if not have or cat is not None:
                continue
            pair = _callable_pair(tval if not method else getattr(_resolve(tpath), name),
                                  lns, name)
            if pair is None:
                continue
            want = torch_keywords(pair[0], name, method, tpath)
            got = lucid_keywords(pair[1])
            if want is None or got is None:
                continue
            r.keywords_checked += 1
            r.keywords += [f"{qual}({kw}=)" for kw in sorted(want)]
            listed = KEYWORDS_TO_BUILD.get(qual, ())
            for kw in sorted(want - got):
                key = f"{qual}({kw}=)"
                if any(_matches(key, c["keywords"]) for c in KEYWORDS_EXCLUDED):
                    r.keywords_excluded.append(key)
                elif kw in listed:
                    r.keywords_to_build.append(key)
                else:
                    r.keyword_gaps.append(key)
            r.keywords_built_but_listed += [f"{qual}({kw}=)" for kw in listed if kw in got]
    return r


def main() -> None:
    r = survey()
    for ns, n in r.total.items():
        print(f"{ns:28s} {r.present[ns]:4d} of {n:4d} present")
    print("excluded:", {k: len(v) for k, v in r.excluded.items()})
    print(f"still to build: {len(r.to_build)} names, {len(r.keywords_to_build)} keywords")
    print(f"keywords: {r.keywords_checked} callables checked, "
          f"{len(r.keywords_excluded)} gaps excluded")
    for title, items in (("missing", r.missing), ("keyword gaps", r.keyword_gaps),
                         ("built but still listed", r.built_but_listed
                          + r.keywords_built_but_listed)):
        if items:
            print(f"\n{title} ({len(items)}):")
            print("  " + "\n  ".join(items))
    if "-v" in sys.argv:
        print("\nto build:\n  " + "\n  ".join(r.to_build + r.keywords_to_build))


if __name__ == "__main__":
    main()
