"""Differential fuzz: seeded random chains of op-table ops, run in lucid and in a reference.

A program is a JSON-able dict drawn from a seed: a dtype (float32, float64, float16 or
bfloat16), a device, and 3-8 steps. Each step is an ``op_db`` entry and one of its samples,
so every op added to the table is fuzzed with no extra work. A step may

- change one size of the sample's tensors (to 0, 1, one less, one or two more; every dim of
  that size in every tensor argument changes together, so broadcasting and matching dims
  stay matched where they were),
- store a float argument transposed or strided (a non-contiguous view),
- link the previous step's output into its first float argument: that argument's leaf gets
  ``0.5 * tanh(carry)`` added, the carry flattened (``view(-1)`` where the reference's carry
  is contiguous, else ``reshape(-1)``), cycled or zero-filled to the leaf's size and reshaped.

The same program runs in the reference (torch when installed, else lucid's "numpy" reference
backend) and in lucid on the device under test. Both run until a step raises; then both must
raise at that step. Each output is compared (shape, dtype, NaN/inf pattern, values), then a
random projection of every differentiable output is backpropagated and each leaf's gradient
compared. Tolerances are relative to the largest finite reference value, so a gradient
that is float rounding away from an exact zero is no mismatch.

Outcome kinds: ``ok``, ``both_raise``, ``refused`` (lucid raises on purpose, see ``REFUSALS``),
``value``, ``grad``, ``lucid_raises``, ``ref_raises``, plus ``crash``/``hang`` (lucid died) and
``ref_crash`` (torch died) from the parent; ``ref_defect`` where torch is known to be wrong
(``REF_DEFECTS``); ``ill_conditioned`` where a float32/half mismatch is rounding: the reference
disagrees with itself on inputs moved by a few units of rounding, or with its float64 run.

Long runs, crash-isolated in a child process (``--log`` appends every finding as JSON)::

    python tests/fuzz/differential.py --programs 10000 --device cpu
    python tests/fuzz/differential.py --programs 2000 --device gpu --start 50000

Replay one program (as printed with a finding)::

    python tests/fuzz/differential.py --replay '{"seed": 7, ...}'
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import os
import re
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

import numpy as np  # noqa: E402
from fuzz_harness import Worker, WorkerDied, serve  # noqa: E402
from op_db import OP_DB  # noqa: E402
from opinfo import OpInfo, Sample, T, as_list  # noqa: E402

import lucid  # noqa: E402

try:
    import torch
except ImportError:  # the numpy reference backend is the oracle then
    torch = None

DTYPES = ("float32", "float64", "float16", "bfloat16")
DTYPE_P = (0.45, 0.35, 0.1, 0.1)
# rtol, and atol as a fraction of the largest finite reference value
TOL = {"float64": (1e-6, 1e-8), "float32": (2e-3, 2e-4), "float16": (3e-2, 2e-2),
       "bfloat16": (8e-2, 5e-2)}
GRAD_SCALE = 4.0  # gradients pass through one more chain of rounding than values

# Entries whose samples draw random numbers in the op (a different stream per framework).
RANDOM_OPS = frozenset()

# Deliberate refusals: (op name, message pattern). A step of this op that lucid refuses with
# a matching message while the reference computes counts as ``refused``, not a mismatch.
REFUSALS: list[tuple[str, str]] = [
    # torch's backward reads outside the input (or divides by zero) for a pooling window that
    # lies entirely in the padding; lucid refuses such a window in the forward
    (r"avg_pool|max_pool", r"entirely in the padding|lies entirely|padding should be"),
    # a transposed convolution whose output would have a size-0 dim: torch refuses it in
    # float32/float64 ("Output size is too small") and returns an empty tensor in bfloat16;
    # lucid refuses it in every dtype
    (r"conv_transpose", r"Output size is too small"),
]



def _empty(*which: int) -> Callable[[Sample, list[T]], bool]:
    return lambda s, ts: any(ts[i].value.size == 0 for i in which if i < len(ts))


def _take_past_size_one(s: Sample, ts: list[T]) -> bool:
    d = s.args[2] if len(s.args) > 2 else s.kwargs.get("dim")
    return d is not None and ts[0].value.ndim > 0 and bool(
        ts[1].value.size and ts[1].value.max() >= ts[0].value.shape[d])


def _strided_bn_params(s: Sample, ts: list[T]) -> bool:
    """batch_norm's running_mean, running_var or weight (args 1-3) stored strided."""
    it = iter(ts)
    at = [next(it) if isinstance(a, T) else None for a in s.args]
    return any(t is not None and t.layout == "s" for t in at[1:4])


