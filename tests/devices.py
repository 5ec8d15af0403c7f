"""The devices backend-parametrized tests run on: "cpu", the plain-numpy reference backend and,
where MLX is installed, "gpu". A gpu stream without float64 (Metal, CUDA) runs float32
variants, and only the tests that need float64 are skipped there."""

from __future__ import annotations

import functools
import importlib.util
import inspect
import os
import warnings

import pytest

BACKENDS = ("cpu", "numpy")
HAS_MLX = importlib.util.find_spec("mlx") is not None
DEVICES = BACKENDS + (("gpu",) if HAS_MLX else ())


@functools.cache
def gpu_backend() -> object:
    """The gpu backend; its one-time "MLX's CPU stream" warning is expected in tests.
    ``LUCID_TEST_GPU_NO_FLOAT64=1`` makes it refuse float64 as Metal and CUDA do, so the
    float32 path of the suite can be exercised on MLX's CPU stream too."""
    from lucid.backend import get_backend  # NOTE: only where mlx is installed

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        be = get_backend("gpu")
    if os.environ.get("LUCID_TEST_GPU_NO_FLOAT64") == "1":
        be.float64 = False
    return be


def gpu_float64() -> bool:
    """Whether the gpu stream has float64 (MLX's CPU stream does; Metal and CUDA do not)."""
    return bool(gpu_backend().float64)  # type: ignore[attr-defined]


def float64_need(item: pytest.Item, float64_dirs: tuple[str, ...] = ()) -> str | None:
    """Why a test needs float64, or None: its ``float64`` mark's reason, a folder of float64
    data against float64 references (``float64_dirs``), or a gradcheck in its body (float64
    by definition)."""
    mark = item.get_closest_marker("float64")
    if mark is not None:
        return str(mark.args[0]) if mark.args else "float64 data"
    if float64_dirs and str(item.path).startswith(float64_dirs):
        return "float64 data against float64 numpy references"
    fn = getattr(item, "function", None)
    return "a float64 gradcheck" if fn is not None and "gradcheck(" in source(fn) else None


@functools.cache
def source(fn: object) -> str:
    """A test function's source, read once however many parametrized items share it."""
    try:
        return inspect.getsource(fn)  # type: ignore[arg-type]
    except (OSError, TypeError):
        return ""
