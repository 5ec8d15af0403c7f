"""Random tensors and the global generator; ``lucid.manual_seed`` makes every path
reproducible. Numbers are drawn on the host, so one seed gives the same values on every
device."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _make
from ..autograd import grad_mode
from ..backend import get_backend
from ._util import cast, sized
from ._util import size_arg as shape_arg
from .elementwise import add, mul
from .factory_options import check_layout, leaf
from .views import check_leaf, written

_grad_on = grad_mode._state


class Generator:
    """A random number generator, as ``torch.Generator``.

    Example::

        g = lucid.Generator().manual_seed(0)
        lucid.randn(3, generator=g)
    """

    def __init__(self, device: Any = "cpu") -> None:
        self._seed = int(np.random.SeedSequence().entropy % (2**63))
        self.rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self.rng = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self) -> int:
        return self.manual_seed(int(np.random.SeedSequence().entropy % (2**63)))._seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> dict:
        return self.rng.bit_generator.state

    def set_state(self, state: dict) -> Generator:
        self.rng.bit_generator.state = state
        return self


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the global generator (and so every random op, dropout and shuffling)."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> dict:
    return default_generator.get_state()


def set_rng_state(new_state: dict) -> None:
    """Restore the default generator's state from ``get_rng_state()``."""
    default_generator.set_state(new_state)


def _gen(generator: Generator | None) -> np.random.Generator:
    return (generator or default_generator).rng


def _out(data: Any, be: Any, requires_grad: bool) -> Tensor:
    return _make(data, be, False, None) if not requires_grad else leaf(data, be, True)


def _float(dtype: Any) -> _dtype.dtype:
    d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    if not d.is_floating_point:
        raise RuntimeError(f"expected a floating point dtype, got {d}")
    return d


def rand(*sizes: Any, size: Any = None, generator: Generator | None = None,
         dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: bool = False,
         requires_grad: bool = False) -> Tensor:
    """Uniform samples from [0, 1)."""
    be = get_backend(device)
    if layout is not None or pin_memory:
        check_layout("rand", layout, pin_memory, be)
    shape = shape_arg(sized("rand", sizes, size))
    return _out(be.rand(_gen(generator), shape, _float(dtype)), be, requires_grad)


def randn(*sizes: Any, size: Any = None, generator: Generator | None = None,
          dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: bool = False,
          requires_grad: bool = False) -> Tensor:
    """Standard normal samples."""
    be = get_backend(device)
    if layout is not None or pin_memory:
        check_layout("randn", layout, pin_memory, be)
    shape = shape_arg(sized("randn", sizes, size))
    return _out(be.randn(_gen(generator), shape, _float(dtype)), be, requires_grad)


def randint(low: int = 0, high: int | None = None, size: Any = None, *,
            generator: Generator | None = None, dtype: Any = None, layout: Any = None,
            device: Any = None, pin_memory: bool = False, requires_grad: bool = False
            ) -> Tensor:
    """Integers from [low, high) (int64 unless ``dtype`` says otherwise)."""
    if size is None:
        if isinstance(high, (tuple, list)):
            low, high, size = 0, low, high
        else:
            raise TypeError("randint() missing required argument 'size'")
    if high is None:
        low, high = 0, low
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    be = get_backend(device)
    if layout is not None or pin_memory:
        check_layout("randint", layout, pin_memory, be)
    d = _dtype.int64 if dtype is None else _dtype.to_dtype(dtype)
    return _out(be.randint(_gen(generator), int(low), int(high), shape_arg((size,)), d), be,
                requires_grad)


