"""Per-rank entry of ``lucid.distributed.run``: set the torchrun variables from the MPI
launcher's (without starting MPI), then run the script as ``__main__``.

    python -m lucid.distributed._bootstrap script.py args...
    python -m lucid.distributed._bootstrap -m package.module args...
"""

from __future__ import annotations

import os
import runpy
import sys

from ._mpi import fill_torchrun_env

__all__ = ["main"]


def main(argv: list[str]) -> None:
    """Run ``argv`` (``[script, *args]`` or ``["-m", module, *args]``) as ``__main__``."""
    fill_torchrun_env(overwrite=True)
    if argv[:1] == ["-m"]:
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return
    script = argv[0]
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit("usage: python -m lucid.distributed._bootstrap script.py [args...]")
    main(sys.argv[1:])
