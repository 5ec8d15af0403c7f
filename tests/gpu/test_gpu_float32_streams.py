"""On a gpu stream without float64 (Metal, CUDA) the op table runs in float32 and only tests
that ask for float64 skip, with a reason; a float64 TypeError anywhere else fails the test.
Exercised here by making MLX's CPU stream refuse float64 (``LUCID_TEST_GPU_NO_FLOAT64=1``)
in a child pytest run."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import lucid

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def _pytest(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, LUCID_TEST_GPU_NO_FLOAT64="1")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                           *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)


def test_float32_variants_run_and_float64_tests_skip_with_a_reason() -> None:
    """The op table's gpu cases run in float32 and only its gradchecks skip; ``tests/nn_ops``
    builds float64 data, so its "gpu" cases skip while its "cpu" and "numpy" cases run."""
    r = _pytest("tests/test_ops.py", "tests/nn_ops/test_activation.py", "-k",
                "(gpu-add-0 or gpu-exp-0) and (forward or gradcheck or backward_shapes) "
                "or inplace and relu6")
    out = r.stdout
    assert r.returncode == 0, out[-3000:]
    assert "6 passed, 3 skipped" in out, out[-3000:]
    skips = [line for line in out.splitlines() if line.startswith("SKIPPED")]
    lacks = "which the MLX cpu stream lacks"
    table = [s for s in skips if "test_ops.py" in s]
    assert table and all(f"needs float64 (a float64 gradcheck), {lacks}" in s for s in table), skips
    nn = [s for s in skips if "test_activation.py" in s]
    assert len(nn) == 1 and "needs float64 (float64 data" in nn[0] and lacks in nn[0], skips


def test_a_float64_type_error_is_a_failure_not_a_skip() -> None:
    # named outside ``test_*.py`` so no other run collects it; pytest takes a named file anyway
    path = os.path.join(HERE, f"upcast_probe_{os.getpid()}.py")
    with open(path, "w") as f:  # a test that (wrongly) builds float64 on the gpu stream
        f.write("import lucid\n\ndef test_upcast():\n"
                "    lucid.ones(2, device='gpu').double()\n")
    try:
        r = _pytest(path)
    finally:
        os.remove(path)
    assert r.returncode == 1 and "1 failed" in r.stdout, r.stdout[-3000:]
    assert "float64 is not supported on the MLX cpu device" in r.stdout


@pytest.mark.float64("a marked test")
def test_the_float64_mark_is_honoured_here() -> None:
    """Runs where the stream has float64 (here); skipped with its reason elsewhere."""
    assert lucid.ones(2, dtype=lucid.float64, device="gpu").dtype is lucid.float64
