"""The exceptions of ``torch.distributed``: ``DistError`` (a ``RuntimeError``) and its
backend, network and store kinds.

lucid's MPI backend ends a job whose collective outlives the group's timeout (see
``init_process_group``) instead of raising; these classes exist so that code catching
torch's distributed errors runs unchanged, and for user code to raise.
"""

from __future__ import annotations

__all__ = ["DistError", "DistBackendError", "DistNetworkError", "DistStoreError"]


class DistError(RuntimeError):
    """Exception raised when an error occurs in the distributed library.

    Example::

        try:
            dist.all_reduce(t)
        except dist.DistError as e:
            print("distributed failure:", e)
    """


class DistBackendError(DistError):
    """Exception raised when a backend error occurs in distributed.

    Example::

        raise dist.DistBackendError("the MPI backend failed")
    """


class DistNetworkError(DistError):
    """Exception raised when a network error occurs in distributed.

    Example::

        raise dist.DistNetworkError("peer unreachable")
    """


class DistStoreError(DistError):
    """Exception raised when an error occurs in the distributed store.

    Example::

        raise dist.DistStoreError("store timed out")
    """
