"""``profile``: records the time of every op call (and ``record_function`` range) in its body.

How ops are timed: every lucid op runs through ``Op.apply`` (lucid/autograd/function.py).
While a profile is recording, ``Op.apply`` is replaced by a timing wrapper (patched on
``__enter__``/``start()`` and the original restored on ``__exit__``/``stop()``), so code
outside a profile pays nothing. Only the thread that started the profile is recorded. The
times are host (CPU) times: on the "gpu" device MLX evaluates lazily, so an op's time is that
of scheduling it (``lucid.gpu.synchronize()`` inside the profile attributes the wait).
Backward passes run the ops' backward methods directly and are not broken down per op.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from contextlib import ContextDecorator
from enum import Enum
from typing import Any

from .._tensor import Tensor
from ..autograd.function import Op
from ._events import EventList, FunctionEvent

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule"]


class ProfilerActivity(Enum):
    """What to profile, as ``torch.profiler.ProfilerActivity``; lucid records host time for
    every activity (CUDA/MPS names are accepted and mean the "gpu" device's host time)."""

    CPU = 0
    CUDA = 1
    MPS = 2
    XPU = 3


class ProfilerAction(Enum):
    """What a ``schedule`` says to do at a step (as ``torch.profiler.ProfilerAction``)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0,
             skip_first: int = 0) -> Callable[[int], ProfilerAction]:
    """PyTorch's profiler schedule: skip ``skip_first`` steps, then cycles of ``wait`` idle,
    ``warmup`` and ``active`` recorded steps (the last one saves), ``repeat`` times
    (0: forever).

    Example::

        with lucid.profiler.profile(schedule=lucid.profiler.schedule(wait=1, warmup=1,
                                    active=2), on_trace_ready=print_table) as prof:
            for batch in loader:
                train_step(batch)
                prof.step()
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("Invalid profiler schedule arguments")

    def fn(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        period = wait + warmup + active
        if repeat > 0 and step // period >= repeat:
            return ProfilerAction.NONE
        mod = step % period
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < period - 1 else ProfilerAction.RECORD_AND_SAVE

    return fn


class _Recorder:
    """The recording state of the active profile: open frames and finished events."""

    def __init__(self, t0: int, record_shapes: bool) -> None:
        self.t0 = t0
        self.shapes = record_shapes
        self.thread = threading.get_ident()
        self.stack: list[list[Any]] = []
        self.events: list[FunctionEvent] = []

    def open(self, name: str, args: Iterable[Any], user: bool = False) -> list[Any] | None:
        if threading.get_ident() != self.thread:
            return None
        shapes = [list(a.shape) if isinstance(a, Tensor) else [] for a in args] \
            if self.shapes else []
        frame = [name, time.perf_counter_ns(), 0, shapes, user]
        self.stack.append(frame)
        return frame

    def close(self, frame: list[Any] | None) -> None:
        if frame is None:
            return
        end = time.perf_counter_ns()
        while self.stack and self.stack.pop() is not frame:
            pass
        dur = end - frame[1]
        if self.stack:
            self.stack[-1][2] += dur
        self.events.append(FunctionEvent(frame[0], (frame[1] - self.t0) / 1e3,
                                         (end - self.t0) / 1e3, frame[2] / 1e3, frame[3],
                                         frame[4]))


_state: dict[str, Any] = {"rec": None, "orig": None}


def _timed_apply(cls: type[Op], *args: Any, **params: Any) -> Tensor:
    orig = _state["orig"].__func__
    rec = _state["rec"]
    if rec is None:
        return orig(cls, *args, **params)
    name = getattr(params.get("fcls"), "__name__", None) or cls.__name__
    frame = rec.open("lucid::" + name, args)
    try:
        return orig(cls, *args, **params)
    finally:
        rec.close(frame)


def _install(rec: _Recorder) -> None:
    if _state["rec"] is not None:
        raise RuntimeError("Profiler is already enabled on this thread: lucid records one "
                           "profile at a time")
    _state["orig"] = Op.__dict__["apply"]
    _state["rec"] = rec
    Op.apply = classmethod(_timed_apply)  # type: ignore[method-assign,assignment]


def _uninstall() -> None:
    if _state["orig"] is not None:
        Op.apply = _state["orig"]  # type: ignore[method-assign]
    _state["rec"] = _state["orig"] = None


class record_function(ContextDecorator):
    """Name a region of code so it shows up in the profile as its own row (a no-op when no
    profile is recording); also usable as a decorator.

    Example::

        with lucid.profiler.record_function("forward"):
            out = model(x)
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self._frame: list[Any] | None = None

    def __enter__(self) -> record_function:
        rec = _state["rec"]
        self._frame = rec.open(self.name, (), user=True) if rec is not None else None
        return self

    def __exit__(self, *exc: Any) -> None:
        rec = _state["rec"]
        if rec is not None and self._frame is not None:
            rec.close(self._frame)
        self._frame = None


class profile:
    """Record the time of every lucid op called in the body, as ``torch.profiler.profile``.

    ``key_averages()`` groups the calls by op name (``"lucid::MatMul"``, ...; ranges named by
    ``record_function`` appear under their own name) and ``.table(sort_by=...)`` prints
    PyTorch's table. ``record_shapes=True`` keeps each call's input shapes (see
    ``key_averages(group_by_input_shape=True)``). With a ``schedule``, ``step()`` advances
    it and only the steps it marks as recording are kept; ``on_trace_ready(prof)`` runs when
    a recording cycle ends (and at exit). ``activities``, ``profile_memory``, ``with_stack``,
    ``with_flops`` and ``with_modules`` are accepted for compatibility. Ops are timed by
    patching ``Op.apply`` for the profile's duration (see this module's docstring).

    Example::

        from lucid.profiler import profile, record_function, ProfilerActivity
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            with record_function("model_inference"):
                model(x)
        print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    """

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[[profile], Any] | None = None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, **kwargs: Any) -> None:
        self.activities = set(activities) if activities is not None else {ProfilerActivity.CPU}
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.step_num = 0
        self._kept: list[FunctionEvent] = []
        self._rec: _Recorder | None = None
        self._running = False

    def _action(self) -> ProfilerAction:
        return ProfilerAction.RECORD if self.schedule is None else self.schedule(self.step_num)

    def _begin(self) -> None:
        self._rec = _Recorder(time.perf_counter_ns(), self.record_shapes)
        _install(self._rec)

    def _end(self) -> None:
        if self._rec is not None:
            _uninstall()
            self._kept.extend(self._rec.events)
            self._rec = None

    def start(self) -> None:
        """Start recording (``__enter__`` calls this)."""
        self._running = True
        self._kept = []
        if self._action() in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            self._begin()

    def stop(self) -> None:
        """Stop recording and restore ``Op.apply`` (``__exit__`` calls this)."""
        if not self._running:
            return
        self._running = False
        was = self._rec is not None
        self._end()
        if was and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def step(self) -> None:
        """Mark the end of a training step: advance the ``schedule``."""
        before = self._action()
        self.step_num += 1
        after = self._action()
        recording = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if before == ProfilerAction.RECORD_AND_SAVE:
            self._end()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
            self._kept = [] if after in recording else self._kept
        elif before in recording and after not in recording:
            self._end()
        if after in recording and self._rec is None and self._running:
            if before != ProfilerAction.RECORD_AND_SAVE and before not in recording:
                self._kept = []
            self._begin()

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def events(self) -> EventList:
        """Every recorded call, in the order they finished."""
        return EventList(self._kept + (self._rec.events if self._rec is not None else []))

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:
        """The recorded calls averaged by name (and input shapes when asked)."""
        return self.events().key_averages(group_by_input_shape)

    def export_chrome_trace(self, path: str) -> None:
        """Write the recorded calls as a Chrome trace file."""
        self.events().export_chrome_trace(path)
