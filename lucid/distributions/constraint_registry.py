"""``biject_to`` and ``transform_to``: registries from constraints to transforms that map
unconstrained space onto them, as ``torch.distributions.constraint_registry``.

``biject_to(c)`` gives a bijective transform (usable for HMC and densities);
``transform_to(c)`` gives one that need not be bijective but suits unconstrained
optimisation. Both are looked up by the constraint's class.
"""

from __future__ import annotations

from numbers import Number
from typing import Any

from . import constraints
from .transform_base import ComposeTransform, Transform, identity_transform
from .transforms_elementwise import AffineTransform, ExpTransform, SigmoidTransform
from .transforms_matrix import (
    CorrCholeskyTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    SoftmaxTransform,
    StickBreakingTransform,
)
from .transforms_structural import CatTransform, IndependentTransform, StackTransform

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """A registry linking constraint classes to factories of transforms.

    Example::

        @transform_to.register(MyConstraintClass)
        def my_factory(constraint):
            return MyTransform(constraint.param1)
    """

    def __init__(self) -> None:
        self._registry: dict[type, Any] = {}
        super().__init__()

    def register(self, constraint: Any, factory: Any = None) -> Any:
        """Register ``factory`` (a callable from a constraint to a ``Transform``) for a
        ``Constraint`` subclass or the class of a constraint instance; usable as a
        decorator."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint,
                                                              constraints.Constraint):
            raise TypeError("Expected constraint to be either a Constraint subclass or "
                            f"instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: constraints.Constraint) -> Transform:
        """The transform for ``constraint``; ``NotImplementedError`` when none is
        registered for its class."""
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


@biject_to.register(constraints.real)
@transform_to.register(constraints.real)
def _transform_to_real(constraint: Any) -> Transform:
    return identity_transform


@biject_to.register(constraints.independent)
def _biject_to_independent(constraint: Any) -> Transform:
    return IndependentTransform(biject_to(constraint.base_constraint),
                                constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_to_independent(constraint: Any) -> Transform:
    return IndependentTransform(transform_to(constraint.base_constraint),
                                constraint.reinterpreted_batch_ndims)


@biject_to.register(constraints.positive)
@biject_to.register(constraints.nonnegative)
@transform_to.register(constraints.positive)
@transform_to.register(constraints.nonnegative)
def _transform_to_positive(constraint: Any) -> Transform:
    return ExpTransform()


@biject_to.register(constraints.greater_than)
@biject_to.register(constraints.greater_than_eq)
@transform_to.register(constraints.greater_than)
@transform_to.register(constraints.greater_than_eq)
def _transform_to_greater_than(constraint: Any) -> Transform:
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.lower_bound, 1)])


@biject_to.register(constraints.less_than)
@transform_to.register(constraints.less_than)
def _transform_to_less_than(constraint: Any) -> Transform:
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.upper_bound, -1)])


@biject_to.register(constraints.interval)
@biject_to.register(constraints.half_open_interval)
@transform_to.register(constraints.interval)
@transform_to.register(constraints.half_open_interval)
def _transform_to_interval(constraint: Any) -> Transform:
    lower_is_0 = isinstance(constraint.lower_bound, Number) and constraint.lower_bound == 0
    upper_is_1 = isinstance(constraint.upper_bound, Number) and constraint.upper_bound == 1
    if lower_is_0 and upper_is_1:
        return SigmoidTransform()
    loc = constraint.lower_bound
    scale = constraint.upper_bound - constraint.lower_bound
    return ComposeTransform([SigmoidTransform(), AffineTransform(loc, scale)])


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint: Any) -> Transform:
    return StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint: Any) -> Transform:
    return SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint: Any) -> Transform:
    return LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _transform_to_positive_definite(constraint: Any) -> Transform:
    return PositiveDefiniteTransform()


@biject_to.register(constraints.corr_cholesky)
@transform_to.register(constraints.corr_cholesky)
def _transform_to_corr_cholesky(constraint: Any) -> Transform:
    return CorrCholeskyTransform()


@biject_to.register(constraints.cat)
def _biject_to_cat(constraint: Any) -> Transform:
    return CatTransform([biject_to(c) for c in constraint.cseq], constraint.dim,
                        constraint.lengths)


@transform_to.register(constraints.cat)
def _transform_to_cat(constraint: Any) -> Transform:
    return CatTransform([transform_to(c) for c in constraint.cseq], constraint.dim,
                        constraint.lengths)


@biject_to.register(constraints.stack)
def _biject_to_stack(constraint: Any) -> Transform:
    return StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@transform_to.register(constraints.stack)
def _transform_to_stack(constraint: Any) -> Transform:
    return StackTransform([transform_to(c) for c in constraint.cseq], constraint.dim)
