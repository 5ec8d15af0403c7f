"""torch's older top-level linear algebra (``lu``, ``lu_unpack``, ``lu_solve``,
``triangular_solve``, ``cholesky_solve``, ``cholesky_inverse``, ``orgqr``, ``matrix_exp``)
and their Tensor methods: torch's values and gradients."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid

RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 4, 4))
B = RNG.standard_normal((2, 4, 3))


def _program(m: Any) -> tuple[list, Any, Any]:
    a, b = m.tensor(A, requires_grad=True), m.tensor(B, requires_grad=True)
    LU, piv = m.lu(a)
    P, L, U = m.lu_unpack(LU, piv)
    x = m.lu_solve(b, LU, piv)
    s, coef = m.triangular_solve(b, a.triu(), upper=True)
    s2, _ = m.triangular_solve(b, a.tril(), upper=False, transpose=True)
    spd = a @ a.mT + 4 * m.eye(4, dtype=m.float64)
    ch = m.linalg.cholesky(spd)
    outs = [P @ L @ U, x, s, s2, coef, m.cholesky_solve(b, ch), m.cholesky_inverse(ch),
            m.cholesky_solve(b, ch.mT, upper=True), m.cholesky_inverse(ch.mT, upper=True),
            a.matrix_exp()]
    total = sum((o * (k + 1)).sum() for k, o in enumerate(outs))
    total.backward()
    return [o.detach().numpy() for o in outs], a.grad.numpy(), b.grad.numpy()


def test_legacy_linalg_matches_torch(torch: Any) -> None:
    got, want = _program(lucid), _program(torch)
    for g, w in zip(got[0], want[0]):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-8, atol=1e-9)


def test_lu_with_infos_and_methods(torch: Any) -> None:
    for m in (lucid, torch):
        a = m.tensor(A)
        LU, piv, info = a.lu(get_infos=True)
        assert info.tolist() == [0, 0] and piv.dtype == m.int32
        np.testing.assert_allclose(a.lu_solve(LU, piv).numpy(), np.eye(4) + np.zeros((2, 4, 4)),
                                   atol=1e-10)


def test_orgqr_is_householder_product(torch: Any) -> None:
    q = RNG.standard_normal((5, 3))
    tau = RNG.standard_normal(3)
    got = lucid.orgqr(lucid.tensor(q), lucid.tensor(tau)).numpy()
    want = torch.orgqr(torch.tensor(q), torch.tensor(tau)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(lucid.tensor(q).orgqr(lucid.tensor(tau)).numpy(), want,
                               rtol=1e-10, atol=1e-12)


def test_geqrf_matches_torch_and_orgqr_rebuilds_q(torch: Any) -> None:
    for shape in [(4, 3), (3, 5), (2, 3, 3), (0, 2, 2)]:
        a = np.random.default_rng(0).standard_normal(shape)
        la, lt = lucid.geqrf(lucid.tensor(a))
        ta, tt = torch.geqrf(torch.tensor(a))
        np.testing.assert_allclose(la.numpy(), ta.numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(lt.numpy(), tt.numpy(), rtol=1e-12, atol=1e-12)
    a = RNG.standard_normal((5, 3))
    qr, tau = lucid.tensor(a).geqrf()
    np.testing.assert_allclose(lucid.orgqr(qr, tau).numpy() @ np.triu(qr.numpy())[:3], a,
                               atol=1e-12)
    with pytest.raises(RuntimeError, match="derivative for 'geqrf' is not implemented"):
        lucid.geqrf(lucid.tensor(a, requires_grad=True))[0].sum().backward()
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        lucid.geqrf(lucid.ones(3))
