"""A small PyTorch DDP job for diagnose --torch's end-to-end tests, with one known shape each.

Compute is emulated by sleeps (so that 2 ranks on a shared 2-core host measure the shape, not
the host): every sample costs --fwd-ms-per-sample in forward (default 1 ms; 3 ms for healthy).
The sleep sits on the input, which needs no gradient, so backward is the model's own.
  --shape healthy       a small model, enough work per step that its reduction (a few ms over
                        gloo on a busy host) stays a small share of the step: scales
  --shape comm_heavy    a large model (--width) at a small batch: gradient bytes dominate
  --shape slow_loader   every sample takes --item-sleep-ms to load in the Dataset
  --shape slow_rank     rank --slow-rank does --slow-factor times the work
--profile DIR also records the steps with PyTorch's autograd profiler (DIR/rank-R.pt.trace.json),
to compare the helper's records with the profiler's view of the same run;
--profile-into-run-dir --fail no_helper is a script for diagnose --torch-traces; --fail die and
--fail hang make rank 1 kill itself (SIGKILL) or stop making progress (a sleep) after step 2,
--fail hang_at_start before init_process_group (so every rank waits before wrap);
--barrier-every K calls dist.barrier() after every K steps (as a script's epoch end does);
--spawn K starts K processes itself (torch.multiprocessing.spawn, as PyTorch's DDP tutorial does):
run it with the interpreter as the launcher;
--comm-hook fp16 reduces through PyTorch's fp16 compression hook, the script's own;
--step-function trains through a step function wrapped by stepscope_torch.wrap_step;
--next takes the batches with next() and counts its own --steps, as many scripts do (diagnose's
step limit, when lower, ends it at the loader's StopIteration);
--shuffle gives each rank its own examples through a DistributedSampler that shuffles them
(from its seed, which STEPSCOPE_SEED reseeds); without it every rank trains on the same batches.
Usage (under torch.distributed.run): python3 ddp_job.py --shape S --batch B [--workers W]
"""
import contextlib
import argparse
import os
import signal
import socket
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset, DistributedSampler

import stepscope_torch


class Items(Dataset):
    def __init__(self, n, features, sleep_s):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, features, generator=g)
        # Labels a linear model can learn: the gradient has a signal against its noise.
        self.y = (self.x @ torch.randn(features, 10, generator=g)).argmax(1)
        self.sleep_s = sleep_s

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if self.sleep_s > 0:
            time.sleep(self.sleep_s)
        return self.x[i], self.y[i]


class Paced(torch.autograd.Function):
    """Identity whose forward and backward take a set time: an emulated device's compute."""

    @staticmethod
    def forward(ctx, x, seconds):
        ctx.seconds = seconds
        time.sleep(seconds)
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        time.sleep(2 * ctx.seconds)
        return grad, None


class Net(nn.Module):
    def __init__(self, features, width, depth, seconds_per_sample):
        super().__init__()
        layers = [nn.Linear(features, width), nn.ReLU()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.ReLU()]
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, 10)
        self.seconds_per_sample = seconds_per_sample

    def forward(self, x):
        x = Paced.apply(x, self.seconds_per_sample * x.shape[0])
        return self.head(self.body(x))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shape", choices=["healthy", "comm_heavy", "slow_loader", "slow_rank"],
                   default="healthy")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--fwd-ms-per-sample", type=float, default=None)
    p.add_argument("--item-sleep-ms", type=float, default=3.0)
    p.add_argument("--slow-rank", type=int, default=1)
    p.add_argument("--slow-factor", type=float, default=3.0)
    p.add_argument("--comm-hook", choices=["none", "fp16"], default="none",
                   help="reduce through PyTorch's fp16 compression hook, registered after wrap")
    p.add_argument("--next", action="store_true",
                   help="take batches with next(iter(loader)) for --steps steps")
    p.add_argument("--step-function", action="store_true",
                   help="wrap the training step (wrap_step) instead of the optimizer")
    p.add_argument("--shuffle", action="store_true",
                   help="each rank its own examples, shuffled by a DistributedSampler")
    p.add_argument("--fail", choices=["none", "start", "no_helper", "die", "hang", "hang_at_start"],
                   default="none")
    p.add_argument("--barrier-every", type=int, default=0,
                   help="the script's own dist.barrier() after every this many steps")
    p.add_argument("--rank0-log-ms", type=float, default=0.0,
                   help="rank 0 works this long on its own after each step (a log written), "
                        "before the barrier of --barrier-every")
    p.add_argument("--profile", default="")
    p.add_argument("--profile-into-run-dir", action="store_true",
                   help="--profile $STEPSCOPE_RUN_DIR (diagnose --torch-traces)")
    p.add_argument("--spawn", type=int, default=0,
                   help="start this many processes with torch.multiprocessing.spawn, as PyTorch's "
                        "DDP tutorial does, instead of being started by a launcher")
    args = p.parse_args()
    if args.profile_into_run_dir:
        args.profile = os.environ["STEPSCOPE_RUN_DIR"]
    if args.fail == "start":
        raise SystemExit("ddp_job: failing at start as asked (--fail start)")
    if args.spawn:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        mp.spawn(spawned, args=(args, port), nprocs=args.spawn, join=True)
    else:
        train(args)


