"""The stepscope_torch helper's cost: the same DDP training loop with and without
`stepscope_torch.wrap`, in interleaved paired rounds (the order alternating within each pair),
each round a fresh model, optimizer and loader; prints each round's ratio and the median over the
rounds against the goal (under 2 % of the step). With --block K both loops are built in each
round and run alternately K steps at a time, so that a load that varies over seconds weighs on
both alike (on a shared host the better pairing). The process's CPU time per step is compared
the same way: on a loaded host it varies less than the wall-clock time (other processes' work
does not count into it), though contention for caches and memory still does.

One process, a DDP model over gloo (world size 1: the helper's hook, timing and records all run;
the all-reduce of one rank is cheap), an MLP of --width at --batch.

Usage: /usr/bin/python3 bench/torch_helper_overhead.py [--rounds 10] [--steps 60] [--width 512]
                                                        [--batch 64] [--block K]
"""
import argparse
import atexit
import os
import shutil
import socket
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import stepscope_torch  # noqa: E402

WARMUP = 5


def build(args, helper, run_dir):
    torch.manual_seed(0)
    n = args.batch * (args.steps + WARMUP)
    data = TensorDataset(torch.randn(n, args.width), torch.randint(0, 10, (n,)))
    loader = DataLoader(data, batch_size=args.batch)
    model = DistributedDataParallel(nn.Sequential(
        nn.Linear(args.width, args.width), nn.ReLU(), nn.Linear(args.width, args.width),
        nn.ReLU(), nn.Linear(args.width, 10)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    if helper:
        os.environ["STEPSCOPE_RUN_DIR"] = run_dir
        model, optimizer, loader = stepscope_torch.wrap(model, optimizer, loader)
        del os.environ["STEPSCOPE_RUN_DIR"]
    return model, optimizer, loader


def blocks_round(args, run_dir):
    """Both loops in one round, alternating every --block steps (the order reversed every
    block): a load that changes over a second or so weighs on both alike."""
    jobs = {h: build(args, h, run_dir) for h in (False, True)}
    its = {h: iter(jobs[h][2]) for h in jobs}
    loss_fn = nn.CrossEntropyLoss()
    spent = {h: [0.0, 0.0] for h in jobs}

    def run(helper, steps):
        model, optimizer, _ = jobs[helper]
        for _ in range(steps):
            x, y = next(its[helper])
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()

    for h in jobs:
        run(h, WARMUP)
    done, b = 0, 0
    while done < args.steps:
        k = min(args.block, args.steps - done)
        for h in ((False, True) if b % 2 == 0 else (True, False)):
            t0, c0 = time.perf_counter(), time.process_time()
            run(h, k)
            spent[h][0] += time.perf_counter() - t0
            spent[h][1] += time.process_time() - c0
        done += k
        b += 1
    for h in jobs:  # the loaders end (the helper's records are complete)
        for _ in its[h]:
            pass
    return {h: (spent[h][0] / args.steps, spent[h][1] / args.steps) for h in jobs}


def one_round(args, helper, run_dir):
    model, optimizer, loader = build(args, helper, run_dir)
    loss_fn = nn.CrossEntropyLoss()
    t0 = c0 = None
    for step, (x, y) in enumerate(loader):
        if step == WARMUP:
            t0, c0 = time.perf_counter(), time.process_time()
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
    return (time.perf_counter() - t0) / args.steps, (time.process_time() - c0) / args.steps


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--block", type=int, default=0,
                   help="0: each round runs one loop, then the other; K: both loops built in "
                        "each round, alternating every K steps")
    args = p.parse_args()
    if args.rounds < 10:
        p.error("--rounds: at least 10 (the median of paired rounds)")
    torch.set_num_threads(1)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0,
                            world_size=1)
    ratios, cpu_ratios, without = [], [], []
    tmp = tempfile.mkdtemp(prefix="stepscope-overhead-")
    # Removed last: the helper writes each round's run.json at exit (atexit runs in reverse).
    atexit.register(shutil.rmtree, tmp, True)
    for r in range(args.rounds):
        if args.block > 0:
            t = blocks_round(args, os.path.join(tmp, f"round-{r}"))
        else:
            order = (False, True) if r % 2 == 0 else (True, False)
            t = {}
            for helper in order:
                t[helper] = one_round(args, helper, os.path.join(tmp, f"round-{r}"))
        ratios.append(t[True][0] / t[False][0])
        cpu_ratios.append(t[True][1] / t[False][1])
        without.append(t[False][0])
        print(f"round {r + 1:2d}: without {t[False][0] * 1e3:7.3f} ms/step, with "
              f"{t[True][0] * 1e3:7.3f} ms/step, ratio {ratios[-1]:.4f} "
              f"(CPU time {t[False][1] * 1e3:7.3f} / {t[True][1] * 1e3:7.3f} ms, "
              f"{cpu_ratios[-1]:.4f})")
    for name, rs in (("CPU-time", cpu_ratios), ("wall-clock", ratios)):
        q = statistics.quantiles(rs, n=4)
        median = statistics.median(rs)
        print(f"{name} median ratio with/without over {args.rounds} rounds: {median:.4f} "
              f"(quartiles {q[0]:.4f} to {q[2]:.4f}; overhead {100 * (median - 1):+.2f} % of "
              f"the {statistics.median(without) * 1e3:.2f} ms step; goal under 2 %): "
              f"{'MET' if median < 1.02 else 'NOT MET'}")
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
