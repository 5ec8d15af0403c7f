"""The import graph keeps lucid's layers: no cycles, each layer importing only those below it,
and no import written inside a function unless a ``# NOTE:`` says why."""

from __future__ import annotations

import ast
import os
from collections import defaultdict

import pytest

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lucid")

# lowest first; a module may import only from its own layer or the ones before it
LAYERS = [
    ["lucid._version", "lucid._dtype", "lucid._device", "lucid._dims", "lucid._convert",
     "lucid._repr", "lucid._malloc", "lucid._quiet", "lucid._first_run", "lucid._named",
     "lucid._memory_format",
     "lucid._background_compile", "lucid.kernels", "lucid._warmup_pool", "lucid._runtime",
     "lucid._compile_server"],
    ["lucid.backend"],
    ["lucid._tensor"],
    ["lucid.autograd"],
    ["lucid.ops"],
    ["lucid.nn", "lucid.optim", "lucid.data", "lucid.utils", "lucid.serialization",
     "lucid._checkpoint_format", "lucid._checkpoint_write", "lucid._checkpoint_pickle",
     "lucid._cuda_amp",
     "lucid.gpu", "lucid.cuda",
     "lucid.backends", "lucid.datasets", "lucid.linalg", "lucid.fft",
     "lucid.accelerator", "lucid.mps", "lucid.testing", "lucid.profiler",
     "lucid.multiprocessing", "lucid.jit", "lucid.onnx", "lucid.version", "lucid.compiler",
     "lucid.__config__", "lucid.distributions", "lucid.amp", "lucid.sparse", "lucid.func",
     "lucid.distributed", "lucid.special"],
    ["lucid.demo", "lucid"],
]
# inside lucid.ops, the submodules in the order they may import each other
OPS_ORDER = ["_util", "_autocast", "views", "factory_options", "creation", "shape", "device",
             "inplace", "index",
             "elementwise", "select", "reduce", "movement", "matmul", "linalg", "linalg_base",
             "linalg_decomp", "linalg_norm", "linalg_misc", "triangular", "complex", "spectral",
             "random",
             "random_gamma", "random_fill", "sorting", "histogram", "scan", "combine",
             "index_update", "index_scatter", "nonfinite", "legacy", "math_extra", "reduce_extra",
             "layout_extra", "special", "special_bessel", "special_erfcx_zeta",
             "special_polynomials", "linalg_lu", "linalg_eig", "linalg_ldl", "linalg_matrix_exp",
             "linalg_solvers", "linalg_structured", "linalg_legacy", "special_gamma", "strided",
             "activation",
             "normalization", "loss_binary", "loss", "linear_cross_entropy", "conv", "pool",
             "conv3d", "pool3d",
             "dropout", "embedding",
             "interpolate", "pixel", "distance", "loss_margin", "loss_nll", "ctc", "gumbel",
             "lrn", "grid_sample", "embedding_bag", "attention", "attention_mha",
             "activation_inplace", "rrelu", "dropout_alpha", "pool_with_indices", "unpool",
             "pool_lp", "pool_fractional", "rnn", "rnn_functional", "sparse_ops",
             "sparse_products", "sparse_coo", "sparse_api", "sparse_methods", "_graph_backend",
             "_graph", "tensor_methods", "tensor_methods_math"]


def _modules() -> dict[str, str]:
    out = {}
    for dp, _, files in os.walk(ROOT):
        for f in files:
            if f.endswith(".py"):
                p = os.path.join(dp, f)
                rel = os.path.relpath(p, os.path.dirname(ROOT))[:-3].replace(os.sep, ".")
                out[rel.removesuffix(".__init__")] = p
    return out


MODULES = _modules()


