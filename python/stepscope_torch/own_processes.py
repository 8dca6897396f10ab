"""A script that starts its own processes (torch.multiprocessing.spawn, the way PyTorch's DDP
tutorial does) inside a process PyTorch's launcher started: refused at the call, by name.

Under diagnose's default launcher (torch.distributed.run) every process of the job is one the
launcher started. A script that spawns its own from there makes processes that do not join one
job: they wait in init_process_group until its timeout (30 minutes), and the run says nothing of
why. Such a script runs under diagnose with the interpreter as its launcher, `--launcher
python3`, so that it starts its processes itself, and its process count from the run's replica
count, `--world-size {n}` (docs/torch.md).

`refuse_under_launcher` is called when the helper is imported, only under diagnose
(STEPSCOPE_RUN_DIR set) in a process of PyTorch's launcher (TORCHELASTIC_RUN_ID set); elsewhere
it changes nothing.
"""
import os
import sys

import torch.multiprocessing

from .errors import HelperError, cause_line

_SPAWNERS = ("spawn", "start_processes")


def refuse_under_launcher(env=None, module=torch.multiprocessing):
    """Replaces `module`'s spawners by a refusal when `env` says this process is one of
    diagnose's runs under PyTorch's launcher. Returns whether it did."""
    env = os.environ if env is None else env
    if not env.get("STEPSCOPE_RUN_DIR") or not env.get("TORCHELASTIC_RUN_ID"):
        return False
    rank = env.get("RANK", "?")
    for name in _SPAWNERS:
        original = getattr(module, name, None)
        if original is None or getattr(original, "_stepscope_refusal", False):
            continue

        def refusal(*args, _name=name, **kwargs):
            message = (
                f"the script starts its own processes (torch.multiprocessing.{_name}) in a "
                "process PyTorch's launcher started; they would not join one job (they wait in "
                "init_process_group for its timeout). Run it under diagnose with the interpreter "
                "as the launcher (--launcher python3) and its process count from the replica "
                "count (a {n} placeholder: --world-size {n}); docs/torch.md")
            print(cause_line(rank, message), file=sys.stderr, flush=True)
            raise HelperError(f"stepscope_torch: {message}")

        refusal._stepscope_refusal = True
        setattr(module, name, refusal)
    return True
