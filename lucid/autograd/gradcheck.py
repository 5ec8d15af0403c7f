"""``gradcheck``: compare analytic gradients with central finite differences in float64."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._tensor import Tensor, _make
from . import grad_mode
from .engine import grad as autograd_grad


def _outputs(fn: Callable[..., Any], inputs: Sequence[Any]) -> list[Tensor]:
    out = fn(*inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [o for o in outs if isinstance(o, Tensor) and o.dtype.is_floating_point]


def gradcheck(fn: Callable[..., Any], inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0
              ) -> bool:
    """Check ``fn``'s gradients against central differences ``(f(x+e) - f(x-e)) / 2e``.

    Every floating input that requires grad is checked, element by element, for every
    output element. Inputs should be float64. Returns True, or raises (or returns False
    with ``raise_exception=False``) naming the input and the largest mismatch.

    Example::

        x = lucid.randn(3, dtype=lucid.float64, requires_grad=True)
        lucid.autograd.gradcheck(lambda t: (t * t).sum(), (x,))
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    for i in diff_idx:
        if inputs[i].dtype.name != "float64":
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point; "
                "the check may fail from rounding", stacklevel=2)
    outs = _outputs(fn, inputs)
    for k, out in enumerate(outs):
        n_out = out.numel()
        be = out._be
        analytic = [np.zeros((inputs[i].numel(), n_out)) for i in diff_idx]
        for j in range(n_out):
            g = np.zeros(n_out)
            g[j] = 1.0
            go = _make(be.from_numpy(g.reshape(tuple(out.shape)).astype(out.dtype.np)), be,
                       False, None)
            outs_j = _outputs(fn, inputs)
            if not outs_j[k].requires_grad:
                break
            grads = autograd_grad(outs_j[k], [inputs[i] for i in diff_idx], go,
                                  allow_unused=True)
            for a, gr in zip(analytic, grads):
                if gr is not None:
                    a[:, j] = np.asarray(gr.numpy(), dtype=np.float64).reshape(-1)
        for pos, i in enumerate(diff_idx):
            x = inputs[i]
            numeric = np.zeros_like(analytic[pos])
            flat = x._be.to_numpy(x._data).reshape(-1)  # view on cpu
            host = np.array(flat, dtype=np.float64)
            for e in range(x.numel()):
                orig = host[e]
                vals = []
                for delta in (eps, -eps):
                    host[e] = orig + delta
                    _set_values(x, host)
                    with grad_mode.no_grad():
                        o = _outputs(fn, inputs)[k]
                    # copy: a view op's output aliases x, which is restored below
                    vals.append(np.array(o.detach().numpy(), dtype=np.float64).reshape(-1))
                host[e] = orig
                _set_values(x, host)
                numeric[e] = (vals[0] - vals[1]) / (2 * eps)
            bad = ~np.isclose(analytic[pos], numeric, rtol=rtol, atol=atol, equal_nan=True)
            if bad.any():
                worst = np.unravel_index(np.argmax(np.abs(analytic[pos] - numeric)), bad.shape)
                msg = (
                    f"Jacobian mismatch for output {k} with respect to input {i},\n"
                    f"numerical:{numeric[worst]}\nanalytical:{analytic[pos][worst]}\n"
                    f"(at input element {worst[0]}, output element {worst[1]}; "
                    f"{int(bad.sum())} of {bad.size} entries differ)"
                )
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Any = None, *,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False, masked: bool | None = None, seed: int = 0) -> bool:
    """Check second derivatives: ``gradcheck`` of the function that maps ``(inputs,
    grad_outputs)`` to the gradients of ``func`` computed with ``create_graph=True``, as
    ``torch.autograd.gradgradcheck``. Random ``grad_outputs`` (float64, drawn from a
    generator seeded by ``seed``) are used when none are given.

    Example::

        x = lucid.randn(3, dtype=lucid.float64, requires_grad=True)
        lucid.autograd.gradgradcheck(lambda t: (t.sin() * t).sum(), (x,))
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    n_in = len(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        with grad_mode.no_grad():
            outs = _outputs(func, inputs)
        grad_outputs = tuple(
            _make(o._be.from_numpy(rng.standard_normal(tuple(o.shape)).astype(o.dtype.np)),
                  o._be, True, None) for o in outs)
    else:
        grad_outputs = tuple(grad_outputs) if isinstance(grad_outputs, (tuple, list)) \
            else (grad_outputs,)

    def first_order(*args: Any) -> tuple[Tensor, ...]:
        ins, gos = args[:n_in], args[n_in:]
        with grad_mode.enable_grad():
            outs = _outputs(func, ins)
            pairs = [(o, g) for o, g in zip(outs, gos) if o.requires_grad]
            if not pairs:
                return ()
            grads = autograd_grad([o for o, _ in pairs], [ins[i] for i in diff],
                                  [g for _, g in pairs], create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_order, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol)


def _set_values(x: Tensor, host: np.ndarray) -> None:
    be = x._be
    x._data = be.assign(x._data, be.from_numpy(host.reshape(tuple(x.shape)).astype(x.dtype.np)))


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck`` when analytic and numeric gradients disagree."""
