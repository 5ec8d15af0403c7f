"""Ready-made parametrizations (``torch.nn.utils.parametrizations``): ``orthogonal``,
``weight_norm`` and ``spectral_norm``, each registered with
``parametrize.register_parametrization`` so the state_dict keys are PyTorch's.

Example::

    m = nn.utils.parametrizations.orthogonal(nn.Linear(4, 4))
    lucid.allclose(m.weight @ m.weight.mT, lucid.eye(4), atol=1e-5)     # True
"""

from __future__ import annotations

from enum import Enum, auto

from ... import ops
from ..._tensor import Tensor
from ...autograd import no_grad
from ...ops.linalg_decomp import solve
from ...ops.matmul import matmul, mv
from ...ops.normalization import normalize
from ..module import Module
from ..modules.conv import _ConvTransposeNd
from . import parametrize
from ._orthogonal_maps import geqrf, householder_product, is_orthogonal, make_orthogonal
from ._orthogonal_maps import matrix_exp as _matrix_exp
from .weight_norm import _weight_norm, norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _mH(x: Tensor) -> Tensor:
    return x.conj().mT if x.is_complex() else x.mT


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    base: Tensor

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = ops.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - _mH(X)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = _matrix_exp(A)
            else:
                Id = ops.eye(n, dtype=A.dtype, device=A.device)
                Q = solve(Id - 0.5 * A, Id + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = householder_product(A, tau)
            # NOTE: detached, since an integer cast carries no gradient
            Q = Q * X.diagonal(dim1=-2, dim2=-1).detach().int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = matmul(self.base, Q)
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley "
                    "parametrizations when use_trivialization=False.")
            A, tau = geqrf(Q)
            eye = ops.eye(n, k, dtype=A.dtype, device=A.device)
            d = A.diagonal(dim1=-2, dim2=-1).sign()
            d = ops.where(tau == 0.0, -d, d)
            A = A * (1.0 - eye) + eye * d.unsqueeze(-2)
            return A.mT if transpose else A
        if n == k:
            Q = make_orthogonal(Q) if not is_orthogonal(Q) else Q.clone()
        else:
            N = ops.randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = make_orthogonal(ops.cat([Q, N], dim=-1))
        self.base = Q
        m, c = Q_init.size(-2), Q_init.size(-1)
        return ops.zeros_like(Q_init) - ops.eye(m, c, dtype=Q_init.dtype, device=Q_init.device)


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Constrain ``module.<name>`` (a matrix or batch of matrices) to be orthogonal (or to
    have orthonormal rows / columns when it is not square).

    ``orthogonal_map`` is ``"matrix_exp"`` (default for square matrices), ``"cayley"`` or
    ``"householder"`` (default otherwise). With ``use_trivialization`` (default) the
    registration stores the initial orthogonal matrix in the buffer ``base`` and the
    parameter starts at ``-I``; assigning to ``module.<name>`` re-bases.

    Example::

        m = nn.utils.parametrizations.orthogonal(nn.Linear(5, 3))
        lucid.allclose(m.weight @ m.weight.mT, lucid.eye(3), atol=1e-5)    # True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.size(-2) == weight.size(-1)
                          or weight.is_complex() else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrise ``module.<name>`` as ``g * v / ||v||`` (the norm over every dim but
    ``dim``; ``dim=None``: the whole tensor). ``g`` and ``v`` live in
    ``parametrizations.<name>.original0`` / ``original1``; checkpoints of the legacy
    ``weight_norm`` (``<name>_g`` / ``<name>_v``) still load.

    Example::

        m = nn.utils.parametrizations.weight_norm(nn.Linear(20, 40))
        m.parametrizations.weight.original0.shape     # lucid.Size([40, 1])
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict: dict, prefix: str, local_metadata: dict,
                                 strict: bool, missing_keys: list, unexpected_keys: list,
                                 error_msgs: list) -> None:
        g_key = f"{prefix}{name}_g"
        v_key = f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            original0 = state_dict.pop(g_key)
            original1 = state_dict.pop(v_key)
            state_dict[f"{prefix}parametrizations.{name}.original0"] = original0
            state_dict[f"{prefix}parametrizations.{name}.original1"] = original1

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            with no_grad():
                u = weight_mat.new_empty(h).normal_(0, 1)
                v = weight_mat.new_empty(w).normal_(0, 1)
                self.register_buffer("_u", normalize(u, dim=0, eps=self.eps))
                self.register_buffer("_v", normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        # NOTE: u and v are updated in place, so the buffers keep their identity
        with no_grad():
            for _ in range(n_power_iterations):
                normalize(mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
                normalize(mv(_mH(weight_mat), self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = ops.vdot(u, mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its spectral norm, estimated by power iteration
    (``n_power_iterations`` steps per training access; none in eval mode). The vectors are
    the buffers ``parametrizations.<name>.0._u`` / ``_v``. ``dim`` defaults to 1 for
    ConvTranspose modules and 0 otherwise.

    Example::

        m = nn.utils.parametrizations.spectral_norm(nn.Linear(20, 40))
        list(m.state_dict())[-2:]   # ['parametrizations.weight.0._u', '...0._v']
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, _ConvTransposeNd) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
