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



def _free_port():
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def with_free_port(argv):
    """argv with a free master port added unless it names its own rendezvous."""
    own = ("--master_port", "--master-port", "--rdzv_endpoint", "--rdzv-endpoint", "--standalone")
    if any(a.split("=")[0] in own for a in argv):
        return argv
    return ["--master_addr", "127.0.0.1", "--master_port", str(_free_port())] + argv


if __name__ == "__main__":
    from torch.distributed.run import main

    sys.exit(main(with_free_port(sys.argv[1:])))
