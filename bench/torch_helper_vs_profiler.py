"""The same PyTorch DDP run measured two ways: the stepscope_torch helper's step records and
PyTorch's autograd profiler trace of the same steps (read by `stepscope analyze`). Prints the
steady-state means of compute and exposed communication from both, rank by rank, and their
difference, and the mean duration of each step's last all-reduce launch in the trace (the
`c10d::allreduce_` op on the main thread): the helper counts that launch as exposed
communication (the rank is in the collective), the trace's importer as compute (it lies inside
the autograd node whose gradient completed the bucket, and the node's whole span is compute).

With --barrier-every N --rank0-log-ms MS the script calls dist.barrier() every N steps after
rank 0 sleeps MS ms: the time each rank is blocked in the script's own collectives
(`script_comm`) is compared too, the helper's from its wrapper of the call, the trace's from
the launch and the gloo worker's run of it (docs/formats.md, "The script's own collectives").

The job is apps/stepscope/tests/torch_jobs/ddp_job.py (2 ranks over gloo, communication-heavy at
a small batch by default), started by PyTorch's launcher with both the helper and the profiler.

Usage: /usr/bin/python3 bench/torch_helper_vs_profiler.py --stepscope build/apps/stepscope/stepscope
                        [--shape comm_heavy] [--batch 8] [--steps 30] [--warmup-steps 5]
                        [--barrier-every N --rank0-log-ms MS]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
JOB = os.path.join(ROOT, "apps", "stepscope", "tests", "torch_jobs", "ddp_job.py")


def helper_means(run_dir, warmup):
    """Per rank: the steady-state means of step, compute and exposed communication."""
    out = {}
    for name in sorted(os.listdir(run_dir)):
        if not name.endswith(".steps.jsonl"):
            continue
        with open(os.path.join(run_dir, name)) as f:
            recs = [json.loads(line) for line in f if line.strip()][warmup:]
        out[recs[0]["rank"]] = {
            "step": statistics.mean(r["end"] - r["start"] for r in recs),
            "compute": statistics.mean(r["compute"] for r in recs),
            "exposed_comm": statistics.mean(r["exposed_comm"] for r in recs),
            "script_comm": statistics.mean(r.get("script_comm", 0.0) for r in recs)}
    return out


def last_launch_means(traces, warmup):
    """Per rank: the mean duration of the last c10d::allreduce_ of each steady step, seconds
    (steps end where the optimizer's annotation ends, as the importer infers them)."""
    out = {}
    for name in sorted(os.listdir(traces)):
        if not name.endswith(".pt.trace.json"):
            continue
        with open(os.path.join(traces, name)) as f:
            doc = json.load(f)
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        events = sorted((e for e in events if e.get("ph") == "X"), key=lambda e: e["ts"])
        ends = [e["ts"] + e["dur"] for e in events if e["name"].startswith("Optimizer.step")]
        launches = [e for e in events if e["name"] == "c10d::allreduce_"]
        last = []
        for i in range(max(1, warmup), len(ends)):
            inside = [e for e in launches if ends[i - 1] <= e["ts"] < ends[i]]
            if inside:
                last.append(inside[-1]["dur"] * 1e-6)
        rank = int(name.split("-")[1].split(".")[0])
        out[rank] = statistics.mean(last) if last else 0.0
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--stepscope", required=True)
    p.add_argument("--shape", default="comm_heavy")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup-steps", type=int, default=5)
    p.add_argument("--barrier-every", type=int, default=0)
    p.add_argument("--rank0-log-ms", type=float, default=0.0)
    args = p.parse_args()
    barrier = (["--barrier-every", str(args.barrier_every), "--rank0-log-ms",
                str(args.rank0_log_ms)] if args.barrier_every else [])
    with tempfile.TemporaryDirectory(prefix="stepscope-vs-profiler-") as tmp:
        run_dir, traces, out = (os.path.join(tmp, d) for d in ("run", "traces", "analyze"))
        env = dict(os.environ, STEPSCOPE_RUN_DIR=run_dir, STEPSCOPE_STEPS=str(args.steps),
                   STEPSCOPE_WARMUP_STEPS=str(args.warmup_steps),
                   PYTHONPATH=os.path.join(ROOT, "python"))
        subprocess.run([sys.executable, "-m", "stepscope_torch.run", "--nproc_per_node", "2", JOB,
                        "--shape", args.shape, "--batch", str(args.batch), "--steps",
                        str(args.steps), "--profile", traces] + barrier, env=env, check=True,
                       capture_output=True)
        subprocess.run([args.stepscope, "analyze", traces, "--out", out, "--warmup-steps",
                        str(args.warmup_steps)], check=True, capture_output=True)
        with open(os.path.join(out, "diagnosis.json")) as f:
            ranks = {r["rank"]: r["components"] for r in json.load(f)["points"][-1]["ranks"]}
        helper = helper_means(run_dir, args.warmup_steps)
        launch = last_launch_means(traces, args.warmup_steps)
        print(f"{args.shape} at batch {args.batch}, 2 ranks, {args.steps} steps "
              f"({args.warmup_steps} warm-up){' ' + ' '.join(barrier) if barrier else ''}: each "
              f"rank's means over its steady steps")
        print(f"  {'rank':>4s} {'':14s} {'helper ms':>10s} {'profiler ms':>12s} "
              f"{'difference':>12s}")
        for rank in sorted(helper):
            h, t = helper[rank], ranks[rank]
            for name in ("compute", "exposed_comm") + (("script_comm",) if barrier else ()):
                d = h[name] - t.get(name, 0.0)
                print(f"  {rank:4d} {name:14s} {h[name] * 1e3:10.2f} {t.get(name, 0.0) * 1e3:12.2f} "
                      f"{d * 1e3:+9.2f} ms ({100 * d / t['step']:+.1f} % of the "
                      f"{t['step'] * 1e3:.1f} ms step)")
            print(f"  {rank:4d} {'last launch':14s} {'':10s} {launch[rank] * 1e3:12.2f} "
                  f"(c10d::allreduce_ of the step's last bucket: compute in the trace, "
                  f"exposed communication in the helper's records)")


if __name__ == "__main__":
    main()
