"""Process-wide runtime settings with PyTorch's names: thread counts
(``set_num_threads`` / ``get_num_threads``, the inter-op count) and the deterministic
algorithms switch.

Determinism: lucid's ops give the same results run after run for the same inputs, thread
count and device. Its kernels split work into fixed chunks, reduce in a fixed order and
scatter-add with a fixed order (numpy's ``add.at``); nothing races on a shared output.
``use_deterministic_algorithms(True)`` changes one thing and never raises: a kernel missing
from the disk cache is compiled (by the background helper, ``lucid/_background_compile.py``)
and loaded from the cache before its op runs, where by default its op runs on the numpy
reference meanwhile; so a seeded run gives the same bits with a cold cache and a warm one.
The setting is recorded so ``are_deterministic_algorithms_enabled()`` reports it, as PyTorch
scripts expect. Results may differ between thread counts (another
reduction split) and devices.
"""

from __future__ import annotations

import os

from . import _background_compile
from .kernels import _threads

__all__ = [
    "are_deterministic_algorithms_enabled", "get_deterministic_debug_mode",
    "get_num_interop_threads", "get_num_threads", "is_deterministic_algorithms_warn_only_enabled",
    "is_warn_always_enabled", "set_deterministic_debug_mode", "set_num_interop_threads",
    "set_num_threads", "set_warn_always", "use_deterministic_algorithms",
]

_SETTINGS = {"deterministic": False, "warn_only": False, "warn_always": False,
             "interop_threads": os.cpu_count() or 1, "interop_set": False}

def set_num_threads(int: int) -> None:  # noqa: A002  (torch's argument name)
    """Use ``int`` threads for intra-op parallelism: numba's parallel kernels (capped at
    numba's pool size, ``NUMBA_NUM_THREADS``; numba keeps the count per Python thread) and
    OpenBLAS (process-wide), as ``torch.set_num_threads``.

    Example::

        lucid.set_num_threads(1)
        lucid.get_num_threads()     # 1
    """
    if isinstance(int, bool) or not hasattr(int, "__index__"):
        raise TypeError(f"set_num_threads(): argument 'int' (position 1) must be int, not "
                        f"{type(int).__name__}")
    n = int.__index__()
    if n < 1:
        raise RuntimeError("set_num_threads expects a positive integer")
    _threads.set_num_threads(n)
    _SETTINGS["num_threads"] = n


def get_num_threads() -> int:
    """The number of threads lucid's parallel kernels use (in the calling thread)."""
    return _threads.get_num_threads()


def set_num_interop_threads(int: int) -> None:  # noqa: A002  (torch's argument name)
    """Set the inter-op thread count, once, as ``torch.set_num_interop_threads``. lucid runs
    ops one after another in the calling thread (no inter-op pool), so the value is only
    recorded and reported by ``get_num_interop_threads``."""
    if isinstance(int, bool) or not hasattr(int, "__index__"):
        raise TypeError(f"set_num_interop_threads(): argument 'int' (position 1) must be int, "
                        f"not {type(int).__name__}")
    n = int.__index__()
    if n < 1:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _SETTINGS["interop_set"]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _SETTINGS.update(interop_threads=n, interop_set=True)


def get_num_interop_threads() -> int:
    """The recorded inter-op thread count (the core count unless set)."""
    return int(_SETTINGS["interop_threads"])


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms, as ``torch.use_deterministic_algorithms``. lucid's
    ops are deterministic already (see this module's notes); on a cold kernel cache each
    kernel now compiles before its op runs instead of in the background. The setting is
    recorded.

    Example::

        lucid.use_deterministic_algorithms(True)
        lucid.are_deterministic_algorithms_enabled()    # True
    """
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    _SETTINGS.update(deterministic=mode, warn_only=bool(warn_only))
    _background_compile.set_deterministic(mode)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in effect."""
    return bool(_SETTINGS["deterministic"])


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether deterministic mode was set with ``warn_only=True``."""
    return bool(_SETTINGS["warn_only"])


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """``use_deterministic_algorithms`` by level, as torch's: "default"/0 off, "warn"/1 on
    with ``warn_only=True``, "error"/2 on."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """0, 1 or 2: the level ``set_deterministic_debug_mode`` sets (see there)."""
    if not are_deterministic_algorithms_enabled():
        return 0
    return 1 if is_deterministic_algorithms_warn_only_enabled() else 2


def set_warn_always(b: bool) -> None:
    """Record torch's "warn always" flag: lucid's warnings go through Python's ``warnings``
    filters, which decide how often each appears; the flag is reported back as set."""
    _SETTINGS["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    """Whether ``set_warn_always(True)`` is in effect."""
    return bool(_SETTINGS["warn_always"])
