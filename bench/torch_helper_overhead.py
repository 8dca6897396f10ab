"""The stepscope_torch helper's cost: the same DDP training loop with and without
`stepscope_torch.wrap`, in interleaved paired rounds (the order alternating within each pair),
each round a fresh model, optimizer and loader; prints each round's ratio and the median over the
rounds against the goal (under 2 % of the step).

One process, a DDP model over gloo (world size 1: the helper's hook, timing and records all run;
the all-reduce of one rank is cheap), an MLP of --width at --batch.

Usage: /usr/bin/python3 bench/torch_helper_overhead.py [--rounds 10] [--steps 60] [--width 512]
                                                        [--batch 64]
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


def one_round(args, helper, run_dir):
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
    loss_fn = nn.CrossEntropyLoss()
    t0 = None
    for step, (x, y) in enumerate(loader):
        if step == WARMUP:
            t0 = time.perf_counter()
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
    return (time.perf_counter() - t0) / args.steps


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--batch", type=int, default=64)
    args = p.parse_args()
    if args.rounds < 10:
        p.error("--rounds: at least 10 (the median of paired rounds)")
    torch.set_num_threads(1)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0,
                            world_size=1)
    ratios = []
    tmp = tempfile.mkdtemp(prefix="stepscope-overhead-")
    # Removed last: the helper writes each round's run.json at exit (atexit runs in reverse).
    atexit.register(shutil.rmtree, tmp, True)
    for r in range(args.rounds):
        order = (False, True) if r % 2 == 0 else (True, False)
        t = {}
        for helper in order:
            t[helper] = one_round(args, helper, os.path.join(tmp, f"round-{r}"))
        ratios.append(t[True] / t[False])
        print(f"round {r + 1:2d}: without {t[False] * 1e3:7.3f} ms/step, with "
              f"{t[True] * 1e3:7.3f} ms/step, ratio {ratios[-1]:.4f}")
    median = statistics.median(ratios)
    print(f"median ratio with/without over {args.rounds} rounds: {median:.4f} "
          f"(overhead {100 * (median - 1):+.2f} % of the step; goal under 2 %): "
          f"{'MET' if median < 1.02 else 'NOT MET'}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
