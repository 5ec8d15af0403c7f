"""``lucid.linalg``: linear algebra with ``torch.linalg``'s names, arguments, named-tuple
results and errors, batched over leading dims and differentiable where PyTorch is.

Example::

    import lucid
    A = lucid.randn(4, 3, 3, dtype=lucid.float64)
    Q, R = lucid.linalg.qr(A)
    x = lucid.linalg.solve(A, lucid.ones(4, 3, dtype=lucid.float64))
    lucid.linalg.norm(A, "fro", dim=(-2, -1))
"""

from __future__ import annotations

from ..ops.linalg_base import LinAlgError
from ..ops.linalg_decomp import (
    cholesky,
    cholesky_ex,
    det,
    eigh,
    eigvalsh,
    inv,
    inv_ex,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
)
from ..ops.linalg_eig import eig, eigvals
from ..ops.linalg_ldl import ldl_factor, ldl_factor_ex, ldl_solve
from ..ops.linalg_lu import lu, lu_factor, lu_factor_ex, lu_solve
from ..ops.linalg_matrix_exp import matrix_exp
from ..ops.linalg_misc import (
    cross,
    lstsq,
    matrix_power,
    matrix_rank,
    multi_dot,
    pinv,
    vecdot,
)
from ..ops.linalg_misc import linalg_diagonal as diagonal
from ..ops.linalg_norm import matrix_norm, norm, vector_norm
from ..ops.linalg_solvers import cond, solve_ex, tensorinv, tensorsolve
from ..ops.linalg_structured import householder_product, vander
from ..ops.matmul import matmul
from ..ops.triangular import solve_triangular

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig",
    "eigh", "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor",
    "ldl_factor_ex", "ldl_solve", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve",
    "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm",
    "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals",
    "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm",
]
