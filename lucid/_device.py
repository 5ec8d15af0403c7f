"""``lucid.device``: a parsed device name ("cpu", "gpu"; "cuda" and "mps" mean "gpu")."""

from __future__ import annotations

_ALIASES = {"cuda": "gpu", "mps": "gpu", "metal": "gpu"}


class device:
    """A device name, e.g. ``lucid.device("cpu")``.

    ``"cuda"`` and ``"mps"`` are accepted as names of lucid's ``"gpu"`` device so PyTorch
    scripts run unchanged. A device compares equal to its name string.
    """

    __slots__ = ("type", "index")

    def __init__(self, type: str | device, index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device() expects a string such as 'cpu' or 'gpu', got {type!r}")
        name = type.strip().lower()
        if ":" in name:
            name, _, idx = name.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        self.type = _ALIASES.get(name, name)
        self.index = index

    def __repr__(self) -> str:
        idx = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{idx})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, TypeError):
                return False
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and (
            self.index is None or other.index is None or self.index == other.index
        )

    def __hash__(self) -> int:
        return hash(self.type)

    def __reduce__(self) -> tuple:
        return (device, (self.type, self.index))


def device_name(d: object) -> str:
    """The backend key for a device spec: a ``device``, a string, or None (-> "cpu")."""
    if d is None:
        return "cpu"
    if isinstance(d, device):
        return d.type
    if isinstance(d, str):
        if d == "cpu" or d == "gpu":
            return d
        return device(d).type
    if isinstance(d, int):
        return "gpu"
    t = getattr(d, "type", None)  # e.g. a torch.device
    if isinstance(t, str):
        return device(t).type
    raise TypeError(f"expected a device such as 'cpu' or 'gpu', got {d!r}")
