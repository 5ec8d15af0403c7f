"""Ops that combine or rearrange whole tensors: ``tensordot``, ``kron``, ``block_diag``,
``cartesian_prod``, ``combinations``, ``meshgrid``, ``rot90`` and ``cdist``.

All are differentiable: every one but ``cdist`` is written with lucid ops, so gradients come
from those; ``cdist`` is one op with its own backward (zero gradient where a distance or a
coordinate difference is zero, as PyTorch).
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any

import numpy as np

from .. import _dtype
from .._dims import norm_dim
from .._tensor import Tensor
from ..autograd.function import Op
from ..backend import get_backend
from ._util import broadcast_shapes, cast, wrap
from .elementwise import mul
from .index import index_select
from .matmul import matmul
from .movement import cat, flip, pad, stack
from .shape import expand, permute, reshape, transpose


def _dims_list(dims: Any) -> tuple[list[int], list[int]] | int:
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)):
        return int(dims)
    if len(dims) != 2:
        raise RuntimeError("tensordot expects dims to be a pair of lists of dimensions")
    a, b = ([d] if isinstance(d, int) else list(d) for d in dims)
    return a, b


def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Any = None) -> Tensor:
    """Sum products over the dims ``dims`` of ``a`` and ``b``: an int ``n`` contracts the
    last ``n`` dims of ``a`` with the first ``n`` of ``b``; a pair of lists names them.

    Example::

        a, b = lucid.randn(2, 3, 4), lucid.randn(4, 3, 5)
        lucid.tensordot(a, b, dims=([1, 2], [1, 0])).shape    # (2, 5)
    """
    spec = _dims_list(dims)
    if isinstance(spec, int):
        if spec < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={spec}")
        if spec > a.ndim or spec > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={spec}")
        da, db = list(range(a.ndim - spec, a.ndim)), list(range(spec))
    else:
        da, db = spec
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    da = [norm_dim(d, a.ndim) for d in da]
    db = [norm_dim(d, b.ndim) for d in db]
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[x]} in dim {x} and second has size {b.shape[y]} in "
                               f"dim {y}")
    fa = [d for d in range(a.ndim) if d not in da]
    fb = [d for d in range(b.ndim) if d not in db]
    k = math.prod(a.shape[d] for d in da)
    ma = reshape(permute(a, *(fa + da)), (math.prod(a.shape[d] for d in fa), k))
    mb = reshape(permute(b, *(db + fb)), (k, math.prod(b.shape[d] for d in fb)))
    return reshape(matmul(ma, mb), tuple(a.shape[d] for d in fa) + tuple(b.shape[d] for d in fb))


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: ``out[i*m + k, j*n + l] = input[i, j] * other[k, l]`` (any
    number of dims, the shorter shape padded with leading 1s).

    Example::

        lucid.kron(lucid.eye(2), lucid.ones(2, 2))   # 4x4 block-diagonal of ones
    """
    n = max(input.ndim, other.ndim)
    sa = (1,) * (n - input.ndim) + tuple(input.shape)
    sb = (1,) * (n - other.ndim) + tuple(other.shape)
    a = reshape(input, tuple(x for s in sa for x in (s, 1)))
    b = reshape(other, tuple(x for s in sb for x in (1, s)))
    return reshape(mul(a, b), tuple(x * y for x, y in zip(sa, sb)))


