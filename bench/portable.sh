#!/usr/bin/env bash
# What the portable default build costs against a -march=native build (STEPSCOPE_NATIVE=ON),
# measured in interleaved A/B rounds: each round runs every figure on both builds back to back,
# in alternating order, so both see the same machine conditions; ratios are medians (ranges) of
# per-round ratios portable / native (1.00: no cost; 0.97: 3 % slower).
#   bench/portable.sh [ROUNDS] [NATIVE_BUILD_DIR] [PORTABLE_BUILD_DIR]
# Figures: training throughput of one replica (mlp 2048x2048: OpenBLAS plus the optimizer, relu
# and loss kernels; gpt: layernorm, gelu, attention, embedding, AdamW), and the 2-rank
# shared-memory all-reduce of 25 MiB in fp32 and bf16 (reduction and precision conversion).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-10}
native=${2:-build-native}
portable=${3:-build-portable}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

configure() {  # DIR NATIVE(ON|OFF)
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTEPSCOPE_NATIVE="$2" >/dev/null
  cmake --build "$1" -j"$(nproc)" --target stepscope bench_allreduce >/dev/null
}
configure "$native" ON
configure "$portable" OFF

train() {  # BUILD MODEL_ARGS... -> samples/s
  local build=$1; shift
  local out; out=$(mktemp -d)
  "$build/apps/stepscope/stepscope" train "$@" --synthetic-input --no-eval --quiet \
    --out "$out" >/dev/null
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['samples_per_s'])" \
    "$out/run.json"
  rm -rf "$out"
}
allreduce() {  # BUILD DTYPE -> median seconds of a 25 MiB all-reduce at 2 ranks
  scripts/mpirun-local.sh 2 "$1/bench/bench_allreduce" --algorithms shm --dtypes "$2" \
    --sizes $((25 << 20)) --seconds 1 | awk '$1 == "RESULT" { print $6 }'
}
figures() {  # BUILD TAG
  echo "mlp_$2 $(train "$1" --model mlp --hidden 2048,2048 --batch 32 --steps 120 \
    --warmup-steps 20)"
  echo "gpt_$2 $(train "$1" --model gpt --layers 2 --width 128 --heads 4 --context 64 \
    --batch 8 --steps 40 --warmup-steps 5)"
  echo "ar_fp32_$2 $(allreduce "$1" fp32)"
  echo "ar_bf16_$2 $(allreduce "$1" bf16)"
}

for build in "$native" "$portable"; do
  dir=$(mktemp -d)
  "$build/apps/stepscope/stepscope" train --model mlp --steps 2 --warmup-steps 0 --no-eval \
    --quiet --out "$dir" >/dev/null
  python3 -c "import json,sys; print(sys.argv[2], 'hot loops run at', \
    json.load(open(sys.argv[1]))['instruction_set'])" "$dir/run.json" "$build"
  rm -rf "$dir"
done

out=$(mktemp)
trap 'rm -f "$out"' EXIT
for round in $(seq "$rounds"); do
  if ((round % 2)); then
    { figures "$native" native; figures "$portable" portable; }
  else
    { figures "$portable" portable; figures "$native" native; }
  fi | sed "s/^/$round /" | tee -a "$out"
done

python3 - "$out" <<'PY'
import statistics, sys
rounds = {}
for line in open(sys.argv[1]):
    r, key, value = line.split()
    rounds.setdefault(r, {})[key] = float(value)
print()
print(f"{len(rounds)} rounds; ratio portable/native as the median (range) of per-round ratios")
for name, higher_is_better in [("mlp", True), ("gpt", True), ("ar_fp32", False),
                               ("ar_bf16", False)]:
    ratios = []
    for v in rounds.values():
        n, p = v[f"{name}_native"], v[f"{name}_portable"]
        ratios.append(p / n if higher_is_better else n / p)
    ratios.sort()
    unit = "samples/s" if higher_is_better else "s (25 MiB)"
    med_n = statistics.median(v[f"{name}_native"] for v in rounds.values())
    med_p = statistics.median(v[f"{name}_portable"] for v in rounds.values())
    print(f"{name:8s} native {med_n:10.4g}  portable {med_p:10.4g} {unit:11s} "
          f"ratio {statistics.median(ratios):.3f} ({ratios[0]:.3f}-{ratios[-1]:.3f})")
PY
