"""A small real PyTorch job with known faults, the ground truth for analyze.

DistributedDataParallel over gloo with --world ranks on this host, a small MLP, one Chrome trace
per rank (OUT/rank-R.pt.trace.json), and beside it the witness OUT/rank-R.witness.tsv: the
seconds each analysed step's extra compute took by the job's own clock (step, extra_s,
products), which tells a rank the host slowed from one it did not. Faults, each a known cause:
  --fault none            no fault
  --fault straggler       rank --slow-rank does --slow-factor times the extra compute in its forward
  --fault two_stragglers  each RANK:FACTOR of --slow-ranks (default 1:6,3:4, for --world 4)
                          does FACTOR times the extra compute
  --fault imbalance       rotating imbalance: in every step one rank at random (seeded by --seed)
                          does --imbalance-factor times the extra compute, the others scaled in
                          between, so a different rank is slowest from step to step; over every
                          --world consecutive steps each rank draws each share once, so no rank is
                          slower on the whole
  --fault input           every sample takes --item-sleep seconds to load (num_workers=0)
  --fault noisy           a co-tenant: a CPU-hog process on the core of rank --slow-rank, busy
                          for --noise-share of every 10 ms (every rank is pinned to its own core)
  --fault slow_link       a slow interconnect: a DDP communication hook makes every all-reduce
                          carry --link-pad-mb MB more, so each takes longer on every rank
--profiler kineto records with torch.profiler.profile and a schedule (ProfilerStep#N step
annotations; Debian's python3-torch, built without Kineto, writes the legacy event format with
them); --profiler legacy records with torch.autograd.profiler.profile (no step annotations:
steps are found from the optimizer's).

Usage: python3 pytorch_ddp_job.py --out DIR [--fault F] [--world N] [--steps N]
                                  [--profiler kineto|legacy]
"""
import argparse
import itertools
import os
import random
import socket
import statistics
import subprocess
import sys
import time

FAULTS = ["none", "straggler", "two_stragglers", "imbalance", "input", "noisy", "slow_link"]

# The co-tenant: busy for SHARE of every 10 ms period on the given CPU, until killed.
HOG = """
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
share = float(sys.argv[2])
period = 0.01
while True:
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < share * period:
        pass
    if share < 1.0:
        time.sleep((1.0 - share) * period)
"""


# A rank the host slowed: its extra work's matrix products took at least this many times as long
# as the other ranks' (medians over the analysed steps, by the job's own clock).
HOST_SLOWED = 1.25


def host_ratios(out):
    """Per rank, the median seconds per matrix product of its extra work over the analysed steps
    (OUT/rank-R.witness.tsv) divided by the median of the other ranks', or None without the
    witness of two ranks or more. Every rank does the same products, so a ratio well above 1 is
    a rank the host slowed (a co-tenant, or this host's two CPUs sharing one core's arithmetic),
    whatever fault the job injected."""
    per_rank = []
    while True:
        path = os.path.join(out, f"rank-{len(per_rank)}.witness.tsv")
        if not os.path.exists(path):
            break
        with open(path) as f:
            rows = [line.split("\t") for line in f.read().splitlines()[1:] if line]
        per_rank.append(statistics.median(float(s) / int(n) for _, s, n in rows if int(n) > 0))
    if len(per_rank) < 2:
        return None
    return [round(t / statistics.median(per_rank[:r] + per_rank[r + 1:]), 3)
            for r, t in enumerate(per_rank)]


def host_slowed(ratios):
    """The ranks the host slowed: those whose host_ratios are HOST_SLOWED or more; [] without a
    witness (ratios None)."""
    return [r for r, x in enumerate(ratios or []) if x >= HOST_SLOWED]


# The ranks each straggler fault slows, as the ground-truth cases run it (--slow-rank 1,
# --slow-ranks 1:F,3:F).
STRAGGLER_RANKS = {"straggler": [1], "noisy": [1], "two_stragglers": [1, 3]}


