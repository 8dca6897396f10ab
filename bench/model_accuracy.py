#!/usr/bin/env python3
"""How well `stepscope predict` predicts replica counts it was not fitted on: for each workload,
a diagnose sweep at N = 1..16 (emulated where N exceeds the cores), then the model fitted on
N <= 2, N <= 4 and N <= 8 and checked against every baseline and lever run it did not fit. Also
the run-to-run spread of the largest N, measured by running it twice (the goal is judged against
max(5 %, spread)). Prints the error of every check and the median and worst per fit.

  bench/model_accuracy.py [--workloads default,comm,compute,input,straggler] [--out DIR]
  bench/model_accuracy.py --levers [--workloads comm,input,compute] [--replicas 1,2,4]

With --levers: each workload's diagnose with --apply-levers (the ablations at the largest N
only, longer runs so that a loader's prefetch buffer does not dominate the measured steps); for
every recommended lever, the model's predicted gain (samples/s, at the largest N) against the
gain its own run measured, and the relative error of the predicted gain.

Emulated links follow the alpha-beta formula the model fits, so emulated checks are partly
circular; the shared-memory all-reduce (the `shm` workload, no emulated link) is not.
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPSCOPE = os.environ.get("STEPSCOPE", os.path.join(ROOT, "build/apps/stepscope/stepscope"))

GPT = ["--model", "gpt", "--layers", "2", "--width", "128", "--heads", "4", "--context", "64",
       "--batch", "2", "--steps", "12", "--warmup-steps", "3", "--emulate-device-speed", "0.05"]
MLP = ["--model", "mlp", "--hidden", "1024,1024", "--batch", "4", "--steps", "12",
       "--warmup-steps", "3", "--emulate-device-speed", "0.1"]
WORKLOADS = {
    # the built-in default workload's shape: communication binds at 16
    "default": GPT + ["--emulate-link", "0.012,50"],
    "comm": MLP + ["--emulate-link", "0.02,50"],
    "compute": MLP + ["--emulate-link", "2,5"],
    "input": MLP + ["--emulate-link", "2,5", "--inject-input-delay", "40"],
    "straggler": MLP + ["--emulate-link", "0.5,20", "--inject-straggler", "1:1.6"],
    # real communication: the shared-memory all-reduce, compute paced
    "shm": ["--model", "mlp", "--hidden", "2048,2048", "--batch", "8", "--steps", "12",
            "--warmup-steps", "3", "--emulate-device-speed", "0.1"],
}


# The lever workloads: as above, run longer (30 steps, 6 warm-up) for steadier lever runs.
LONGER = ["--steps", "30", "--warmup-steps", "6"]
LEVER_WORKLOADS = {
    # the link binds: overlap/bucketing, bf16 on the wire, a bigger micro-batch
    "comm": MLP + ["--emulate-link", "0.02,50"] + LONGER,
    # the loader binds (a 120 ms batch against a ~50 ms step): more loader workers
    "input": MLP + ["--emulate-link", "2,5", "--inject-input-delay", "120"] + LONGER,
    # per-step fixed costs against little compute: a bigger micro-batch
    "compute": MLP + ["--emulate-link", "0.5,200"] + LONGER,
}


def sh(args, timeout=1800):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def levers(a):
    """Each lever's predicted gain against its measured one."""
    rows = []
    for name in a.workloads.split(","):
        d = os.path.join(a.out, "levers-" + name)
        t = time.time()
        p = sh([STEPSCOPE, "diagnose"] + LEVER_WORKLOADS[name] +
               ["--replicas", a.replicas, "--ablate-at", "largest", "--apply-levers",
                "--noise-scale-steps", "0", "--wire-check-steps", "0", "--out", d], timeout=900)
        path = os.path.join(d, "diagnosis.json")
        if not os.path.exists(path):
            print(f"{name}: diagnose failed ({p.returncode}): {p.stderr[-400:]}", file=sys.stderr)
            continue
        j = json.load(open(path))
        base = j["points"][-1]["samples_per_s"]
        print(f"\n== {name} ({time.time() - t:.0f} s): binding {j['verdict']['binding']}, "
              f"baseline {base:.1f} samples/s at N={j['points'][-1]['replicas']}")
        for lp in j.get("lever_predictions", []):
            g = lp["expected_gain_samples_per_s"]
            m = lp.get("measured_gain_samples_per_s")
            err = None if m is None or m == 0 else g["value"] / m - 1
            within = err is not None and abs(err) <= 0.10
            rows.append({"workload": name, "lever": lp["lever"], "predicted": g["value"],
                         "low": g["low"], "high": g["high"], "measured": m, "error": err,
                         "within_10pct": within})
            print(f"  {lp['lever']:<26} predicted {g['value']:+8.1f} [{g['low']:+.1f}, "
                  f"{g['high']:+.1f}]  measured "
                  f"{'(no run)' if m is None else f'{m:+8.1f}'}"
                  f"{'' if err is None else f'  error {100 * err:+6.1f} %'}"
                  f"{'  within 10 %' if within else ''}")
    with open(os.path.join(a.out, "levers.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", default=None)
    ap.add_argument("--replicas", default=None)
    ap.add_argument("--levers", action="store_true",
                    help="predicted against measured gain of each recommended lever")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/results/model"))
    a = ap.parse_args()
    if a.levers:
        a.workloads = a.workloads or "comm,input,compute"
        a.replicas = a.replicas or "1,2,4"
        os.makedirs(a.out, exist_ok=True)
        levers(a)
        return
    a.workloads = a.workloads or "default,comm,compute,input,straggler,shm"
    a.replicas = a.replicas or "1,2,4,8,16"
    os.makedirs(a.out, exist_ok=True)
    largest = a.replicas.split(",")[-1]
    rows = []
    for name in a.workloads.split(","):
        d = os.path.join(a.out, name)
        t = time.time()
        p = sh([STEPSCOPE, "diagnose"] + WORKLOADS[name] + ["--replicas", a.replicas, "--out", d])
        if not os.path.exists(os.path.join(d, "diagnosis.json")):
            print(f"{name}: diagnose failed ({p.returncode}): {p.stderr[-400:]}", file=sys.stderr)
            continue
        # The largest N once more: the run-to-run spread the errors are judged against.
        again = os.path.join(a.out, name + "-again")
        p2 = sh([STEPSCOPE, "diagnose"] + WORKLOADS[name] +
                ["--replicas", largest, "--no-ablations", "--out", again])
        spread = None
        if os.path.exists(os.path.join(again, "runs", f"baseline-n{largest}", "run.json")):
            m1 = json.load(open(os.path.join(d, "runs", f"baseline-n{largest}", "run.json")))
            m2 = json.load(open(os.path.join(again, "runs", f"baseline-n{largest}", "run.json")))
            spread = abs(m2["samples_per_s"] / m1["samples_per_s"] - 1)
        print(f"\n== {name} ({time.time() - t:.0f} s){'' if spread is None else f', run-to-run spread at N={largest}: {100 * spread:.1f} %'}")
        for fit_on in ("1,2", "1,2,4", "1,2,4,8"):
            p = sh([STEPSCOPE, "predict", d, "--fit-on", fit_on, "--replicas", largest, "--json"])
            if p.returncode != 0:
                print(f"  fit on {fit_on}: predict failed: {p.stderr.strip()}")
                continue
            j = json.loads(p.stdout)
            print(f"  fit on N = {fit_on}: median |error| {100 * j['checks_median_abs_error']:.1f} %,"
                  f" worst {100 * j['checks_worst_abs_error']:.1f} %")
            for c in j["model_checks"]:
                print(f"    {c['run']:<36} predicted {c['predicted_samples_per_s']['value']:9.1f}"
                      f"  measured {c['measured_samples_per_s']:9.1f}  error {100 * c['error']:+6.1f} %"
                      f"{'  (cost fitted)' if c.get('partly_fitted') else ''}")
                rows.append({"workload": name, "fit_on": fit_on, **c, "spread": spread})
    with open(os.path.join(a.out, "checks.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    base = [r for r in rows if r["run"].startswith("baseline-")]
    if base:
        errs = sorted(abs(r["error"]) for r in base)
        print(f"\nheld-out baselines: {len(errs)} checks, median |error| "
              f"{100 * errs[len(errs) // 2]:.1f} %, worst {100 * errs[-1]:.1f} %")


if __name__ == "__main__":
    main()
