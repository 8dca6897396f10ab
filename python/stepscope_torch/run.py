"""PyTorch's own launcher (torch.distributed.run), started as `python -m stepscope_torch.run`.

Debian's python3-torch 1.13 under Python 3.11 cannot parse its default `--redirects 0` / `--tee
0`: Python 3.11 no longer lists a Flag's zero member when iterating it, so Std.from_str("0")
returns None and the launcher fails before starting any worker. This module maps that None back
to Std.NONE and hands over to torch.distributed.run unchanged; on a PyTorch without the problem
it changes nothing.
"""
import sys

from torch.distributed.elastic.multiprocessing import api as _api

_original = _api.Std.from_str


def _from_str(vm):
    value = _original(vm)
    if value is None:
        return _api.Std.NONE
    if isinstance(value, dict):
        return {k: (_api.Std.NONE if v is None else v) for k, v in value.items()}
    return value


_api.Std.from_str = staticmethod(_from_str)

if __name__ == "__main__":
    from torch.distributed.run import main

    sys.exit(main())
