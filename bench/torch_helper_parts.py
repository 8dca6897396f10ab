"""Where the stepscope_torch helper's cost goes: the loop of bench/torch_helper_overhead.py
without the helper ("plain") and with variants that switch one part of the helper off or put a
bare communication hook in its place. Each round builds a fresh model for every variant and runs
them alternately, --block steps at a time (the order reversed every block). Prints, per
variant, the median over the rounds of its ratio to "plain" in the process's CPU time and in
wall-clock time per step, with the quartiles.

Variants:
  helper             stepscope_torch.wrap as is
  no_comm_hook       the helper, but DDP keeps its built-in reduction (no timed hook)
  no_model_hooks     the helper without its forward hooks and backward marks (nor the
                     global gradient norm, sampled when backward ends)
  no_norms           the helper without its gradient-norm samples (STEPSCOPE_GRAD_NORM_EVERY=0;
                     it samples none at --world 1 anyway)
  torch_python_hook  no helper; PyTorch's own Python all-reduce hook (divide, all-reduce, then)
  python_sync_hook   no helper; a Python hook that reduces at once and returns a completed
                     future (nothing runs on the backend's thread; no overlap either)
  builtin_hook       no helper; DDP's C++ built-in all-reduce communication hook

--world W runs W processes (gloo on this host, one compute thread each), each the same loop on
the same data: the helper's gradient-norm sampling (every 4th step, only where there are
replicas to reduce across) and a real all-reduce are then in the cost; rank 0 times and prints.

--script-hook allreduce|fp16 registers PyTorch's all-reduce or fp16 compression hook in the
plain loop and, after wrap, in the helper's (docs/torch.md, "Your own communication hook"): the
helper's cost for a script that reduces through a hook of its own.

Usage: /usr/bin/python3 bench/torch_helper_parts.py [--rounds 16] [--steps 100] [--width 512]
                                                     [--batch 64] [--block 5] [--world 1]
                                                     [--script-hook none] [--smoke] [VARIANT ...]
"""
import argparse
import atexit
import gc
import os
import shutil
import socket
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import stepscope_torch  # noqa: E402
from stepscope_torch import session as helper_session  # noqa: E402

WARMUP = 5
VARIANTS = ("helper", "no_comm_hook", "no_model_hooks", "no_norms", "torch_python_hook",
            "python_sync_hook", "builtin_hook")


def python_sync_hook(state, bucket):
    """Divides, all-reduces before returning, and hands DDP a future already complete."""
    tensor = bucket.buffer()
    tensor.div_(dist.get_world_size())
    dist.all_reduce(tensor)
    fut = torch.futures.Future()
    fut.set_result(tensor)
    return fut


# --script-hook: a communication hook of the script's own, registered by "plain" on its DDP
# model and by "helper" on the model wrap returns (docs/torch.md, "Your own communication hook").
SCRIPT_HOOKS = {"none": None, "allreduce": default_hooks.allreduce_hook,
                "fp16": default_hooks.fp16_compress_hook}


def apply(variant, model, optimizer, loader, run_dir, script_hook=None):
    if script_hook is not None:  # main() allows it only with the plain and helper loops
        model, optimizer, loader = apply(variant, model, optimizer, loader, run_dir)
        model.register_comm_hook(None, script_hook)
        return model, optimizer, loader
    if variant == "plain":
        return model, optimizer, loader
    if variant == "torch_python_hook":
        model.register_comm_hook(dist.group.WORLD, default_hooks.allreduce_hook)
        return model, optimizer, loader
    if variant == "python_sync_hook":
        model.register_comm_hook(None, python_sync_hook)
        return model, optimizer, loader
    if variant == "builtin_hook":
        model._register_builtin_comm_hook(dist.BuiltinCommHookType.ALLREDUCE)
        return model, optimizer, loader
    if variant == "no_comm_hook":
        model.register_comm_hook = lambda *args, **kwargs: None
    saved = helper_session._Session._install_model_hooks
    if variant == "no_model_hooks":
        helper_session._Session._install_model_hooks = lambda self, m: None
    os.environ["STEPSCOPE_RUN_DIR"] = run_dir
    if variant == "no_norms":
        os.environ["STEPSCOPE_GRAD_NORM_EVERY"] = "0"
    try:
        return stepscope_torch.wrap(model, optimizer, loader)
    finally:
        del os.environ["STEPSCOPE_RUN_DIR"]
        os.environ.pop("STEPSCOPE_GRAD_NORM_EVERY", None)
        helper_session._Session._install_model_hooks = saved