def block_diag(*tensors: Tensor) -> Tensor:
    """A block-diagonal matrix of the given tensors (0-d: 1x1, 1-d: one row).

    Example::

        lucid.block_diag(lucid.ones(1, 1), lucid.tensor([[2.0, 3.0]]))
        # tensor([[1., 0., 0.], [0., 2., 3.]])
    """
    mats = []
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"block_diag(): argument 'tensors' must be tuple of Tensors, not "
                            f"{type(t).__name__}")
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.ndim} dimensions")
        mats.append(reshape(t, (1, 1)) if t.ndim == 0 else
                    reshape(t, (1, t.shape[0])) if t.ndim == 1 else t)
    if not mats:
        be = get_backend("cpu")
        return wrap(be.zeros((1, 0), _dtype.get_default_dtype()), be)
    d = _dtype.result_type(*mats)
    width = sum(m.shape[1] for m in mats)
    rows, col = [], 0
    for m in mats:
        rows.append(pad(cast(m, d), (col, width - col - m.shape[1])))
        col += m.shape[1]
    return cat(rows, 0)


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D tensors: with ``indexing="ij"`` output ``k`` varies along
    dim ``k``; ``"xy"`` swaps the first two dims (numpy's default). Without ``indexing``
    PyTorch's "ij" is used, with its warning.

    Example::

        gx, gy = lucid.meshgrid(lucid.arange(2), lucid.arange(3), indexing="ij")  # 2x3 each
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f"received: {indexing}")
    if not tensors:
        raise RuntimeError("torch.meshgrid: Expected at least one tensor")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"meshgrid(): expected Tensor, got {type(t).__name__}")
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {list(t.shape)}")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("torch.meshgrid: Expected all tensors in the tensor list to have "
                               "the same dtype.")
    flat = [reshape(t, (-1,)) for t in tensors]
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = tuple(f.shape[0] for f in flat)
    n = len(flat)
    out = [expand(reshape(f, (1,) * k + (-1,) + (1,) * (n - k - 1)), *shape)
           for k, f in enumerate(flat)]
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """The Cartesian product of 1-D tensors: one row per combination (itertools.product
    order); a single tensor is returned as it is.

    Example::

        lucid.cartesian_prod(lucid.tensor([1, 2]), lucid.tensor([3, 4]))
        # tensor([[1, 3], [1, 4], [2, 3], [2, 4]])
    """
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([reshape(g, (-1,)) for g in grids], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """All length-``r`` combinations of the elements of the 1-D ``input``, one per row
    (itertools.combinations order; ``with_replacement``: combinations_with_replacement).

    Example::

        lucid.combinations(lucid.tensor([1, 2, 3]))   # tensor([[1, 2], [1, 3], [2, 3]])
    """
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input[0:0]
    fn = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(fn(range(input.shape[0]), r)), np.int64).reshape(-1)
    be = input._be
    picked = index_select(input, 0, wrap(be.from_numpy(idx), be))
    return reshape(picked, (-1, r))


