"""Which part of a graph a capturing backward (``autograd.grad``) must run."""

from __future__ import annotations

from typing import Any

from .function import Op

__all__ = ["useful"]


def useful(starts: list[Op], capture: dict[Any, int]) -> set[Op]:
    """The nodes whose backward leads to something captured (``grad``'s ``inputs``): only
    those run, as torch's engine runs only the part of the graph that reaches the inputs."""
    useful: set[Op] = set()
    done: set[Op] = set()
    stack = list(starts)
    while stack:
        n = stack[-1]
        if n in done:
            stack.pop()
            continue
        pending = False
        for p in n.parents:
            if isinstance(p, Op) and p not in done:
                stack.append(p)
                pending = True
        if pending:
            continue
        stack.pop()
        done.add(n)
        for p in n.parents:
            if p is None:
                continue
            if isinstance(p, Op):
                if p in capture or p in useful:
                    useful.add(n)
                    break
            elif id(p) in capture:
                useful.add(n)
                break
    return useful
