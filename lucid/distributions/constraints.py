"""Constraints on distribution parameters and values, as ``torch.distributions.constraints``.

A constraint's ``check(value)`` gives a bool tensor of shape ``value.shape[:-event_dim]``
(one verdict per event). The public names are instances (``positive``, ``simplex``, ...) or
classes taking bounds (``interval(low, high)``, ``greater_than(lower_bound)``, ...).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops as _ops
from .._tensor import Tensor

__all__ = [
    "Constraint", "MixtureSameFamilyConstraint", "boolean", "cat", "corr_cholesky", "dependent",
    "dependent_property", "greater_than", "greater_than_eq", "half_open_interval",
    "independent", "integer_interval", "interval", "is_dependent", "less_than",
    "lower_cholesky", "lower_triangular", "multinomial", "nonnegative", "nonnegative_integer",
    "one_hot", "positive", "positive_definite", "positive_integer", "positive_semidefinite",
    "real", "real_vector", "simplex", "square", "stack", "symmetric", "unit_interval",
]


class Constraint:
    """The base of all constraints: a region over which a variable is valid.

    ``is_discrete`` says whether the region is discrete; ``event_dim`` is how many rightmost
    dims together make one event that ``check`` judges as a whole.
    """

    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        """A bool tensor: whether each event of ``value`` satisfies the constraint."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for a variable whose support depends on other variables; it has no
    ``check``."""

    def __init__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented
                 ) -> None:
        self._is_discrete = is_discrete
        self._event_dim = event_dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented
                 ) -> _Dependent:
        """A new dependent constraint with the given static attributes."""
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x: Tensor) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: Any) -> bool:
    """Whether ``constraint`` is a dependent constraint (which cannot be checked)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that is also a dependent constraint: on a class it reads as ``dependent``,
    on an instance it gives the instance's actual constraint.

    Example::

        @constraints.dependent_property(is_discrete=False, event_dim=0)
        def support(self):
            return constraints.interval(self.low, self.high)
    """

    def __init__(self, fn: Any = None, *, is_discrete: Any = NotImplemented,
                 event_dim: Any = NotImplemented) -> None:
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn: Any) -> _DependentProperty:  # type: ignore[override]
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """Reinterprets the rightmost ``reinterpreted_batch_ndims`` batch dims of a base
    constraint as event dims: an event is valid when all its elements are."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"expected a Constraint, got {type(base_constraint).__name__}")
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError("reinterpreted_batch_ndims must be a non-negative int, got "
                             f"{reinterpreted_batch_ndims!r}")
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value: Tensor) -> Tensor:
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            expected = self.base_constraint.event_dim + self.reinterpreted_batch_ndims
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.dim()}")
        n = self.reinterpreted_batch_ndims
        if n:
            result = result.reshape(tuple(result.shape[:result.dim() - n]) + (-1,)).all(-1)
        return result

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__[1:]}({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


class MixtureSameFamilyConstraint(Constraint):
    """The support of a ``MixtureSameFamily``: a value is valid when it satisfies the
    component distribution's constraint (checked with the component dim added back)."""

    def __init__(self, base_constraint: Constraint) -> None:
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"expected a Constraint, got {type(base_constraint).__name__}")
        self.base_constraint = base_constraint
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim

    def check(self, value: Tensor) -> Tensor:
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        keep = value.dim() - self.event_dim
        return result.reshape(tuple(result.shape[:keep]) + (-1,)).all(-1)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.base_constraint!r})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        is_boolean = (value == 0) | (value == 1)
        return is_boolean.all(-1) & (value.sum(-1) == 1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound}, "
                f"upper_bound={self.upper_bound})")


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound})"


class _Real(Constraint):
    def check(self, value: Tensor) -> Tensor:
        return value == value  # False for NaN


class _GreaterThan(Constraint):
    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        return self.lower_bound < value

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value: Tensor) -> Tensor:
        return self.lower_bound <= value


class _LessThan(Constraint):
    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound}, "
                f"upper_bound={self.upper_bound})")


