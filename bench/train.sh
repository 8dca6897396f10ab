#!/usr/bin/env bash
# Training throughput of stepscope against PyTorch (Debian python3-torch), measured in one run.
#   bench/train.sh [BUILD_DIR] [REPEATS]
# Both sides: one thread per rank, a synthetic batch of 32, SGD with momentum. Prints each
# figure once per round (REPEATS rounds) and the ratios the targets are stated in.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
repeats=${2:-3}
bin=$build/apps/stepscope/stepscope
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1


# stepscope samples/s from run.json of one run: NP HIDDEN STEPS [extra train flags]
ours() {
  local np=$1 hidden=$2 steps=$3; shift 3
  local out; out=$(mktemp -d)
  local cmd=("$bin" train --model mlp --hidden "$hidden" --batch 32 --steps "$steps" \
             --warmup-steps 20 --synthetic-input --no-eval --quiet --out "$out" "$@")
  if [ "$np" -gt 1 ]; then scripts/mpirun-local.sh "$np" "${cmd[@]}" >/dev/null
  else "${cmd[@]}" >/dev/null; fi
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['samples_per_s'])" "$out/run.json"
  rm -rf "$out"
}
theirs() {
  /usr/bin/python3 bench/torch_mlp.py --hidden "$1" --batch 32 --steps "$2" --ddp "$3" | sed 's/.*=//'
}
# Rounds: each round measures every figure once, back to back, so a ratio taken within a round
# compares runs made under the same machine conditions. Ratios are medians of per-round ratios.
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for round in $(seq "$repeats"); do
  {
    echo "ours_small $(ours 1 256,256 2000)"
    echo "torch_small $(theirs 256,256 2000 1)"
    echo "ours_big $(ours 1 2048,2048 200)"
    echo "torch_big $(theirs 2048,2048 200 1)"
    echo "ours_big2 $(ours 2 2048,2048 200)"
    echo "ours_big2_bf16 $(ours 2 2048,2048 200 --reduce-dtype bf16)"
    echo "torch_big2 $(theirs 2048,2048 200 2)"
  } | sed "s/^/$round /" | tee -a "$out"
done

python3 - "$out" <<'PY'
import statistics, sys
rounds = {}
for line in open(sys.argv[1]):
    r, key, value = line.split()
    rounds.setdefault(r, {})[key] = float(value)
def figure(f):
    """median and range over rounds of f(round)"""
    xs = sorted(f(v) for v in rounds.values())
    return statistics.median(xs), xs[0], xs[-1]
def show(label, ours, theirs, ratio):
    m, lo, hi = ratio
    print(f"{label:46s} {ours:>10s} {theirs:>10s} {m:7.2f}  ({lo:.2f}-{hi:.2f})")
med = lambda k: statistics.median(v[k] for v in rounds.values())
eff = lambda v, k1, k2: v[k2] / (2 * v[k1])
print()
print(f"{len(rounds)} rounds; figures are medians, ratios the median (range) of per-round ratios")
print(f"{'case':46s} {'stepscope':>10s} {'pytorch':>10s} {'ratio':>7s}")
show("1 replica, mlp 784-256-256-10, samples/s", f"{med('ours_small'):.0f}",
     f"{med('torch_small'):.0f}", figure(lambda v: v['ours_small'] / v['torch_small']))
show("1 replica, mlp 784-2048-2048-10, samples/s", f"{med('ours_big'):.0f}",
     f"{med('torch_big'):.0f}", figure(lambda v: v['ours_big'] / v['torch_big']))
e, elo, ehi = figure(lambda v: eff(v, 'ours_big', 'ours_big2'))
t, tlo, thi = figure(lambda v: eff(v, 'torch_big', 'torch_big2'))
show("2 replicas, 5.8 M mlp, scaling efficiency", f"{e:.2f} ({elo:.2f}-{ehi:.2f})",
     f"{t:.2f} ({tlo:.2f}-{thi:.2f})",
     figure(lambda v: eff(v, 'ours_big', 'ours_big2') / eff(v, 'torch_big', 'torch_big2')))
b, blo, bhi = figure(lambda v: eff(v, 'ours_big', 'ours_big2_bf16'))
print(f"{'2 replicas, 5.8 M mlp, efficiency (bf16 wire)':46s} {b:.2f} ({blo:.2f}-{bhi:.2f})")
PY
