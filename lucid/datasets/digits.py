"""The UCI handwritten digits: 1797 8x8 grey-scale images of the digits 0-9.

Shipped with lucid (``data/digits.csv.gz``, CC BY 4.0; see ``data/DIGITS_LICENSE.txt``).
"""

from __future__ import annotations

import gzip
from importlib import resources
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..ops.creation import tensor


def _raw() -> np.ndarray:
    ref = resources.files(__package__).joinpath("data/digits.csv.gz")
    with ref.open("rb") as fh, gzip.open(fh, "rt") as text:
        return np.loadtxt(text, delimiter=",", dtype=np.float32)


def load_digits(test_fraction: float = 0.2, seed: int = 0, normalize: bool = True,
                as_images: bool = True, device: Any = None
                ) -> tuple[tuple[Tensor, Tensor], tuple[Tensor, Tensor]]:
    """The digits as ``((x_train, y_train), (x_test, y_test))`` tensors.

    Images are float32 of shape (N, 1, 8, 8) (or (N, 64) with ``as_images=False``), scaled
    to [0, 1] when ``normalize``; labels are int64. The split is stratified by class and
    reproducible from ``seed``.

    Example::

        (xtr, ytr), (xte, yte) = lucid.datasets.load_digits()
        xtr.shape        # lucid.Size([1437, 1, 8, 8])
    """
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    data = _raw()
    x, y = data[:, :-1], data[:, -1].astype(np.int64)
    if normalize:
        x = x / np.float32(16.0)
    rng = np.random.default_rng(seed)
    test_idx = []
    for c in range(10):
        idx = np.flatnonzero(y == c)
        rng.shuffle(idx)
        test_idx.append(idx[: int(round(len(idx) * test_fraction))])
    test = np.zeros(len(y), bool)
    test[np.concatenate(test_idx)] = True
    train_idx = rng.permutation(np.flatnonzero(~test))
    test_idx_all = rng.permutation(np.flatnonzero(test))
    shape = (-1, 1, 8, 8) if as_images else (-1, 64)

    def part(ix: np.ndarray) -> tuple[Tensor, Tensor]:
        return (tensor(x[ix].reshape(shape), device=device),
                tensor(y[ix], device=device))

    return part(train_idx), part(test_idx_all)
