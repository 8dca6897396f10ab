"""The stepscope_torch helper's cost: the same DDP training loop with and without
`stepscope_torch.wrap`, in interleaved paired rounds (the order alternating within each pair),
each round a fresh model, optimizer and loader; prints each round's ratio and the median over the
rounds against the goal (under 2 % of the step). With --block K both loops are built in each
round and run alternately K steps at a time, so that a load that varies over seconds weighs on
both alike (on a shared host the better pairing). The process's CPU time per step is compared
the same way: on a loaded host it varies less than the wall-clock time (other processes' work
does not count into it), though contention for caches and memory still does.

A DDP model over gloo, an MLP of --width at --batch. One process by default (world size 1: the
helper's hook, timing and records all run; the all-reduce of one rank is cheap, and the helper
samples no gradient norms where there is nothing to reduce across); --world W runs W processes
on this host, each the same loop, so that the norms sampled every 4th step and a real
all-reduce count too (rank 0 times and prints).

--script-hook allreduce|fp16: both loops reduce through that PyTorch hook, the script's own
(registered after wrap in the helper's loop).

Usage: /usr/bin/python3 bench/torch_helper_overhead.py [--rounds 10] [--steps 60] [--width 512]
                                                        [--batch 64] [--block K] [--world 1]
                                                        [--script-hook none] [--smoke]
"""
import argparse
import os
import statistics
import sys
import time

from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# One job and one alternating round for both benches: the parts bench's "plain" and "helper".
from torch_helper_parts import WARMUP, build as build_variant  # noqa: E402
from torch_helper_parts import one_round as variants_round  # noqa: E402
from torch_helper_parts import add_loop_arguments, run_ranks, smoke_sized  # noqa: E402


def build(args, helper, run_dir):
    return build_variant(args, "helper" if helper else "plain", run_dir)


def blocks_round(args, run_dir):
    """Both loops in one round, alternating every --block steps (the order reversed every
    block): a load that changes over a second or so weighs on both alike."""
    t = variants_round(args, ["plain", "helper"], run_dir)
    return {False: t["plain"], True: t["helper"]}


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


def rounds(args, tmp, printing):
    ratios, cpu_ratios, without = [], [], []
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
        if printing:
            print(f"round {r + 1:2d}: without {t[False][0] * 1e3:7.3f} ms/step, with "
                  f"{t[True][0] * 1e3:7.3f} ms/step, ratio {ratios[-1]:.4f} "
                  f"(CPU time {t[False][1] * 1e3:7.3f} / {t[True][1] * 1e3:7.3f} ms, "
                  f"{cpu_ratios[-1]:.4f})", flush=True)
    if not printing:
        return
    for name, rs in (("CPU-time", cpu_ratios), ("wall-clock", ratios)):
        q = statistics.quantiles(rs, n=4)
        median = statistics.median(rs)
        verdict = ("not judged (--smoke)" if args.smoke
                   else "MET" if median < 1.02 else "NOT MET")
        hook = "" if args.script_hook == "none" else f", the script's {args.script_hook} hook"
        print(f"{name} median ratio with/without over {args.rounds} rounds, {args.world} "
              f"process(es){hook}: {median:.4f} (quartiles {q[0]:.4f} to {q[2]:.4f}; overhead "
              f"{100 * (median - 1):+.2f} % of the {statistics.median(without) * 1e3:.2f} ms "
              f"step; goal under 2 %): {verdict}")
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f}")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_loop_arguments(p, rounds=10, steps=60, block=0,
                       block_help="0: each round runs one loop, then the other; K: both loops "
                                  "built in each round, alternating every K steps")
    args = smoke_sized(p.parse_args())
    if args.rounds < 10 and not args.smoke:
        p.error("--rounds: at least 10 (the median of paired rounds)")
    run_ranks(rounds, args, "stepscope-overhead-")


if __name__ == "__main__":
    main()
