"""Helpers shared by the nn tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import lucid


def catch(f: Callable[[], Any]) -> str:
    """``"ok <repr>"`` or ``"<ExceptionType>: <message>"`` for calling ``f``."""
    try:
        return f"ok {f()!r}"
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {e}"


def arr(t: Any) -> np.ndarray:
    """A numpy copy of a lucid or torch tensor."""
    if hasattr(t, "detach"):
        t = t.detach()
    if hasattr(t, "cpu") and not hasattr(t, "_be"):
        t = t.cpu()
    return np.array(t.numpy())


def train_alongside(torch: Any, t: Any, lm: Any, x: np.ndarray, steps: int = 2) -> None:
    """Take ``steps`` SGD steps (lr 0.1, loss ``mean(out ** 2)`` on ``x``) on a torch module
    ``t`` and its lucid twin ``lm``, checking that losses, gradients and buffers agree."""
    for _ in range(steps):
        tl = t(torch.from_numpy(x)).square().mean()
        ll = lm(lucid.tensor(x)).square().mean()
        np.testing.assert_allclose(ll.item(), tl.item(), rtol=1e-5)
        t.zero_grad()
        lm.zero_grad()
        tl.backward()
        ll.backward()
        for (n, tp), (n2, lp) in zip(t.named_parameters(), lm.named_parameters()):
            assert n == n2
            np.testing.assert_allclose(arr(lp.grad), tp.grad.numpy(), rtol=2e-4, atol=2e-6)
            with torch.no_grad():
                tp -= 0.1 * tp.grad
            with lucid.no_grad():
                lp.sub_(0.1 * lp.grad)
        for (n, tb), (n2, lb) in zip(t.named_buffers(), lm.named_buffers()):
            assert n == n2
            np.testing.assert_allclose(arr(lb), tb.numpy(), rtol=1e-4, atol=1e-6)
