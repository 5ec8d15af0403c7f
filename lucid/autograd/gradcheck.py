"""``gradcheck`` and ``gradgradcheck``: compare analytic gradients with central finite
differences in float64, with ``torch.autograd.gradcheck``'s options.

Slow mode builds both Jacobians element by element; fast mode (``fast_mode=True``, real
inputs) compares the scalars ``v^T J u`` for random unit vectors ``u`` (per input) and ``v``
(per output), as PyTorch's fast gradcheck. Every analytic vector-Jacobian product is computed
twice and the two must agree within ``nondet_tol``. The checks PyTorch runs on top follow:
backward scaled by a zero ``grad_output`` gives zero, undefined (absent) output gradients
are handled (``check_undefined_grad``), gradient dtypes (``check_grad_dtypes``) and batched
gradients (``check_batched_grad``, through ``grad(is_grads_batched=True)``). lucid has no
forward-mode AD, so the forward-mode checks raise ``NotImplementedError`` when asked for.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._tensor import Tensor, _make
from . import grad_mode
from .engine import grad as autograd_grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]

_NO_FORWARD_AD = (
    "lucid has no forward-mode automatic differentiation, so gradcheck cannot check "
    "forward-mode gradients ({}=True); leave it False"
)
_UNDEFINED_MSG = ('Please look at "Notes about undefined output gradients" in '
                  '"tools/autograd/derivatives.yaml"')


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck`` when analytic and numeric gradients disagree."""


def _outputs(fn: Callable[..., Any], inputs: Sequence[Any]) -> list[Tensor]:
    out = fn(*inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [o for o in outs if isinstance(o, Tensor) and o.dtype.is_floating_point]


def _host(t: Tensor) -> np.ndarray:
    return np.array(t.detach().numpy(), dtype=np.float64).reshape(-1)


def _array_like(out: Tensor, values: np.ndarray) -> Tensor:
    be = out._be
    return _make(be.from_numpy(values.reshape(tuple(out.shape)).astype(out.dtype.np)), be,
                 False, None)


def _set_values(x: Tensor, host: np.ndarray) -> None:
    be = x._be
    x._data = be.assign(x._data, be.from_numpy(host.reshape(tuple(x.shape)).astype(x.dtype.np)))


def _vjp(out: Tensor, diff: list[Tensor], go: Tensor, check_grad_dtypes: bool,
         retain_graph: bool) -> list[np.ndarray | None]:
    """``go^T J`` for every input in ``diff``, flattened (None where the input is unused),
    after the size and (with ``check_grad_dtypes``) dtype checks."""
    grads = autograd_grad(out, diff, go, retain_graph=retain_graph, allow_unused=True)
    res: list[np.ndarray | None] = []
    for g, x in zip(grads, diff):
        if g is None:
            res.append(None)
            continue
        if tuple(g.shape) != tuple(x.shape):
            raise GradcheckError("Analytical gradient has incorrect size")
        if check_grad_dtypes and g.dtype is not x.dtype:
            raise GradcheckError("Gradient has dtype mismatch")
        res.append(_host(g))
    return res


def _reentrant(first: list, second: list, nondet_tol: float) -> None:
    for a, b in zip(first, second):
        if a is None or b is None or a.size == 0:
            continue
        if np.max(np.abs(a - b)) > nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and "
                "grad_output multiple times gives different values, although analytical "
                f"gradient matches numerical gradient.The tolerance for nondeterminism was "
                f"{nondet_tol}.")


def _checked_vjp(out: Tensor, diff: list[Tensor], v: np.ndarray, check_grad_dtypes: bool,
                 nondet_tol: float) -> list[np.ndarray | None]:
    """``_vjp`` with the cotangent ``v``, run twice: the two results must agree within
    ``nondet_tol``."""
    go = _array_like(out, v)
    first = _vjp(out, diff, go, check_grad_dtypes, True)
    _reentrant(first, _vjp(out, diff, go, check_grad_dtypes, False), nondet_tol)
    return first


def _analytic_jacobian(fn: Callable[..., Any], inputs: tuple, diff_idx: list[int], k: int,
                       n_out: int, nondet_tol: float, check_grad_dtypes: bool
                       ) -> list[np.ndarray]:
    """d(output k)/d(input) for every differentiable input, a column per output element
    from one backward (run twice, for the reentrancy check)."""
    diff = [inputs[i] for i in diff_idx]
    jac = [np.zeros((x.numel(), n_out)) for x in diff]
    for j in range(n_out):
        onehot = np.zeros(n_out)
        onehot[j] = 1.0
        out_j = _outputs(fn, inputs)[k]
        if not out_j.requires_grad:
            break
        first = _checked_vjp(out_j, diff, onehot, check_grad_dtypes, nondet_tol)
        for a, g in zip(jac, first):
            if g is not None:
                a[:, j] = g
    return jac