def build(args, variant, run_dir):
    torch.manual_seed(0)
    n = args.batch * (args.steps + WARMUP)
    data = TensorDataset(torch.randn(n, args.width), torch.randint(0, 10, (n,)))
    loader = DataLoader(data, batch_size=args.batch)
    model = DistributedDataParallel(nn.Sequential(
        nn.Linear(args.width, args.width), nn.ReLU(), nn.Linear(args.width, args.width),
        nn.ReLU(), nn.Linear(args.width, 10)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    return apply(variant, model, optimizer, loader, run_dir, SCRIPT_HOOKS[args.script_hook])


def one_round(args, variants, run_dir):
    """Every variant's loop built, then run alternately --block steps at a time (the order
    reversed every block); returns each variant's (wall, CPU) seconds per step."""
    jobs = {v: build(args, v, os.path.join(run_dir, v)) for v in variants}
    its = {v: iter(jobs[v][2]) for v in variants}
    loss_fn = nn.CrossEntropyLoss()
    spent = {v: [0.0, 0.0] for v in variants}

    def run(v, steps):
        model, optimizer, _ = jobs[v]
        for _ in range(steps):
            x, y = next(its[v])
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()

    for v in variants:
        run(v, WARMUP)
    done, b = 0, 0
    while done < args.steps:
        k = min(args.block, args.steps - done)
        for v in (variants if b % 2 == 0 else variants[::-1]):
            t0, c0 = time.perf_counter(), time.process_time()
            run(v, k)
            spent[v][0] += time.perf_counter() - t0
            spent[v][1] += time.process_time() - c0
        done += k
        b += 1
    for v in variants:
        for _ in its[v]:
            pass
    return {v: (spent[v][0] / args.steps, spent[v][1] / args.steps) for v in variants}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank_main(rank, world, port, body, args, tmp):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    body(args, tmp, rank == 0)
    # The rounds' DDP models (held in reference cycles by the helper's hooks) go before their
    # process group does: a reducer outliving its group aborts the process at exit.
    gc.collect()
    dist.barrier()
    dist.destroy_process_group()


def run_ranks(body, args, prefix):
    """Runs `body(args, tmp, printing)` in each of --world processes of one gloo group (in this
    process when --world is 1), over a temporary run directory removed at the end."""
    tmp = tempfile.mkdtemp(prefix=prefix)
    # Removed last: the helper writes each round's run.json at exit (atexit runs in reverse).
    atexit.register(shutil.rmtree, tmp, True)
    port = free_port()
    if args.world == 1:
        _rank_main(0, 1, port, body, args, tmp)
    else:
        torch.multiprocessing.spawn(_rank_main, args=(args.world, port, body, args, tmp),
                                    nprocs=args.world)


def _at_least_one(text):
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError("at least 1")
    return n


def add_loop_arguments(p, rounds, steps, block, block_help=None):
    """The loop's options both helper benches take, with each bench's defaults."""
    p.add_argument("--rounds", type=int, default=rounds)
    p.add_argument("--steps", type=int, default=steps)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--block", type=int, default=block, help=block_help)
    p.add_argument("--world", type=_at_least_one, default=1,
                   help="processes in the gloo group (1: one, whose all-reduce is trivial and "
                        "whose helper samples no gradient norms)")
    p.add_argument("--smoke", action="store_true",
                   help="2 rounds of 2 steps, a block of 1: that the bench runs, not a "
                        "measurement (CI runs each bench so)")
    p.add_argument("--script-hook", choices=sorted(SCRIPT_HOOKS), default="none",
                   help="a communication hook of the script's own in both loops (PyTorch's "
                        "all-reduce or fp16 compression hook; only with the plain and helper "
                        "loops)")


def smoke_sized(args):
    """--smoke: the smallest loop that goes through every part of the bench."""
    if args.smoke:
        args.rounds, args.steps, args.block = 2, 2, 1
    return args


def parts(args, tmp, printing):
    wall = {v: [] for v in args.variants}
    cpu = {v: [] for v in args.variants}
    plain = []
    for r in range(args.rounds):
        t = one_round(args, ["plain"] + list(args.variants), os.path.join(tmp, f"round-{r}"))
        plain.append(t["plain"])
        for v in args.variants:
            wall[v].append(t[v][0] / t["plain"][0])
            cpu[v].append(t[v][1] / t["plain"][1])
    if not printing:
        return
    print(f"plain: {statistics.median(p[0] for p in plain) * 1e3:.3f} ms/step wall, "
          f"{statistics.median(p[1] for p in plain) * 1e3:.3f} ms/step CPU (medians over "
          f"{args.rounds} rounds, {args.world} process(es)); load average (1 min) at the end "
          f"{os.getloadavg()[0]:.1f}")
    for name, ratios in (("CPU time", cpu), ("wall clock", wall)):
        for v in args.variants:
            q = statistics.quantiles(ratios[v], n=4)
            print(f"  {name:10s} {v:18s} median ratio {statistics.median(ratios[v]):.4f} "
                  f"(quartiles {q[0]:.4f} to {q[2]:.4f})")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_loop_arguments(p, rounds=16, steps=100, block=5)
    p.add_argument("variants", nargs="*", help=", ".join(VARIANTS) + " (default: all)")
    args = smoke_sized(p.parse_args())
    args.variants = args.variants or list(VARIANTS)
    for v in args.variants:
        if v not in VARIANTS:
            p.error(f"unknown variant {v!r}; one of {', '.join(VARIANTS)}")
    if args.script_hook != "none" and args.variants != ["helper"]:
        p.error("--script-hook is for the plain and helper loops: give the variant helper alone")
    run_ranks(parts, args, "stepscope-parts-")


if __name__ == "__main__":
    main()
