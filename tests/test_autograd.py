"""The autograd engine: backward, grad, grad modes, hooks, custom Functions, gradcheck and
in-place semantics (version counters), compared with PyTorch where it defines behaviour."""

from __future__ import annotations

from collections.abc import Callable
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


# ---- in-place ops -------------------------------------------------------------------------------


INPLACE = {
    "add_": lambda x: x.add_(1), "sub_": lambda x: x.sub_(1), "mul_": lambda x: x.mul_(2),
    "div_": lambda x: x.div_(2), "zero_": lambda x: x.zero_(), "fill_": lambda x: x.fill_(3),
    "copy_": lambda x: x.copy_(lucid.ones(3)), "clamp_": lambda x: x.clamp_(0, 1),
    "setitem": lambda x: x.__setitem__(0, 5.0), "iadd": lambda x: x.__iadd__(1),
    "pow_": lambda x: x.pow_(2), "exp_": lambda x: x.exp_(),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_ops_bump_version(name: str) -> None:
    x = lucid.zeros(3)
    v = x[1:]
    before = x._version
    r = INPLACE[name](x)
    assert r is (None if name == "setitem" else x)
    assert x._version == before + 1
    assert v._version == x._version  # views share the counter


def test_inplace_values() -> None:
    x = lucid.tensor([1.0, 2.0, 3.0])
    x.add_(1).mul_(2).sub_(1).div_(2)
    np.testing.assert_allclose(x.numpy(), [1.5, 2.5, 3.5])
    x += 1
    x *= 2
    np.testing.assert_allclose(x.numpy(), [5.0, 7.0, 9.0])
    x.add_(lucid.ones(3), alpha=2)
    np.testing.assert_allclose(x.numpy(), [7.0, 9.0, 11.0])
    x[1:] = lucid.tensor([0.0, -1.0])
    assert x.tolist() == [7.0, 0.0, -1.0]


def test_inplace_into_int_tensor_cannot_hold_float() -> None:
    x = lucid.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        x.add_(1.5)


@pytest.mark.parametrize("fn", [lambda x: x.mul_(2), lambda x: x.exp_(),
                                lambda x: x.__setitem__(0, 1.0), lambda x: x.zero_()])
def test_inplace_on_leaf_requiring_grad_raises(fn: Callable) -> None:
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation."):
        fn(x)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        fn(x[:1])
    with lucid.no_grad():
        fn(x)  # allowed outside of graph recording (e.g. optimizer steps)


def test_modified_saved_tensor_raises() -> None:
    x = leaf(1.0, 2.0)
    y = x * 2
    z = y * y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    a = leaf(1.0, 2.0)
    b = a.exp()  # exp saves its output
    b.add_(1)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        b.sum().backward()


def test_inplace_on_unsaved_input_is_fine() -> None:
    x = leaf(1.0, 2.0)
    y = x * 1
    z = y * 5  # needs only the constant, not y
    y.add_(1)
    z.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


NON_LEAF_CASES = {
    "add_": lambda m, x: (lambda y: (y.add_(1), y.sum())[1])(x * 2),
    "mul_pow_": lambda m, x: (lambda y: (y.mul_(3), y.pow_(2), (y * x).sum())[2])(x * 2),
    "sqrt_": lambda m, x: (lambda y: (y.sqrt_(), y.sum())[1])(x * 1),
    "setitem_from_self": lambda m, x: (lambda y: (y.__setitem__(1, y[0] * 5), y.sum())[1])(
        x * 2),
    "copy_": lambda m, x: (lambda y: (y.copy_(x * 3), (y * y).sum())[1])(m.zeros(3)),
    "fill_": lambda m, x: (lambda y: (y.fill_(2.0), (y * x).sum())[1])(x * 3),
    "zero_": lambda m, x: (lambda y: (y.zero_(), (y + x).sum())[1])(x * 3),
    "clamp_": lambda m, x: (lambda y: (y.clamp_(0.5, 1.5), y.sum())[1])(x * 1),
    "div_tensor": lambda m, x: (lambda y: (y.div_(x + 3), y.sum())[1])(x * x),
    "setitem_mask": lambda m, x: (lambda y: (y.__setitem__(x > 1.5, 0.0), (y * y).sum())[1])(
        x * 3),
    "iadd_tensor": lambda m, x: (lambda y: (y.__iadd__(x * x), y.sum())[1])(x * 1),
}


@pytest.mark.parametrize("name", list(NON_LEAF_CASES))
def test_inplace_on_non_leaf_matches_torch(torch: Any, name: str) -> None:
    vals = [1.0, 2.0, 0.25]
    x, tx = lucid.tensor(vals, requires_grad=True), torch.tensor(vals, requires_grad=True)
    out, tout = NON_LEAF_CASES[name](lucid, x), NON_LEAF_CASES[name](torch, tx)
    assert out.item() == pytest.approx(tout.item(), rel=1e-6)
    out.backward()
    tout.backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


def test_setitem_of_a_grad_value_into_plain_tensor(torch: Any) -> None:
    def run(m: Any) -> tuple:
        buf = m.zeros(3)
        v = m.tensor(2.0, requires_grad=True)
        buf[1] = v
        (buf * 3).sum().backward()
        return buf.requires_grad, v.grad.item(), buf.is_leaf

    assert run(lucid) == run(torch)


# ---- in-place ops on views ----------------------------------------------------------------------


def _grid(m: Any) -> tuple[Any, Any]:
    x = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    w = m.tensor([[0.5, -1.0, 2.0], [1.5, 3.0, -0.5]])
    return x, w


def _aug_item(y: Any) -> Any:
    y[0] += 1  # __getitem__, __iadd__ on the view, __setitem__
    return y


VIEW_CASES = {
    "getitem_iadd": lambda m, x, w: (_aug_item(x * 2) * w).sum(),
    "column_mul_": lambda m, x, w: (lambda y: (y[:, 0].mul_(3), (y * w).sum())[1])(x * 2),
    "transpose_add_": lambda m, x, w: (lambda y: (y.T.add_(w.T), (y * y).sum())[1])(x * 1),
    "view_exp_then_both": lambda m, x, w: (lambda y: (lambda v: (
        v.exp_(), (y * w).sum() + v.sum())[1])(y[1]))(x * 1),
    "strided_zero_": lambda m, x, w: (lambda y: (y.view(6)[::2].zero_(), (y * w).sum())[1])(
        x * 2),
    "copy_into_buffer_view": lambda m, x, w: (lambda b: (b[1:].copy_(x[0] * 2), (b * b).sum())[
        1])(m.zeros(4)),
    "nested_views": lambda m, x, w: (lambda y: (y[1:][:, 1:].mul_(x[1:, 1:]), (y * w).sum())[
        1])(x * 1),
    "reshape_view": lambda m, x, w: (lambda y: (y.reshape(3, 2)[0].add_(10), (y * w).sum())[
        1])(x * 1),
    "reshape_copy_leaves_base": lambda m, x, w: (lambda y: (y.T.reshape(6).add_(100),
                                                           (y * w).sum())[1])(x * 1),
    "t_": lambda m, x, w: (lambda y: (y.t_(), (y * w.T).sum())[1])(x * 1),
    "base_changed_view_renewed": lambda m, x, w: (lambda y: (lambda v: (
        y.mul_(w), (v * v).sum())[1])(y[0]))(x * 1),
    "sibling_view_renewed": lambda m, x, w: (lambda y: (lambda v, c: (
        c.copy_(w[:, 0].tanh()), (v * v).sum() + y.sum())[1])(y[1:], y[:, 1]))(x * 1),
    "view_of_view_renewed": lambda m, x, w: (lambda y: (lambda v: (
        v[:, 1].copy_(y[0].tanh()[:2]), v.sum())[1])(y[0:2, 1:]))(x * 1),
    "unsqueeze_": lambda m, x, w: (lambda y: (y.unsqueeze_(0), (y * w).sum())[1])(x * 1),
}


@pytest.mark.parametrize("name", list(VIEW_CASES))
def test_inplace_on_views_matches_torch(torch: Any, name: str) -> None:
    (x, w), (tx, tw) = _grid(lucid), _grid(torch)
    out, tout = VIEW_CASES[name](lucid, x, w), VIEW_CASES[name](torch, tx, tw)
    assert out.item() == pytest.approx(tout.item(), rel=1e-5)
    out.backward()
    tout.backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5)


def test_inplace_on_view_updates_base_values() -> None:
    x = lucid.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1
    col = y[:, 1]
    col.mul_(10)
    assert y.tolist() == [[1.0, 20.0], [3.0, 40.0]] and col.tolist() == [20.0, 40.0]
    assert y.grad_fn is not None and col.grad_fn is not None
    assert y._version == col._version == 1


def test_view_inplace_ops_on_leaf_raise() -> None:
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.unsqueeze_(0)


def test_inplace_on_expanded_view_raises() -> None:
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        lucid.ones(1, 3).expand(2, 3).add_(1)
