"""Indices that a backward reads are covered by the version check, validated before any kernel
reads through them, and bounded as PyTorch bounds them (no negative wrap-around)."""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.kernels import pool as kpool
from lucid.kernels import softmax as ksoftmax

DEVICES = ["cpu", "numpy"] + (["gpu"] if importlib.util.find_spec("mlx") else [])
INPLACE = "modified by an inplace operation"


@pytest.fixture(params=DEVICES)
def dev(request: pytest.FixtureRequest) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the gpu device's one-time "CPU stream" notice
        lucid.zeros(1, device=request.param)
    return request.param


def _ce(dev, edit):
    x = lucid.randn(4, 5, requires_grad=True, device=dev)
    t = lucid.tensor([0, 1, 2, 3], device=dev)
    loss = F.cross_entropy(x, t)
    edit(t)
    loss.backward()


def _nll(dev, edit):
    x = lucid.randn(4, 5, requires_grad=True, device=dev)
    t = lucid.tensor([0, 1, 2, 3], device=dev)
    loss = F.nll_loss(x, t)
    edit(t)
    loss.backward()


def _max_pool(dev, edit):
    x = lucid.randn(1, 2, 4, 4, requires_grad=True, device=dev)
    y, i = F.max_pool2d(x, 2, return_indices=True)
    edit(i.view(-1))
    y.sum().backward()


def _adaptive_max_pool(dev, edit):
    x = lucid.randn(1, 2, 5, 5, requires_grad=True, device=dev)
    y, i = F.adaptive_max_pool2d(x, 2, return_indices=True)
    edit(i.view(-1))
    y.sum().backward()


def _max_pool1d(dev, edit):
    x = lucid.randn(2, 3, 8, requires_grad=True, device=dev)
    y, i = F.max_pool1d(x, 2, return_indices=True)
    edit(i.view(-1))
    y.sum().backward()


def _adaptive_max_pool1d(dev, edit):
    x = lucid.randn(2, 3, 8, requires_grad=True, device=dev)
    y, i = F.adaptive_max_pool1d(x, 3, return_indices=True)
    edit(i.view(-1))
    y.sum().backward()


def _gather(dev, edit):
    x = lucid.randn(4, 5, requires_grad=True, device=dev)
    i = lucid.tensor([[0, 1, 2, 3, 0]], device=dev)
    y = lucid.gather(x, 0, i)
    edit(i.view(-1))
    y.sum().backward()


def _index_select(dev, edit):
    w = lucid.randn(5, 3, requires_grad=True, device=dev)
    i = lucid.tensor([0, 1], device=dev)
    y = lucid.index_select(w, 0, i)
    edit(i)
    y.sum().backward()


def _embedding(dev, edit):
    w = lucid.randn(5, 3, requires_grad=True, device=dev)
    i = lucid.tensor([0, 1], device=dev)
    y = F.embedding(i, w)
    edit(i)
    y.sum().backward()


def _getitem(dev, edit):
    w = lucid.randn(5, 3, requires_grad=True, device=dev)
    i = lucid.tensor([0, 1], device=dev)
    y = w[i]
    edit(i)
    y.sum().backward()


def _setitem(dev, edit):
    w = lucid.randn(5, 3, requires_grad=True, device=dev)
    i = lucid.tensor([0, 1], device=dev)
    z = w * 1
    z[i] = 2.0
    edit(i)
    z.sum().backward()


def _sort(dev, edit):
    w = lucid.randn(5, 3, requires_grad=True, device=dev)
    v, i = w.sort(0)
    edit(i.view(-1))
    v.sum().backward()


def _topk(dev, edit):
    w = lucid.randn(5, 3, requires_grad=True, device=dev)
    v, i = w.topk(2, 0)
    edit(i.view(-1))
    v.sum().backward()


def _scatter_add(dev, edit):
    w = lucid.randn(1, 3, requires_grad=True, device=dev)
    i = lucid.tensor([[0, 1, 2]], device=dev)
    y = lucid.zeros(5, 3, device=dev).scatter_add(0, i, w)
    edit(i.view(-1))
    y.sum().backward()


def _scatter(dev, edit):
    w = lucid.randn(1, 3, requires_grad=True, device=dev)
    i = lucid.tensor([[0, 1, 2]], device=dev)
    y = lucid.zeros(5, 3, device=dev).scatter(0, i, w)
    edit(i.view(-1))
    y.sum().backward()


CASES = [_ce, _nll, _max_pool, _adaptive_max_pool, _max_pool1d, _adaptive_max_pool1d, _gather,
         _index_select, _embedding, _getitem, _setitem, _sort, _topk, _scatter_add, _scatter]


def _set_huge(t):
    t[0] = 10**12