def _perturbed(fn: Callable[..., Any], inputs: tuple, x: Tensor, host: np.ndarray,
               k: int | None) -> list[np.ndarray]:
    """The outputs (or output ``k``) of ``fn`` with ``x`` set to ``host``, as float64."""
    _set_values(x, host)
    with grad_mode.no_grad():
        outs = _outputs(fn, inputs)
    # copy: a view op's output aliases x, which the caller restores
    return [_host(o) for o in (outs if k is None else [outs[k]])]


def _numeric_jacobian(fn: Callable[..., Any], inputs: tuple, x: Tensor, k: int, eps: float,
                      n_out: int) -> np.ndarray:
    host = np.array(x._be.to_numpy(x._data), dtype=np.float64).reshape(-1)
    numeric = np.zeros((x.numel(), n_out))
    for e in range(x.numel()):
        orig = host[e]
        host[e] = orig + eps
        (hi,) = _perturbed(fn, inputs, x, host, k)
        host[e] = orig - eps
        (lo,) = _perturbed(fn, inputs, x, host, k)
        host[e] = orig
        _set_values(x, host)
        numeric[e] = (hi - lo) / (2 * eps)
    return numeric


def _slow(fn: Callable[..., Any], inputs: tuple, diff_idx: list[int], eps: float, atol: float,
          rtol: float, nondet_tol: float, check_grad_dtypes: bool) -> None:
    for k, out in enumerate(_outputs(fn, inputs)):
        analytic = _analytic_jacobian(fn, inputs, diff_idx, k, out.numel(), nondet_tol,
                                      check_grad_dtypes)
        for pos, i in enumerate(diff_idx):
            numeric = _numeric_jacobian(fn, inputs, inputs[i], k, eps, out.numel())
            bad = ~np.isclose(analytic[pos], numeric, rtol=rtol, atol=atol, equal_nan=True)
            if bad.any():
                worst = np.unravel_index(np.argmax(np.abs(analytic[pos] - numeric)), bad.shape)
                raise GradcheckError(
                    f"Jacobian mismatch for output {k} with respect to input {i},\n"
                    f"numerical:{numeric[worst]}\nanalytical:{analytic[pos][worst]}\n"
                    f"(at input element {worst[0]}, output element {worst[1]}; "
                    f"{int(bad.sum())} of {bad.size} entries differ)")


def _unit_vector(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.random(n)
    norm = np.linalg.norm(v)
    return v / norm if norm > 0 else v


def _fast(fn: Callable[..., Any], inputs: tuple, diff_idx: list[int], eps: float, atol: float,
          rtol: float, nondet_tol: float, check_grad_dtypes: bool) -> None:
    """PyTorch's fast gradcheck: ``v^T (J u)`` from one central difference along ``u`` per
    input against ``(v^T J) u`` from one backward per output; the tolerance ``atol`` is
    scaled by ``sum(u) * sum(v)``, the size of ``v^T E u`` for an all-``atol`` error ``E``."""
    rng = np.random.default_rng(0)
    diff = [inputs[i] for i in diff_idx]
    all_u = [_unit_vector(rng, x.numel()) for x in diff]
    outs = _outputs(fn, inputs)
    all_v = [_unit_vector(rng, o.numel()) for o in outs]
    numeric = np.zeros((len(diff), len(outs)))
    for pos, (x, u) in enumerate(zip(diff, all_u)):
        host = np.array(x._be.to_numpy(x._data), dtype=np.float64).reshape(-1)
        orig = host.copy()
        hi = _perturbed(fn, inputs, x, orig + eps * u, None)
        lo = _perturbed(fn, inputs, x, orig - eps * u, None)
        _set_values(x, orig)
        for k, v in enumerate(all_v):
            numeric[pos, k] = float(v @ ((hi[k] - lo[k]) / (2 * eps)))
    analytic = np.zeros_like(numeric)
    for k, v in enumerate(all_v):
        out = _outputs(fn, inputs)[k]
        if not out.requires_grad:
            continue
        first = _checked_vjp(out, diff, v, check_grad_dtypes, nondet_tol)
        for pos, (g, u) in enumerate(zip(first, all_u)):
            analytic[pos, k] = 0.0 if g is None else float(g @ u)
    for pos, i in enumerate(diff_idx):
        for k, v in enumerate(all_v):
            a, n = analytic[pos, k], numeric[pos, k]
            tol = atol * float(all_u[pos].sum()) * float(v.sum())
            if not np.isclose(a, n, rtol=rtol, atol=tol, equal_nan=True):
                raise GradcheckError(
                    f"Jacobian mismatch for output {k} with respect to input {i},\n"
                    f"numerical:{n}\nanalytical:{a}\n"
                    "(fast mode compares v^T J u for random unit vectors u and v; "
                    "fast_mode=False compares the Jacobians element by element)")


def _zero_grads_give_zero(outs: list[Tensor], diff: list[Tensor], what: str) -> None:
    """Backward with all-zero ``grad_outputs`` for ``outs`` must give zero (or no) input
    gradients; ``what`` says which check asked."""
    gos = [_make(o._be.zeros_like(o._data), o._be, False, None) for o in outs]
    try:
        grads = autograd_grad(outs, diff, gos, allow_unused=True)
    except RuntimeError as e:
        if what == "undefined":
            raise GradcheckError("Expected backward function to handle undefined output "
                                 f"grads. {_UNDEFINED_MSG}") from e
        raise
    for g, x in zip(grads, diff):
        if g is None:
            continue
        if not bool(np.all(_host(g) == 0)):
            if what == "undefined":
                raise GradcheckError("Expected all input grads to be undefined or zero when "
                                     f"all output grads are undefined or zero. {_UNDEFINED_MSG}")
            raise GradcheckError("backward not multiplied by grad_output")
        if g.dtype is not x.dtype:
            raise GradcheckError("grad is incorrect type")
        if tuple(g.shape) != tuple(x.shape):
            raise GradcheckError("grad is incorrect size")


def _test_undefined_grad(fn: Callable[..., Any], inputs: tuple, diff: list[Tensor]) -> None:
    """Output gradients that are absent (lucid's form of PyTorch's undefined gradients) or
    zero must give zero input gradients: all outputs at once, then each output left out."""
    outs = [o for o in _outputs(fn, inputs) if o.requires_grad]
    if outs:
        _zero_grads_give_zero(outs, diff, "undefined")
    if len(outs) > 1:
        for skip in range(len(outs)):
            rest = [o for j, o in enumerate(_outputs(fn, inputs)) if o.requires_grad
                    and j != skip]
            if rest:
                _zero_grads_give_zero(rest, diff, "undefined")


def _test_batched_grad(fn: Callable[..., Any], inputs: tuple, diff: list[Tensor]) -> None:
    """``grad(is_grads_batched=True)`` over two random ``grad_outputs`` must equal the two
    separate vector-Jacobian products, stacked."""
    rng = np.random.default_rng(1)
    for k, out in enumerate(o for o in _outputs(fn, inputs) if o.requires_grad):
        gos = [rng.standard_normal(out.numel()) for _ in range(2)]
        expected = [[np.zeros(x.numel()) if g is None else g
                     for g, x in zip(_vjp(out, diff, _array_like(out, go), False, True), diff)]
                    for go in gos]
        batched = _make(out._be.from_numpy(np.stack(gos).reshape((2, *out.shape))
                                           .astype(out.dtype.np)), out._be, False, None)
        try:
            result = autograd_grad(out, diff, batched, retain_graph=True, allow_unused=True,
                                   is_grads_batched=True)
        except RuntimeError as e:
            raise GradcheckError(f"While computing batched gradients, got: {e}") from e
        for pos, (res, x) in enumerate(zip(result, diff)):
            got = np.zeros((2, x.numel())) if res is None else \
                np.array(res.detach().numpy(), dtype=np.float64).reshape(2, -1)
            exp = np.stack([expected[0][pos], expected[1][pos]])
            if not np.allclose(got, exp, rtol=1e-5, atol=1e-8, equal_nan=True):
                raise GradcheckError(f"For output {k} and input {pos}:\n\nbatched gradient "
                                     f"computation gave a different result.\n\nGot:\n{got}"
                                     f"\n\nExpected:\n{exp}")


def _run_checks(func: Callable[..., Any], inputs: tuple, eps: float, atol: float, rtol: float,
                nondet_tol: float, check_undefined_grad: bool, check_grad_dtypes: bool,
                check_batched_grad: bool, fast_mode: bool) -> bool:
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of them have requires_grad=True.")
    for i in diff_idx:
        if inputs[i].dtype.name != "float64":
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point; "
                "the check may fail from rounding", stacklevel=3)
    diff = [inputs[i] for i in diff_idx]
    real = not any(x.dtype.is_complex for x in diff)
    (_fast if fast_mode and real else _slow)(func, inputs, diff_idx, eps, atol, rtol,
                                             nondet_tol, check_grad_dtypes)
    if check_batched_grad:
        _test_batched_grad(func, inputs, diff)
    outs = [o for o in _outputs(func, inputs) if o.requires_grad]
    if outs:
        _zero_grads_give_zero(outs, diff, "mul_by_grad_output")
    if check_undefined_grad:
        _test_undefined_grad(func, inputs, diff)
    return True


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _check_one_of(name: str, flag: bool, other_name: str, other: bool) -> None:
    if not (flag or other):
        raise AssertionError(f"Expected at least one of {name} or {other_name} to be True")


def _check_requires(name: str, flag: bool, needed_name: str, needed: bool) -> None:
    if flag and not needed:
        raise AssertionError(f"Setting {name}=True requires {needed_name} to be True")


def gradcheck(func: Callable[..., Any], inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: bool | None = None) -> bool:
    """Check ``func``'s gradients against central differences ``(f(x+e) - f(x-e)) / 2e``,
    as ``torch.autograd.gradcheck``.

    Every floating input that requires grad is checked against every floating output:
    element by element, or through random projections ``v^T J u`` with ``fast_mode=True``
    (real inputs). Inputs should be float64. Returns True, or raises ``GradcheckError`` (or
    returns False with ``raise_exception=False``) naming the input and the mismatch.

    Each vector-Jacobian product runs twice and the results must agree within
    ``nondet_tol``. Also checked, as in PyTorch: a zero ``grad_output`` gives zero input
    gradients; with ``check_undefined_grad``, absent output gradients (all outputs, then each
    one alone) are treated as zeros; with ``check_grad_dtypes``, each gradient has its
    input's dtype; with ``check_batched_grad``, ``grad(is_grads_batched=True)`` matches the
    separate products. ``masked`` concerns sparse inputs and changes nothing for dense ones.
    lucid has no forward-mode AD: ``check_forward_ad`` and ``check_batched_forward_grad``
    raise ``NotImplementedError`` when True (and ``check_backward_ad=False`` then leaves
    nothing to check).

    Example::

        x = lucid.randn(3, dtype=lucid.float64, requires_grad=True)
        lucid.autograd.gradcheck(lambda t: (t * t).sum(), (x,))
        lucid.autograd.gradcheck(lambda t: t.sin(), (x,), fast_mode=True)
    """
    _check_one_of("check_forward_ad", check_forward_ad, "check_backward_ad", check_backward_ad)
    _check_requires("check_batched_grad", check_batched_grad, "check_backward_ad",
                    check_backward_ad)
    _check_requires("check_batched_forward_grad", check_batched_forward_grad,
                    "check_forward_ad", check_forward_ad)
    if check_forward_ad:
        raise NotImplementedError(_NO_FORWARD_AD.format("check_forward_ad"))
    inputs = _as_tuple(inputs)
    try:
        return _run_checks(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                           check_grad_dtypes, check_batched_grad, fast_mode)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Any = None, *,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False, masked: bool = False, seed: int = 0) -> bool:
    """Check second derivatives: ``gradcheck`` of the function that maps ``(inputs,
    grad_outputs)`` to the gradients of ``func`` computed with ``create_graph=True``, as
    ``torch.autograd.gradgradcheck``, passing the check options on. Random ``grad_outputs``
    (drawn from a generator seeded by ``seed``) are used when none are given;
    ``gen_non_contig_grad_outputs`` changes nothing (lucid's generated tensors are
    contiguous). ``check_fwd_over_rev=True`` needs forward-mode AD, which lucid lacks, and
    raises ``NotImplementedError``.

    Example::

        x = lucid.randn(3, dtype=lucid.float64, requires_grad=True)
        lucid.autograd.gradgradcheck(lambda t: (t.sin() * t).sum(), (x,))
    """
    _check_one_of("check_fwd_over_rev", check_fwd_over_rev, "check_rev_over_rev",
                  check_rev_over_rev)
    _check_requires("check_undefined_grad", check_undefined_grad, "check_rev_over_rev",
                    check_rev_over_rev)
    _check_requires("check_batched_grad", check_batched_grad, "check_rev_over_rev",
                    check_rev_over_rev)
    if check_fwd_over_rev:
        raise NotImplementedError(_NO_FORWARD_AD.format("check_fwd_over_rev"))
    inputs = _as_tuple(inputs)
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
        grad_outputs = _as_tuple(grad_outputs)

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
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes,
                     check_batched_grad=check_batched_grad, fast_mode=fast_mode,
                     masked=masked)
