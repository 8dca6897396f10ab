"""The gradient reduction's latency, probed once at `wrap`, before the first step: a few
all-reduces of a small payload over DDP's own process group, each begun by every rank together
after a barrier. A job's buckets are mostly of one size, and at one or two replica counts their
durations cannot tell the reduction's latency (and a fixed cost per reduction) from its
bandwidth; stepscope's model fits the probe's median beside them (docs/model.md, all-reduce
cost). run.json's `latency_probe`, as `stepscope train` writes it (docs/train-output.md)."""
import time

import torch
import torch.distributed as dist

WARMUP = 2    # probes before those kept: the transport's first use of the group
FLOATS = 256  # the payload, or one float per rank where there are more


def probe_latency(group, world, device, repeats, now=time.perf_counter):
    """run.json's `latency_probe` ({"bytes", "seconds", "how"}): `repeats` fp32 all-reduces over
    `group` (None: the default group) of `world` ranks, each timed from its start on this rank
    to its end, then the least over the ranks taken for each (an all-reduce ends for every rank
    once the last has begun it, so the shortest is that rank's). Every rank of the group must
    call it. On a CUDA device each is timed between two synchronizations of the device."""
    payload = torch.zeros(max(FLOATS, world), dtype=torch.float32, device=device)

    def settle():
        if payload.is_cuda:
            torch.cuda.synchronize(payload.device)

    seconds = []
    for i in range(WARMUP + repeats):
        dist.barrier(group=group)
        settle()
        begin = now()
        dist.all_reduce(payload, group=group)
        settle()
        end = now()
        if i >= WARMUP:
            seconds.append(max(0.0, end - begin))
    least = torch.tensor(seconds, dtype=torch.float64, device=device)
    dist.all_reduce(least, op=dist.ReduceOp.MIN, group=group)
    nbytes = payload.numel() * payload.element_size()
    return {"bytes": nbytes, "seconds": least.tolist(),
            "how": f"all-reduces of {nbytes} bytes (fp32) per rank over DDP's process group at "
                   f"wrap, before the first step, each begun together after a barrier, {WARMUP} "
                   "before them not kept; each one's duration as the last rank to begin it saw it"}
