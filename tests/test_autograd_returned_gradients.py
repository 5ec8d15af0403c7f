"""What a tensor hook or a custom ``Function.backward`` may return, checked as torch checks
it, with torch's messages: a hook returns None or a Tensor of the gradient's size, dtype and
device; a backward returns None or a Tensor per input, of the input's shape or one that sums
to it (cast to the input's dtype), and None for inputs that are not tensors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from devices import DEVICES

import lucid


def _leaf(m: Any, device: str | None = None) -> Any:
    if m is lucid:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return lucid.tensor([1.0, 2.0, 3.0], requires_grad=True, device=device)
    return m.tensor([1.0, 2.0, 3.0], requires_grad=True)


def named_hook(g: Any) -> Any:
    return g.reshape(3, 1)


class Unnamed:
    """A callable without ``__name__``: torch calls its hook '<unknown>'."""

    def __call__(self, g: Any) -> Any:
        return g[:2]


HOOKS: dict[str, tuple[Callable, type, str]] = {
    "str": (lambda g: "abc", TypeError, "expected Variable, but hook returned 'str'"),
    "list": (lambda g: [1.0, 1.0, 1.0], TypeError, "expected Variable, but hook returned 'list'"),
    "ndarray": (lambda g: np.ones(3), TypeError,
                "expected Variable, but hook returned 'numpy.ndarray'"),
    "shorter": (lambda g: g[:2], RuntimeError, "hook '<lambda>' has changed the size of value"),
    "summed": (lambda g: g.sum(), RuntimeError, "hook '<lambda>' has changed the size of value"),
    "named": (named_hook, RuntimeError, "hook 'named_hook' has changed the size of value"),
    "unnamed": (Unnamed(), RuntimeError, "hook '<unknown>' has changed the size of value"),
    "double": (lambda g: g.double(), RuntimeError, "hook '<lambda>' has changed the type of "
               "value (was {m}.FloatTensor got {m}.DoubleTensor)"),
    "long": (lambda g: g.long(), RuntimeError, "hook '<lambda>' has changed the type of value "
             "(was {m}.FloatTensor got {m}.LongTensor)"),
}


def _hooked(m: Any, where: str, hook: Callable, device: str | None = None) -> Any:
    x = _leaf(m, device)
    if where == "leaf":
        x.register_hook(hook)
        (x * 2).sum().backward()
    elif where == "grad":
        x.register_hook(hook)
        m.autograd.grad((x * 2).sum(), x)
    else:
        y = x * 2
        y.register_hook(hook)
        y.sum().backward()
    return x


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("where", ["leaf", "intermediate", "grad"])
@pytest.mark.parametrize("case", list(HOOKS))
def test_hook_results_are_checked(device: str, where: str, case: str) -> None:
    hook, kind, text = HOOKS[case]
    with pytest.raises(kind) as info:
        _hooked(lucid, where, hook, device)
    assert str(info.value) == text.format(m="lucid.cuda" if device == "gpu" else "lucid")


@pytest.mark.parametrize("where", ["leaf", "intermediate", "grad"])
@pytest.mark.parametrize("case", list(HOOKS))
def test_hook_errors_match_torch(torch: Any, where: str, case: str) -> None:
    hook = HOOKS[case][0]
    got = []
    for m in (lucid, torch):
        with pytest.raises(Exception) as info:
            _hooked(m, where, hook)
        got.append((type(info.value), str(info.value).replace(m.__name__ + ".", "M.")))
    assert got[0] == got[1]


@pytest.mark.parametrize("device", DEVICES)
def test_valid_hook_results_still_replace_the_gradient(device: str) -> None:
    x = _leaf(lucid, device)
    y = x * 2
    y.register_hook(lambda g: g * 10)
    y.register_hook(lambda g: None)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [20.0, 20.0, 20.0])
    z = _leaf(lucid, device)
    (g,) = lucid.autograd.grad((z * z).sum(), z, create_graph=True)
    z.register_hook(lambda gr: gr + 1)
    g.sum().backward()
    np.testing.assert_array_equal(z.grad.numpy(), [3.0, 3.0, 3.0])


def _function(m: Any, ret: Callable) -> Any:
    class Twice(m.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any, k: float = 2.0) -> Any:
            return a * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return ret(g)

    return Twice


BACKWARDS: dict[str, tuple[Callable, tuple, Any]] = {
    # name: (what backward returns, extra forward args, x.grad or (error type, message))
    "shorter": (lambda g: g[:2], (), (RuntimeError, "Function TwiceBackward returned an "
                "invalid gradient at index 0 - got [2] but expected shape compatible with [3]")),
    "summed": (lambda g: g.sum(), (), (RuntimeError, "Function TwiceBackward returned an "
               "invalid gradient at index 0 - got [] but expected shape compatible with [3]")),
    "column": (lambda g: g.reshape(3, 1), (), (RuntimeError, "Function TwiceBackward returned "
               "an invalid gradient at index 0 - got [3, 1] but expected shape compatible with "
               "[3]")),
    "str": (lambda g: "abc", (), (RuntimeError, "expected Variable or None (got str)")),
    "float": (lambda g: 1.0, (), (RuntimeError, "expected Variable or None (got float)")),
    "ndarray": (lambda g: np.ones(3), (), (RuntimeError,
                                           "expected Variable or None (got numpy.ndarray)")),
    "for_a_number": (lambda g: (g, g), (2.0,), (RuntimeError, "function TwiceBackward returned "
                     "a gradient different than None at position 2, but the corresponding "
                     "forward input was not a Variable")),
    "too_many": (lambda g: (g, g), (), (RuntimeError, "function TwiceBackward returned an "
                 "incorrect number of gradients (expected 1, got 2)")),
    "leading_one": (lambda g: g.reshape(1, 3), (), [1.0, 1.0, 1.0]),
    "expanded": (lambda g: g.reshape(1, 3).expand(2, 3), (), [2.0, 2.0, 2.0]),
    "double": (lambda g: g.double(), (), [1.0, 1.0, 1.0]),
    "long": (lambda g: g.long(), (), [1.0, 1.0, 1.0]),
    "none_for_a_number": (lambda g: (g * 3, None), (2.0,), [3.0, 3.0, 3.0]),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", list(BACKWARDS))
def test_function_gradients_are_checked(device: str, case: str) -> None:
    ret, extra, want = BACKWARDS[case]
    x = _leaf(lucid, device)
    fn = _function(lucid, ret)
    if isinstance(want, tuple):
        with pytest.raises(want[0]) as info:
            fn.apply(x, *extra).sum().backward()
        assert str(info.value) == want[1]
    else:
        fn.apply(x, *extra).sum().backward()
        assert x.grad.dtype == lucid.float32
        np.testing.assert_array_equal(x.grad.numpy(), want)


@pytest.mark.parametrize("case", list(BACKWARDS))
def test_function_gradients_match_torch(torch: Any, case: str) -> None:
    ret, extra, _ = BACKWARDS[case]
    got = []
    for m in (lucid, torch):
        x = _leaf(m)
        try:
            _function(m, ret).apply(x, *extra).sum().backward()
            got.append((x.grad.numpy().tolist(), str(x.grad.dtype).rsplit(".", 1)[-1]))
        except Exception as e:  # noqa: BLE001  (the error itself is compared)
            got.append((type(e), str(e)))
    assert got[0] == got[1]


def test_function_gradient_sums_under_create_graph() -> None:
    class Square(lucid.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (a,) = ctx.saved_tensors
            return (2 * a * g).reshape(1, 3)

    x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (g,) = lucid.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    assert tuple(g.shape) == (3,)
    np.testing.assert_array_equal(g.detach().numpy(), [2.0, 4.0, 6.0])
    g.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])