def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None,
             layout: Any = None, device: Any = None, pin_memory: bool = False,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of ``0..n-1``."""
    be = get_backend(device)
    if layout is not None or pin_memory:
        check_layout("randperm", layout, pin_memory, be)
    d = _dtype.int64 if dtype is None else _dtype.to_dtype(dtype)
    return _out(be.randperm(_gen(generator), int(n), d), be, requires_grad)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *,
           generator: Generator | None = None, dtype: Any = None, layout: Any = None,
           device: Any = None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """Normal samples with the given mean and std (numbers or tensors). ``layout``,
    ``pin_memory`` and ``requires_grad`` go with the float ``mean``/``std`` form."""
    if layout is not None or pin_memory:
        check_layout("normal", layout, pin_memory, get_backend(device))
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        ref = mean if isinstance(mean, Tensor) else std
        shape = np.broadcast_shapes(tuple(getattr(mean, "shape", ())),
                                    tuple(getattr(std, "shape", ())))
        z = randn(*shape, generator=generator, dtype=ref.dtype, device=ref.device)
        # the result has the dtype of the mean tensor (else of std), as torch's
        std, mean = (cast(v, ref.dtype) if isinstance(v, Tensor) else v for v in (std, mean))
        return add(mul(z, std), mean).detach()
    if size is None:
        raise TypeError("normal() with float mean and std needs a size")
    z = randn(*shape_arg((size,)), generator=generator, dtype=dtype, device=device)
    out = (z * std + mean).detach()  # type: ignore[operator]
    if requires_grad:
        out.requires_grad_(True)
    return out


def uniform(low: float = 0.0, high: float = 1.0, size: Any = None, *,
            generator: Generator | None = None, dtype: Any = None, device: Any = None,
            requires_grad: bool = False) -> Tensor:
    """Uniform samples from [low, high)."""
    if size is None:
        raise TypeError("uniform() needs a size")
    u = rand(*shape_arg((size,)), generator=generator, dtype=dtype, device=device)
    out = (u * (high - low) + low).detach()  # type: ignore[operator]
    if requires_grad:
        out.requires_grad_(True)
    return out


def bernoulli(input: Tensor, p: Any = None, *, generator: Generator | None = None) -> Tensor:
    """0/1 samples with probabilities ``input`` (or a fixed ``p``)."""
    be = input._be
    probs = input._data if p is None else be.full(tuple(input.shape), p, input.dtype)
    return _out(be.bernoulli(_gen(generator), probs, tuple(input.shape), input.dtype), be, False)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None) -> Tensor:
    rng = _gen(generator)
    p = np.asarray(input.detach().numpy(), dtype=np.float64)
    rows = p.reshape(-1, p.shape[-1])
    out = np.stack([rng.choice(rows.shape[1], num_samples, replace=replacement,
                               p=r / r.sum()) for r in rows])
    out = out.reshape(p.shape[:-1] + (num_samples,)).astype(np.int64)
    be = input._be
    return _out(be.from_numpy(out), be, False)


def _inplace_sampler(fn: Any) -> Any:
    def f(self: Tensor, *args: Any, generator: Generator | None = None, **kw: Any) -> Tensor:
        if self._rg and _grad_on.on:
            check_leaf(self)
        return written(self, fn(self, *args, generator=generator, **kw)._data)

    return f


def _normal_like(t: Tensor, mean: float = 0.0, std: float = 1.0, *,
                 generator: Generator | None = None) -> Tensor:
    return normal(mean, std, tuple(t.shape), generator=generator, dtype=t.dtype, device=t._be)


def _uniform_like(t: Tensor, a: float = 0.0, b: float = 1.0, *,
                  generator: Generator | None = None) -> Tensor:
    return uniform(a, b, tuple(t.shape), generator=generator, dtype=t.dtype, device=t._be)


def _bernoulli_like(t: Tensor, p: float = 0.5, *, generator: Generator | None = None) -> Tensor:
    return bernoulli(t, p, generator=generator)


normal_ = _inplace_sampler(_normal_like)
uniform_ = _inplace_sampler(_uniform_like)
bernoulli_ = _inplace_sampler(_bernoulli_like)


__all__ = [
    "bernoulli", "bernoulli_", "get_rng_state", "initial_seed", "manual_seed", "multinomial",
    "normal", "normal_", "rand", "randint", "randn", "randperm", "seed", "set_rng_state", "uniform",
    "uniform_"
]
