"""Floating-point exceptions give IEEE results silently, as in torch.

``x / 0``, ``log(0)`` or an overflow inside lucid return inf/NaN as torch does, but numpy
also warns ("divide by zero encountered in divide") from the lucid file that called it.
``configure`` ignores numpy's floating-point RuntimeWarnings raised from lucid's own modules
(a warnings filter: no cost until a warning is raised, and a user's own numpy calls still
warn). ``quiet`` silences a numpy reduction of an empty slice, whose "Mean of empty slice"
is raised from numpy's own files.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

import numpy as np

_FP_MESSAGE = r"(divide by zero|invalid value|overflow|underflow) encountered in"


def configure() -> None:
    """Install the filter once (a second call finds it in place)."""
    warnings.filterwarnings("ignore", message=_FP_MESSAGE, category=RuntimeWarning,
                            module=r"lucid\.")


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """No floating-point warnings inside (numpy's reductions of empty slices)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield
