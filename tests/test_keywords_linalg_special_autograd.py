"""Keyword arguments of lucid.linalg, lucid.special, lucid.fft and lucid.autograd against
the keywords torch accepts at runtime (its argument parser, not its docs): every call is
made by keyword in both libraries and the results compared; old lucid names that torch
rejects are rejected too."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.linalg as LA
from lucid.autograd import Function, gradcheck, gradgradcheck
from lucid.autograd.gradcheck import GradcheckError

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 3))
SPD = A @ A.T + 3 * np.eye(3)
SYM = A + A.T
TALL = RNG.standard_normal((5, 3))
B5 = RNG.standard_normal((5, 2))
B3 = RNG.standard_normal((3, 2))
T4 = RNG.standard_normal((2, 3, 6))
RANKY = RNG.standard_normal((5, 4)) @ np.diag([10.0, 1.0, 1e-3, 1e-9]) @ RNG.standard_normal((4, 4))


def both(a: np.ndarray) -> tuple[lucid.Tensor, Any]:
    return lucid.tensor(a), torch.tensor(a)


def close(got: Any, ref: Any, rtol: float = 1e-7, atol: float = 1e-9) -> None:
    ref = ref.detach().numpy() if hasattr(ref, "detach") else np.asarray(ref)
    got = got.detach().numpy() if hasattr(got, "detach") else np.asarray(got)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)


# ---- lucid.linalg -----------------------------------------------------------------------------
# (name, keyword arguments as numpy arrays or plain values, how to compare the results)
LINALG = [
    ("cholesky", {"input": SPD, "upper": True}, None),
    ("cholesky_ex", {"input": SPD, "upper": False, "check_errors": False}, "tuple"),
    ("cond", {"input": A, "p": 2}, None),
    ("cond", {"input": A, "p": "fro"}, None),
    ("eigh", {"input": SYM, "UPLO": "U"}, "eigh"),
    ("eigvalsh", {"input": SYM, "UPLO": "L"}, None),
    ("eigvals", {"input": SYM}, "sorted"),
    ("householder_product", {"input": TALL, "tau": RNG.standard_normal(3) * 0.3}, None),
    ("lstsq", {"input": TALL, "b": B5, "rcond": None, "driver": "gelsd"}, "solution"),
    ("matrix_exp", {"input": A * 0.5}, None),
    ("matrix_norm", {"input": A, "ord": "nuc", "dim": (-2, -1), "keepdim": True}, None),
    ("matrix_power", {"input": A, "n": 3}, None),
    ("matrix_power", {"input": A, "n": -2}, None),
    ("matrix_rank", {"input": RANKY, "tol": 1e-4}, None),
    ("matrix_rank", {"input": RANKY, "tol": 0.5, "hermitian": False}, None),
    ("matrix_rank", {"input": RANKY, "atol": 1e-4, "rtol": None, "hermitian": False}, None),
    ("matrix_rank", {"input": RANKY, "rtol": 1e-2}, None),
    ("norm", {"input": A, "ord": 2, "dim": None, "keepdim": False, "dtype": None}, None),
    ("pinv", {"input": TALL, "rcond": 0.1}, None),
    ("pinv", {"input": SYM, "rcond": 1e-3, "hermitian": True}, None),
    ("pinv", {"input": TALL, "atol": 0.5, "rtol": None, "hermitian": False}, None),
    ("svd", {"A": TALL, "full_matrices": False, "driver": None}, "svd"),
    ("svdvals", {"A": TALL, "driver": None}, None),
    ("tensorinv", {"input": RNG.standard_normal((6, 2, 3)), "ind": 1}, None),
    ("tensorsolve", {"input": RNG.standard_normal((2, 3, 6)), "other": RNG.standard_normal((2, 3)),
                     "dims": None}, None),
    ("vector_norm", {"input": T4, "ord": 3, "dim": (0, 2), "keepdim": True}, None),
]


def _args(kwargs: dict, lib: Any) -> dict:
    return {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}


@pytest.mark.parametrize("name,kwargs,how", LINALG,
                         ids=[f"{n}-{'-'.join(k)}" for n, k, _ in LINALG])
def test_linalg_keywords_match_torch(name: str, kwargs: dict, how: str | None) -> None:
    got = getattr(LA, name)(**_args(kwargs, lucid))
    ref = getattr(torch.linalg, name)(**_args(kwargs, torch))
    if how is None:
        close(got, ref)
    elif how == "tuple":
        for g, r in zip(got, ref):
            close(g, r)
    elif how == "sorted":
        np.testing.assert_allclose(np.sort_complex(got.numpy()), np.sort_complex(ref.numpy()),
                                   rtol=1e-7, atol=1e-9)
    elif how == "eigh":
        close(got.eigenvalues, ref.eigenvalues)
        close(abs(got.eigenvectors.numpy()), abs(ref.eigenvectors.numpy()))
    elif how == "svd":
        close(got.S, ref.S)
        close(got.U @ lucid.diag(got.S) @ got.Vh, ref.U @ torch.diag(ref.S) @ ref.Vh)
    elif how == "solution":
        close(got.solution, ref.solution)


def test_linalg_eig_and_ldl_by_keyword() -> None:
    la, ta = both(A)
    vals = LA.eig(input=la).eigenvalues.numpy()
    np.testing.assert_allclose(np.sort_complex(vals),
                               np.sort_complex(torch.linalg.eig(input=ta).eigenvalues.numpy()),
                               rtol=1e-7, atol=1e-9)
    ls, ts = both(SYM)
    lb, tb = both(B3)
    LD, piv = LA.ldl_factor(input=ls, hermitian=False)
    tLD, tpiv = torch.linalg.ldl_factor(input=ts, hermitian=False)
    close(LA.ldl_solve(LD=LD, pivots=piv, B=lb), torch.linalg.ldl_solve(LD=tLD, pivots=tpiv, B=tb))
    LD, piv, info = LA.ldl_factor_ex(input=ls, hermitian=False, check_errors=False)
    assert int(info) == int(torch.linalg.ldl_factor_ex(input=ts).info) == 0
    close(LA.ldl_solve(LD, piv, lb), np.linalg.solve(SYM, B3))


def test_linalg_positional_tolerances_match_torch() -> None:
    lr, tr = both(RANKY)
    assert int(LA.matrix_rank(lr, 1e-4, False)) == int(torch.linalg.matrix_rank(tr, 1e-4, False))
    tol = np.array(1e-4)
    assert int(LA.matrix_rank(lr, tol=lucid.tensor(tol))) == \
        int(torch.linalg.matrix_rank(tr, tol=torch.tensor(tol)))
    ls, ts = both(SYM)
    close(LA.pinv(ls, 1e-3, True), torch.linalg.pinv(ts, 1e-3, True))
    close(LA.pinv(ls, lucid.tensor(np.array(1e-3))), torch.linalg.pinv(ts, torch.tensor(1e-3)))


@pytest.mark.parametrize("name,kwargs", [
    ("pinv", {"rcond": 0.1, "atol": 0.1}), ("pinv", {"rcond": 0.1, "rtol": 0.1}),
    ("matrix_rank", {"tol": 0.1, "atol": 0.1}), ("matrix_rank", {"tol": 0.1, "rtol": 0.1}),
])
def test_linalg_old_tolerance_cannot_mix_with_atol_rtol(name: str, kwargs: dict) -> None:
    la, ta = both(A)
    with pytest.raises(TypeError):
        getattr(torch.linalg, name)(ta, **kwargs)
    with pytest.raises(TypeError):
        getattr(LA, name)(la, **kwargs)


@pytest.mark.parametrize("name", ["svd", "svdvals"])
def test_linalg_svd_driver_is_cuda_only_as_in_torch(name: str) -> None:
    la, ta = both(A)
    with pytest.raises(RuntimeError, match="only supported on CUDA") as ref:
        getattr(torch.linalg, name)(ta, driver="gesvd")
    with pytest.raises(RuntimeError) as got:
        getattr(LA, name)(la, driver="gesvd")
    assert str(got.value) == str(ref.value)


@pytest.mark.parametrize("name,old", [
    ("cholesky", "A"), ("cholesky_ex", "A"), ("cond", "A"), ("eig", "A"), ("eigh", "A"),
    ("eigvals", "A"), ("eigvalsh", "A"), ("ldl_factor", "A"), ("ldl_factor_ex", "A"),
    ("matrix_exp", "A"), ("matrix_norm", "A"), ("norm", "A"), ("pinv", "A"),
    ("matrix_rank", "A"), ("tensorinv", "A"),
])
def test_linalg_old_names_rejected_as_by_torch(name: str, old: str) -> None:
    la, ta = both(SPD)
    with pytest.raises(TypeError):
        getattr(torch.linalg, name)(**{old: ta})
    with pytest.raises(TypeError):
        getattr(LA, name)(**{old: la})


def test_linalg_two_argument_renames_rejected_as_by_torch() -> None:
    for name, old in (("lstsq", {"A": TALL, "B": B5}), ("tensorsolve", {"A": A, "B": B3[:, 0]}),
                      ("matrix_power", {"A": A, "n": 2}),
                      ("householder_product", {"A": TALL, "tau": np.ones(3)})):
        with pytest.raises(TypeError):
            getattr(torch.linalg, name)(**_args(old, torch))
        with pytest.raises(TypeError):
            getattr(LA, name)(**_args(old, lucid))


def test_top_level_matrix_power_takes_input() -> None:
    la, ta = both(A)
    close(lucid.matrix_power(input=la, n=2), torch.matrix_power(input=ta, n=2))
    close(la.matrix_power(n=2), ta.matrix_power(n=2))


# ---- lucid.special ----------------------------------------------------------------------------
POLYNOMIALS = [
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
    "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
]
X01 = np.linspace(-0.9, 0.9, 7)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_special_polynomials_take_x_and_n(name: str) -> None:
    lx, tx = both(X01)
    ln, tn = both(np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
    lf, tf = getattr(lucid.special, name), getattr(torch.special, name)
    close(lf(x=lx, n=3), tf(x=tx, n=3))
    close(lf(x=lx, n=ln), tf(x=tx, n=tn))
    close(lf(x=0.25, n=ln), tf(x=0.25, n=tn))
    with pytest.raises(TypeError):
        tf(input=tx, n=3)
    with pytest.raises(TypeError):
        lf(input=lx, n=3)


@pytest.mark.parametrize("name", ["airy_ai", "scaled_modified_bessel_k0",
                                  "scaled_modified_bessel_k1", "spherical_bessel_j0"])
def test_special_x_functions_take_x(name: str) -> None:
    lx, tx = both(np.linspace(0.1, 3.0, 6))
    close(getattr(lucid.special, name)(x=lx), getattr(torch.special, name)(x=tx), rtol=1e-6)
    with pytest.raises(TypeError):
        getattr(torch.special, name)(input=tx)
    with pytest.raises(TypeError):
        getattr(lucid.special, name)(input=lx)


def test_special_softmax_dtype_is_positional_as_in_torch() -> None:
    lx, tx = both(A)
    got = lucid.special.softmax(lx, 0, lucid.float32)
    ref = torch.special.softmax(tx, 0, torch.float32)
    assert got.dtype is lucid.float32
    close(got, ref, rtol=1e-6)
    close(lucid.special.softmax(input=lx, dim=1, dtype=lucid.float64),
          torch.special.softmax(input=tx, dim=1, dtype=torch.float64))


# ---- lucid.fft ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_fft_frequencies_take_factory_keywords(name: str) -> None:
    got = getattr(lucid.fft, name)(n=6, d=0.5, dtype=lucid.float64, layout=lucid.strided,
                                   device="cpu", pin_memory=False, requires_grad=True)
    ref = getattr(torch.fft, name)(n=6, d=0.5, dtype=torch.float64, layout=torch.strided,
                                   device="cpu", pin_memory=False, requires_grad=True)
    assert got.requires_grad and ref.requires_grad and got.dtype is lucid.float64
    close(got, ref)


# ---- lucid.autograd: grad and backward -------------------------------------------------------
def _pair(a: np.ndarray) -> tuple[lucid.Tensor, Any]:
    return lucid.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def test_autograd_signatures_match_torch() -> None:
    for name in ("grad", "backward", "gradcheck", "gradgradcheck"):
        tp = inspect.signature(getattr(torch.autograd, name)).parameters
        lp = inspect.signature(getattr(lucid.autograd, name)).parameters
        assert [(p.name, p.kind) for p in tp.values()] == \
            [(p.name, p.kind) for p in lp.values() if p.name != "seed"], name
        for p in tp.values():
            assert lp[p.name].default == p.default, (name, p.name)


def test_grad_only_inputs_is_ignored_with_a_future_warning() -> None:
    lx, tx = _pair(A)
    with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
        (lg,) = lucid.autograd.grad(outputs=(lx * lx).sum(), inputs=lx, only_inputs=False)
    with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
        (tg,) = torch.autograd.grad(outputs=(tx * tx).sum(), inputs=tx, only_inputs=False)
    close(lg, tg)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lucid.autograd.grad((lx * lx).sum(), lx, None, None, False, True)


def test_grad_is_grads_batched_matches_torch() -> None:
    lx, tx = _pair(A)
    lw, tw = _pair(B3)
    lu, tu = _pair(B3)
    go = RNG.standard_normal((4, 3, 2))
    lgo, tgo = both(go)
    got = lucid.autograd.grad(outputs=lx @ lw, inputs=(lx, lw, lu), grad_outputs=lgo,
                              allow_unused=True, is_grads_batched=True)
    ref = torch.autograd.grad(outputs=tx @ tw, inputs=(tx, tw, tu), grad_outputs=tgo,
                              allow_unused=True, is_grads_batched=True)
    assert got[2] is None and ref[2] is None
    for g, r in zip(got[:2], ref[:2]):
        close(g, r)
    got = lucid.autograd.grad(lx @ lw, (lx, lu), lgo, is_grads_batched=True,
                              materialize_grads=True)
    ref = torch.autograd.grad(tx @ tw, (tx, tu), tgo, is_grads_batched=True,
                              materialize_grads=True)
    for g, r in zip(got, ref):
        close(g, r)


def test_grad_is_grads_batched_jacobian_and_double_backward() -> None:
    lx, tx = _pair(A[0])
    (lj,) = lucid.autograd.grad((lx ** 3), lx, lucid.eye(3, dtype=lucid.float64),
                                create_graph=True, is_grads_batched=True)
    (tj,) = torch.autograd.grad((tx ** 3), tx, torch.eye(3, dtype=torch.float64),
                                create_graph=True, is_grads_batched=True)
    close(lj, tj)
    (lh,) = lucid.autograd.grad(lj.sum(), lx)
    (th,) = torch.autograd.grad(tj.sum(), tx)
    close(lh, th)


def test_grad_is_grads_batched_shape_error_as_in_torch() -> None:
    lx, tx = _pair(A)
    with pytest.raises(RuntimeError, match="is_grads_batched=True") as ref:
        torch.autograd.grad(tx * 2, tx, torch.ones(3, 3), is_grads_batched=True)
    with pytest.raises(RuntimeError, match="is_grads_batched=True") as got:
        lucid.autograd.grad(lx * 2, lx, lucid.ones(3, 3), is_grads_batched=True)
    head = "If `is_grads_batched=True`, we interpret the first dimension of each grad_output"
    assert str(got.value).startswith(head) and str(ref.value).startswith(head)
    assert "grad_output[0] has a shape of (3,) and output[0] has a shape of (3, 3)" \
        in str(got.value)


def test_grad_materialize_grads_with_allow_unused_false_raises_as_in_torch() -> None:
    lx, tx = _pair(A)
    with pytest.raises(ValueError, match="allow_unused=False") as ref:
        torch.autograd.grad(tx.sum(), tx, allow_unused=False, materialize_grads=True)
    with pytest.raises(ValueError) as got:
        lucid.autograd.grad(lx.sum(), lx, allow_unused=False, materialize_grads=True)
    assert str(got.value) == str(ref.value)


def test_backward_grad_variables_is_the_old_grad_tensors() -> None:
    lx, tx = _pair(A)
    go = RNG.standard_normal((3, 3))
    lgo, tgo = both(go)
    with pytest.warns(FutureWarning, match="`grad_variables` is deprecated"):
        lucid.autograd.backward(tensors=lx * lx, grad_variables=lgo)
    with pytest.warns(FutureWarning, match="`grad_variables` is deprecated"):
        torch.autograd.backward(tensors=tx * tx, grad_variables=tgo)
    close(lx.grad, tx.grad)
    with pytest.warns(FutureWarning), pytest.raises(RuntimeError, match="both passed") as got:
        lucid.autograd.backward(lx * lx, grad_tensors=lgo, grad_variables=lgo)
    with pytest.warns(FutureWarning), pytest.raises(RuntimeError, match="both passed") as ref:
        torch.autograd.backward(tx * tx, grad_tensors=tgo, grad_variables=tgo)
    assert str(got.value) == str(ref.value)
    lucid.autograd.backward(lx * lx, lgo, None, False, None, [lx])
    torch.autograd.backward(tx * tx, tgo, None, False, None, [tx])
    close(lx.grad, tx.grad)


# ---- lucid.autograd: gradcheck and gradgradcheck -----------------------------------------------
def _cube(lib: Any, factor: float) -> Any:
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return factor * x * x * g

    return Cube.apply


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_fast_mode_and_options_agree_with_torch(fast_mode: bool) -> None:
    lx, tx = _pair(RNG.standard_normal(5))
    opts = dict(eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
                check_undefined_grad=True, check_grad_dtypes=True, check_batched_grad=True,
                check_batched_forward_grad=False, check_forward_ad=False,
                check_backward_ad=True, fast_mode=fast_mode, masked=None)
    assert gradcheck(func=_cube(lucid, 3.0), inputs=(lx,), **opts)
    assert torch.autograd.gradcheck(func=_cube(torch, 3.0), inputs=(tx,), **opts)
    opts["check_batched_grad"] = False
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to "
                                             "input 0"):
        gradcheck(func=_cube(lucid, 2.0), inputs=(lx,), **opts)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        torch.autograd.gradcheck(func=_cube(torch, 2.0), inputs=(tx,), **opts)
    opts["raise_exception"] = False
    assert gradcheck(_cube(lucid, 2.0), (lx,), **opts) is False
    assert torch.autograd.gradcheck(_cube(torch, 2.0), (tx,), **opts) is False


def test_gradcheck_fast_mode_several_inputs_and_outputs() -> None:
    la, lb = (lucid.tensor(RNG.standard_normal((3, 4)), requires_grad=True) for _ in range(2))
    assert gradcheck(lambda a, b: ((a * b).sin(), a.exp().sum(0)), (la, lb), fast_mode=True)
    assert gradgradcheck(lambda a, b: (a * b).sin(), (la, lb), fast_mode=True,
                         check_batched_grad=True)


def test_gradcheck_catches_backward_not_multiplied_by_grad_output() -> None:
    def make(lib: Any) -> Callable:
        class Const(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                return x.sum()

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return lib.ones(3, dtype=lib.float64)

        return Const.apply

    lx, tx = _pair(RNG.standard_normal(3))
    with pytest.raises(RuntimeError, match="backward not multiplied by grad_output"):
        torch.autograd.gradcheck(make(torch), (tx,), check_undefined_grad=False)
    with pytest.raises(GradcheckError, match="backward not multiplied by grad_output"):
        gradcheck(make(lucid), (lx,), check_undefined_grad=False)


def test_gradcheck_nondet_tol() -> None:
    calls = iter(range(10 ** 6))

    class Jitter(Function):
        @staticmethod
        def forward(ctx: Any, x: lucid.Tensor) -> lucid.Tensor:
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: lucid.Tensor) -> lucid.Tensor:
            return g * (2 + 1e-9 * (next(calls) % 2))

    lx = lucid.tensor(RNG.standard_normal(3), requires_grad=True)
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(Jitter.apply, (lx,))
    assert gradcheck(Jitter.apply, (lx,), nondet_tol=1e-6)
    assert gradcheck(Jitter.apply, (lx,), nondet_tol=1e-6, fast_mode=True)


@pytest.mark.parametrize("check_undefined_grad", [True, False])
def test_gradcheck_undefined_output_grads(check_undefined_grad: bool) -> None:
    lx, tx = _pair(RNG.standard_normal(3))
    assert gradcheck(lambda t: (t * 2, t.exp(), (t * t).sum()), (lx,),
                     check_undefined_grad=check_undefined_grad)
    assert torch.autograd.gradcheck(lambda t: (t * 2, t.exp(), (t * t).sum()), (tx,),
                                    check_undefined_grad=check_undefined_grad)


def test_gradcheck_forward_mode_is_not_implemented() -> None:
    lx = lucid.tensor(RNG.standard_normal(3), requires_grad=True)
    for kwargs in ({"check_forward_ad": True},
                   {"check_forward_ad": True, "check_batched_forward_grad": True},
                   {"check_forward_ad": True, "check_backward_ad": False}):
        with pytest.raises(NotImplementedError, match="forward-mode"):
            gradcheck(lambda t: t * 2, (lx,), **kwargs)
    with pytest.raises(NotImplementedError, match="forward-mode"):
        gradgradcheck(lambda t: t * t, (lx,), check_fwd_over_rev=True)


@pytest.mark.parametrize("kwargs", [
    {"check_backward_ad": False},
    {"check_batched_grad": True, "check_backward_ad": False, "check_forward_ad": False},
    {"check_batched_forward_grad": True},
])
def test_gradcheck_option_assertions_as_in_torch(kwargs: dict) -> None:
    lx, tx = _pair(RNG.standard_normal(3))
    with pytest.raises(AssertionError) as ref:
        torch.autograd.gradcheck(lambda t: t * 2, (tx,), **kwargs)
    with pytest.raises(AssertionError) as got:
        gradcheck(lambda t: t * 2, (lx,), **kwargs)
    assert str(got.value) == str(ref.value)


@pytest.mark.parametrize("kwargs", [
    {"check_rev_over_rev": False},
    {"check_rev_over_rev": False, "check_fwd_over_rev": True},
    {"check_rev_over_rev": False, "check_fwd_over_rev": True, "check_undefined_grad": False,
     "check_batched_grad": True},
])
def test_gradgradcheck_option_assertions_as_in_torch(kwargs: dict) -> None:
    lx, tx = _pair(RNG.standard_normal(3))
    with pytest.raises(AssertionError) as ref:
        torch.autograd.gradgradcheck(lambda t: t * t, (tx,), **kwargs)
    with pytest.raises(AssertionError) as got:
        gradgradcheck(lambda t: t * t, (lx,), **kwargs)
    assert str(got.value) == str(ref.value)


def test_gradgradcheck_keywords() -> None:
    lx = lucid.tensor(RNG.standard_normal(4), requires_grad=True)
    go = lucid.tensor(RNG.standard_normal(4), requires_grad=True)
    assert gradgradcheck(func=lambda t: t.sin() * t, inputs=(lx,), grad_outputs=(go,),
                         eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                         raise_exception=True, nondet_tol=0.0, check_undefined_grad=True,
                         check_grad_dtypes=True, check_batched_grad=True,
                         check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=True,
                         masked=False)
