"""op_db entries for the nn functions that are other forms of table ops: ``upsample``,
``upsample_nearest`` and ``upsample_bilinear`` (torch's legacy names for ``interpolate``),
``native_channel_shuffle`` (``channel_shuffle``'s kernel), ``pdist`` (the condensed distances
within one set, ``cdist``'s upper triangle) and ``linear_cross_entropy`` (``cross_entropy``
of ``linear``), each with a numpy reference and torch's errors. They join ``OP_DB`` through
``op_db.py``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from op_db_loss import np_cross_entropy
from op_db_nn import np_interpolate
from opinfo import ErrorInput, OpInfo, Sample, T, U, exact

import lucid.nn.functional as F

# ---- upsample -----------------------------------------------------------------------------


def _upsample_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (1, 2, 3, 2))), size=(4, 3))
    yield Sample(T(U(rng, (2, 1, 2, 3)), "t"), scale_factor=2)
    yield Sample(T(U(rng, (1, 2, 3))), scale_factor=1.7, mode="linear")
    yield Sample(T(U(rng, (1, 2, 4, 3))), (3, 5), None, "bilinear", True)
    yield Sample(T(U(rng, (1, 2, 4, 3))), size=(6, 5), mode="bilinear", align_corners=False)
    yield Sample(T(U(rng, (1, 1, 2, 3, 2))), size=(3, 4, 3), mode="trilinear",
                 align_corners=False)
    yield Sample(T(U(rng, (1, 1, 2, 2, 3))), scale_factor=(2, 1.5, 1), name="nearest_3d")


def _upsample_nearest_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (1, 2, 3, 2))), (4, 3))
    yield Sample(T(U(rng, (2, 1, 5)), "s"), scale_factor=2)
    yield Sample(T(U(rng, (1, 1, 2, 2, 3))), size=3)


def _upsample_bilinear_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (1, 2, 3, 2))), (4, 5))
    yield Sample(T(U(rng, (2, 1, 2, 3)), "t"), scale_factor=2)
    yield Sample(T(U(rng, (1, 1, 4, 4))), size=3)


def _upsample_nearest_ref(x: np.ndarray, size: Any = None, scale_factor: Any = None) -> Any:
    return np_interpolate(x, size, scale_factor, "nearest")


def _upsample_bilinear_ref(x: np.ndarray, size: Any = None, scale_factor: Any = None) -> Any:
    """torch's ``upsample_bilinear`` is ``interpolate(..., "bilinear", align_corners=True)``."""
    return np_interpolate(x, size, scale_factor, "bilinear", True)


# ---- channel shuffle ----------------------------------------------------------------------


def _shuffle_ref(x: np.ndarray, groups: int) -> np.ndarray:
    """Channels (g, c/g) transposed to (c/g, g)."""
    n, c = x.shape[:2]
    return x.reshape(n, groups, c // groups, *x.shape[2:]).swapaxes(1, 2).reshape(x.shape)


def _shuffle_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (2, 6, 3))), 2)
    yield Sample(T(U(rng, (1, 6, 2, 2))), 3)
    yield Sample(T(U(rng, (2, 4, 2, 1, 2)), "t"), 4)
    yield Sample(T(U(rng, (1, 5, 3)), "s"), 1)
    yield Sample(T(U(rng, (0, 4, 3))), 2, name="empty_batch")


# ---- pdist --------------------------------------------------------------------------------


def _pdist_ref(x: np.ndarray, p: float = 2.0) -> np.ndarray:
    """``||x_i - x_j||_p`` for i < j, row by row; p = 0 counts the differing coordinates."""
    n = x.shape[0]
    rows, cols = np.triu_indices(n, 1)
    d = np.abs(x[rows] - x[cols])
    if p == 0:
        return (d != 0).sum(-1).astype(x.dtype)
    if np.isinf(p):
        return d.max(-1, initial=0.0)
    return (d ** p).sum(-1) ** (1.0 / p)


def _pdist_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (4, 3))))
    for p in (1.0, 0.0, 3.0, 0.5, np.inf):
        yield Sample(T(U(rng, (4, 3))), p)
    yield Sample(T(U(rng, (5, 2)), "t"), 2.0)
    yield Sample(T(U(rng, (3, 4)), "s"), 1.5)
    yield Sample(T(U(rng, (1, 3))), name="one_row")
    yield Sample(T(U(rng, (3, 0))), 2.0, name="no_columns")


