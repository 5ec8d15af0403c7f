"""``lucid.utils``: ``lucid.utils.data`` is ``lucid.data`` (as ``torch.utils.data``)."""

import sys

from .. import data

sys.modules[__name__ + ".data"] = data

__all__ = ["data"]