def _target(cur: str, node: ast.ImportFrom | ast.Import, is_pkg: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = cur if is_pkg else cur.rsplit(".", 1)[0]
    if node.level:
        parts = base.split(".")
        base = ".".join(parts[:len(parts) - (node.level - 1)])
        mod = base + ("." + node.module if node.module else "")
    else:
        mod = node.module or ""
    return [f"{mod}.{a.name}" if f"{mod}.{a.name}" in MODULES else mod for a in node.names]


def _owner(name: str) -> str:
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _graph() -> tuple[dict[str, set[str]], list[tuple[str, int, str]]]:
    """Module-level imports between lucid modules, and the imports written inside functions
    (module, line, source line)."""
    edges: dict[str, set[str]] = defaultdict(set)
    inner = []
    for mod, path in MODULES.items():
        src = open(path, encoding="utf-8").read()
        lines = src.splitlines()
        tree = ast.parse(src)
        in_func: set[int] = set()
        typing_only: set[int] = set()
        for node in ast.walk(tree):  # ``if TYPE_CHECKING:`` imports are for annotations only
            if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
                in_func.update(id(n) for n in ast.walk(node)
                               if isinstance(n, (ast.Import, ast.ImportFrom)))
                typing_only.update(id(n) for n in ast.walk(node))
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                in_func.update(id(n) for n in ast.walk(fn)
                               if isinstance(n, (ast.Import, ast.ImportFrom)))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if id(node) in typing_only:
                continue
            if id(node) in in_func:
                inner.append((mod, node.lineno, lines[node.lineno - 1]))
                continue
            for t in _target(mod, node, path.endswith("__init__.py")):
                if t.startswith("lucid"):
                    t = _owner(t)
                    if t != mod:
                        edges[mod].add(t)
    return edges, inner


EDGES, INNER = _graph()


def _layer(mod: str) -> int:
    best, rank = -1, -1
    for i, names in enumerate(LAYERS):
        for n in names:
            if (mod == n or mod.startswith(n + ".")) and len(n) > best:
                best, rank = len(n), i
    assert rank >= 0, f"{mod} is in no layer: add it to LAYERS"
    return rank


def test_no_import_cycles():
    seen: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        seen[m] = 1
        stack.append(m)
        for t in sorted(EDGES.get(m, ())):
            if seen.get(t) == 1:
                pytest.fail("import cycle: " + " -> ".join(stack[stack.index(t):] + [t]))
            if t not in seen:
                visit(t)
        stack.pop()
        seen[m] = 2

    for m in sorted(MODULES):
        if m not in seen:
            visit(m)


def test_each_layer_imports_only_layers_below():
    bad = [f"{m} -> {t}" for m, ts in EDGES.items() for t in ts
           if m != "lucid" and _layer(t) > _layer(m)]
    assert not bad, "imports from a higher layer:\n" + "\n".join(sorted(bad))


def test_tensor_and_autograd_import_nothing_from_ops():
    bad = [f"{m} -> {t}" for m, ts in EDGES.items() for t in ts
           if (m == "lucid._tensor" or m.startswith("lucid.autograd"))
           and (t.startswith("lucid.ops") or t.startswith("lucid.nn"))]
    assert not bad, bad


def test_ops_submodules_keep_their_order():
    rank = {f"lucid.ops.{n}": i for i, n in enumerate(OPS_ORDER)}
    missing = [m for m in MODULES if m.startswith("lucid.ops.") and m not in rank]
    assert not missing, f"place these in OPS_ORDER: {missing}"
    bad = [f"{m} -> {t}" for m, ts in EDGES.items() if m in rank for t in ts
           if t in rank and rank[t] > rank[m]]
    assert not bad, "ops importing a later ops module:\n" + "\n".join(sorted(bad))


def test_function_level_imports_say_why():
    """Allowed only with a ``# NOTE:`` on the import, the line above it, or the ``try:``
    that guards an optional dependency."""
    undocumented = []
    for mod, line, text in INNER:
        src = open(MODULES[mod], encoding="utf-8").read().splitlines()
        near = " ".join(src[max(0, line - 5):line])
        if "NOTE" not in near:
            undocumented.append(f"{mod}:{line}: {text.strip()}")
    assert not undocumented, "\n".join(undocumented)
