"""``lucid.profiler``: time lucid's ops, as ``torch.profiler``.

Example::

    from lucid.profiler import profile, record_function, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with record_function("step"):
            loss = model(x).sum()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
"""

from ._events import EventList, FunctionEvent, FunctionEventAvg
from ._profile import ProfilerAction, ProfilerActivity, profile, record_function, schedule

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "EventList", "FunctionEvent", "FunctionEventAvg"]
