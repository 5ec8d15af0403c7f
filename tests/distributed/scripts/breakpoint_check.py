"""Run under mpiexec -n 2 with the debugger's commands on stdin: rank 0 stops in pdb at
``dist.breakpoint()`` (reading the commands), rank 1 waits for it; both print a line after."""

import lucid.distributed as dist

dist.init_process_group()
marker = "pdb-sees-this-frame"  # noqa: F841  (printed from the debugger)
dist.breakpoint(rank=0)
print(f"rank {dist.get_rank()} resumed", flush=True)
dist.destroy_process_group()