# Inputs on which torch 2.13 itself is wrong: it reads memory it does not own, returns
# uninitialized memory or the wrong shape, or skips the index check on an empty target. A
# disagreement in a program with such a step is ``ref_defect``, not a finding against lucid;
# lucid keeps the documented semantics there (tests/fuzz/test_differential_regressions.py).
REF_DEFECTS: list[tuple[str, Callable[[Sample, list[T]], bool], str]] = [
    (r"^multi_margin_loss$|^multilabel_margin_loss$", _empty(0),
     "an empty batch: torch returns uninitialized memory"),
    (r"^pixel_unshuffle$", _empty(0), "an empty input: torch returns the input's shape"),
    (r"^addmv$", _empty(1, 2), "an empty product: torch returns beta * input unbroadcast"),
    (r"^take_along_dim$", _take_past_size_one,
     "an index past the input's size-1 dim: torch reads out of bounds"),
    (r"^index_add$|^index_copy$|^index_fill$", _empty(0),
     "an empty target: torch skips the index check"),
    (r"^batch_norm", _strided_bn_params,
     "strided running statistics or weight: torch's backward ignores their strides"),
    (r"^ctc_loss$", lambda s, ts: bool(ts[1].value.size) and bool(
        ts[1].value.min() < 0 or ts[1].value.max() >= ts[0].value.shape[-1]),
     "a target outside the classes: torch's kernel reads past the log-probabilities"),
    (r"^embedding_bag$", lambda s, ts: bool(s.kwargs.get("include_last_offset")) and len(ts) > 2
     and bool(ts[2].value.size) and int(ts[2].value[-1]) != ts[0].value.size,
     "a last offset short of the input's end: torch's sum, mean and max disagree on the bag"),
]


def ref_defect(prog: dict[str, Any]) -> str | None:
    """The reason a step of ``prog`` is one of ``REF_DEFECTS``, or None."""
    for st in prog["steps"]:
        for pat, pred, why in REF_DEFECTS:
            if re.search(pat, st["op"]):
                sample, ts = step_tensors(st)
                if pred(sample, ts):
                    return f"{st['op']}: {why}"
    return None


ENTRIES: list[OpInfo] = [i for i in OP_DB if i.name not in RANDOM_OPS]
BY_NAME: dict[str, OpInfo] = {i.name: i for i in ENTRIES}


# ---- drawing a program --------------------------------------------------------------------------


def _tensor_shapes(sample: Sample) -> list[tuple[tuple[int, ...], str]]:
    return [(tuple(t.value.shape), t.value.dtype.kind) for t in sample.tensors]


def _mutation(rng: np.random.Generator, sample: Sample) -> list[int] | None:
    """``[old, new]``: a size of the sample's tensors and what it becomes, or None."""
    shapes = _tensor_shapes(sample)
    sizes = sorted({s for shape, _ in shapes for s in shape if s > 0})
    if not sizes or rng.random() < 0.4:
        return None
    old = int(rng.choice(sizes))
    in_index = any(old in shape for shape, kind in shapes if kind in "iu")
    # NOTE: an index tensor only shrinks: growing it repeats indices, and torch leaves the
    # order of duplicate writes (scatter, index_put) undefined.
    choices = [0, 1, old - 1] + ([] if in_index else [old + 1, old + 2])
    new = int(rng.choice([c for c in choices if c != old and c >= 0]))
    return [old, new]


