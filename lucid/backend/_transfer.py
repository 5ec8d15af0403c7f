"""Moving arrays between backends: the one place that pairs ``to_numpy`` with ``from_numpy``.

Every backend converts to and from numpy, so a move goes through a host array. Whether that
already copies depends on the pair: the numpy-backed backends ("cpu", "numpy") hand arrays
through unchanged, the "gpu" backend copies on the way in and out. ``copy`` states what the
caller needs, and a copy is made only where the pair would otherwise share memory.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["transfer"]


def transfer(arr: Any, src: Any, dst: Any, copy: bool) -> Any:
    """``arr`` (an array of backend ``src``) as an array of backend ``dst``, same values and
    dtype.

    ``copy=True``: the result never shares memory with ``arr`` (a new leaf's storage).
    ``copy=False``: it may share it where both backends hold numpy arrays (a differentiable
    device move, an index used at once).

    Example::

        gpu = get_backend("gpu")
        y = transfer(x, get_backend("cpu"), gpu, copy=False)
    """
    if src is dst:
        return src.copy(arr) if copy else arr
    host = src.to_numpy(arr)
    out = dst.from_numpy(host)
    if copy and isinstance(out, np.ndarray) and isinstance(arr, np.ndarray) \
            and np.may_share_memory(out, arr):
        out = dst.from_numpy(np.array(host))
    return out
