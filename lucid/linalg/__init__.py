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
from ..ops.matmul import matmul
from ..ops.triangular import solve_triangular

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cross", "det", "diagonal", "eigh", "eigvalsh",
    "inv", "inv_ex", "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
    "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_triangular", "svd", "svdvals",
    "vecdot",
    "vector_norm",
]