def rot90(input: Tensor, k: int = 1, dims: Any = (0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``, from the first towards
    the second.

    Example::

        lucid.rot90(lucid.tensor([[0, 1], [2, 3]]))   # tensor([[1, 3], [0, 2]])
    """
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = norm_dim(dims[0], input.ndim), norm_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k %= 4
    if k == 2:
        return flip(input, [d0, d1])
    if k == 0:
        return input.clone()
    out = transpose(flip(input, [d1 if k == 1 else d0]), d0, d1)
    # torch's flip keeps the input's layout, so a quarter turn of an input stored transposed
    # in the plane comes back row-major (and of a row-major input, transposed)
    if not input.is_contiguous() and transpose(input, d0, d1).is_contiguous():
        return out.contiguous()
    return out


class Cdist(Op):
    """Pairwise p-norm distances between the rows of ``x1`` (..., P, M) and ``x2``
    (..., R, M), batch dims already broadcast."""

    def forward(self, x1, x2, p, use_mm):
        be = self.be
        self.p = p
        m = x1.shape[-1]
        if m == 0:
            out = be.zeros(tuple(x1.shape[:-1]) + (x2.shape[-2],), be.dtype_of(x1))
        elif p == 2 and use_mm:
            sq = be.add(be.expand_dims(be.sum(be.mul(x1, x1), -1), -1),
                        be.expand_dims(be.sum(be.mul(x2, x2), -1), -2))
            cross = be.matmul(x1, be.swapaxes(x2, -1, -2))
            out = be.sqrt(be.maximum(be.sub(sq, be.mul(cross, 2)), 0))
        else:
            diff = be.sub(be.expand_dims(x1, -2), be.expand_dims(x2, -3))
            ad = be.abs(diff)
            if p == 0:  # min(ceil(|d|), 1) counts the non-zero d, with NaN for a NaN d
                out = be.sum(be.minimum(be.ceil(ad), 1), -1)
            elif p == 1:
                out = be.sum(ad, -1)
            elif p == 2:
                out = be.sqrt(be.sum(be.mul(ad, ad), -1))
            elif math.isinf(p):  # torch's max(agg, |d|) from 0 passes over NaN
                out = be.max(be.where(be.isnan(ad), 0, ad), -1)
            else:
                out = be.pow(be.sum(be.pow(ad, p), -1), 1.0 / p)
            out = be.contiguous(out)  # the sums keep a transposed x1's layout
        self.saved = (x1, x2, out)
        return out

    def backward(self, g):
        be, p = self.be, self.p
        x1, x2, d = self.saved
        if p == 0 or x1.shape[-1] == 0:
            return be.zeros_like(x1), be.zeros_like(x2), None, None
        zero = be.eq(d, 0)
        if p == 2:
            gd = be.where(zero, 0, be.div(g, be.where(zero, 1, d)))
            g1 = be.sub(be.mul(x1, be.expand_dims(be.sum(gd, -1), -1)), be.matmul(gd, x2))
            g2 = be.sub(be.mul(x2, be.expand_dims(be.sum(gd, -2), -1)),
                        be.matmul(be.swapaxes(gd, -1, -2), x1))
            return g1, g2, None, None
        diff = be.sub(be.expand_dims(x1, -2), be.expand_dims(x2, -3))
        ad, sg = be.abs(diff), be.sign(diff)
        ge = be.expand_dims(g, -1)
        if p == 1:
            gdiff = be.mul(ge, sg)
        elif math.isinf(p):  # (a NaN coordinate gets a NaN gradient, as in torch)
            gdiff = be.mul(be.mul(ge, sg), be.eq(ad, be.expand_dims(d, -1)))
            gdiff = be.where(be.isnan(diff), diff, gdiff)
        else:
            de = be.expand_dims(be.where(zero, 1, d), -1)
            ratio = be.div(be.where(be.eq(ad, 0), 1, ad), de)
            gdiff = be.mul(be.mul(ge, sg), be.pow(ratio, p - 1))
            gdiff = be.where(be.logical_or(be.eq(ad, 0), be.expand_dims(zero, -1)), 0, gdiff)
        return be.sum(gdiff, -2), be.neg(be.sum(gdiff, -3)), None, None


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """Pairwise ``p``-norm distances between the rows of ``x1`` (B, P, M) and ``x2``
    (B, R, M): a (B, P, R) tensor; batch dims broadcast.

    Example::

        lucid.cdist(lucid.tensor([[0.0, 0.0]]), lucid.tensor([[3.0, 4.0]]))   # tensor([[5.]])
    """
    for name, t in (("X1", x1), ("X2", x2)):
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_dtype.torch_name(t.dtype)}")
        if t.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{t.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {_dtype.torch_name(x1.dtype)} but found "
                           f"{_dtype.torch_name(x2.dtype)}")
    modes = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
             "donot_use_mm_for_euclid_dist")
    if compute_mode not in modes:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    batch = broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    a = expand(x1, *(batch + tuple(x1.shape[-2:])))
    b = expand(x2, *(batch + tuple(x2.shape[-2:])))
    use_mm = compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode == modes[0] and (x1.shape[-2] > 25 or x2.shape[-2] > 25))
    return Cdist.apply(a, b, float(p), use_mm)


__all__ = [
    "block_diag", "cartesian_prod", "cdist", "combinations", "kron", "meshgrid", "rot90",
    "tensordot"
]
