#!/usr/bin/env python3
"""Does the gradient noise scale predict how many steps a bigger batch needs? Real training to a
held-out target at several global batch sizes, against S(B) = S_min (1 + B_noise / B)
(McCandlish et al. 2018) with B_noise measured at the smallest batch.

For each model and global batch B (one replica, `--batch B`):
  1. the learning rate is tuned by a small sweep (LRS below; SGD with momentum 0.9, the trainer's
     default): each rate trains to the target with seed 1 and the rate that reaches it in the
     fewest steps is kept (a rate that never reaches it within --max-steps is out);
  2. at that rate, --seeds runs train to the target; their median steps is S(B).
The noise scale comes from a 2-replica run at the smallest batch (local batch B/2, gradient norms
every step, trained to the same target so the norms cover the same stretch of training): its
run.json `gradient_noise.b_noise_over_training` (the mean over equal stretches of training, which
the steps of a whole run follow) and, for comparison, `b_noise` (the ratio of the whole run's
means, dominated by the first steps). The prediction of the steps ratio between the smallest and the
largest batch, (1 + B_noise/B_small) / (1 + B_noise/B_large), is compared with the measured
S(B_small) / S(B_large). Goal: within 25 %.

Every run is kept under --out (default bench/results/noise_scale) and skipped when its run.json
exists, so the benchmark resumes where it stopped.

  bench/noise_scale_validation.py [--models mlp,cnn] [--batches 32,128,512] [--seeds 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPSCOPE = os.environ.get("STEPSCOPE", os.path.join(ROOT, "build/apps/stepscope/stepscope"))
MPIRUN = os.path.join(ROOT, "scripts/mpirun-local.sh")

MODELS = {
    # model flags, held-out accuracy target, held-out examples per evaluation
    "mlp": (["--model", "mlp", "--hidden", "128"], 0.84, 1000),
    "cnn": (["--model", "cnn", "--channels", "8"], 0.84, 1000),
}
LRS = ["0.005", "0.01", "0.02", "0.05", "0.1", "0.2"]


def train(out, model, batch, lr, seed, max_steps, replicas=1, extra=()):
    """Trains to the model's target (resumable: an existing run.json is reused); the run.json."""
    path = os.path.join(out, "run.json")
    if not os.path.exists(path):
        flags, target, limit = MODELS[model]
        cmd = [STEPSCOPE, "train"] + flags + [
            "--batch", str(batch), "--lr", lr, "--seed", str(seed), "--steps", str(max_steps),
            "--target-accuracy", str(target), "--eval-every", "2", "--eval-limit", str(limit),
            "--warmup-steps", "0", "--quiet", "--out", out] + list(extra)
        if replicas > 1:
            cmd = [MPIRUN, str(replicas)] + cmd
        p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                           timeout=3600)
        if p.returncode != 0 or not os.path.exists(path):
            sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    with open(path) as f:
        return json.load(f)


def steps_of(run):
    t = run["target"]
    return t["steps_to_target"] if t["reached"] else None


def validate(model, batches, seeds, max_steps, out):
    rows = []
    for b in batches:
        tried = {}
        for lr in LRS:
            s = steps_of(train(os.path.join(out, model, f"b{b}-lr{lr}-s1"), model, b, lr, 1,
                               max_steps))
            if s is not None:
                tried[lr] = s
        if not tried:
            print(f"{model} batch {b}: no rate of {LRS} reached the target in {max_steps} steps",
                  file=sys.stderr)
            continue
        lr = min(tried, key=lambda k: (tried[k], float(k)))
        steps = [tried[lr]]
        for seed in range(2, seeds + 1):
            s = steps_of(train(os.path.join(out, model, f"b{b}-lr{lr}-s{seed}"), model, b, lr,
                               seed, max_steps))
            steps.append(s if s is not None else max_steps)
        rows.append({"batch": b, "lr": lr, "steps": steps, "median": statistics.median(steps),
                     "sweep": tried})
    if len(rows) < 2:
        return None
    small = rows[0]
    # The noise scale at the smallest batch: 2 replicas of half of it, norms every step.
    noise_run = train(os.path.join(out, model, f"noise-b{small['batch']}"), model,
                      small["batch"] // 2, small["lr"], 1, max_steps, replicas=2,
                      extra=["--grad-norm-every", "1"])
    noise = noise_run["gradient_noise"]
    return rows, noise


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="mlp")
    ap.add_argument("--batches", default="32,128,512")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--max-steps", type=int, default=4000)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/results/noise_scale"))
    a = ap.parse_args()
    batches = [int(x) for x in a.batches.split(",")]
    for model in a.models.split(","):
        got = validate(model, batches, a.seeds, a.max_steps, os.path.join(a.out))
        if got is None:
            print(f"{model}: fewer than two batch sizes reached the target")
            continue
        rows, noise = got
        flags, target, limit = MODELS[model]
        estimates = {"over training": noise.get("b_noise_over_training"),
                     "whole-run means": noise.get("b_noise")}
        print(f"\n{model} ({' '.join(flags)}), held-out accuracy {target} on {limit} examples; "
              f"B_noise at global batch {rows[0]['batch']}: "
              + ", ".join(f"{k} {v:.1f}" for k, v in estimates.items() if v)
              + f" ({noise.get('over_training_how', '')})")
        s0, b0 = rows[0]["median"], rows[0]["batch"]
        print(f"{'batch':>6} {'lr':>6} {'steps (seeds)':>22} {'median':>7}"
              + "".join(f" {'pred. ' + k:>22}" for k in estimates))
        for r in rows:
            line = f"{r['batch']:>6} {r['lr']:>6} {str(r['steps']):>22} {r['median']:>7.0f}"
            for v in estimates.values():
                pred = s0 * (1 + v / r["batch"]) / (1 + v / b0) if v else float("nan")
                line += f" {pred:>22.0f}"
            print(line)
        big = rows[-1]
        measured = s0 / big["median"]
        for k, v in estimates.items():
            predicted = (1 + v / b0) / (1 + v / big["batch"]) if v else float("nan")
            error = predicted / measured - 1
            print(f"steps ratio batch {b0} / batch {big['batch']}: measured {measured:.2f}, "
                  f"predicted from B_noise {k} {predicted:.2f} ({100 * error:+.0f} %; goal within "
                  f"25 %: {'met' if abs(error) <= 0.25 else 'NOT met'})")
        print(f"learning-rate sweeps (steps to target at seed 1): "
              + "; ".join(f"batch {r['batch']}: {r['sweep']}" for r in rows))


if __name__ == "__main__":
    main()
