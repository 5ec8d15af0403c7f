"""The autograd engine: backward, grad, grad modes, hooks, custom Functions, gradcheck and
in-place semantics (version counters), compared with PyTorch where it defines behaviour."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
from lucid.autograd import Function, gradcheck
from lucid.autograd.gradcheck import GradcheckError


def leaf(*values: Any, dtype: Any = None) -> lucid.Tensor:
    return lucid.tensor(list(values), dtype=dtype, requires_grad=True)


# ---- backward -----------------------------------------------------------------------------------


def test_backward_scalar_and_explicit_gradient() -> None:
    x = leaf(1.0, 2.0, 3.0)
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    y = leaf(1.0, 2.0)
    (y * 3).backward(lucid.tensor([1.0, 10.0]))
    assert y.grad.tolist() == [3.0, 30.0]
    z = leaf(1.0, 2.0)
    z.sum().backward(gradient=lucid.tensor(2.0))
    assert z.grad.tolist() == [2.0, 2.0]


def test_backward_of_a_leaf_and_of_one_element_tensor() -> None:
    x = lucid.tensor(2.0, requires_grad=True)
    x.backward()
    assert x.grad.item() == 1.0
    y = leaf(3.0)
    (y * 2).backward()  # one element, any shape
    assert y.grad.tolist() == [2.0]


def test_non_scalar_backward_needs_gradient() -> None:
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (x * 2).backward()


def test_backward_on_tensor_without_grad() -> None:
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        (lucid.ones(2) * 2).sum().backward()


def test_long_chain_has_no_recursion_limit() -> None:
    x = leaf(1.0)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.sum().backward()
    assert x.grad.item() == pytest.approx(1.0001 ** 10_000, rel=1e-3)


def test_long_chain_of_mixed_ops() -> None:
    x = leaf(0.5, dtype=lucid.float64)
    y = x
    for i in range(3000):
        y = (y + 0.001).tanh() if i % 2 else y.sin() * 1.0
    y.backward(lucid.ones(1, dtype=lucid.float64))
    assert np.isfinite(x.grad.item()) and x.grad.item() != 0.0


def test_gradients_accumulate_across_calls() -> None:
    x = leaf(1.0, 2.0)
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]
    x.grad.zero_()
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_broadcast_gradients_are_summed_to_input_shape() -> None:
    a = lucid.ones(3, 1, requires_grad=True)
    b = lucid.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    c = lucid.tensor(2.0, requires_grad=True)
    (a * b * c).sum().backward()
    assert a.grad.shape == (3, 1) and a.grad.tolist() == [[20.0]] * 3
    assert b.grad.tolist() == [6.0] * 4
    assert c.grad.shape == () and c.grad.item() == 30.0


def test_shared_subexpressions(torch: Any) -> None:
    def f(m: Any, x: Any) -> Any:
        a = x * 2
        b = a * a
        c = a + b
        return (c * a).sum() + a.sum()

    x, tx = leaf(1.0, -2.0), torch.tensor([1.0, -2.0], requires_grad=True)
    f(lucid, x).backward()
    f(torch, tx).backward()
    assert x.grad.tolist() == tx.grad.tolist()


def test_freed_graph_raises_on_second_backward() -> None:
    x = leaf(1.0, 2.0)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_second_backward() -> None:
    x = leaf(1.0, 2.0)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_second_backward_without_saved_tensors_is_allowed(torch: Any) -> None:
    x, tx = leaf(1.0, 2.0), torch.tensor([1.0, 2.0], requires_grad=True)
    for t in (x, tx):
        y = (t + t).sum()
        y.backward()
        y.backward()
    assert x.grad.tolist() == tx.grad.tolist() == [4.0, 4.0]


def test_backward_several_roots_and_inputs() -> None:
    x, w = leaf(1.0, 2.0), leaf(3.0)
    lucid.autograd.backward([(x * 2).sum(), (x * w).sum()])
    assert x.grad.tolist() == [5.0, 5.0] and w.grad.tolist() == [3.0]
    x2, w2 = leaf(1.0), leaf(2.0)
    (x2 * w2).sum().backward(inputs=[x2])
    assert x2.grad.tolist() == [2.0] and w2.grad is None


def test_gradient_shape_mismatch() -> None:
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="Mismatch in shape: grad_output\\[0\\]"):
        (x * 2).backward(lucid.ones(3))


# ---- grad modes ---------------------------------------------------------------------------------


def test_no_grad_enable_grad_set_grad_enabled() -> None:
    x = leaf(1.0)
    with lucid.no_grad():
        assert not lucid.is_grad_enabled()
        y = x * 2
        with lucid.enable_grad():
            z = x * 2
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and lucid.is_grad_enabled()
    with lucid.set_grad_enabled(False):
        w = x * 2
    assert not w.requires_grad and lucid.is_grad_enabled()
    lucid.set_grad_enabled(False)
    assert not (x * 2).requires_grad
    lucid.set_grad_enabled(True)
    with lucid.inference_mode():
        assert not (x * 2).requires_grad


def test_grad_modes_as_decorators() -> None:
    x = leaf(1.0)

    @lucid.no_grad()
    def f() -> lucid.Tensor:
        return x * 2

    @lucid.no_grad
    def g() -> lucid.Tensor:
        return x * 2

    @lucid.enable_grad()
    def h() -> lucid.Tensor:
        return x * 2

    @lucid.set_grad_enabled(False)
    def k() -> lucid.Tensor:
        return x * 2

    assert lucid.is_grad_enabled()  # decorating does not switch the mode
    assert not f().requires_grad and not g().requires_grad and not k().requires_grad
    with lucid.no_grad():
        assert h().requires_grad
    assert f.__name__ == "f"


def test_grad_mode_restored_after_exception() -> None:
    with pytest.raises(ValueError), lucid.no_grad():
        raise ValueError
    assert lucid.is_grad_enabled()


# ---- detach and requires_grad -------------------------------------------------------------------


def test_detach_shares_memory_and_leaves_graph() -> None:
    x = leaf(1.0, 2.0)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    d.add_(1)
    assert y.tolist() == [3.0, 5.0]


def test_detach_inplace() -> None:
    x = leaf(1.0, 2.0)
    y = x * 2
    assert y.detach_() is y
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf


def test_requires_grad_() -> None:
    x = lucid.ones(2)
    assert x.requires_grad_() is x and x.requires_grad
    x.requires_grad_(False)
    assert not x.requires_grad
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf"):
        (leaf(1.0) * 2).requires_grad_(False)


# ---- hooks and retained grads -------------------------------------------------------------------


def test_hooks_replace_gradients(torch: Any) -> None:
    def run(m: Any) -> tuple:
        x = m.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: g * 10)
        y = x * 3
        y.register_hook(lambda g: g + 1)
        (y * y).sum().backward()
        return x.grad.tolist()

    assert run(lucid) == run(torch)


def test_hook_returning_none_observes_and_remove_unregisters() -> None:
    x = leaf(1.0, 2.0)
    seen: list = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    handle = x.register_hook(lambda g: g * 0)
    handle.remove()
    (x * 2).sum().backward()
    assert seen == [[2.0, 2.0]] and x.grad.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        lucid.ones(1).register_hook(lambda g: g)


def test_retain_grad_on_non_leaf(torch: Any) -> None:
    def run(m: Any) -> tuple:
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: g * 100)
        (y * y).sum().backward()
        return x.grad.tolist(), y.grad.tolist(), y.retains_grad

    assert run(lucid) == run(torch)
    x = leaf(1.0)
    z = x * 3
    assert not z.retains_grad and z.grad is None
    z.retain_grad()
    (z * z).sum().backward()
    assert z.grad.tolist() == [6.0] and z.keep_grad


def test_post_accumulate_grad_hook() -> None:
    x = leaf(1.0)
    seen: list = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (x * 2).sum().backward()
    assert seen == [[2.0]]


# ---- lucid.autograd.grad ------------------------------------------------------------------------


def test_grad_returns_without_touching_dot_grad() -> None:
    x, w = leaf(1.0, 2.0), leaf(3.0)
    gx, gw = lucid.autograd.grad((x * w).sum(), [x, w])
    assert gx.tolist() == [3.0, 3.0] and gw.tolist() == [3.0]
    assert x.grad is None and w.grad is None


def test_grad_outputs_and_non_leaf_inputs() -> None:
    x = leaf(1.0, 2.0)
    y = x * x
    (g,) = lucid.autograd.grad(y, x, grad_outputs=lucid.tensor([1.0, 10.0]))
    assert g.tolist() == [2.0, 40.0]
    a = x * 2
    (ga,) = lucid.autograd.grad((a * a).sum(), a)
    assert ga.tolist() == [4.0, 8.0]


def test_grad_retain_graph() -> None:
    x = leaf(1.0, 2.0)
    y = (x * x).sum()
    a = lucid.autograd.grad(y, x, retain_graph=True)[0]
    b = lucid.autograd.grad(y, x)[0]
    assert a.tolist() == b.tolist() == [2.0, 4.0]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        lucid.autograd.grad(y, x)


def test_grad_allow_unused(torch: Any) -> None:
    x, w = leaf(1.0, 2.0), leaf(3.0)
    tx, tw = torch.tensor([1.0, 2.0], requires_grad=True), torch.tensor([3.0],
                                                                        requires_grad=True)
    with pytest.raises(RuntimeError) as ours:
        lucid.autograd.grad((x * 2).sum(), [x, w])
    with pytest.raises(RuntimeError) as theirs:
        torch.autograd.grad((tx * 2).sum(), [tx, tw])
    assert str(ours.value) == str(theirs.value)
    gx, gw = lucid.autograd.grad((x * 2).sum(), [x, w], allow_unused=True)
    assert gx.tolist() == [2.0, 2.0] and gw is None
    _, gz = lucid.autograd.grad((x * 2).sum(), [x, w], materialize_grads=True)
    assert gz.tolist() == [0.0]


# ---- custom Functions and gradcheck -------------------------------------------------------------


class Cube(Function):
    @staticmethod
    def forward(ctx: Any, x: lucid.Tensor) -> lucid.Tensor:
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx: Any, g: lucid.Tensor) -> lucid.Tensor:
        (x,) = ctx.saved_tensors
        return 3 * x * x * g


class WrongCube(Cube):
    @staticmethod
    def backward(ctx: Any, g: lucid.Tensor) -> lucid.Tensor:
        (x,) = ctx.saved_tensors
        return 2 * x * x * g  # deliberately wrong


class ScaleBy(Function):
    @staticmethod
    def forward(ctx: Any, x: lucid.Tensor, k: float) -> lucid.Tensor:
        ctx.k = k
        ctx.flags = ctx.needs_input_grad
        return x * k

    @staticmethod
    def backward(ctx: Any, g: lucid.Tensor) -> tuple:
        return g * ctx.k, None


class BlockGrad(Function):
    @staticmethod
    def forward(ctx: Any, x: lucid.Tensor) -> lucid.Tensor:
        return x.clone()

    @staticmethod
    def backward(ctx: Any, g: lucid.Tensor) -> None:
        return None


def f64(*shape: int) -> lucid.Tensor:
    return lucid.randn(*shape, dtype=lucid.float64, requires_grad=True)


def test_custom_function_forward_backward() -> None:
    x = f64(4)
    y = Cube.apply(x)
    assert y.grad_fn is not None and y.grad_fn.name() == "CubeBackward"
    np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy() ** 3)
    assert gradcheck(Cube.apply, (x,))


def test_gradcheck_catches_a_wrong_gradient() -> None:
    x = f64(3)
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(WrongCube.apply, (x,))
    assert gradcheck(WrongCube.apply, (x,), raise_exception=False) is False


def test_gradcheck_catches_a_wrong_broadcast_gradient() -> None:
    class BadAdd(Function):
        @staticmethod
        def forward(ctx: Any, a: lucid.Tensor, b: lucid.Tensor) -> lucid.Tensor:
            return a + b

        @staticmethod
        def backward(ctx: Any, g: lucid.Tensor) -> tuple:
            return g, g.mean(0)  # should be g.sum(0)

    with pytest.raises(GradcheckError, match="with respect to input 1"):
        gradcheck(BadAdd.apply, (f64(3, 2), f64(2)))


def test_function_non_tensor_args_and_needs_input_grad() -> None:
    x = f64(3)
    y = ScaleBy.apply(x, 2.5)
    y.sum().backward()
    assert x.grad.tolist() == [2.5] * 3
    assert y.grad_fn.ctx.flags == (True, False)


def test_function_returning_no_gradient_skips_its_branch() -> None:
    x = leaf(1.0, 2.0)
    y = x * 2
    (BlockGrad.apply(y) + x).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_function_wrong_number_of_gradients() -> None:
    class TwoGrads(Function):
        @staticmethod
        def forward(ctx: Any, x: lucid.Tensor) -> lucid.Tensor:
            return x * 1

        @staticmethod
        def backward(ctx: Any, g: lucid.Tensor) -> tuple:
            return g, g

    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        TwoGrads.apply(leaf(1.0)).sum().backward()


def test_function_saved_tensor_modified_in_place() -> None:
    x = leaf(1.0, 2.0)
    a = x * 1
    y = Cube.apply(a)
    a.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("bad, err, msg", [
    (lambda: lucid.ones(1), RuntimeError, r"gradient of size '\[1\]' to a tensor of size '\[3\]'"),
    (lambda: lucid.ones(1, 3), RuntimeError, r"gradient of size '\[1, 3\]'"),
    (lambda: lucid.ones(3, dtype=lucid.float64), RuntimeError, "gradient with dtype 'float64'"),
    (lambda: 1.0, TypeError, "assigned grad expected to be a Tensor or None"),
])
def test_grad_assignment_is_checked(bad, err, msg):
    """As in PyTorch: a wrong-shaped ``.grad`` would otherwise be broadcast by an optimizer."""
    p = lucid.zeros(3, requires_grad=True)
    with pytest.raises(err, match=msg):
        p.grad = bad()
    assert p.grad is None
    p.grad = lucid.ones(3)
    opt = lucid.optim.SGD([p], lr=0.5)
    opt.step()
    np.testing.assert_array_equal(p.detach().numpy(), [-0.5, -0.5, -0.5])
    del p.grad
    assert p.grad is None
