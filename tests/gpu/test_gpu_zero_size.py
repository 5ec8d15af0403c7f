"""Zero-size dims in convolution, transposed convolution, pooling and unfold/fold on "gpu": the
same result or error as on "cpu", forward and backward, and never a crash. Each device run is
a child process, so a signal fails the test instead of killing the test run."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from zero_size_cases import CONV, POOL, backend_shapes, conv_table, pool_table, run

from lucid.backend import get_backend

HERE = os.path.dirname(os.path.abspath(__file__))


def f64_ok() -> bool:
    return bool(get_backend("gpu").float64)


CASES = [*CONV, *POOL]

# cases where lucid differed from torch 2.13 (zero-channel inputs give zero output channels,
# zero spatial input is refused even when padded, ...) now match it: none is expected to differ
TORCH_DIFFERS: set[str] = set()


def _child(dtype: str) -> dict[str, dict]:
    r = subprocess.run([sys.executable, os.path.join(HERE, "zero_size_cases.py"), "gpu", dtype,
                        *CASES], capture_output=True, text=True, timeout=600)
    done = [json.loads(line) for line in r.stdout.splitlines()]
    crashed = CASES[len(done)] if len(done) < len(CASES) else None
    assert r.returncode == 0, f"gpu child died (rc {r.returncode}) in case {crashed}: " \
                              f"{r.stderr[-2000:]}"
    return dict(done)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zero_size_conv_and_pool_match_cpu(dtype: str) -> None:
    if dtype == "float64" and not f64_ok():
        pytest.skip("needs float64 (the exact im2col path), which this gpu stream lacks")
    gpu = _child(dtype)
    for case in CASES:
        assert gpu[case] == run(case, "cpu", dtype), case
    assert "error" not in gpu["conv2d_c0"] and "error" not in gpu["conv_transpose2d_n0"]
    assert gpu["max_pool2d_c0"]["error"] == "RuntimeError"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_backend_convolution_with_zero_size_operands(dtype: str) -> None:
    """Below the ops layer too: the gpu backend's conv kernels take zero-size operands
    (MLX's own conv divides by the channel count and dies with SIGFPE)."""
    if dtype == "float64" and not f64_ok():
        pytest.skip("needs float64 (the exact im2col path), which this gpu stream lacks")
    r = subprocess.run([sys.executable, os.path.join(HERE, "zero_size_cases.py"), "gpu", dtype,
                        "backend"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"gpu child died (rc {r.returncode}): {r.stderr[-2000:]}"
    assert json.loads(r.stdout) == backend_shapes("cpu", dtype) == [
        [1, 4, 5, 3], [1, 0, 5, 5], [4, 0, 3, 3], [0, 4, 5, 3], [0, 3, 5, 5], [4, 3, 3, 3],
        [2, 4, 5, 3], [2, 0, 5, 5], [4, 0, 3, 3], [1, 0, 5, 3], [1, 3, 5, 5], [0, 3, 3, 3]]


@pytest.mark.parity
@pytest.mark.parametrize("case", [
    pytest.param(c, marks=pytest.mark.xfail(reason="lucid's op differs from torch here",
                                            strict=False)) if c in TORCH_DIFFERS else c
    for c in CASES])
def test_zero_size_case_matches_torch(case: str, torch: object) -> None:
    tconv = conv_table(torch.nn.functional)  # type: ignore[attr-defined]
    tpool = pool_table(torch.nn.functional)  # type: ignore[attr-defined]
    f64 = torch.float64  # type: ignore[attr-defined]
    ours = run(case, "cpu", "float64")
    if case in tconv:
        xs, ws, fn = tconv[case]
        leaves = [torch.rand(*xs, dtype=f64).requires_grad_(),  # type: ignore[attr-defined]
                  torch.rand(*ws, dtype=f64).requires_grad_()]  # type: ignore[attr-defined]
    else:
        xs, fn = tpool[case]
        leaves = [torch.rand(*xs, dtype=f64).requires_grad_()]  # type: ignore[attr-defined]
    try:
        outs = fn(*leaves)
        outs = list(outs) if isinstance(outs, tuple) else [outs]
        (outs[0] * 1.5).sum().backward()
    except RuntimeError as e:
        assert ours == {"error": "RuntimeError", "message": str(e)}
        return
    assert ours["shapes"] == [list(o.shape) for o in outs]
    assert ours["grads"] == [[list(t.grad.shape), 0.0] for t in leaves]


REDUCE_EMPTY_TRANSPOSED = """
import lucid
x = lucid.zeros(0, 3, dtype=lucid.float32, device="gpu").t()   # (3, 0), not row-contiguous
for _ in range(200):
    out = [x.sum(1), x.mean(1), x.var(1), x.std(1), x.prod(1), (x > 0).all(1), (x > 0).any(1),
           x.nansum(1)]
    vals = [o.tolist() for o in out]
print(vals)
"""


def test_reductions_over_an_empty_transposed_dim_finish() -> None:
    # MLX's CPU reductions could spin forever on such an input (one run in three)
    r = subprocess.run([sys.executable, "-c", REDUCE_EMPTY_TRANSPOSED], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    nan = float("nan")
    got = eval(r.stdout.strip(), {"nan": nan})  # noqa: S307 - our own child's repr of lists
    assert got[0] == [0.0] * 3 and got[4] == [1.0] * 3 and got[7] == [0.0] * 3
    assert all(v != v for row in got[1:4] for v in row)  # mean, var, std of nothing: NaN
    assert got[5] == [True] * 3 and got[6] == [False] * 3
