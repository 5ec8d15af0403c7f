"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict`` and the deprecated
``Container`` here, and ``ParameterList``, ``ParameterDict`` from container_param.py
(PyTorch's semantics)."""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections import abc as container_abcs
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain, islice
from typing import Any, TypeVar

from .._util import abs_index, addindent
from ..module import Module
from .container_param import ParameterDict, ParameterList

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
           "ParameterDict"]

T = TypeVar("T")


class Container(Module):
    """Deprecated, as ``torch.nn.Container``: a module holding the keyword modules it is
    built with (subclass ``Module`` instead); warns with torch's FutureWarning.

    Example::

        c = nn.Container(fc=nn.Linear(2, 2))
    """

    def __init__(self, **kwargs: Any) -> None:
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now "
                      "implemented in `nn.Module`. Subclass that instead.", FutureWarning,
                      stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class Sequential(Module):
    """Modules run one after another, each on the output of the previous.

    Built from modules (named "0", "1", ...) or from an ``OrderedDict`` of named modules.
    Supports indexing (negative too), slicing (a new Sequential), ``len``, ``append``,
    ``insert``, ``extend``, ``pop``, ``del``, item assignment and ``+``.

    Example::

        net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        net[-1]           # Linear(in_features=8, out_features=2, bias=True)
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator: Iterable[T], idx: int) -> T:
        return next(islice(iterator, abs_index(idx, len(self)), None))

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(self._modules.values(), idx)

    def __setitem__(self, idx: int, module: Module) -> None:
        key = self._get_item_by_idx(self._modules.keys(), idx)
        setattr(self, key, module)

    def __delitem__(self, idx: int | slice) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._get_item_by_idx(self._modules.keys(), idx))
        self.__dict__["_modules"] = OrderedDict(
            (str(i), m) for i, m in enumerate(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        ret = Sequential()
        for layer in chain(self, other):
            ret.append(layer)
        return ret

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        offset = len(self)
        for i, module in enumerate(other):
            self.add_module(str(i + offset), module)
        return self

    def __mul__(self, other: int) -> Sequential:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        combined = Sequential()
        offset = 0
        for _ in range(other):
            for module in self:
                combined.add_module(str(offset), module)
                offset += 1
        return combined

    __rmul__ = __mul__

    def pop(self, key: int | slice) -> Module:
        """Remove and return the module at ``key``.

        Example::

            last = net.pop(-1)
        """
        v = self[key]
        del self[key]
        return v

    def __dir__(self) -> list[str]:
        return [k for k in super().__dir__() if not k.isdigit()]

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def forward(self, input: Any) -> Any:
        """Run the modules in order, each on the previous output.

        Example::

            nn.Sequential(nn.Linear(4, 2), nn.ReLU())(lucid.randn(3, 4))
        """
        for module in self:
            input = module(input)
        return input

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end; returns self.

        Example::

            net.append(nn.ReLU())
        """
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Insert ``module`` before position ``index`` (negative allowed); returns self.

        Example::

            net.insert(0, nn.Flatten())
        """
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not (-n <= index <= n):
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        """Append every module of ``sequential``; returns self.

        Example::

            net.extend([nn.Linear(2, 2), nn.Tanh()])
        """
        for layer in sequential:
            self.append(layer)
        return self


class ModuleList(Module):
    """A list of registered submodules.

    Example::

        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        for layer in self.layers:
            x = layer(x)
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def _get_abs_string_index(self, idx: int) -> str:
        return str(abs_index(idx, len(self)))

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[self._get_abs_string_index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._get_abs_string_index(idx), module)

    def __delitem__(self, idx: int | slice) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._get_abs_string_index(idx))
        self.__dict__["_modules"] = OrderedDict(
            (str(i), m) for i, m in enumerate(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __repr__(self) -> str:
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        spans = [[0, 0]]
        blocks = [reprs[0]]
        for i, r in enumerate(reprs[1:], 1):
            if r == blocks[-1]:
                spans[-1][1] += 1
                continue
            spans.append([i, i])
            blocks.append(r)
        lines = []
        for (a, b), r in zip(spans, blocks):
            local = f"({a}): {r}" if a == b else f"({a}-{b}): {b - a + 1} x {r}"
            lines.append(addindent(local, 2, indent_blank=True))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self) -> list[str]:
        return [k for k in super().__dir__() if not k.isdigit()]

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before position ``index``.

        Example::

            layers.insert(0, nn.Identity())
        """
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module: Module) -> ModuleList:
        """Add ``module`` at the end; returns self.

        Example::

            layers.append(nn.Linear(4, 4))
        """
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key: int | slice) -> Module:
        """Remove and return the module at ``key``.

        Example::

            layers.pop(0)
        """
        v = self[key]
        del self[key]
        return v

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Append every module of an iterable; returns self.

        Example::

            layers.extend([nn.ReLU(), nn.Tanh()])
        """
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class ModuleDict(Module):
    """An ordered dict of registered submodules.

    Example::

        self.heads = nn.ModuleDict({"cls": nn.Linear(8, 10), "box": nn.Linear(8, 4)})
        out = self.heads["cls"](x)
    """

    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every entry.

        Example::

            heads.clear()
        """
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove ``key`` and return its module.

        Example::

            heads.pop("box")
        """
        v = self[key]
        del self[key]
        return v

    def keys(self) -> Any:
        """The keys, in insertion order.

        Example::

            list(heads.keys())
        """
        return self._modules.keys()

    def items(self) -> Any:
        """``(key, module)`` pairs, in insertion order.

        Example::

            dict(heads.items())
        """
        return self._modules.items()

    def values(self) -> Any:
        """The modules, in insertion order.

        Example::

            list(heads.values())
        """
        return self._modules.values()

    def update(self, modules: Any) -> None:
        """Add or overwrite entries from a mapping or an iterable of ``(key, module)`` pairs.

        Example::

            heads.update({"seg": nn.Linear(8, 2)})
        """
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value "
                            "pairs, but got " + type(modules).__name__)
        if isinstance(modules, (OrderedDict, ModuleDict, container_abcs.Mapping)):
            for key, module in modules.items():
                self[key] = module
        else:
            for j, m in enumerate(modules):
                if not isinstance(m, container_abcs.Iterable):
                    raise TypeError("ModuleDict update sequence element #" + str(j)
                                    + " should be Iterable; is" + type(m).__name__)
                if not len(m) == 2:
                    raise ValueError("ModuleDict update sequence element #" + str(j)
                                     + " has length " + str(len(m)) + "; 2 is required")
                self[m[0]] = m[1]
