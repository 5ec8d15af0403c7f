"""L-BFGS, with the optional strong-Wolfe line search (as ``torch.optim.LBFGS``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .._tensor import Tensor, _make
from ..autograd import enable_grad, no_grad
from ..backend import get_backend
from ._line_search import strong_wolfe
from .optimizer import Optimizer

__all__ = ["LBFGS"]

_VECTORS = ("d", "prev_flat_grad")
_LISTS = ("old_dirs", "old_stps", "ro", "al")
_SCALARS = ("t", "H_diag")


def _host(t: Any) -> Any:
    """A state value as numpy (tensors), numpy scalars (0-d tensors) or itself."""
    if isinstance(t, Tensor):
        a = np.array(t._be.to_numpy(t._data))
        return a[()] if a.ndim == 0 else a
    return t


def _tensor(a: Any) -> Any:
    """A numpy array or scalar as a host ("cpu") tensor, for the state dict."""
    if isinstance(a, (np.ndarray, np.generic)):
        be = get_backend("cpu")
        return _make(be.from_numpy(np.array(a, order="C", copy=True)), be, False, None)
    return a


class LBFGS(Optimizer):
    """L-BFGS (``torch.optim.LBFGS``: same options, defaults, state and numbers).

    ``step(closure)`` runs up to ``max_iter`` iterations, each along the direction the last
    ``history_size`` curvature pairs give, with step ``lr`` or (``line_search_fn=
    "strong_wolfe"``) a step that meets the strong Wolfe conditions; it stops early when the
    gradient, the step or the loss change falls below the tolerances. ``closure`` must clear
    the gradients, compute the loss, call ``backward()`` and return the loss. One parameter
    group only; the vector algebra runs on the host in the parameters' dtype.

    Example::

        opt = lucid.optim.LBFGS(net.parameters(), lr=1, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = loss_fn(net(x), y)
            loss.backward()
            return loss

        opt.step(closure)
    """

    def __init__(self, params: Iterable[Any], lr: float = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._params = self.param_groups[0]["params"]

    def apply_single(self, grad: Tensor, param: Tensor, state: Any, hyper: Any) -> Any:
        """Not used: L-BFGS updates all parameters together in ``step``."""
        raise NotImplementedError("LBFGS updates all parameters together in step(closure)")

    # ---- flat views over the parameters ---------------------------------------------------
    def _gather_flat_grad(self) -> np.ndarray:
        views = []
        for p in self._params:
            if p.grad is None:
                views.append(np.zeros(p.numel(), dtype=p.dtype.np))
            else:
                views.append(np.asarray(p.grad._be.to_numpy(p.grad._data)).reshape(-1))
        return np.concatenate(views)

    def _values(self) -> list[np.ndarray]:
        return [np.array(p._be.to_numpy(p._data)) for p in self._params]

    def _write(self, p: Tensor, arr: np.ndarray) -> None:
        if isinstance(p._data, np.ndarray) and p._data.flags.writeable:
            p._data[...] = arr
        else:
            p._data = p._be.from_numpy(np.ascontiguousarray(arr))
        p._vc[0] += 1

    def _add_grad(self, step_size: Any, update: np.ndarray) -> None:
        offset = 0
        for p in self._params:
            n = p.numel()
            cur = np.asarray(p._be.to_numpy(p._data))
            dt = cur.dtype
            alpha = dt.type(step_size)
            new = cur + alpha * update[offset:offset + n].reshape(cur.shape).astype(dt,
                                                                                   copy=False)
            self._write(p, new)
            offset += n

    def _set_param(self, values: list[np.ndarray]) -> None:
        for p, v in zip(self._params, values):
            self._write(p, v)

    def _directional_evaluate(self, closure: Callable[[], Any], x: list[np.ndarray], t: Any,
                              d: np.ndarray) -> tuple[float, np.ndarray]:
        self._add_grad(t, d)
        with enable_grad():
            loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    # ---- the step -------------------------------------------------------------------------
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations; returns the first loss ``closure``
        computed.

        Example::

            loss = opt.step(closure)
        """
        with no_grad():
            return self._step(closure)

    def _step(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        lr = float(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        for hook in list(self._optimizer_step_pre_hooks.values()):
            hook(self, (), {})

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss

        d, t = _host(state.get("d")), _host(state.get("t"))
        old_dirs = [_host(v) for v in state.get("old_dirs", [])]
        old_stps = [_host(v) for v in state.get("old_stps", [])]
        ro = [_host(v) for v in state.get("ro", [])]
        h_diag = _host(state.get("H_diag"))
        prev_flat_grad = _host(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")
        al = [_host(v) for v in state["al"]] if "al" in state else None

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)
                num_old = len(old_dirs)
                if al is None:
                    al = [None] * history_size
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q = q + (-al[i]) * old_dirs[i]
                r = q * h_diag
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r = r + (al[i] - be_i) * old_stps[i]
                d = r
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._values()

                def obj_func(x: Any, t: Any, d: np.ndarray) -> tuple[float, np.ndarray]:
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    with enable_grad():
                        loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"], state["t"] = _tensor(d), _tensor(t)
        state["old_dirs"] = [_tensor(v) for v in old_dirs]
        state["old_stps"] = [_tensor(v) for v in old_stps]
        state["ro"] = [_tensor(v) for v in ro]
        state["H_diag"] = _tensor(h_diag)
        state["prev_flat_grad"] = _tensor(prev_flat_grad)
        state["prev_loss"] = prev_loss
        if al is not None:
            state["al"] = [_tensor(v) for v in al]
        for hook in list(self._optimizer_step_post_hooks.values()):
            hook(self, (), {})
        return orig_loss
