"""``lucid.version``: build facts, as ``torch.version``.

Example::

    lucid.version.__version__    # "0.1.0"
    lucid.version.cuda           # None: lucid is not built against CUDA (its "gpu" runs on MLX)
"""

from __future__ import annotations

from ._version import __version__

__all__ = ["__version__", "cuda", "hip", "git_version", "debug"]

cuda: str | None = None  # no CUDA toolkit build: the "gpu" device runs on MLX
hip: str | None = None
git_version = "unknown"  # lucid is a pure-Python package; no build stamps a commit here
debug = False
