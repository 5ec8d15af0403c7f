"""Run under mpiexec -n 2 with one argument; each mode makes rank 1 misbehave and rank 0
must end with an error instead of waiting forever:
  raise        rank 1 raises an exception          -> the job is aborted
  exit         rank 1 dies (os._exit)              -> the launcher stops the job
  timeout      rank 1 skips a collective           -> rank 0 times out, naming the op
  ddp-timeout  rank 1 skips backward under DDP     -> rank 0 times out in a DDP bucket
"""

import os
import sys
import time
from datetime import timedelta

import lucid
import lucid.distributed as dist
import lucid.nn as nn

mode = sys.argv[1]
dist.init_process_group(timeout=timedelta(seconds=120))
dist.barrier()  # both ranks are up (starting can take seconds on a loaded machine)
short = dist.new_group(timeout=timedelta(seconds=3))
R = dist.get_rank()
t = lucid.ones(4)
if mode == "ddp-timeout":
    ddp = nn.parallel.DistributedDataParallel(nn.Linear(4, 2), process_group=short)
    if R == 0:
        ddp(lucid.ones(1, 4)).sum().backward()
    time.sleep(30)
if R == 1:
    if mode == "raise":
        raise ValueError("rank 1 failed on purpose")
    if mode == "exit":
        os._exit(3)
    time.sleep(30)
dist.all_reduce(t, group=short)
print("UNREACHABLE", R, flush=True)
