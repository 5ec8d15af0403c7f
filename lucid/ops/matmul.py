"""Matrix products: matmul/@ (1-D, 2-D, batched with broadcast batch dims), mm, bmm, dot,
outer, mv, and the fused ``linear``."""

from __future__ import annotations

from typing import Any

from .. import _dtype
from .._dtype import bool_, c10_name
from .._tensor import Tensor
from ..autograd.function import Op, _device_mismatch
from . import _autocast as _ac
from . import elementwise as _e
from . import reduce as _r
from . import shape as _s
from ._util import broadcast_error, broadcast_shapes, cast, sum_to
from .shape import unsqueeze


def _fmt(shape: tuple[int, ...]) -> str:
    return "x".join(str(s) for s in shape)


class MatMul(Op):
    def forward(self, a, b):
        p = self.parents
        # each operand is read only for the other's gradient, so only then is it saved (and
        # covered by the version check), as by torch's MmBackward
        self.saved = (a if p[1] is not None else None, b if p[0] is not None else None)
        self.shapes = (a.shape, b.shape)
        return self.be.matmul(a, b)

    def backward(self, g):
        be = self.be
        a, b = self.saved
        sa, sb = self.shapes
        na, nb = len(sa), len(sb)
        if na == 1 and nb == 1:
            g2 = be.reshape(g, (1, 1))
        elif na == 1:
            g2 = be.expand_dims(g, -2)
        elif nb == 1:
            g2 = be.expand_dims(g, -1)
        else:
            g2 = g
        ga = gb = None
        if self.parents[0] is not None:
            b2 = be.expand_dims(b, 1) if nb == 1 else b
            ga = be.matmul(g2, be.swapaxes(b2, -1, -2))
            ga = be.reshape(sum_to(be, ga, (1, sa[0]) if na == 1 else sa), sa)
        if self.parents[1] is not None:
            a2 = be.expand_dims(a, 0) if na == 1 else a
            gb = be.matmul(be.swapaxes(a2, -1, -2), g2)
            gb = be.reshape(sum_to(be, gb, (sb[0], 1) if nb == 1 else sb), sb)
        return ga, gb


def _check_dtypes(a: Tensor, b: Tensor) -> None:
    if a._be is not b._be:
        _device_mismatch(a._be, b._be)
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {c10_name(a.dtype)} != "
            f"{c10_name(b.dtype)}"
        )


def _prod(xs: Any) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