class _HalfOpenInterval(_Interval):
    def check(self, value: Tensor) -> Tensor:
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    """Nonnegative entries along the last dim that sum to one (within 1e-6)."""

    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Nonnegative counts along the last dim summing to at most ``upper_bound``."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, x: Tensor) -> Tensor:
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        return (_ops.tril(value) == value).reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        lower = (_ops.tril(value) == value).reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)
        positive_diagonal = (_ops.diagonal(value, 0, -2, -1) > 0).all(-1)
        return lower & positive_diagonal


class _CorrCholesky(Constraint):
    """Lower-Cholesky matrices whose rows have unit Euclidean norm."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        tol = float(np.finfo(value.dtype.np).eps) * value.shape[-1] * 10
        row_norm = value.detach().pow(2).sum(-1).sqrt()
        unit_row_norm = ((row_norm - 1.0).abs() <= tol).all(-1)
        return _LowerCholesky().check(value) & unit_row_norm


class _Square(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        return _ops.full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1],
                         dtype="bool", device=value.device)


class _Symmetric(_Square):
    def check(self, value: Tensor) -> Tensor:
        square = super().check(value)
        if not bool(square.all()):
            return square
        other = value.mT
        close = (value - other).abs() <= other.abs() * 1e-5 + 1e-6  # torch.isclose(atol=1e-6)
        return close.reshape(
            tuple(value.shape[:-2]) + (-1,)).all(-1)


def _host_matrices(value: Tensor) -> np.ndarray:
    return np.asarray(value.detach().cpu().numpy(), dtype=np.float64)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value: Tensor) -> Tensor:
        sym = super().check(value)
        if not bool(sym.all()):
            return sym
        ok = (np.linalg.eigvalsh(_host_matrices(value)) >= 0).all(-1)
        return _ops.tensor(np.asarray(ok), device=value.device)


class _PositiveDefinite(_Symmetric):
    def check(self, value: Tensor) -> Tensor:
        sym = super().check(value)
        if not bool(sym.all()):
            return sym
        host = _host_matrices(value)
        ok = np.empty(host.shape[:-2], dtype=bool)
        for i in np.ndindex(*host.shape[:-2]):
            try:
                np.linalg.cholesky(host[i])
                ok[i] = True
            except np.linalg.LinAlgError:
                ok[i] = False
        return _ops.tensor(ok, device=value.device)


class _Cat(Constraint):
    """Applies the constraints ``cseq`` to consecutive slices of ``lengths`` along ``dim``
    (as ``cat`` joins them)."""

    def __init__(self, cseq: Any, dim: int = 0, lengths: Any = None) -> None:
        if not all(isinstance(c, Constraint) for c in cseq):
            raise TypeError("every element of cseq must be a Constraint")
        self.cseq = list(cseq)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise ValueError(f"lengths ({len(self.lengths)}) must match cseq ({len(self.cseq)})")
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return max(c.event_dim for c in self.cseq)

    def check(self, value: Tensor) -> Tensor:
        if not -value.dim() <= self.dim < value.dim():
            raise IndexError(f"dim {self.dim} out of range for a value of {value.dim()} dims")
        checks = []
        start = 0
        for constr, length in zip(self.cseq, self.lengths):
            checks.append(constr.check(value.narrow(self.dim, start, length)))
            start = start + length
        return _ops.cat(checks, self.dim)


class _Stack(Constraint):
    """Applies the constraints ``cseq`` to the slices of ``value`` along ``dim`` (as
    ``stack`` joins them)."""

    def __init__(self, cseq: Any, dim: int = 0) -> None:
        if not all(isinstance(c, Constraint) for c in cseq):
            raise TypeError("every element of cseq must be a Constraint")
        self.cseq = list(cseq)
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        dim = max(c.event_dim for c in self.cseq)
        if self.dim + dim < 0:
            dim += 1
        return dim

    def check(self, value: Tensor) -> Tensor:
        if not -value.dim() <= self.dim < value.dim():
            raise IndexError(f"dim {self.dim} out of range for a value of {value.dim()} dims")
        vs = [value.select(self.dim, i) for i in range(value.shape[self.dim])]
        return _ops.stack([c.check(v) for v, c in zip(vs, self.cseq)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