def _layouts(rng: np.random.Generator, sample: Sample) -> list[str | None]:
    """A layout override per tensor argument (None keeps the sample's)."""
    out: list[str | None] = []
    for t in sample.tensors:
        r = rng.random()
        if not t.is_float or r < 0.7:
            out.append(None)
        elif r < 0.85 and t.value.ndim >= 2:
            out.append("t")
        elif t.value.ndim >= 1:
            out.append("s")
        else:
            out.append(None)
    return out


def eligible(reference: str) -> list[OpInfo]:
    return [i for i in ENTRIES if i.parity or reference != "torch"]


def make_program(seed: int, device: str, reference: str | None = None,
                 dtype: str | None = None) -> dict[str, Any]:
    """The program of ``seed`` on ``device`` (a JSON-able dict)."""
    reference = reference or ("torch" if torch is not None else "numpy")
    rng = np.random.default_rng(seed)
    pool = eligible(reference)
    dt = dtype or str(rng.choice(DTYPES, p=DTYPE_P))
    steps = []
    for _ in range(int(rng.integers(3, 9))):
        info = pool[int(rng.integers(len(pool)))]
        samples = info.get_samples()
        k = int(rng.integers(len(samples)))
        steps.append({"op": info.name, "sample": k, "mut": _mutation(rng, samples[k]),
                      "lay": _layouts(rng, samples[k]), "link": bool(rng.random() < 0.8)})
    return {"seed": seed, "device": device, "reference": reference, "dtype": dt,
            "steps": steps}


# ---- running a program in one framework ---------------------------------------------------------


