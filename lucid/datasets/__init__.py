"""Small real data sets that ship with lucid and work offline."""

from .digits import load_digits

__all__ = ["load_digits"]
