"""PyTorch's own launcher (torch.distributed.run), started as `python -m stepscope_torch.run`.

Without --master_port, --rdzv_endpoint or --standalone it adds `--master_addr 127.0.0.1
--master_port P` with a port P free at that moment: PyTorch's own defaults (29500, and 29400 for
--standalone) collide when several jobs start on one host at once.

Debian's python3-torch 1.13 under Python 3.11 cannot parse its default `--redirects 0` / `--tee
0`: Python 3.11 no longer lists a Flag's zero member when iterating it, so Std.from_str("0")
returns None and the launcher fails before starting any worker. This module maps that None back
to Std.NONE and hands over to torch.distributed.run unchanged; on a PyTorch without the problem
it changes nothing.
"""
import os
import sys

from torch.distributed.elastic.multiprocessing import api as _api

from .ports import free_port
from .stack_dump import disarm

_original = _api.Std.from_str


def _from_str(vm):
    value = _original(vm)
    if value is None:
        return _api.Std.NONE
    if isinstance(value, dict):
        return {k: (_api.Std.NONE if v is None else v) for k, v in value.items()}
    return value


_api.Std.from_str = staticmethod(_from_str)

MONITOR_INTERVAL_S = 0.1


def _given(argv, dests):
    """The launcher options among `dests` (argparse names) that argv or the launcher's
    environment (PET_<NAME>, which it reads as defaults) sets, read by the launcher's own parser
    so that the script's arguments are never taken for its options."""
    from torch.distributed.run import get_args_parser

    parser = get_args_parser()
    parser.set_defaults(**{dest: None for dest in dests})
    args = parser.parse_args(argv)
    return {dest for dest in dests
            if getattr(args, dest) not in (None, False) or f"PET_{dest.upper()}" in os.environ}


def with_defaults(argv):
    """argv with a free master port unless it names its own rendezvous, and a monitor interval
    of MONITOR_INTERVAL_S unless it names one."""
    given = _given(argv, ("master_port", "rdzv_endpoint", "standalone", "monitor_interval"))
    added = []
    if not given & {"master_port", "rdzv_endpoint", "standalone"}:
        added += ["--master_addr", "127.0.0.1", "--master_port", str(free_port())]
    if "monitor_interval" not in given:
        added += ["--monitor_interval", str(MONITOR_INTERVAL_S)]
    return added + argv


if __name__ == "__main__":
    from torch.distributed.run import main

    disarm()  # the launcher is not one of the script's processes (stack_dump.py)
    sys.exit(main(with_defaults(sys.argv[1:])))