def right(fault, verdict, slowed=()):
    """Whether analyze's `verdict` (diagnosis.json) names the injected `fault`:
      none            binding neither stragglers nor input, no straggler ranks
      straggler       binding stragglers, straggler ranks [1]
      two_stragglers  binding stragglers, straggler ranks [1, 3]
      imbalance       binding imbalance, no straggler ranks
      input           binding input, or input as the throughput constraint; no straggler ranks
      slow_link       binding communication, no straggler ranks
      noisy           binding stragglers, straggler ranks [1] (the rank beside the co-tenant)
    With `slowed`, the ranks the host slowed (host_slowed): a straggler the host made is a
    straggler too, so naming those ranks beside the injected ones is right, and so is a binding
    of stragglers (with no fault) or `inconclusive` between the injected cause and stragglers
    (with one) when it names only such ranks."""
    b, tc, ranks = verdict["binding"], verdict.get("throughput_constraint"), \
        verdict["straggler_ranks"]
    host_straggler = ranks != [] and set(ranks) <= set(slowed)
    candidates = {c["binding"] for c in verdict.get("candidates", [])}

    def named(binding, injected):
        tied = b == "inconclusive" and host_straggler and {binding, "stragglers"} <= candidates
        return ((b == binding or tied)
                and set(injected) <= set(ranks) <= set(injected) | set(slowed))

    if fault == "none":
        return ((b not in ("stragglers", "input") or (b == "stragglers" and host_straggler))
                and set(ranks) <= set(slowed))
    if fault in STRAGGLER_RANKS:
        return named("stragglers", STRAGGLER_RANKS[fault])
    if fault == "imbalance":
        return named("imbalance", [])
    if fault == "input":
        return (named("input", []) or (tc == "input" and set(ranks) <= set(slowed)))
    if fault == "slow_link":
        return named("communication", [])
    raise ValueError(fault)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse_slow_ranks(text):
    """'1:6,3:4' -> {1: 6, 3: 4}."""
    out = {}
    for item in text.split(","):
        rank, factor = item.split(":")
        out[int(rank)] = int(factor)
    return out


def imbalance_multipliers(args, rank, steps):
    """The extra-work multiplier of `rank` in each of `steps` steps: per block of --world steps,
    shares 0..world-1 are dealt out by a rotation whose offset order is shuffled (the same seed
    on every rank), so the slowest rank changes at random from step to step and every rank
    draws every share once per block."""
    w = args.world
    rng = random.Random(args.seed)
    out = []
    while len(out) < steps:
        offsets = list(range(w))
        rng.shuffle(offsets)
        for off in offsets:
            share = (rank + off) % w
            out.append(1 + (args.imbalance_factor - 1) * share / max(1, w - 1))
    return out[:steps]


