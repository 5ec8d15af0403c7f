"""The classical orthogonal polynomials of ``torch.special``: Chebyshev (T, U, V, W and their
shifted forms on [0, 1]), Hermite (physicists' H and probabilists' He), Laguerre and Legendre,
each ``f(x, n)`` elementwise with broadcasting.

As in PyTorch: the degree ``n`` is truncated to an integer (a negative, infinite or NaN degree
gives 0), the endpoint values are exact, Chebyshev polynomials of high degree inside their
interval come from their trigonometric closed forms, the rest from the three-term recurrence
(which stops at the first NaN), and Hermite degrees past 128 (float32) / 512 (float64) give NaN.
No gradient, as in PyTorch: the result does not require grad.

The values are computed on a host copy of the arrays (``be.to_numpy`` / ``be.from_numpy``),
which serves every device.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor
from ._util import wrap
from .math_extra import _floats

__all__ = [
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
]

Step = Callable[[int, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


class _Cases:
    """An output filled by rules in priority order: the first rule that matches an element
    gives its value."""

    def __init__(self, x: np.ndarray) -> None:
        self.out = np.zeros(x.shape, x.dtype)
        self.done = np.zeros(x.shape, bool)

    def set(self, mask: Any, value: Any) -> None:
        m = np.broadcast_to(mask, self.out.shape) & ~self.done
        if m.any():
            self.out[m] = np.broadcast_to(value, self.out.shape)[m]
            self.done |= m

    def recur(self, x: np.ndarray, n: np.ndarray, first: np.ndarray, step: Step) -> None:
        """The remaining elements by ``p_0 = 1, p_1 = first, p_{j+1} = step(j, x, p_{j-1},
        p_j)`` up to ``p_n``, stopping where a value turns NaN."""
        rest = ~self.done
        if not rest.any():
            return
        xs, ns = x[rest], n[rest]
        p, q = np.ones_like(xs), np.array(np.broadcast_to(first, x.shape)[rest])
        top = int(ns.max()) if ns.size else 0
        for j in range(1, top):
            act = (ns > j) & ~np.isnan(q)
            if not act.any():
                break
            r = step(j, xs, p, q)
            p = np.where(act, q, p)
            q = np.where(act, r, q)
        self.out[rest] = q
        self.done[:] = True


def _degree(n: np.ndarray) -> np.ndarray:
    """The degree as an int64 (truncated; -1 for a non-finite one)."""
    if n.dtype.kind in "iub":
        return n.astype(np.int64)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(n), np.trunc(np.where(np.isfinite(n), n, 0)), -1
                        ).astype(np.int64)


def _run(input: Any, n: Any, name: str, fn: Callable[..., np.ndarray]
         ) -> Tensor:
    if not isinstance(input, Tensor) and not isinstance(n, Tensor):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(n).__name__}), but expected one of: "
                        "(Tensor x, Tensor n), (Number x, Tensor n), (Tensor x, Number n)")
    a, b = _floats(input, n)
    be = a._be
    hx, hn = np.asarray(be.to_numpy(a._data)), np.asarray(be.to_numpy(b._data))
    shape = np.broadcast_shapes(hx.shape, hn.shape)
    x = np.array(np.broadcast_to(hx, shape))
    k = _degree(np.broadcast_to(hn, shape))
    with np.errstate(all="ignore"):
        out = fn(x, k, 128 if hx.dtype == np.float32 else 512).astype(hx.dtype, copy=False)
    return wrap(be.from_numpy(np.require(out, requirements="C")), be)


def _chebyshev(x: np.ndarray, n: np.ndarray, kind: str, shifted: bool) -> np.ndarray:
    t = x + x - 1 if shifted else x
    nf = n.astype(x.dtype)
    c = _Cases(x)
    c.set(n < 0, 0.0)
    even = n % 2 == 0
    if shifted:
        at_one, at_minus_one, threshold = x == 1, x == 0, {"t": 6, "u": 6, "v": 6, "w": 4}
    else:
        at_one, at_minus_one, threshold = x == 1, x == -1, {"t": 6, "u": 8, "v": 8, "w": 8}
    alt = np.where(even, 1.0, -1.0)
    if kind == "t":
        c.set(at_one, 1.0)
        c.set(at_minus_one, alt)
    elif kind == "u":
        c.set(at_one, nf + 1)
        c.set(at_minus_one, alt * (nf + 1))
    elif kind == "v":
        c.set(at_one, 1.0)
        c.set(at_minus_one, alt * (nf + nf + 1))
    else:
        c.set(at_one, nf + nf + 1)
        c.set(at_minus_one, alt)
    inside = (n > threshold[kind]) & (np.abs(t) < 1)
    if inside.any():
        th = np.arccos(np.clip(t, -1, 1))
        if kind == "t":
            c.set(inside, np.cos(nf * th))
        elif kind == "u":
            s = np.sin(th)
            c.set(inside & (s != 0), np.sin((nf + 1) * th) / s)
            c.set(inside, (nf + 1) * np.cos((nf + 1) * th) / t)
        elif kind == "v":
            c.set(inside & (np.sin(th / 2) != 1), np.cos((nf + 0.5) * th) / np.cos(th / 2))
            c.set(inside, alt * (nf + nf + 1))
        else:
            c.set(inside & (np.cos(th / 2) != 1), np.sin((nf + 0.5) * th) / np.sin(th / 2))
            if shifted:
                c.set(inside, alt)
            else:
                c.set(inside & (x > 0), nf + nf + 1)
                c.set(inside, alt)
    c.set(n == 0, 1.0)
    first = {"t": t, "u": t + t, "v": t + t - 1, "w": t + t + 1}[kind]
    c.set(n == 1, first)
    c.recur(x, n, first, lambda j, xs, p, q: (2 * xs - 1 + (2 * xs - 1) if shifted
                                              else xs + xs) * q - p)
    return c.out


def _hermite_h(x: np.ndarray, n: np.ndarray, limit: int) -> np.ndarray:
    c = _Cases(x)
    c.set(n < 0, 0.0)
    c.set(n == 0, 1.0)
    c.set(n == 1, x + x)
    c.set(n > limit, np.nan)
    c.recur(x, n, x + x, lambda j, xs, p, q: (xs + xs) * q - (2 * j) * p)
    return c.out


def _hermite_he(x: np.ndarray, n: np.ndarray, limit: int) -> np.ndarray:
    c = _Cases(x)
    c.set(n < 0, 0.0)
    c.set(n == 0, 1.0)
    c.set(n == 1, x)
    c.set(n > limit, np.nan)
    c.recur(x, n, x, lambda j, xs, p, q: xs * q - j * p)
    return c.out


def _laguerre(x: np.ndarray, n: np.ndarray, _limit: int) -> np.ndarray:
    c = _Cases(x)
    c.set(n < 0, 0.0)
    c.set(x == 0, 1.0)
    c.set(n == 0, 1.0)
    c.set(n == 1, 1 - x)
    c.recur(x, n, 1 - x, lambda j, xs, p, q: (((j + j) + (1 - xs)) * q - j * p) / (j + 1))
    return c.out


def _legendre(x: np.ndarray, n: np.ndarray, _limit: int) -> np.ndarray:
    c = _Cases(x)
    c.set(n < 0, 0.0)
    c.set(np.abs(x) == 1, np.where((x > 0) | (n % 2 == 0), 1.0, -1.0))
    c.set(n == 0, 1.0)
    c.set(n == 1, x)
    c.recur(x, n, x, lambda j, xs, p, q: ((j + j + 1) * xs * q - j * p) / (j + 1))
    return c.out


def chebyshev_polynomial_t(x: Any, n: Any) -> Tensor:
    """The Chebyshev polynomial of the first kind ``T_n(x)``.

    Example::

        lucid.special.chebyshev_polynomial_t(lucid.tensor([0.5]), 3)   # tensor([-1.])
    """
    return _run(x, n, "chebyshev_polynomial_t", lambda x, k, _: _chebyshev(x, k, "t", False))


def chebyshev_polynomial_u(x: Any, n: Any) -> Tensor:
    """The Chebyshev polynomial of the second kind ``U_n(x)``.

    Example::

        lucid.special.chebyshev_polynomial_u(lucid.tensor([0.5]), 2)   # tensor([0.])
    """
    return _run(x, n, "chebyshev_polynomial_u", lambda x, k, _: _chebyshev(x, k, "u", False))


def chebyshev_polynomial_v(x: Any, n: Any) -> Tensor:
    """The Chebyshev polynomial of the third kind ``V_n(x)``.

    Example::

        lucid.special.chebyshev_polynomial_v(lucid.tensor([0.5]), 1)   # tensor([0.])
    """
    return _run(x, n, "chebyshev_polynomial_v", lambda x, k, _: _chebyshev(x, k, "v", False))


def chebyshev_polynomial_w(x: Any, n: Any) -> Tensor:
    """The Chebyshev polynomial of the fourth kind ``W_n(x)``.

    Example::

        lucid.special.chebyshev_polynomial_w(lucid.tensor([0.5]), 1)   # tensor([2.])
    """
    return _run(x, n, "chebyshev_polynomial_w", lambda x, k, _: _chebyshev(x, k, "w", False))


def shifted_chebyshev_polynomial_t(x: Any, n: Any) -> Tensor:
    """The shifted Chebyshev polynomial of the first kind ``T*_n(x) = T_n(2 x - 1)``.

    Example::

        lucid.special.shifted_chebyshev_polynomial_t(lucid.tensor([0.25]), 2)   # tensor([-0.5])
    """
    return _run(x, n, "shifted_chebyshev_polynomial_t",
                lambda x, k, _: _chebyshev(x, k, "t", True))


def shifted_chebyshev_polynomial_u(x: Any, n: Any) -> Tensor:
    """The shifted Chebyshev polynomial of the second kind ``U_n(2 x - 1)``.

    Example::

        lucid.special.shifted_chebyshev_polynomial_u(lucid.tensor([0.25]), 1)   # tensor([-1.])
    """
    return _run(x, n, "shifted_chebyshev_polynomial_u",
                lambda x, k, _: _chebyshev(x, k, "u", True))


def shifted_chebyshev_polynomial_v(x: Any, n: Any) -> Tensor:
    """The shifted Chebyshev polynomial of the third kind ``V_n(2 x - 1)``.

    Example::

        lucid.special.shifted_chebyshev_polynomial_v(lucid.tensor([0.25]), 1)   # tensor([-2.])
    """
    return _run(x, n, "shifted_chebyshev_polynomial_v",
                lambda x, k, _: _chebyshev(x, k, "v", True))


def shifted_chebyshev_polynomial_w(x: Any, n: Any) -> Tensor:
    """The shifted Chebyshev polynomial of the fourth kind ``W_n(2 x - 1)``.

    Example::

        lucid.special.shifted_chebyshev_polynomial_w(lucid.tensor([0.25]), 1)   # tensor([0.])
    """
    return _run(x, n, "shifted_chebyshev_polynomial_w",
                lambda x, k, _: _chebyshev(x, k, "w", True))


def hermite_polynomial_h(x: Any, n: Any) -> Tensor:
    """The physicists' Hermite polynomial ``H_n(x)``.

    Example::

        lucid.special.hermite_polynomial_h(lucid.tensor([0.5]), 3)   # tensor([-5.])
    """
    return _run(x, n, "hermite_polynomial_h", _hermite_h)


def hermite_polynomial_he(x: Any, n: Any) -> Tensor:
    """The probabilists' Hermite polynomial ``He_n(x)``.

    Example::

        lucid.special.hermite_polynomial_he(lucid.tensor([2.0]), 2)   # tensor([3.])
    """
    return _run(x, n, "hermite_polynomial_he", _hermite_he)


def laguerre_polynomial_l(x: Any, n: Any) -> Tensor:
    """The Laguerre polynomial ``L_n(x)``.

    Example::

        lucid.special.laguerre_polynomial_l(lucid.tensor([1.0]), 2)   # tensor([-0.5])
    """
    return _run(x, n, "laguerre_polynomial_l", _laguerre)


def legendre_polynomial_p(x: Any, n: Any) -> Tensor:
    """The Legendre polynomial ``P_n(x)``.

    Example::

        lucid.special.legendre_polynomial_p(lucid.tensor([0.5]), 2)   # tensor([-0.125])
    """
    return _run(x, n, "legendre_polynomial_p", _legendre)
