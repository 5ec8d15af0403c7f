"""Constants torch exposes as module attributes of their own class, such as memory formats
and layouts: one instance per name, printed as ``lucid.<name>``, pickled by name (so that
``pickle`` hands back the same object)."""

from __future__ import annotations

__all__ = ["NamedConstant"]


class NamedConstant:
    """A named module-level constant; subclasses name the kind (``memory_format``, ``layout``)
    and their modules hold the instances under their names."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"lucid.{self.name}"

    def __reduce__(self) -> str:
        return self.name
