#!/usr/bin/env bash
# Training throughput of stepscope against PyTorch (Debian python3-torch), measured in one run.
#   bench/train.sh [BUILD_DIR] [REPEATS]
# Both sides: one thread per rank, a synthetic batch of 32, SGD with momentum. Prints each
# figure's median over REPEATS runs and the ratios the project's targets are stated in.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
repeats=${2:-3}
bin=$build/apps/stepscope/stepscope
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

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
measure() {  # LABEL COMMAND...: median of REPEATS
  local label=$1; shift
  local v; v=$(for _ in $(seq "$repeats"); do "$@"; done | median)
  printf '%s %s\n' "$label" "$v"
}

{
  measure ours_small   ours 1 256,256 2000
  measure torch_small  theirs 256,256 2000 1
  measure ours_big     ours 1 2048,2048 200
  measure torch_big    theirs 2048,2048 200 1
  measure ours_big2    ours 2 2048,2048 200
  measure ours_big2_bf16 ours 2 2048,2048 200 --reduce-dtype bf16
  measure torch_big2   theirs 2048,2048 200 2
} | tee /tmp/stepscope-bench-train.txt

python3 - /tmp/stepscope-bench-train.txt <<'PY'
import sys
v = dict(line.split() for line in open(sys.argv[1]))
v = {k: float(x) for k, x in v.items()}
print()
print(f"{'case':44s} {'stepscope':>10s} {'pytorch':>10s} {'ratio':>7s}")
print(f"{'1 replica, mlp 784-256-256-10, samples/s':44s} {v['ours_small']:10.0f} {v['torch_small']:10.0f} {v['ours_small']/v['torch_small']:7.2f}")
print(f"{'1 replica, mlp 784-2048-2048-10, samples/s':44s} {v['ours_big']:10.0f} {v['torch_big']:10.0f} {v['ours_big']/v['torch_big']:7.2f}")
eff = v['ours_big2'] / (2 * v['ours_big'])
eff16 = v['ours_big2_bf16'] / (2 * v['ours_big'])
teff = v['torch_big2'] / (2 * v['torch_big'])
print(f"{'2 replicas, 5.8 M mlp, scaling efficiency':44s} {eff:10.2f} {teff:10.2f} {eff/teff:7.2f}")
print(f"{'2 replicas, 5.8 M mlp, efficiency (bf16 wire)':44s} {eff16:10.2f}")
PY