def spawned(rank, args, port):
    """A process torch.multiprocessing.spawn started: joins the job of --spawn processes."""
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(args.spawn), MASTER_ADDR="127.0.0.1",
                      MASTER_PORT=str(port))
    train(args)


def train(args):
    torch.set_num_threads(1)
    if args.fail == "hang_at_start" and os.environ.get("RANK") == "1":
        time.sleep(3600)  # before init_process_group: rank 0 waits there for it
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    width, depth = (1024, 4) if args.shape == "comm_heavy" else (64, 2)
    fwd_ms = args.fwd_ms_per_sample
    if fwd_ms is None:
        fwd_ms = 3.0 if args.shape == "healthy" else 1.0
    per_sample = fwd_ms / 1000
    if args.shape == "slow_rank" and rank == args.slow_rank:
        per_sample *= args.slow_factor
    model = DistributedDataParallel(Net(32, width, depth, per_sample))
    sleep_s = args.item_sleep_ms / 1000 if args.shape == "slow_loader" else 0.0
    if args.shuffle:  # each rank its own share of examples, in an order from the sampler's seed
        data = Items(args.batch * (args.steps + 1) * dist.get_world_size(), 32, sleep_s)
        sampler = DistributedSampler(data, shuffle=True)
    else:  # every rank the same examples, in order
        data = Items(args.batch * (args.steps + 1), 32, sleep_s)
        sampler = None
    loader = DataLoader(data, batch_size=args.batch, num_workers=args.workers, sampler=sampler)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()

    def train_step(x, y):
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()  # the model wrap_step returns: the name is rebound
        optimizer.step()

    if args.step_function:
        model, train_step, loader = stepscope_torch.wrap_step(model, train_step, loader)
    elif args.fail != "no_helper":
        model, optimizer, loader = stepscope_torch.wrap(model, optimizer, loader)
    if args.comm_hook == "fp16":
        model.register_comm_hook(None, default_hooks.fp16_compress_hook)
    profiler = torch.autograd.profiler.profile() if args.profile else contextlib.nullcontext()
    def after_step(step):
        if rank == 1 and step == 2 and args.fail == "die":
            os.kill(os.getpid(), signal.SIGKILL)
        if rank == 1 and step == 2 and args.fail == "hang":
            time.sleep(3600)
        if rank == 0 and args.rank0_log_ms:
            time.sleep(args.rank0_log_ms / 1000)
        if args.barrier_every and (step + 1) % args.barrier_every == 0:
            dist.barrier()

    with profiler:
        if args.next:
            batches = iter(loader)
            for step in range(args.steps):
                x, y = next(batches)
                train_step(x, y)
                after_step(step)
        else:
            for step, (x, y) in enumerate(loader):
                if step >= args.steps:
                    break
                train_step(x, y)
                after_step(step)
    if args.profile:
        os.makedirs(args.profile, exist_ok=True)
        profiler.export_chrome_trace(os.path.join(args.profile, f"rank-{rank}.pt.trace.json"))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
