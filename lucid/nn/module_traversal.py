"""Walking the module tree: iteration over parameters, buffers and submodules, and lookup
by dotted path (``get_submodule``, ``get_parameter``, ...)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from .._tensor import Tensor
from .parameter import Parameter

if TYPE_CHECKING:
    from .module import Module

__all__: list[str] = []


class _ModuleTraversal:
    """Traversal methods of ``Module``."""

    # ---- iteration ------------------------------------------------------------------------
    def _named_members(self, get_members_fn: Callable, prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        memo: set[int] = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters of this module and (with ``recurse``) its descendants, each once.

        Example::

            opt = lucid.optim.SGD(net.parameters(), lr=0.1)
        """
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(dotted name, parameter)`` pairs in registration order, depth first; a tied
        parameter comes once unless ``remove_duplicate=False``.

        Example::

            [n for n, _ in net.named_parameters()]   # ['fc1.weight', 'fc1.bias', ...]
        """
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The buffers (persistent or not) of this module and its descendants.

        Example::

            sum(b.numel() for b in net.buffers())
        """
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """``(dotted name, buffer)`` pairs, as ``named_parameters``.

        Example::

            dict(net.named_buffers())
        """
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def children(self) -> Iterator[Module]:
        """The immediate child modules, each once.

        Example::

            list(nn.Sequential(nn.ReLU(), nn.Tanh()).children())
        """
        for _, m in self.named_children():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """``(name, child)`` pairs for the immediate children, each child once.

        Example::

            [n for n, _ in net.named_children()]     # ['fc1', 'fc2']
        """
        memo: set[int] = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in memo:
                memo.add(id(m))
                yield name, m

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        """Every module in the tree, self first, depth first.

        Example::

            sum(isinstance(m, nn.Linear) for m in net.modules())
        """
        for _, m in self.named_modules(remove_duplicate=remove_duplicate):
            yield m

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """``(dotted name, module)`` for every module, self first as ``prefix``; a shared
        module comes once unless ``remove_duplicate=False``.

        Example::

            [n for n, _ in net.named_modules()]      # ['', 'fc1', 'fc2']
        """
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name,
                                       remove_duplicate)

    # ---- lookup by dotted path -------------------------------------------------------------
    def get_submodule(self, target: str) -> Module:
        """The submodule at a dotted path (``""`` is self).

        Example::

            net.get_submodule("encoder.0")
        """
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, _ModuleTraversal):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Replace (or, unless ``strict``, add) the submodule at a dotted path.

        Example::

            net.set_submodule("encoder.0", nn.Linear(4, 4))
        """
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, _ModuleTraversal):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        name = atoms[-1]
        if strict and not hasattr(parent, name):
            raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), _ModuleTraversal):
            raise AttributeError("`" + name + "` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path.

        Example::

            net.get_parameter("fc1.weight")
        """
        _, name, param = self._attr_at(target)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at a dotted path.

        Example::

            net.get_buffer("bn.running_mean")
        """
        mod, name, buf = self._attr_at(target)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return buf

    def _attr_at(self, target: str) -> tuple[Module, str, Any]:
        """``(owning module, attribute name, value)`` for a dotted path."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        return mod, name, getattr(mod, name)
