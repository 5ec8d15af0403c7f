"""``ParameterList`` and ``ParameterDict``: containers of parameters (tensors put in them
become ``Parameter``s)."""

from __future__ import annotations

from collections import OrderedDict
from collections import abc as container_abcs
from collections.abc import Iterable, Iterator
from typing import Any

from ..._tensor import Tensor
from ...ops.legacy import typename
from .._util import abs_index
from ..module import Module
from ..parameter import Parameter

__all__ = ["ParameterList", "ParameterDict"]


def _param_line(k: Any, p: Any, type_name: bool) -> str:
    if isinstance(p, Tensor):
        size = "x".join(str(s) for s in p.shape)
        dev = f" ({p.device})" if p._be.name not in ("cpu",) else ""
        kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
        dt = typename(p) if type_name else f"lucid.{p.dtype.name}"
        return f"  ({k}): {kind} containing: [{dt} of size {size}{dev}]"
    return f"  ({k}): Object of type: {type(p).__name__}"


class ParameterList(Module):
    """A list of parameters (tensors are wrapped into ``Parameter``); other objects are
    stored as they are.

    Example::

        self.scales = nn.ParameterList([nn.Parameter(lucid.ones(4)) for _ in range(3)])
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _get_abs_string_index(self, idx: int) -> str:
        return str(abs_index(idx, len(self)))

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._get_abs_string_index(idx))

    def __setitem__(self, idx: int, param: Any) -> None:
        idx_s = self._get_abs_string_index(idx)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, idx_s, param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> ParameterList:
        return self.extend(parameters)

    def __dir__(self) -> list[str]:
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value: Any) -> ParameterList:
        """Add ``value`` at the end (a tensor becomes a Parameter); returns self.

        Example::

            plist.append(lucid.zeros(3))
        """
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Append every value of an iterable; returns self.

        Example::

            plist.extend([lucid.zeros(2), lucid.ones(2)])
        """
        if not isinstance(values, container_abcs.Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        """One line per entry: its kind, dtype and size.

        Example::

            print(nn.ParameterList([lucid.zeros(2)]))
        """
        return "\n".join(_param_line(k, p, False) for k, p in enumerate(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters (tensors are wrapped into ``Parameter``).

    Example::

        self.params = nn.ParameterDict({"left": nn.Parameter(lucid.randn(5, 10))})
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key: str) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is not a string "
                f"(type is '{type(key).__name__}'). Open an issue on github if you need "
                "non-string keys."
            )
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._keys)

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameters.

        Example::

            p2 = params.copy()
        """
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def setdefault(self, key: str, default: Any = None) -> Any:
        """``self[key]``, first setting it to ``default`` when absent.

        Example::

            params.setdefault("w", lucid.zeros(2))
        """
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove every entry.

        Example::

            params.clear()
        """
        for k in self._keys.copy():
            del self[k]

    def pop(self, key: str) -> Any:
        """Remove ``key`` and return its value.

        Example::

            params.pop("w")
        """
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple[str, Any]:
        """Remove and return the last inserted ``(key, value)``.

        Example::

            k, p = params.popitem()
        """
        k, _ = self._keys.popitem()
        self._keys[k] = None
        val = self[k]
        del self[k]
        return k, val

    def get(self, key: str, default: Any = None) -> Any:
        """``self[key]`` if present, else ``default``.

        Example::

            params.get("w")
        """
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        """A new ParameterDict with ``keys`` all set to ``default``.

        Example::

            params.fromkeys(["a", "b"], lucid.zeros(1))
        """
        return ParameterDict((k, default) for k in keys)

    def keys(self) -> Any:
        """The keys, in insertion order.

        Example::

            list(params.keys())
        """
        return self._keys.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        """``(key, value)`` pairs, in insertion order.

        Example::

            dict(params.items())
        """
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterable[Any]:
        """The values, in insertion order.

        Example::

            list(params.values())
        """
        return (self[k] for k in self._keys)

    def update(self, parameters: Any) -> None:
        """Add or overwrite entries from a mapping or ``(key, value)`` pairs (a plain dict is
        taken in sorted key order, as PyTorch does).

        Example::

            params.update({"b": lucid.zeros(3)})
        """
        if not isinstance(parameters, container_abcs.Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of "
                            "key/value pairs, but got " + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, p in parameters.items():
                self[key] = p
        elif isinstance(parameters, container_abcs.Mapping):
            for key, p in sorted(parameters.items()):
                self[key] = p
        else:
            for j, p in enumerate(parameters):
                if not isinstance(p, container_abcs.Iterable):
                    raise TypeError("ParameterDict update sequence element #" + str(j)
                                    + " should be Iterable; is" + type(p).__name__)
                if not len(p) == 2:
                    raise ValueError("ParameterDict update sequence element #" + str(j)
                                     + " has length " + str(len(p)) + "; 2 is required")
                self[p[0]] = p[1]

    def extra_repr(self) -> str:
        """One line per entry: its kind, type and size.

        Example::

            print(nn.ParameterDict({"w": lucid.zeros(2)}))
        """
        return "\n".join(_param_line(k, p, True) for k, p in self.items())

    def __call__(self, input: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        c = self.copy()
        c.update(other)
        return c

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        c = other.copy()
        c.update(self)
        return c

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self
