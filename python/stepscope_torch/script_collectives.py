"""The script's own blocking collectives, seen by the stall watchdog.

A script synchronises its ranks outside DDP's reduction too: `dist.barrier()` at an epoch's end,
`dist.all_reduce(loss)` to log a mean, `dist.broadcast_object_list` of a decision made on rank
0. A rank stuck elsewhere (a deadlocked loader, an evaluation that never ends) then holds the
others inside one of those calls, where the helper's reductions never start: without a mark
there, the watchdog could not tell that wait from work, and the run waited for gloo's own
timeout (30 minutes) without naming the rank.

`watch(recorder)` replaces the blocking collectives of `torch.distributed` (the names in
BLOCKING present in this PyTorch) by wrappers that set `recorder.script_collective` to
(`dist.NAME`, when it was called) for the call's duration, add (start, end, `dist.NAME`) to the
step's `recorder.script_calls` (the record's `script_comm`: the time blocked in them outside the
step's phases, a part of its overhead; run.json's `script_collectives`: the calls by name) and
hand everything else to the original unchanged. A call with `async_op=True` returns at once, and
its wait (`work.wait()`) is not seen. Replaced once per process: a later session (a loader
wrapped again) points the same wrappers at its recorder. A script that took a function by name
before `wrap` (`from torch.distributed import barrier`) keeps the original, unseen.
"""
import functools
import inspect

import torch.distributed as dist

from .recorder import now

BLOCKING = ("barrier", "monitored_barrier", "all_reduce", "reduce", "broadcast", "all_gather",
            "all_gather_into_tensor", "gather", "scatter", "reduce_scatter",
            "reduce_scatter_tensor", "all_to_all", "all_to_all_single", "all_gather_object",
            "gather_object", "broadcast_object_list", "scatter_object_list")

_TARGET = "_stepscope_target"


class _Target:
    """Where the wrappers mark a call: the current session's recorder."""

    def __init__(self, recorder):
        self.recorder = recorder


def _async_index(function):
    """The position of `async_op` among the function's parameters, or None."""
    try:
        params = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return None
    return params.index("async_op") if "async_op" in params else None


def _wrapper(name, original, target):
    position = _async_index(original)
    label = f"dist.{name}"

    def collective(*args, **kwargs):
        rec = target.recorder
        asynchronous = kwargs.get("async_op") or (
            position is not None and len(args) > position and args[position])
        if asynchronous or rec.script_collective is not None:
            return original(*args, **kwargs)
        since = now()
        rec.script_collective = (label, since)
        try:
            return original(*args, **kwargs)
        finally:
            rec.script_collective = None
            rec.script_calls.append((since, now(), label))

    functools.update_wrapper(collective, original)  # its name, docs and __wrapped__
    setattr(collective, _TARGET, target)
    return collective


def watch(recorder, module=dist):
    """Marks the script's blocking collectives of `module` on `recorder` (see above); returns
    the names watched."""
    watched = []
    target = None
    for name in BLOCKING:
        function = getattr(module, name, None)
        if function is None:
            continue
        existing = getattr(function, _TARGET, None)
        if existing is not None:
            existing.recorder = recorder
        else:
            target = target or _Target(recorder)
            setattr(module, name, _wrapper(name, function, target))
        watched.append(name)
    recorder.script_watched = True
    return watched
