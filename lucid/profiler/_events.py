"""Recorded events and their per-name averages, with PyTorch's ``key_averages().table()``."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["FunctionEvent", "FunctionEventAvg", "EventList"]


def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class FunctionEvent:
    """One recorded op call or ``record_function`` range: ``name``, start and end (microseconds
    since the profile started), ``self_cpu_time_total`` (its time minus its children's) and
    ``input_shapes`` (with ``record_shapes=True``)."""

    def __init__(self, name: str, start_us: float, end_us: float, child_us: float,
                 input_shapes: list[list[int]], is_user_annotation: bool) -> None:
        self.name = self.key = name
        self.start_us, self.end_us = start_us, end_us
        self.cpu_time_total = end_us - start_us
        self.self_cpu_time_total = self.cpu_time_total - child_us
        self.input_shapes = input_shapes
        self.is_user_annotation = is_user_annotation
        self.count = 1

    def __repr__(self) -> str:
        return (f"<FunctionEvent name={self.name} cpu_time={_format_time(self.cpu_time_total)} "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The events of one name (and, with ``group_by_input_shape``, one input shape) summed:
    ``count``, ``cpu_time_total``, ``self_cpu_time_total`` (microseconds) and ``cpu_time``
    (the average per call)."""

    def __init__(self, key: str, input_shapes: Any = None) -> None:
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = self.cuda_time_total = 0.0
        self.self_device_time_total = self.self_cuda_time_total = 0.0
        self.is_user_annotation = False

    def add(self, ev: FunctionEvent) -> FunctionEventAvg:
        """Sum one more event into the average."""
        self.count += 1
        self.cpu_time_total += ev.cpu_time_total
        self.self_cpu_time_total += ev.self_cpu_time_total
        self.is_user_annotation = ev.is_user_annotation
        return self

    @property
    def cpu_time(self) -> float:
        """Average time per call, microseconds."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time="
                f"{_format_time(self.self_cpu_time_total)} cpu_time={_format_time(self.cpu_time)}"
                f" count={self.count} input_shapes={self.input_shapes}>")


_COLUMNS = {"cpu_time_total", "self_cpu_time_total", "cpu_time", "count", "device_time_total",
            "self_device_time_total", "cuda_time_total", "self_cuda_time_total"}


class EventList(list):
    """A list of events (``profile.events()``) or of their averages (``key_averages()``)."""

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        """Average the events by name (and input shapes when asked), in first-seen order."""
        avgs: dict[Any, FunctionEventAvg] = {}
        for ev in self:
            shapes = str(ev.input_shapes) if group_by_input_shape else None
            k = (ev.key, shapes)
            if k not in avgs:
                avgs[k] = FunctionEventAvg(ev.key, ev.input_shapes if shapes else None)
            avgs[k].add(ev)
        return EventList(avgs.values())

    def self_cpu_time_total(self) -> float:
        """The summed self time of every event, microseconds."""
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_name_column_width:
              int = 55, header: str | None = None, top_level_events_only: bool = False,
              **kwargs: Any) -> str:
        """PyTorch's profiler table: Name, Self CPU %, Self CPU, CPU total %, CPU total,
        CPU time avg and # of Calls, sorted (descending) by ``sort_by`` (e.g.
        ``"cpu_time_total"``, ``"self_cpu_time_total"``, ``"count"``)."""
        rows = list(self)
        if sort_by is not None:
            if sort_by not in _COLUMNS:
                raise AttributeError(f"'FunctionEventAvg' object has no attribute '{sort_by}'")
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        total = self.self_cpu_time_total() or 1.0
        shapes = any(getattr(e, "input_shapes", None) for e in rows)
        names = [e.key[:max_name_column_width] for e in rows]
        w = max([len(n) for n in names] + [4]) + 2
        heads = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                 "# of Calls"] + (["Input Shapes"] if shapes else [])
        line = "-" * w + "  " + "  ".join("-" * 12 for _ in heads)
        out = [line, "Name".rjust(w) + "  " + "  ".join(h.rjust(12) for h in heads), line]
        for n, e in zip(names, rows):
            cells = [f"{100 * e.self_cpu_time_total / total:.2f}%",
                     _format_time(e.self_cpu_time_total),
                     f"{100 * e.cpu_time_total / total:.2f}%", _format_time(e.cpu_time_total),
                     _format_time(e.cpu_time), str(e.count)]
            if shapes:
                cells.append(str(e.input_shapes or ""))
            out.append(n.rjust(w) + "  " + "  ".join(c.rjust(12) for c in cells))
        out += [line, f"Self CPU time total: {_format_time(self.self_cpu_time_total())}", ""]
        return ("" if header is None else header + "\n") + "\n".join(out)

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace (open it in chrome://tracing or Perfetto)."""
        trace = [{"name": e.name, "ph": "X", "ts": e.start_us, "dur": e.cpu_time_total,
                  "pid": 0, "tid": 0, "cat": "user_annotation" if e.is_user_annotation
                  else "cpu_op", "args": {"Input Dims": e.input_shapes}}
                 for e in self if isinstance(e, FunctionEvent)]
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"traceEvents": trace}, f)