_PDIST_ERRORS = [
    ErrorInput(lambda m: m.F.pdist(m.zeros(2, 3, 4)), RuntimeError,
               exact("pdist only supports 2D tensors, got: 3D")),
    ErrorInput(lambda m: m.F.pdist(m.zeros(2, 3), p=-1), RuntimeError,
               exact("pdist only supports non-negative p values")),
]

# ---- linear_cross_entropy -----------------------------------------------------------------


def _lce_ref(x: np.ndarray, w: np.ndarray, target: np.ndarray, *, linear_bias: Any = None,
             weight: Any = None, reduction: str = "mean", ignore_index: Any = None,
             label_smoothing: float = 0.0) -> np.ndarray:
    """``cross_entropy(linear(x, w, b), target)``: logits (*batch, C, d...) from a weight
    (C, d..., in_features)."""
    logits = np.tensordot(x, w, axes=([-1], [-1]))
    if linear_bias is not None:
        logits = logits + linear_bias
    return np_cross_entropy(logits, target, weight, reduction=reduction,
                            ignore_index=-100 if ignore_index is None else ignore_index,
                            label_smoothing=label_smoothing)


def _lce_samples(rng: np.random.Generator) -> Iterable[Sample]:
    t = T(np.array([0, 4, -100, 2]))
    cw = T(rng.random(5) + 0.2, grad=False)
    for red in ("mean", "sum", "none"):
        yield Sample(T(U(rng, (4, 3))), T(U(rng, (5, 3))), t, linear_bias=T(U(rng, (5,))),
                     reduction=red)
    yield Sample(T(U(rng, (4, 3))), T(U(rng, (5, 3)), "t"), t, weight=cw, label_smoothing=0.3,
                 name="class_weight_smoothing")
    yield Sample(T(U(rng, (4, 3)), "s"), T(U(rng, (5, 3))), T(np.array([1, 1, 3, 0])),
                 ignore_index=1, reduction="sum", name="ignore_index_1")
    yield Sample(T(U(rng, (3,))), T(U(rng, (5, 3))), T(np.array(3)), name="unbatched")
    yield Sample(T(U(rng, (4, 3))), T(U(rng, (5, 3))), T(rng.dirichlet(np.ones(5), 4)),
                 linear_bias=T(U(rng, (5,))), label_smoothing=0.2, name="probabilities")
    yield Sample(T(U(rng, (2, 3))), T(U(rng, (4, 2, 3))), T(np.array([[0, 3], [2, 1]])),
                 linear_bias=T(U(rng, (4, 2))), reduction="none", name="k_dim")
    # NOTE: no empty batch: cross_entropy's double backward indexes row 0 of its input


_LCE_ERRORS = [
    ErrorInput(lambda m: m.F.linear_cross_entropy(m.zeros(2, 3), m.zeros(4, 5),
                                                  m.zeros(2).long()), RuntimeError,
               exact("expected equal input and linear_weight last dimensions (in_features), "
                     "got 3 and 5, respectively")),
    ErrorInput(lambda m: m.F.linear_cross_entropy(m.zeros(2, 3), m.zeros(4, 3), m.zeros(2, 4),
                                                  ignore_index=1), RuntimeError,
               exact("ignore_index cannot be specified when target contains probabilities")),
    ErrorInput(lambda m: m.F.linear_cross_entropy(m.zeros(2, 2, 3), m.zeros(4, 3),
                                                  m.zeros(2).long()), RuntimeError,
               exact("expected input with dimensionality 1 or 2, got 3")),
]


def _nn(name: str, ref: Any, samples: Any, errors: list | None = None, **kw: Any) -> OpInfo:
    return OpInfo(name, getattr(F, name), ref, samples, torch_op=f"nn.functional.{name}",
                  error_inputs=errors or [], **kw)


NN_VARIANTS: list[OpInfo] = [
    _nn("upsample", np_interpolate, _upsample_samples),
    _nn("upsample_nearest", _upsample_nearest_ref, _upsample_nearest_samples),
    _nn("upsample_bilinear", _upsample_bilinear_ref, _upsample_bilinear_samples),
    # torch_grad=False: torch has no derivative for aten::native_channel_shuffle
    _nn("native_channel_shuffle", _shuffle_ref, _shuffle_samples, torch_grad=False, errors=[
        ErrorInput(lambda m: m.F.native_channel_shuffle(m.zeros(1, 5, 2), 2), RuntimeError,
                   exact("Number of channels must be divisible by groups. Got 5 channels and 2 "
                         "groups."))]),
    _nn("pdist", _pdist_ref, _pdist_samples, _PDIST_ERRORS),
    _nn("linear_cross_entropy", _lce_ref, _lce_samples, _LCE_ERRORS),
]