def _set_in_range(t):
    t[0] = 1


def _fill(t):
    t.fill_(0)


def _add(t):
    t.add_(1)


@pytest.mark.parametrize("case", CASES, ids=lambda f: f.__name__[1:])
@pytest.mark.parametrize("edit", [_set_huge, _set_in_range, _fill, _add],
                         ids=["huge", "in_range", "fill", "add"])
def test_edited_index_raises_version_error(dev, case, edit):
    """PyTorch raises its in-place error for each of these; an edited index must never reach
    a kernel (out of range: a crash; in range: a silently wrong gradient)."""
    with pytest.raises(RuntimeError, match=INPLACE):
        case(dev, edit)


def test_masked_index_edit_raises(dev):
    w = lucid.randn(5, 3, requires_grad=True, device=dev)
    m = lucid.tensor([True, False, True, False, True], device=dev)
    y = w[m]
    m[0] = False
    with pytest.raises(RuntimeError, match=INPLACE):
        y.sum().backward()
    y2 = w.masked_fill(m[:, None], 0.0)
    m[1] = True
    with pytest.raises(RuntimeError, match=INPLACE):
        y2.sum().backward()


def test_unedited_indices_still_give_gradients(dev):
    """The guard costs nothing in the common case: the same code without edits trains."""
    x = lucid.randn(4, 5, requires_grad=True, device=dev)
    t = lucid.tensor([0, 1, 2, 3], device=dev)
    F.cross_entropy(x, t).backward()
    xs = x.detach().numpy().astype(np.float64)
    p = np.exp(xs - xs.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    p[np.arange(4), [0, 1, 2, 3]] -= 1
    np.testing.assert_allclose(x.grad.numpy(), p / 4, rtol=1e-5, atol=1e-6)
    w = lucid.arange(15.0, device=dev).reshape(5, 3).requires_grad_()
    i = lucid.tensor([0, 0, 4], device=dev)
    w[i].sum().backward()
    np.testing.assert_array_equal(w.grad.numpy()[:, 0], [2, 0, 0, 0, 1])


def test_index_edit_after_backward_is_fine(dev):
    w = lucid.randn(5, 3, requires_grad=True, device=dev)
    i = lucid.tensor([0, 1], device=dev)
    w[i].sum().backward()
    i[0] = 4
    np.testing.assert_array_equal(w.grad.numpy().sum(1), [3, 3, 0, 0, 0])


def test_integer_operand_of_a_saving_free_op_may_change(dev):
    """``w + i`` keeps nothing for backward (as in PyTorch): editing ``i`` is allowed."""
    w = lucid.randn(2, 3, requires_grad=True, device=dev)
    i = lucid.tensor([1, 2, 3], device=dev)
    y = w + i
    i[0] = 7
    y.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.ones((2, 3)))


def test_integer_operand_promoted_before_mul(dev):
    """``w * i`` multiplies by a float copy of ``i``: a later edit of ``i`` cannot reach the
    backward, which uses the values of the forward."""
    w = lucid.randn(2, 3, requires_grad=True, device=dev)
    i = lucid.tensor([1, 2, 3], device=dev)
    y = w * i
    i[0] = 7
    y.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[1, 2, 3], [1, 2, 3]])


# ---- memory changed behind the version counter: validated before a kernel reads it --------


def test_from_numpy_labels_refilled_after_forward():
    a = np.array([0, 1, 2, 3])
    x = lucid.randn(4, 5, requires_grad=True)
    loss = F.cross_entropy(x, lucid.from_numpy(a))
    a[:] = 10**12
    with pytest.raises(IndexError, match="Target 1000000000000 is out of bounds"):
        loss.backward()


@pytest.mark.parametrize("device", ["cpu", "numpy"])
def test_max_pool_indices_written_through_numpy(device):
    x = lucid.randn(1, 1, 4, 4, requires_grad=True, device=device)
    y, i = F.max_pool2d(x, 2, return_indices=True)
    i.numpy()[...] = -3  # a numpy view of the tensor's memory: no version bump
    with pytest.raises(IndexError, match="invalid max index: -3"):
        y.sum().backward()


@pytest.mark.parametrize("bad", [-1, 16, 10**12])
def test_max_pool_backward_kernel_validates(bad):
    gy = np.ones((2, 4), np.float32)
    idx = np.zeros((2, 4), np.int64)
    idx[1, 2] = bad
    with pytest.raises(IndexError, match=f"invalid max index: {bad} "):
        kpool.max_pool2d_backward(gy, idx, (1, 2, 4, 4))
    idx[1, 2] = 15
    dx = kpool.max_pool2d_backward(gy, idx, (1, 2, 4, 4))
    assert dx.reshape(2, 16)[0, 0] == 4 and dx.reshape(2, 16)[1, 0] == 3
    assert dx.reshape(2, 16)[1, 15] == 1 and dx.sum() == 8


