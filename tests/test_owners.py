"""One owner per concern: conv/pool geometry in ``lucid/kernels/_geometry.py``, moves between
backends in ``lucid/_convert.py``, the BLAS thread control in
``lucid/kernels/_threads.py``. Source scans catch a second copy creeping back."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid.backend import get_backend, transfer
from lucid.kernels import _geometry as G

ROOT = Path(lucid.__file__).resolve().parent
SOURCES = {p.relative_to(ROOT.parent).as_posix(): p.read_text(encoding="utf-8")
           for p in sorted(ROOT.rglob("*.py"))}


def _hits(pattern: str) -> list[str]:
    """``file:line`` of every source line matching ``pattern``."""
    rx = re.compile(pattern)
    return sorted(f"{name}:{i}" for name, src in SOURCES.items()
                  for i, line in enumerate(src.splitlines(), 1) if rx.search(line))


def _files(pattern: str) -> list[str]:
    return sorted({h.rsplit(":", 1)[0] for h in _hits(pattern)})


# nn/modules/conv.py writes the dilated span out for padding="same" with a padding_mode and
# for ConvTranspose2d's output_size argument (same_padding / conv_transpose_output_size).
SPAN_ELSEWHERE: list[str] = []


def test_output_size_formula_has_one_definition():
    # the dilated window span "d * (k - 1)" / "(k - 1) * d", whatever the names, is the core of
    # every output-size formula
    dil, ker = r"(\bd|dil\w*|dilation)(\[[^]]+\])?", r"(\bk\w*|kernel\w*|w4|ws)(\[[^]]+\])?"
    span = rf"{dil} \* \({ker} - 1\)|\({ker} - 1\) \* {dil}"
    code = [h for h in _hits(span) if not h.startswith("lucid/kernels/_geometry.py:")]
    assert code == SPAN_ELSEWHERE
    defs = _hits(rf"return ({span})")
    assert len(defs) == 1 and defs[0].startswith("lucid/kernels/_geometry.py:")


def test_window_tables_have_one_definition():
    geometry = ["lucid/kernels/_geometry.py"]
    assert _files(r"np\.arange\(n_out\)\[:, None\] \* s") == geometry  # taps of each window
    assert _files(r"-\(\(-\(o \+ 1\)") == geometry  # adaptive window ends
    assert _files(r"np\.arange\(n_out(, dtype=np\.int64)?\) \* s - p") == geometry
    copies = _files(r"^def (_out_size|output_size|_?adaptive_index|_fixed_index|_table|"
                    r"_avg_divisor|_?max_windows|_?avg_windows|adaptive_windows|_im2col_table)\(")
    assert copies in ([], geometry)


def test_cross_backend_moves_go_through_transfer():
    # X.from_numpy(... Y.to_numpy(...)) with two different backends X and Y
    pair = re.compile(r"([\w.]+)\.from_numpy\(.*?([\w.]+)\.to_numpy\(")
    bad = [f"{name}:{i}" for name, src in SOURCES.items()
           for i, line in enumerate(src.splitlines(), 1)
           for m in [pair.search(line)] if m and m.group(1) != m.group(2)]
    assert bad == []
    assert _files(r"\.from_numpy\(host\)") == ["lucid/_convert.py"]


def test_blas_thread_control_lives_with_the_thread_policy():
    assert _files(r"^class \w*BlasThreads|_set_num_threads") == ["lucid/kernels/_threads.py"]
    assert _files(r"PARALLEL_LOCK = ") == ["lucid/kernels/_threads.py"]
    assert [f for f in _files(r"from \.conv import") if f.startswith("lucid/kernels/")] == []


@pytest.mark.parametrize("n,k,s,p,d", [(7, 3, 2, 1, 1), (10, 2, 3, 0, 2), (5, 5, 1, 2, 1),
                                       (4, 3, 1, 0, 1), (28, 3, 2, 1, 2)])
def test_geometry_matches_the_window_tables(n, k, s, p, d):
    out = G.conv_output_size(n, k, s, p, p, d)
    idx = G.window_index(out, k, s, p, d)
    assert idx.shape == (out, k) and idx[-1, -1] <= n + p - 1 < idx[-1, -1] + s
    assert G.covered_size(out, k, s, d) == idx[-1, -1] - idx[0, 0] + 1
    t = G.conv_transpose_output_size(out, k, s, p, d, 0)
    assert G.conv_output_size(t, k, s, p, p, d) == out
    assert G.pool_output_size(n, k, min(p, G.effective_kernel(k, d) // 2), s, d, False) >= 1


def test_pool_ceil_mode_and_adaptive_windows():
    assert G.pool_output_size(6, 3, 0, 2, 1, False) == 2
    assert G.pool_output_size(6, 3, 0, 2, 1, True) == 3
    assert G.pool_output_size(5, 2, 1, 2, 1, True) == 3  # last window would start in padding
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        G.pool_output_size(5, 2, 2, 1, 1, False)
    start, end = G.adaptive_bounds(10, 3)
    assert start.tolist() == [0, 3, 6] and end.tolist() == [4, 7, 10]
    assert G.adaptive_index(5, 3).tolist() == [[0, 1, -1], [1, 2, 3], [3, 4, -1]]
    assert G.same_padding(4, 1) == (1, 2) and G.same_padding(3, 2) == (2, 2)


@pytest.mark.parametrize("copy", [False, True])
def test_transfer_copy_policy(copy):
    cpu, ref = get_backend("cpu"), get_backend("numpy")
    a = np.arange(6.0).reshape(2, 3)
    b = transfer(a, cpu, ref, copy=copy)
    assert np.array_equal(b, a) and b.dtype == a.dtype
    assert np.shares_memory(a, b) is (not copy)
    same = transfer(a, cpu, cpu, copy=copy)
    assert (same is a) is (not copy) and np.array_equal(same, a)