def _batch(sa: tuple[int, ...], sb: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast batch dims of a matmul, with PyTorch's message when they clash."""
    ba, bb = tuple(sa[:-2]), tuple(sb[:-2])
    err = broadcast_error(_Shape(ba), _Shape(bb))
    if err is not None:
        raise err
    return broadcast_shapes(ba, bb)


class _Shape:
    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with PyTorch's rules for 1-D operands and broadcast batch dims.

    Example::

        lucid.randn(8, 4, 3) @ lucid.randn(3, 5)      # shape (8, 4, 5)
    """
    if input.__class__ is not Tensor and hasattr(input, "_sparse_matmul"):
        return input._sparse_matmul(other)  # a sparse COO left operand (ops/sparse_coo.py)
    if other.__class__ is not Tensor and hasattr(other, "_sparse_rmatmul"):
        return other._sparse_rmatmul(input)  # a sparse COO right operand
    if _ac.state.on:
        input, other = _ac.cast("matmul", input, other)
    return _matmul(input, other)


def _matmul(input: Tensor, other: Tensor) -> Tensor:
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError(
            f"matmul(): argument 'other' must be Tensor, not "
            f"{type(other if isinstance(input, Tensor) else input).__name__}"
        )
    _check_dtypes(input, other)
    sa, sb = input.shape, other.shape
    if not len(sa) or not len(sb):
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {len(sa)}D and "
            f"{len(sb)}D"
        )
    k_a = sa[-1]
    k_b = sb[0] if len(sb) == 1 else sb[-2]
    if k_a != k_b:
        if len(sa) == 1 and len(sb) == 1:
            raise RuntimeError(
                f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to have "
                f"the same number of elements, but got {sa[0]} and {sb[0]} elements respectively"
            )
        rows = _prod(sa[:-1])  # PyTorch folds the batch dims of input into rows
        if len(sb) == 1:
            raise RuntimeError(
                f"size mismatch, got input ({rows}), mat ({rows}x{k_a}), vec ({sb[0]})"
            )
        if len(sb) == 2:
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k_a} and {_fmt(sb)})"
            )
        n = _prod(_batch(sa, sb))
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{n}, {k_a}] but "
            f"got: [{n}, {k_b}]."
        )
    if len(sa) > 2 and len(sb) > 2:
        _batch(sa, sb)
    if input.dtype is bool_ and input.numel() and other.numel():
        kernel = ("dot" if len(sa) == 1 else "addmv_impl_cpu") if len(sb) == 1 else \
            "bmm" if len(sb) > 2 else "addmm_impl_cpu_"
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    return MatMul.apply(input, other)


def out_dtype_operands(name: str, out_dtype: Any, *operands: Tensor) -> tuple[Tensor, ...]:
    """The operands of ``mm``/``bmm``/``addmm``/``baddbmm`` with ``out_dtype=``, cast to it.
    torch's CUDA contract, which lucid keeps on every device: ``out_dtype`` is the inputs'
    dtype, or float32 for float16/bfloat16 inputs (the product then accumulates and rounds
    in float32). torch's CPU backend refuses every ``out_dtype``."""
    d = _dtype.to_dtype(out_dtype)
    src = operands[-2].dtype
    if d is not src and not (d is _dtype.float32 and src in (_dtype.float16, _dtype.bfloat16)):
        raise RuntimeError(f"{name}: out_dtype must be the same as input dtype or fp32 for "
                           "fp16/bf16 inputs")
    return tuple(cast(t, d) for t in operands)


def mm(input: Tensor, mat2: Tensor, *, out_dtype: Any = None) -> Tensor:
    """2-D matrix product; ``out_dtype=lucid.float32`` gives float16/bfloat16 inputs a
    float32 product (see ``out_dtype_operands``)."""
    if input.ndim != 2:
        raise RuntimeError(f"self must be a matrix, got {input.ndim}-D tensor")
    if mat2.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {mat2.ndim}-D tensor")
    if out_dtype is not None:
        input, mat2 = out_dtype_operands("mm", out_dtype, input, mat2)
    return matmul(input, mat2)


def bmm(input: Tensor, mat2: Tensor, *, out_dtype: Any = None) -> Tensor:
    """Batched matrix product of two 3-D tensors with equal batch size; ``out_dtype`` as
    ``mm``'s."""
    if out_dtype is not None:
        if input.dtype is not mat2.dtype:
            raise RuntimeError(f"expected scalar type {c10_name(input.dtype)} but found "
                               f"{c10_name(mat2.dtype)}")
        input, mat2 = out_dtype_operands("bmm", out_dtype, input, mat2)
    if input.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor, got {input.ndim}-D")
    if mat2.ndim != 3:
        raise RuntimeError(f"batch2 must be a 3D tensor, got {mat2.ndim}-D")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}]."
        )
    return matmul(input, mat2)


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """The dot product of two 1-D tensors."""
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D tensors"
        )
    if _ac.state.on:
        input, tensor = _ac.cast("dot", input, tensor)
    return _matmul(input, tensor)


def inner(input: Tensor, other: Tensor) -> Tensor:
    """The sum of products over the last dims: ``dot`` for 1-D tensors, else a tensor of
    shape ``input.shape[:-1] + other.shape[:-1]`` (a product with a 0-D tensor is
    elementwise)."""
    if not input.ndim or not other.ndim:
        return _e.mul(input, other)
    k = input.shape[-1]
    if other.shape[-1] != k:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    if input.ndim == 1 and other.ndim == 1:
        return dot(input, other)
    out = matmul(_s.reshape(input, -1, k), _s.transpose(_s.reshape(other, -1, k), 0, 1))
    return _s.reshape(out, *input.shape[:-1], *other.shape[:-1])


def mv(input: Tensor, vec: Tensor) -> Tensor:
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got {input.ndim}, {vec.ndim}"
        )
    if _ac.state.on:
        input, vec = _ac.cast("mv", input, vec)
    return _matmul(input, vec)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """``input[:, None] * vec2[None, :]``; mixed dtypes promote as torch's (an elementwise
    product there)."""
    if input.dtype is not vec2.dtype:
        d = _dtype.promote_types(input.dtype, vec2.dtype)
        input, vec2 = cast(input, d), cast(vec2, d)
    return _matmul(unsqueeze(input, 1), unsqueeze(vec2, 0))


