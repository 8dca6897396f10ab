"""A small real PyTorch job for analyze's end-to-end tests.

DistributedDataParallel over gloo with two ranks on this host, a small MLP, the PyTorch profiler
writing one Chrome trace per rank (OUT/rank-R.pt.trace.json). A fault can be injected:
  --fault straggler   rank --slow-rank does --slow-factor times the compute in its forward
  --fault input       every sample takes --item-sleep seconds to load (num_workers=0)
  --fault none        neither

Usage: python3 pytorch_ddp_job.py --out DIR [--fault none|straggler|input] [--steps N]
"""
import argparse
import os
import socket
import sys
import time


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, args, port):
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel
    from torch.utils.data import DataLoader, Dataset

    torch.set_num_threads(1)
    torch.manual_seed(1234)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=args.world)

    class Samples(Dataset):
        def __init__(self, n, item_sleep):
            g = torch.Generator().manual_seed(rank)
            self.x = torch.randn(n, args.features, generator=g)
            self.y = torch.randint(0, 10, (n,), generator=g)
            self.item_sleep = item_sleep

        def __len__(self):
            return len(self.x)

        def __getitem__(self, i):
            if self.item_sleep > 0:
                time.sleep(self.item_sleep)
            return self.x[i], self.y[i]

    class Mlp(nn.Module):
        def __init__(self, extra_work):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(args.features, args.hidden), nn.ReLU(),
                                      nn.Linear(args.hidden, args.hidden), nn.ReLU(),
                                      nn.Linear(args.hidden, 10))
            self.extra_work = extra_work
            self.burn = torch.randn(args.burn_size, args.burn_size)

        def forward(self, x):
            # The straggler's extra compute: matrix products whose result is discarded.
            for _ in range(self.extra_work):
                torch.mm(self.burn, self.burn)
            return self.body(x)

    slow = args.fault == "straggler" and rank == args.slow_rank
    # Every rank does some work (so that scheduling noise is small against it); the straggler
    # does several times as much.
    model = DistributedDataParallel(Mlp(args.burn_iters * (args.slow_factor if slow else 1)))
    item_sleep = args.item_sleep if args.fault == "input" else 0.0
    data = Samples(args.batch * (args.steps + 2), item_sleep)
    loader = DataLoader(data, batch_size=args.batch, num_workers=0, shuffle=False)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()

    path = os.path.join(args.out, f"rank-{rank}.pt.trace.json")
    # A schedule makes prof.step() record "ProfilerStep#N" annotations: one warm-up step, then
    # args.steps profiled steps, exported when the active window ends.
    schedule = torch.profiler.schedule(wait=0, warmup=1, active=args.steps)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], schedule=schedule,
                                on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        for step, (x, y) in enumerate(loader):
            if step > args.steps:
                break
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            prof.step()
    dist.barrier()
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", required=True)
    p.add_argument("--fault", choices=["none", "straggler", "input"], default="none")
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--slow-rank", type=int, default=1)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--features", type=int, default=64)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--burn-size", type=int, default=192)
    p.add_argument("--burn-iters", type=int, default=15)
    p.add_argument("--slow-factor", type=int, default=10)
    p.add_argument("--item-sleep", type=float, default=0.003)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    import torch.multiprocessing as mp

    # fork: the children do not import torch again (seconds on a busy machine).
    mp.start_processes(worker, args=(args, free_port()), nprocs=args.world, join=True,
                       start_method="fork")
    return 0


if __name__ == "__main__":
    sys.exit(main())