def worker(rank, args, port):
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel
    from torch.utils.data import DataLoader, Dataset

    hog = None
    if args.fault == "noisy":
        cpus = sorted(os.sched_getaffinity(0))
        cpu = cpus[rank % len(cpus)]
        os.sched_setaffinity(0, {cpu})
        if rank == args.slow_rank:
            hog = subprocess.Popen([sys.executable, "-c", HOG, str(cpu), str(args.noise_share)])

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
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(args.features, args.hidden), nn.ReLU(),
                                      nn.Linear(args.hidden, args.hidden), nn.ReLU(),
                                      nn.Linear(args.hidden, 10))
            self.extra_work = args.burn_iters
            self.burn = torch.randn(args.burn_size, args.burn_size)

        def forward(self, x):
            # Extra compute: matrix products whose result is discarded, timed by the job's own
            # clock (the witness below).
            t0 = time.perf_counter()
            for _ in range(self.extra_work):
                torch.mm(self.burn, self.burn)
            self.extra_s = time.perf_counter() - t0
            return self.body(x)

    factor = 1
    if args.fault == "straggler" and rank == args.slow_rank:
        factor = args.slow_factor
    elif args.fault == "two_stragglers":
        factor = parse_slow_ranks(args.slow_ranks).get(rank, 1)
    # Every rank does some work (so that scheduling noise is small against it); a straggler
    # does several times as much.
    mlp = Mlp()
    mlp.extra_work = args.burn_iters * factor
    model = DistributedDataParallel(mlp)
    if args.fault == "slow_link":
        # A link of less bandwidth: every all-reduce carries --link-pad-mb of zeros beside the
        # gradients, so that the collective itself (its gloo:all_reduce event on every rank)
        # takes longer, as the same bytes would over a slower link. (Sleeping in a callback of
        # the all-reduce's future is not the same: where the collective has completed before
        # the callback is attached, the callback runs on the training thread, outside it.)
        pad = int(args.link_pad_mb * (1 << 20)) // 4
        world = args.world
        padded = {}

        def slow_allreduce(state, bucket):
            grads = bucket.buffer()
            n = grads.numel()
            buf = padded.get(n)
            if buf is None:
                buf = padded[n] = torch.zeros(n + pad, dtype=grads.dtype)
            buf[:n].copy_(grads)  # the padding stays zero: a sum of zeros
            fut = dist.all_reduce(buf, async_op=True).get_future()
            return fut.then(lambda f: f.value()[0][:n].div(world))

        model.register_comm_hook(None, slow_allreduce)
    item_sleep = args.item_sleep if args.fault == "input" else 0.0
    # The loop steps analyze keeps: the kineto schedule leaves out step 0 (its warm-up) and
    # analyze leaves out the first step it sees (--warmup-steps 1), so --steps steps from loop
    # step 2 on; the legacy profiler records from step 0, so from loop step 1 on.
    first = 2 if args.profiler == "kineto" else 1
    last = first + args.steps - 1
    data = Samples(args.batch * (last + 2), item_sleep)
    loader = DataLoader(data, batch_size=args.batch, num_workers=0, shuffle=False)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    # The analysed steps are the ones dealt out in whole blocks (with --steps a multiple of
    # --world, every rank draws every share equally often); the warm-up steps before them take
    # the same middle share on every rank.
    multipliers = (imbalance_multipliers(args, rank, args.steps)
                   if args.fault == "imbalance" else None)

    # The witness: how long each analysed step's extra work took on this rank by the job's own
    # clock, apart from the profiler and from analyze. Work per matrix product is the same on
    # every rank, so a rank whose products take longer was slowed by the host (bench/ reads it).
    witness = []

    def train_step(step, x, y):
        if multipliers is not None:
            m = (multipliers[step - first] if step >= first
                 else (1 + args.imbalance_factor) / 2)
            mlp.extra_work = round(args.burn_iters * m)
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if first <= step <= last:
            witness.append((step, mlp.extra_s, mlp.extra_work))

    path = os.path.join(args.out, f"rank-{rank}.pt.trace.json")
    try:
        if args.profiler == "kineto":
            # A schedule makes prof.step() record "ProfilerStep#N" annotations: one warm-up
            # step, then loop steps 1..last, exported when the active window ends.
            schedule = torch.profiler.schedule(wait=0, warmup=1, active=last)
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                        schedule=schedule,
                                        on_trace_ready=lambda p: p.export_chrome_trace(path)) \
                    as prof:
                for step, (x, y) in itertools.islice(enumerate(loader), last + 1):
                    train_step(step, x, y)
                    prof.step()
        else:
            # The legacy autograd profiler over every step (analyze leaves out the first as
            # warm-up); steps are found from the optimizer's annotations.
            with torch.autograd.profiler.profile() as prof:
                for step, (x, y) in itertools.islice(enumerate(loader), last + 1):
                    train_step(step, x, y)
            prof.export_chrome_trace(path)
        # Not *.json: analyze reads every .json file in the folder as a trace.
        with open(os.path.join(args.out, f"rank-{rank}.witness.tsv"), "w") as f:
            f.write("step\textra_s\tproducts\n")
            for step, seconds, products in witness:
                f.write(f"{step}\t{seconds:.6f}\t{products}\n")
        dist.barrier()
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--fault", choices=FAULTS, default="none")
    p.add_argument("--profiler", choices=["kineto", "legacy"], default="kineto")
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--slow-rank", type=int, default=1)
    p.add_argument("--slow-factor", type=int, default=10)
    p.add_argument("--slow-ranks", default="1:6,3:4")
    p.add_argument("--imbalance-factor", type=float, default=10.0)
    p.add_argument("--noise-share", type=float, default=1.0)
    p.add_argument("--link-pad-mb", type=float, default=8.0)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--features", type=int, default=64)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--burn-size", type=int, default=192)
    p.add_argument("--burn-iters", type=int, default=15)
    p.add_argument("--item-sleep", type=float, default=0.003)
    args = p.parse_args()
    for rank in (parse_slow_ranks(args.slow_ranks) if args.fault == "two_stragglers" else {}):
        if not 0 <= rank < args.world:
            p.error(f"--slow-ranks: rank {rank} outside --world {args.world}")
    if args.fault in ("straggler", "noisy") and not 0 <= args.slow_rank < args.world:
        p.error(f"--slow-rank {args.slow_rank} outside --world {args.world}")
    os.makedirs(args.out, exist_ok=True)
    import torch.multiprocessing as mp

    # fork: the children do not import torch again (seconds on a busy machine).
    mp.start_processes(worker, args=(args, free_port()), nprocs=args.world, join=True,
                       start_method="fork")
    return 0


if __name__ == "__main__":
    sys.exit(main())
