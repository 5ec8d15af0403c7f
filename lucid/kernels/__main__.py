"""``python -m lucid.kernels warmup [--dtype float32 --dtype float64] [--kernel PATTERN]
[--jobs N]`` (N worker processes, default every core);
``python -m lucid.kernels info`` | ``python -m lucid.kernels clear [--all]``."""

from __future__ import annotations

import argparse
import json


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    p = argparse.ArgumentParser(prog="python -m lucid.kernels")
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("warmup", help="compile kernels into the disk cache")
    w.add_argument("--dtype", action="append", choices=["float32", "float64"])
    w.add_argument("--kernel", action="append", help="name or fnmatch pattern")
    w.add_argument("--jobs", "-j", type=int, default=None,
                   help="worker processes sharing the cache (default: every core)")
    sub.add_parser("info", help="cache directory and thread policy")
    c = sub.add_parser("clear", help="delete cached kernels")
    c.add_argument("--all", action="store_true", help="every lucid version, not only this one")
    args = p.parse_args(argv)
    # NOTE: the command line imports the kernels only after parsing (``--help`` stays fast)
    from . import _jit, _threads

    if args.cmd == "warmup":
        from lucid._warmup_pool import warmup_parallel  # NOTE: loads numba: after parsing

        warmup_parallel(dtypes=args.dtype or ["float32"], kernels=args.kernel, jobs=args.jobs)
    elif args.cmd == "info":
        info = {
            "cache_dir": str(_jit.cache_dir()),
            "cache_enabled": _jit.cache_enabled(),
            "threads": _threads.state(),
            "parallel_threshold": {k: _threads.parallel_threshold(k) for k in _threads.THRESHOLDS},
        }
        print(json.dumps(info, indent=2, default=str))
    else:
        print(f"removed {_jit.clear_cache(all_keys=args.all)} files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
