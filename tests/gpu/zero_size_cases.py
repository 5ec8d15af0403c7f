"""Zero-size convolution and pooling cases, evaluated on one device and summarised as plain
data (shape, sum of the output, gradient sums, or the error), so a child process can run them
on "gpu" and a crash shows up as a failed test instead of a dead test run."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable
from typing import Any

import lucid
import lucid.backend
import lucid.nn.functional as F


def conv_table(F: Any) -> dict[str, tuple[tuple[int, ...], tuple[int, ...], Callable]]:
    """name -> (input shape, weight shape, call), with ``F`` lucid's or torch's functional."""
    return {
        "conv2d_c0": ((1, 0, 5, 5), (4, 0, 3, 3), lambda x, w: F.conv2d(x, w)),
        "conv2d_c0_bias": ((1, 0, 5, 5), (4, 0, 3, 3),
                           lambda x, w: F.conv2d(x, w, x.new_ones(4))),
        "conv2d_c0_groups": ((2, 0, 5, 5), (4, 0, 3, 3), lambda x, w: F.conv2d(x, w, groups=2)),
        "conv2d_c0_strided": ((2, 0, 6, 5), (4, 0, 3, 3),
                              lambda x, w: F.conv2d(x, w, stride=2, padding=1, dilation=1)),
        "conv2d_n0": ((0, 3, 5, 5), (4, 3, 3, 3), lambda x, w: F.conv2d(x, w)),
        "conv2d_n0_c0": ((0, 0, 5, 5), (4, 0, 3, 3), lambda x, w: F.conv2d(x, w)),
        "conv2d_o0": ((1, 3, 5, 5), (0, 3, 3, 3), lambda x, w: F.conv2d(x, w)),
        "conv2d_h0": ((1, 3, 0, 5), (4, 3, 3, 3), lambda x, w: F.conv2d(x, w)),
        "conv2d_h0_padded": ((1, 3, 0, 5), (4, 3, 1, 3), lambda x, w: F.conv2d(x, w, padding=1)),
        "conv2d_k0": ((1, 3, 5, 5), (4, 3, 0, 3), lambda x, w: F.conv2d(x, w)),
        "conv1d_c0": ((1, 0, 5), (4, 0, 3), lambda x, w: F.conv1d(x, w)),
        "conv1d_n0": ((0, 2, 5), (4, 2, 3), lambda x, w: F.conv1d(x, w)),
        "conv_transpose2d_n0": ((0, 3, 5, 5), (3, 4, 3, 3), lambda x, w: F.conv_transpose2d(x, w)),
        "conv_transpose2d_c0": ((1, 0, 5, 5), (0, 4, 3, 3), lambda x, w: F.conv_transpose2d(x, w)),
        "conv_transpose2d_o0": ((1, 3, 5, 5), (3, 0, 3, 3), lambda x, w: F.conv_transpose2d(x, w)),
        "conv_transpose2d_h0": ((1, 3, 0, 5), (3, 4, 3, 3), lambda x, w: F.conv_transpose2d(x, w)),
        "conv_transpose1d_n0": ((0, 3, 5), (3, 2, 3), lambda x, w: F.conv_transpose1d(x, w)),
    }

def pool_table(F: Any) -> dict[str, tuple[tuple[int, ...], Callable]]:
    """name -> (input shape, call), with ``F`` lucid's or torch's functional."""
    return {
        "max_pool2d_n0": ((0, 2, 4, 4), lambda x: F.max_pool2d(x, 2)),
        "max_pool2d_c0": ((1, 0, 4, 4), lambda x: F.max_pool2d(x, 2)),
        "max_pool2d_h0": ((1, 2, 0, 4), lambda x: F.max_pool2d(x, 2)),
        "max_pool2d_indices_n0": ((0, 2, 4, 4), lambda x: F.max_pool2d(x, 2, return_indices=True)),
        "avg_pool2d_n0": ((0, 2, 4, 4), lambda x: F.avg_pool2d(x, 2)),
        "avg_pool2d_c0": ((1, 0, 4, 4), lambda x: F.avg_pool2d(x, 2)),
        "avg_pool2d_w0": ((1, 2, 4, 0), lambda x: F.avg_pool2d(x, 2)),
        "adaptive_avg_pool2d_n0": ((0, 2, 4, 4), lambda x: F.adaptive_avg_pool2d(x, 2)),
        "adaptive_avg_pool2d_h0": ((1, 2, 0, 4), lambda x: F.adaptive_avg_pool2d(x, 2)),
        "adaptive_avg_pool2d_out0": ((1, 2, 4, 4), lambda x: F.adaptive_avg_pool2d(x, 0)),
        "adaptive_max_pool2d_n0": ((0, 2, 4, 4), lambda x: F.adaptive_max_pool2d(x, 2)),
        "adaptive_max_pool2d_w0": ((1, 2, 4, 0), lambda x: F.adaptive_max_pool2d(x, 2)),
        "max_pool1d_n0": ((0, 2, 4), lambda x: F.max_pool1d(x, 2)),
        "avg_pool1d_c0": ((1, 0, 4), lambda x: F.avg_pool1d(x, 2)),
        "unfold_n0": ((0, 2, 4, 4), lambda x: F.unfold(x, 2)),
        "unfold_c0": ((1, 0, 4, 4), lambda x: F.unfold(x, 2)),
        "fold_n0": ((0, 8, 9), lambda x: F.fold(x, (4, 4), 2)),
    }


CONV = conv_table(F)
POOL = pool_table(F)


def _summary(out: Any, leaves: list[lucid.Tensor]) -> dict[str, Any]:
    outs = list(out) if isinstance(out, tuple) else [out]
    res: dict[str, Any] = {"shapes": [list(o.shape) for o in outs],
                           "sums": [float(o.double().sum().item()) for o in outs]}
    if outs[0].requires_grad:
        (outs[0] * 1.5).sum().backward()
        res["grads"] = [[list(t.grad.shape), float(t.grad.double().sum().item())]
                        for t in leaves]
    return res


def run(name: str, device: str, dtype: str = "float32") -> dict[str, Any]:
    """The summary of one case on ``device``: its output, or the error it raised."""
    d = getattr(lucid, dtype)
    lucid.manual_seed(0)
    try:
        if name in CONV:
            xs, ws, fn = CONV[name]
            leaves = [lucid.rand(*xs, dtype=d).to(device).requires_grad_(),
                      lucid.rand(*ws, dtype=d).to(device).requires_grad_()]
        else:
            xs, fn = POOL[name]
            leaves = [lucid.rand(*xs, dtype=d).to(device).requires_grad_()]
        return _summary(fn(*leaves), leaves)
    except Exception as e:  # noqa: BLE001 - the error is the result being compared
        return {"error": type(e).__name__, "message": str(e)}


def backend_shapes(device: str, dtype: str) -> list[list[int]]:
    """The backend's conv2d, its input and weight gradients (a transposed conv's forward) called
    directly with zero-size operands: the shapes they return."""
    be = lucid.backend.get_backend(device)
    d = getattr(lucid, dtype)
    pads = ((1, 1), (0, 0))
    out = []
    for xs, ws in (((1, 0, 5, 5), (4, 0, 3, 3)), ((0, 3, 5, 5), (4, 3, 3, 3)),
                   ((2, 0, 5, 5), (4, 0, 3, 3)), ((1, 3, 5, 5), (0, 3, 3, 3))):
        x, w = be.zeros(xs, d), be.zeros(ws, d)
        y = be.conv2d(x, w, None, (1, 1), pads, (1, 1), 1)
        gx = be.conv2d_grad_input(be.ones(y.shape, d), w, xs, (1, 1), pads, (1, 1), 1)
        gw = be.conv2d_grad_weight(x, be.ones(y.shape, d), ws, (1, 1), pads, (1, 1), 1)
        out += [list(be.to_numpy(a).shape) for a in (y, gx, gw)]
    return out


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    dev, dt = sys.argv[1], sys.argv[2]
    if sys.argv[3:] == ["backend"]:
        print(json.dumps(backend_shapes(dev, dt)))
        sys.exit(0)
    for case in sys.argv[3:]:
        print(json.dumps([case, run(case, dev, dt)]), flush=True)
