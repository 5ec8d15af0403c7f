"""``lucid.testing``: PyTorch's ``torch.testing`` helpers: ``assert_close`` (with PyTorch's
default tolerances per dtype and its failure messages) and ``make_tensor``.

Example::

    from lucid.testing import assert_close, make_tensor
    x = make_tensor(3, 4, dtype=lucid.float32, device="cpu")
    assert_close(model(x), expected)
"""

from ._comparison import assert_close, default_tolerances
from ._creation import make_tensor

__all__ = ["assert_close", "make_tensor", "default_tolerances"]
