"""``lucid.distributed``: data-parallel training across processes, on MPI (mpi4py), with
``torch.distributed``'s API.

Install with ``pip install "lucid-jit[distributed]"`` (mpi4py and the ``mpich`` wheel, which
brings ``mpiexec``); launch N processes with ``python -m lucid.distributed.run
--nproc-per-node N train.py`` (or ``lucid-run``, plain ``mpiexec -n N python train.py``, or
``srun``). mpi4py is imported only when a process group is created or a collective runs:
``import lucid`` never loads MPI. A script started without a launcher is a world of one.

Example::

    import lucid.distributed as dist
    dist.init_process_group("gloo")               # "gloo"/"nccl" name the MPI backend
    t = lucid.tensor([float(dist.get_rank())])
    dist.all_reduce(t)                            # the sum over all ranks, on every rank
    dist.destroy_process_group()
"""

from ._buffers import ReduceOp
from ._mpi import fill_torchrun_env, launcher_env
from .collectives import (
    Work,
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    monitored_barrier,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
)
from .object_collectives import (
    all_gather_object,
    broadcast_object_list,
    gather_object,
    scatter_object_list,
)
from .point_to_point import irecv, isend, recv, send
from .process_group import (
    Backend,
    GroupMember,
    ProcessGroup,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    new_group,
)

__all__ = ["is_available", "init_process_group", "destroy_process_group", "is_initialized",
           "is_mpi_available", "is_gloo_available", "is_nccl_available",
           "is_torchelastic_launched", "get_rank", "get_world_size", "get_backend",
           "new_group", "get_global_rank", "get_group_rank", "get_process_group_ranks",
           "Backend", "ProcessGroup", "GroupMember", "group", "ReduceOp", "Work",
           "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
           "gather", "scatter", "reduce_scatter", "reduce_scatter_tensor", "barrier", "send",
           "recv", "isend", "irecv", "all_to_all_single", "all_to_all", "monitored_barrier",
           "broadcast_object_list", "all_gather_object", "gather_object",
           "scatter_object_list", "launcher_env"]

# Under a plain ``mpiexec``/``srun`` a script may read LOCAL_RANK & co. before
# init_process_group, as it would under torchrun: take them from the MPI launcher's variables.
if (launcher_env() or (0, 0, 0, 0, "WORLD_SIZE"))[4] != "WORLD_SIZE":
    fill_torchrun_env()
