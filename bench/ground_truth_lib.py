"""What the ground-truth benches share: a resumable results file (one JSON line per run), the
next case to run (the one with the fewest runs), the hit rate per case with its Wilson 95%
interval, and the detection limit per cause (the smallest magnitude still named right)."""
import argparse
import json
import math
import os
import shutil
import time


def wilson(k, n, z=1.96):
    """Wilson score interval of k hits in n runs."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def load(results):
    if not os.path.exists(results):
        return []
    with open(results) as f:
        return [json.loads(line) for line in f if line.strip()]


def append(results, record):
    with open(results, "a") as f:
        f.write(json.dumps(record) + "\n")


def keep_miss(results, name, diagnosis_path):
    """Copies a missed run's diagnosis beside RESULTS (misses/CASE-K.json, K its run number)."""
    misses = os.path.join(os.path.dirname(os.path.abspath(results)), "misses")
    os.makedirs(misses, exist_ok=True)
    k = sum(1 for r in load(results) if r["case"] == name)
    shutil.copy(diagnosis_path, os.path.join(misses, f"{name}-{k}.json"))


def run_until(names, results, runs, minutes, run_once):
    """Runs `run_once(name)` for the case with the fewest recorded runs until every case has
    `runs` or `minutes` have passed; each record is appended as it comes."""
    deadline = time.time() + 60 * minutes
    while time.time() < deadline:
        records = load(results)
        counts = {n: sum(1 for r in records if r["case"] == n) for n in names}
        name = min(names, key=lambda n: counts[n])
        if counts[name] >= runs:
            break
        rec = run_once(name)
        rec.setdefault("case", name)
        append(results, rec)
        print(f"{name}: {rec.get('binding', rec.get('error'))} "
              f"{rec.get('straggler_ranks', '')} {'hit' if rec.get('hit') else 'MISS'} "
              f"(load {os.getloadavg()[0]:.1f})", flush=True)


def table(records, names, magnitude_of, cause_of=None):
    """Prints the hit rate per case; with `cause_of` (case -> (cause, magnitude number)), the
    detection limit per cause: the smallest magnitude whose Wilson lower bound is above 1/2."""
    print(f"{'case':<24} {'magnitude':<26} {'hits':>7} {'rate':>5}  {'Wilson 95%':<13} "
          "named (count)")
    limits = {}
    for name in names:
        rs = [r for r in records if r["case"] == name and "hit" in r]
        if not rs:
            continue
        k = sum(r["hit"] for r in rs)
        lo, hi = wilson(k, len(rs))
        named = {}
        for r in rs:
            key = r["binding"] + (str(r["straggler_ranks"]) if r["straggler_ranks"] else "")
            named[key] = named.get(key, 0) + 1
        named_s = ", ".join(f"{key} {c}" for key, c in sorted(named.items(), key=lambda x: -x[1]))
        print(f"{name:<24} {magnitude_of(name):<26} {k:>3}/{len(rs):<3} {k / len(rs):>5.0%}  "
              f"[{lo:.2f}, {hi:.2f}]  {named_s}")
        if cause_of is not None and lo > 0.5:
            cause, size = cause_of(name)
            if size is not None and (cause not in limits or size < limits[cause][0]):
                limits[cause] = (size, name)
    failed = [r for r in records if "error" in r and r["case"] in names]
    if failed:
        print(f"({len(failed)} run(s) failed and are not counted)")
    if cause_of is not None:
        print("\ndetection limit (smallest magnitude named right with Wilson lower bound > 0.5):")
        causes = sorted({cause_of(n)[0] for n in names if cause_of(n)[1] is not None})
        for cause in causes:
            if cause in limits:
                print(f"  {cause:<16} {magnitude_of(limits[cause][1])}")
            else:
                print(f"  {cause:<16} not reached by the magnitudes run")


def parse_args(doc, cases, results, minutes, stepscope, extra=None):
    """The benches' shared command line: (args, case names), the names checked against
    `cases`; the results folder is created. `extra(parser)` adds a bench's own options."""
    p = argparse.ArgumentParser(description=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    if extra:
        extra(p)
    p.add_argument("--results", default=results)
    p.add_argument("--runs", type=int, default=20, help="runs per case")
    p.add_argument("--minutes", type=float, default=minutes, help="stop starting runs after this")
    p.add_argument("--cases", default=",".join(cases), help="comma-separated case names")
    p.add_argument("--stepscope", default=os.environ.get("STEPSCOPE", stepscope))
    p.add_argument("--table", action="store_true", help="print the table only")
    args = p.parse_args()
    names = [n for n in args.cases.split(",") if n]
    for n in names:
        if n not in cases:
            p.error(f"unknown case {n}; known: {', '.join(cases)}")
    os.makedirs(os.path.dirname(os.path.abspath(args.results)), exist_ok=True)
    return args, names
