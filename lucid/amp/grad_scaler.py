"""``GradScaler``: dynamic loss scaling for low-precision training, as
``torch.amp.GradScaler``: the loss is multiplied by a scale before ``backward`` so small
float16 gradients do not flush to zero; ``step`` unscales the gradients and skips the update
when any is inf/NaN; ``update`` shrinks the scale after a skipped step and grows it after
``growth_interval`` clean ones."""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Iterable
from enum import Enum
from typing import Any

from .. import _dtype
from .. import gpu as _gpu
from .._tensor import Tensor
from ..autograd import no_grad
from ..ops import creation as _creation
from ..ops import select as _select
from .autocast_mode import _kind

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    """Where an optimizer is in the current iteration."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Scale the loss, unscale gradients and skip steps with inf/NaN gradients.

    ``device`` is "cpu", "gpu" (or "cuda"/"mps"); on a gpu that is not available, or with
    ``enabled=False``, every method passes through (``scale`` returns its input, ``step``
    calls ``optimizer.step()``).

    Example::

        scaler = lucid.amp.GradScaler("cpu")
        for x, y in data:
            opt.zero_grad()
            with lucid.autocast("cpu", dtype=lucid.float16):
                loss = F.mse_loss(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)       # skipped when a gradient is inf/NaN
            scaler.update()
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled and _kind(device) == "gpu" and not _gpu.is_available():
            warnings.warn(f"GradScaler is enabled for device '{device}', but the gpu device is "
                          "not available. Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
        self._init_scale = float(init_scale)
        self._scale: Tensor | None = None
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._growth_tracker: int | None = None
        self._per_optimizer_states: defaultdict[int, dict[str, Any]] = defaultdict(_fresh)

    # ---- scaling ------------------------------------------------------------------------------
    def _check(self, name: str) -> Tensor:
        if self._scale is None:
            raise AssertionError(f"Attempted {name} but _scale is None.  This may indicate your "
                                 "script did not use scaler.scale(loss or outputs) earlier in "
                                 "the iteration.")
        return self._scale

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor or nested lists/tuples of tensors) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale_on(outputs)
        if isinstance(outputs, Iterable):
            it = map(self.scale, outputs)
            return type(outputs)(it) if isinstance(outputs, (list, tuple)) else it
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _scale_on(self, t: Tensor) -> Tensor:
        if self._scale is None:
            self._scale = _creation.full((), self._init_scale, dtype=_dtype.float32,
                                         device=t.device)
            self._growth_tracker = self._init_growth_tracker
        s = self._scale
        return s if s._be is t._be else s.to(t.device)  # type: ignore[attr-defined]

    def _unscale_grads_(self, optimizer: Any, inv_scale: float, allow_fp16: bool
                        ) -> dict[str, Tensor]:
        found: dict[str, bool] = {}
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if not allow_fp16 and g.dtype is _dtype.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    dev = str(g.device)
                    bad = not bool(_select.isfinite(g).all())  # type: ignore[attr-defined]
                    found[dev] = found.get(dev, False) or bad
                    if inv_scale != 1.0:
                        g.mul_(inv_scale)  # type: ignore[attr-defined]
        return {d: _creation.full((), float(v), dtype=_dtype.float32, device=d)
                for d, v in found.items()}

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale, in place (once per iteration), and
        record whether any is inf/NaN; call it before clipping gradients."""
        if not self._enabled:
            return
        scale = self._check("unscale_")
        st = self._per_optimizer_states[id(optimizer)]
        if st["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update().")
        if st["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv = float(_dtype.float32.np.type(1.0 / float(scale.item())))
        st["found_inf_per_device"] = self._unscale_grads_(optimizer, inv, False)
        st["stage"] = OptState.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale the gradients (unless ``unscale_`` did) and run ``optimizer.step()``
        only if they are all finite; returns what ``step`` returned, or None when skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check("step")
        st = self._per_optimizer_states[id(optimizer)]
        if st["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if st["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(st["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        ret = None
        if not sum(v.item() for v in st["found_inf_per_device"].values()):
            ret = optimizer.step(*args, **kwargs)
        st["stage"] = OptState.STEPPED
        return ret

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Set the scale for the next iteration: ``new_scale`` if given; otherwise multiply it
        by ``backoff_factor`` if this iteration skipped a step, or by ``growth_factor`` after
        ``growth_interval`` iterations in a row without inf/NaN gradients."""
        if not self._enabled:
            return
        scale = self._check("update")
        f32 = _dtype.float32.np.type
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1 or new_scale.requires_grad:
                    raise AssertionError("new_scale should be a float or a 1-element tensor "
                                         "with requires_grad=False.")
                new_scale = float(new_scale.item())
            value = float(f32(new_scale))
        else:
            infs = [v for st in self._per_optimizer_states.values()
                    for v in st["found_inf_per_device"].values()]
            if not infs:
                raise AssertionError("No inf checks were recorded prior to update.")
            s = f32(scale.item())
            tracker = self._growth_tracker or 0
            # NOTE: products in double, stored as float32, as torch's _amp_update_scale_
            if sum(v.item() for v in infs):
                value, tracker = float(f32(float(s) * self._backoff_factor)), 0
            else:
                tracker += 1
                value = float(s)
                if tracker == self._growth_interval:
                    grown = f32(float(s) * self._growth_factor)
                    if grown - grown == 0:  # finite
                        value = float(grown)
                    tracker = 0
            self._growth_tracker = tracker
        self._scale = _creation.full((), value, dtype=_dtype.float32, device=scale.device)
        self._per_optimizer_states = defaultdict(_fresh)

    # ---- settings and state -------------------------------------------------------------------
    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        """The factor the scale grows by after ``growth_interval`` clean iterations."""
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Set the growth factor."""
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        """The factor the scale shrinks by after an iteration with inf/NaN gradients."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Set the backoff factor."""
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        """How many clean iterations in a row grow the scale."""
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Set the growth interval."""
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker

    def is_enabled(self) -> bool:
        """Whether this scaler scales (False when built disabled or for a missing gpu)."""
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """``{"scale", "growth_factor", "backoff_factor", "growth_interval",
        "_growth_tracker"}`` (empty when disabled), as PyTorch's."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale = _creation.full((), self._init_scale, dtype=_dtype.float32,
                                         device=self._scale.device)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker = self._init_growth_tracker
