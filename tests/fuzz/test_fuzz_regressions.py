"""Known crash cases, written as user code and run in the worker process on each device.

Each case once killed the interpreter (segfault, SIGFPE, abort) or was found by the random
fuzz; it must now end normally or raise a Python exception. Where ``expect`` is given, the case
must raise an exception whose text contains it (PyTorch's message for the same misuse).
"""

from __future__ import annotations

import pytest
from fuzz_harness import DEVICES, Worker, check

INPLACE = "modified by an inplace operation"

# (id, source using `lucid`, `F` and `dev`, devices or None for all, expected message or None)
CASES: list[tuple[str, str, tuple[str, ...] | None, str | None]] = [
    ("cross_entropy_target_set_after_forward", """
x = lucid.randn(4, 5).to(dev).requires_grad_()
t = lucid.tensor([0, 1, 2, 3], device=dev)
loss = F.cross_entropy(x, t)
t[0] = 10**12
loss.backward()
""", None, INPLACE),
    ("nll_loss_target_fill_after_forward", """
x = lucid.randn(4, 5).to(dev).requires_grad_()
t = lucid.tensor([0, 1, 2, 3], device=dev)
loss = F.nll_loss(F.log_softmax(x, 1), t, weight=lucid.ones(5, device=dev), ignore_index=1)
t.fill_(-10**12)
loss.backward()
""", None, INPLACE),
    ("cross_entropy_target_add_after_forward_smoothing", """
x = lucid.randn(3, 4, 2).to(dev).requires_grad_()
t = lucid.tensor([[0, 1], [2, 3], [1, 0]], device=dev)
loss = F.cross_entropy(x, t, label_smoothing=0.1, reduction="none")
t.add_(10**12)
loss.sum().backward()
""", None, INPLACE),
    ("cross_entropy_from_numpy_target_refilled", """
import numpy as np
x = lucid.randn(4, 5).to(dev).requires_grad_()
arr = np.array([0, 1, 2, 3])
t = lucid.from_numpy(arr).to(dev)
loss = F.cross_entropy(x, t)
arr.fill(10**12)
loss.backward()
""", None, None),
    ("nll_loss_from_numpy_target_refilled_negative", """
import numpy as np
x = lucid.randn(4, 5).to(dev).requires_grad_()
arr = np.array([0, 1, 2, 3])
t = lucid.from_numpy(arr).to(dev)
loss = F.nll_loss(x, t)
arr.fill(-10**12)
loss.backward()
""", None, None),
    ("max_pool2d_indices_set_after_forward", """
x = lucid.randn(1, 2, 4, 4).to(dev).requires_grad_()
y, i = F.max_pool2d(x, 2, return_indices=True)
i[0] = 10**12
y.sum().backward()
""", None, INPLACE),
    ("max_pool2d_indices_fill_after_forward", """
x = lucid.randn(2, 4, 4).to(dev).requires_grad_()
y, i = F.max_pool2d(x, 2, stride=1, padding=1, return_indices=True)
i.fill_(-10**12)
y.sum().backward()
""", None, INPLACE),
    ("adaptive_max_pool2d_indices_set_after_forward", """
x = lucid.randn(1, 2, 5, 5).to(dev).requires_grad_()
y, i = F.adaptive_max_pool2d(x, 2, return_indices=True)
i[0] = 10**12
y.sum().backward()
""", None, INPLACE),
    ("max_pool1d_indices_add_after_forward", """
x = lucid.randn(1, 2, 6).to(dev).requires_grad_()
y, i = F.max_pool1d(x, 2, return_indices=True)
i.add_(10**12)
y.sum().backward()
""", None, INPLACE),
    ("adaptive_max_pool1d_indices_set_after_forward", """
x = lucid.randn(1, 2, 7).to(dev).requires_grad_()
y, i = F.adaptive_max_pool1d(x, 3, return_indices=True)
i[0] = -10**12
y.sum().backward()
""", None, INPLACE),
    ("gather_index_set_after_forward", """
x = lucid.randn(3, 4).to(dev).requires_grad_()
i = lucid.tensor([[0, 1], [2, 3], [1, 1]], device=dev)
y = lucid.gather(x, 1, i)
i[0] = 10**12
y.sum().backward()
""", None, INPLACE),
    ("gather_from_numpy_index_refilled", """
import numpy as np
x = lucid.randn(3, 4).to(dev).requires_grad_()
arr = np.array([[0, 1], [2, 3], [1, 1]])
y = lucid.gather(x, 1, lucid.from_numpy(arr).to(dev))
arr.fill(10**12)
y.sum().backward()
""", None, None),
    ("index_select_index_set_after_forward", """
x = lucid.randn(3, 4).to(dev).requires_grad_()
i = lucid.tensor([0, 2], device=dev)
y = lucid.index_select(x, 0, i)
i[1] = 10**12
y.sum().backward()
""", None, INPLACE),
    ("embedding_index_set_after_forward", """
w = lucid.randn(5, 3).to(dev).requires_grad_()
i = lucid.tensor([[0, 4], [2, 1]], device=dev)
y = F.embedding(i, w, padding_idx=1)
i[0] = 10**12
y.sum().backward()
""", None, INPLACE),
    ("getitem_tensor_index_set_after_forward", """
x = lucid.randn(5, 3).to(dev).requires_grad_()
i = lucid.tensor([0, 4, 4], device=dev)
y = x[i]
i[0] = 10**12
y.sum().backward()
""", None, INPLACE),
    ("scatter_add_index_fill_after_forward", """
x = lucid.randn(3, 4).to(dev).requires_grad_()
src = lucid.randn(3, 2).to(dev).requires_grad_()
i = lucid.tensor([[0, 1], [2, 3], [1, 1]], device=dev)
y = lucid.scatter_add(x, 1, i, src)
i.fill_(10**12)
y.sum().backward()
""", None, INPLACE),
    ("take_index_set_after_forward", """
x = lucid.randn(3, 4).to(dev).requires_grad_()
i = lucid.tensor([0, 11, 5], device=dev)
y = lucid.take(x, i)
i[0] = -10**12
y.sum().backward()
""", None, INPLACE),
    ("scatter_index_set_after_forward", """
x = lucid.randn(1).to(dev).requires_grad_()
src = lucid.randn(2).to(dev).requires_grad_()
i = lucid.tensor([0], device=dev)
y = lucid.scatter(x, 0, i, src)
i[0] = 10**12
y.sum().backward()
""", None, INPLACE),
    ("sort_indices_set_after_forward", """
x = lucid.randn(3, 4).to(dev).requires_grad_()
y, i = lucid.sort(x, 1)
i[0] = 10**12
y.sum().backward()
""", None, INPLACE),
    ("topk_indices_fill_after_forward", """
x = lucid.randn(3, 4).to(dev).requires_grad_()
y, i = lucid.topk(x, 2)
i.fill_(-10**12)
y.sum().backward()
""", None, INPLACE),
    ("max_dim_indices_set_after_forward", """
x = lucid.randn(3, 4).to(dev).requires_grad_()
y, i = lucid.max(x, 1)
i[0] = 10**12
y.sum().backward()
""", None, None),
    ("conv2d_zero_input_channels", """
x = lucid.randn(2, 0, 5, 5).to(dev).requires_grad_()
w = lucid.randn(3, 0, 3, 3).to(dev).requires_grad_()
F.conv2d(x, w).sum().backward()
""", None, None),
    ("conv2d_zero_input_channels_groups", """
x = lucid.randn(1, 0, 4, 4).to(dev).requires_grad_()
w = lucid.randn(4, 0, 1, 1).to(dev).requires_grad_()
F.conv2d(x, w, lucid.zeros(4, device=dev), groups=2).sum().backward()
""", None, None),
    ("conv_transpose2d_zero_channels", """
x = lucid.randn(1, 0, 3, 3).to(dev).requires_grad_()
w = lucid.randn(0, 2, 3, 3).to(dev).requires_grad_()
F.conv_transpose2d(x, w, stride=2).sum().backward()
""", None, None),
    ("conv1d_zero_input_channels", """
x = lucid.randn(2, 0, 5).to(dev).requires_grad_()
w = lucid.randn(3, 0, 2).to(dev).requires_grad_()
F.conv1d(x, w, dilation=2).sum().backward()
""", None, None),
    ("conv2d_zero_kernel_width", """
x = lucid.randn(2, 3, 6, 4).to(dev).requires_grad_()
w = lucid.randn(3, 3, 1, 0).to(dev).requires_grad_()
F.conv2d(x, w, padding=1).sum().backward()
""", None, "kernel size should be greater than zero"),
    ("conv_transpose2d_zero_kernel_and_out_channels", """
x = lucid.randn(2, 3, 6, 4).to(dev).requires_grad_()
w = lucid.randn(3, 0, 1, 0).to(dev)
F.conv_transpose2d(x, w, stride=3, padding=(2, 1), output_padding=1).sum().backward()
""", None, "kernel size should be greater than zero"),
    ("conv_transpose2d_zero_out_channels", """
x = lucid.randn(2, 3, 6, 4).to(dev).requires_grad_()
w = lucid.randn(3, 0, 2, 2).to(dev).requires_grad_()
y = F.conv_transpose2d(x, w, lucid.zeros(0, device=dev), stride=2)
y.sum().backward()
assert tuple(y.shape) == (2, 0, 12, 8) and float(x.grad.abs().sum()) == 0.0
""", None, None),
    ("conv2d_zero_batch", """
x = lucid.randn(0, 3, 6, 4).to(dev).requires_grad_()
w = lucid.randn(2, 3, 2, 2).to(dev).requires_grad_()
b = lucid.randn(2).to(dev).requires_grad_()
y = F.conv2d(x, w, b)
y.sum().backward()
assert tuple(y.shape) == (0, 2, 5, 3) and tuple(b.grad.shape) == (2,)
""", None, None),
    ("conv1d_zero_kernel", """
x = lucid.randn(2, 3, 5).to(dev)
F.conv1d(x, lucid.randn(4, 3, 0).to(dev))
""", None, "kernel size should be greater than zero"),
    ("conv2d_zero_input_channels_gives_bias", """
x = lucid.randn(2, 0, 5, 5).to(dev).requires_grad_()
w = lucid.randn(3, 0, 3, 3).to(dev).requires_grad_()
b = lucid.tensor([1.0, 2.0, 3.0], device=dev, requires_grad=True)
y = F.conv2d(x, w, b, padding=1)
y.sum().backward()
assert tuple(y.shape) == (2, 3, 5, 5) and float(y[1, 2, 4, 4]) == 3.0
assert b.grad.tolist() == [50.0, 50.0, 50.0]
""", None, None),
    ("setitem_slice_step_zero", """
x = lucid.zeros(2, 2, 1, device=dev)
x[..., -2:-4:0] = 1.0
""", None, "step"),
    ("getitem_slice_step_zero", """
x = lucid.zeros(2, 2, 1, device=dev)
x[..., 0:1:0].numpy()
""", None, "step"),
    ("setitem_scalar_tensor_index_zero_size", """
x = lucid.zeros(1, 2, 0, device=dev)
x[lucid.tensor(0, device=dev)] = 1.5
x.numpy()
""", None, None),
    ("setitem_bool_mask_zero_size", """
x = lucid.zeros(3, 0, dtype=lucid.uint8, device=dev)
x[lucid.tensor([False, False, True], device=dev)] = 1
x.numpy()
""", None, None),
    ("kernel_fold_cols_shorter_than_blocks", """
import numpy as np
from lucid.kernels import conv
conv.fold(np.ones((1, 8, 1), np.float32), (1000, 1000), (2, 2), (1, 1), (0, 0), (1, 1))
""", ("cpu",), "do not match"),
    ("kernel_conv2d_negative_stride", """
import numpy as np
from lucid.kernels import conv
x, w = np.ones((1, 2, 50, 50), np.float32), np.ones((3, 2, 3, 3), np.float32)
conv.conv2d(x, w, None, (-7, 1), ((0, 0), (0, 0)), (1, 1), 1)
""", ("cpu",), "stride should be greater than zero"),
]


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("name,src,devs,expect", CASES, ids=[c[0] for c in CASES])
def test_known_case(worker: Worker, name: str, src: str, devs: tuple[str, ...] | None,
                    expect: str | None, dev: str) -> None:
    if devs is not None and dev not in devs:
        pytest.skip(f"{name} is a {'/'.join(devs)} case")
    check(worker, {"op": "code", "dev": dev, "src": src}, expect=expect)