@pytest.mark.parametrize("bad", [-1, 5, 10**12])
def test_cross_entropy_backward_kernel_validates(bad):
    x = np.zeros((3, 5), np.float32)
    t = np.array([0, bad, 2])
    lse = np.full(3, np.log(5.0), np.float32)
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds"):
        ksoftmax.cross_entropy_backward(x, t, lse, np.ones(3, np.float32))
    t[1] = -100  # ignore_index is skipped, not read through
    g = ksoftmax.cross_entropy_backward(x, t, lse, np.ones(3, np.float32))
    np.testing.assert_allclose(g[1], 0)
    np.testing.assert_allclose(g[0], [-0.8, 0.2, 0.2, 0.2, 0.2], rtol=1e-5)


# ---- bounds as PyTorch has them ---------------------------------------------------------


def test_negative_indices_are_out_of_range(dev):
    x = lucid.randn(5, 3, device=dev)
    neg = lucid.tensor([[-1, 0, 0]], device=dev)
    with pytest.raises(IndexError, match="index out of range in self"):
        lucid.index_select(x, 0, lucid.tensor([-1], device=dev))
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 0 with size 5"):
        lucid.gather(x, 0, neg)
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 0 with size 5"):
        lucid.zeros(5, 3, device=dev).scatter(0, neg, 1.0)
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 0 with size 5"):
        lucid.zeros(5, 3, device=dev).scatter_add(0, neg, lucid.ones(1, 3, device=dev))
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(lucid.tensor([-1], device=dev), x)
    # plain indexing keeps Python's negative indices, as PyTorch does
    np.testing.assert_array_equal(x[lucid.tensor([-1], device=dev)].numpy(), x.numpy()[[-1]])


def test_out_of_range_indices(dev):
    x = lucid.randn(5, 3, device=dev)
    with pytest.raises(IndexError, match="index out of range in self"):
        lucid.index_select(x, 0, lucid.tensor([5], device=dev))
    with pytest.raises(RuntimeError, match="index 5 is out of bounds for dimension 0 with size 5"):
        lucid.gather(x, 0, lucid.tensor([[5, 0, 0]], device=dev))
    with pytest.raises(IndexError, match="out of bounds"):
        x[lucid.tensor([5], device=dev)]
    with pytest.raises(IndexError, match="out of bounds"):
        x[lucid.tensor([10**12], device=dev)] = 1.0


@pytest.mark.parity
def test_torch_raises_the_same_errors(torch):
    """The oracle: PyTorch raises where lucid does for these cases."""
    tF = torch.nn.functional

    def ce():
        x = torch.randn(4, 5, requires_grad=True)
        t = torch.tensor([0, 1, 2, 3])
        loss = tF.cross_entropy(x, t)
        t[0] = 1
        loss.backward()

    def pool():
        x = torch.randn(1, 2, 4, 4, requires_grad=True)
        y, i = tF.max_pool2d(x, 2, return_indices=True)
        i.view(-1)[0] = 1
        y.sum().backward()

    def getitem():
        w = torch.randn(5, 3, requires_grad=True)
        i = torch.tensor([0, 1])
        y = w[i]
        i[0] = 3
        y.sum().backward()

    for f in (ce, pool, getitem):
        with pytest.raises(RuntimeError, match=INPLACE):
            f()
    x = torch.randn(5, 3)
    with pytest.raises(IndexError, match="index out of range in self"):
        torch.index_select(x, 0, torch.tensor([-1]))
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 0 with size 5"):
        torch.gather(x, 0, torch.tensor([[-1, 0, 0]]))
    w = torch.randn(2, 3, requires_grad=True)
    i = torch.tensor([1, 2, 3])
    y = w + i
    i[0] = 7
    y.sum().backward()  # no error for an op that saves nothing


def test_slice_steps_as_torch(dev):
    """A zero step is refused (MLX died with SIGFPE on it) and so is a negative one, as in
    torch; writes into a zero-size target are no-ops on every device."""
    x = lucid.zeros(2, 2, 1, device=dev)
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        x[..., -2:-4:0]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        x[..., 0:1:0] = 1.0
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    assert x[::2].shape == (1, 2, 1)
    e = lucid.zeros(1, 2, 0, device=dev)
    e[lucid.tensor(0, device=dev)] = 1.5
    m = lucid.zeros(3, 0, dtype=lucid.uint8, device=dev)
    m[lucid.tensor([False, False, True], device=dev)] = 1
    assert e.shape == (1, 2, 0) and m.shape == (3, 0)