ger = outer


class Linear(Op):
    """``x @ W.T + b`` in one node: one GEMM forward, two GEMMs and a sum backward."""

    def forward(self, x, w, b):
        be = self.be
        p = self.parents
        # x is read only for W's gradient and W only for x's: saved (and covered by the
        # version check) only then, as torch's addmm saves them
        self.saved = (x if p[1] is not None else None, w if p[0] is not None else None)
        self.xs = x.shape
        self.has_b = b is not None
        wt = be.swapaxes(w, -1, -2)
        # with a bias: the product and the bias in one backend call (no second
        # activation-sized buffer; BLAS accumulates onto the bias where it can)
        return be.matmul(x, wt) if b is None else be.addmm(b, x, wt)

    def backward(self, g):
        be = self.be
        x, w = self.saved
        xs = self.xs
        p = self.parents
        gb = None
        if self.has_b and p[2] is not None:  # first, while g is in cache (nanoGPT: -0.2 ms)
            gb = be.sum(g, tuple(range(g.ndim - 1)), False) if g.ndim > 1 else g
        if p[1] is None or len(xs) == 1:
            gx = be.matmul(g, w) if p[0] is not None else None
            gw = None if p[1] is None else be.matmul(be.expand_dims(g, -1), be.expand_dims(x, 0))
            return gx, gw, gb
        if len(xs) == 2:
            g2, x2 = g, x
        else:  # rows counted, not inferred: a -1 is ambiguous when a dim is 0
            rows = _prod(xs[:-1])
            g2, x2 = be.reshape(g, (rows, g.shape[-1])), be.reshape(x, (rows, xs[-1]))
        gt = be.swapaxes(g2, 0, 1)
        if p[0] is None:
            return None, be.matmul(gt, x2), gb
        # both products at once: the backend may run them side by side
        gx, gw = be.matmul_pair(g2, w, gt, x2)
        return be.reshape(gx, xs), gw, gb


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``, as ``torch.nn.functional.linear``."""
    if _ac.state.on:
        input, weight, bias = _ac.cast("linear", input, weight, bias)
    xs, ws = input._data.shape, weight._data.shape
    if len(ws) != 2 or not xs or xs[-1] != ws[1]:
        a2 = (input.numel() // max(input.shape[-1], 1), input.shape[-1]) if input.ndim else ()
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_fmt(a2)} and "
            f"{_fmt(tuple(reversed(weight.shape)))})"
        )
    _check_dtypes(input, weight)
    if bias is not None:
        _check_dtypes(input, bias)
    return Linear.apply(input, weight, bias)


__all__ = [
    "bilinear", "bmm", "dot", "ger", "inner", "linear", "matmul", "mm", "mv", "outer"
]


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    """``y[..., o] = x1[..., :] @ weight[o] @ x2[..., :] + bias[o]``.

    Example::

        y = bilinear(lucid.randn(4, 3), lucid.randn(4, 5), lucid.randn(2, 3, 5))   # (4, 2)
    """
    if _ac.state.on:
        input1, input2, weight, bias = _ac.cast("bilinear", input1, input2, weight, bias)
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D, got {weight.ndim}-D")
    o, i1, i2 = weight.shape
    if input1.shape[-1] != i1 or input2.shape[-1] != i2 or \
            tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise RuntimeError(
            f"bilinear(): input sizes do not match the weight: input1 {list(input1.shape)}, "
            f"input2 {list(input2.shape)}, weight {list(weight.shape)}")
    lead = tuple(input1.shape[:-1])
    n = _prod(lead)
    x1 = _s.reshape(input1, n, i1)  # explicit sizes: any of them may be 0
    x2 = _s.reshape(input2, n, 1, i2)
    w = _s.reshape(_s.permute(weight, 1, 0, 2), i1, o * i2)
    t = _s.reshape(_matmul(x1, w), n, o, i2)
    y = _r.sum(_e.mul(t, x2), -1)
    if bias is not None:
        y = _e.add(y, bias)
    return _s.reshape(y, *lead, o)
