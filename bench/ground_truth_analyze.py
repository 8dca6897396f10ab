#!/usr/bin/env python3
"""Ground truth for `stepscope analyze`: real PyTorch DDP jobs (gloo, this host) with known
injected causes, each analysed, the named binding constraint and straggler ranks checked.

Each case is a fault of apps/stepscope/tests/pytorch_ddp_job.py at one magnitude and profiler.
Every run appends one JSON line to RESULTS (default bench/results/ground_truth_analyze.jsonl);
the bench resumes from it, always running next the case with the fewest runs, until each has
--runs runs or --minutes have passed. It then prints the hit rate per case with its Wilson 95%
interval and, per cause, the detection limit: the smallest magnitude whose hit rate's Wilson
lower bound is above 1/2 (the legacy-profiler rows repeat a magnitude and do not enter it). The
diagnosis of each miss is kept beside RESULTS (misses/CASE-N.json).

  python3 bench/ground_truth_analyze.py [--runs 20] [--minutes 30] [--cases straggler,...]
  python3 bench/ground_truth_analyze.py --table        # the table only, no runs

To compare two versions of the method on the same traces (the jobs' own run-to-run spread is
larger than most changes), keep the traces of one bench run and analyse them again with each
binary; --reanalyze writes no results file, it prints the table of that binary alone:

  python3 bench/ground_truth_analyze.py --runs 8 --keep-traces /tmp/gt-traces
  python3 bench/ground_truth_analyze.py --reanalyze /tmp/gt-traces --stepscope OLD
  python3 bench/ground_truth_analyze.py --reanalyze /tmp/gt-traces --stepscope NEW

What counts as right: pytorch_ddp_job.right(). The second table allows the ranks the host
slowed (the job's own clock saw their extra work take HOST_SLOWED times as long as the others'
or more): a straggler the host made is a straggler, whatever fault was injected.
Needs a python3 with torch (Debian's /usr/bin/python3 with python3-torch) and a stepscope
binary (--stepscope, else $STEPSCOPE, else stepscope on PATH).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ground_truth_lib as gt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "..", "apps", "stepscope", "tests", "pytorch_ddp_job.py")
sys.path.insert(0, os.path.dirname(JOB))
from pytorch_ddp_job import (HOST_SLOWED, STRAGGLER_RANKS, host_ratios, host_slowed,  # noqa: E402
                             right)

# name -> (fault, job arguments, magnitude label, magnitude number for the detection limit)
CASES = {
    "none": ("none", [], "-", None),
    "none-legacy": ("none", ["--profiler", "legacy"], "-", None),
    "straggler-x2": ("straggler", ["--slow-factor", "2"], "2x extra work", 2),
    "straggler-x3": ("straggler", ["--slow-factor", "3"], "3x extra work", 3),
    "straggler-x5": ("straggler", ["--slow-factor", "5"], "5x extra work", 5),
    "straggler-x10": ("straggler", ["--slow-factor", "10"], "10x extra work", 10),
    "straggler-x10-legacy": ("straggler", ["--slow-factor", "10", "--profiler", "legacy"],
                             "10x extra work", None),
    "two_stragglers-3x2x": ("two_stragglers", ["--world", "4", "--slow-ranks", "1:3,3:2"],
                            "N=4, 1:3x 3:2x", 3),
    "two_stragglers-6x4x": ("two_stragglers", ["--world", "4", "--slow-ranks", "1:6,3:4"],
                            "N=4, 1:6x 3:4x", 6),
    "two_stragglers-12x8x": ("two_stragglers", ["--world", "4", "--slow-ranks", "1:12,3:8"],
                             "N=4, 1:12x 3:8x", 12),
    "imbalance-x2": ("imbalance", ["--imbalance-factor", "2"], "2x extra work, rotating", 2),
    "imbalance-x4": ("imbalance", ["--imbalance-factor", "4"], "4x extra work, rotating", 4),
    "imbalance-x10": ("imbalance", ["--imbalance-factor", "10"], "10x extra work, rotating", 10),
    "imbalance-x10-legacy": ("imbalance", ["--imbalance-factor", "10", "--profiler", "legacy"],
                             "10x extra work, rotating", None),
    "input-0.3ms": ("input", ["--item-sleep", "0.0003"], "0.3 ms per sample", 0.3),
    "input-1ms": ("input", ["--item-sleep", "0.001"], "1 ms per sample", 1),
    "input-3ms": ("input", ["--item-sleep", "0.003"], "3 ms per sample", 3),
    "input-3ms-legacy": ("input", ["--item-sleep", "0.003", "--profiler", "legacy"],
                         "3 ms per sample", None),
    "slow_link-0.5mb": ("slow_link", ["--link-pad-mb", "0.5"], "+0.5 MB per all-reduce", 0.5),
    "slow_link-2mb": ("slow_link", ["--link-pad-mb", "2"], "+2 MB per all-reduce", 2),
    "slow_link-8mb": ("slow_link", ["--link-pad-mb", "8"], "+8 MB per all-reduce", 8),
    "slow_link-8mb-legacy": ("slow_link", ["--link-pad-mb", "8", "--profiler", "legacy"],
                             "+8 MB per all-reduce", None),
    "noisy-25": ("noisy", ["--noise-share", "0.25"], "hog busy 25%", 25),
    "noisy-50": ("noisy", ["--noise-share", "0.5"], "hog busy 50%", 50),
    "noisy-100": ("noisy", ["--noise-share", "1.0"], "hog busy 100%", 100),
}


def torch_python():
    for exe in ("/usr/bin/python3", sys.executable):
        if subprocess.run([exe, "-c", "import torch"], capture_output=True).returncode == 0:
            return exe
    sys.exit("no python3 with torch (install Debian's python3-torch)")


def analyze(name, traces, stepscope, rec, results=None):
    """Analyses one job's traces (into TRACES/analysis) and adds the verdict to `rec`; a miss is
    kept beside `results` when given."""
    fault = CASES[name][0]
    out = os.path.join(traces, "analysis")
    a = subprocess.run([stepscope, "analyze", traces, "--out", out], capture_output=True,
                       text=True, timeout=300)
    if a.returncode != 0:
        rec.update(error="analyze failed: " + a.stderr[-400:])
        return rec
    with open(os.path.join(out, "diagnosis.json")) as f:
        v = json.load(f)["verdict"]
    rec.update(binding=v["binding"], throughput_constraint=v.get("throughput_constraint"),
               straggler_ranks=v["straggler_ranks"], hit=right(fault, v),
               candidates=[{"binding": c["binding"]} for c in v.get("candidates", [])],
               losses={x["binding"]: round(x["devices"], 3) for x in v.get("losses", [])})
    ratios = host_ratios(traces)
    if ratios is not None:
        slowed = host_slowed(ratios)
        rec.update(host_ratios=ratios, host_slowed=slowed,
                   hit_given_host=right(fault, v, slowed))
    if results is not None and not rec["hit"]:
        gt.keep_miss(results, name, os.path.join(out, "diagnosis.json"))
    return rec


def run_once(name, python, stepscope, results, keep_traces=None):
    fault, extra, magnitude, _ = CASES[name]
    with tempfile.TemporaryDirectory(prefix="gt-analyze-") as tmp:
        out = os.path.join(tmp, "job")
        if keep_traces:
            k = sum(1 for r in gt.load(results) if r["case"] == name)
            out = os.path.join(keep_traces, f"{name}.{k}")
        t0 = time.time()
        job = subprocess.run([python, JOB, "--out", out, "--fault", fault] + extra,
                             capture_output=True, text=True, timeout=300)
        job_s = time.time() - t0
        rec = {"case": name, "fault": fault, "magnitude": magnitude, "args": extra,
               "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "job_s": round(job_s, 2),
               "load1": os.getloadavg()[0]}
        if job.returncode != 0:
            rec.update(error="job failed: " + job.stderr[-400:])
            return rec
        return analyze(name, out, stepscope, rec, results)


def reanalyze(folder, names, stepscope):
    """Every kept job under `folder` (NAME.K) of the given cases, analysed again: the records."""
    records = []
    for entry in sorted(os.listdir(folder)):
        name = entry.rsplit(".", 1)[0]
        if name not in names:
            continue
        rec = {"case": name, "magnitude": CASES[name][2]}
        records.append(analyze(name, os.path.join(folder, entry), stepscope, rec))
    return records


def main():
    def extra(p):
        p.add_argument("--keep-traces", metavar="DIR",
                       help="keep each job's traces in DIR/CASE.K (for --reanalyze)")
        p.add_argument("--reanalyze", metavar="DIR",
                       help="analyse the jobs kept in DIR again; no job runs, no results file")

    args, names = gt.parse_args(__doc__, CASES, os.path.join(HERE, "results", "ground_truth_analyze.jsonl"), 30.0,
                                "stepscope", extra)
    if args.reanalyze:
        records = reanalyze(args.reanalyze, names, args.stepscope)
    else:
        if not args.table:
            python = torch_python()
            if args.keep_traces:
                os.makedirs(args.keep_traces, exist_ok=True)
            gt.run_until(names, args.results, args.runs, args.minutes,
                         lambda name: run_once(name, python, args.stepscope, args.results,
                                               args.keep_traces))
        records = gt.load(args.results)
    gt.table(records, names, lambda n: CASES[n][2], lambda n: (CASES[n][0], CASES[n][3]))
    witnessed = [r for r in records if "host_slowed" in r and r["case"] in names]
    if witnessed:
        print(f"\n== given the ranks the host slowed (the job's own clock: a rank's matrix products "
              f"{HOST_SLOWED}x as long as the others' or more), named beside the injected ones")
        gt.table([dict(r, hit=right(r["fault"], r, r["host_slowed"])) for r in witnessed], names,
                 lambda n: CASES[n][2])
        extra = [(r, set(r["host_slowed"]) - set(STRAGGLER_RANKS.get(r["fault"], [])))
                 for r in witnessed]
        extra = [(r, x) for r, x in extra if x]
        print(f"{len(extra)} of {len(witnessed)} runs had a rank the host slowed beside the "
              f"injected ones; {sum(1 for r, x in extra if x & set(r['straggler_ranks']))} of "
              "them named it. The misses:")
        for r in witnessed:
            if not r["hit"]:
                print(f"  {r['case']:<24} named {r['binding']} {r['straggler_ranks']}, the job's "
                      f"own clock per rank {r['host_ratios']}"
                      + ("" if right(r["fault"], r, r["host_slowed"]) else ", still a miss"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
