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

from ._buffers import ReduceOp, supports_complex
from ._mpi import fill_torchrun_env, launcher_env
from .coalesced import all_gather_coalesced, all_reduce_coalesced
from .collectives import (
    Work,
    all_gather,
    all_gather_single,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    monitored_barrier,
    reduce,
    reduce_scatter,
    reduce_scatter_single,
    scatter,
)
from .debugger import breakpoint
from .deprecated import all_gather_into_tensor, reduce_op, reduce_scatter_tensor
from .errors import DistBackendError, DistError, DistNetworkError, DistStoreError
from .object_collectives import (
    all_gather_object,
    broadcast_object_list,
    gather_object,
    recv_object_list,
    scatter_object_list,
    send_object_list,
)
from .point_to_point import P2POp, batch_isend_irecv, irecv, isend, recv, send
from .process_group import (
    Backend,
    GroupMember,
    ProcessGroup,
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_node_local_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
    is_backend_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    new_group,
)
from .subgroups import new_subgroups, new_subgroups_by_enumeration

__all__ = ["is_available", "init_process_group", "destroy_process_group", "is_initialized",
           "is_mpi_available", "is_gloo_available", "is_nccl_available",
           "is_backend_available", "is_torchelastic_launched", "get_rank", "get_world_size",
           "get_backend", "get_node_local_rank", "default_pg_timeout", "new_group",
           "new_subgroups", "new_subgroups_by_enumeration", "get_global_rank",
           "get_group_rank", "get_process_group_ranks", "Backend", "ProcessGroup",
           "GroupMember", "group", "ReduceOp", "reduce_op", "supports_complex", "Work",
           "DistError", "DistBackendError", "DistNetworkError", "DistStoreError",
           "all_reduce", "all_reduce_coalesced", "broadcast", "reduce", "all_gather",
           "all_gather_single", "all_gather_into_tensor", "all_gather_coalesced", "gather",
           "scatter", "reduce_scatter", "reduce_scatter_single", "reduce_scatter_tensor",
           "barrier", "send", "recv", "isend", "irecv", "P2POp", "batch_isend_irecv",
           "all_to_all_single", "all_to_all", "monitored_barrier", "breakpoint",
           "broadcast_object_list", "all_gather_object", "gather_object",
           "scatter_object_list", "send_object_list", "recv_object_list", "launcher_env"]

# Under a plain ``mpiexec``/``srun`` a script may read LOCAL_RANK & co. before
# init_process_group, as it would under torchrun: take them from the MPI launcher's variables.
if (launcher_env() or (0, 0, 0, 0, "WORLD_SIZE"))[4] != "WORLD_SIZE":
    fill_torchrun_env()
