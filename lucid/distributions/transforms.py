"""Invertible transforms between constrained spaces, as ``torch.distributions.transforms``:
the ``Transform`` base with ``ComposeTransform`` and ``identity_transform``
(``transform_base``), elementwise maps (``transforms_elementwise``), transforms that combine
others (``transforms_structural``) and maps onto the simplex and matrix spaces
(``transforms_matrix``)."""

from .transform_base import ComposeTransform, Transform, identity_transform
from .transforms_elementwise import (
    AbsTransform,
    AffineTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    SoftplusTransform,
    TanhTransform,
)
from .transforms_matrix import (
    CorrCholeskyTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    SoftmaxTransform,
    StickBreakingTransform,
)
from .transforms_structural import (
    CatTransform,
    IndependentTransform,
    ReshapeTransform,
    StackTransform,
)

__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
    "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
    "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
    "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
    "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform",
    "Transform", "identity_transform",
]
