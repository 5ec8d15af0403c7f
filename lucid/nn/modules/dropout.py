"""``Dropout``, the channel dropouts ``Dropout1d``, ``Dropout2d``, ``Dropout3d``, and the
alpha dropouts ``AlphaDropout`` and ``FeatureAlphaDropout``."""

from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from ..module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout"]


class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        """PyTorch's text for the options.

        Example::

            nn.Dropout(0.2).extra_repr()     # "p=0.2, inplace=False"
        """
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero elements with probability ``p`` in training and scale the rest by 1/(1-p);
    identity in eval mode. Seeded by ``lucid.manual_seed``.

    Example::

        nn.Dropout(0.5)(lucid.ones(8))
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply dropout.

        Example::

            drop(lucid.ones(8))
        """
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) inputs, as ``torch.nn.Dropout1d``.

    Example::

        nn.Dropout1d(0.5)(lucid.ones(2, 4, 8))
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply channel dropout.

        Example::

            drop(lucid.ones(2, 4, 8))
        """
        return F.dropout2d(input.unsqueeze(-1), self.p, self.training, self.inplace).squeeze(-1)


class Dropout2d(_DropoutNd):
    """Zero whole channels of (N, C, H, W) inputs, as ``torch.nn.Dropout2d``.

    Example::

        nn.Dropout2d(0.5)(lucid.ones(2, 4, 3, 3))
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply channel dropout.

        Example::

            drop(lucid.ones(2, 4, 3, 3))
        """
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs, as
    ``torch.nn.Dropout3d``.

    Example::

        nn.Dropout3d(0.5)(lucid.ones(2, 4, 3, 3, 3))
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply channel dropout.

        Example::

            drop(lucid.ones(2, 4, 3, 3, 3))
        """
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Alpha dropout for SELU networks, as ``torch.nn.AlphaDropout``: dropped values take
    SELU's negative saturation and the output keeps zero mean and unit variance; identity in
    eval mode.

    Example::

        nn.Sequential(nn.Linear(8, 8), nn.SELU(), nn.AlphaDropout(0.1))
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply alpha dropout.

        Example::

            drop(lucid.randn(4, 8))
        """
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels, as ``torch.nn.FeatureAlphaDropout``.

    Example::

        nn.FeatureAlphaDropout(0.2)(lucid.randn(2, 4, 5, 5))
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply channel alpha dropout.

        Example::

            drop(lucid.randn(2, 4, 5, 5))
        """
        return F.feature_alpha_dropout(input, self.p, self.training)