def _resize(v: np.ndarray, old: int, new: int) -> np.ndarray:
    """``v`` with every dim of size ``old`` cut or grown to ``new``. A float tensor grows its
    last dim past the last value (ascending, so sorted boundaries stay sorted) and other dims
    by scaled copies (1.031, 1.062, ...), so no exact duplicates (ties) appear; an integer
    tensor grows by cycling."""
    for ax, s in enumerate(v.shape):
        if s != old:
            continue
        if v.dtype.kind == "f" and new > old and ax == v.ndim - 1:
            last = v[..., -1:]
            step = 0.031 * np.arange(1, new - old + 1) * (1.0 + np.abs(last))
            v = np.concatenate([v, last + step], axis=-1)
            continue
        v = np.take(v, np.arange(new) % old, axis=ax)
        if v.dtype.kind == "f" and new > old:
            scale = 1.0 + 0.031 * (np.arange(new) // old)
            v = v * scale.reshape([-1 if a == ax else 1 for a in range(v.ndim)])
    return v


def step_tensors(step: dict[str, Any]) -> tuple[Sample, list[T]]:
    """The step's sample and its tensor arguments after the mutation and layout overrides."""
    sample = BY_NAME[step["op"]].get_samples()[step["sample"]]
    out = []
    for t, lay in zip(sample.tensors, step["lay"] or [None] * len(sample.tensors)):
        v = t.value if step["mut"] is None else _resize(t.value, *step["mut"])
        layout = lay or t.layout
        if (layout == "t" and v.ndim < 2) or (layout == "s" and v.ndim < 1):
            layout = "c"
        out.append(T(v, layout, t.grad))
    return sample, out


class Framework:
    """lucid on one device, or torch: leaves, the ops of a step, and numpy views of results."""

    def __init__(self, kind: str, device: str = "cpu") -> None:
        self.kind, self.device = kind, device
        self.mod: Any = torch if kind == "torch" else lucid

    def dtype(self, name: str) -> Any:
        return getattr(self.mod, name)

    def leaf(self, t: T, dtype: str) -> Any:
        v = t.storage()
        if t.is_float:
            v = v.astype(np.float64 if dtype == "float64" else np.float32)
            kw = {"dtype": self.dtype(dtype)}
        else:
            kw = {}
        if self.kind == "torch":
            x = torch.tensor(v, **kw)
        else:
            x = lucid.tensor(v, device=self.device, **kw)
        if t.is_float and t.grad:
            x.requires_grad_(True)
        return x

    def fn(self, info: OpInfo) -> Callable:
        return info.torch_fn(torch) if self.kind == "torch" else info.lucid_fn()

    def is_tensor(self, x: Any) -> bool:
        return isinstance(x, torch.Tensor) if self.kind == "torch" else \
            isinstance(x, lucid.Tensor)

    def numpy(self, x: Any) -> np.ndarray:
        x = x.detach()
        if x.is_floating_point():
            x = x.to(self.mod.float64)
        return np.asarray(x.cpu().numpy() if self.kind == "torch" else x.numpy())

    def dtype_name(self, x: Any) -> str:
        return str(x.dtype).rsplit(".", 1)[-1]


def _link(fw: Framework, leaf: Any, carry: Any, use_view: bool) -> Any:
    """``leaf + 0.5 * tanh(carry)`` with the carry flattened and fitted to the leaf's size."""
    flat = carry.view(-1) if use_view else carry.reshape(-1)
    n = math.prod(leaf.shape)
    if flat.shape[0] == 0:
        fitted = fw.mod.zeros(n, dtype=leaf.dtype, device=leaf.device)
    else:
        reps = -(-n // flat.shape[0])
        fitted = (flat.repeat(reps) if reps > 1 else flat)[:n].to(leaf.dtype)
    return leaf + 0.5 * fitted.reshape(tuple(leaf.shape)).tanh()


class Failure(Exception):
    """A step raised: ``where`` names it, the message is the exception's."""

    def __init__(self, where: str, exc: BaseException) -> None:
        super().__init__(f"{type(exc).__name__}: {exc}"[:500])
        self.where = where


def differentiable(prog: dict[str, Any]) -> bool:
    """Whether gradients compare: not where torch lacks a derivative lucid has
    (``torch_grad=False`` in the op table: floor division, remainder by a tensor)."""
    return prog["reference"] != "torch" or all(BY_NAME[s["op"]].torch_grad
                                               for s in prog["steps"])


def run(prog: dict[str, Any], fw: Framework, views: list[bool] | None = None,
        jitter: float = 0.0) -> dict[str, Any]:
    """Run ``prog`` in ``fw``. Returns the outputs of each step (numpy), the view/reshape
    choice of each link, the gradient of each leaf, and where it stopped with which error.
    ``jitter`` scales each float input by ``1 +- jitter`` (a seeded sign per element)."""
    dt = prog["dtype"]
    res: dict[str, Any] = {"outs": [], "views": [], "grads": [], "error": None, "where": None}
    leaves: list[Any] = []
    diff: list[Any] = []
    carry = None
    rng = np.random.default_rng(prog["seed"] + 7919)
    nlink = 0
    for k, step in enumerate(prog["steps"]):
        info = BY_NAME[step["op"]]
        try:
            sample, ts = step_tensors(step)
            if jitter:
                signs = np.random.default_rng(prog["seed"] + 31 * k)
                ts = [T(t.value * (1 + jitter * signs.choice([-1.0, 1.0], t.value.shape)),
                        t.layout, t.grad) if t.is_float else t for t in ts]
            mine = [fw.leaf(t, dt) for t in ts]
            leaves.extend(mine)
            first = next((j for j, t in enumerate(ts) if t.is_float), None)
            if step["link"] and carry is not None and first is not None:
                use_view = views[nlink] if views is not None else bool(carry.is_contiguous())
                res["views"].append(use_view)
                nlink += 1
                mine = list(mine)
                mine[first] = _link(fw, mine[first], carry, use_view)
            it = iter(t.view(x) for t, x in zip(ts, mine))
            args = [next(it) if isinstance(a, T) else a for a in sample.args]
            kwargs = {kk: next(it) if isinstance(v, T) else v for kk, v in sample.kwargs.items()}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = as_list(fw.fn(info)(*args, **kwargs))
        except Exception as e:  # noqa: BLE001 - both frameworks must raise at the same step
            res["error"], res["where"] = f"{type(e).__name__}: {e}"[:500], f"step {k}"
            return res
        got = []
        for o in out:
            if fw.is_tensor(o):
                got.append((fw.dtype_name(o), fw.numpy(o)))
                if o.requires_grad:
                    diff.append(o)
            else:
                got.append(("py", repr(o)))
        res["outs"].append(got)
        floats = [o for o in out if fw.is_tensor(o) and o.is_floating_point()]
        carry = floats[0] if floats else carry
    if not diff or not differentiable(prog):
        return res
    try:
        loss = None
        for o in diff:
            r = rng.uniform(-1, 1, tuple(o.shape))
            proj = fw.mod.tensor(r, dtype=fw.mod.float64, device=o.device)
            term = (o.to(fw.mod.float64) * proj).sum()
            loss = term if loss is None else loss + term
        loss.backward()
    except Exception as e:  # noqa: BLE001
        res["error"], res["where"] = f"{type(e).__name__}: {e}"[:500], "backward"
        return res
    for x in leaves:
        if fw.is_tensor(x) and x.requires_grad:
            g = x.grad
            res["grads"].append(None if g is None else fw.numpy(g))
    return res


# ---- comparing ----------------------------------------------------------------------------------


def close(a: np.ndarray, b: np.ndarray, dtype: str, scale: float = 1.0) -> str | None:
    """Why ``a`` (lucid) is not ``b`` (reference), or None."""
    if a.shape != b.shape:
        return f"shape {a.shape} != {b.shape}"
    if b.dtype.kind not in "fc":
        if a.dtype.kind in "fc" and not np.array_equal(np.isnan(a), np.zeros(a.shape, bool)):
            return "NaN where the reference has none"
        return None if np.array_equal(a, b) else f"values differ: {_first_diff(a, b)}"
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return f"NaN pattern differs: {_first_diff(a, b)}"
    inf_a, inf_b = np.isinf(a), np.isinf(b)
    if not np.array_equal(inf_a, inf_b) or not np.array_equal(a[inf_a], b[inf_b]):
        return f"inf pattern differs: {_first_diff(a, b)}"
    fin = np.isfinite(b)
    if not fin.any():
        return None
    rtol, atol = TOL[dtype]
    rtol, atol = rtol * scale, atol * scale
    ref = np.abs(b[fin])
    bound = atol * max(1.0, float(ref.max())) + rtol * ref
    err = np.abs(a[fin] - b[fin])
    if np.all(err <= bound):
        return None
    return f"values differ (max err {float(err.max()):.3g}): {_first_diff(a, b)}"


def _first_diff(a: np.ndarray, b: np.ndarray) -> str:
    fa, fb = a.reshape(-1), b.reshape(-1)
    with np.errstate(invalid="ignore"):
        bad = np.flatnonzero(~((fa == fb) | (np.isnan(fa) & np.isnan(fb))))
    if not bad.size:
        return "(equal)"
    i = int(bad[0])
    return f"at flat index {i}: lucid {fa[i]!r}, reference {fb[i]!r} ({bad.size} differ)"


def _refused(prog: dict[str, Any], where: str, msg: str) -> bool:
    if not where.startswith("step "):
        return False
    op = prog["steps"][int(where.split()[1])]["op"]
    return any(re.search(o, op) and re.search(m, msg) for o, m in REFUSALS)


def compare(prog: dict[str, Any]) -> dict[str, Any]:
    """Run ``prog`` in the reference and in lucid; the outcome ``{"kind", "detail"}``."""
    if prog["reference"] == "torch":
        ref_fw = Framework("torch")
    else:
        ref_fw = Framework("lucid", "numpy")
    ref = run(prog, ref_fw)
    sub = run(prog, Framework("lucid", prog["device"]), views=ref["views"])
    if ref["error"] is not None or sub["error"] is not None:
        if ref["where"] == sub["where"]:
            return {"kind": "both_raise", "detail": sub["error"]}
        first_sub = _order(sub["where"]) <= _order(ref["where"])
        if sub["error"] is not None and first_sub:
            if _refused(prog, sub["where"], sub["error"]):
                return {"kind": "refused", "detail": f"{sub['where']}: {sub['error']}"}
            return {"kind": "lucid_raises", "detail": f"{sub['where']}: {sub['error']}"}
        # the reference raised first: the steps before it still compare
        detail = f"{ref['where']}: {ref['error']}"
        mism = _compare_outs(prog, ref, sub)
        return mism or {"kind": "ref_raises", "detail": detail}
    return _compare_results(prog, ref, sub)


def _compare_results(prog: dict[str, Any], ref: dict[str, Any], sub: dict[str, Any],
                     dtypes: bool = True) -> dict[str, Any]:
    """The outcome of two runs that both went through: outputs, then gradients."""
    mism = _compare_outs(prog, ref, sub, dtypes)
    if mism:
        return mism
    for k, (a, b) in enumerate(zip(sub["grads"], ref["grads"])):
        if a is None and b is None:
            continue
        a = np.zeros_like(b) if a is None else a
        b = np.zeros_like(a) if b is None else b
        why = close(a, b, prog["dtype"], GRAD_SCALE)
        if why:
            return {"kind": "grad", "detail": f"gradient of leaf {k}: {why}"}
    if len(sub["grads"]) != len(ref["grads"]):
        return {"kind": "grad", "detail": f"{len(sub['grads'])} leaves with grad, reference "
                f"{len(ref['grads'])}"}
    return {"kind": "ok", "detail": ""}


def _order(where: str | None) -> float:
    if where is None:
        return math.inf
    return math.inf - 1 if where == "backward" else float(where.split()[1])


def _compare_outs(prog: dict[str, Any], ref: dict[str, Any], sub: dict[str, Any],
                  dtypes: bool = True) -> dict[str, Any] | None:
    for k, (ro, so) in enumerate(zip(ref["outs"], sub["outs"])):
        if len(ro) != len(so):
            return {"kind": "value", "detail": f"step {k}: {len(so)} outputs, reference "
                    f"{len(ro)}"}
        for j, ((rd, rv), (sd, sv)) in enumerate(zip(ro, so)):
            if rd == "py" or sd == "py":
                if rv != sv and not _py_equal(rv, sv):
                    return {"kind": "value", "detail": f"step {k} output {j}: {sv} != {rv}"}
                continue
            if rd != sd and dtypes:
                return {"kind": "value", "detail": f"step {k} output {j}: dtype {sd}, "
                        f"reference {rd}"}
            why = close(sv, rv, prog["dtype"])
            if why:
                return {"kind": "value", "detail": f"step {k} output {j}: {why}"}
    return None


def _py_equal(a: str, b: str) -> bool:
    num = re.compile(r"^\(?[-\d., ]*\)?$")
    return bool(num.match(a) and num.match(b) and a.replace(" ", "") == b.replace(" ", ""))


def check(prog: dict[str, Any]) -> dict[str, Any]:
    """``compare`` with warnings silenced; a finding on a known torch defect is
    ``ref_defect``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            out = compare(prog)
    if out["kind"] in BAD:
        why = ref_defect(prog)
        if why:
            return {"kind": "ref_defect", "detail": f"{why} ({out['detail']})"}
    if out["kind"] in ("value", "grad") and ill_conditioned(prog):
        return {"kind": "ill_conditioned", "detail": out["detail"]}
    return out


JITTER = {"float32": 1e-6, "float16": 8e-3, "bfloat16": 6e-2}  # about 8 units of rounding


def ill_conditioned(prog: dict[str, Any]) -> bool:
    """Whether rounding decides the outcome of a float32/half program: the reference run on
    inputs moved by a few units of rounding (or in float64) disagrees with itself as the
    comparison would count it (a value on the edge of a domain, a cancellation), so a
    disagreement with lucid there says nothing about lucid."""
    if prog["dtype"] == "float64":
        return False
    fw = Framework("torch") if prog["reference"] == "torch" else Framework("lucid", "numpy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            low = run(prog, fw)
            others = [(run(prog, fw, views=low["views"], jitter=JITTER[prog["dtype"]]), True),
                      (run(dict(prog, dtype="float64"), fw, views=low["views"]), False)]
    for other, dtypes in others:
        if low["error"] is not None or other["error"] is not None:
            if low["where"] != other["where"]:
                return True
        elif _compare_results(prog, other, low, dtypes=dtypes)["kind"] != "ok":
            return True
    return False


# ---- shrinking and printing ---------------------------------------------------------------------

BAD = ("value", "grad", "lucid_raises")


def shrink(prog: dict[str, Any], kind: str, budget: float = 60.0) -> dict[str, Any]:
    """A smaller program with the same outcome kind: steps dropped, links, mutations and
    layout overrides removed while the outcome stays ``kind``."""
    end = time.monotonic() + budget

    def same(p: dict[str, Any]) -> bool:
        return time.monotonic() < end and check(p)["kind"] == kind

    changed = True
    while changed:
        changed = False
        for k in range(len(prog["steps"]) - 1, -1, -1):
            if len(prog["steps"]) == 1:
                break
            cand = dict(prog, steps=prog["steps"][:k] + prog["steps"][k + 1:])
            if k < len(prog["steps"]) and same(cand):
                prog, changed = cand, True
        for k, st in enumerate(prog["steps"]):
            for key, empty in (("link", False), ("mut", None), ("lay", None)):
                if st[key] in (empty, None) or (key == "lay" and not any(st[key])):
                    continue
                steps = list(prog["steps"])
                steps[k] = dict(st, **{key: empty})
                cand = dict(prog, steps=steps)
                if same(cand):
                    prog, changed, st = cand, True, steps[k]
    return prog


def describe(prog: dict[str, Any]) -> str:
    """A readable listing of ``prog`` and the command that replays it."""
    lines = [f"# {prog['dtype']} on {prog['device']}, reference {prog['reference']}"]
    for k, st in enumerate(prog["steps"]):
        sample, ts = step_tensors(st)
        args = ", ".join(f"T{tuple(t.value.shape)}{'' if t.layout == 'c' else t.layout}"
                         for t in ts)
        extra = [f"{kk}={v!r}" for kk, v in sample.kwargs.items() if not isinstance(v, T)]
        extra += [repr(a) for a in sample.args if not isinstance(a, T)]
        link = " + link(previous)" if st["link"] and k else ""
        lines.append(f"step {k}: {st['op']}[{st['sample']}]({args}{', ' if extra else ''}"
                     f"{', '.join(extra)}){link}")
    lines.append(f"replay: python {os.path.relpath(__file__)} --replay "
                 f"'{json.dumps(prog, separators=(',', ':'))}'")
    return "\n".join(lines)


# ---- driving: worker loop, long runs ------------------------------------------------------------


def handle(req: dict[str, Any]) -> dict[str, Any]:
    """One request of the child: ``{"prog": ...}`` (the outcome), ``{"shrink": ...,
    "kind": ...}`` (a shrunk program) or ``{"lucid_only": ...}`` (lucid's side alone, to
    tell whose crash a death was)."""
    try:
        if "lucid_only" in req:
            prog = req["lucid_only"]
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                run(prog, Framework("lucid", prog["device"]))
            return {"kind": "ok", "detail": ""}
        if "shrink" in req:
            small = shrink(req["shrink"], req["kind"])
            return {"prog": small, "text": describe(small), **check(small)}
        return check(req["prog"])
    except Exception as e:  # noqa: BLE001 - a defect of the fuzzer itself
        return {"kind": "fuzzer_error", "detail": f"{type(e).__name__}: {e}"}


def programs(device: str, start: int, count: int) -> Iterable[dict[str, Any]]:
    for seed in range(start, start + count):
        yield make_program(seed, device)


def run_isolated(w: Worker, prog: dict[str, Any], timeout: float) -> dict[str, Any]:
    """The outcome of ``prog`` run in worker ``w``; a death is ``crash`` or ``hang`` when
    lucid alone dies the same way in a fresh worker, else ``ref_crash`` (the reference
    itself died: torch has inputs that crash it)."""
    try:
        return w.run({"prog": prog}, timeout=timeout)
    except WorkerDied as e:
        w.close()
        died = {"kind": "hang" if str(e).startswith("hang") else "crash", "detail": str(e)}
    try:
        w.run({"lucid_only": prog}, timeout=timeout)
    except WorkerDied as e:
        w.close()
        return {"kind": "hang" if str(e).startswith("hang") else "crash", "detail": str(e)}
    return {"kind": "ref_crash", "detail": f"the reference {died['detail']}"}


def long_run(args: argparse.Namespace) -> int:
    counts: collections.Counter[str] = collections.Counter()
    by_op: collections.Counter[str] = collections.Counter()
    w = Worker([sys.executable, os.path.abspath(__file__), "--worker"])
    t0 = time.monotonic()
    findings = 0
    for prog in programs(args.device, args.start, args.programs):
        out = run_isolated(w, prog, args.timeout)
        counts[out["kind"]] += 1
        if out["kind"] in BAD + ("crash", "hang", "fuzzer_error"):
            findings += 1
            ops = ",".join(sorted({s["op"] for s in prog["steps"]}))
            text = json.dumps(prog, separators=(",", ":"))
            if out["kind"] in BAD and findings <= args.shrink:
                try:
                    small = w.run({"shrink": prog, "kind": out["kind"]}, timeout=300)
                    text, ops = small["text"], ",".join(s["op"] for s in small["prog"]["steps"])
                except WorkerDied:
                    w.close()
            by_op[f"{out['kind']}: {ops}"] += 1
            print(f"\n[{out['kind']}] seed {prog['seed']}: {out['detail']}\n{text}", flush=True)
            if args.log:
                with open(args.log, "a") as f:
                    f.write(json.dumps({"prog": prog, **out}) + "\n")
        elif out["kind"] == "ref_crash":  # not lucid's finding, but worth a look: say which
            print(f"\n[ref_crash] seed {prog['seed']}: {out['detail']}\n"
                  f"{json.dumps(prog, separators=(',', ':'))}", flush=True)
        n = sum(counts.values())
        if n % 500 == 0:
            print(f"... {n} programs, {dict(counts)} ({time.monotonic() - t0:.0f} s)",
                  flush=True)
    w.close()
    n = sum(counts.values())
    print(f"\n{n} programs on {args.device} in {time.monotonic() - t0:.0f} s: {dict(counts)}")
    for key, c in by_op.most_common(40):
        print(f"{c:5d}  {key}")
    bad = sum(counts[k] for k in BAD + ("crash", "hang", "fuzzer_error"))
    return 1 if bad else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--replay", help="a program as printed with a finding (JSON)")
    p.add_argument("--programs", type=int, default=1000)
    p.add_argument("--start", type=int, default=0, help="the first seed")
    p.add_argument("--device", default="cpu", choices=("cpu", "numpy", "gpu"))
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per program")
    p.add_argument("--shrink", type=int, default=20, help="shrink the first N findings")
    p.add_argument("--log", help="append each finding to this file (JSON lines)")
    args = p.parse_args()
    if args.worker:
        serve(handle)
        return 0
    if args.replay:
        prog = json.loads(args.replay)
        print(describe(prog))
        print(json.dumps(check(prog)))
        return 0
    return long_run(args)


if __name__ == "__main__":
    sys.exit(main())
